/* core_atomic.c - remote atomics on 32- and 64-bit integers (fetch-and-add,
 * swap, compare-and-swap): the initiator's front ends, which take the
 * direct path's hardware atomics where the peer's memory is mapped here
 * (window blocks), and the target's handler, which applies the others in
 * its poll loop.  Both use the same atomic instructions (util/rmw.h), and
 * integer accumulates do too while direct atomics are possible
 * (TLM_ACC_ATOMIC), so every mix of atomics and accumulates on one
 * location is atomic. */
#include <string.h>

#include "core/core_engine.h"
#include "core/core_direct.h"
#include "core/core_packed.h"
#include "core/core_region.h"
#include "core/core_direct.h"


static unsigned width_of(telemem_type_t t)
{
    return t == TELEMEM_INT32 ? 4u
           : (t == TELEMEM_INT64 || t == TELEMEM_UINT64) ? 8u : 0u;
}

static uint64_t load_val(const void *v, unsigned width)
{
    if (!v)
        return 0;
    if (width == 4) {
        uint32_t x;
        memcpy(&x, v, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, v, 8);
    return x;
}

/* The lock-free front of every atomic: a window block of a local peer
 * with nothing outstanding to it by the AM path takes one hardware atomic
 * without the lock.  TLM_DIRECT_DECLINED for everything else (and for bad
 * arguments, which the locked path then reports). */
static int express(int op, int rank, void *remote, telemem_type_t type,
                   const void *compare, const void *value, void *old)
{
    unsigned w = width_of(type);
    if (!w || !value || (op == TLM_RMW_CSWAP && !compare) || rank < 0 ||
        rank >= tlm_core.nranks || rank == tlm_core.rank ||
        (uintptr_t)remote % w || !tlm_core.initialized ||
        tlm_core.peer_gone) /* rmw refuses a rank known to be dead */
        return TLM_DIRECT_DECLINED;
    /* A handler calling in (it holds the lock, or runs on this thread
     * without locking) gets the locked path's IN_HANDLER. */
    if (tlm_core.locking ? tlm_core_lock_mine() : tlm_core.in_handler)
        return TLM_DIRECT_DECLINED;
    uint64_t o;
    int rc = tlm_core_direct_atomic_express(
        rank, op, w, (uintptr_t)remote, load_val(value, w),
        load_val(compare, w), &o);
    if (rc == TELEMEM_OK && old)
        memcpy(old, &o, w); /* little-endian: the low bytes */
    return rc;
}

static int rmw(const char *what, int mode, int op, int rank, void *remote,
               telemem_type_t type, const void *compare, const void *value,
               void *old, telemem_handle_t *h)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    unsigned w = width_of(type);
    const char *bad = rank < 0 || rank >= tlm_core.nranks ? "rank out of range"
                      : !w ? "type is not TELEMEM_INT32, _INT64 or _UINT64"
                      : !remote ? "remote address is NULL"
                      : ((uintptr_t)remote % w) ? "remote address misaligned"
                      : tlm_util_range_wraps((uintptr_t)remote, w)
                          ? "remote address wraps around the address space"
                      : !value ? "value is NULL"
                      : (op == TLM_RMW_CSWAP && !compare) ? "compare is NULL"
                      : (mode == TLM_MODE_NB && !h) ? "handle pointer is NULL"
                                                    : NULL;
    if (bad) {
        tlm_error("%s: %s", what, bad);
        return TELEMEM_ERR_INVALID_ARG;
    }
    /* The rank is in range: this refuses a rank known to be dead. */
    if ((rc = tlm_core_check_rank(what, rank)) != TELEMEM_OK)
        return rc;
    if (h)
        *h = TELEMEM_HANDLE_NULL;
    uint64_t operand = load_val(value, w), cmp = load_val(compare, w);
    if (rank == tlm_core.rank) {
        rc = tlm_am_drain_self();
        if (rc != TELEMEM_OK)
            return rc;
        if (!tlm_core_region_contains((uintptr_t)remote, w)) {
            tlm_error("%s: %p is outside this rank's registered memory", what,
                      remote);
            return TELEMEM_ERR_OUT_OF_RANGE;
        }
        uint64_t o = tlm_rmw_apply(op, w, remote, operand, cmp);
        if (old)
            memcpy(old, &o, w); /* little-endian: the low bytes */
        return TELEMEM_OK;
    }
    /* Memory mapped here (a window block): a hardware atomic, complete on
     * return. */
    uint64_t dold;
    rc = tlm_core_direct_atomic(rank, op, w, (uintptr_t)remote, operand, cmp,
                                &dold);
    if (rc != TLM_DIRECT_DECLINED) {
        if (rc == TELEMEM_OK && old)
            memcpy(old, &dold, w); /* little-endian: the low bytes */
        return rc; /* *h stays TELEMEM_HANDLE_NULL: complete */
    }
    /* An async direct driver's writes to rank complete first (issue order
     * across the two paths). */
    if (tlm_core.peers[rank].direct_busy) {
        rc = tlm_core_direct_settle(rank);
        if (rc != TELEMEM_OK)
            return rc;
    }
    uint32_t idx;
    rc = tlm_core_op_alloc(&idx);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_op_t *o = tlm_core_op(idx);
    o->kind = TLM_OP_RMW;
    o->rank = rank;
    o->dst = old;
    o->width = (uint8_t)w;
    o->len = w;
    o->nbi = mode == TLM_MODE_NBI;
    tlm_am_rmw_t m = {{TLM_AM_RMW, 0, (uint16_t)(op | w << 4),
                       tlm_core_wire_id(idx)},
                      (uintptr_t)remote, operand, cmp};
    rc = tlm_am_send_ctrl(rank, &m, sizeof(m), NULL, 0);
    if (rc != TELEMEM_OK) {
        tlm_core_op_free(idx);
        return rc;
    }
    if (o->nbi)
        TLM_RLX_SET(tlm_core.peers[rank].nbi_gets,
                    tlm_core.peers[rank].nbi_gets + 1);
    /* A later direct transfer must not overtake it. */
    TLM_RLX_SET(tlm_core.peers[rank].am_reads, true);
    if (mode == TLM_MODE_BLOCK)
        return tlm_core_op_wait(idx);
    if (mode == TLM_MODE_NB)
        return tlm_core_new_handle(idx, h);
    return TELEMEM_OK;
}

static void on_rmw(int src, const void *msg, size_t len)
{
    const tlm_am_rmw_t *m = msg;
    if (len != sizeof(*m))
        return tlm_core_protocol_error(src, "atomic", len);
    int op = m->h.aux & 0xf;
    unsigned w = m->h.aux >> 4;
    if (op > TLM_RMW_CSWAP || (w != 4 && w != 8) || m->addr % w)
        return tlm_core_protocol_error(src, "atomic", len);
    tlm_am_rmw_rep_t r = {{TLM_AM_RMW_REP, 0, 0, m->h.id}, 0};
    if (!tlm_core_region_contains((uintptr_t)m->addr, w)) {
        tlm_debug("refused an atomic from rank %d at 0x%llx", src,
                  (unsigned long long)m->addr);
        r.h.aux = (uint16_t)(int16_t)TELEMEM_ERR_OUT_OF_RANGE;
    } else {
        if (tlm_am.peers[src].live != 0)
            tlm_am_protect(src, (uintptr_t)m->addr, w);
        r.old = tlm_rmw_apply(op, w, (void *)(uintptr_t)m->addr, m->operand,
                      m->compare);
    }
    tlm_am_send_ctrl(src, &r, sizeof(r), NULL, 0);
}

static void on_rmw_rep(int src, const void *msg, size_t len)
{
    const tlm_am_rmw_rep_t *r = msg;
    uint32_t idx;
    if (len != sizeof(*r))
        return tlm_core_protocol_error(src, "atomic reply", len);
    tlm_op_t *op = tlm_core_op_from_wire(r->h.id, TLM_OP_RMW, &idx);
    if (!op || op->rank != src)
        return;
    int status = (int16_t)r->h.aux;
    if (status != TELEMEM_OK)
        tlm_warn("rank %d refused an atomic operation: %s", src,
                 telemem_strerror(status));
    else if (op->dst)
        memcpy(op->dst, &r->old, op->width);
    tlm_core_op_complete(idx, status);
}

void tlm_core_atomic_init(void)
{
    tlm_am_set_handler(TLM_AM_RMW, on_rmw);
    tlm_am_set_handler(TLM_AM_RMW_REP, on_rmw_rep);
}

/* Every public atomic: the express path first, then the locked one
 * (which reports what express declined for bad arguments).  An nb call
 * completed by express returns TELEMEM_HANDLE_NULL (complete).  Inlined:
 * as a call of its own it cost ARMCI_Rmw 9% (67 -> 61 Mops/s). */
static inline __attribute__((always_inline)) int atomic_call(const char *what, int mode, int op, int rank,
                       void *remote, telemem_type_t type, const void *compare,
                       const void *value, void *old, telemem_handle_t *h)
{
    if (mode != TLM_MODE_NB || h) {
        int rc = express(op, rank, remote, type, compare, value, old);
        if (rc != TLM_DIRECT_DECLINED) {
            if (h)
                *h = TELEMEM_HANDLE_NULL;
            return rc;
        }
    }
    TLM_API_GUARD();
    return rmw(what, mode, op, rank, remote, type, compare, value, old, h);
}

int telemem_atomic_fetch_add(int rank, void *remote, telemem_type_t type,
                             const void *value, void *old)
{
    return atomic_call("atomic_fetch_add", TLM_MODE_BLOCK, TLM_RMW_FADD, rank,
                       remote, type, NULL, value, old, NULL);
}

int telemem_atomic_swap(int rank, void *remote, telemem_type_t type,
                        const void *value, void *old)
{
    return atomic_call("atomic_swap", TLM_MODE_BLOCK, TLM_RMW_SWAP, rank,
                       remote, type, NULL, value, old, NULL);
}

int telemem_atomic_cswap(int rank, void *remote, telemem_type_t type,
                         const void *compare, const void *value, void *old)
{
    return atomic_call("atomic_cswap", TLM_MODE_BLOCK, TLM_RMW_CSWAP, rank,
                       remote, type, compare, value, old, NULL);
}

int telemem_atomic_fetch_add_nb(int rank, void *remote, telemem_type_t type,
                                const void *value, void *old,
                                telemem_handle_t *h)
{
    return atomic_call("atomic_fetch_add_nb", TLM_MODE_NB, TLM_RMW_FADD, rank,
                       remote, type, NULL, value, old, h);
}

int telemem_atomic_swap_nb(int rank, void *remote, telemem_type_t type,
                           const void *value, void *old, telemem_handle_t *h)
{
    return atomic_call("atomic_swap_nb", TLM_MODE_NB, TLM_RMW_SWAP, rank,
                       remote, type, NULL, value, old, h);
}

int telemem_atomic_cswap_nb(int rank, void *remote, telemem_type_t type,
                            const void *compare, const void *value, void *old,
                            telemem_handle_t *h)
{
    return atomic_call("atomic_cswap_nb", TLM_MODE_NB, TLM_RMW_CSWAP, rank,
                       remote, type, compare, value, old, h);
}

int telemem_atomic_fetch_add_nbi(int rank, void *remote, telemem_type_t type,
                                 const void *value, void *old)
{
    return atomic_call("atomic_fetch_add_nbi", TLM_MODE_NBI, TLM_RMW_FADD,
                       rank, remote, type, NULL, value, old, NULL);
}

int telemem_atomic_swap_nbi(int rank, void *remote, telemem_type_t type,
                            const void *value, void *old)
{
    return atomic_call("atomic_swap_nbi", TLM_MODE_NBI, TLM_RMW_SWAP, rank,
                       remote, type, NULL, value, old, NULL);
}

int telemem_atomic_cswap_nbi(int rank, void *remote, telemem_type_t type,
                             const void *compare, const void *value, void *old)
{
    return atomic_call("atomic_cswap_nbi", TLM_MODE_NBI, TLM_RMW_CSWAP, rank,
                       remote, type, compare, value, old, NULL);
}

/* direct_express.c - the express table: keys of telemem_malloc_all
 * blocks that a synchronous driver with hardware atomics reaches, read
 * without the lock (a seqlock), so that atomics on them skip it. */
#define TLM_LOG_SUBSYS "direct"
#include <stdlib.h>
#include <string.h>

#include "core/direct_int.h"

/* ---- the express path ------------------------------------------------------ */

void tlm_core_dx_x_begin(void)
{
    uint32_t s = atomic_load_explicit(&D.xseq, memory_order_relaxed);
    atomic_store_explicit(&D.xseq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

void tlm_core_dx_x_end(void)
{
    uint32_t s = atomic_load_explicit(&D.xseq, memory_order_relaxed);
    atomic_store_explicit(&D.xseq, s + 1, memory_order_release);
}

/* Under tlm_core_dx_x_begin: slot for [base, base+len) of peer r (none free:
 * that block's atomics take the locked path). */
void tlm_core_dx_x_add(dpeer_t *p, uintptr_t base, size_t len,
                       tlm_direct_rkey_t *rk)
{
    for (int i = 0; p->x && i < XSLOTS; i++) {
        xent_t *e = &p->x[i];
        if (atomic_load_explicit(&e->base, memory_order_relaxed) !=
            atomic_load_explicit(&e->end, memory_order_relaxed))
            continue;
        atomic_store_explicit(&e->rk, rk, memory_order_relaxed);
        atomic_store_explicit(&e->end, base + len, memory_order_relaxed);
        atomic_store_explicit(&e->base, base, memory_order_relaxed);
        return;
    }
}

/* Under tlm_core_dx_x_begin: free the slots inside [lo, hi). */
void tlm_core_dx_x_drop(dpeer_t *p, uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; p->x && i < XSLOTS; i++) {
        xent_t *e = &p->x[i];
        uintptr_t b = atomic_load_explicit(&e->base, memory_order_relaxed);
        uintptr_t en = atomic_load_explicit(&e->end, memory_order_relaxed);
        if (tlm_util_ranges_overlap(b, en - b, lo, hi - lo)) {
            atomic_store_explicit(&e->base, 0, memory_order_relaxed);
            atomic_store_explicit(&e->end, 0, memory_order_relaxed);
            atomic_store_explicit(&e->rk, NULL, memory_order_relaxed);
        }
    }
}

int tlm_core_direct_atomic_express(int rank, int op, unsigned width,
                                   uintptr_t addr, uint64_t operand,
                                   uint64_t compare, uint64_t *old)
{
    dpeer_t *p = D.peers ? &D.peers[rank] : NULL;
    if (!p || !p->x || !tlm_core_peer_am_idle(&tlm_core.peers[rank]))
        return TLM_DIRECT_DECLINED;
    uint32_t s = atomic_load_explicit(&D.xseq, memory_order_acquire);
    if (s & 1)
        return TLM_DIRECT_DECLINED;
    tlm_direct_rkey_t *rk = NULL;
    for (int i = 0; i < XSLOTS && !rk; i++) {
        xent_t *e = &p->x[i];
        if (tlm_util_range_in(
                addr, width, atomic_load_explicit(&e->base, memory_order_relaxed),
                atomic_load_explicit(&e->end, memory_order_relaxed)))
            rk = atomic_load_explicit(&e->rk, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_acquire);
    if (!rk || atomic_load_explicit(&D.xseq, memory_order_relaxed) != s)
        return TLM_DIRECT_DECLINED;
    int rc = p->d->ops->atomic(p->d, rank, rk, addr, op, width, operand,
                               compare, old);
    return rc == TELEMEM_ERR_UNSUPPORTED ? TLM_DIRECT_DECLINED : rc;
}

/* core_rma.c - put and get over active messages: the initiator's front end
 * (blocking, nb and nbi forms, quiet and fence) and the target's handlers
 * that check each request against the region table and apply it. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* Wire ids of ops carry 12 bits of generation so that a late reply for an
 * abandoned op never lands in a newer op that reuses its slot. */
#define OP_ID_BITS TLM_OP_ID_BITS
#define OP_ID_MASK ((1u << OP_ID_BITS) - 1)

uint32_t tlm_core_wire_id(uint32_t idx)
{
    return idx | ((tlm_core_op(idx)->gen & 0xfffu) << OP_ID_BITS);
}

tlm_op_t *tlm_core_op_from_wire(uint32_t id, int kind, uint32_t *idx_p)
{
    uint32_t idx = id & OP_ID_MASK;
    tlm_op_t *op = NULL;
    if (kind) {
        op = tlm_core_op_lookup(idx, kind);
    } else {
        op = tlm_core_op_lookup(idx, TLM_OP_PUT);
        if (!op)
            op = tlm_core_op_lookup(idx, TLM_OP_GET);
    }
    if (!op || (op->gen & 0xfffu) != id >> OP_ID_BITS)
        return NULL;
    *idx_p = idx;
    return op;
}

/* ---- argument checks ------------------------------------------------------ */

int tlm_core_check_rma_args(const char *what, int rank, const void *remote,
                            const void *local, size_t bytes)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (rank < 0 || rank >= tlm_core.nranks) {
        tlm_error("%s: rank %d out of range [0, %d)", what, rank,
                  tlm_core.nranks);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (bytes && (!remote || !local)) {
        tlm_error("%s: %s buffer is NULL with %zu bytes", what,
                  !remote ? "remote" : "local", bytes);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (tlm_util_range_wraps((uintptr_t)remote, bytes) ||
        tlm_util_range_wraps((uintptr_t)local, bytes)) {
        tlm_error("%s: %zu bytes from %p wrap around the address space", what,
                  bytes, tlm_util_range_wraps((uintptr_t)remote, bytes)
                             ? remote : local);
        return TELEMEM_ERR_INVALID_ARG;
    }
    return TELEMEM_OK;
}

static inline int rma_check(const char *what, int rank, const void *remote,
                            const void *local, size_t bytes)
{
    if (TLM_LIKELY(tlm_core.initialized && !tlm_core.in_handler &&
                   (unsigned)rank < (unsigned)tlm_core.nranks &&
                   remote && local &&
                   !tlm_util_range_wraps((uintptr_t)remote, bytes) &&
                   !tlm_util_range_wraps((uintptr_t)local, bytes)))
        return TELEMEM_OK;
    return tlm_core_check_rma_args(what, rank, remote, local, bytes);
}

static int self_copy(const char *what, void *dst, const void *src, size_t n,
                     const void *remote)
{
    /* Earlier active messages to self are handled first (issue order). */
    int rc = tlm_am_drain_self();
    if (rc != TELEMEM_OK)
        return rc;
    if (!tlm_core_region_contains((uintptr_t)remote, n)) {
        tlm_error("%s: [%p, +%zu) is outside this rank's registered memory",
                  what, remote, n);
        return TELEMEM_ERR_OUT_OF_RANGE;
    }
    memmove(dst, src, n);
    return TELEMEM_OK;
}

/* ---- path choice ---------------------------------------------------------- */

/* Slow half of the per-message choice: the direct path for a transfer of
 * at least the peer's threshold, else complete the driver's outstanding
 * operations before the AM path (issue order across the two paths).
 * TLM_DIRECT_DECLINED: the AM path carries it. */
int tlm_core_refused(int rank, bool write, int mode, telemem_handle_t *h,
                     int status)
{
    if (mode == TLM_MODE_NB) {
        uint32_t idx;
        if (tlm_core_op_alloc(&idx) != TELEMEM_OK)
            return status;
        tlm_op_t *op = tlm_core_op(idx);
        op->kind = write ? TLM_OP_PUT : TLM_OP_GET;
        op->rank = rank;
        tlm_core_op_complete(idx, status);
        return tlm_core_new_handle(idx, h);
    }
    if (mode == TLM_MODE_BLOCK && !write)
        return status;
    if (tlm_core.peers[rank].error == TELEMEM_OK)
        tlm_core.peers[rank].error = status;
    return TELEMEM_OK;
}

static int direct_or_settle(int rank, bool write, void *remote, void *local,
                            size_t n, int mode, telemem_handle_t *h)
{
    if (n >= tlm_core.peers[rank].direct_min) {
        int rc = tlm_core_direct_rma(rank, write, remote, local, n, mode);
        if (rc == TLM_DIRECT_REFUSED)
            return tlm_core_refused(rank, write, mode, h,
                                    TELEMEM_ERR_OUT_OF_RANGE);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    int rc = tlm_core_direct_settle(rank);
    return rc == TELEMEM_OK ? TLM_DIRECT_DECLINED : rc;
}

/* ---- put ------------------------------------------------------------------ */

static void free_abandoned(tlm_am_sendop_t *op, int status)
{
    free(op);
}

int tlm_core_wait_sent(int rank, tlm_am_sendop_t *op)
{
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    while (!op->sent) {
        int rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK) {
            if (!tlm_am_cancel(rank, op))
                op->done = free_abandoned; /* zc ops are on the heap */
            return rc;
        }
    }
    return op->status;
}

int tlm_core_send_stream_slow(int rank, const void *hdr, size_t hdr_len,
                              const void *data, size_t len)
{
    const tlm_am_peer_t *ap = &tlm_am.peers[rank];
    if (len >= ap->zc_min && len <= ap->zc_local_max) {
        /* The transport reads data in place until the op is sent (this
         * call returns only then: so only sizes it sends without waiting
         * for the target); on the heap, so that a wait ended by an error
         * can leave it to the transport. */
        tlm_am_sendop_t *op = malloc(sizeof(*op));
        if (op) {
            tlm_am_sendop_init(op, hdr, hdr_len, true, data, len);
            op->zc = true;
            tlm_am_post(rank, op);
            int rc = tlm_core_wait_sent(rank, op);
            if (op->done != free_abandoned)
                free(op);
            return rc;
        }
    }
    tlm_am_sendop_t op;
    tlm_am_sendop_init(&op, hdr, hdr_len, true, data, len);
    tlm_am_post(rank, &op);
    return tlm_core_wait_sent(rank, &op);
}

int telemem_put(int rank, void *remote_dst, const void *local_src,
                size_t bytes)
{
    TLM_API_GUARD();
    int rc = rma_check("put", rank, remote_dst, local_src, bytes);
    if (TLM_UNLIKELY(rc != TELEMEM_OK || bytes == 0))
        return rc;
    if (TLM_UNLIKELY(rank == tlm_core.rank))
        return self_copy("put", remote_dst, local_src, bytes, remote_dst);
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    if (TLM_UNLIKELY(bytes >= p->direct_min || p->direct_busy)) {
        rc = direct_or_settle(rank, true, remote_dst, (void *)local_src,
                              bytes, TLM_MODE_BLOCK, NULL);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    tlm_am_frag_hdr_t h = {{TLM_AM_PUT, 0, 0, 0}, (uintptr_t)remote_dst,
                           bytes, 0};
    TLM_RLX_SET(p->unflushed, p->unflushed + 1);
    return tlm_core_send_stream(rank, &h, sizeof(h), local_src, bytes);
}

static void free_sendop(tlm_am_sendop_t *op, int status)
{
    if (status != TELEMEM_OK) {
        int rank = (int)(intptr_t)op->done_arg;
        if (tlm_core.peers && tlm_core.peers[rank].error == TELEMEM_OK)
            tlm_core.peers[rank].error = status;
    }
    free(op);
}

int telemem_put_nbi(int rank, void *remote_dst, const void *local_src,
                    size_t bytes)
{
    TLM_API_GUARD();
    int rc = rma_check("put_nbi", rank, remote_dst, local_src, bytes);
    if (TLM_UNLIKELY(rc != TELEMEM_OK || bytes == 0))
        return rc;
    if (TLM_UNLIKELY(rank == tlm_core.rank))
        return self_copy("put_nbi", remote_dst, local_src, bytes, remote_dst);
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    if (TLM_UNLIKELY(bytes >= p->direct_min || p->direct_busy)) {
        rc = direct_or_settle(rank, true, remote_dst, (void *)local_src,
                              bytes, TLM_MODE_NBI, NULL);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    tlm_am_frag_hdr_t h = {{TLM_AM_PUT, 0, 0, 0}, (uintptr_t)remote_dst,
                           bytes, 0};
    TLM_RLX_SET(p->unflushed, p->unflushed + 1);
    if (bytes <= tlm_am.peers[rank].max_msg - sizeof(h) &&
        bytes < tlm_am.peers[rank].zc_min) {
        rc = tlm_am_try_send(rank, &h, sizeof(h), local_src, bytes);
        if (rc != TELEMEM_ERR_AGAIN)
            return rc;
    }
    tlm_am_sendop_t *op = malloc(sizeof(*op));
    if (!op) {
        tlm_error("put_nbi: no memory to queue %zu bytes to rank %d", bytes,
                  rank);
        return TELEMEM_ERR_NO_MEMORY;
    }
    tlm_am_sendop_init(op, &h, sizeof(h), true, local_src, bytes);
    op->zc = true; /* local_src stays put until the quiet that ends it */
    op->done = free_sendop;
    op->done_arg = (void *)(intptr_t)rank;
    return tlm_am_post(rank, op);
}

static void put_nb_sent(tlm_am_sendop_t *sop, int status)
{
    if (status != TELEMEM_OK)
        tlm_core_op_complete((uint32_t)(uintptr_t)sop->done_arg, status);
}

/* A pulled put_nb's source is no longer read (its op completes by the
 * target's ack); on an error, its op, if it is still that op, fails. */
static void put_nb_zc_sent(tlm_am_sendop_t *sop, int status)
{
    uint32_t idx;
    if (status != TELEMEM_OK && tlm_core.peers &&
        tlm_core_op_from_wire((uint32_t)(uintptr_t)sop->done_arg,
                              TLM_OP_PUT, &idx))
        tlm_core_op_complete(idx, status);
    free(sop);
}

int tlm_core_new_handle(uint32_t idx, telemem_handle_t *h)
{
    h->index_ = idx;
    h->generation_ = tlm_core_op(idx)->gen;
    return TELEMEM_OK;
}

int telemem_put_nb(int rank, void *remote_dst, const void *local_src,
                   size_t bytes, telemem_handle_t *h)
{
    TLM_API_GUARD();
    int rc = rma_check("put_nb", rank, remote_dst, local_src, bytes);
    if (rc == TELEMEM_OK && !h) {
        tlm_error("put_nb: handle pointer is NULL");
        rc = TELEMEM_ERR_INVALID_ARG;
    }
    if (rc != TELEMEM_OK)
        return rc;
    if (bytes == 0 || rank == tlm_core.rank) {
        rc = bytes ? self_copy("put_nb", remote_dst, local_src, bytes,
                               remote_dst) : TELEMEM_OK;
        if (rc == TELEMEM_OK)
            *h = TELEMEM_HANDLE_NULL;
        return rc;
    }
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    if (TLM_UNLIKELY(bytes >= p->direct_min || p->direct_busy)) {
        telemem_handle_t dh = TELEMEM_HANDLE_NULL; /* complete already */
        rc = direct_or_settle(rank, true, remote_dst, (void *)local_src,
                              bytes, TLM_MODE_NB, &dh);
        if (rc == TELEMEM_OK)
            *h = dh; /* a refusal's handle, or none */
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    uint32_t idx;
    rc = tlm_core_op_alloc(&idx);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_op_t *op = tlm_core_op(idx);
    op->kind = TLM_OP_PUT;
    op->rank = rank;
    op->len = bytes;
    tlm_am_frag_hdr_t hd = {{TLM_AM_PUT, TLM_AM_F_ACK, 0, tlm_core_wire_id(idx)},
                            (uintptr_t)remote_dst, bytes, 0};
    TLM_RLX_SET(tlm_core.peers[rank].unflushed,
                tlm_core.peers[rank].unflushed + 1);
    if (bytes <= tlm_am.peers[rank].max_msg - sizeof(hd)) {
        rc = tlm_am_try_send(rank, &hd, sizeof(hd), local_src, bytes);
        if (rc == TELEMEM_OK)
            return tlm_core_new_handle(idx, h);
        if (rc != TELEMEM_ERR_AGAIN) {
            tlm_core_op_free(idx);
            return rc;
        }
    }
    if (bytes >= tlm_am.peers[rank].zc_min) {
        /* Sent without a copy (pulled by the target): on the heap, since
         * the transport may let go of it after the op is over. */
        tlm_am_sendop_t *zop = malloc(sizeof(*zop));
        if (zop) {
            tlm_am_sendop_init(zop, &hd, sizeof(hd), true, local_src, bytes);
            zop->zc = true;
            zop->done = put_nb_zc_sent;
            zop->done_arg = (void *)(uintptr_t)hd.h.id;
            tlm_am_post(rank, zop);
            return tlm_core_new_handle(idx, h);
        }
    }
    tlm_am_sendop_init(&op->sendop, &hd, sizeof(hd), true, local_src, bytes);
    op->sendop.done = put_nb_sent;
    op->sendop.done_arg = (void *)(uintptr_t)idx;
    tlm_am_post(rank, &op->sendop);
    return tlm_core_new_handle(idx, h);
}

/* ---- get ------------------------------------------------------------------ */

int tlm_core_get_alloc(int rank, bool nbi, tlm_op_t **op_p, uint32_t *idx_p)
{
    uint32_t idx;
    /* An async driver's operations to rank complete before this AM read
     * (issue order across the two paths). */
    int rc = tlm_core.peers[rank].direct_busy ? tlm_core_direct_settle(rank)
                                              : TELEMEM_OK;
    if (rc == TELEMEM_OK)
        rc = tlm_core_op_alloc(&idx);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_op_t *op = tlm_core_op(idx);
    op->kind = TLM_OP_GET;
    op->rank = rank;
    op->nbi = nbi;
    op->unpack = TLM_UNPACK_COPY;
    op->src.owned = NULL;
    TLM_RLX_SET(tlm_core.peers[rank].am_reads, true);
    *op_p = op;
    *idx_p = idx;
    return TELEMEM_OK;
}

void tlm_core_get_started(tlm_op_t *op)
{
    if (op->nbi)
        TLM_RLX_SET(tlm_core.peers[op->rank].nbi_gets,
                    tlm_core.peers[op->rank].nbi_gets + 1);
}

int tlm_core_op_wait(uint32_t idx)
{
    return tlm_core_op_wait_peer(idx, tlm_core_op(idx)->rank);
}

int tlm_core_op_wait_peer(uint32_t idx, int peer)
{
    tlm_op_t *op = tlm_core_op(idx);
    tlm_wait_t w;
    tlm_core_wait_init(&w, peer);
    while (op->state != TLM_OP_DONE) {
        int rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK) {
            free(op->src.owned);
            op->src.owned = NULL;
            tlm_core_op_free(idx); /* a late reply finds no op: dropped */
            return rc;
        }
    }
    int rc = op->status;
    tlm_core_op_free(idx);
    return rc;
}

/* Start a get into an op; the reply completes it. */
static int get_start(int rank, void *dst, const void *src, size_t n, bool nbi,
                     uint32_t *idx_p)
{
    tlm_op_t *op;
    uint32_t idx;
    int rc = tlm_core_get_alloc(rank, nbi, &op, &idx);
    if (rc != TELEMEM_OK)
        return rc;
    op->dst = dst;
    op->len = n;
    tlm_am_get_req_t req = {{TLM_AM_GET_REQ, 0, 0, tlm_core_wire_id(idx)},
                            (uintptr_t)src, n};
    rc = tlm_am_send_ctrl(rank, &req, sizeof(req), NULL, 0);
    if (rc != TELEMEM_OK) {
        tlm_core_op_free(idx);
        return rc;
    }
    tlm_core_get_started(op);
    *idx_p = idx;
    return TELEMEM_OK;
}

int telemem_get(int rank, void *local_dst, const void *remote_src,
                size_t bytes)
{
    TLM_API_GUARD();
    int rc = rma_check("get", rank, remote_src, local_dst, bytes);
    if (TLM_UNLIKELY(rc != TELEMEM_OK || bytes == 0))
        return rc;
    if (rank == tlm_core.rank)
        return self_copy("get", local_dst, remote_src, bytes, remote_src);
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    if (TLM_UNLIKELY(bytes >= p->direct_min || p->direct_busy)) {
        rc = direct_or_settle(rank, false, (void *)remote_src, local_dst,
                              bytes, TLM_MODE_BLOCK, NULL);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    uint32_t idx;
    rc = get_start(rank, local_dst, remote_src, bytes, false, &idx);
    if (rc != TELEMEM_OK)
        return rc;
    return tlm_core_op_wait(idx);
}

int telemem_get_nb(int rank, void *local_dst, const void *remote_src,
                   size_t bytes, telemem_handle_t *h)
{
    TLM_API_GUARD();
    int rc = rma_check("get_nb", rank, remote_src, local_dst, bytes);
    if (rc == TELEMEM_OK && !h) {
        tlm_error("get_nb: handle pointer is NULL");
        rc = TELEMEM_ERR_INVALID_ARG;
    }
    if (rc != TELEMEM_OK)
        return rc;
    if (bytes == 0 || rank == tlm_core.rank) {
        rc = bytes ? self_copy("get_nb", local_dst, remote_src, bytes,
                               remote_src) : TELEMEM_OK;
        if (rc == TELEMEM_OK)
            *h = TELEMEM_HANDLE_NULL;
        return rc;
    }
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    if (TLM_UNLIKELY(bytes >= p->direct_min || p->direct_busy)) {
        telemem_handle_t dh = TELEMEM_HANDLE_NULL; /* complete already */
        rc = direct_or_settle(rank, false, (void *)remote_src, local_dst,
                              bytes, TLM_MODE_NB, &dh);
        if (rc == TELEMEM_OK)
            *h = dh; /* a refusal's handle, or none */
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    uint32_t idx;
    rc = get_start(rank, local_dst, remote_src, bytes, false, &idx);
    if (rc != TELEMEM_OK)
        return rc;
    return tlm_core_new_handle(idx, h);
}

int telemem_get_nbi(int rank, void *local_dst, const void *remote_src,
                    size_t bytes)
{
    TLM_API_GUARD();
    int rc = rma_check("get_nbi", rank, remote_src, local_dst, bytes);
    if (TLM_UNLIKELY(rc != TELEMEM_OK || bytes == 0))
        return rc;
    if (rank == tlm_core.rank)
        return self_copy("get_nbi", local_dst, remote_src, bytes, remote_src);
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    if (TLM_UNLIKELY(bytes >= p->direct_min || p->direct_busy)) {
        rc = direct_or_settle(rank, false, (void *)remote_src, local_dst,
                              bytes, TLM_MODE_NBI, NULL);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    uint32_t idx;
    return get_start(rank, local_dst, remote_src, bytes, true, &idx);
}

/* ---- quiet and fence ------------------------------------------------------ */

static bool peer_complete(const tlm_core_peer_t *p)
{
    return (int32_t)(p->flush_acked - p->flush_sent) >= 0 && p->nbi_gets == 0;
}

int tlm_core_flush_am(int rank)
{
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    int rc = TELEMEM_OK;
    if (p->unflushed || p->am_reads) {
        /* Gets: their replies come before the FLUSH_ACK (one ordered
         * channel), so the round trip covers them too. */
        TLM_RLX_SET(p->unflushed, 0);
        TLM_RLX_SET(p->am_reads, false);
        TLM_RLX_SET(p->flush_sent, p->flush_sent + 1);
        tlm_am_hdr_t f = {TLM_AM_FLUSH, 0, 0, p->flush_sent};
        rc = tlm_am_send_ctrl(rank, &f, sizeof(f), NULL, 0);
    }
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    while (rc == TELEMEM_OK && !peer_complete(p))
        rc = tlm_core_wait_step(&w);
    return rc;
}

/* Ask every target in [lo, hi) with un-flushed requests; they answer in
 * order after applying everything before the FLUSH. */
static int send_flushes(int lo, int hi)
{
    int rc = TELEMEM_OK;
    for (int r = lo; r < hi; r++) {
        tlm_core_peer_t *p = &tlm_core.peers[r];
        if (r == tlm_core.rank || p->unflushed == 0)
            continue;
        TLM_RLX_SET(p->unflushed, 0);
        TLM_RLX_SET(p->am_reads, false);
        TLM_RLX_SET(p->flush_sent, p->flush_sent + 1);
        tlm_am_hdr_t f = {TLM_AM_FLUSH, 0, 0, p->flush_sent};
        int src = tlm_am_send_ctrl(r, &f, sizeof(f), NULL, 0);
        if (src != TELEMEM_OK && rc == TELEMEM_OK)
            rc = src;
    }
    return rc;
}

/* The first refusal reported by a target in [lo, hi) since the last
 * quiet/fence (each is reported once). */
static int take_refusals(int lo, int hi)
{
    int rc = TELEMEM_OK;
    for (int r = lo; r < hi; r++) {
        tlm_core_peer_t *p = &tlm_core.peers[r];
        if (p->error != TELEMEM_OK && rc == TELEMEM_OK)
            rc = p->error;
        p->error = TELEMEM_OK;
    }
    return rc;
}

int tlm_core_flush(int rank)
{
    if (rank >= 0 && rank != tlm_core.rank) {
        /* Nothing outstanding to rank (the direct path's stores are done,
         * ARMCI put + fence): nothing to poll for. */
        const tlm_core_peer_t *p = &tlm_core.peers[rank];
        if (TLM_LIKELY(!p->unflushed && !p->direct_busy &&
                       p->error == TELEMEM_OK && peer_complete(p)))
            return TELEMEM_OK;
    }
    int lo = rank < 0 ? 0 : rank, hi = rank < 0 ? tlm_core.nranks : rank + 1;
    int rc = tlm_core_direct_flush(rank);
    if (rank < 0 || rank == tlm_core.rank) {
        int src = tlm_am_drain_self(); /* requests to self are handled now */
        if (rc == TELEMEM_OK)
            rc = src;
    }
    int src = send_flushes(lo, hi);
    if (rc == TELEMEM_OK)
        rc = src;
    for (int r = lo; r < hi && rc == TELEMEM_OK; r++) {
        tlm_core_peer_t *p = &tlm_core.peers[r];
        tlm_wait_t w;
        tlm_core_wait_init(&w, r);
        while (!peer_complete(p) && rc == TELEMEM_OK)
            rc = tlm_core_wait_step(&w);
    }
    src = take_refusals(lo, hi);
    return rc == TELEMEM_OK ? src : rc;
}

/* Next time a test that is still waiting looks at the peers' liveness
 * (a system call per peer on shm, so not at every call). */
static double test_next_alive;

/* The non-blocking flush of quiet_test / fence_test (rank < 0: all).  A
 * FLUSH goes out only to targets with requests since the last one, so
 * repeated tests send nothing new and only look for the acks. */
static int flush_test(int rank, int *done)
{
    int lo = rank < 0 ? 0 : rank, hi = rank < 0 ? tlm_core.nranks : rank + 1;
    /* Async direct drivers complete without the target's CPU: this waits
     * for the local driver only (none on one node, where direct writes
     * are synchronous). */
    int rc = tlm_core_direct_flush(rank);
    if (rc == TELEMEM_OK && (rank < 0 || rank == tlm_core.rank))
        rc = tlm_am_drain_self(); /* requests to self are handled now */
    int src = send_flushes(lo, hi);
    if (rc == TELEMEM_OK)
        rc = src;
    if (rc == TELEMEM_OK) {
        src = tlm_core_progress();
        if (src < 0)
            rc = src;
    }
    if (rc != TELEMEM_OK)
        return rc;
    bool complete = true;
    for (int r = lo; r < hi && complete; r++)
        complete = peer_complete(&tlm_core.peers[r]);
    if (complete) {
        *done = 1;
        return take_refusals(lo, hi);
    }
    double now = tlm_util_now();
    if (now >= test_next_alive) {
        test_next_alive = now + tlm_core.cfg.LIVENESS_INTERVAL;
        for (int r = lo; r < hi; r++) {
            if (r == tlm_core.rank || peer_complete(&tlm_core.peers[r]))
                continue;
            if (tlm_am_peer_alive(r) != TELEMEM_OK) {
                tlm_error("rank %d has died", r);
                return TELEMEM_ERR_PEER_DEAD;
            }
        }
    }
    *done = 0;
    return TELEMEM_OK;
}

int telemem_quiet(void)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    return rc == TELEMEM_OK ? tlm_core_flush(-1) : rc;
}

int telemem_fence(int rank)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (rank < 0 || rank >= tlm_core.nranks) {
        tlm_error("fence: rank %d out of range [0, %d)", rank,
                  tlm_core.nranks);
        return TELEMEM_ERR_INVALID_ARG;
    }
    return tlm_core_flush(rank);
}

int telemem_quiet_test(int *done)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!done) {
        tlm_error("quiet_test: done is NULL");
        return TELEMEM_ERR_INVALID_ARG;
    }
    return flush_test(-1, done);
}

int telemem_fence_test(int rank, int *done)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (rank < 0 || rank >= tlm_core.nranks || !done) {
        if (!done)
            tlm_error("fence_test: done is NULL");
        else
            tlm_error("fence_test: rank %d out of range [0, %d)", rank,
                      tlm_core.nranks);
        return TELEMEM_ERR_INVALID_ARG;
    }
    return flush_test(rank, done);
}

/* ---- target side ---------------------------------------------------------- */

void tlm_core_protocol_error(int src, const char *what, size_t len)
{
    tlm_am.protocol_errors++;
    tlm_warn("dropped a malformed %s message from rank %d (%zu bytes)", what,
             src, len);
}

void tlm_core_send_ack(int src, uint32_t id, int status)
{
    tlm_am_hdr_t a = {TLM_AM_ACK, 0, (uint16_t)(int16_t)status, id};
    tlm_am_send_ctrl(src, &a, sizeof(a), NULL, 0);
}

void tlm_core_refuse(int src, const tlm_am_frag_hdr_t *h, bool last,
                     int status)
{
    if (h->offset == 0)
        tlm_debug("refused a request (type %u) from rank %d for "
                  "[0x%llx, +%llu)", h->h.type, src,
                  (unsigned long long)h->addr, (unsigned long long)h->total);
    if (h->h.flags & TLM_AM_F_ACK) {
        if (last)
            tlm_core_send_ack(src, h->h.id, status);
    } else if (h->offset == 0) {
        tlm_am_nack_t n = {{TLM_AM_NACK, 0, (uint16_t)(int16_t)status, 0},
                           h->addr, h->total};
        tlm_am_send_ctrl(src, &n, sizeof(n), NULL, 0);
    }
}

static void on_put(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    if (TLM_UNLIKELY(len < sizeof(*h)))
        return tlm_core_protocol_error(src, "put", len);
    size_t plen = len - sizeof(*h);
    if (TLM_UNLIKELY(h->offset > h->total || plen > h->total - h->offset))
        return tlm_core_protocol_error(src, "put", len);
    bool last = h->offset + plen == h->total;
    if (TLM_LIKELY(tlm_core_region_contains((uintptr_t)h->addr, h->total))) {
        if (TLM_UNLIKELY(tlm_am.peers[src].live != 0))
            tlm_am_protect(src, (uintptr_t)(h->addr + h->offset), plen);
        /* The last fragment's last word is stored once, last (a progress
         * thread applies it while the program may poll and write there:
         * telemem.h, "Polling the last word"). */
        void *dst = (void *)(uintptr_t)(h->addr + h->offset);
        if (last)
            tlm_util_copy_last(dst, h + 1, plen);
        else
            tlm_util_copy(dst, h + 1, plen);
        if ((h->h.flags & TLM_AM_F_ACK) && last)
            tlm_core_send_ack(src, h->h.id, TELEMEM_OK);
        return;
    }
    tlm_core_refuse(src, h, last, TELEMEM_ERR_OUT_OF_RANGE);
}

/* A put fragment's payload may go straight to its target when the
 * transport receives it apart from the header: same checks as on_put.
 * Not while streams of live memory to src are queued (tlm_am_protect
 * must see the write when it is applied, not before). */
static void *place_put(int src, const void *hdr, size_t hdr_len, size_t plen)
{
    const tlm_am_frag_hdr_t *h = hdr;
    if (hdr_len != sizeof(*h) || h->offset > h->total ||
        plen > h->total - h->offset || tlm_am.peers[src].live != 0 ||
        !tlm_core_region_contains((uintptr_t)h->addr, h->total))
        return NULL;
    return (void *)(uintptr_t)(h->addr + h->offset);
}

static void placed_put(int src, const void *hdr, size_t hdr_len, size_t plen,
                       int status)
{
    const tlm_am_frag_hdr_t *h = hdr;
    if (status != TELEMEM_OK) {
        /* The transport lost the sender (it says why); no ack. */
        tlm_debug("a put of %zu bytes from rank %d did not arrive: %s",
                  plen, src, telemem_strerror(status));
        return;
    }
    if ((h->h.flags & TLM_AM_F_ACK) && h->offset + plen == h->total)
        tlm_core_send_ack(src, h->h.id, TELEMEM_OK);
}

static void free_reply(tlm_am_sendop_t *op, int status)
{
    free(op->owned); /* a snapshot taken by tlm_am_protect, if any */
    free(op);
}

static void on_get_req(int src, const void *msg, size_t len)
{
    const tlm_am_get_req_t *q = msg;
    if (len != sizeof(*q))
        return tlm_core_protocol_error(src, "get request", len);
    if (!tlm_core_region_contains((uintptr_t)q->addr, q->len) || q->len == 0) {
        tlm_debug("refused get by rank %d of [0x%llx, +%llu)", src,
                  (unsigned long long)q->addr, (unsigned long long)q->len);
        tlm_core_send_ack(src, q->h.id, TELEMEM_ERR_OUT_OF_RANGE);
        return;
    }
    tlm_am_frag_hdr_t r = {{TLM_AM_GET_REP, 0, 0, q->h.id}, 0, q->len, 0};
    const void *data = (const void *)(uintptr_t)q->addr;
    if (q->len <= tlm_am_max_payload(src, sizeof(r))) {
        tlm_am_send_ctrl(src, &r, sizeof(r), data, q->len);
        return;
    }
    tlm_am_sendop_t *op = malloc(sizeof(*op));
    if (!op) {
        tlm_error("no memory to answer a get of %llu bytes from rank %d",
                  (unsigned long long)q->len, src);
        tlm_core_send_ack(src, q->h.id, TELEMEM_ERR_NO_MEMORY);
        return;
    }
    tlm_am_sendop_init(op, &r, sizeof(r), true, data, q->len);
    op->live = true;
    /* Long replies may be read in place by the initiator (shm's pull);
     * later writes from src to this memory protect it (tlm_am_protect). */
    op->zc = q->len >= tlm_am.peers[src].zc_min &&
             tlm_am.peers[src].tp->ops->protect;
    op->done = free_reply;
    tlm_am_post(src, op);
}

static void on_get_rep(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    uint32_t idx;
    if (len < sizeof(*h))
        return tlm_core_protocol_error(src, "get reply", len);
    tlm_op_t *op = tlm_core_op_from_wire(h->h.id, TLM_OP_GET, &idx);
    if (!op)
        return; /* its get was abandoned (timeout): drop */
    size_t plen = len - sizeof(*h);
    if (op->rank != src || h->total != op->len || h->offset > op->len ||
        plen > op->len - h->offset)
        return tlm_core_protocol_error(src, "get reply", len);
    if (TLM_LIKELY(op->unpack == TLM_UNPACK_COPY))
        tlm_util_copy(op->dst + h->offset, h + 1, plen);
    else if (op->unpack == TLM_UNPACK_STRIDED)
        tlm_unpack(&op->src.d, TLM_PACK_LOCAL, op->dst, h->offset, h + 1,
                   plen);
    else
        tlm_vec_scatter(&op->src.v, TLM_PACK_LOCAL, &op->src.c, h + 1, plen);
    op->got += plen;
    if (op->got == op->len)
        tlm_core_op_complete(idx, TELEMEM_OK);
}

/* A get reply's payload may go straight to the get's buffer when the
 * transport receives it apart from its header (shm's pull): the same
 * checks as on_get_rep; placed_get_rep then counts it in. */
static void *place_get_rep(int src, const void *hdr, size_t hdr_len,
                           size_t plen)
{
    const tlm_am_frag_hdr_t *h = hdr;
    uint32_t idx;
    tlm_op_t *op = hdr_len == sizeof(*h)
                       ? tlm_core_op_from_wire(h->h.id, TLM_OP_GET, &idx)
                       : NULL;
    if (!op || op->rank != src || op->unpack != TLM_UNPACK_COPY ||
        h->total != op->len || h->offset > op->len ||
        plen > op->len - h->offset)
        return NULL;
    return op->dst + h->offset;
}

static void placed_get_rep(int src, const void *hdr, size_t hdr_len,
                           size_t plen, int status)
{
    const tlm_am_frag_hdr_t *h = hdr;
    uint32_t idx;
    tlm_op_t *op = tlm_core_op_from_wire(h->h.id, TLM_OP_GET, &idx);
    if (!op)
        return;
    op->got += plen;
    if (status != TELEMEM_OK || op->got == op->len)
        tlm_core_op_complete(idx, status);
}

static void on_ack(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    uint32_t idx;
    if (len != sizeof(*h))
        return tlm_core_protocol_error(src, "ack", len);
    tlm_op_t *op = tlm_core_op_from_wire(h->id, 0, &idx);
    if (!op || op->rank != src)
        return;
    int status = (int16_t)h->aux;
    if (status != TELEMEM_OK)
        tlm_warn("rank %d refused a %s of %zu bytes: %s", src,
                 op->kind == TLM_OP_GET ? "get" : "put", op->len,
                 telemem_strerror(status));
    tlm_core_op_complete(idx, status);
}

static void on_nack(int src, const void *msg, size_t len)
{
    const tlm_am_nack_t *n = msg;
    if (len != sizeof(*n))
        return tlm_core_protocol_error(src, "nack", len);
    int status = (int16_t)n->h.aux;
    tlm_warn("rank %d refused a request for [0x%llx, +%llu): %s", src,
             (unsigned long long)n->addr, (unsigned long long)n->len,
             telemem_strerror(status));
    if (tlm_core.peers[src].error == TELEMEM_OK)
        tlm_core.peers[src].error = status;
}

static void on_flush(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    if (len != sizeof(*h))
        return tlm_core_protocol_error(src, "flush", len);
    tlm_am_hdr_t a = {TLM_AM_FLUSH_ACK, 0, 0, h->id};
    tlm_am_send_ctrl(src, &a, sizeof(a), NULL, 0);
}

static void on_flush_ack(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    if (len != sizeof(*h))
        return tlm_core_protocol_error(src, "flush ack", len);
    tlm_core_peer_t *p = &tlm_core.peers[src];
    if ((int32_t)(h->id - p->flush_acked) > 0)
        TLM_RLX_SET(p->flush_acked, h->id);
}

void tlm_core_rma_init(void)
{
    tlm_am_set_handler(TLM_AM_PUT, on_put);
    tlm_am_set_placer(TLM_AM_PUT, place_put, placed_put);
    tlm_am_set_handler(TLM_AM_GET_REQ, on_get_req);
    tlm_am_set_handler(TLM_AM_GET_REP, on_get_rep);
    tlm_am_set_placer(TLM_AM_GET_REP, place_get_rep, placed_get_rep);
    tlm_am_set_handler(TLM_AM_ACK, on_ack);
    tlm_am_set_handler(TLM_AM_NACK, on_nack);
    tlm_am_set_handler(TLM_AM_FLUSH, on_flush);
    tlm_am_set_handler(TLM_AM_FLUSH_ACK, on_flush_ack);
}

/* core_rma.c - put and get over active messages: the initiator's front end
 * (blocking, nb and nbi forms) and the target's handlers that check each
 * request against the region table and apply it.  How an operation
 * completes (acks, flushes, waits) is core_engine.c's. */
#include <stdlib.h>
#include <string.h>

#include "core/core_engine.h"
#include "core/core_direct.h"
#include "core/core_region.h"

/* ---- argument checks ------------------------------------------------------ */

int tlm_core_check_rma_args(const char *what, int rank, const void *remote,
                            const void *local, size_t bytes)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if ((rc = tlm_core_check_rank(what, rank)) != TELEMEM_OK)
        return rc;
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
                   !tlm_core.peer_gone &&
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

/* ---- put ------------------------------------------------------------------ */

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
    if (tlm_core_direct_wanted(rank, bytes)) {
        tlm_core_xfer_t x = {true, remote_dst, (void *)local_src, bytes, NULL};
        rc = tlm_core_direct_route(rank, &x, TLM_MODE_BLOCK, NULL);
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
    if (tlm_core_direct_wanted(rank, bytes)) {
        tlm_core_xfer_t x = {true, remote_dst, (void *)local_src, bytes, NULL};
        rc = tlm_core_direct_route(rank, &x, TLM_MODE_NBI, NULL);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    tlm_am_frag_hdr_t h = {{TLM_AM_PUT, 0, 0, 0}, (uintptr_t)remote_dst,
                           bytes, 0};
    TLM_RLX_SET(p->unflushed, p->unflushed + 1);
    if (bytes <= tlm_am.peers[rank].max_msg - sizeof(h) &&
        !tlm_am_zc_pays(&tlm_am.peers[rank], local_src, bytes)) {
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
    if (tlm_core_direct_wanted(rank, bytes)) {
        telemem_handle_t dh = TELEMEM_HANDLE_NULL; /* complete already */
        tlm_core_xfer_t x = {true, remote_dst, (void *)local_src, bytes, NULL};
        rc = tlm_core_direct_route(rank, &x, TLM_MODE_NB, &dh);
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
    if (tlm_am_zc_pays(&tlm_am.peers[rank], local_src, bytes)) {
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
    if (tlm_core_direct_wanted(rank, bytes)) {
        tlm_core_xfer_t x = {false, (void *)remote_src, local_dst, bytes, NULL};
        rc = tlm_core_direct_route(rank, &x, TLM_MODE_BLOCK, NULL);
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
    if (tlm_core_direct_wanted(rank, bytes)) {
        telemem_handle_t dh = TELEMEM_HANDLE_NULL; /* complete already */
        tlm_core_xfer_t x = {false, (void *)remote_src, local_dst, bytes, NULL};
        rc = tlm_core_direct_route(rank, &x, TLM_MODE_NB, &dh);
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
    if (tlm_core_direct_wanted(rank, bytes)) {
        tlm_core_xfer_t x = {false, (void *)remote_src, local_dst, bytes, NULL};
        rc = tlm_core_direct_route(rank, &x, TLM_MODE_NBI, NULL);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    uint32_t idx;
    return get_start(rank, local_dst, remote_src, bytes, true, &idx);
}

/* ---- target side ---------------------------------------------------------- */

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
    op->zc = tlm_am_zc_pays(&tlm_am.peers[src], data, q->len) &&
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

void tlm_core_rma_init(void)
{
    tlm_am_set_handler(TLM_AM_PUT, on_put);
    tlm_am_set_placer(TLM_AM_PUT, place_put, placed_put);
    tlm_am_set_handler(TLM_AM_GET_REQ, on_get_req);
    tlm_am_set_handler(TLM_AM_GET_REP, on_get_rep);
    tlm_am_set_placer(TLM_AM_GET_REP, place_get_rep, placed_get_rep);
}

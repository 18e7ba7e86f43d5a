/* core_strided.c - strided put, get and accumulate (and contiguous
 * accumulate, a strided one of 0 levels): argument checks, the initiator's
 * front ends, and the target's handlers that range-check a patch's extent
 * and unpack (or accumulate) each fragment on arrival. */
#include <stdlib.h>
#include <string.h>

#include "core/core_engine.h"
#include "core/core_direct.h"
#include "core/core_packed.h"
#include "core/core_region.h"

/* Header of PUTS: fragment header, [scale (16 bytes) if accumulate], wire
 * descriptor of the remote side. */

/* ---- checks --------------------------------------------------------------- */

/* Checks common to every strided call; fills d.  *empty when nothing is to
 * be moved. */
static int strided_args(const char *what, int rank, const void *remote,
                        const size_t *rstr, const void *local,
                        const size_t *lstr, const size_t *count, int levels,
                        tlm_pack_desc_t *d)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if ((rc = tlm_core_check_rank(what, rank)) != TELEMEM_OK)
        return rc;
    if (levels < 0 || levels > TELEMEM_MAX_STRIDE_LEVELS || !count ||
        (levels > 0 && (!rstr || !lstr))) {
        tlm_error("%s: %s", what,
                  levels < 0 || levels > TELEMEM_MAX_STRIDE_LEVELS
                      ? "stride_levels out of range [0, 8]"
                  : !count ? "count is NULL" : "a stride array is NULL");
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (tlm_pack_normalize(d, levels, count, lstr, rstr) != 0) {
        tlm_error("%s: the patch's size overflows", what);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (d->total == 0)
        return TELEMEM_OK;
    size_t le = tlm_pack_extent(d, TLM_PACK_LOCAL);
    size_t re = tlm_pack_extent(d, TLM_PACK_REMOTE);
    if (!remote || !local || tlm_util_range_wraps((uintptr_t)remote, re) ||
        tlm_util_range_wraps((uintptr_t)local, le)) {
        tlm_error("%s: %s", what, !remote || !local
                  ? "NULL address with a non-empty patch"
                  : "the patch wraps around the address space");
        return TELEMEM_ERR_INVALID_ARG;
    }
    return TELEMEM_OK;
}

/* A local operation on this rank's own memory: checked like a remote one,
 * copied (or accumulated) through a small bounce buffer. */
static int self_strided(const char *what, const tlm_pack_desc_t *d, int dir,
                        const void *remote, const void *local, int acc_type,
                        const void *scale)
{
    int rc = tlm_am_drain_self();
    if (rc != TELEMEM_OK)
        return rc;
    if (!tlm_core_region_contains((uintptr_t)remote,
                                  tlm_pack_extent(d, TLM_PACK_REMOTE))) {
        tlm_error("%s: the patch at %p is outside this rank's registered "
                  "memory", what, remote);
        return TELEMEM_ERR_OUT_OF_RANGE;
    }
    uint64_t bounce[512];
    size_t chunk = sizeof(bounce);
    for (size_t off = 0; off < d->total; off += chunk) {
        size_t n = TLM_MIN(chunk, d->total - off);
        if (dir == TLM_OP_PUT) {
            tlm_pack(d, TLM_PACK_LOCAL, local, off, bounce, n);
            if (acc_type >= 0)
                tlm_unpack_acc(d, TLM_PACK_REMOTE, (void *)(uintptr_t)remote,
                               off, bounce, n,
                               acc_type | tlm_core.acc_flags, scale);
            else
                tlm_unpack(d, TLM_PACK_REMOTE, (void *)(uintptr_t)remote, off,
                           bounce, n);
        } else {
            tlm_pack(d, TLM_PACK_REMOTE, remote, off, bounce, n);
            tlm_unpack(d, TLM_PACK_LOCAL, (void *)(uintptr_t)local, off,
                       bounce, n);
        }
    }
    return TELEMEM_OK;
}

/* ---- put and accumulate --------------------------------------------------- */

static int put_strided(const char *what, int mode, int rank, int acc_type,
                       const void *scale, void *remote, const size_t *rstr,
                       const void *local, const size_t *lstr,
                       const size_t *count, int levels, telemem_handle_t *h)
{
    tlm_pack_src_t src;
    int rc = strided_args(what, rank, remote, rstr, local, lstr, count,
                          levels, &src.d);
    if (rc == TELEMEM_OK && mode == TLM_MODE_NB && !h) {
        tlm_error("%s: handle pointer is NULL", what);
        rc = TELEMEM_ERR_INVALID_ARG;
    }
    if (rc == TELEMEM_OK && acc_type >= 0)
        rc = tlm_core_check_acc(what, acc_type, scale, count[0]);
    if (rc != TELEMEM_OK)
        return rc;
    if (h)
        *h = TELEMEM_HANDLE_NULL;
    if (src.d.total == 0)
        return TELEMEM_OK;
    if (rank == tlm_core.rank)
        return self_strided(what, &src.d, TLM_OP_PUT, remote, local, acc_type,
                            scale);
    if (acc_type < 0 && tlm_pack_is_contig(&src.d)) {
        size_t n = src.d.total;
        return mode == TLM_MODE_BLOCK ? telemem_put(rank, remote, local, n)
               : mode == TLM_MODE_NB  ? telemem_put_nb(rank, remote, local, n,
                                                       h)
                                      : telemem_put_nbi(rank, remote, local, n);
    }
    if (acc_type >= 0) {
        /* A peer's block mapped here: applied here, complete. */
        rc = tlm_core_direct_acc(rank, acc_type, scale, remote, local,
                                 &src.d);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    } else if (tlm_core_direct_wanted(rank, src.d.total)) {
        /* Long enough rows: a block-stride chain on the direct path. */
        tlm_core_xfer_t x = {true, remote, (void *)(uintptr_t)local, 0,
                             &src.d};
        rc = tlm_core_direct_route(rank, &x, mode, h);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    uint64_t hdr[TLM_AM_MAX_HDR / 8];
    tlm_am_frag_hdr_t *fh = (tlm_am_frag_hdr_t *)(void *)hdr;
    memset(fh, 0, sizeof(*fh));
    fh->h.type = TLM_AM_PUTS;
    fh->h.aux = (uint16_t)(acc_type + 1);
    fh->addr = (uintptr_t)remote;
    fh->total = src.d.total;
    size_t hl = sizeof(*fh);
    uint32_t align = tlm_core_acc_hdr_put(hdr, &hl, acc_type, scale);
    hl += tlm_pack_wire_encode(&src.d, TLM_PACK_REMOTE, (uint8_t *)hdr + hl);
    src.side = TLM_PACK_LOCAL;
    src.base = local;
    src.owned = NULL;
    return tlm_core_put_packed(rank, mode, hdr, hl, src.d.total, align,
                               tlm_core_pack_strided, &src, h);
}

/* Target: a fragment of a strided put or accumulate. */
static void on_puts(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    if (len < sizeof(*h))
        return tlm_core_protocol_error(src, "strided put", len);
    int acc = (int)h->h.aux - 1;
    size_t hl = sizeof(*h), es;
    const void *scale = tlm_core_acc_hdr_get(acc, msg, len, &hl, &es);
    if (acc >= 0 && !scale)
        return tlm_core_protocol_error(src, "accumulate", len);
    tlm_pack_desc_t d;
    size_t used = tlm_pack_wire_decode(&d, (const uint8_t *)msg + hl,
                                       len - hl);
    if (!used)
        return tlm_core_protocol_error(src, "strided put", len);
    hl += used;
    size_t plen = len - hl;
    if (d.total != h->total || h->offset > h->total ||
        plen > h->total - h->offset || h->offset % es || plen % es ||
        (d.total && d.count[0] % es))
        return tlm_core_protocol_error(src, "strided put", len);
    bool last = h->offset + plen == h->total;
    uintptr_t base = (uintptr_t)h->addr;
    size_t ext = tlm_pack_extent(&d, TLM_PACK_REMOTE);
    if (!tlm_core_region_contains(base, ext))
        return tlm_core_refuse(src, h, last, TELEMEM_ERR_OUT_OF_RANGE);
    if (tlm_am.peers[src].live != 0)
        tlm_am_protect(src, base, ext);
    const uint8_t *data = (const uint8_t *)msg + hl;
    if (acc >= 0)
        tlm_unpack_acc(&d, TLM_PACK_REMOTE, (void *)base, h->offset, data,
                       plen, acc | tlm_core.acc_flags, scale);
    else
        tlm_unpack(&d, TLM_PACK_REMOTE, (void *)base, h->offset, data, plen);
    if ((h->h.flags & TLM_AM_F_ACK) && last)
        tlm_core_send_ack(src, h->h.id, TELEMEM_OK);
}

/* ---- get ------------------------------------------------------------------ */

static int get_strided(const char *what, int mode, int rank, void *local,
                       const size_t *lstr, const void *remote,
                       const size_t *rstr, const size_t *count, int levels,
                       telemem_handle_t *h)
{
    tlm_pack_desc_t d;
    int rc = strided_args(what, rank, remote, rstr, local, lstr, count,
                          levels, &d);
    if (rc == TELEMEM_OK && mode == TLM_MODE_NB && !h) {
        tlm_error("%s: handle pointer is NULL", what);
        rc = TELEMEM_ERR_INVALID_ARG;
    }
    if (rc != TELEMEM_OK)
        return rc;
    if (h)
        *h = TELEMEM_HANDLE_NULL;
    if (d.total == 0)
        return TELEMEM_OK;
    if (rank == tlm_core.rank)
        return self_strided(what, &d, TLM_OP_GET, remote, local, -1, NULL);
    if (tlm_pack_is_contig(&d)) {
        size_t n = d.total;
        return mode == TLM_MODE_BLOCK ? telemem_get(rank, local, remote, n)
               : mode == TLM_MODE_NB  ? telemem_get_nb(rank, local, remote, n,
                                                       h)
                                      : telemem_get_nbi(rank, local, remote, n);
    }
    if (tlm_core_direct_wanted(rank, d.total)) {
        tlm_core_xfer_t x = {false, (void *)remote, local, 0, &d};
        rc = tlm_core_direct_route(rank, &x, mode, h);
        if (rc != TLM_DIRECT_DECLINED)
            return rc;
    }
    tlm_op_t *op;
    uint32_t idx;
    rc = tlm_core_get_alloc(rank, mode == TLM_MODE_NBI, &op, &idx);
    if (rc != TELEMEM_OK)
        return rc;
    op->dst = local;
    op->len = d.total;
    op->unpack = TLM_UNPACK_STRIDED;
    op->src.d = d;
    uint64_t msg[(sizeof(tlm_am_get_req_t) + (size_t)TLM_PACK_WIRE_MAX) / 8];
    tlm_am_get_req_t *q = (tlm_am_get_req_t *)(void *)msg;
    *q = (tlm_am_get_req_t){{TLM_AM_GETS_REQ, 0, 0, tlm_core_wire_id(idx)},
                            (uintptr_t)remote, d.total};
    size_t ml = sizeof(*q) + tlm_pack_wire_encode(&d, TLM_PACK_REMOTE, q + 1);
    rc = tlm_am_send_ctrl(rank, msg, ml, NULL, 0);
    if (rc != TELEMEM_OK) {
        tlm_core_op_free(idx);
        return rc;
    }
    tlm_core_get_started(op);
    if (mode == TLM_MODE_BLOCK)
        return tlm_core_op_wait(idx);
    if (mode == TLM_MODE_NB)
        return tlm_core_new_handle(idx, h);
    return TELEMEM_OK;
}

/* A queued strided get reply: the stream and what it packs from. */
typedef struct gets_reply {
    tlm_am_sendop_t op;
    tlm_pack_src_t src;
} gets_reply_t;

static void gets_reply_done(tlm_am_sendop_t *op, int status)
{
    free(op->owned); /* a snapshot taken by tlm_am_protect, if any */
    free(op);        /* the gets_reply_t */
}

/* Target: a strided get request. */
static void on_gets_req(int src, const void *msg, size_t len)
{
    const tlm_am_get_req_t *q = msg;
    if (len < sizeof(*q))
        return tlm_core_protocol_error(src, "strided get", len);
    tlm_pack_src_t ps;
    size_t used = tlm_pack_wire_decode(&ps.d, q + 1, len - sizeof(*q));
    if (!used || sizeof(*q) + used != len || ps.d.total != q->len ||
        q->len == 0)
        return tlm_core_protocol_error(src, "strided get", len);
    size_t ext = tlm_pack_extent(&ps.d, TLM_PACK_REMOTE);
    if (!tlm_core_region_contains((uintptr_t)q->addr, ext)) {
        tlm_debug("refused strided get by rank %d of [0x%llx, +%zu)", src,
                  (unsigned long long)q->addr, ext);
        tlm_core_send_ack(src, q->h.id, TELEMEM_ERR_OUT_OF_RANGE);
        return;
    }
    ps.side = TLM_PACK_REMOTE;
    ps.base = (const uint8_t *)(uintptr_t)q->addr;
    ps.owned = NULL;
    tlm_am_frag_hdr_t r = {{TLM_AM_GET_REP, 0, 0, q->h.id}, 0, q->len, 0};
    if (q->len <= tlm_am_max_payload(src, sizeof(r)) &&
        tlm_am_try_send_pack(src, &r, sizeof(r), q->len,
                             tlm_core_pack_strided, &ps) == TELEMEM_OK)
        return;
    gets_reply_t *g = malloc(sizeof(*g));
    if (!g) {
        tlm_error("no memory to answer a strided get of %llu bytes from "
                  "rank %d", (unsigned long long)q->len, src);
        tlm_core_send_ack(src, q->h.id, TELEMEM_ERR_NO_MEMORY);
        return;
    }
    g->src = ps;
    tlm_am_sendop_init(&g->op, &r, sizeof(r), true, NULL, q->len);
    tlm_am_sendop_set_pack(&g->op, tlm_core_pack_strided, &g->src, 1);
    g->op.live = true;
    g->op.live_lo = (uintptr_t)q->addr;
    g->op.live_len = ext;
    g->op.done = gets_reply_done;
    tlm_am_post(src, &g->op);
}

void tlm_core_strided_init(void)
{
    tlm_am_set_handler(TLM_AM_PUTS, on_puts);
    tlm_am_set_handler(TLM_AM_GETS_REQ, on_gets_req);
}

/* ---- public entry points --------------------------------------------------
 */

int telemem_put_strided(int rank, void *remote_dst,
                        const size_t *remote_strides, const void *local_src,
                        const size_t *local_strides, const size_t *count,
                        int stride_levels)
{
    TLM_API_GUARD();
    return put_strided("put_strided", TLM_MODE_BLOCK, rank, -1, NULL,
                       remote_dst, remote_strides, local_src, local_strides,
                       count, stride_levels, NULL);
}

int telemem_put_strided_nb(int rank, void *remote_dst,
                           const size_t *remote_strides, const void *local_src,
                           const size_t *local_strides, const size_t *count,
                           int stride_levels, telemem_handle_t *h)
{
    TLM_API_GUARD();
    return put_strided("put_strided_nb", TLM_MODE_NB, rank, -1, NULL,
                       remote_dst, remote_strides, local_src, local_strides,
                       count, stride_levels, h);
}

int telemem_put_strided_nbi(int rank, void *remote_dst,
                            const size_t *remote_strides, const void *local_src,
                            const size_t *local_strides, const size_t *count,
                            int stride_levels)
{
    TLM_API_GUARD();
    return put_strided("put_strided_nbi", TLM_MODE_NBI, rank, -1, NULL,
                       remote_dst, remote_strides, local_src, local_strides,
                       count, stride_levels, NULL);
}

int telemem_get_strided(int rank, void *local_dst, const size_t *local_strides,
                        const void *remote_src, const size_t *remote_strides,
                        const size_t *count, int stride_levels)
{
    TLM_API_GUARD();
    return get_strided("get_strided", TLM_MODE_BLOCK, rank, local_dst,
                       local_strides, remote_src, remote_strides, count,
                       stride_levels, NULL);
}

int telemem_get_strided_nb(int rank, void *local_dst,
                           const size_t *local_strides, const void *remote_src,
                           const size_t *remote_strides, const size_t *count,
                           int stride_levels, telemem_handle_t *h)
{
    TLM_API_GUARD();
    return get_strided("get_strided_nb", TLM_MODE_NB, rank, local_dst,
                       local_strides, remote_src, remote_strides, count,
                       stride_levels, h);
}

int telemem_get_strided_nbi(int rank, void *local_dst,
                            const size_t *local_strides, const void *remote_src,
                            const size_t *remote_strides, const size_t *count,
                            int stride_levels)
{
    TLM_API_GUARD();
    return get_strided("get_strided_nbi", TLM_MODE_NBI, rank, local_dst,
                       local_strides, remote_src, remote_strides, count,
                       stride_levels, NULL);
}

int telemem_acc(int rank, telemem_type_t type, const void *scale,
                void *remote_dst, const void *local_src, size_t bytes)
{
    TLM_API_GUARD();
    size_t count[1] = {bytes};
    return put_strided("acc", TLM_MODE_BLOCK, rank, tlm_core_acc_arg(type),
                       scale, remote_dst, NULL, local_src, NULL, count, 0,
                       NULL);
}

int telemem_acc_nb(int rank, telemem_type_t type, const void *scale,
                   void *remote_dst, const void *local_src, size_t bytes,
                   telemem_handle_t *h)
{
    TLM_API_GUARD();
    size_t count[1] = {bytes};
    return put_strided("acc_nb", TLM_MODE_NB, rank, tlm_core_acc_arg(type),
                       scale, remote_dst, NULL, local_src, NULL, count, 0, h);
}

int telemem_acc_nbi(int rank, telemem_type_t type, const void *scale,
                    void *remote_dst, const void *local_src, size_t bytes)
{
    TLM_API_GUARD();
    size_t count[1] = {bytes};
    return put_strided("acc_nbi", TLM_MODE_NBI, rank, tlm_core_acc_arg(type),
                       scale, remote_dst, NULL, local_src, NULL, count, 0,
                       NULL);
}

int telemem_acc_strided(int rank, telemem_type_t type, const void *scale,
                        void *remote_dst, const size_t *remote_strides,
                        const void *local_src, const size_t *local_strides,
                        const size_t *count, int stride_levels)
{
    TLM_API_GUARD();
    return put_strided("acc_strided", TLM_MODE_BLOCK, rank,
                       tlm_core_acc_arg(type), scale, remote_dst,
                       remote_strides, local_src, local_strides, count,
                       stride_levels, NULL);
}

int telemem_acc_strided_nb(int rank, telemem_type_t type, const void *scale,
                           void *remote_dst, const size_t *remote_strides,
                           const void *local_src, const size_t *local_strides,
                           const size_t *count, int stride_levels,
                           telemem_handle_t *h)
{
    TLM_API_GUARD();
    return put_strided("acc_strided_nb", TLM_MODE_NB, rank,
                       tlm_core_acc_arg(type), scale, remote_dst,
                       remote_strides, local_src, local_strides, count,
                       stride_levels, h);
}

int telemem_acc_strided_nbi(int rank, telemem_type_t type, const void *scale,
                            void *remote_dst, const size_t *remote_strides,
                            const void *local_src, const size_t *local_strides,
                            const size_t *count, int stride_levels)
{
    TLM_API_GUARD();
    return put_strided("acc_strided_nbi", TLM_MODE_NBI, rank,
                       tlm_core_acc_arg(type), scale, remote_dst,
                       remote_strides, local_src, local_strides, count,
                       stride_levels, NULL);
}

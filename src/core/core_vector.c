/* core_vector.c - vector (giov) and list transfers: put, get and
 * accumulate over an address list.  The initiator sends the remote list
 * (16-byte records) ahead of the data; the target gathers the whole list,
 * checks every segment before touching memory, then scatters the data. */
#include <stdlib.h>
#include <string.h>

#include "core/core_engine.h"
#include "core/core_am_api.h"
#include "core/core_packed.h"
#include "core/core_region.h"

#define REC_BYTES 16u

/* What a target keeps about the vector stream a source is sending (one at
 * a time per source: streams from one sender never interleave). */
typedef struct vstate {
    bool active;
    bool refused;
    uint8_t type;      /* TLM_AM_PUTV or TLM_AM_GETV_REQ */
    int acc;           /* element type, -1 for a plain put */
    int status;
    uint64_t scale[2];
    size_t nrecs, list_bytes, total, pos;
    uint64_t *list;
    tlm_vec_t v;
    tlm_vec_cursor_t c;
} vstate_t;

static vstate_t *vstates; /* by source rank */

/* ---- initiator ------------------------------------------------------------ */

static int vec_args(const char *what, int rank, int mode, telemem_handle_t *h,
                    const tlm_vec_t *v, size_t *total, int acc,
                    const void *scale)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if ((rc = tlm_core_check_rank(what, rank)) != TELEMEM_OK)
        return rc;
    if (mode == TLM_MODE_NB && !h) {
        tlm_error("%s: handle pointer is NULL", what);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (tlm_vec_total(v, total) != 0) {
        tlm_error("%s: invalid list (NULL array or address, a segment that "
                  "wraps, or a total that overflows)", what);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (acc >= 0) {
        rc = tlm_core_check_acc(what, acc, scale, 0);
        if (rc != TELEMEM_OK)
            return rc;
        size_t es = tlm_acc_elem_size(acc);
        for (size_t i = 0; i < v->n; i++) {
            void *l, *r;
            size_t b;
            tlm_vec_seg(v, i, &l, &r, &b);
            if (b % es) {
                tlm_error("%s: segment %zu has %zu bytes, not a multiple of "
                          "the element size %zu", what, i, b, es);
                return TELEMEM_ERR_INVALID_ARG;
            }
        }
    }
    return TELEMEM_OK;
}

/* A private copy of the list (triples), for operations that outlive the
 * call. */
static tlm_vec_seg3_t *copy_list(const tlm_vec_t *v)
{
    tlm_vec_seg3_t *c = malloc((v->n ? v->n : 1) * sizeof(*c));
    if (!c) {
        tlm_error("no memory to copy a list of %zu segments", v->n);
        return NULL;
    }
    for (size_t i = 0; i < v->n; i++)
        tlm_vec_seg(v, i, &c[i].local, &c[i].remote, &c[i].bytes);
    return c;
}

static int self_vector(const char *what, const tlm_vec_t *v, int dir, int acc,
                       const void *scale)
{
    int rc = tlm_am_drain_self();
    if (rc != TELEMEM_OK)
        return rc;
    for (size_t i = 0; i < v->n; i++) {
        void *l, *r;
        size_t b;
        tlm_vec_seg(v, i, &l, &r, &b);
        if (b && !tlm_core_region_contains((uintptr_t)r, b)) {
            tlm_error("%s: segment %zu [%p, +%zu) is outside this rank's "
                      "registered memory", what, i, r, b);
            return TELEMEM_ERR_OUT_OF_RANGE;
        }
    }
    for (size_t i = 0; i < v->n; i++) {
        void *l, *r;
        size_t b;
        tlm_vec_seg(v, i, &l, &r, &b);
        if (!b)
            continue;
        if (dir == TLM_OP_GET)
            memmove(l, r, b);
        else if (acc >= 0)
            tlm_acc_apply(acc | tlm_core.acc_flags, r, l,
                          b / tlm_acc_elem_size(acc), scale);
        else
            memmove(r, l, b);
    }
    return TELEMEM_OK;
}

static int put_vector(const char *what, int mode, int rank, int acc,
                      const void *scale, const tlm_vec_t *v,
                      telemem_handle_t *h)
{
    size_t total;
    int rc = vec_args(what, rank, mode, h, v, &total, acc, scale);
    if (rc != TELEMEM_OK)
        return rc;
    if (h)
        *h = TELEMEM_HANDLE_NULL;
    if (total == 0)
        return TELEMEM_OK;
    if (rank == tlm_core.rank)
        return self_vector(what, v, TLM_OP_PUT, acc, scale);
    if (v->n > (SIZE_MAX - total) / REC_BYTES) {
        tlm_error("%s: list too long", what);
        return TELEMEM_ERR_INVALID_ARG;
    }
    tlm_pack_src_t src;
    memset(&src, 0, sizeof(src));
    src.side = TLM_PACK_LOCAL;
    src.v = *v;
    src.list_bytes = v->n * REC_BYTES;
    if (mode != TLM_MODE_BLOCK) {
        tlm_vec_seg3_t *c = copy_list(v);
        if (!c)
            return TELEMEM_ERR_NO_MEMORY;
        src.v = (tlm_vec_t){.n = v->n, .segs = c};
        src.owned = c;
    }
    uint64_t hdr[TLM_AM_MAX_HDR / 8];
    tlm_am_frag_hdr_t *fh = (tlm_am_frag_hdr_t *)(void *)hdr;
    memset(fh, 0, sizeof(*fh));
    fh->h.type = TLM_AM_PUTV;
    fh->h.aux = (uint16_t)(acc + 1);
    fh->addr = v->n; /* records in the list */
    fh->total = src.list_bytes + total;
    size_t hl = sizeof(*fh);
    uint32_t align = tlm_core_acc_hdr_put(hdr, &hl, acc, scale);
    return tlm_core_put_packed(rank, mode, hdr, hl, src.list_bytes + total,
                               align, tlm_core_pack_vector, &src, h);
}

typedef struct req_stream {
    tlm_am_sendop_t op;
    tlm_pack_src_t src;
} req_stream_t;

static void req_stream_done(tlm_am_sendop_t *op, int status)
{
    req_stream_t *r = (req_stream_t *)(void *)op;
    free(r->src.owned);
    free(r);
}

static int get_vector(const char *what, int mode, int rank,
                      const tlm_vec_t *v, telemem_handle_t *h)
{
    size_t total;
    int rc = vec_args(what, rank, mode, h, v, &total, -1, NULL);
    if (rc != TELEMEM_OK)
        return rc;
    if (h)
        *h = TELEMEM_HANDLE_NULL;
    if (total == 0)
        return TELEMEM_OK;
    if (rank == tlm_core.rank)
        return self_vector(what, v, TLM_OP_GET, -1, NULL);
    if (v->n > SIZE_MAX / REC_BYTES) {
        tlm_error("%s: list too long", what);
        return TELEMEM_ERR_INVALID_ARG;
    }
    tlm_vec_seg3_t *c = copy_list(v);
    if (!c)
        return TELEMEM_ERR_NO_MEMORY;
    tlm_op_t *op;
    uint32_t idx;
    rc = tlm_core_get_alloc(rank, mode == TLM_MODE_NBI, &op, &idx);
    if (rc != TELEMEM_OK) {
        free(c);
        return rc;
    }
    op->len = total;
    op->unpack = TLM_UNPACK_VECTOR;
    memset(&op->src, 0, sizeof(op->src));
    op->src.v = (tlm_vec_t){.n = v->n, .segs = c};
    op->src.owned = c;

    /* The request: the records of the remote list. */
    uint64_t hdr[(sizeof(tlm_am_frag_hdr_t) + 8) / 8];
    tlm_am_frag_hdr_t *fh = (tlm_am_frag_hdr_t *)(void *)hdr;
    *fh = (tlm_am_frag_hdr_t){{TLM_AM_GETV_REQ, 0, 0, tlm_core_wire_id(idx)},
                              v->n, v->n * REC_BYTES, 0};
    hdr[4] = total;
    size_t hl = sizeof(hdr), lb = v->n * REC_BYTES;
    tlm_pack_src_t rs;
    memset(&rs, 0, sizeof(rs));
    rs.v = op->src.v;
    rs.list_bytes = lb;
    rc = TELEMEM_ERR_AGAIN;
    if (lb <= tlm_am_max_payload(rank, hl))
        rc = tlm_am_try_send_pack(rank, hdr, hl, lb, tlm_core_pack_vector,
                                  &rs);
    if (rc == TELEMEM_ERR_AGAIN) {
        /* A long list (or back-pressure): a queued stream with its own copy
         * of the list, so it never depends on the op's lifetime. */
        req_stream_t *r = malloc(sizeof(*r));
        tlm_vec_seg3_t *c2 = r ? copy_list(v) : NULL;
        if (!c2) {
            free(r);
            tlm_error("%s: no memory to queue the request", what);
            rc = TELEMEM_ERR_NO_MEMORY;
        } else {
            r->src = rs;
            r->src.v.segs = c2;
            r->src.owned = c2;
            tlm_am_sendop_init(&r->op, hdr, hl, true, NULL, lb);
            tlm_am_sendop_set_pack(&r->op, tlm_core_pack_vector, &r->src, 1);
            r->op.done = req_stream_done;
            rc = tlm_am_post(rank, &r->op);
        }
    }
    if (rc != TELEMEM_OK) {
        free(op->src.owned);
        op->src.owned = NULL;
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

/* ---- target --------------------------------------------------------------- */

/* Every record inside this rank's regions, lengths adding up to data_total,
 * multiples of es: TELEMEM_OK, TELEMEM_ERR_OUT_OF_RANGE, or
 * TELEMEM_ERR_PROTOCOL for an inconsistent list. */
static int check_list(const uint64_t *recs, size_t n, size_t data_total,
                      size_t es, uintptr_t *lo, uintptr_t *hi)
{
    size_t sum = 0;
    *lo = UINTPTR_MAX;
    *hi = 0;
    int rc = TELEMEM_OK;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = recs[2 * i], b = recs[2 * i + 1];
        if (b > data_total - sum || b % es)
            return TELEMEM_ERR_PROTOCOL;
        sum += b;
        if (!b)
            continue;
        if (!tlm_core_region_contains((uintptr_t)a, b)) {
            rc = TELEMEM_ERR_OUT_OF_RANGE; /* [a, a + b) may wrap */
            continue;
        }
        *lo = TLM_MIN(*lo, (uintptr_t)a);
        *hi = TLM_MAX(*hi, (uintptr_t)(a + b));
    }
    return sum == data_total ? rc : TELEMEM_ERR_PROTOCOL;
}

/* src: the source the list was charged to (tlm_core_reasm_reserve). */
static void vstate_reset(int src, vstate_t *s)
{
    if (s->list) {
        free(s->list);
        tlm_core_reasm_release(src, s->list_bytes);
    }
    memset(s, 0, sizeof(*s));
}

/* Apply data bytes of a vector put to the (checked) list. */
static void apply_data(int src, vstate_t *s, const uint8_t *data, size_t n)
{
    if (tlm_am.peers[src].live != 0) {
        for (size_t i = 0; i < s->nrecs; i++)
            /* nrecs * 16 = list_bytes bytes of list arrived before any
             * data (analyzer false positive)
             * NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Branch) */
            if (s->v.recs[2 * i + 1])
                tlm_am_protect(src, (uintptr_t)s->v.recs[2 * i],
                               (size_t)s->v.recs[2 * i + 1]);
    }
    if (s->acc >= 0)
        tlm_vec_scatter_acc(&s->v, TLM_PACK_REMOTE, &s->c, data, n,
                            s->acc | tlm_core.acc_flags, s->scale);
    else
        tlm_vec_scatter(&s->v, TLM_PACK_REMOTE, &s->c, data, n);
}

static void list_checked(int src, const tlm_am_frag_hdr_t *h, vstate_t *s,
                         int status)
{
    if (status == TELEMEM_OK)
        return;
    s->refused = true;
    s->status = status;
    tlm_debug("refused a vector request from rank %d: %s", src,
              telemem_strerror(status));
    if (!(h->h.flags & TLM_AM_F_ACK)) {
        tlm_am_nack_t nk = {{TLM_AM_NACK, 0, (uint16_t)(int16_t)status, 0},
                            s->nrecs, s->total};
        tlm_am_send_ctrl(src, &nk, sizeof(nk), NULL, 0);
    }
}

/* Start of a vector stream (offset 0): header fields into s. */
static int vstate_begin(vstate_t *s, const tlm_am_frag_hdr_t *h, int acc,
                        const void *scale)
{
    memset(s, 0, sizeof(*s));
    s->type = h->h.type;
    s->acc = acc;
    if (scale)
        memcpy(s->scale, scale, TLM_ACC_SCALE_BYTES);
    s->nrecs = (size_t)h->addr;
    s->total = (size_t)h->total;
    if (h->addr > h->total / REC_BYTES)
        return TELEMEM_ERR_PROTOCOL;
    s->list_bytes = s->nrecs * REC_BYTES;
    return TELEMEM_OK;
}

static void on_putv(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    if (len < sizeof(*h))
        return tlm_core_protocol_error(src, "vector put", len);
    int acc = (int)h->h.aux - 1;
    size_t hl = sizeof(*h), es;
    const void *scale = tlm_core_acc_hdr_get(acc, msg, len, &hl, &es);
    if (acc >= 0 && !scale)
        return tlm_core_protocol_error(src, "vector accumulate", len);
    const uint8_t *data = (const uint8_t *)msg + hl;
    size_t plen = len - hl;
    if (h->offset > h->total || plen > h->total - h->offset)
        return tlm_core_protocol_error(src, "vector put", len);
    bool last = h->offset + plen == h->total;
    vstate_t *s = &vstates[src];

    if (h->offset == 0 && last) {
        /* Whole request in one message: check and apply in place. */
        vstate_t one;
        if (vstate_begin(&one, h, acc, scale) != TELEMEM_OK ||
            plen < one.list_bytes || ((uintptr_t)data & 7))
            return tlm_core_protocol_error(src, "vector put", len);
        uintptr_t lo, hi;
        int st = check_list((const uint64_t *)(const void *)data, one.nrecs,
                            one.total - one.list_bytes, es, &lo, &hi);
        if (st == TELEMEM_ERR_PROTOCOL)
            return tlm_core_protocol_error(src, "vector put", len);
        if (st != TELEMEM_OK)
            return tlm_core_refuse(src, h, true, st);
        one.v = (tlm_vec_t){.n = one.nrecs,
                            .recs = (const uint64_t *)(const void *)data};
        apply_data(src, &one, data + one.list_bytes, plen - one.list_bytes);
        if (h->h.flags & TLM_AM_F_ACK)
            tlm_core_send_ack(src, h->h.id, TELEMEM_OK);
        return;
    }
    if (h->offset == 0) {
        if (s->active)
            vstate_reset(src, s);
        if (vstate_begin(s, h, acc, scale) != TELEMEM_OK)
            return tlm_core_protocol_error(src, "vector put", len);
        /* The list is charged before it is allocated (F1). */
        if (tlm_core_reasm_reserve(src, s->list_bytes, "vector put list") !=
            TELEMEM_OK) {
            list_checked(src, h, s, TELEMEM_ERR_PROTOCOL);
        } else {
            s->list = malloc(s->list_bytes ? s->list_bytes : 1);
            if (!s->list) {
                tlm_core_reasm_release(src, s->list_bytes);
                tlm_error("no memory for a vector request's list (%zu "
                          "bytes) from rank %d", s->list_bytes, src);
                list_checked(src, h, s, TELEMEM_ERR_NO_MEMORY);
            }
        }
        s->active = true;
        s->v = (tlm_vec_t){.n = s->nrecs, .recs = s->list};
    } else if (!s->active || s->type != TLM_AM_PUTV || h->offset != s->pos ||
               h->total != s->total) {
        return tlm_core_protocol_error(src, "vector put", len);
    }
    size_t take = 0;
    if (s->pos < s->list_bytes) {
        take = TLM_MIN(plen, s->list_bytes - s->pos);
        if (s->list)
            memcpy((uint8_t *)s->list + s->pos, data, take);
        s->pos += take;
        if (s->pos == s->list_bytes && !s->refused) {
            uintptr_t lo, hi;
            int st = check_list(s->list, s->nrecs, s->total - s->list_bytes,
                                es, &lo, &hi);
            if (st == TELEMEM_ERR_PROTOCOL) {
                tlm_core_protocol_error(src, "vector put list", len);
                st = TELEMEM_ERR_PROTOCOL;
            }
            list_checked(src, h, s, st);
        }
    }
    if (plen > take && !s->refused)
        apply_data(src, s, data + take, plen - take);
    s->pos += plen - take;
    if (last) {
        if (h->h.flags & TLM_AM_F_ACK)
            tlm_core_send_ack(src, h->h.id,
                              s->refused ? s->status : TELEMEM_OK);
        vstate_reset(src, s);
    }
}

typedef struct getv_reply {
    tlm_am_sendop_t op;
    tlm_pack_src_t src;
} getv_reply_t;

static void getv_reply_done(tlm_am_sendop_t *op, int status)
{
    getv_reply_t *g = (getv_reply_t *)(void *)op;
    free(op->owned);
    free(g->src.owned);
    free(g);
}

static void pack_remote_data(void *arg, void *dst, size_t off, size_t len)
{
    tlm_pack_src_t *s = arg;
    tlm_vec_gather(&s->v, TLM_PACK_REMOTE, &s->c, dst, len);
}

/* The whole list of a vector get is here: check it and answer. */
static void answer_getv(int src, uint32_t id, const uint64_t *list,
                        uint64_t *owned, size_t nrecs, size_t data_total)
{
    uintptr_t lo, hi;
    int st = data_total ? check_list(list, nrecs, data_total, 1, &lo, &hi)
                        : TELEMEM_ERR_PROTOCOL;
    if (st != TELEMEM_OK) {
        if (st == TELEMEM_ERR_PROTOCOL)
            tlm_core_protocol_error(src, "vector get list", nrecs * 16);
        else
            tlm_debug("refused a vector get from rank %d", src);
        tlm_core_send_ack(src, id, st);
        free(owned);
        return;
    }
    tlm_am_frag_hdr_t r = {{TLM_AM_GET_REP, 0, 0, id}, 0, data_total, 0};
    tlm_pack_src_t ps;
    memset(&ps, 0, sizeof(ps));
    ps.v = (tlm_vec_t){.n = nrecs, .recs = list};
    if (data_total <= tlm_am_max_payload(src, sizeof(r)) &&
        tlm_am_try_send_pack(src, &r, sizeof(r), data_total, pack_remote_data,
                             &ps) == TELEMEM_OK) {
        free(owned);
        return;
    }
    getv_reply_t *g = malloc(sizeof(*g));
    if (!owned && g) {
        owned = malloc(nrecs * REC_BYTES);
        if (owned)
            memcpy(owned, list, nrecs * REC_BYTES);
    }
    if (!g || !owned) {
        free(g);
        free(owned);
        tlm_error("no memory to answer a vector get from rank %d", src);
        tlm_core_send_ack(src, id, TELEMEM_ERR_NO_MEMORY);
        return;
    }
    g->src = ps;
    g->src.v.recs = owned;
    g->src.owned = owned;
    tlm_am_sendop_init(&g->op, &r, sizeof(r), true, NULL, data_total);
    tlm_am_sendop_set_pack(&g->op, pack_remote_data, &g->src, 1);
    g->op.live = true;
    g->op.live_lo = lo;
    g->op.live_len = hi - lo;
    g->op.done = getv_reply_done;
    tlm_am_post(src, &g->op);
}

static void on_getv_req(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    size_t hl = sizeof(*h) + 8;
    if (len < hl)
        return tlm_core_protocol_error(src, "vector get", len);
    uint64_t data_total;
    memcpy(&data_total, h + 1, 8);
    const uint8_t *data = (const uint8_t *)msg + hl;
    size_t plen = len - hl;
    if (h->offset > h->total || plen > h->total - h->offset ||
        h->total != h->addr * REC_BYTES || h->addr > SIZE_MAX / REC_BYTES)
        return tlm_core_protocol_error(src, "vector get", len);
    bool last = h->offset + plen == h->total;
    vstate_t *s = &vstates[src];
    if (h->offset == 0 && last) {
        answer_getv(src, h->h.id, (const uint64_t *)(const void *)data, NULL,
                    (size_t)h->addr, (size_t)data_total);
        return;
    }
    if (h->offset == 0) {
        if (s->active)
            vstate_reset(src, s);
        if (vstate_begin(s, h, -1, NULL) != TELEMEM_OK)
            return tlm_core_protocol_error(src, "vector get", len);
        s->active = true;
        /* The list is charged before it is allocated (F1). */
        if (tlm_core_reasm_reserve(src, s->list_bytes, "vector get list") !=
            TELEMEM_OK) {
            s->refused = true;
            s->status = TELEMEM_ERR_PROTOCOL;
        } else {
            s->list = malloc(s->list_bytes);
            if (!s->list) {
                tlm_core_reasm_release(src, s->list_bytes);
                tlm_error("no memory for a vector get's list (%zu bytes) "
                          "from rank %d", s->list_bytes, src);
                s->refused = true;
                s->status = TELEMEM_ERR_NO_MEMORY;
            }
        }
    } else if (!s->active || s->type != TLM_AM_GETV_REQ ||
               h->offset != s->pos || h->total != s->total) {
        return tlm_core_protocol_error(src, "vector get", len);
    }
    if (s->list)
        memcpy((uint8_t *)s->list + s->pos, data, plen);
    s->pos += plen;
    if (last) {
        if (s->refused) {
            tlm_core_send_ack(src, h->h.id, s->status);
            vstate_reset(src, s);
            return;
        }
        uint64_t *list = s->list;
        s->list = NULL; /* handed over */
        tlm_core_reasm_release(src, s->list_bytes);
        answer_getv(src, h->h.id, list, list, s->nrecs, (size_t)data_total);
        vstate_reset(src, s);
    }
}

void tlm_core_vector_init(void)
{
    vstates = calloc((size_t)tlm_core.nranks, sizeof(*vstates));
    tlm_am_set_handler(TLM_AM_PUTV, on_putv);
    tlm_am_set_handler(TLM_AM_GETV_REQ, on_getv_req);
}

void tlm_core_vector_fini(void)
{
    for (int r = 0; vstates && r < tlm_core.nranks; r++)
        vstate_reset(r, &vstates[r]);
    free(vstates);
    vstates = NULL;
}

/* ---- public entry points --------------------------------------------------
 */

static tlm_vec_t giov(void *const *remote, const void *const *local, size_t n,
                      size_t bytes)
{
    return (tlm_vec_t){.n = n,
                       .local = (void *const *)(uintptr_t)local,
                       .remote = remote,
                       .bytes = bytes};
}

static tlm_vec_t list_of(const telemem_seg_t *segs, size_t n)
{
    _Static_assert(sizeof(telemem_seg_t) == sizeof(tlm_vec_seg3_t),
                   "telemem_seg_t and tlm_vec_seg3_t differ");
    /* segs NULL with n > 0 reads as an empty giov form: refused by
     * tlm_vec_total() as a NULL array. */
    return (tlm_vec_t){.n = n, .segs = segs};
}

int telemem_put_vector(int rank, void *const *remote_dsts,
                       const void *const *local_srcs, size_t count,
                       size_t bytes)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov(remote_dsts, local_srcs, count, bytes);
    return put_vector("put_vector", TLM_MODE_BLOCK, rank, -1, NULL, &v, NULL);
}

int telemem_put_vector_nb(int rank, void *const *remote_dsts,
                          const void *const *local_srcs, size_t count,
                          size_t bytes, telemem_handle_t *h)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov(remote_dsts, local_srcs, count, bytes);
    return put_vector("put_vector_nb", TLM_MODE_NB, rank, -1, NULL, &v, h);
}

int telemem_put_vector_nbi(int rank, void *const *remote_dsts,
                           const void *const *local_srcs, size_t count,
                           size_t bytes)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov(remote_dsts, local_srcs, count, bytes);
    return put_vector("put_vector_nbi", TLM_MODE_NBI, rank, -1, NULL, &v, NULL);
}

int telemem_get_vector(int rank, void *const *local_dsts,
                       const void *const *remote_srcs, size_t count,
                       size_t bytes)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov((void *const *)(uintptr_t)remote_srcs,
                       (const void *const *)local_dsts, count, bytes);
    return get_vector("get_vector", TLM_MODE_BLOCK, rank, &v, NULL);
}

int telemem_get_vector_nb(int rank, void *const *local_dsts,
                          const void *const *remote_srcs, size_t count,
                          size_t bytes, telemem_handle_t *h)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov((void *const *)(uintptr_t)remote_srcs,
                       (const void *const *)local_dsts, count, bytes);
    return get_vector("get_vector_nb", TLM_MODE_NB, rank, &v, h);
}

int telemem_get_vector_nbi(int rank, void *const *local_dsts,
                           const void *const *remote_srcs, size_t count,
                           size_t bytes)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov((void *const *)(uintptr_t)remote_srcs,
                       (const void *const *)local_dsts, count, bytes);
    return get_vector("get_vector_nbi", TLM_MODE_NBI, rank, &v, NULL);
}

int telemem_put_list(int rank, const telemem_seg_t *segs, size_t count)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return put_vector("put_list", TLM_MODE_BLOCK, rank, -1, NULL, &v, NULL);
}

int telemem_put_list_nb(int rank, const telemem_seg_t *segs, size_t count,
                        telemem_handle_t *h)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return put_vector("put_list_nb", TLM_MODE_NB, rank, -1, NULL, &v, h);
}

int telemem_put_list_nbi(int rank, const telemem_seg_t *segs, size_t count)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return put_vector("put_list_nbi", TLM_MODE_NBI, rank, -1, NULL, &v, NULL);
}

int telemem_get_list(int rank, const telemem_seg_t *segs, size_t count)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return get_vector("get_list", TLM_MODE_BLOCK, rank, &v, NULL);
}

int telemem_get_list_nb(int rank, const telemem_seg_t *segs, size_t count,
                        telemem_handle_t *h)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return get_vector("get_list_nb", TLM_MODE_NB, rank, &v, h);
}

int telemem_get_list_nbi(int rank, const telemem_seg_t *segs, size_t count)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return get_vector("get_list_nbi", TLM_MODE_NBI, rank, &v, NULL);
}

int telemem_acc_vector(int rank, telemem_type_t type, const void *scale,
                       void *const *remote_dsts, const void *const *local_srcs,
                       size_t count, size_t bytes)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov(remote_dsts, local_srcs, count, bytes);
    return put_vector("acc_vector", TLM_MODE_BLOCK, rank,
                      tlm_core_acc_arg(type), scale, &v, NULL);
}

int telemem_acc_vector_nb(int rank, telemem_type_t type, const void *scale,
                          void *const *remote_dsts,
                          const void *const *local_srcs, size_t count,
                          size_t bytes, telemem_handle_t *h)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov(remote_dsts, local_srcs, count, bytes);
    return put_vector("acc_vector_nb", TLM_MODE_NB, rank,
                      tlm_core_acc_arg(type), scale, &v, h);
}

int telemem_acc_vector_nbi(int rank, telemem_type_t type, const void *scale,
                           void *const *remote_dsts,
                           const void *const *local_srcs, size_t count,
                           size_t bytes)
{
    TLM_API_GUARD();
    tlm_vec_t v = giov(remote_dsts, local_srcs, count, bytes);
    return put_vector("acc_vector_nbi", TLM_MODE_NBI, rank,
                      tlm_core_acc_arg(type), scale, &v, NULL);
}

int telemem_acc_list(int rank, telemem_type_t type, const void *scale,
                     const telemem_seg_t *segs, size_t count)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return put_vector("acc_list", TLM_MODE_BLOCK, rank, tlm_core_acc_arg(type),
                      scale, &v, NULL);
}

int telemem_acc_list_nb(int rank, telemem_type_t type, const void *scale,
                        const telemem_seg_t *segs, size_t count,
                        telemem_handle_t *h)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return put_vector("acc_list_nb", TLM_MODE_NB, rank, tlm_core_acc_arg(type),
                      scale, &v, h);
}

int telemem_acc_list_nbi(int rank, telemem_type_t type, const void *scale,
                         const telemem_seg_t *segs, size_t count)
{
    TLM_API_GUARD();
    tlm_vec_t v = list_of(segs, count);
    return put_vector("acc_list_nbi", TLM_MODE_NBI, rank,
                      tlm_core_acc_arg(type), scale, &v, NULL);
}

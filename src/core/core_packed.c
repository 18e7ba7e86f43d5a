/* core_packed.c - what strided, vector and accumulate transfers share at
 * the initiator: the pack callbacks that write a patch or a list straight
 * into transport buffers, the accumulate header part (scale) both write and
 * read, and the blocking / nb / nbi front end that sends such a packed
 * stream. */
#include <stdlib.h>
#include <string.h>

#include "core/core_direct.h"
#include "core/core_engine.h"
#include "core/core_packed.h"

void tlm_core_pack_strided(void *arg, void *dst, size_t off, size_t len)
{
    tlm_pack_src_t *s = arg;
    tlm_pack(&s->d, s->side, s->base, off, dst, len);
}

/* A vector put's stream: the 16-byte records of the remote list, then the
 * data gathered from the local side.  Fragments come in stream order. */
void tlm_core_pack_vector(void *arg, void *dst, size_t off, size_t len)
{
    tlm_pack_src_t *s = arg;
    uint8_t *d = dst;
    while (len && off < s->list_bytes) {
        size_t i = off / 16, in = off % 16;
        void *loc, *rem;
        size_t b;
        tlm_vec_seg(&s->v, i, &loc, &rem, &b);
        uint64_t rec[2] = {(uintptr_t)rem, b};
        size_t n = TLM_MIN(16 - in, len);
        memcpy(d, (const uint8_t *)rec + in, n);
        d += n;
        off += n;
        len -= n;
    }
    if (len)
        tlm_vec_gather(&s->v, s->side, &s->c, d, len);
}

int tlm_core_acc_arg(telemem_type_t t)
{
    return (int)t < 0 ? TLM_ACC_NTYPES : (int)t;
}

int tlm_core_check_acc(const char *what, int type, const void *scale,
                       size_t len)
{
    size_t es = tlm_acc_elem_size(type);
    if (!es || !scale || len % es) {
        tlm_error("%s: %s", what, !es ? "unknown element type"
                  : !scale ? "scale is NULL"
                           : "length is not a multiple of the element size");
        return TELEMEM_ERR_INVALID_ARG;
    }
    return TELEMEM_OK;
}

uint32_t tlm_core_acc_hdr_put(void *hdr, size_t *hl, int acc,
                              const void *scale)
{
    if (acc < 0)
        return 1;
    size_t es = tlm_acc_elem_size(acc);
    uint8_t *at = (uint8_t *)hdr + *hl;
    memset(at, 0, TLM_ACC_SCALE_BYTES);
    memcpy(at, scale, es);
    *hl += TLM_ACC_SCALE_BYTES;
    return (uint32_t)es;
}

const void *tlm_core_acc_hdr_get(int acc, const void *msg, size_t len,
                                 size_t *hl, size_t *es)
{
    *es = 1;
    if (acc < 0)
        return NULL;
    *es = tlm_acc_elem_size(acc);
    if (!*es || len < *hl + TLM_ACC_SCALE_BYTES)
        return NULL;
    const void *scale = (const uint8_t *)msg + *hl;
    *hl += TLM_ACC_SCALE_BYTES;
    return scale;
}

static void put_packed_nbi_done(tlm_am_sendop_t *op, int status)
{
    tlm_pack_src_t *src = op->pack_arg;
    if (status != TELEMEM_OK) {
        int rank = (int)(intptr_t)op->done_arg;
        if (tlm_core.peers && tlm_core.peers[rank].error == TELEMEM_OK)
            tlm_core.peers[rank].error = status;
    }
    free(src->owned);
    free(op); /* src lives in the same allocation */
}

static void put_packed_nb_sent(tlm_am_sendop_t *sop, int status)
{
    if (status != TELEMEM_OK)
        tlm_core_op_complete((uint32_t)(uintptr_t)sop->done_arg, status);
}

int tlm_core_put_packed(int rank, int mode, void *hdr, size_t hdr_len,
                        size_t total, uint32_t align, tlm_am_pack_fn_t pack,
                        tlm_pack_src_t *src, telemem_handle_t *h)
{
    tlm_am_frag_hdr_t *fh = hdr;
    size_t room = tlm_am_max_payload(rank, hdr_len);
    room -= room % align;
    if (tlm_core.peers[rank].direct_busy) { /* issue order: core_direct.c */
        int rc = tlm_core_direct_settle(rank);
        if (rc != TELEMEM_OK)
            return rc;
    }
    TLM_RLX_SET(tlm_core.peers[rank].unflushed,
                tlm_core.peers[rank].unflushed + 1);
    if (mode == TLM_MODE_BLOCK) {
        if (total <= room) {
            int rc = tlm_am_try_send_pack(rank, hdr, hdr_len, total, pack,
                                          src);
            if (rc != TELEMEM_ERR_AGAIN)
                return rc;
        }
        tlm_am_sendop_t op;
        tlm_am_sendop_init(&op, hdr, hdr_len, true, NULL, total);
        tlm_am_sendop_set_pack(&op, pack, src, align);
        tlm_am_post(rank, &op);
        return tlm_core_wait_sent(rank, &op);
    }
    if (mode == TLM_MODE_NB) {
        uint32_t idx;
        int rc = tlm_core_op_alloc(&idx);
        if (rc != TELEMEM_OK)
            return rc;
        tlm_op_t *op = tlm_core_op(idx);
        op->kind = TLM_OP_PUT;
        op->rank = rank;
        op->len = total;
        op->src = *src; /* the op owns src->owned from here on */
        fh->h.flags |= TLM_AM_F_ACK;
        fh->h.id = tlm_core_wire_id(idx);
        if (total <= room) {
            rc = tlm_am_try_send_pack(rank, hdr, hdr_len, total, pack,
                                      &op->src);
            if (rc == TELEMEM_OK)
                return tlm_core_new_handle(idx, h);
            if (rc != TELEMEM_ERR_AGAIN) {
                free(op->src.owned);
                op->src.owned = NULL;
                tlm_core_op_free(idx);
                return rc;
            }
        }
        tlm_am_sendop_init(&op->sendop, hdr, hdr_len, true, NULL, total);
        tlm_am_sendop_set_pack(&op->sendop, pack, &op->src, align);
        op->sendop.done = put_packed_nb_sent;
        op->sendop.done_arg = (void *)(uintptr_t)idx;
        tlm_am_post(rank, &op->sendop);
        return tlm_core_new_handle(idx, h);
    }
    /* nbi */
    if (total <= room) {
        int rc = tlm_am_try_send_pack(rank, hdr, hdr_len, total, pack, src);
        if (rc != TELEMEM_ERR_AGAIN) {
            free(src->owned);
            return rc;
        }
    }
    struct nbi_op {
        tlm_am_sendop_t op;
        tlm_pack_src_t src;
    } *q = malloc(sizeof(*q));
    if (!q) {
        free(src->owned);
        tlm_error("no memory to queue a %zu-byte transfer to rank %d", total,
                  rank);
        return TELEMEM_ERR_NO_MEMORY;
    }
    q->src = *src;
    tlm_am_sendop_init(&q->op, hdr, hdr_len, true, NULL, total);
    tlm_am_sendop_set_pack(&q->op, pack, &q->src, align);
    q->op.done = put_packed_nbi_done;
    q->op.done_arg = (void *)(intptr_t)rank;
    return tlm_am_post(rank, &q->op);
}

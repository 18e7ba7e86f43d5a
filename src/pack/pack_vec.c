/* pack_vec.c - vector (address list) transfers: total, gather, scatter,
 * scatter-accumulate through a cursor, and the wire list of records. */
#include <string.h>

#include "pack/pack.h"

/* Segment i's address on one side and its length; reads only the arrays
 * that side needs (a giov list may come with one side only). */
static inline void seg_side(const tlm_vec_t *v, int side, size_t i, char **addr,
                            size_t *bytes)
{
    if (v->recs) {
        *addr =
            side == TLM_PACK_REMOTE ? (char *)(uintptr_t)v->recs[2 * i] : NULL;
        *bytes = (size_t)v->recs[2 * i + 1];
    } else if (v->segs) {
        const tlm_vec_seg3_t *s = (const tlm_vec_seg3_t *)v->segs + i;
        *addr = side == TLM_PACK_REMOTE ? s->remote : s->local;
        *bytes = s->bytes;
    } else {
        *addr = side == TLM_PACK_REMOTE ? v->remote[i] : v->local[i];
        *bytes = v->bytes;
    }
}

/* A non-empty range [p, p + n) that does not wrap the address space. */
static inline bool range_ok(uintptr_t p, size_t n)
{
    return p != 0 && n - 1 <= UINTPTR_MAX - p;
}

int tlm_vec_total(const tlm_vec_t *v, size_t *total)
{
    size_t sum = 0;
    if (!v || !total)
        return -1;
    if (v->n == 0) {
        *total = 0;
        return 0;
    }
    if (v->recs) {
        for (size_t i = 0; i < v->n; i++) {
            uint64_t a = v->recs[2 * i], n = v->recs[2 * i + 1];
            if (n == 0)
                continue;
            if ((uint64_t)(size_t)n != n || (uint64_t)(uintptr_t)a != a ||
                !range_ok((uintptr_t)a, (size_t)n) ||
                __builtin_add_overflow(sum, (size_t)n, &sum))
                return -1;
        }
    } else if (v->segs) {
        const tlm_vec_seg3_t *s = v->segs;
        for (size_t i = 0; i < v->n; i++) {
            if (s[i].bytes == 0)
                continue;
            if (!range_ok((uintptr_t)s[i].local, s[i].bytes) ||
                !range_ok((uintptr_t)s[i].remote, s[i].bytes) ||
                __builtin_add_overflow(sum, s[i].bytes, &sum))
                return -1;
        }
    } else {
        if (!v->local || !v->remote)
            return -1;
        if (v->bytes > 0) {
            for (size_t i = 0; i < v->n; i++)
                if (!range_ok((uintptr_t)v->local[i], v->bytes) ||
                    !range_ok((uintptr_t)v->remote[i], v->bytes))
                    return -1;
            if (__builtin_mul_overflow(v->n, v->bytes, &sum))
                return -1;
        }
    }
    *total = sum;
    return 0;
}

/* The walk shared by gather, scatter and scatter-acc: pieces of at most
 * one segment each, in list order, skipping empty segments.  The cursor
 * moves to the next segment as soon as one is finished.  It stops at the
 * list's end even if len is not used up (the caller's bug). */
enum { VEC_GATHER, VEC_SCATTER, VEC_ACC };

static inline __attribute__((always_inline)) void
vec_walk(const tlm_vec_t *v, int side, tlm_vec_cursor_t *c, char *buf,
         size_t len, int mode, int type, const void *scale)
{
    size_t esize = mode == VEC_ACC ? tlm_acc_elem_size(type) : 1;
    if (esize == 0)
        return;
    while (len > 0 && c->seg < v->n) {
        char *a;
        size_t bytes;
        seg_side(v, side, c->seg, &a, &bytes);
        if (c->off >= bytes) {
            c->seg++;
            c->off = 0;
            continue;
        }
        size_t n = bytes - c->off < len ? bytes - c->off : len;
        if (mode == VEC_GATHER)
            memcpy(buf, a + c->off, n);
        else if (mode == VEC_SCATTER)
            memcpy(a + c->off, buf, n);
        else
            tlm_acc_apply(type, a + c->off, buf, n / esize, scale);
        buf += n;
        len -= n;
        c->off += n;
        if (c->off == bytes) {
            c->seg++;
            c->off = 0;
        }
    }
}

void tlm_vec_gather(const tlm_vec_t *v, int side, tlm_vec_cursor_t *c,
                    void *dst, size_t len)
{
    vec_walk(v, side, c, dst, len, VEC_GATHER, 0, NULL);
}

void tlm_vec_scatter(const tlm_vec_t *v, int side, tlm_vec_cursor_t *c,
                     const void *src, size_t len)
{
    /* src is only read in this mode. */
    vec_walk(v, side, c, (char *)(uintptr_t)src, len, VEC_SCATTER, 0, NULL);
}

void tlm_vec_scatter_acc(const tlm_vec_t *v, int side, tlm_vec_cursor_t *c,
                         const void *src, size_t len, int type,
                         const void *scale)
{
    vec_walk(v, side, c, (char *)(uintptr_t)src, len, VEC_ACC, type, scale);
}

size_t tlm_vec_encode_list(const tlm_vec_t *v, tlm_vec_cursor_t *c, void *buf,
                           size_t room)
{
    unsigned char *p = buf;
    size_t used = 0;
    while (c->seg < v->n && room - used >= 16) {
        char *a;
        size_t bytes;
        seg_side(v, TLM_PACK_REMOTE, c->seg, &a, &bytes);
        uint64_t rec[2] = {(uint64_t)(uintptr_t)a, (uint64_t)bytes};
        memcpy(p + used, rec, sizeof rec);
        used += 16;
        c->seg++;
    }
    c->off = 0;
    return used;
}

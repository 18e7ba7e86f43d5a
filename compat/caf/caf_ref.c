/* caf_ref.c - reference chains of the *_by_ref calls (derived-type
 * components, allocatable and pointer components, array sections of
 * them): their wire form, and the walk that the image owning the memory
 * makes through its own objects, inside an active-message handler (or
 * directly when the image is this one), to read or write the elements
 * the chain names.  Owning image's side only; caf_byref.c is the
 * caller's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"
#include "caf_ref.h"

/* ---- wire form ---- */

static size_t ref_ndim(const tlm_caf_ref_t *r)
{
    size_t d = 0;

    while (d < TLM_CAF_MAX_DIM && r->u.a.mode[d] != TLM_CAF_ARR_NONE)
        d++;
    return d;
}

static int64_t vec_at(const void *v, int kind, size_t k)
{
    switch (kind) {
    case 1: return ((const int8_t *)v)[k];
    case 2: return ((const int16_t *)v)[k];
    case 4: return ((const int32_t *)v)[k];
    default: return ((const int64_t *)v)[k];
    }
}

/* Append n int64 words to the buffer (NULL: only count). */
static void put_words(int64_t **p, const int64_t *w, size_t n, size_t *len)
{
    if (*p) {
        memcpy(*p, w, n * sizeof *w);
        *p += n;
    }
    *len += n;
}

/* Encode refs as int64 words: [nrefs] then per ref [type, item_size,
 * offset, token_offset] or [type, item_size, ndim] and per dim [mode,
 * start, end, stride] or [mode, nvec, values...].  Returns the words
 * used; out may be NULL to count. */
size_t tlm_caf_ref_encode(const tlm_caf_ref_t *refs, int64_t *out)
{
    const tlm_caf_ref_t *r;
    int64_t *p = out, w[4];
    size_t len = 0, n = 0, d, k;

    for (r = refs; r; r = r->next)
        n++;
    w[0] = (int64_t)n;
    put_words(&p, w, 1, &len);
    for (r = refs; r; r = r->next) {
        w[0] = r->type;
        w[1] = (int64_t)r->item_size;
        if (r->type == TLM_CAF_REF_COMPONENT) {
            w[2] = r->u.c.offset;
            w[3] = r->u.c.caf_token_offset;
            put_words(&p, w, 4, &len);
            continue;
        }
        w[2] = (int64_t)ref_ndim(r);
        put_words(&p, w, 3, &len);
        for (d = 0; d < ref_ndim(r); d++) {
            w[0] = r->u.a.mode[d];
            if (r->u.a.mode[d] == TLM_CAF_ARR_VECTOR) {
                w[1] = (int64_t)r->u.a.dim[d].v.nvec;
                put_words(&p, w, 2, &len);
                for (k = 0; k < r->u.a.dim[d].v.nvec; k++) {
                    w[0] = vec_at(r->u.a.dim[d].v.vector,
                                  r->u.a.dim[d].v.kind, k);
                    put_words(&p, w, 1, &len);
                }
                continue;
            }
            w[1] = r->u.a.dim[d].s.start;
            w[2] = r->u.a.dim[d].s.end;
            w[3] = r->u.a.dim[d].s.stride;
            put_words(&p, w, 4, &len);
        }
    }
    return len;
}

size_t tlm_caf_ref_words(const int64_t *refs)
{
    int64_t nrefs = refs[0], k, d;
    const int64_t *p = refs + 1;

    for (k = 0; k < nrefs; k++) {
        if (p[0] == TLM_CAF_REF_COMPONENT) {
            p += 4;
            continue;
        }
        d = p[2];
        p += 3;
        while (d-- > 0)
            p += p[0] == TLM_CAF_ARR_VECTOR ? 2 + p[1] : 4;
    }
    return (size_t)(p - refs);
}

/* ---- the walk ---- */

typedef struct {
    char **at;               /* current positions */
    size_t n, cap;
    tlm_caf_rshape_t shape;  /* of the result */
    char err[160];
} walk_t;

static int grow(walk_t *w, char ***next, size_t *cap, size_t want)
{
    if (want <= *cap)
        return 0;
    *cap = want > 2 * *cap ? want : 2 * *cap;
    *next = realloc(*next, *cap * sizeof(char *));
    if (!*next) {
        snprintf(w->err, sizeof w->err, "out of memory (%zu elements)",
                 want);
        return -1;
    }
    return 0;
}

/* The subscripts of one dimension as a list, Fortran indices for a
 * descriptor, element offsets for a static array.  Returns the count, or
 * -1 (message in w). */
static long dim_list(walk_t *w, const int64_t **pp, const tlm_gfc_dim_t *dd,
                     int64_t **out)
{
    const int64_t *p = *pp;
    int mode = (int)p[0];
    int64_t lo, hi, st, k, n;

    if (mode == TLM_CAF_ARR_VECTOR) {
        n = p[1];
        *out = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
        if (!*out)
            return -1;
        memcpy(*out, p + 2, (size_t)n * sizeof(int64_t));
        *pp = p + 2 + n;
        return (long)n;
    }
    lo = p[1];
    hi = p[2];
    st = p[3] ? p[3] : 1;
    *pp = p + 4;
    if (dd && (mode == TLM_CAF_ARR_FULL || mode == TLM_CAF_ARR_OPEN_START))
        lo = dd->lbound;
    if (dd && (mode == TLM_CAF_ARR_FULL || mode == TLM_CAF_ARR_OPEN_END))
        hi = dd->ubound;
    if (mode == TLM_CAF_ARR_SINGLE)
        hi = lo;
    n = (hi - lo + st) / st;
    if (n < 0)
        n = 0;
    *out = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!*out) {
        snprintf(w->err, sizeof w->err, "out of memory");
        return -1;
    }
    for (k = 0; k < n; k++)
        (*out)[k] = lo + k * st;
    return (long)n;
}

/* Apply an array reference to every position. */
static int walk_array(walk_t *w, const int64_t **pp, int type,
                      size_t item, bool top, tlm_caf_token_t *t,
                      bool presence)
{
    int64_t *sub[TLM_CAF_MAX_DIM] = {0};
    size_t cnt[TLM_CAF_MAX_DIM], nd = (size_t)(*pp)[0], i, d, cap = 0, m = 0;
    char **next = NULL;
    int rc = -1;

    *pp += 1;
    for (i = 0; i < w->n; i++) {
        const tlm_gfc_desc_t *dd = NULL;
        char *base = w->at[i];
        size_t idx[TLM_CAF_MAX_DIM] = {0}, total = 1;
        const int64_t *q = *pp;
        if (type == TLM_CAF_REF_ARRAY) {
            dd = top && t->desc ? t->desc : (const tlm_gfc_desc_t *)base;
            base = dd->base_addr;
            if (!base) {
                snprintf(w->err, sizeof w->err,
                         "the allocatable array is not allocated");
                rc = presence ? 1 : -1;
                goto out;
            }
        }
        for (d = 0; d < nd; d++) {
            int mode = (int)q[0];
            long c = dim_list(w, &q, dd ? &dd->dim[d] : NULL, &sub[d]);
            if (c < 0) {
                rc = -1;
                goto out;
            }
            cnt[d] = (size_t)c;
            total *= cnt[d];
            if (i == 0 && mode != TLM_CAF_ARR_SINGLE &&
                w->shape.rank < TLM_CAF_MAX_DIM)
                w->shape.ext[w->shape.rank++] = cnt[d];
        }
        if (i + 1 == w->n)
            *pp = q;
        if (grow(w, &next, &cap, m + total) != 0)
            goto out;
        for (size_t k = 0; k < total; k++) {
            ptrdiff_t off = 0;
            for (d = 0; d < nd; d++)
                off += dd ? (sub[d][idx[d]] - dd->dim[d].lbound) *
                                dd->dim[d].stride
                          : sub[d][idx[d]];
            next[m++] = base + off * (ptrdiff_t)item;
            for (d = 0; d < nd; d++) {
                if (++idx[d] < cnt[d])
                    break;
                idx[d] = 0;
            }
        }
        for (d = 0; d < nd; d++) {
            free(sub[d]);
            sub[d] = NULL;
        }
    }
    if (w->n == 0)
        for (d = 0; d < nd; d++) /* skip the words */
            *pp += (*pp)[0] == TLM_CAF_ARR_VECTOR ? 2 + (*pp)[1] : 4;
    free(w->at);
    w->at = next;
    w->n = m;
    w->cap = cap;
    next = NULL;
    rc = 0;
out:
    for (d = 0; d < TLM_CAF_MAX_DIM; d++)
        free(sub[d]);
    free(next);
    return rc;
}

/* Apply a component reference; next_is_array: the component is the
 * descriptor the next reference indexes. */
static int walk_component(walk_t *w, int64_t offset, int64_t tok_off,
                          bool next_is_array, bool presence_last)
{
    size_t i;

    for (i = 0; i < w->n; i++) {
        char *c = w->at[i] + offset;
        if (tok_off != 0 && !next_is_array) {
            char *p = *(char **)c;
            if (!p) {
                if (presence_last)
                    return 1;
                snprintf(w->err, sizeof w->err,
                         "the allocatable component is not allocated");
                return -1;
            }
            c = p;
        }
        w->at[i] = c;
    }
    return 0;
}

/* Walk the encoded chain p from token t; on success w->at lists the
 * elements.  presence: stop at the last reference and answer whether it
 * is allocated (returns 1 for "not allocated"). */
static int walk_chain(walk_t *w, tlm_caf_token_t *t, const int64_t *p,
                      bool presence)
{
    int64_t nrefs = *p++, k;
    int rc;

    w->cap = 1;
    w->n = 1;
    w->at = malloc(sizeof(char *));
    if (!w->at) {
        snprintf(w->err, sizeof w->err, "out of memory");
        return -1;
    }
    w->at[0] = t->mem;
    for (k = 0; k < nrefs; k++) {
        int type = (int)p[0];
        size_t item = (size_t)p[1];
        w->shape.elem = item;
        if (type == TLM_CAF_REF_COMPONENT) {
            const int64_t *nx = p + 4;
            bool next_arr = k + 1 < nrefs && nx[0] == TLM_CAF_REF_ARRAY;
            rc = walk_component(w, p[2], p[3], next_arr,
                                presence && k + 1 == nrefs);
            p = nx;
        } else {
            p += 2;
            rc = walk_array(w, &p, type, item, k == 0, t, presence);
        }
        if (rc != 0)
            return rc;
        if (presence && k + 1 == nrefs && type == TLM_CAF_REF_ARRAY)
            return 0;
    }
    return 0;
}

/* ---- the owning image ---- */

int tlm_caf_ref_apply(tlm_caf_token_t *t, int op, const int64_t *refs,
                      const char *data, size_t count, tlm_caf_rshape_t *sh,
                      char **out, char *err, size_t errcap)
{
    walk_t w;
    size_t i;
    int rc;

    memset(&w, 0, sizeof w);
    if (!t || !t->mem) {
        snprintf(err, errcap, "the coarray is not allocated there");
        return TLM_CAF_REF_ERR;
    }
    rc = walk_chain(&w, t, refs, op == TLM_CAF_REF_OP_PRESENT);
    if (op == TLM_CAF_REF_OP_PRESENT) {
        if (rc < 0)
            snprintf(err, errcap, "%s", w.err);
        free(w.at);
        return rc == 0 ? TLM_CAF_REF_OK : rc == 1 ? TLM_CAF_REF_ABSENT
                                                  : TLM_CAF_REF_ERR;
    }
    if (rc != 0) {
        snprintf(err, errcap, "%s", w.err);
        free(w.at);
        return TLM_CAF_REF_ERR;
    }
    *sh = w.shape;
    sh->count = w.n;
    if (op == TLM_CAF_REF_OP_GET) {
        *out = malloc(w.n * w.shape.elem + 1);
        if (*out)
            for (i = 0; i < w.n; i++)
                memcpy(*out + i * w.shape.elem, w.at[i], w.shape.elem);
    } else if (count >= w.n || count == 1) {
        /* More elements than the reference names (a non-conforming
         * assignment OpenCoarrays' tests make): the first ones. */
        for (i = 0; i < w.n; i++)
            memmove(w.at[i], data + (count == 1 ? 0 : i * w.shape.elem),
                    w.shape.elem);
    } else {
        snprintf(err, errcap, "%zu elements into a reference to %zu", count,
                 w.n);
        free(w.at);
        return TLM_CAF_REF_ERR;
    }
    free(w.at);
    if (op == TLM_CAF_REF_OP_GET && !*out) {
        snprintf(err, errcap, "out of memory");
        return TLM_CAF_REF_ERR;
    }
    return TLM_CAF_REF_OK;
}

/* ---- the caller's shortcut ---- */

int tlm_caf_ref_local(tlm_caf_token_t *t, const int64_t *refs,
                      char ***addrs, tlm_caf_rshape_t *sh)
{
    const int64_t *p = refs + 1;
    int64_t k, d;
    walk_t w;

    /* Only chains through this image's own layout: no allocatable or
     * pointer component (those hold addresses of the owning image). */
    for (k = 0; k < refs[0]; k++) {
        if (p[0] == TLM_CAF_REF_COMPONENT) {
            if (p[3] != 0)
                return -1;
            p += 4;
            continue;
        }
        d = p[2];
        p += 3;
        while (d-- > 0)
            p += p[0] == TLM_CAF_ARR_VECTOR ? 2 + p[1] : 4;
    }
    if (!t || !t->mem || !t->bases)
        return -1;
    memset(&w, 0, sizeof w);
    if (walk_chain(&w, t, refs, false) != 0) {
        free(w.at);
        return -1;
    }
    *sh = w.shape;
    sh->count = w.n;
    *addrs = w.at;
    return 0;
}

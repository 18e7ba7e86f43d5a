/* caf_send.c - coindexed assignments through a token: caf_send (a(...)[j]
 * = b), caf_get (b = a(...)[j]) and caf_sendget (a(...)[j] = c(...)[k]),
 * with vector subscripts, type and kind conversion, scalar broadcast and
 * overlapping sections on this image (always through a buffer). */
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

/* The far side of a transfer: where its elements are on which rank. */
typedef struct {
    int rank, image;
    char *base;           /* address of the first element there */
    tlm_caf_shape_t s;    /* its shape (no vector subscript) */
    char **addrs;         /* vector subscripts: each element's address */
    int type, kind;
} remote_t;

static int64_t vec_index(const tlm_caf_vector_t *v, size_t k)
{
    switch (v->u.v.kind) {
    case 1: return ((const int8_t *)v->u.v.vector)[k];
    case 2: return ((const int16_t *)v->u.v.vector)[k];
    case 4: return ((const int32_t *)v->u.v.vector)[k];
    default: return ((const int64_t *)v->u.v.vector)[k];
    }
}

/* Every element's address of a vector-subscripted section of (base, d),
 * in array element order. */
static int vector_addrs(remote_t *r, const tlm_gfc_desc_t *d,
                        const tlm_caf_vector_t *vec)
{
    int rank = TLM_GFC_RANK(d), i;
    size_t n[TLM_CAF_MAX_DIM], idx[TLM_CAF_MAX_DIM] = {0}, count = 1, k;
    ptrdiff_t span = (ptrdiff_t)d->dtype.elem_len;

    for (i = 0; i < rank; i++) {
        if (vec[i].nvec) {
            n[i] = vec[i].nvec;
        } else {
            ptrdiff_t lo = vec[i].u.triplet.lower_bound,
                      hi = vec[i].u.triplet.upper_bound,
                      st = vec[i].u.triplet.stride;
            ptrdiff_t e = st ? (hi - lo + st) / st : 0;
            n[i] = e > 0 ? (size_t)e : 0;
        }
        count *= n[i];
    }
    tlm_caf_shape_contig(&r->s, count, d->dtype.elem_len);
    r->addrs = malloc((count ? count : 1) * sizeof(char *));
    if (!r->addrs)
        return TELEMEM_ERR_NO_MEMORY;
    for (k = 0; k < count; k++) {
        ptrdiff_t off = 0;
        for (i = 0; i < rank; i++) {
            int64_t sub = vec[i].nvec
                              ? vec_index(&vec[i], idx[i])
                              : vec[i].u.triplet.lower_bound +
                                    (ptrdiff_t)idx[i] *
                                        vec[i].u.triplet.stride;
            off += (sub - d->dim[i].lbound) * d->dim[i].stride * span;
        }
        r->addrs[k] = r->base + off;
        for (i = 0; i < rank; i++) {
            if (++idx[i] < n[i])
                break;
            idx[i] = 0;
        }
    }
    return TELEMEM_OK;
}

/* Find the far side; reports and returns 1 on error. */
static int remote_setup(remote_t *r, tlm_caf_token_p token, size_t offset,
                        int image, const tlm_gfc_desc_t *d,
                        const tlm_caf_vector_t *vec, int kind, int *stat,
                        const char *what)
{
    tlm_caf_token_t *t = token;
    int rc;

    memset(r, 0, sizeof *r);
    r->image = image;
    r->rank = tlm_caf_rank_of(image);
    r->type = TLM_GFC_TYPE(d);
    r->kind = kind;
    if (r->rank < 0) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s: image index %d out of range [1, %d]", what, image,
                       tlm_caf.team->size);
        return 1;
    }
    if (tlm_caf_state(r->rank) == TLM_CAF_FAILED) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_FAILED_IMAGE,
                       "%s image %d: the image has failed", what, image);
        return 1;
    }
    if (!t || !t->mem) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s image %d: the coarray is not allocated", what,
                       image);
        return 1;
    }
    r->base = tlm_caf_remote(t, r->rank, (char *)t->mem + offset);
    if (!r->base) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s image %d: this coarray lives on its own image "
                       "only", what, image);
        return 1;
    }
    if (!vec) {
        tlm_caf_shape_of(d, &r->s);
        return 0;
    }
    rc = vector_addrs(r, d, vec);
    if (!tlm_caf_check(rc, stat, NULL, 0, what, image))
        return 0;
    free(r->addrs);
    r->addrs = NULL;
    return 1;
}

static int remote_write(remote_t *r, const char *buf)
{
    size_t k, e = r->s.elem;

    if (r->addrs) {
        if (r->rank == tlm_caf.me) {
            for (k = 0; k < r->s.count; k++)
                memcpy(r->addrs[k], buf + k * e, e);
            return TELEMEM_OK;
        }
        {
            const void **src = malloc((r->s.count + 1) * sizeof(void *));
            int rc;
            if (!src)
                return TELEMEM_ERR_NO_MEMORY;
            for (k = 0; k < r->s.count; k++)
                src[k] = buf + k * e;
            rc = telemem_put_vector(r->rank, (void *const *)r->addrs,
                                    (const void *const *)src, r->s.count, e);
            free(src);
            return rc;
        }
    }
    if (r->rank == tlm_caf.me) {
        tlm_caf_unpack(r->base, &r->s, buf);
        return TELEMEM_OK;
    }
    return tlm_caf_put_shape(r->rank, r->base, &r->s, buf, NULL);
}

static int remote_read(remote_t *r, char *buf)
{
    size_t k, e = r->s.elem;

    if (r->addrs) {
        if (r->rank == tlm_caf.me) {
            for (k = 0; k < r->s.count; k++)
                memcpy(buf + k * e, r->addrs[k], e);
            return TELEMEM_OK;
        }
        {
            void **dst = malloc((r->s.count + 1) * sizeof(void *));
            int rc;
            if (!dst)
                return TELEMEM_ERR_NO_MEMORY;
            for (k = 0; k < r->s.count; k++)
                dst[k] = buf + k * e;
            rc = telemem_get_vector(r->rank, dst,
                                    (const void *const *)r->addrs,
                                    r->s.count, e);
            free(dst);
            return rc;
        }
    }
    if (r->rank == tlm_caf.me) {
        tlm_caf_pack(buf, r->base, &r->s);
        return TELEMEM_OK;
    }
    return tlm_caf_get_shape(r->rank, buf, NULL, r->base, &r->s);
}

/* The local data (base, ls, type) as count contiguous elements of r's
 * type in a new buffer (a scalar repeated), or NULL. */
static char *local_to_remote_type(const remote_t *r, const char *base,
                                  const tlm_caf_shape_t *ls, int type,
                                  int kind)
{
    size_t count = r->s.count;
    char *packed = malloc(ls->count * ls->elem + 1), *out;

    if (!packed)
        return NULL;
    tlm_caf_pack(packed, base, ls);
    if (!tlm_caf_needs_convert(r->type, r->kind, r->s.elem, type, kind,
                               ls->elem) && ls->count == count)
        return packed;
    out = malloc(count * r->s.elem + 1);
    if (out && tlm_caf_convert_n(out, r->type, r->kind, r->s.elem, packed,
                                 type, kind, ls->elem, count,
                                 ls->count) != 0) {
        free(out);
        out = NULL;
    }
    free(packed);
    return out;
}

/* Write the local (base, ls) to r; reports errors. */
static void send_local(remote_t *r, const char *base,
                       const tlm_caf_shape_t *ls, int type, int kind,
                       int *stat, const char *what)
{
    int rc;
    char *buf;

    if (ls->count != r->s.count && ls->count != 1) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s image %d: %zu elements into a section of %zu",
                       what, r->image, ls->count, r->s.count);
        return;
    }
    if (r->s.count == 0)
        return;
    if (!r->addrs && r->rank != tlm_caf.me &&
        !tlm_caf_needs_convert(r->type, r->kind, r->s.elem, type, kind,
                               ls->elem) &&
        tlm_caf_same_extents(ls, &r->s)) {
        rc = tlm_caf_put_shape(r->rank, r->base, &r->s, base, ls);
        tlm_caf_check(rc, stat, NULL, 0, what, r->image);
        return;
    }
    buf = local_to_remote_type(r, base, ls, type, kind);
    if (!buf) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s image %d: cannot convert type %d kind %d to type "
                       "%d kind %d (or out of memory)", what, r->image, type,
                       kind, r->type, r->kind);
        return;
    }
    rc = remote_write(r, buf);
    free(buf);
    tlm_caf_check(rc, stat, NULL, 0, what, r->image);
}

void _gfortran_caf_send(tlm_caf_token_p token, size_t offset,
                        int image_index, tlm_gfc_desc_t *dst,
                        tlm_caf_vector_t *dst_vector, tlm_gfc_desc_t *src,
                        int dst_kind, int src_kind, bool may_require_tmp,
                        int *stat, void *team)
{
    remote_t r;
    tlm_caf_shape_t ls;

    (void)may_require_tmp;
    (void)team;
    tlm_caf_ok(stat);
    if (remote_setup(&r, token, offset, image_index, dst, dst_vector,
                     dst_kind, stat, "send to"))
        return;
    tlm_caf_shape_of(src, &ls);
    send_local(&r, src->base_addr, &ls, TLM_GFC_TYPE(src), src_kind, stat,
               "send to");
    free(r.addrs);
}

/* Read r into the local (base, ls), converting. */
static void get_local(remote_t *r, char *base, const tlm_caf_shape_t *ls,
                      int type, int kind, int *stat, const char *what)
{
    int rc;
    char *buf, *conv = NULL;

    if (ls->count != r->s.count) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s image %d: a section of %zu elements into %zu",
                       what, r->image, r->s.count, ls->count);
        return;
    }
    if (r->s.count == 0)
        return;
    if (!r->addrs && r->rank != tlm_caf.me &&
        !tlm_caf_needs_convert(type, kind, ls->elem, r->type, r->kind,
                               r->s.elem) &&
        tlm_caf_same_extents(ls, &r->s)) {
        rc = tlm_caf_get_shape(r->rank, base, ls, r->base, &r->s);
        tlm_caf_check(rc, stat, NULL, 0, what, r->image);
        return;
    }
    buf = malloc(r->s.count * r->s.elem + 1);
    rc = buf ? remote_read(r, buf) : TELEMEM_ERR_NO_MEMORY;
    if (rc == TELEMEM_OK &&
        tlm_caf_needs_convert(type, kind, ls->elem, r->type, r->kind,
                              r->s.elem)) {
        conv = malloc(ls->count * ls->elem + 1);
        if (!conv || tlm_caf_convert_n(conv, type, kind, ls->elem, buf,
                                       r->type, r->kind, r->s.elem,
                                       ls->count, ls->count) != 0) {
            free(conv);
            free(buf);
            tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                           "%s image %d: cannot convert type %d kind %d to "
                           "type %d kind %d (or out of memory)", what,
                           r->image, r->type, r->kind, type, kind);
            return;
        }
    }
    if (rc == TELEMEM_OK)
        tlm_caf_unpack(base, ls, conv ? conv : buf);
    free(conv);
    free(buf);
    tlm_caf_check(rc, stat, NULL, 0, what, r->image);
}

void _gfortran_caf_get(tlm_caf_token_p token, size_t offset,
                       int image_index, tlm_gfc_desc_t *src,
                       tlm_caf_vector_t *src_vector, tlm_gfc_desc_t *dst,
                       int src_kind, int dst_kind, bool may_require_tmp,
                       int *stat)
{
    remote_t r;
    tlm_caf_shape_t ls;

    (void)may_require_tmp;
    tlm_caf_ok(stat);
    if (remote_setup(&r, token, offset, image_index, src, src_vector,
                     src_kind, stat, "get from"))
        return;
    tlm_caf_shape_of(dst, &ls);
    get_local(&r, dst->base_addr, &ls, TLM_GFC_TYPE(dst), dst_kind, stat,
              "get from");
    free(r.addrs);
}

void _gfortran_caf_sendget(tlm_caf_token_p dst_token, size_t dst_offset,
                           int dst_image, tlm_gfc_desc_t *dst,
                           tlm_caf_vector_t *dst_vector,
                           tlm_caf_token_p src_token, size_t src_offset,
                           int src_image, tlm_gfc_desc_t *src,
                           tlm_caf_vector_t *src_vector, int dst_kind,
                           int src_kind, bool may_require_tmp, int *stat)
{
    remote_t s, d;
    tlm_caf_shape_t ts;
    char *buf;
    int rc;

    (void)may_require_tmp;
    tlm_caf_ok(stat);
    if (remote_setup(&s, src_token, src_offset, src_image, src, src_vector,
                     src_kind, stat, "get from"))
        return;
    if (remote_setup(&d, dst_token, dst_offset, dst_image, dst, dst_vector,
                     dst_kind, stat, "send to")) {
        free(s.addrs);
        return;
    }
    buf = malloc(s.s.count * s.s.elem + 1);
    rc = buf ? remote_read(&s, buf) : TELEMEM_ERR_NO_MEMORY;
    if (!tlm_caf_check(rc, stat, NULL, 0, "get from", src_image)) {
        tlm_caf_shape_contig(&ts, s.s.count, s.s.elem);
        send_local(&d, buf, &ts, s.type, src_kind, stat, "send to");
    }
    free(buf);
    free(s.addrs);
    free(d.addrs);
}

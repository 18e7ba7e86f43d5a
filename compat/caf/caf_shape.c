/* caf_shape.c - array shapes of gfortran descriptors in bytes, and packing
 * and unpacking elements in array element order (contiguous runs copied
 * at once). */
#include <string.h>

#include "caf_internal.h"

void tlm_caf_shape_of(const tlm_gfc_desc_t *d, tlm_caf_shape_t *s)
{
    int i, rank = TLM_GFC_RANK(d);
    /* Strides count elements of elem_len bytes (gfortran leaves span
     * unset in the descriptors it builds for collectives). */
    size_t span = d->dtype.elem_len;

    s->elem = d->dtype.elem_len;
    s->ndim = 0;
    s->count = 1;
    for (i = 0; i < rank; i++) {
        ptrdiff_t e = d->dim[i].ubound - d->dim[i].lbound + 1;
        if (e < 0)
            e = 0;
        s->extent[s->ndim] = (size_t)e;
        s->stride[s->ndim] = d->dim[i].stride * (ptrdiff_t)span;
        s->count *= (size_t)e;
        s->ndim++;
    }
}

void tlm_caf_shape_contig(tlm_caf_shape_t *s, size_t count, size_t elem)
{
    s->elem = elem;
    s->count = count;
    s->ndim = 1;
    s->extent[0] = count;
    s->stride[0] = (ptrdiff_t)elem;
}

bool tlm_caf_same_extents(const tlm_caf_shape_t *a, const tlm_caf_shape_t *b)
{
    int i = 0, j = 0;

    if (a->count != b->count)
        return false;
    for (;;) {
        while (i < a->ndim && a->extent[i] == 1)
            i++;
        while (j < b->ndim && b->extent[j] == 1)
            j++;
        if (i == a->ndim || j == b->ndim)
            return i == a->ndim && j == b->ndim;
        if (a->extent[i] != b->extent[j])
            return false;
        i++;
        j++;
    }
}

/* Length in bytes of the contiguous run at the start of each row of s:
 * the first dimension when its elements touch, else one element. */
static size_t run_of(const tlm_caf_shape_t *s, int *first)
{
    if (s->ndim > 0 && s->stride[0] == (ptrdiff_t)s->elem) {
        *first = 1;
        return s->elem * s->extent[0];
    }
    *first = 0;
    return s->elem;
}

/* Walk the runs of (base, s) in order; copy each to or from buf. */
static void walk(char *base, const tlm_caf_shape_t *s, char *buf, int in)
{
    size_t idx[TLM_CAF_MAX_DIM] = {0};
    int first, d;
    size_t run;
    char *p = base;

    if (s->count == 0)
        return;
    run = run_of(s, &first);
    for (;;) {
        if (in)
            memcpy(p, buf, run);
        else
            memcpy(buf, p, run);
        buf += run;
        for (d = first; d < s->ndim; d++) {
            if (++idx[d] < s->extent[d]) {
                p += s->stride[d];
                break;
            }
            p -= s->stride[d] * (ptrdiff_t)(idx[d] - 1);
            idx[d] = 0;
        }
        if (d == s->ndim)
            return;
    }
}

void tlm_caf_pack(void *out, const char *base, const tlm_caf_shape_t *s)
{
    walk((char *)base, s, out, 0);
}

void tlm_caf_unpack(char *base, const tlm_caf_shape_t *s, const void *in)
{
    walk(base, s, (char *)in, 1);
}

bool tlm_caf_is_contig(const tlm_caf_shape_t *s)
{
    ptrdiff_t want = (ptrdiff_t)s->elem;
    int i;

    for (i = 0; i < s->ndim; i++) {
        if (s->extent[i] == 1)
            continue;
        if (s->stride[i] != want)
            return false;
        want *= (ptrdiff_t)s->extent[i];
    }
    return true;
}

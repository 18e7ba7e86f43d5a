/* caf_xfer.c - moving an array section between this image and another:
 * the two sides' shapes are merged into one Telemem strided transfer
 * (one message stream, not one per row) where they allow it, and into
 * list transfers (segments batched per call) where they do not (more
 * than TELEMEM_MAX_STRIDE_LEVELS levels, opposite stride signs). */
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

/* The dimensions both sides share, extents of 1 left out. */
typedef struct {
    int n;
    size_t elem;
    size_t ext[TLM_CAF_MAX_DIM];
    ptrdiff_t rs[TLM_CAF_MAX_DIM], ls[TLM_CAF_MAX_DIM];
    char *r, *l;
} joint_t;

static void joint_of(joint_t *j, char *r, const tlm_caf_shape_t *rs,
                     char *l, const tlm_caf_shape_t *ls)
{
    int a = 0, b = 0;
    ptrdiff_t contig = (ptrdiff_t)rs->elem;

    j->n = 0;
    j->elem = rs->elem;
    j->r = r;
    j->l = l;
    for (;;) {
        while (a < rs->ndim && rs->extent[a] == 1)
            a++;
        if (ls)
            while (b < ls->ndim && ls->extent[b] == 1)
                b++;
        if (a >= rs->ndim)
            break;
        j->ext[j->n] = rs->extent[a];
        j->rs[j->n] = rs->stride[a];
        if (ls) {
            j->ls[j->n] = ls->stride[b++];
        } else {
            j->ls[j->n] = contig;
            contig *= (ptrdiff_t)rs->extent[a];
        }
        j->n++;
        a++;
    }
}

/* Merge neighbouring dimensions that are one on both sides, and turn
 * dimensions that run backwards on both sides around.  Returns false when
 * a dimension runs backwards on one side only. */
static bool joint_simplify(joint_t *j)
{
    int i, k = 0;

    for (i = 0; i < j->n; i++) {
        if (j->rs[i] < 0 && j->ls[i] < 0) {
            j->r += j->rs[i] * (ptrdiff_t)(j->ext[i] - 1);
            j->l += j->ls[i] * (ptrdiff_t)(j->ext[i] - 1);
            j->rs[i] = -j->rs[i];
            j->ls[i] = -j->ls[i];
        } else if (j->rs[i] < 0 || j->ls[i] < 0) {
            return false;
        }
    }
    for (i = 1; i < j->n; i++) {
        if (j->rs[i] == j->rs[k] * (ptrdiff_t)j->ext[k] &&
            j->ls[i] == j->ls[k] * (ptrdiff_t)j->ext[k]) {
            j->ext[k] *= j->ext[i];
            continue;
        }
        k++;
        j->ext[k] = j->ext[i];
        j->rs[k] = j->rs[i];
        j->ls[k] = j->ls[i];
    }
    if (j->n > 0)
        j->n = k + 1;
    return true;
}

/* The segments of j, TLM_CAF_SEGS at a time, through put_list/get_list. */
#define TLM_CAF_SEGS 1024
static int joint_list(int rank, const joint_t *j, int put)
{
    telemem_seg_t *segs = malloc(TLM_CAF_SEGS * sizeof *segs);
    size_t idx[TLM_CAF_MAX_DIM] = {0}, run = j->elem, ns = 0;
    int first = 0, d, rc = TELEMEM_OK;
    char *r = j->r, *l = j->l;

    if (!segs)
        return TELEMEM_ERR_NO_MEMORY;
    if (j->n > 0 && j->rs[0] == (ptrdiff_t)j->elem &&
        j->ls[0] == (ptrdiff_t)j->elem) {
        run = j->elem * j->ext[0];
        first = 1;
    }
    for (;;) {
        segs[ns].remote = r;
        segs[ns].local = l;
        segs[ns].bytes = run;
        if (++ns == TLM_CAF_SEGS) {
            rc = put ? telemem_put_list(rank, segs, ns)
                     : telemem_get_list(rank, segs, ns);
            ns = 0;
            if (rc != TELEMEM_OK)
                break;
        }
        for (d = first; d < j->n; d++) {
            if (++idx[d] < j->ext[d]) {
                r += j->rs[d];
                l += j->ls[d];
                break;
            }
            r -= j->rs[d] * (ptrdiff_t)(idx[d] - 1);
            l -= j->ls[d] * (ptrdiff_t)(idx[d] - 1);
            idx[d] = 0;
        }
        if (d == j->n)
            break;
    }
    if (rc == TELEMEM_OK && ns > 0)
        rc = put ? telemem_put_list(rank, segs, ns)
                 : telemem_get_list(rank, segs, ns);
    free(segs);
    return rc;
}

/* Contiguous puts from this size into an image this process maps (its
 * node, the window driver) are the runtime's own copy into the target's
 * block (telemem_ptr), after a fence to that image so that earlier
 * transfers land first.  telemem_put would ring a sleeping target's
 * doorbell after each copy, and the target, woken for nothing, goes back
 * to sleep with a membarrier that interrupts this copy (docs/caf.md,
 * "Contiguous puts of 32 KiB to 2 MiB"); a coindexed put never needs to
 * wake its target: an image learns of new data only through image control
 * statements, whose posts and atomics wake it themselves.  Below this
 * size the put's own store is as fast as the lookup. */
#define TLM_CAF_PTR_MIN 8192
static int put_contig(int rank, char *r, const char *l, size_t n)
{
    void *p;
    int rc;

    if (n < TLM_CAF_PTR_MIN || telemem_ptr(rank, r, n, &p) != TELEMEM_OK)
        return telemem_put(rank, r, l, n);
    rc = telemem_fence(rank);
    if (rc == TELEMEM_OK)
        memmove(p, l, n); /* the image's own coarray may overlap */
    return rc;
}

static int joint_xfer(int rank, joint_t *j, int put)
{
    size_t count[TELEMEM_MAX_STRIDE_LEVELS + 1];
    size_t rst[TELEMEM_MAX_STRIDE_LEVELS], lst[TELEMEM_MAX_STRIDE_LEVELS];
    int first = 0, levels, i;

    if (!joint_simplify(j))
        return joint_list(rank, j, put);
    count[0] = j->elem;
    if (j->n > 0 && j->rs[0] == (ptrdiff_t)j->elem &&
        j->ls[0] == (ptrdiff_t)j->elem) {
        count[0] = j->elem * j->ext[0];
        first = 1;
    }
    levels = j->n - first;
    if (levels > TELEMEM_MAX_STRIDE_LEVELS)
        return joint_list(rank, j, put);
    for (i = 0; i < levels; i++) {
        count[i + 1] = j->ext[first + i];
        rst[i] = (size_t)j->rs[first + i];
        lst[i] = (size_t)j->ls[first + i];
    }
    if (levels == 0)
        return put ? put_contig(rank, j->r, j->l, count[0])
                   : telemem_get(rank, j->l, j->r, count[0]);
    return put ? telemem_put_strided(rank, j->r, rst, j->l, lst, count,
                                     levels)
               : telemem_get_strided(rank, j->l, lst, j->r, rst, count,
                                     levels);
}

int tlm_caf_put_shape(int rank, char *remote, const tlm_caf_shape_t *rs,
                      const char *local, const tlm_caf_shape_t *ls)
{
    joint_t j;

    if (rs->count == 0)
        return TELEMEM_OK;
    joint_of(&j, remote, rs, (char *)local, ls);
    return joint_xfer(rank, &j, 1);
}

int tlm_caf_get_shape(int rank, char *local, const tlm_caf_shape_t *ls,
                      const char *remote, const tlm_caf_shape_t *rs)
{
    joint_t j;

    if (rs->count == 0)
        return TELEMEM_OK;
    joint_of(&j, (char *)remote, rs, local, ls);
    return joint_xfer(rank, &j, 0);
}

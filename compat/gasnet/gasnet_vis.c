/* gasnet_vis.c - GASNet's VIS interface (gasnet_vis.h) over Telemem's
 * non-contiguous transfers: vector and indexed transfers become one
 * telemem_{put,get}_list of the pieces both sides agree on, strided ones
 * one telemem_{put,get}_strided (a list when they have more levels than
 * Telemem takes); blocking, _nb and _nbi forms share one path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gasnet_internal.h"
#include "gasnet_tools.h"

enum { MODE_BLOCK, MODE_NB, MODE_NBI };

/* ---- lists ----------------------------------------------------------------- */

/* A growing array of telemem_seg_t. */
typedef struct {
    telemem_seg_t *v;
    size_t n, cap;
} segs_t;

static void segs_push(const char *what, segs_t *s, void *remote, void *local,
                      size_t bytes)
{
    if (bytes == 0)
        return;
    if (s->n && (char *)s->v[s->n - 1].remote + s->v[s->n - 1].bytes ==
                    (char *)remote &&
        (char *)s->v[s->n - 1].local + s->v[s->n - 1].bytes == (char *)local) {
        s->v[s->n - 1].bytes += bytes; /* contiguous on both sides */
        return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        telemem_seg_t *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            tlm_gasnet_fatal(what, "out of memory for %zu pieces", cap);
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (telemem_seg_t){remote, local, bytes};
}

/* One side of a transfer as a sequence of pieces. */
typedef struct {
    size_t count;
    const gasnet_memvec_t *vec; /* vector form, or */
    void *const *idx;           /* indexed form with */
    size_t len;                 /* one length */
} side_t;

static inline void side_piece(const side_t *s, size_t i, char **addr,
                              size_t *len)
{
    if (s->vec) {
        *addr = s->vec[i].addr;
        *len = s->vec[i].len;
    } else {
        *addr = s->idx[i];
        *len = s->len;
    }
}

static size_t side_total(const side_t *s)
{
    size_t t = 0;
    for (size_t i = 0; i < s->count; i++) {
        char *a;
        size_t l;
        side_piece(s, i, &a, &l);
        t += l;
    }
    return t;
}

/* The pieces where the remote and local sequences overlap, in order;
 * every remote piece is checked against node's segment. */
static void merge_sides(const char *what, gasnet_node_t node,
                        const side_t *remote, const side_t *local,
                        segs_t *out)
{
    size_t rt = side_total(remote), lt = side_total(local);
    if (rt != lt)
        tlm_gasnet_fatal(what, "the remote side has %zu bytes, the local "
                         "side %zu", rt, lt);
    size_t ri = 0, li = 0, roff = 0, loff = 0;
    char *ra = NULL, *la = NULL;
    size_t rl = 0, ll = 0;
    if (remote->count)
        side_piece(remote, 0, &ra, &rl);
    if (local->count)
        side_piece(local, 0, &la, &ll);
    for (size_t i = 0; i < remote->count; i++) {
        char *a;
        size_t l;
        side_piece(remote, i, &a, &l);
        if (l)
            tlm_gasnet_check_remote(what, node, a, l);
    }
    while (ri < remote->count && li < local->count) {
        if (roff == rl) {
            if (++ri < remote->count)
                side_piece(remote, ri, &ra, &rl);
            roff = 0;
            continue;
        }
        if (loff == ll) {
            if (++li < local->count)
                side_piece(local, li, &la, &ll);
            loff = 0;
            continue;
        }
        size_t n = rl - roff < ll - loff ? rl - roff : ll - loff;
        if (!la)
            tlm_gasnet_fatal(what, "a local address is NULL");
        segs_push(what, out, ra + roff, la + loff, n);
        roff += n;
        loff += n;
    }
}

/* Issue a list put or get in the given mode. */
static gasnet_handle_t issue_list(const char *what, int is_put,
                                  gasnet_node_t node, segs_t *s, int mode)
{
    gasnet_handle_t h = GASNET_INVALID_HANDLE;
    int rc = TELEMEM_OK;
    if (s->n == 0) {
        free(s->v);
        return h;
    }
    void *first = s->v[0].remote;
    if (mode == MODE_NBI && !tlm_gasnet_in_region()) {
        rc = is_put ? telemem_put_list_nbi((int)node, s->v, s->n)
                    : telemem_get_list_nbi((int)node, s->v, s->n);
        tlm_gasnet_nbi_started();
    } else {
        telemem_handle_t th;
        rc = is_put ? telemem_put_list_nb((int)node, s->v, s->n, &th)
                    : telemem_get_list_nb((int)node, s->v, s->n, &th);
        if (rc == TELEMEM_OK && mode == MODE_BLOCK)
            rc = telemem_wait(&th);
        else if (rc == TELEMEM_OK)
            h = tlm_gasnet_wrap(what, (int)node, th);
        if (h && mode == MODE_NBI) {
            tlm_gasnet_region_add(what, h);
            h = GASNET_INVALID_HANDLE;
        }
    }
    free(s->v);
    tlm_gasnet_check_tlm(what, rc, node, first, 0);
    if (mode == MODE_BLOCK)
        tlm_gasnet_check_exit();
    return h;
}

static gasnet_handle_t vec_op(const char *what, int is_put, int mode,
                              gasnet_node_t node, side_t remote, side_t local)
{
    tlm_gasnet_check_rma_call(what, node);
    if ((remote.count && !remote.vec && !remote.idx) ||
        (local.count && !local.vec && !local.idx))
        tlm_gasnet_fatal(what, "an address list is NULL");
    segs_t s = {NULL, 0, 0};
    merge_sides(what, node, &remote, &local, &s);
    return issue_list(what, is_put, node, &s, mode);
}

#define VSIDE(c, l) ((side_t){(c), (l), NULL, 0})
#define ISIDE(c, l, n) ((side_t){(c), NULL, (l), (n)})

gasnet_handle_t gasnet_putv_nb_bulk(gasnet_node_t dstnode, size_t dstcount,
                                    gasnet_memvec_t const dstlist[],
                                    size_t srccount,
                                    gasnet_memvec_t const srclist[])
{
    return vec_op("gasnet_putv_nb_bulk", 1, MODE_NB, dstnode,
                  VSIDE(dstcount, dstlist), VSIDE(srccount, srclist));
}

gasnet_handle_t gasnet_getv_nb_bulk(size_t dstcount,
                                    gasnet_memvec_t const dstlist[],
                                    gasnet_node_t srcnode, size_t srccount,
                                    gasnet_memvec_t const srclist[])
{
    return vec_op("gasnet_getv_nb_bulk", 0, MODE_NB, srcnode,
                  VSIDE(srccount, srclist), VSIDE(dstcount, dstlist));
}

void gasnet_putv_nbi_bulk(gasnet_node_t dstnode, size_t dstcount,
                          gasnet_memvec_t const dstlist[], size_t srccount,
                          gasnet_memvec_t const srclist[])
{
    vec_op("gasnet_putv_nbi_bulk", 1, MODE_NBI, dstnode,
           VSIDE(dstcount, dstlist), VSIDE(srccount, srclist));
}

void gasnet_getv_nbi_bulk(size_t dstcount, gasnet_memvec_t const dstlist[],
                          gasnet_node_t srcnode, size_t srccount,
                          gasnet_memvec_t const srclist[])
{
    vec_op("gasnet_getv_nbi_bulk", 0, MODE_NBI, srcnode,
           VSIDE(srccount, srclist), VSIDE(dstcount, dstlist));
}

void gasnet_putv_bulk(gasnet_node_t dstnode, size_t dstcount,
                      gasnet_memvec_t const dstlist[], size_t srccount,
                      gasnet_memvec_t const srclist[])
{
    vec_op("gasnet_putv_bulk", 1, MODE_BLOCK, dstnode,
           VSIDE(dstcount, dstlist), VSIDE(srccount, srclist));
}

void gasnet_getv_bulk(size_t dstcount, gasnet_memvec_t const dstlist[],
                      gasnet_node_t srcnode, size_t srccount,
                      gasnet_memvec_t const srclist[])
{
    vec_op("gasnet_getv_bulk", 0, MODE_BLOCK, srcnode,
           VSIDE(srccount, srclist), VSIDE(dstcount, dstlist));
}

gasnet_handle_t gasnet_puti_nb_bulk(gasnet_node_t dstnode, size_t dstcount,
                                    void *const dstlist[], size_t dstlen,
                                    size_t srccount, void *const srclist[],
                                    size_t srclen)
{
    return vec_op("gasnet_puti_nb_bulk", 1, MODE_NB, dstnode,
                  ISIDE(dstcount, dstlist, dstlen),
                  ISIDE(srccount, srclist, srclen));
}

gasnet_handle_t gasnet_geti_nb_bulk(size_t dstcount, void *const dstlist[],
                                    size_t dstlen, gasnet_node_t srcnode,
                                    size_t srccount, void *const srclist[],
                                    size_t srclen)
{
    return vec_op("gasnet_geti_nb_bulk", 0, MODE_NB, srcnode,
                  ISIDE(srccount, srclist, srclen),
                  ISIDE(dstcount, dstlist, dstlen));
}

void gasnet_puti_nbi_bulk(gasnet_node_t dstnode, size_t dstcount,
                          void *const dstlist[], size_t dstlen,
                          size_t srccount, void *const srclist[],
                          size_t srclen)
{
    vec_op("gasnet_puti_nbi_bulk", 1, MODE_NBI, dstnode,
           ISIDE(dstcount, dstlist, dstlen), ISIDE(srccount, srclist, srclen));
}

void gasnet_geti_nbi_bulk(size_t dstcount, void *const dstlist[],
                          size_t dstlen, gasnet_node_t srcnode,
                          size_t srccount, void *const srclist[],
                          size_t srclen)
{
    vec_op("gasnet_geti_nbi_bulk", 0, MODE_NBI, srcnode,
           ISIDE(srccount, srclist, srclen), ISIDE(dstcount, dstlist, dstlen));
}

void gasnet_puti_bulk(gasnet_node_t dstnode, size_t dstcount,
                      void *const dstlist[], size_t dstlen, size_t srccount,
                      void *const srclist[], size_t srclen)
{
    vec_op("gasnet_puti_bulk", 1, MODE_BLOCK, dstnode,
           ISIDE(dstcount, dstlist, dstlen), ISIDE(srccount, srclist, srclen));
}

void gasnet_geti_bulk(size_t dstcount, void *const dstlist[], size_t dstlen,
                      gasnet_node_t srcnode, size_t srccount,
                      void *const srclist[], size_t srclen)
{
    vec_op("gasnet_geti_bulk", 0, MODE_BLOCK, srcnode,
           ISIDE(srccount, srclist, srclen), ISIDE(dstcount, dstlist, dstlen));
}

/* ---- strided ----------------------------------------------------------- */

#define MAXDIM 64

/* A strided description after dropping dimensions of count 1 and merging
 * dimensions that are contiguous on both sides. */
typedef struct {
    size_t count[MAXDIM + 1];
    size_t rstride[MAXDIM], lstride[MAXDIM];
    int levels;
    int empty;
} shape_t;

static void normalise(const char *what, shape_t *sh, const size_t *rstr,
                      const size_t *lstr, const size_t *count, size_t levels)
{
    if (levels > MAXDIM)
        tlm_gasnet_fatal(what, "%zu stride levels (at most %d)", levels,
                         MAXDIM);
    if (!count || (levels && (!rstr || !lstr)))
        tlm_gasnet_fatal(what, "a count or stride array is NULL");
    sh->empty = 0;
    for (size_t i = 0; i <= levels; i++)
        if (count[i] == 0)
            sh->empty = 1;
    sh->count[0] = count[0];
    sh->levels = 0;
    for (size_t i = 0; i < levels; i++) {
        size_t c = count[i + 1];
        if (c == 1)
            continue;
        int l = sh->levels;
        size_t run_r = l ? sh->rstride[l - 1] * sh->count[l] : sh->count[0];
        size_t run_l = l ? sh->lstride[l - 1] * sh->count[l] : sh->count[0];
        if (rstr[i] == run_r && lstr[i] == run_l) {
            sh->count[l] *= c; /* contiguous with what is below */
            continue;
        }
        sh->rstride[l] = rstr[i];
        sh->lstride[l] = lstr[i];
        sh->count[l + 1] = c;
        sh->levels++;
    }
}

/* The remote extent: from the base to the end of the last run. */
static size_t extent(const shape_t *sh, const size_t *stride)
{
    size_t e = sh->count[0];
    for (int i = 0; i < sh->levels; i++)
        e += (sh->count[i + 1] - 1) * stride[i];
    return e;
}

/* Enumerate the runs of a shape with more levels than Telemem takes. */
static void shape_to_list(const char *what, const shape_t *sh, char *remote,
                          char *local, segs_t *out)
{
    size_t idx[MAXDIM] = {0};
    for (;;) {
        size_t ro = 0, lo = 0;
        for (int i = 0; i < sh->levels; i++) {
            ro += idx[i] * sh->rstride[i];
            lo += idx[i] * sh->lstride[i];
        }
        segs_push(what, out, remote + ro, local + lo, sh->count[0]);
        int d = 0;
        while (d < sh->levels && ++idx[d] == sh->count[d + 1])
            idx[d++] = 0;
        if (d == sh->levels)
            return;
    }
}

static gasnet_handle_t strided_op(const char *what, int is_put, int mode,
                                  gasnet_node_t node, void *remote,
                                  const size_t *rstr, void *local,
                                  const size_t *lstr, const size_t *count,
                                  size_t levels)
{
    tlm_gasnet_check_rma_call(what, node);
    shape_t sh;
    normalise(what, &sh, rstr, lstr, count, levels);
    if (sh.empty)
        return GASNET_INVALID_HANDLE;
    if (!local || !remote)
        tlm_gasnet_fatal(what, "an address is NULL");
    tlm_gasnet_check_remote(what, node, remote, extent(&sh, sh.rstride));
    if (sh.levels > TELEMEM_MAX_STRIDE_LEVELS) {
        segs_t s = {NULL, 0, 0};
        shape_to_list(what, &sh, remote, local, &s);
        return issue_list(what, is_put, node, &s, mode);
    }
    int rc;
    gasnet_handle_t h = GASNET_INVALID_HANDLE;
    if (mode == MODE_NBI && !tlm_gasnet_in_region()) {
        rc = is_put ? telemem_put_strided_nbi((int)node, remote, sh.rstride,
                                              local, sh.lstride, sh.count,
                                              sh.levels)
                    : telemem_get_strided_nbi((int)node, local, sh.lstride,
                                              remote, sh.rstride, sh.count,
                                              sh.levels);
        tlm_gasnet_nbi_started();
    } else {
        telemem_handle_t th;
        rc = is_put ? telemem_put_strided_nb((int)node, remote, sh.rstride,
                                             local, sh.lstride, sh.count,
                                             sh.levels, &th)
                    : telemem_get_strided_nb((int)node, local, sh.lstride,
                                             remote, sh.rstride, sh.count,
                                             sh.levels, &th);
        if (rc == TELEMEM_OK && mode == MODE_BLOCK)
            rc = telemem_wait(&th);
        else if (rc == TELEMEM_OK)
            h = tlm_gasnet_wrap(what, (int)node, th);
        if (h && mode == MODE_NBI) {
            tlm_gasnet_region_add(what, h);
            h = GASNET_INVALID_HANDLE;
        }
    }
    tlm_gasnet_check_tlm(what, rc, node, remote, sh.count[0]);
    if (mode == MODE_BLOCK)
        tlm_gasnet_check_exit();
    return h;
}

gasnet_handle_t gasnet_puts_nb_bulk(gasnet_node_t dstnode, void *dstaddr,
                                    const size_t dststrides[], void *srcaddr,
                                    const size_t srcstrides[],
                                    const size_t count[], size_t stridelevels)
{
    return strided_op("gasnet_puts_nb_bulk", 1, MODE_NB, dstnode, dstaddr,
                      dststrides, srcaddr, srcstrides, count, stridelevels);
}

gasnet_handle_t gasnet_gets_nb_bulk(void *dstaddr, const size_t dststrides[],
                                    gasnet_node_t srcnode, void *srcaddr,
                                    const size_t srcstrides[],
                                    const size_t count[], size_t stridelevels)
{
    return strided_op("gasnet_gets_nb_bulk", 0, MODE_NB, srcnode, srcaddr,
                      srcstrides, dstaddr, dststrides, count, stridelevels);
}

void gasnet_puts_nbi_bulk(gasnet_node_t dstnode, void *dstaddr,
                          const size_t dststrides[], void *srcaddr,
                          const size_t srcstrides[], const size_t count[],
                          size_t stridelevels)
{
    strided_op("gasnet_puts_nbi_bulk", 1, MODE_NBI, dstnode, dstaddr,
               dststrides, srcaddr, srcstrides, count, stridelevels);
}

void gasnet_gets_nbi_bulk(void *dstaddr, const size_t dststrides[],
                          gasnet_node_t srcnode, void *srcaddr,
                          const size_t srcstrides[], const size_t count[],
                          size_t stridelevels)
{
    strided_op("gasnet_gets_nbi_bulk", 0, MODE_NBI, srcnode, srcaddr,
               srcstrides, dstaddr, dststrides, count, stridelevels);
}

void gasnet_puts_bulk(gasnet_node_t dstnode, void *dstaddr,
                      const size_t dststrides[], void *srcaddr,
                      const size_t srcstrides[], const size_t count[],
                      size_t stridelevels)
{
    strided_op("gasnet_puts_bulk", 1, MODE_BLOCK, dstnode, dstaddr,
               dststrides, srcaddr, srcstrides, count, stridelevels);
}

void gasnet_gets_bulk(void *dstaddr, const size_t dststrides[],
                      gasnet_node_t srcnode, void *srcaddr,
                      const size_t srcstrides[], const size_t count[],
                      size_t stridelevels)
{
    strided_op("gasnet_gets_bulk", 0, MODE_BLOCK, srcnode, srcaddr,
               srcstrides, dstaddr, dststrides, count, stridelevels);
}

/* ---- descriptions as text (gasnet_tools.h) -------------------------------- */


#define ENTRY_CHARS 48u /* "(0x0123456789abcdef,18446744073709551615) " */

size_t gasnett_format_memveclist_bufsz(size_t count)
{
    return 64 + count * ENTRY_CHARS;
}

gasnett_memveclist_stats_t gasnett_format_memveclist(char *buf, size_t count,
                                                     gasnet_memvec_t const
                                                         *list)
{
    gasnett_memveclist_stats_t st = {(size_t)-1, 0, 0, NULL, NULL};
    size_t k = (size_t)sprintf(buf, "%zu entries: [", count);
    for (size_t i = 0; i < count; i++) {
        char *a = list[i].addr;
        size_t l = list[i].len;
        k += (size_t)sprintf(buf + k, "%s(%p,%zu)", i ? " " : "", (void *)a,
                             l);
        st.totalsz += l;
        st.minsz = l < st.minsz ? l : st.minsz;
        st.maxsz = l > st.maxsz ? l : st.maxsz;
        if (l && (!st.minaddr || (void *)a < st.minaddr))
            st.minaddr = a;
        if (l && (!st.maxaddr || (void *)(a + l - 1) > st.maxaddr))
            st.maxaddr = a + l - 1;
    }
    memcpy(buf + k, "]", 2);
    if (!count)
        st.minsz = 0;
    return st;
}

size_t gasnett_format_putvgetv_bufsz(size_t dstcount, size_t srccount)
{
    return 64 + gasnett_format_memveclist_bufsz(dstcount) +
           gasnett_format_memveclist_bufsz(srccount);
}

size_t gasnett_format_putvgetv(char *buf, gasnet_node_t node,
                               size_t dstcount,
                               gasnet_memvec_t const dstlist[],
                               size_t srccount,
                               gasnet_memvec_t const srclist[])
{
    size_t k = (size_t)sprintf(buf, "node %u dst ", (unsigned)node);
    gasnett_memveclist_stats_t st =
        gasnett_format_memveclist(buf + k, dstcount, dstlist);
    k += strlen(buf + k);
    k += (size_t)sprintf(buf + k, " src ");
    gasnett_format_memveclist(buf + k, srccount, srclist);
    return st.totalsz;
}

size_t gasnett_format_addrlist_bufsz(size_t count)
{
    return 64 + count * 20u;
}

gasnett_addrlist_stats_t gasnett_format_addrlist(char *buf, size_t count,
                                                 void *const *list, size_t len)
{
    gasnett_addrlist_stats_t st = {len, len, count * len, NULL, NULL};
    size_t k = (size_t)sprintf(buf, "%zu entries of %zu bytes: [", count,
                               len);
    for (size_t i = 0; i < count; i++) {
        char *a = list[i];
        k += (size_t)sprintf(buf + k, "%s%p", i ? " " : "", (void *)a);
        if (!st.minaddr || (void *)a < st.minaddr)
            st.minaddr = a;
        if (len && (!st.maxaddr || (void *)(a + len - 1) > st.maxaddr))
            st.maxaddr = a + len - 1;
    }
    memcpy(buf + k, "]", 2);
    return st;
}

size_t gasnett_format_putigeti_bufsz(size_t dstcount, size_t srccount)
{
    return 64 + gasnett_format_addrlist_bufsz(dstcount) +
           gasnett_format_addrlist_bufsz(srccount);
}

size_t gasnett_format_putigeti(char *buf, gasnet_node_t node,
                               size_t dstcount, void *const dstlist[],
                               size_t dstlen, size_t srccount,
                               void *const srclist[], size_t srclen)
{
    size_t k = (size_t)sprintf(buf, "node %u dst ", (unsigned)node);
    gasnett_format_addrlist(buf + k, dstcount, dstlist, dstlen);
    k += strlen(buf + k);
    k += (size_t)sprintf(buf + k, " src ");
    gasnett_format_addrlist(buf + k, srccount, srclist, srclen);
    return dstcount * dstlen;
}

size_t gasnett_format_strides_bufsz(size_t count)
{
    return 8 + count * 22u;
}

void gasnett_format_strides(char *buf, size_t count, const size_t *list)
{
    size_t k = (size_t)sprintf(buf, "[");
    for (size_t i = 0; list && i < count; i++)
        k += (size_t)sprintf(buf + k, "%s%zu", i ? " " : "", list[i]);
    memcpy(buf + k, "]", 2);
}

size_t gasnett_format_putsgets_bufsz(size_t stridelevels)
{
    return 128 + 3 * gasnett_format_strides_bufsz(stridelevels + 1);
}

size_t gasnett_format_putsgets(char *buf, void *pstats, gasnet_node_t node,
                               void *dstaddr, const size_t dststrides[],
                               void *srcaddr, const size_t srcstrides[],
                               const size_t count[], size_t stridelevels)
{
    (void)pstats;
    size_t total = count ? count[0] : 0;
    for (size_t i = 1; count && i <= stridelevels; i++)
        total *= count[i];
    size_t k = (size_t)sprintf(buf, "node %u dst %p strides ", (unsigned)node,
                               dstaddr);
    gasnett_format_strides(buf + k, stridelevels, dststrides);
    k += strlen(buf + k);
    k += (size_t)sprintf(buf + k, " src %p strides ", srcaddr);
    gasnett_format_strides(buf + k, stridelevels, srcstrides);
    k += strlen(buf + k);
    k += (size_t)sprintf(buf + k, " count ");
    gasnett_format_strides(buf + k, stridelevels + 1, count);
    return total;
}

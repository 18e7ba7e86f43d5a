/* gt_vis.c - GASNet's VIS interface (gasnet_vis.h): strided (1..10
 * levels, contiguous dimensions, 8-byte rows, empty counts), vector
 * (pieces of different lengths on both sides) and indexed (different
 * lengths on both sides) puts and gets, each blocking, _nb, _nbi and _nbi
 * inside an access region, to the next node and to itself.  Every byte of
 * the remote window and of the local buffer is compared with what a
 * piece-by-piece reference computes (so bytes that must stay untouched
 * are checked too). */
#include "gt.h"

#define WIN 65536 /* bytes of the window at each target */

static uint8_t *local_buf, *expect, *seen;

/* A transfer as the reference sees it: pieces (remote off, local off,
 * len). */
typedef struct {
    size_t roff, loff, len;
} piece_t;
static piece_t pieces[8192];
static size_t npieces;

static void add_piece(size_t r, size_t l, size_t n)
{
    GT_ASSERT(npieces < 8192, "too many pieces");
    pieces[npieces++] = (piece_t){r, l, n};
}

/* ---- descriptions ---- */

typedef struct {
    size_t levels;
    size_t count[12], rstride[11], lstride[11];
} strided_t;

static void strided_pieces(const strided_t *s)
{
    npieces = 0;
    size_t idx[12] = {0};
    for (size_t i = 0; i <= s->levels; i++)
        if (s->count[i] == 0)
            return;
    for (;;) {
        size_t r = 0, l = 0;
        for (size_t i = 0; i < s->levels; i++) {
            r += idx[i] * s->rstride[i];
            l += idx[i] * s->lstride[i];
        }
        add_piece(r, l, s->count[0]);
        size_t d = 0;
        while (d < s->levels && ++idx[d] == s->count[d + 1])
            idx[d++] = 0;
        if (d == s->levels)
            return;
    }
}

/* Two lists of (offset, len) as a stream: pieces where they overlap. */
static void stream_pieces(const size_t *ro, const size_t *rl, size_t rn,
                          const size_t *lo, const size_t *ll, size_t ln)
{
    npieces = 0;
    size_t i = 0, j = 0, a = 0, b = 0;
    while (i < rn && j < ln) {
        if (a == rl[i]) { i++; a = 0; continue; }
        if (b == ll[j]) { j++; b = 0; continue; }
        size_t n = rl[i] - a < ll[j] - b ? rl[i] - a : ll[j] - b;
        add_piece(ro[i] + a, lo[j] + b, n);
        a += n;
        b += n;
    }
}

/* ---- running one case ---- */

enum { F_BLOCK, F_NB, F_NBI, F_REGION };

static void complete(int form, gasnet_handle_t h)
{
    if (form == F_NB)
        gasnet_wait_syncnb(h);
    else if (form == F_NBI)
        gasnet_wait_syncnbi_all();
    else if (form == F_REGION)
        gasnet_wait_syncnb(gasnet_end_nbi_accessregion());
}

typedef gasnet_handle_t (*issue_fn)(int is_put, int form, gasnet_node_t node,
                                    char *remote, char *local,
                                    const void *desc);

/* Put: window zeroed, local patterned; afterwards the whole window must
 * be zeros except the pieces.  Get: window patterned, local zeroed;
 * afterwards the whole local buffer likewise. */
static void run_case(const char *name, issue_fn fn, const void *desc,
                     gasnet_node_t node, uint64_t key)
{
    char *win = (char *)gt_seg((int)node).addr + (size_t)gt_me * WIN;
    for (int is_put = 0; is_put < 2; is_put++)
        for (int form = 0; form < 4; form++) {
            uint64_t k = gt_key(key, (uint64_t)is_put, (uint64_t)form, node);
            memset(expect, 0, WIN);
            if (is_put) {
                gasnet_memset(node, win, 0, WIN);
                gt_pat_fill(local_buf, WIN, k);
                for (size_t p = 0; p < npieces; p++)
                    memcpy(expect + pieces[p].roff,
                           local_buf + pieces[p].loff, pieces[p].len);
            } else {
                gt_pat_fill(seen, WIN, k);
                gasnet_put(node, win, seen, WIN);
                memset(local_buf, 0, WIN);
                for (size_t p = 0; p < npieces; p++)
                    memcpy(expect + pieces[p].loff, seen + pieces[p].roff,
                           pieces[p].len);
            }
            if (form == F_REGION)
                gasnet_begin_nbi_accessregion();
            gasnet_handle_t h = fn(is_put, form, node, win,
                                   (char *)local_buf, desc);
            complete(form, h);
            const uint8_t *got = local_buf;
            if (is_put) {
                gasnet_get(seen, node, win, WIN);
                got = seen;
            }
            for (size_t i = 0; i < WIN; i++)
                if (got[i] != expect[i])
                    GT_FAIL("%s %s form %d to node %u: byte %zu is 0x%02x, "
                            "expected 0x%02x (%zu pieces)", name,
                            is_put ? "put" : "get", form, (unsigned)node, i,
                            got[i], expect[i], npieces);
        }
}

static gasnet_handle_t do_strided(int is_put, int form, gasnet_node_t node,
                                  char *remote, char *local, const void *d)
{
    const strided_t *s = d;
    switch (form * 2 + is_put) {
    case F_BLOCK * 2 + 1:
        gasnet_puts_bulk(node, remote, s->rstride, local, s->lstride,
                         s->count, s->levels);
        return GASNET_INVALID_HANDLE;
    case F_BLOCK * 2:
        gasnet_gets_bulk(local, s->lstride, node, remote, s->rstride,
                         s->count, s->levels);
        return GASNET_INVALID_HANDLE;
    case F_NB * 2 + 1:
        return gasnet_puts_nb_bulk(node, remote, s->rstride, local,
                                   s->lstride, s->count, s->levels);
    case F_NB * 2:
        return gasnet_gets_nb_bulk(local, s->lstride, node, remote,
                                   s->rstride, s->count, s->levels);
    default:
        if (is_put)
            gasnet_puts_nbi_bulk(node, remote, s->rstride, local, s->lstride,
                                 s->count, s->levels);
        else
            gasnet_gets_nbi_bulk(local, s->lstride, node, remote, s->rstride,
                                 s->count, s->levels);
        return GASNET_INVALID_HANDLE;
    }
}

typedef struct {
    size_t rn, ln;
    gasnet_memvec_t r[64], l[64];
} vec_t;

static gasnet_handle_t do_vector(int is_put, int form, gasnet_node_t node,
                                 char *remote, char *local, const void *d)
{
    const vec_t *v = d;
    gasnet_memvec_t r[64], l[64];
    for (size_t i = 0; i < v->rn; i++)
        r[i] = (gasnet_memvec_t){remote + (size_t)v->r[i].addr, v->r[i].len};
    for (size_t i = 0; i < v->ln; i++)
        l[i] = (gasnet_memvec_t){local + (size_t)v->l[i].addr, v->l[i].len};
    switch (form * 2 + is_put) {
    case F_BLOCK * 2 + 1:
        gasnet_putv_bulk(node, v->rn, r, v->ln, l);
        return GASNET_INVALID_HANDLE;
    case F_BLOCK * 2:
        gasnet_getv_bulk(v->ln, l, node, v->rn, r);
        return GASNET_INVALID_HANDLE;
    case F_NB * 2 + 1:
        return gasnet_putv_nb_bulk(node, v->rn, r, v->ln, l);
    case F_NB * 2:
        return gasnet_getv_nb_bulk(v->ln, l, node, v->rn, r);
    default:
        if (is_put)
            gasnet_putv_nbi_bulk(node, v->rn, r, v->ln, l);
        else
            gasnet_getv_nbi_bulk(v->ln, l, node, v->rn, r);
        return GASNET_INVALID_HANDLE;
    }
}

typedef struct {
    size_t rn, ln, rlen, llen;
    size_t r[256], l[256];
} idx_t;

static gasnet_handle_t do_indexed(int is_put, int form, gasnet_node_t node,
                                  char *remote, char *local, const void *d)
{
    const idx_t *x = d;
    void *r[256], *l[256];
    for (size_t i = 0; i < x->rn; i++)
        r[i] = remote + x->r[i];
    for (size_t i = 0; i < x->ln; i++)
        l[i] = local + x->l[i];
    switch (form * 2 + is_put) {
    case F_BLOCK * 2 + 1:
        gasnet_puti_bulk(node, x->rn, r, x->rlen, x->ln, l, x->llen);
        return GASNET_INVALID_HANDLE;
    case F_BLOCK * 2:
        gasnet_geti_bulk(x->ln, l, x->llen, node, x->rn, r, x->rlen);
        return GASNET_INVALID_HANDLE;
    case F_NB * 2 + 1:
        return gasnet_puti_nb_bulk(node, x->rn, r, x->rlen, x->ln, l,
                                   x->llen);
    case F_NB * 2:
        return gasnet_geti_nb_bulk(x->ln, l, x->llen, node, x->rn, r,
                                   x->rlen);
    default:
        if (is_put)
            gasnet_puti_nbi_bulk(node, x->rn, r, x->rlen, x->ln, l, x->llen);
        else
            gasnet_geti_nbi_bulk(x->ln, l, x->llen, node, x->rn, r, x->rlen);
        return GASNET_INVALID_HANDLE;
    }
}

static void strided_cases(gasnet_node_t node)
{
    strided_t s;
    /* 8-byte rows, 2-D; rows of 24 bytes every 40 / 56; 3-D; contiguous
     * dimension; 10 levels of 2; an empty count. */
    s = (strided_t){1, {8, 512}, {16}, {24}};
    strided_pieces(&s);
    run_case("strided 8x512", do_strided, &s, node, 1);
    s = (strided_t){2, {24, 10, 7}, {40, 400}, {56, 700}};
    strided_pieces(&s);
    run_case("strided 3-D", do_strided, &s, node, 2);
    s = (strided_t){2, {16, 4, 9}, {16, 100}, {16, 96}};
    strided_pieces(&s);
    run_case("strided contiguous rows", do_strided, &s, node, 3);
    s = (strided_t){10, {3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},
                    {4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048},
                    {5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560}};
    strided_pieces(&s);
    run_case("strided 10 levels", do_strided, &s, node, 4);
    s = (strided_t){1, {8, 0}, {16}, {16}};
    strided_pieces(&s);
    run_case("strided empty", do_strided, &s, node, 5);
    s = (strided_t){0, {1000}, {0}, {0}};
    strided_pieces(&s);
    run_case("strided 0 levels", do_strided, &s, node, 6);
}

static void vector_cases(gasnet_node_t node)
{
    static vec_t v;
    size_t ro[64], rl[64], lo[64], ll[64], total = 0, off = 0;
    v.rn = 0;
    for (size_t i = 0; i < 40; i++) {
        size_t n = (size_t)(gt_mix(i ^ 77) % 300); /* 0-length pieces too */
        ro[i] = off;
        rl[i] = n;
        off += n + 13;
        total += n;
        v.r[v.rn++] = (gasnet_memvec_t){(void *)ro[i], n};
    }
    v.ln = 0;
    off = 0;
    for (size_t i = 0; total; i++) {
        size_t n = 1 + (size_t)(gt_mix(i ^ 99) % 500);
        if (n > total || i == 63)
            n = total;
        lo[i] = off;
        ll[i] = n;
        off += n + 7;
        total -= n;
        v.l[v.ln++] = (gasnet_memvec_t){(void *)lo[i], n};
    }
    stream_pieces(ro, rl, v.rn, lo, ll, v.ln);
    run_case("vector", do_vector, &v, node, 7);
}

static void indexed_cases(gasnet_node_t node)
{
    static idx_t x;
    size_t ro[256], rl[256], lo[256], ll[256];
    x.rn = 96;
    x.rlen = 40; /* 96 x 40 = 3840 = 160 x 24 */
    x.ln = 160;
    x.llen = 24;
    for (size_t i = 0; i < x.rn; i++) {
        x.r[i] = ro[i] = (x.rn - 1 - i) * 64 + 8; /* descending */
        rl[i] = x.rlen;
    }
    for (size_t i = 0; i < x.ln; i++) {
        x.l[i] = lo[i] = i * 32;
        ll[i] = x.llen;
    }
    stream_pieces(ro, rl, x.rn, lo, ll, x.ln);
    run_case("indexed", do_indexed, &x, node, 8);
}

int main(int argc, char **argv)
{
    gt_start(&argc, &argv, "gt_vis", NULL, 0, (uintptr_t)WIN * 1024);
    GT_ASSERT(gt_seg(gt_me).size >= (uintptr_t)WIN * (uintptr_t)gt_n,
              "segment too small");
    local_buf = malloc(WIN);
    expect = malloc(WIN);
    seen = malloc(WIN);
    GT_ASSERT(local_buf && expect && seen, "malloc");
    gasnet_node_t peers[2] = {(gasnet_node_t)((gt_me + 1) % gt_n),
                              (gasnet_node_t)gt_me};
    for (int p = 0; p < 2; p++) {
        strided_cases(peers[p]);
        vector_cases(peers[p]);
        indexed_cases(peers[p]);
    }
    free(local_buf);
    free(expect);
    free(seen);
    gt_finish("gt_vis");
    return 0;
}

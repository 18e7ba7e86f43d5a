/* conf_vector.c - conformance: vector (ARMCI giov: address arrays sharing
 * one length) and list (telemem_seg_t triples) put and get, blocking, _nb
 * and _nbi, against a reference loop.  Every case gives each (initiator,
 * target) pair, self included, its own seeded plan: 0..2000 segments of
 * 0..70000 bytes (at most about 1 MiB in all), placed without overlap in a
 * random order with random gaps in the target's slot, in the source area
 * and in a third layout for the get back.  The address arrays are
 * scribbled over as soon as each call returns (the contract lets the
 * caller reuse them).  The target compares its slot, background bytes
 * around the segments included, with the reference image; the initiator
 * compares the data it got back and checks its source area. */
#include "tt.h"

#define MAXSEG 2000
#define MAXLEN 70000
#define BUDGET ((size_t)1 << 20)
#define MARGIN 64
#define SLOT ((size_t)3 << 19) /* 1.5 MiB: budget + gaps + margins */

enum { AREA_R, AREA_P, AREA_G }; /* remote, local source, local get */
enum { FORM_BLOCKING, FORM_NB, FORM_NBI };
static const char *const form_name[] = {"blocking", "nb", "nbi"};

typedef struct {
    int list;           /* 0: vector (one length), 1: list */
    int put_form, get_form;
    size_t count, bytes, total;
    size_t len[MAXSEG];
    size_t off[3][MAXSEG];
    size_t span[3];     /* bytes of each area prepared and checked */
} plan_t;

static uint64_t seed;
static int errors;

static size_t pick_len(tt_rng_t *r)
{
    static const size_t edges[] = {1, 8, 40, 41, 4095, 4096, 16383, 16384,
                                   16385, 65536, MAXLEN};
    switch (tt_rng_below(r, 10)) {
    case 0:
        return 0;
    case 1: case 2: case 3: case 4:
        return tt_rng_range(r, 1, 64);
    case 5: case 6:
        return tt_rng_range(r, 1, 4096);
    case 7:
        return tt_rng_range(r, 4097, MAXLEN);
    default:
        return edges[tt_rng_below(r, sizeof edges / sizeof edges[0])];
    }
}

static void place(tt_rng_t *r, plan_t *p, int area, size_t *perm)
{
    for (size_t i = 0; i < p->count; i++)
        perm[i] = i;
    for (size_t i = p->count; i > 1; i--) {
        size_t j = tt_rng_below(r, i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    size_t cur = MARGIN + tt_rng_below(r, 64);
    for (size_t i = 0; i < p->count; i++) {
        size_t k = perm[i];
        if (tt_rng_below(r, 4) != 0)
            cur += tt_rng_range(r, 1, 64);
        p->off[area][k] = cur;
        cur += p->len[k];
    }
    p->span[area] = cur + MARGIN;
    TT_ASSERT(p->span[area] <= SLOT, "plan generator: span %zu",
              p->span[area]);
}

static void gen_plan(plan_t *p, uint64_t key)
{
    static size_t perm[MAXSEG];
    tt_rng_t r;
    tt_rng_seed(&r, key);
    p->list = (int)tt_rng_below(&r, 2);
    p->put_form = (int)tt_rng_below(&r, 3);
    p->get_form = (int)tt_rng_below(&r, 3);
    switch (tt_rng_below(&r, 9)) {
    case 0: p->count = 0; break;
    case 1: p->count = 1; break;
    case 2: p->count = tt_rng_range(&r, 2, 10); break;
    case 3: case 4: p->count = tt_rng_range(&r, 1, 100); break;
    case 5: p->count = tt_rng_range(&r, 100, MAXSEG); break;
    case 6: p->count = MAXSEG; break;
    default: p->count = tt_rng_range(&r, 1, 500); break;
    }
    p->total = 0;
    if (!p->list) {
        size_t b = pick_len(&r);
        if (p->count && b > BUDGET / p->count)
            b = BUDGET / p->count;
        p->bytes = b;
        for (size_t i = 0; i < p->count; i++)
            p->len[i] = b;
        p->total = b * p->count;
    } else {
        p->bytes = 0;
        for (size_t i = 0; i < p->count; i++) {
            size_t b = pick_len(&r);
            if (b > BUDGET - p->total)
                b = BUDGET - p->total;
            p->len[i] = b;
            p->total += b;
        }
    }
    for (int a = 0; a < 3; a++)
        place(&r, p, a, perm);
}

static void describe(const plan_t *p, char *buf, size_t len)
{
    size_t maxl = 0, zeros = 0;
    for (size_t i = 0; i < p->count; i++) {
        if (p->len[i] > maxl)
            maxl = p->len[i];
        zeros += p->len[i] == 0;
    }
    snprintf(buf, len, "%s, %zu segments, %zu bytes (longest %zu, %zu "
             "empty), put %s, get %s", p->list ? "list" : "vector", p->count,
             p->total, maxl, zeros, form_name[p->put_form],
             form_name[p->get_form]);
}

static uint64_t key_of(int what, int c, int src, int dst)
{
    return tt_key(seed ^ ((uint64_t)what << 56), (uint64_t)c, (uint64_t)src,
                  (uint64_t)dst);
}
enum { K_PLAN = 1, K_SRC, K_BG, K_GET };

static void check(int rc)
{
    if (rc && ++errors > 20)
        TT_FAIL("too many mismatches");
}

/* Per-target call arguments: address arrays or triples. */
typedef struct {
    void *a[MAXSEG];
    void *b[MAXSEG];
    telemem_seg_t segs[MAXSEG];
} args_t;

static void scribble(args_t *x)
{
    memset(x, 0xa5, sizeof *x);
}

/* Issue one put (get == 0) or get of plan p with target t. */
static void issue(const plan_t *p, args_t *x, int t, uint8_t *rbase,
                  uint8_t *lbase, int larea, int get, telemem_handle_t *h,
                  int *need_quiet)
{
    int form = get ? p->get_form : p->put_form;
    for (size_t i = 0; i < p->count; i++) {
        x->a[i] = rbase + p->off[AREA_R][i];
        x->b[i] = lbase + p->off[larea][i];
        x->segs[i].remote = x->a[i];
        x->segs[i].local = x->b[i];
        x->segs[i].bytes = p->len[i];
    }
    void *const *ra = x->a, *const *la = x->b;
    size_t cnt = p->count, b = p->bytes;
    if (!p->list && !get) {
        const void *const *src = (const void *const *)la;
        if (form == FORM_BLOCKING)
            TT_CHECK(telemem_put_vector(t, ra, src, cnt, b));
        else if (form == FORM_NB)
            TT_CHECK(telemem_put_vector_nb(t, ra, src, cnt, b, h));
        else
            TT_CHECK(telemem_put_vector_nbi(t, ra, src, cnt, b));
    } else if (!p->list) {
        const void *const *src = (const void *const *)ra;
        if (form == FORM_BLOCKING)
            TT_CHECK(telemem_get_vector(t, la, src, cnt, b));
        else if (form == FORM_NB)
            TT_CHECK(telemem_get_vector_nb(t, la, src, cnt, b, h));
        else
            TT_CHECK(telemem_get_vector_nbi(t, la, src, cnt, b));
    } else if (!get) {
        if (form == FORM_BLOCKING)
            TT_CHECK(telemem_put_list(t, x->segs, cnt));
        else if (form == FORM_NB)
            TT_CHECK(telemem_put_list_nb(t, x->segs, cnt, h));
        else
            TT_CHECK(telemem_put_list_nbi(t, x->segs, cnt));
    } else {
        if (form == FORM_BLOCKING)
            TT_CHECK(telemem_get_list(t, x->segs, cnt));
        else if (form == FORM_NB)
            TT_CHECK(telemem_get_list_nb(t, x->segs, cnt, h));
        else
            TT_CHECK(telemem_get_list_nbi(t, x->segs, cnt));
    }
    if (form == FORM_NBI || (form == FORM_BLOCKING && !get))
        *need_quiet = 1;
    /* The arrays may be reused as soon as the call returns. */
    scribble(x);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_vector");
    seed = tt_seed();
    int me = tt_me, n = tt_n;
    int ncases = (int)tt_arg_long(argc, argv, "--cases", 24);

    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "out of memory");
    TT_CHECK(telemem_malloc_all((size_t)n * SLOT, bases));
    uint8_t *block = bases[me];
    uint8_t *srcs = aligned_alloc(64, (size_t)n * SLOT);
    uint8_t *gets = aligned_alloc(64, (size_t)n * SLOT);
    uint8_t *img = aligned_alloc(64, SLOT);
    uint8_t *want = aligned_alloc(64, SLOT);
    plan_t *pl = calloc((size_t)n, sizeof *pl);
    plan_t *tp = calloc(1, sizeof *tp);
    args_t *args = calloc((size_t)n, sizeof *args);
    telemem_handle_t *hs = calloc((size_t)n, sizeof *hs);
    TT_ASSERT(srcs && gets && img && want && pl && tp && args && hs,
              "out of memory");
    char desc[256], lab[400];
    size_t segs_moved = 0, bytes_moved = 0;

    for (int c = 0; c < ncases; c++) {
        for (int s = 0; s < n; s++) {
            gen_plan(tp, key_of(K_PLAN, c, s, me));
            tt_pat_fill(block + (size_t)s * SLOT, tp->span[AREA_R],
                        key_of(K_BG, c, s, me), 0);
        }
        for (int t = 0; t < n; t++) {
            gen_plan(&pl[t], key_of(K_PLAN, c, me, t));
            tt_pat_fill(srcs + (size_t)t * SLOT, pl[t].span[AREA_P],
                        key_of(K_SRC, c, me, t), 0);
            tt_pat_fill(gets + (size_t)t * SLOT, pl[t].span[AREA_G],
                        key_of(K_GET, c, me, t), 0);
            hs[t] = TELEMEM_HANDLE_NULL;
            segs_moved += 2 * pl[t].count;
            bytes_moved += 2 * pl[t].total;
        }
        if (me == 0 && c < 3) {
            describe(&pl[n > 1 ? 1 : 0], desc, sizeof desc);
            tt_log("case %d, to rank %d: %s", c, n > 1 ? 1 : 0, desc);
        }
        TT_CHECK(telemem_barrier());

        int need_quiet = 0;
        for (int i = 1; i <= n; i++) {
            int t = (me + i) % n;
            issue(&pl[t], &args[t], t,
                  (uint8_t *)bases[t] + (size_t)me * SLOT,
                  srcs + (size_t)t * SLOT, AREA_P, 0, &hs[t], &need_quiet);
        }
        for (int t = 0; t < n; t++)
            TT_CHECK(telemem_wait(&hs[t]));
        if (need_quiet)
            TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_barrier());

        for (int s = 0; s < n; s++) {
            gen_plan(tp, key_of(K_PLAN, c, s, me));
            tt_pat_fill(want, tp->span[AREA_R], key_of(K_BG, c, s, me), 0);
            tt_pat_fill(img, tp->span[AREA_P], key_of(K_SRC, c, s, me), 0);
            for (size_t i = 0; i < tp->count; i++)
                memcpy(want + tp->off[AREA_R][i], img + tp->off[AREA_P][i],
                       tp->len[i]);
            describe(tp, desc, sizeof desc);
            snprintf(lab, sizeof lab, "case %d: put from rank %d (%s)", c, s,
                     desc);
            check(tt_cmp(block + (size_t)s * SLOT, want, tp->span[AREA_R],
                         lab));
        }

        need_quiet = 0;
        for (int i = 1; i <= n; i++) {
            int t = (me + i) % n;
            issue(&pl[t], &args[t], t,
                  (uint8_t *)bases[t] + (size_t)me * SLOT,
                  gets + (size_t)t * SLOT, AREA_G, 1, &hs[t], &need_quiet);
        }
        for (int t = 0; t < n; t++)
            TT_CHECK(telemem_wait(&hs[t]));
        if (need_quiet)
            TT_CHECK(telemem_quiet());

        for (int t = 0; t < n; t++) {
            plan_t *p = &pl[t];
            uint8_t *src = srcs + (size_t)t * SLOT;
            describe(p, desc, sizeof desc);
            tt_pat_fill(want, p->span[AREA_G], key_of(K_GET, c, me, t), 0);
            for (size_t i = 0; i < p->count; i++)
                memcpy(want + p->off[AREA_G][i], src + p->off[AREA_P][i],
                       p->len[i]);
            snprintf(lab, sizeof lab, "case %d: get from rank %d (%s)", c, t,
                     desc);
            check(tt_cmp(gets + (size_t)t * SLOT, want, p->span[AREA_G],
                         lab));
            snprintf(lab, sizeof lab, "case %d: source area of the put to "
                     "rank %d (%s)", c, t, desc);
            check(tt_pat_verify(src, p->span[AREA_P], key_of(K_SRC, c, me, t),
                                0, lab));
        }
        TT_CHECK(telemem_barrier());
    }
    TT_ASSERT(errors == 0, "%d mismatches (seed 0x%" PRIx64 ")", errors,
              seed);
    if (me == 0)
        tt_log("%d cases, rank 0 moved %zu segments, %zu bytes: all match",
               ncases, segs_moved, bytes_moved);
    TT_CHECK(telemem_free_all(block));
    free(srcs);
    free(gets);
    free(img);
    free(want);
    free(pl);
    free(tp);
    free(args);
    free(hs);
    free(bases);
    tt_finalize();
    return 0;
}

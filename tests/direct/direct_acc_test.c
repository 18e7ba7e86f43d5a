/* direct_acc_test.c - accumulates on the direct path: peers on one node
 * apply accumulates to a telemem_malloc_all block themselves (the window
 * driver), while the AM path (vector accumulates, misaligned areas,
 * registered ranges, the target's own accumulates) and direct atomics hit
 * the same elements at once; every sum must be exact, for every element
 * type.  "nopoll": a target that makes no Telemem call still receives
 * every accumulate (TELEMEM_DIRECT auto or always, shm).  Run with
 * TELEMEM_DIRECT=always, never and auto: the sums must be the same.
 * "race": every rank adds 1 to two elements of rank 1 many times.
 * "mixed" (first): with never on odd ranks and auto on even ones, then
 * the tests named after it (default: mix race).
 * Usage: direct_acc_test [mixed] [mix|nopoll|race]... */
#include <stdatomic.h>
#include <stdbool.h>

#include "tt.h"

#define NTYPES 7
#define NE 64       /* elements of an area */
#define ITERS 120   /* rounds per initiator and target */
#define AREA 2048   /* bytes between areas (>= NE * 16 + 16) */
#define BLOCK (64 * AREA)

static int me, n;

static const telemem_type_t types[NTYPES] = {
    TELEMEM_INT32, TELEMEM_INT64, TELEMEM_UINT64, TELEMEM_FLOAT,
    TELEMEM_DOUBLE, TELEMEM_COMPLEX_FLOAT, TELEMEM_COMPLEX_DOUBLE};
static const char *const names[NTYPES] = {"INT32", "INT64", "UINT64", "FLOAT",
                                          "DOUBLE", "COMPLEX_FLOAT",
                                          "COMPLEX_DOUBLE"};
static const size_t esz[NTYPES] = {4, 8, 8, 4, 8, 8, 16};

static bool config_has(const char *line)
{
    return strstr(telemem_config_string(), line) != NULL;
}

/* Element of type t holding the real value v (complex: (v, 1)). */
static void put_val(int t, double v, void *out)
{
    switch (t) {
    case 0: { int32_t x = (int32_t)v; memcpy(out, &x, 4); break; }
    case 1: { int64_t x = (int64_t)v; memcpy(out, &x, 8); break; }
    case 2: { uint64_t x = (uint64_t)v; memcpy(out, &x, 8); break; }
    case 3: { float x = (float)v; memcpy(out, &x, 4); break; }
    case 4: memcpy(out, &v, 8); break;
    case 5: { float x[2] = {(float)v, 1}; memcpy(out, x, 8); break; }
    default: { double x[2] = {v, 1}; memcpy(out, x, 16); break; }
    }
}

/* The scale of type t: 2 for the real types, (2, 1) for complex. */
static void scale_of(int t, void *out)
{
    put_val(t, 2, out);
}

/* What one accumulate of value v adds (scale * (v or (v, 1))): real part
 * and imaginary part. */
static void contrib(int t, double v, double *re, double *im)
{
    if (t >= 5) { /* (2 + i)(v + i) = (2v - 1) + (v + 2)i */
        *re = 2 * v - 1;
        *im = v + 2;
    } else {
        *re = 2 * v;
        *im = 0;
    }
}

static void get_val(int t, const void *p, double *re, double *im)
{
    *im = 0;
    switch (t) {
    case 0: { int32_t x; memcpy(&x, p, 4); *re = x; break; }
    case 1: { int64_t x; memcpy(&x, p, 8); *re = (double)x; break; }
    case 2: { uint64_t x; memcpy(&x, p, 8); *re = (double)x; break; }
    case 3: { float x; memcpy(&x, p, 4); *re = x; break; }
    case 4: memcpy(re, p, 8); break;
    case 5: { float x[2]; memcpy(x, p, 8); *re = x[0]; *im = x[1]; break; }
    default: { double x[2]; memcpy(x, p, 16); *re = x[0]; *im = x[1]; break; }
    }
}

/* Area a of type t in a block or range: 0 the aligned block area, 1 the
 * misaligned one (half an element off: only the AM path may take it). */
static uint8_t *area(uint8_t *base, int t, int a)
{
    return base + (size_t)(2 * t + a) * AREA + (a ? esz[t] / 2 : 0);
}

/* One round of initiator me to target r on area dst: the form cycles
 * through contiguous (direct where mapped), vector (AM path) and two
 * interleaved strided halves (direct where mapped). */
static void acc_round(int r, int t, uint8_t *dst, const uint8_t *src,
                      const void *scale, int k)
{
    size_t es = esz[t];
    switch (k % 3) {
    case 0:
        if (k % 2)
            TT_CHECK(telemem_acc_nbi(r, types[t], scale, dst, src, NE * es));
        else
            TT_CHECK(telemem_acc(r, types[t], scale, dst, src, NE * es));
        break;
    case 1: {
        void *rd[2] = {dst, dst + NE / 2 * es};
        const void *ls[2] = {src, src + NE / 2 * es};
        TT_CHECK(telemem_acc_vector(r, types[t], scale, rd, ls, 2,
                                    NE / 2 * es));
        break;
    }
    default:
        for (int h = 0; h < 2; h++) {
            /* rows of 4 elements, every other row: half h */
            size_t cnt[2] = {4 * es, NE / 8};
            size_t rs[1] = {8 * es}, ls[1] = {8 * es};
            TT_CHECK(telemem_acc_strided(r, types[t], scale,
                                         dst + (size_t)h * 4 * es, rs,
                                         src + (size_t)h * 4 * es, ls, cnt,
                                         1));
        }
        break;
    }
}

static void check_area(const char *what, int t, const uint8_t *p,
                       double want_re, double want_im, double extra0)
{
    for (size_t i = 0; i < NE; i++) {
        double re, im;
        get_val(t, p + i * esz[t], &re, &im);
        double w = want_re + (i == 0 ? extra0 : 0);
        TT_ASSERT(re == w && im == want_im,
                  "%s %s element %zu: (%.1f, %.1f), want (%.1f, %.1f)", what,
                  names[t], i, re, im, w, want_im);
    }
}

/* Every rank accumulates into every rank (itself included) on both paths
 * at once; INT64 areas also take direct atomics on element 0. */
static void test_mix(uint8_t **bases, uint8_t **regs)
{
    uint8_t src[NE * 16];
    uint8_t scale[16];
    memset(bases[me], 0, BLOCK);
    memset(regs[me], 0, BLOCK);
    TT_CHECK(telemem_barrier());
    for (int k = 0; k < ITERS; k++) {
        for (int j = 0; j < n; j++) {
            int r = (j + k) % n; /* all ranks on one target at once */
            for (int t = 0; t < NTYPES; t++) {
                for (size_t i = 0; i < NE; i++)
                    put_val(t, me + 1, src + i * esz[t]);
                scale_of(t, scale);
                acc_round(r, t, area(bases[r], t, 0), src, scale, k);
                acc_round(r, t, area(bases[r], t, 1), src, scale, k + 1);
                acc_round(r, t, area(regs[r], t, 0), src, scale, k + 2);
                if (t == 1) {
                    int64_t one = me + 1, old;
                    TT_CHECK(telemem_atomic_fetch_add(
                        r, area(bases[r], t, 0), TELEMEM_INT64, &one, &old));
                }
            }
        }
    }
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    for (int t = 0; t < NTYPES; t++) {
        double re = 0, im = 0;
        for (int r = 0; r < n; r++) {
            double cr, ci;
            contrib(t, r + 1, &cr, &ci);
            re += ITERS * cr;
            im += ITERS * ci;
        }
        double atom = t == 1 ? ITERS * (double)n * (n + 1) / 2 : 0;
        check_area("block", t, area(bases[me], t, 0), re, im, atom);
        check_area("misaligned", t, area(bases[me], t, 1), re, im, 0);
        check_area("registered", t, area(regs[me], t, 0), re, im, 0);
    }
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("mix: ok (%d ranks, %d rounds, 7 types, both paths)", n,
               ITERS);
}

/* Every rank adds 1 to one DOUBLE and one INT64 of rank 1's block
 * RACE_ITERS times, all at once; with "mixed" even ranks apply theirs
 * directly while rank 1 (TELEMEM_DIRECT=never) applies its own and the
 * odd ranks' itself: a target that applied them with plain loads and
 * stores would lose some. */
#define RACE_ITERS 20000
static void test_race(uint8_t **bases)
{
    uint8_t *dst = area(bases[1], 0, 0);
    memset(bases[me], 0, BLOCK);
    TT_CHECK(telemem_barrier());
    double one = 1, dscale = 1;
    int64_t ione = 1, iscale = 1;
    for (int k = 0; k < RACE_ITERS; k++) {
        TT_CHECK(telemem_acc(1, TELEMEM_DOUBLE, &dscale, dst, &one, 8));
        TT_CHECK(telemem_acc(1, TELEMEM_INT64, &iscale, dst + 8, &ione, 8));
    }
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    if (me == 1) {
        double d;
        int64_t i;
        memcpy(&d, dst, 8);
        memcpy(&i, dst + 8, 8);
        TT_ASSERT(d == (double)RACE_ITERS * n && i == (int64_t)RACE_ITERS * n,
                  "race: DOUBLE %.0f, INT64 %lld, want %d each", d,
                  (long long)i, RACE_ITERS * n);
        tt_log("race: ok (%d ranks, %d accumulates each)", n, RACE_ITERS);
    }
    TT_CHECK(telemem_barrier());
}

/* Rank 0 makes no Telemem call while the others accumulate into its
 * block: only accumulates applied by the initiators can end its wait. */
static void test_nopoll(uint8_t **bases)
{
    /* Every peer on shm with the direct path on, as every rank sees it. */
    int32_t direct = !config_has("TELEMEM_DIRECT = never");
    for (int r = 0; r < n; r++)
        if (r != me && strcmp(telemem_transport_name(r), "shm") != 0)
            direct = 0;
    TT_CHECK(telemem_allreduce(&direct, 1, TELEMEM_INT32, TELEMEM_MIN));
    if (!direct) {
        if (me == 0)
            tt_log("nopoll: needs the direct path and shm (skipped)");
        TT_CHECK(telemem_barrier());
        return;
    }
    enum { K = 200 };
    int64_t *cnt = (int64_t *)(void *)bases[0];
    double *dsum = (double *)(void *)(bases[0] + 64);
    if (me == 0) {
        *cnt = 0;
        *dsum = 0;
    }
    TT_CHECK(telemem_barrier());
    if (me == 0) {
        int64_t want = (int64_t)K * (n - 1);
        double t0 = tt_now();
        while (__atomic_load_n(cnt, __ATOMIC_ACQUIRE) != want ||
               *(volatile double *)dsum != 0.5 * (double)want) {
            if (tt_now() - t0 > 60)
                TT_FAIL("after 60 s without a Telemem call the block holds "
                        "%lld of %lld integer accumulates and a sum of %.1f "
                        "of %.1f: %s", (long long)*cnt, (long long)want,
                        *dsum, 0.5 * (double)want,
                        *cnt == want ? "an update was lost"
                                     : "they waited for the target's CPU");
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    } else {
        int64_t one = 1, s1 = 1;
        double half = 0.5, ds = 1;
        for (int k = 0; k < K; k++) {
            TT_CHECK(telemem_acc(0, TELEMEM_DOUBLE, &ds, dsum, &half, 8));
            TT_CHECK(telemem_acc(0, TELEMEM_INT64, &s1, cnt, &one, 8));
        }
    }
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("nopoll: ok (the target made no call)");
}

int main(int argc, char **argv)
{
    /* "mixed" (first argument): odd ranks run with TELEMEM_DIRECT=never,
     * even ones with auto; the sums must still be exact (a target whose
     * own setting is never still applies accumulates atomically when a
     * peer may apply them directly). */
    if (argc > 1 && !strcmp(argv[1], "mixed")) {
        const char *r = getenv("TELEMEM_RANK");
        TT_ASSERT(r, "mixed needs TELEMEM_RANK (telemem-run)");
        setenv("TELEMEM_DIRECT", atoi(r) % 2 ? "never" : "auto", 1);
        if (argc == 2) {
            static char *mixed_argv[] = {NULL, "mix", "race", NULL};
            mixed_argv[0] = argv[0];
            argv = mixed_argv;
            argc = 3;
        } else {
            argv[1] = argv[0];
            argv++;
            argc--;
        }
    }
    tt_init(&argc, &argv, "direct_acc_test");
    me = telemem_rank();
    n = telemem_nranks();
    if (n < 2)
        tt_skip("needs 2 or more ranks");
    TT_ASSERT(n <= 64, "too many ranks");
    void *b[64];
    TT_CHECK(telemem_malloc_all(BLOCK, b));
    uint8_t **bases = (uint8_t **)b;
    /* A registered range of every rank (never mapped: the AM path). */
    uint8_t *reg = malloc(BLOCK);
    TT_ASSERT(reg, "malloc");
    TT_CHECK(telemem_register(reg, BLOCK));
    uint64_t ra = (uint64_t)(uintptr_t)reg, rall[64];
    TT_CHECK(telemem_allgather(&ra, rall, 8));
    uint8_t *regs[64];
    for (int r = 0; r < n; r++)
        regs[r] = (uint8_t *)(uintptr_t)rall[r];
    bool all = argc < 2;
    for (int i = 1; i < argc || all; i++) {
        const char *t = all ? "all" : argv[i];
        if (all || !strcmp(t, "mix"))
            test_mix(bases, regs);
        if (all || !strcmp(t, "nopoll"))
            test_nopoll(bases);
        if (all || !strcmp(t, "race"))
            test_race(bases);
        all = false;
    }
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_deregister(reg));
    free(reg);
    TT_CHECK(telemem_free_all(bases[me]));
    tt_finalize();
    return 0;
}

/* conf_atomic.c - conformance: remote atomics on 32- and 64-bit integers
 * (INT32, INT64, UINT64), blocking, _nb and _nbi.
 *   fetch-and-add: every rank adds to a counter on every rank (rank 0's
 *     included) ITERS times per type; each counter must end at exactly
 *     ranks x ITERS increments and the old values seen by all ranks
 *     together must be a permutation of 0..N-1 (64-bit increments are
 *     2^33 + 1, so a truncation to 32 bits shows); also with old = NULL;
 *   wrap-around at INT32_MAX, INT64_MAX and UINT64_MAX;
 *   swap chains: every rank swaps its own tokens into a word on every
 *     rank; the old values and the final value together must hold the
 *     initial value and every token exactly once;
 *   compare-and-swap: a failing compare leaves the word alone and returns
 *     it; then CAS as a spin lock (on rank 0, and on the last rank)
 *     protecting a plain get / +1 / put / quiet of a counter on another
 *     rank, which must end exact;
 *   atomics mixed with accumulates: every rank fetch-adds to and
 *     accumulates into the same INT32 and INT64 words of every rank (on
 *     one node the fetch-adds are hardware atomics of the window driver
 *     and the accumulates are applied by the target's CPU); the words must
 *     end at the exact sum. */
#include "tt.h"

#define ITERS 150     /* fetch-adds per rank, target and type */
#define SWAPS 100     /* swaps per rank, target and width */
#define LOCKS 60      /* lock acquisitions per rank and lock */
#define D64 (((uint64_t)1 << 33) + 1)

/* Word offsets (8-byte words) in every rank's block. */
enum {
    W_F32, W_F64, W_FU64,        /* fetch-add counters */
    W_NULLOLD,                   /* fetch-add with old = NULL */
    W_WRAP32, W_WRAP64, W_WRAPU, /* wrap-around */
    W_S32, W_S64,                /* swap chains */
    W_CAS,                       /* compare-and-swap checks */
    W_LOCK32, W_LOCK64,          /* spin locks */
    W_CNT_A, W_CNT_B,            /* counters the locks protect */
    W_MIX32, W_MIX64,            /* atomics mixed with accumulates */
    NWORDS
};

static int me, n;
static void **bases;

static void *word(int rank, int w)
{
    return (uint64_t *)bases[rank] + w;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* vals[0..cnt) / unit must be exactly 0..cnt-1. */
static void check_perm(uint64_t *vals, size_t cnt, uint64_t unit,
                       const char *what)
{
    qsort(vals, cnt, sizeof *vals, cmp_u64);
    for (size_t i = 0; i < cnt; i++)
        TT_ASSERT(vals[i] == (uint64_t)i * unit,
                  "%s: sorted old value %zu is %" PRIu64 " (= %" PRIu64
                  " units + %" PRIu64 "), expected %zu units: an old value "
                  "was seen twice or never", what, i, vals[i], vals[i] / unit,
                  vals[i] % unit, i);
}

/* One fetch-add of type ty on rank t's word w, in form form. */
static void fadd(int form, int t, int w, telemem_type_t ty, uint64_t inc,
                 void *old, telemem_handle_t *h)
{
    int32_t i32 = (int32_t)inc;
    int64_t i64 = (int64_t)inc;
    const void *v = ty == TELEMEM_INT32 ? (const void *)&i32
                    : ty == TELEMEM_INT64 ? (const void *)&i64
                                          : (const void *)&inc;
    if (form == 0)
        TT_CHECK(telemem_atomic_fetch_add(t, word(t, w), ty, v, old));
    else if (form == 1)
        TT_CHECK(telemem_atomic_fetch_add_nb(t, word(t, w), ty, v, old, h));
    else
        TT_CHECK(telemem_atomic_fetch_add_nbi(t, word(t, w), ty, v, old));
}

static void test_fetch_add(void)
{
    /* olds[type][target][iter] */
    size_t per = (size_t)n * ITERS;
    int32_t *o32 = calloc(per, sizeof *o32);
    int64_t *o64 = calloc(per, sizeof *o64);
    uint64_t *ou = calloc(per, sizeof *ou);
    telemem_handle_t *hs = calloc((size_t)n * 4, sizeof *hs);
    TT_ASSERT(o32 && o64 && ou && hs, "out of memory");

    for (int i = 0; i < ITERS; i++) {
        int form = i % 3;
        for (int k = 1; k <= n; k++) {
            int t = (me + k) % n;
            size_t at = (size_t)t * ITERS + (size_t)i;
            for (int j = 0; j < 4; j++)
                hs[j * n + t] = TELEMEM_HANDLE_NULL;
            fadd(form, t, W_F32, TELEMEM_INT32, 1, &o32[at], &hs[t]);
            fadd(form, t, W_F64, TELEMEM_INT64, D64, &o64[at], &hs[n + t]);
            fadd(form, t, W_FU64, TELEMEM_UINT64, D64, &ou[at],
                 &hs[2 * n + t]);
            fadd(form, t, W_NULLOLD, TELEMEM_UINT64, 1, NULL, &hs[3 * n + t]);
        }
        if (form == 1)
            for (int k = 0; k < 4 * n; k++)
                TT_CHECK(telemem_wait(&hs[k]));
        else if (form == 2)
            TT_CHECK(telemem_quiet());
    }
    TT_CHECK(telemem_barrier());

    /* Every rank's old values, then each rank checks its own counters. */
    int32_t *a32 = calloc(per * (size_t)n, sizeof *a32);
    int64_t *a64 = calloc(per * (size_t)n, sizeof *a64);
    uint64_t *au = calloc(per * (size_t)n, sizeof *au);
    uint64_t *v = calloc(per, sizeof *v);
    TT_ASSERT(a32 && a64 && au && v, "out of memory");
    TT_CHECK(telemem_allgather(o32, a32, per * sizeof *o32));
    TT_CHECK(telemem_allgather(o64, a64, per * sizeof *o64));
    TT_CHECK(telemem_allgather(ou, au, per * sizeof *ou));
    char what[128];
    for (int type = 0; type < 3; type++) {
        size_t k = 0;
        for (int s = 0; s < n; s++)
            for (int i = 0; i < ITERS; i++) {
                size_t at = (size_t)s * per + (size_t)me * ITERS + (size_t)i;
                v[k++] = type == 0 ? (uint64_t)(uint32_t)a32[at]
                         : type == 1 ? (uint64_t)a64[at] : au[at];
            }
        snprintf(what, sizeof what, "fetch-add %s on rank %d",
                 type == 0 ? "INT32" : type == 1 ? "INT64" : "UINT64", me);
        check_perm(v, per, type == 0 ? 1 : D64, what);
    }
    uint64_t *w = bases[me];
    int32_t f32;
    memcpy(&f32, &w[W_F32], 4);
    TT_ASSERT(f32 == (int32_t)per, "INT32 counter on rank %d is %" PRId32
              ", expected %zu", me, f32, per);
    TT_ASSERT(w[W_F64] == per * D64 && w[W_FU64] == per * D64,
              "64-bit counters on rank %d: %" PRIu64 " and %" PRIu64
              ", expected %" PRIu64, me, w[W_F64], w[W_FU64], per * D64);
    TT_ASSERT(w[W_NULLOLD] == per, "counter added to with old = NULL on "
              "rank %d is %" PRIu64 ", expected %zu", me, w[W_NULLOLD], per);
    if (me == 0)
        tt_log("fetch-add: %zu increments per counter and type, old values "
               "a permutation on every rank", per);
    free(o32);
    free(o64);
    free(ou);
    free(hs);
    free(a32);
    free(a64);
    free(au);
    free(v);
}

#define MIXES 400
static void test_mix(void)
{
    TT_CHECK(telemem_barrier());
    int32_t one32 = 1, three32 = 3, s32 = 1;
    int64_t d64 = (int64_t)D64, t64 = 3 * (int64_t)D64, s64 = 1;
    for (int i = 0; i < MIXES; i++) {
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            if (i % 2 == 0) {
                TT_CHECK(telemem_atomic_fetch_add(t, word(t, W_MIX32),
                                                  TELEMEM_INT32, &one32,
                                                  NULL));
                TT_CHECK(telemem_atomic_fetch_add_nbi(t, word(t, W_MIX64),
                                                      TELEMEM_INT64, &d64,
                                                      NULL));
            } else {
                TT_CHECK(telemem_acc_nbi(t, TELEMEM_INT32, &s32,
                                         word(t, W_MIX32), &three32, 4));
                TT_CHECK(telemem_acc_nbi(t, TELEMEM_INT64, &s64,
                                         word(t, W_MIX64), &t64, 8));
            }
        }
        if (i % 16 == 15)
            TT_CHECK(telemem_quiet());
    }
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    uint64_t *w = bases[me];
    int32_t m32;
    memcpy(&m32, &w[W_MIX32], 4);
    int64_t want32 = (int64_t)n * (MIXES / 2) * (1 + 3);
    uint64_t want64 = (uint64_t)n * (MIXES / 2) * 4 * D64;
    TT_ASSERT(m32 == want32 && w[W_MIX64] == want64,
              "atomics mixed with accumulates on rank %d: INT32 %" PRId32
              " (expected %" PRId64 "), INT64 %" PRIu64 " (expected %" PRIu64
              "): an update was lost", me, m32, want32, w[W_MIX64], want64);
    if (me == 0)
        tt_log("atomics mixed with accumulates: exact on every rank");
}

static void test_wrap(void)
{
    int t = n - 1;
    TT_CHECK(telemem_barrier());
    if (me == 0) {
        int32_t one32 = 1, old32 = 0, now32 = 0;
        int64_t one64 = 1, old64 = 0, now64 = 0;
        uint64_t two = 2, oldu = 0, nowu = 0;
        TT_CHECK(telemem_atomic_fetch_add(t, word(t, W_WRAP32), TELEMEM_INT32,
                                          &one32, &old32));
        TT_CHECK(telemem_atomic_fetch_add(t, word(t, W_WRAP64), TELEMEM_INT64,
                                          &one64, &old64));
        TT_CHECK(telemem_atomic_fetch_add(t, word(t, W_WRAPU), TELEMEM_UINT64,
                                          &two, &oldu));
        TT_ASSERT(old32 == INT32_MAX && old64 == INT64_MAX &&
                  oldu == UINT64_MAX, "wrap: old values %" PRId32 " %" PRId64
                  " %" PRIu64, old32, old64, oldu);
        TT_CHECK(telemem_get(t, &now32, word(t, W_WRAP32), 4));
        TT_CHECK(telemem_get(t, &now64, word(t, W_WRAP64), 8));
        TT_CHECK(telemem_get(t, &nowu, word(t, W_WRAPU), 8));
        TT_ASSERT(now32 == INT32_MIN && now64 == INT64_MIN && nowu == 1,
                  "wrap: new values %" PRId32 " %" PRId64 " %" PRIu64
                  ", expected INT32_MIN, INT64_MIN, 1", now32, now64, nowu);
        tt_log("fetch-add wraps at INT32_MAX, INT64_MAX, UINT64_MAX");
    }
    TT_CHECK(telemem_barrier());
}

static void test_swap(void)
{
    uint32_t *o32 = calloc((size_t)n * SWAPS, sizeof *o32);
    uint64_t *o64 = calloc((size_t)n * SWAPS, sizeof *o64);
    telemem_handle_t *hs = calloc((size_t)n * 2, sizeof *hs);
    TT_ASSERT(o32 && o64 && hs, "out of memory");
    for (int i = 0; i < SWAPS; i++) {
        int form = i % 3;
        for (int k = 1; k <= n; k++) {
            int t = (me + k) % n;
            size_t at = (size_t)t * SWAPS + (size_t)i;
            /* Unique tokens, never the initial values. */
            int32_t tok32 = (int32_t)((((uint32_t)me << 16) | (uint32_t)i) +
                                      1);
            int64_t tok64 = (int64_t)((((uint64_t)me + 1) << 40) |
                                      ((uint64_t)i << 3) | 5);
            hs[t] = hs[n + t] = TELEMEM_HANDLE_NULL;
            void *w32 = word(t, W_S32), *w64 = word(t, W_S64);
            if (form == 0) {
                TT_CHECK(telemem_atomic_swap(t, w32, TELEMEM_INT32, &tok32,
                                             &o32[at]));
                TT_CHECK(telemem_atomic_swap(t, w64, TELEMEM_INT64, &tok64,
                                             &o64[at]));
            } else if (form == 1) {
                TT_CHECK(telemem_atomic_swap_nb(t, w32, TELEMEM_INT32, &tok32,
                                                &o32[at], &hs[t]));
                TT_CHECK(telemem_atomic_swap_nb(t, w64, TELEMEM_INT64, &tok64,
                                                &o64[at], &hs[n + t]));
            } else {
                TT_CHECK(telemem_atomic_swap_nbi(t, w32, TELEMEM_INT32,
                                                 &tok32, &o32[at]));
                TT_CHECK(telemem_atomic_swap_nbi(t, w64, TELEMEM_INT64,
                                                 &tok64, &o64[at]));
            }
        }
        if (form == 1)
            for (int k = 0; k < 2 * n; k++)
                TT_CHECK(telemem_wait(&hs[k]));
        else if (form == 2)
            TT_CHECK(telemem_quiet());
    }
    TT_CHECK(telemem_barrier());

    size_t per = (size_t)n * SWAPS, all = per * (size_t)n;
    uint32_t *a32 = calloc(all, sizeof *a32);
    uint64_t *a64 = calloc(all, sizeof *a64);
    uint64_t *got = calloc(per + 1, sizeof *got),
             *exp = calloc(per + 1, sizeof *exp);
    TT_ASSERT(a32 && a64 && got && exp, "out of memory");
    TT_CHECK(telemem_allgather(o32, a32, per * sizeof *o32));
    TT_CHECK(telemem_allgather(o64, a64, per * sizeof *o64));
    uint64_t *w = bases[me];
    for (int wide = 0; wide < 2; wide++) {
        size_t k = 0;
        for (int s = 0; s < n; s++)
            for (int i = 0; i < SWAPS; i++) {
                size_t at = (size_t)s * per + (size_t)me * SWAPS + (size_t)i;
                got[k] = wide ? a64[at] : a32[at];
                exp[k++] = wide ? ((((uint64_t)s + 1) << 40) |
                                   ((uint64_t)i << 3) | 5)
                                : ((((uint32_t)s << 16) | (uint32_t)i) + 1);
            }
        uint32_t f32;
        memcpy(&f32, &w[W_S32], 4);
        got[k] = wide ? w[W_S64] : f32;     /* the final value */
        exp[k] = wide ? 0x0123456789abcdefull : 0x89abcdefu; /* initial */
        qsort(got, per + 1, sizeof *got, cmp_u64);
        qsort(exp, per + 1, sizeof *exp, cmp_u64);
        for (size_t i = 0; i <= per; i++)
            TT_ASSERT(got[i] == exp[i], "swap chain (%s) on rank %d: the "
                      "old values and the final value are not the initial "
                      "value and every token once (sorted position %zu: %"
                      PRIx64 ", expected %" PRIx64 ")",
                      wide ? "INT64" : "INT32", me, i, got[i], exp[i]);
    }
    if (me == 0)
        tt_log("swap: %zu swaps per word, every value handed on once", per);
    free(o32);
    free(o64);
    free(hs);
    free(a32);
    free(a64);
    free(got);
    free(exp);
}

static void test_cas_basic(void)
{
    /* Each rank in turn on the next rank's word: a failing compare, then a
     * succeeding one, in all three forms. */
    int t = (me + 1) % n;
    for (int turn = 0; turn < n; turn++) {
        TT_CHECK(telemem_barrier());
        if (turn != me)
            continue;
        for (int form = 0; form < 3; form++) {
            uint64_t cur = 0, wrong, val, old = 7, now;
            TT_CHECK(telemem_get(t, &cur, word(t, W_CAS), 8));
            wrong = cur ^ ((uint64_t)1 << 63);
            val = tt_key(1, (uint64_t)me, (uint64_t)form, 0);
            for (int pass = 0; pass < 2; pass++) {
                const uint64_t *cmp = pass ? &cur : &wrong;
                telemem_handle_t h = TELEMEM_HANDLE_NULL;
                if (form == 0)
                    TT_CHECK(telemem_atomic_cswap(t, word(t, W_CAS),
                                                  TELEMEM_UINT64, cmp, &val,
                                                  &old));
                else if (form == 1) {
                    TT_CHECK(telemem_atomic_cswap_nb(t, word(t, W_CAS),
                                                     TELEMEM_UINT64, cmp,
                                                     &val, &old, &h));
                    TT_CHECK(telemem_wait(&h));
                } else {
                    TT_CHECK(telemem_atomic_cswap_nbi(t, word(t, W_CAS),
                                                      TELEMEM_UINT64, cmp,
                                                      &val, &old));
                    TT_CHECK(telemem_fence(t));
                }
                TT_ASSERT(old == cur, "cswap (form %d, compare %s) returned "
                          "old %" PRIx64 ", the word held %" PRIx64, form,
                          pass ? "equal" : "different", old, cur);
                TT_CHECK(telemem_get(t, &now, word(t, W_CAS), 8));
                TT_ASSERT(now == (pass ? val : cur), "cswap (form %d, "
                          "compare %s): word is %" PRIx64 ", expected %"
                          PRIx64, form, pass ? "equal" : "different", now,
                          pass ? val : cur);
            }
        }
    }
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("cswap: failing compares change nothing, equal ones swap");
}

/* CAS spin lock on lock_rank's word; inside, a plain read-modify-write of
 * a counter on cnt_rank. */
static void test_cas_lock(int lock_rank, int lw, telemem_type_t ty,
                          int cnt_rank, int cw)
{
    uint64_t spins = 0;
    for (int i = 0; i < LOCKS; i++) {
        int form = i % 3;
        int32_t z32 = 0, me32 = me + 1, old32 = -1;
        int64_t z64 = 0, me64 = (int64_t)me + 1 + ((int64_t)1 << 40),
                old64 = -1;
        const void *zero = ty == TELEMEM_INT32 ? (void *)&z32 : (void *)&z64;
        const void *mine = ty == TELEMEM_INT32 ? (void *)&me32 : (void *)&me64;
        void *old = ty == TELEMEM_INT32 ? (void *)&old32 : (void *)&old64;
        void *lock = word(lock_rank, lw);
        for (;;) {
            telemem_handle_t h;
            if (form == 0)
                TT_CHECK(telemem_atomic_cswap(lock_rank, lock, ty, zero,
                                              mine, old));
            else if (form == 1) {
                TT_CHECK(telemem_atomic_cswap_nb(lock_rank, lock, ty, zero,
                                                 mine, old, &h));
                TT_CHECK(telemem_wait(&h));
            } else {
                TT_CHECK(telemem_atomic_cswap_nbi(lock_rank, lock, ty, zero,
                                                  mine, old));
                TT_CHECK(telemem_fence(lock_rank));
            }
            int64_t o = ty == TELEMEM_INT32 ? old32 : old64;
            if (o == 0)
                break;
            TT_ASSERT(o != (ty == TELEMEM_INT32 ? me32 : me64),
                      "lock already held by this rank");
            spins++;
            TT_POLL();
        }
        uint64_t x = 0;
        TT_CHECK(telemem_get(cnt_rank, &x, word(cnt_rank, cw), 8));
        x++;
        TT_CHECK(telemem_put(cnt_rank, word(cnt_rank, cw), &x, 8));
        TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_atomic_swap(lock_rank, lock, ty, zero, old));
        int64_t o = ty == TELEMEM_INT32 ? old32 : old64;
        TT_ASSERT(o == (ty == TELEMEM_INT32 ? me32 : me64), "unlock: the "
                  "lock word held %" PRId64 ", not this rank's mark", o);
    }
    TT_CHECK(telemem_barrier());
    if (me == cnt_rank) {
        uint64_t x = ((uint64_t *)bases[me])[cw];
        TT_ASSERT(x == (uint64_t)n * LOCKS, "counter protected by the %s "
                  "CAS lock on rank %d ended at %" PRIu64 ", expected %d",
                  ty == TELEMEM_INT32 ? "INT32" : "INT64", lock_rank, x,
                  n * LOCKS);
        tt_log("CAS lock (%s) on rank %d: counter on rank %d exact (%"
               PRIu64 ")", ty == TELEMEM_INT32 ? "INT32" : "INT64",
               lock_rank, cnt_rank, x);
    }
    TT_CHECK(telemem_barrier());
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_atomic");
    me = tt_me;
    n = tt_n;
    bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "out of memory");
    TT_CHECK(telemem_malloc_all(NWORDS * 8, bases));
    uint64_t *w = bases[me];
    memset(w, 0, NWORDS * 8);
    int32_t m32 = INT32_MAX;
    memcpy(&w[W_WRAP32], &m32, 4);
    w[W_WRAP64] = (uint64_t)INT64_MAX;
    w[W_WRAPU] = UINT64_MAX;
    uint32_t s32 = 0x89abcdefu;
    memcpy(&w[W_S32], &s32, 4);
    w[W_S64] = 0x0123456789abcdefull;
    w[W_CAS] = tt_key(2, (uint64_t)me, 0, 0);
    TT_CHECK(telemem_barrier());

    test_fetch_add();
    test_wrap();
    test_swap();
    test_cas_basic();
    test_cas_lock(0, W_LOCK32, TELEMEM_INT32, n - 1, W_CNT_A);
    test_cas_lock(n - 1, W_LOCK64, TELEMEM_INT64, 0, W_CNT_B);
    test_mix();

    TT_CHECK(telemem_free_all(w));
    free(bases);
    tt_finalize();
    return 0;
}

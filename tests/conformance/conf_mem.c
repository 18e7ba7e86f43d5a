/* conf_mem.c - conformance: memory.  telemem_malloc_all() with different
 * sizes per rank (0 included): alignment, bases[] identical on all ranks,
 * put/get into every rank's block; free_all/malloc_all in a loop of 50
 * with two live blocks; telemem_register() of stack and heap memory (address
 * exchanged with allgather), puts and gets into it, and after
 * telemem_deregister() the target refuses (TELEMEM_ERR_OUT_OF_RANGE). */
#include "tt.h"

static int me, n;
static uint64_t seed;

/* bases[] must be the same on every rank, 64-byte aligned, non-NULL. */
static void check_bases(void **bases, const char *what)
{
    void **all = malloc((size_t)n * (size_t)n * sizeof(void *));
    TT_CHECK(telemem_allgather(bases, all, (size_t)n * sizeof(void *)));
    for (int r = 0; r < n; r++)
        for (int i = 0; i < n; i++)
            TT_ASSERT(all[(size_t)r * n + i] == bases[i],
                      "%s: rank %d sees bases[%d]=%p, I see %p", what, r, i,
                      all[(size_t)r * n + i], bases[i]);
    for (int i = 0; i < n; i++) {
        TT_ASSERT(bases[i] != NULL, "%s: bases[%d] is NULL", what, i);
        TT_ASSERT(((uintptr_t)bases[i] & 63) == 0,
                  "%s: bases[%d]=%p not 64-byte aligned", what, i, bases[i]);
    }
    free(all);
}

/* Every rank writes its slice of every block, then reads it back; the
 * owner verifies its whole block. */
static void exercise(void **bases, const size_t *sizes, uint64_t tag,
                     const char *what)
{
    uint8_t *buf = malloc(sizes[me] + 64);
    for (int t = 0; t < n; t++) {
        size_t sl = sizes[t] / (size_t)n;
        uint8_t *dst = (uint8_t *)bases[t] + sl * (size_t)me;
        if (sl == 0) {
            /* A 0-byte operation is valid even on a 0-byte block. */
            TT_CHECK(telemem_put(t, bases[t], buf, 0));
            TT_CHECK(telemem_get(t, buf, bases[t], 0));
            continue;
        }
        uint8_t *src = malloc(sl);
        tt_pat_fill(src, sl, tt_key(seed, tag, t, me), 0);
        TT_CHECK(telemem_put(t, dst, src, sl));
        free(src);
    }
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    size_t sl = sizes[me] / (size_t)n;
    for (int r = 0; r < n && sl; r++) {
        char lab[100];
        snprintf(lab, sizeof lab, "%s: my block, slice of rank %d", what, r);
        TT_ASSERT(!tt_pat_verify((uint8_t *)bases[me] + sl * (size_t)r, sl,
                                 tt_key(seed, tag, me, r), 0, lab),
                  "%s", lab);
    }
    for (int t = 0; t < n; t++) {
        size_t tsl = sizes[t] / (size_t)n;
        if (!tsl)
            continue;
        uint8_t *got = malloc(tsl);
        char lab[100];
        TT_CHECK(telemem_get(t, got, (uint8_t *)bases[t] + tsl * (size_t)me,
                             tsl));
        snprintf(lab, sizeof lab, "%s: get back from rank %d", what, t);
        TT_ASSERT(!tt_pat_verify(got, tsl, tt_key(seed, tag, t, me), 0, lab),
                  "%s", lab);
        free(got);
    }
    free(buf);
    TT_CHECK(telemem_barrier());
}

static size_t size_of(int iter, int r)
{
    if ((iter + r) % 4 == 1)
        return 0;
    return (size_t)(((iter * 7 + r * 13) % 5) * 4096 + 64 * (r + 1) + 3 * iter);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_mem");
    me = tt_me;
    n = tt_n;
    seed = tt_seed();
    void **a = calloc((size_t)n, sizeof *a), **b = calloc((size_t)n, sizeof *b);
    size_t *sa = calloc((size_t)n, sizeof *sa), *sb = calloc((size_t)n, sizeof *sb);

    /* A: one call with different sizes (rank r%3==1 gives 0), one where
     * every rank gives 0. */
    for (int r = 0; r < n; r++)
        sa[r] = r % 3 == 1 ? 0 : 4096 * (size_t)(r + 1) + 3 * (size_t)r;
    TT_CHECK(telemem_malloc_all(sa[me], a));
    check_bases(a, "malloc_all, mixed sizes");
    exercise(a, sa, 100, "mixed sizes");
    for (int r = 0; r < n; r++)
        sb[r] = 0;
    TT_CHECK(telemem_malloc_all(0, b));
    check_bases(b, "malloc_all(0)");
    for (int r = 0; r < n; r++)
        TT_ASSERT(b[r] != a[r], "0-byte block of rank %d has the address of "
                  "another live block (%p)", r, b[r]);
    exercise(b, sb, 101, "all zero");
    TT_CHECK(telemem_free_all(b[me]));
    TT_CHECK(telemem_free_all(a[me]));

    /* B: 50 rounds of two live blocks, freed in alternating order. */
    for (int it = 0; it < 50; it++) {
        for (int r = 0; r < n; r++) {
            sa[r] = size_of(it, r);
            sb[r] = size_of(it + 2, r);
        }
        TT_CHECK(telemem_malloc_all(sa[me], a));
        TT_CHECK(telemem_malloc_all(sb[me], b));
        check_bases(a, "loop, block A");
        check_bases(b, "loop, block B");
        for (int r = 0; r < n; r++)
            TT_ASSERT(a[r] != b[r], "round %d: rank %d's two live blocks "
                      "share address %p", it, r, a[r]);
        exercise(a, sa, 200 + (uint64_t)it * 2, "loop, block A");
        exercise(b, sb, 201 + (uint64_t)it * 2, "loop, block B");
        if (it & 1) {
            TT_CHECK(telemem_free_all(a[me]));
            TT_CHECK(telemem_free_all(b[me]));
        } else {
            TT_CHECK(telemem_free_all(b[me]));
            TT_CHECK(telemem_free_all(a[me]));
        }
    }
    if (me == 0)
        tt_log("50 malloc_all/free_all rounds done");

    /* C: registered stack and heap memory. */
    {
        enum { SN = 4096, HN = 100000 };
        uint8_t stackbuf[SN + 2 * TT_GUARD];
        uint8_t *heapbuf = malloc(HN + 2 * TT_GUARD);
        uint8_t *sreg = stackbuf + TT_GUARD, *hreg = heapbuf + TT_GUARD;
        int left = (me + n - 1) % n, right = (me + 1) % n;
        tt_guard_set(stackbuf, TT_GUARD, tt_key(seed, 300, me, 0));
        tt_guard_set(sreg + SN, TT_GUARD, tt_key(seed, 300, me, 1));
        tt_guard_set(heapbuf, TT_GUARD, tt_key(seed, 300, me, 2));
        tt_guard_set(hreg + HN, TT_GUARD, tt_key(seed, 300, me, 3));
        memset(sreg, 0, SN);
        memset(hreg, 0, HN);
        TT_CHECK(telemem_register(sreg, SN));
        TT_CHECK(telemem_register(hreg, HN));
        void *mine[2] = {sreg, hreg};
        void **addrs = malloc((size_t)n * sizeof mine);
        TT_CHECK(telemem_allgather(mine, addrs, sizeof mine));
        TT_CHECK(telemem_barrier());

        /* Put into the right neighbour's regions (whole ranges). */
        uint8_t *src = malloc(HN);
        tt_pat_fill(src, SN, tt_key(seed, 301, me, 0), 0);
        TT_CHECK(telemem_put(right, addrs[2 * right], src, SN));
        tt_pat_fill(src, HN, tt_key(seed, 302, me, 0), 0);
        TT_CHECK(telemem_put(right, addrs[2 * right + 1], src, HN));
        TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_barrier());
        TT_ASSERT(!tt_pat_verify(sreg, SN, tt_key(seed, 301, left, 0), 0,
                                 "registered stack memory"), "stack region");
        TT_ASSERT(!tt_pat_verify(hreg, HN, tt_key(seed, 302, left, 0), 0,
                                 "registered heap memory"), "heap region");
        TT_ASSERT(!tt_guard_check(stackbuf, TT_GUARD, tt_key(seed, 300, me, 0),
                                  "stack guard before") &&
                  !tt_guard_check(sreg + SN, TT_GUARD, tt_key(seed, 300, me, 1),
                                  "stack guard after") &&
                  !tt_guard_check(heapbuf, TT_GUARD, tt_key(seed, 300, me, 2),
                                  "heap guard before") &&
                  !tt_guard_check(hreg + HN, TT_GUARD, tt_key(seed, 300, me, 3),
                                  "heap guard after"),
                  "guards around registered regions");
        /* Get from the left neighbour's regions: what its left wrote. */
        int ll = (left + n - 1) % n;
        TT_CHECK(telemem_get(left, src, (uint8_t *)addrs[2 * left] + 1,
                             SN - 2));
        TT_ASSERT(!tt_pat_verify(src, SN - 2, tt_key(seed, 301, ll, 0), 1,
                                 "get from registered stack memory"), "get");
        TT_CHECK(telemem_get(left, src, addrs[2 * left + 1], HN));
        TT_ASSERT(!tt_pat_verify(src, HN, tt_key(seed, 302, ll, 0), 0,
                                 "get from registered heap memory"), "get");
        TT_CHECK(telemem_barrier());

        /* Deregister; then the target refuses. */
        TT_CHECK(telemem_deregister(sreg));
        TT_CHECK(telemem_deregister(hreg));
        TT_EXPECT(telemem_deregister(hreg), TELEMEM_ERR_NOT_FOUND);
        TT_CHECK(telemem_barrier());
        memset(src, 0x5a, HN);
        if (right == me) {
            TT_EXPECT(telemem_put(me, addrs[2 * me + 1], src, 64),
                      TELEMEM_ERR_OUT_OF_RANGE);
        } else {
            TT_CHECK(telemem_put(right, addrs[2 * right + 1], src, 64));
            TT_EXPECT(telemem_quiet(), TELEMEM_ERR_OUT_OF_RANGE);
        }
        TT_CHECK(telemem_quiet());
        uint8_t got[64];
        memset(got, 0x77, sizeof got);
        TT_EXPECT(telemem_get(left, got, addrs[2 * left], 64),
                  TELEMEM_ERR_OUT_OF_RANGE);
        for (size_t i = 0; i < sizeof got; i++)
            TT_ASSERT(got[i] == 0x77, "refused get wrote its destination");
        TT_CHECK(telemem_barrier());
        TT_ASSERT(!tt_pat_verify(hreg, HN, tt_key(seed, 302, left, 0), 0,
                                 "deregistered heap memory after refused put"),
                  "refused put wrote the target");
        TT_CHECK(telemem_barrier());
        free(src);
        free(addrs);
        free(heapbuf);
    }

    free(a);
    free(b);
    free(sa);
    free(sb);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

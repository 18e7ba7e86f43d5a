/* conf_nb.c - conformance: completion of non-blocking operations.
 * put_nb + wait means complete at the target (checked there after a bare
 * barrier, no quiet); get_nb completed by a telemem_test() loop; get_nbi
 * and put_nbi completed by quiet and by fence(rank); TELEMEM_HANDLE_NULL and
 * spent handles; 10,000 outstanding handles at once. */
#include "tt.h"

static const size_t sizes[] = {0, 1, 8, 41, 4033, 16321, 16385, 65537,
                               1048579};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define SLOT (((1048579 + 2 * TT_GUARD + 64) + 63) & ~63) /* keeps 8-byte words aligned */
#define MANY 10000

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_nb");
    uint64_t seed = tt_seed();
    int me = tt_me, n = tt_n;
    int right = (me + 1) % n, left = (me + n - 1) % n;

    /* Block: NSIZES slots (targets of the left neighbour), then the
     * "many" area of MANY 8-byte words, then a source area read by gets. */
    size_t many_off = NSIZES * SLOT;
    size_t src_off = many_off + MANY * 8;
    size_t blk = src_off + NSIZES * SLOT;
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(blk, bases));
    uint8_t *mine = bases[me], *rb = bases[right], *lb = bases[left];
    for (size_t k = 0; k < NSIZES; k++)
        tt_pat_fill(mine + src_off + k * SLOT, sizes[k],
                    tt_key(seed, 3, me, k), 0);
    uint8_t *src = malloc(SLOT);
    int errors = 0;

    /* 1. TELEMEM_HANDLE_NULL is complete; waiting/testing it is OK. */
    telemem_handle_t hn = TELEMEM_HANDLE_NULL;
    TT_CHECK(telemem_wait(&hn));
    int done = 0;
    TT_CHECK(telemem_test(&hn, &done));
    TT_ASSERT(done == 1, "test(HANDLE_NULL) done=%d", done);

    /* 2. put_nb + wait: complete at the target without quiet. */
    for (int phase = 0; phase < 2; phase++) {
        for (size_t k = 0; k < NSIZES; k++) {
            uint8_t *slot = mine + k * SLOT;
            tt_guard_set(slot, TT_GUARD, tt_key(seed, 4, me, k));
            memset(slot + TT_GUARD, 0, sizes[k]);
            tt_guard_set(slot + TT_GUARD + sizes[k], TT_GUARD,
                         tt_key(seed, 5, me, k));
        }
        TT_CHECK(telemem_barrier());
        for (size_t k = 0; k < NSIZES; k++) {
            telemem_handle_t h;
            tt_pat_fill(src + 1, sizes[k], tt_key(seed, 6 + phase, me, k), 0);
            TT_CHECK(telemem_put_nb(right, rb + k * SLOT + TT_GUARD, src + 1,
                                    sizes[k], &h));
            if (phase == 0) {
                TT_CHECK(telemem_wait(&h));
            } else {
                for (done = 0; !done;)
                    TT_CHECK(telemem_test(&h, &done));
            }
            /* A spent handle waits and tests OK at once. */
            telemem_handle_t copy = h;
            TT_CHECK(telemem_wait(&h));
            TT_CHECK(telemem_wait(&copy));
            done = 0;
            TT_CHECK(telemem_test(&h, &done));
            TT_ASSERT(done == 1, "test(spent handle) done=%d", done);
        }
        /* No quiet: wait alone made the data complete at the target. */
        TT_CHECK(telemem_barrier());
        for (size_t k = 0; k < NSIZES; k++) {
            char lab[80];
            uint8_t *slot = mine + k * SLOT;
            snprintf(lab, sizeof lab, "put_nb+%s size %zu",
                     phase ? "test" : "wait", sizes[k]);
            errors |= tt_pat_verify(slot + TT_GUARD, sizes[k],
                                    tt_key(seed, 6 + phase, left, k), 0, lab);
            errors |= tt_guard_check(slot, TT_GUARD, tt_key(seed, 4, me, k),
                                     lab);
            errors |= tt_guard_check(slot + TT_GUARD + sizes[k], TT_GUARD,
                                     tt_key(seed, 5, me, k), lab);
        }
        TT_CHECK(telemem_barrier());
    }
    TT_ASSERT(!errors, "put_nb data wrong");

    /* 3. get_nb with a test() loop, and with wait, from left and self. */
    for (size_t k = 0; k < NSIZES; k++) {
        for (int who = 0; who < 2; who++) {
            int t = who ? me : left;
            uint8_t *tb = who ? mine : lb;
            tt_gbuf_t d;
            char lab[80];
            tt_gbuf_alloc(&d, sizes[k], 3, tt_key(seed, 8, me, k));
            telemem_handle_t h;
            TT_CHECK(telemem_get_nb(t, d.p, tb + src_off + k * SLOT, sizes[k],
                                    &h));
            if (k & 1) {
                for (done = 0; !done;)
                    TT_CHECK(telemem_test(&h, &done));
            } else {
                TT_CHECK(telemem_wait(&h));
            }
            snprintf(lab, sizeof lab, "get_nb from %d size %zu", t, sizes[k]);
            TT_ASSERT(!tt_pat_verify(d.p, sizes[k], tt_key(seed, 3, t, k), 0,
                                     lab) && !tt_gbuf_check(&d, lab),
                      "%s", lab);
            tt_gbuf_free(&d);
        }
    }

    /* 4. get_nbi completed by quiet; then by fence(left). */
    for (int via_fence = 0; via_fence < 2; via_fence++) {
        tt_gbuf_t d[NSIZES];
        for (size_t k = 0; k < NSIZES; k++) {
            tt_gbuf_alloc(&d[k], sizes[k], 5, tt_key(seed, 9, me, k));
            TT_CHECK(telemem_get_nbi(left, d[k].p, lb + src_off + k * SLOT,
                                     sizes[k]));
        }
        if (via_fence)
            TT_CHECK(telemem_fence(left));
        else
            TT_CHECK(telemem_quiet());
        for (size_t k = 0; k < NSIZES; k++) {
            char lab[80];
            snprintf(lab, sizeof lab, "get_nbi+%s size %zu",
                     via_fence ? "fence" : "quiet", sizes[k]);
            TT_ASSERT(!tt_pat_verify(d[k].p, sizes[k],
                                     tt_key(seed, 3, left, k), 0, lab) &&
                          !tt_gbuf_check(&d[k], lab),
                      "%s", lab);
            tt_gbuf_free(&d[k]);
        }
    }

    /* 5. put_nbi to the right completed by fence(right) alone (while
     * put_nbi to self stays outstanding), seen by the target after a bare
     * barrier; the self puts are completed by quiet afterwards. */
    {
        uint8_t *bufs[NSIZES];
        TT_CHECK(telemem_barrier());
        for (size_t k = 0; k < NSIZES; k++) {
            bufs[k] = malloc(sizes[k] + 1);
            tt_pat_fill(bufs[k], sizes[k], tt_key(seed, 10, me, k), 0);
            TT_CHECK(telemem_put_nbi(right, rb + k * SLOT + TT_GUARD, bufs[k],
                                     sizes[k]));
        }
        uint8_t *selfbuf = malloc(MANY * 8);
        tt_pat_fill(selfbuf, MANY * 8, tt_key(seed, 11, me, 0), 0);
        if (n > 1)
            TT_CHECK(telemem_put_nbi(me, mine + many_off, selfbuf, MANY * 8));
        TT_CHECK(telemem_fence(right));
        for (size_t k = 0; k < NSIZES; k++)
            free(bufs[k]);
        TT_CHECK(telemem_barrier());
        for (size_t k = 0; k < NSIZES; k++) {
            char lab[80];
            snprintf(lab, sizeof lab, "put_nbi+fence size %zu", sizes[k]);
            TT_ASSERT(!tt_pat_verify(mine + k * SLOT + TT_GUARD, sizes[k],
                                     tt_key(seed, 10, left, k), 0, lab),
                      "%s", lab);
        }
        TT_CHECK(telemem_quiet());
        if (n > 1)
            TT_ASSERT(!tt_pat_verify(mine + many_off, MANY * 8,
                                     tt_key(seed, 11, me, 0), 0,
                                     "put_nbi to self + quiet"),
                      "put_nbi to self");
        free(selfbuf);
        TT_CHECK(telemem_barrier());
    }

    /* 6. MANY outstanding put_nb handles, then MANY get_nb handles. */
    {
        telemem_handle_t *hs = malloc(MANY * sizeof *hs);
        uint64_t *vals = malloc(MANY * 8);
        uint64_t *got = malloc(MANY * 8);
        for (int i = 0; i < MANY; i++) {
            vals[i] = tt_key(seed, 12, me, i);
            TT_CHECK(telemem_put_nb(right, rb + many_off + 8 * (size_t)i,
                                    &vals[i], 8, &hs[i]));
        }
        /* Complete them in a scrambled order. */
        for (int i = 0; i < MANY; i++)
            TT_CHECK(telemem_wait(&hs[(i * 7919) % MANY]));
        TT_CHECK(telemem_barrier());
        uint64_t *w = (uint64_t *)(void *)(mine + many_off);
        for (int i = 0; i < MANY; i++)
            TT_ASSERT(w[i] == tt_key(seed, 12, left, i),
                      "many put_nb: word %d wrong", i);
        TT_CHECK(telemem_barrier());
        memset(got, 0, MANY * 8);
        for (int i = 0; i < MANY; i++)
            TT_CHECK(telemem_get_nb(left, &got[i],
                                    lb + many_off + 8 * (size_t)i, 8, &hs[i]));
        for (int i = MANY - 1; i >= 0; i--) {
            if (i & 1) {
                TT_CHECK(telemem_wait(&hs[i]));
            } else {
                for (done = 0; !done;)
                    TT_CHECK(telemem_test(&hs[i], &done));
            }
        }
        /* Left's words hold what left's left neighbour put there. */
        int ll = (left + n - 1) % n;
        for (int i = 0; i < MANY; i++)
            TT_ASSERT(got[i] == tt_key(seed, 12, ll, i),
                      "many get_nb: word %d wrong", i);
        free(hs);
        free(vals);
        free(got);
    }

    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(mine));
    free(src);
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

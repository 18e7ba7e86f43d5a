/* thr_multi.c - TELEMEM_THREAD_MULTIPLE: 4 threads per rank issue puts,
 * gets (blocking, nb, nbi), strided puts and atomics concurrently to every
 * rank.  Each thread owns one slot in every rank's block and keeps a
 * shadow copy of it; after each batch it quiets, reads the slot back and
 * compares.  A fetch-and-add counter on every rank must end at exactly
 * ranks x threads x iterations, every old value seen once.  Runs with and
 * without the progress thread. */
#include <pthread.h>

#include "tt.h"

#define NTHREADS 4
#define SLOT 8192
#define ITERS 150

static void **slots, **ctrs;
static uint64_t seed;
static int me, n;
static long long *adds; /* [thread][rank]: fetch-adds sent there */

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    tt_rng_t rng;
    tt_rng_seed(&rng, tt_key(seed, 1000, me, t));
    uint8_t *shadow = calloc((size_t)n, SLOT);
    uint8_t *buf = malloc(SLOT), *back = malloc(SLOT);
    int64_t one = 1, old;
    for (int it = 0; it < ITERS; it++) {
        int r = (int)tt_rng_below(&rng, (uint64_t)n);
        size_t off = tt_rng_below(&rng, SLOT - 1);
        size_t len = 1 + tt_rng_below(&rng, SLOT - off);
        uint8_t *slot = (uint8_t *)slots[r] +
                        ((size_t)me * NTHREADS + (size_t)t) * SLOT;
        uint8_t *sh = shadow + (size_t)r * SLOT;
        tt_pat_fill(buf, len, tt_key(seed, 1001, (uint64_t)me * 64 + t, it),
                    0);
        telemem_handle_t h;
        switch (it % 4) {
        case 0:
            TT_CHECK(telemem_put(r, slot + off, buf, len));
            memcpy(sh + off, buf, len);
            break;
        case 1:
            TT_CHECK(telemem_put_nb(r, slot + off, buf, len, &h));
            TT_CHECK(telemem_wait(&h));
            memcpy(sh + off, buf, len);
            break;
        case 2:
            TT_CHECK(telemem_put_nbi(r, slot + off, buf, len));
            TT_CHECK(telemem_quiet());
            memcpy(sh + off, buf, len);
            break;
        default: {
            /* Rows of up to 64 bytes at twice their length. */
            size_t row = len < 64 ? len : 64;
            size_t rows = len / row;
            while (rows > 1 && off + (2 * rows - 1) * row > SLOT)
                rows--;
            size_t count[2] = {row, rows}, rs[1] = {2 * row}, ls[1] = {row};
            TT_CHECK(telemem_put_strided(r, slot + off, rs, buf, ls, count,
                                         1));
            for (size_t k = 0; k < rows; k++)
                memcpy(sh + off + 2 * k * row, buf + k * row, row);
            break;
        }
        }
        if (it % 3 == 0) {
            TT_CHECK(telemem_atomic_fetch_add(r, ctrs[r], TELEMEM_INT64, &one,
                                              &old));
        } else {
            TT_CHECK(telemem_atomic_fetch_add_nb(r, ctrs[r], TELEMEM_INT64,
                                                 &one, &old, &h));
            TT_CHECK(telemem_wait(&h));
        }
        adds[(size_t)t * (size_t)n + (size_t)r]++;
        if (it % 10 == 9) {
            TT_CHECK(telemem_quiet());
            for (int q = 0; q < n; q++) {
                uint8_t *s = (uint8_t *)slots[q] +
                             ((size_t)me * NTHREADS + (size_t)t) * SLOT;
                if (it % 20 == 19) {
                    TT_CHECK(telemem_get_nbi(q, back, s, SLOT));
                    TT_CHECK(telemem_quiet());
                } else {
                    TT_CHECK(telemem_get_nb(q, back, s, SLOT, &h));
                    TT_CHECK(telemem_wait(&h));
                }
                TT_ASSERT(memcmp(back, shadow + (size_t)q * SLOT, SLOT) == 0,
                          "thread %d: slot at rank %d differs from its shadow "
                          "after iteration %d", t, q, it);
            }
        }
    }
    free(shadow);
    free(buf);
    free(back);
    return NULL;
}

int main(int argc, char **argv)
{
    tt_proc_line();
    int provided = -1;
    TT_CHECK(telemem_initialize_thread(&argc, &argv, TELEMEM_THREAD_MULTIPLE,
                                       &provided));
    TT_ASSERT(provided == TELEMEM_THREAD_MULTIPLE, "provided %d", provided);
    me = tt_me = telemem_rank();
    n = tt_n = telemem_nranks();
    seed = tt_seed();
    if (me == 0)
        tt_log("thr_multi: %d ranks x %d threads, seed 0x%" PRIx64
               ", progress thread %s", n, NTHREADS, seed,
               strstr(telemem_config_string(), "PROGRESS_THREAD = y")
                   ? "on" : "off");
    void **bases = calloc((size_t)n, sizeof *bases);
    slots = calloc((size_t)n, sizeof *slots);
    ctrs = calloc((size_t)n, sizeof *ctrs);
    adds = calloc((size_t)NTHREADS * (size_t)n, sizeof *adds);
    /* A 64-byte counter line, then the slots. */
    size_t bytes = 64 + (size_t)n * NTHREADS * SLOT;
    TT_CHECK(telemem_malloc_all(bytes, bases));
    memset(bases[me], 0, bytes);
    for (int i = 0; i < n; i++) {
        ctrs[i] = bases[i];
        slots[i] = (uint8_t *)bases[i] + 64;
    }
    TT_CHECK(telemem_barrier());
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        TT_ASSERT(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) ==
                  0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    TT_CHECK(telemem_quiet());
    /* Every rank's counter = the fetch-adds all threads sent there. */
    long long *want = calloc((size_t)n, sizeof *want);
    for (int t = 0; t < NTHREADS; t++)
        for (int r = 0; r < n; r++)
            want[r] += adds[(size_t)t * (size_t)n + (size_t)r];
    TT_CHECK(telemem_allreduce(want, (size_t)n, TELEMEM_INT64, TELEMEM_SUM));
    TT_CHECK(telemem_barrier());
    int64_t got = *(int64_t *)ctrs[me];
    TT_ASSERT(got == want[me], "counter %" PRId64 ", want %lld", got,
              want[me]);
    TT_CHECK(telemem_free_all(bases[me]));
    free(want);
    free(bases);
    free(slots);
    free(ctrs);
    free(adds);
    tt_finalize();
    if (me == 0)
        tt_log("PASS (%d ranks x %d threads x %d operations)", n, NTHREADS,
               ITERS);
    return 0;
}

/* conf_lastword.c - conformance: the documented guarantee that a put is
 * applied in increasing address order, each message within one call, so a
 * target that polls (Telemem calls) and sees the new last word of a put sees
 * the whole put.  Rank r sends to (r+1)%n puts of sizes across fragment
 * boundaries whose last 8 bytes carry the round number; the receiver spins
 * with telemem_poll() on that word, then checks every byte, then answers.
 * Once into telemem_malloc_all blocks, once into registered ranges. */
#include "tt.h"

static const size_t sizes[] = {8, 9, 40, 41, 48, 100, 4095, 4096, 16383,
                               16384, 16385, 40000, 65536, 100003,
                               1048576, 3 * 1048576 + 5};

/* Three rounds of every size into the peers' memory at bases (of n
 * ranks), each buffer max + 64 bytes with the ack word at max. */
static uint64_t exchange(void **bases, int me, int n, size_t max,
                         uint64_t seed, uint64_t round)
{
    uint8_t *mine = bases[me];
    memset(mine, 0, max + 64);
    volatile uint64_t *ack = (volatile uint64_t *)(void *)(mine + max);
    uint8_t *src = malloc(max);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    TT_CHECK(telemem_barrier());
    for (int rep = 0; rep < 3; rep++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t sz = sizes[k];
            round++;
            /* Send: pattern, last word = round; the receiver polls it. */
            tt_pat_fill(src, sz - 8, tt_key(seed, 70, me, round), 0);
            memcpy(src + sz - 8, &round, 8);
            TT_CHECK(telemem_put(right, bases[right], src, sz));
            /* Receive from the left. */
            uint64_t last = 0;
            double t0 = tt_now();
            for (;;) {
                memcpy(&last, mine + sz - 8, 8);
                if (last == round)
                    break;
                TT_ASSERT(telemem_poll() >= 0, "poll failed");
                TT_ASSERT(tt_now() - t0 < 60, "last word of a %zu-byte put "
                          "never arrived", sz);
            }
            char lab[96];
            snprintf(lab, sizeof lab, "%zu-byte put from rank %d, seen "
                     "through its last word", sz, left);
            TT_ASSERT(tt_pat_verify(mine, sz - 8, tt_key(seed, 70, left, round),
                                    0, lab) == 0, "%s", lab);
            /* Tell the sender we are done with this round. */
            uint64_t a = round;
            TT_CHECK(telemem_put(left, (uint8_t *)bases[left] + max, &a, 8));
            tt_wait_flag(ack, round, 60, "round ack");
        }
    }
    TT_CHECK(telemem_barrier());
    free(src);
    return round;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_lastword");
    int me = tt_me, n = tt_n;
    uint64_t seed = tt_seed();
    if (n < 2)
        tt_skip("needs 2 ranks (a put to self is a plain copy)");
    size_t max = sizes[sizeof sizes / sizeof sizes[0] - 1];
    void **bases = calloc((size_t)n, sizeof *bases);
    /* telemem_malloc_all blocks (shared windows on one node) ... */
    TT_CHECK(telemem_malloc_all(max + 64, bases));
    uint64_t round = exchange(bases, me, n, max, seed, 0);
    TT_CHECK(telemem_free_all(bases[me]));
    /* ... and registered ranges (on one node: CMA from 4 KiB). */
    uint8_t *reg = malloc(max + 64);
    TT_CHECK(telemem_register(reg, max + 64));
    uint64_t a = (uint64_t)(uintptr_t)reg, *all = calloc((size_t)n, 8);
    TT_CHECK(telemem_allgather(&a, all, 8));
    for (int r = 0; r < n; r++)
        bases[r] = (void *)(uintptr_t)all[r];
    round = exchange(bases, me, n, max, seed, round);
    TT_CHECK(telemem_deregister(reg));
    free(reg);
    free(all);
    if (me == 0)
        tt_log("PASS (%llu rounds)", (unsigned long long)round);
    free(bases);
    tt_finalize();
    return 0;
}

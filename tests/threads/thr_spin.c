/* thr_spin.c - progress without library calls: rank 0 spins on a plain
 * (volatile) load of the last word of its own block while rank 1 puts
 * messages of 1 B to 8 MB into it; with the progress thread on, every put
 * completes although rank 0 never calls Telemem while it spins.  Then the
 * roles swap.  Rounds 0 and 1 end each put with telemem_quiet (a wait on
 * the spinning rank, which asks its progress thread to serve: a kick);
 * rounds 2 and 3 do not, and the initiator spins on a plain load for the
 * answer too, so that only the progress threads' own ticks carry the
 * messages (under TELEMEM_DIRECT=never every put needs the target's
 * CPU).  Needs TELEMEM_PROGRESS_THREAD=on (skips otherwise). */
#include <stdbool.h>

#include "tt.h"

#define MAX_BYTES (8u << 20)

/* Spin on a plain load until the word equals want (no Telemem call). */
static void spin_until(volatile uint64_t *w, uint64_t want, const char *what)
{
    double t0 = tt_now();
    unsigned long n = 0;
    while (*w != want) {
        if ((++n & 0xfffff) == 0 && tt_now() - t0 > 60)
            TT_FAIL("%s: no progress in 60 s (word 0x%" PRIx64 ", want 0x%"
                    PRIx64 ")", what, *w, want);
    }
}

int main(int argc, char **argv)
{
    tt_proc_line();
    int provided = -1;
    TT_CHECK(telemem_initialize_thread(&argc, &argv, TELEMEM_THREAD_SINGLE,
                                       &provided));
    tt_me = telemem_rank();
    tt_n = telemem_nranks();
    if (!strstr(telemem_config_string(), "PROGRESS_THREAD = y"))
        tt_skip("TELEMEM_PROGRESS_THREAD is off: without a progress thread "
                "a target that never calls Telemem serves nobody");
    if (tt_n != 2)
        tt_skip("needs exactly 2 ranks");
    uint64_t seed = tt_seed();
    void *bases[2];
    /* The block holds the largest message plus an 8-byte ack word. */
    TT_CHECK(telemem_malloc_all(MAX_BYTES + 64, bases));
    uint8_t *mine = bases[tt_me];
    memset(mine, 0, MAX_BYTES + 64);
    volatile uint64_t *ack = (volatile uint64_t *)(void *)(mine + MAX_BYTES + 8);
    uint8_t *src = malloc(MAX_BYTES);
    TT_CHECK(telemem_barrier());
    uint64_t seq = 0;
    for (int round = 0; round < 4; round++) {
        int target = round % 2; /* rank 0 spins in rounds 0 and 2 */
        int init = 1 - target;
        bool quiet = round < 2;
        for (size_t sz = 8; sz <= MAX_BYTES; sz *= 4) {
            for (size_t len = sz - 7; len <= sz; len += 7) { /* 1 B too */
                seq++;
                if (tt_me == init) {
                    size_t n = len < 8 ? 8 : len;
                    tt_pat_fill(src, n, tt_key(seed, 900, seq, 0), 0);
                    memcpy(src + n - 8, &seq, 8);
                    uint8_t *dst = (uint8_t *)bases[target] + MAX_BYTES - n;
                    if (len < 8) {
                        /* 1..7 bytes first, then the 8-byte flag word. */
                        TT_CHECK(telemem_put(target, dst - len, src, len));
                    }
                    TT_CHECK(telemem_put(target, dst, src, n));
                    if (quiet)
                        TT_CHECK(telemem_quiet());
                    /* Wait for the ack with a plain load too. */
                    spin_until(ack, seq, "initiator waiting for the ack");
                } else {
                    size_t n = len < 8 ? 8 : len;
                    volatile uint64_t *last =
                        (volatile uint64_t *)(void *)(mine + MAX_BYTES - 8);
                    spin_until(last, seq, "target spinning on its memory");
                    uint8_t *got = mine + MAX_BYTES - n;
                    TT_ASSERT(tt_pat_verify(got, n - 8,
                                            tt_key(seed, 900, seq, 0), 0,
                                            "spun put") == 0,
                              "put of %zu bytes differs", len);
                    TT_CHECK(telemem_put(init,
                                         (uint8_t *)bases[init] + MAX_BYTES + 8,
                                         &seq, 8));
                    if (quiet)
                        TT_CHECK(telemem_quiet());
                }
                if (sz <= 8)
                    break; /* 1 B and 8 B */
            }
        }
        if (tt_me == 0)
            tt_log("round %d: every size from 1 B to %u B arrived while the "
                   "target spun (%s)", round, MAX_BYTES,
                   quiet ? "quiet after each put" : "no wait in Telemem");
        TT_CHECK(telemem_barrier());
    }
    free(src);
    TT_CHECK(telemem_free_all(mine));
    tt_finalize();
    if (tt_me == 0)
        tt_log("PASS");
    return 0;
}

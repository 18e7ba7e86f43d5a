/* fail_timeout.c - failure: TELEMEM_TIMEOUT.  Run with TELEMEM_TIMEOUT=2 at
 * 2 ranks.  Rank 1 stops polling for 8 s; meanwhile rank 0's blocking get
 * from it, its quiet after a put to it and a telemem_wait_poll() loop on
 * a flag nobody sets return TELEMEM_ERR_TIMED_OUT (no hang).  Then rank 1 comes back, signals rank 0 with a put, and the
 * job ends cleanly: the put that timed out in quiet is completed by the
 * next quiet, and the late answer to the timed-out get never writes into
 * the buffer the caller got back.  Run with TELEMEM_DIRECT=never: on one
 * node the direct path would complete the get and the put without rank 1. */
#include "tt.h"

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "fail_timeout");
    int me = tt_me, n = tt_n;
    uint64_t seed = tt_seed();
    if (n != 2) {
        tt_finalize();
        tt_skip("needs exactly 2 ranks");
    }
    void **bases = calloc(2, sizeof *bases);
    TT_CHECK(telemem_malloc_all(4096, bases));
    uint8_t *mine = bases[me];
    memset(mine, 0, 4096);
    tt_pat_fill(mine + 1024, 1024, tt_key(seed, 1, me, 0), 0);
    TT_CHECK(telemem_barrier());

    if (me == 1) {
        tt_log("rank 1: not polling for 8 s");
        sleep(8);
        uint64_t one = 1;
        TT_CHECK(telemem_put(0, bases[0], &one, 8));
        TT_CHECK(telemem_quiet());
    } else {
        /* Let rank 1 leave the barrier and fall asleep first (otherwise
         * its last polls in the barrier could still serve the get). */
        sleep(1);
        uint8_t *dst = malloc(1024);
        tt_pat_fill(dst, 1024, tt_key(seed, 2, me, 0), 0);
        double t0 = tt_now();
        TT_EXPECT(telemem_get(1, dst, (uint8_t *)bases[1] + 1024, 1024),
                  TELEMEM_ERR_TIMED_OUT);
        tt_log("get timed out after %.2f s", tt_now() - t0);
        uint64_t v = tt_key(seed, 3, 0, 0);
        TT_CHECK(telemem_put(1, (uint8_t *)bases[1] + 8, &v, 8));
        t0 = tt_now();
        TT_EXPECT(telemem_quiet(), TELEMEM_ERR_TIMED_OUT);
        tt_log("quiet timed out after %.2f s", tt_now() - t0);
        /* A wait in our own loop on a flag nobody sets ends the same way. */
        telemem_wait_t w = TELEMEM_WAIT_INIT(1);
        volatile uint64_t *never = (volatile uint64_t *)(void *)(mine + 16);
        int wrc = TELEMEM_OK;
        t0 = tt_now();
        while (*never == 0 && wrc == TELEMEM_OK)
            wrc = telemem_wait_poll(&w);
        TT_EXPECT(wrc, TELEMEM_ERR_TIMED_OUT);
        tt_log("wait_poll timed out after %.2f s", tt_now() - t0);
        /* Wait (polling) for rank 1 to come back. */
        tt_wait_flag((volatile uint64_t *)(void *)mine, 1, 60,
                     "rank 1 to wake up");
        TT_CHECK(telemem_quiet());
        /* The answer to the abandoned get must not land in dst. */
        for (int i = 0; i < 1000; i++)
            TT_POLL();
        TT_ASSERT(!tt_pat_verify(dst, 1024, tt_key(seed, 2, me, 0), 0,
                                 "buffer of the timed-out get"),
                  "the library wrote into the buffer of a get that had "
                  "returned TELEMEM_ERR_TIMED_OUT");
        free(dst);
    }
    TT_CHECK(telemem_barrier());
    if (me == 1) {
        uint64_t v;
        memcpy(&v, mine + 8, 8);
        TT_ASSERT(v == tt_key(seed, 3, 0, 0),
                  "the put whose quiet timed out never arrived");
    }
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(mine));
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

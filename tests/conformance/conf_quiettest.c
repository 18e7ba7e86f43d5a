/* conf_quiettest.c - conformance: telemem_quiet_test / telemem_fence_test.
 * Argument errors leave *done alone; nothing pending and self puts test
 * done; with the other ranks stopped (SIGSTOP, so they cannot poll) rank 0's
 * accumulates and list get (AM path only) test not done, every time, and become done rank by rank
 * as rank 0 resumes them (SIGCONT), with the data in place as after quiet; a
 * refused put is reported once, by the test that finds it done.  No timing
 * is asserted: rank 0 resumes a rank only after /proc shows it stopped.
 * Also telemem_rank_alive's and telemem_wait_poll's argument checks (a
 * stopped rank is alive). */
#include <errno.h>
#include <signal.h>
#include <sys/types.h>

#include "tt.h"
#include "proc_wait.h"

#define SLOT 64

/* Wait until pid is in state T (stopped) as /proc reports it. */
static void wait_stopped(int pid)
{
    char err[128];
    TT_ASSERT(tt_proc_wait_stopped(pid, err, sizeof err) == 0, "%s", err);
}

static uint64_t value_for(int r)
{
    return 0x5157000000000000ull + (uint64_t)r * 977u;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_quiettest");
    int me = tt_me, n = tt_n;
    void **bases = calloc((size_t)n, sizeof *bases);
    /* slot r: written by rank r; slot n: this rank's pid */
    size_t blk = (size_t)(n + 1) * SLOT;
    TT_CHECK(telemem_malloc_all(blk, bases));
    uint8_t *mine = bases[me];
    memset(mine, 0, blk);
    int pid = (int)getpid();
    int *pids = calloc((size_t)n, sizeof *pids);
    TT_CHECK(telemem_allgather(&pid, pids, sizeof pid));
    uint64_t pid64 = (uint64_t)pid;
    memcpy(mine + (size_t)n * SLOT, &pid64, sizeof pid64);

    /* 1. Argument errors: TELEMEM_ERR_INVALID_ARG, *done untouched. */
    int done = 42;
    TT_EXPECT(telemem_fence_test(-1, &done), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_fence_test(n, &done), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_fence_test(0, NULL), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_quiet_test(NULL), TELEMEM_ERR_INVALID_ARG);
    TT_ASSERT(done == 42, "an argument error set done to %d", done);
    TT_EXPECT(telemem_rank_alive(-1), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_rank_alive(n), TELEMEM_ERR_INVALID_ARG);
    for (int r = 0; r < n; r++)
        TT_CHECK(telemem_rank_alive(r));
    TT_EXPECT(telemem_wait_poll(NULL), TELEMEM_ERR_INVALID_ARG);
    telemem_wait_t bad = TELEMEM_WAIT_INIT(n);
    TT_EXPECT(telemem_wait_poll(&bad), TELEMEM_ERR_INVALID_ARG);
    bad = (telemem_wait_t)TELEMEM_WAIT_INIT(-2);
    TT_EXPECT(telemem_wait_poll(&bad), TELEMEM_ERR_INVALID_ARG);
    telemem_wait_t any = TELEMEM_WAIT_INIT(-1);
    TT_CHECK(telemem_wait_poll(&any));

    /* 2. Nothing pending: done at once. */
    TT_CHECK(telemem_quiet_test(&done));
    TT_ASSERT(done == 1, "quiet_test with nothing pending: done=%d", done);
    for (int r = 0; r < n; r++) {
        done = 0;
        TT_CHECK(telemem_fence_test(r, &done));
        TT_ASSERT(done == 1, "fence_test(%d), nothing pending: done=%d", r,
                  done);
    }

    /* 3. A put to self is complete by the test that says done. */
    uint64_t v = value_for(me) + 1;
    TT_CHECK(telemem_put_nbi(me, mine + (size_t)me * SLOT, &v, sizeof v));
    for (done = 0; !done;)
        TT_CHECK(telemem_fence_test(me, &done));
    uint64_t got;
    memcpy(&got, mine + (size_t)me * SLOT, sizeof got);
    TT_ASSERT(got == v, "self put after fence_test: 0x%" PRIx64, got);

    /* 4. Targets that cannot poll: not done until they run again. */
    TT_CHECK(telemem_barrier());
    if (n > 1 && me != 0) {
        raise(SIGSTOP); /* rank 0 resumes us */
    } else if (n > 1) {
        for (int r = 1; r < n; r++)
            wait_stopped(pids[r]);
        uint64_t *vals = calloc((size_t)n, sizeof *vals);
        /* List accumulates take the AM path (a put, or a contiguous
         * accumulate, to a same-node block would be applied here by the
         * direct path and complete at once): the slot is 0, scale 1. */
        int64_t one = 1;
        for (int r = 1; r < n; r++) {
            vals[r] = value_for(r);
            telemem_seg_t as = {(uint8_t *)bases[r] + (size_t)me * SLOT,
                                &vals[r], sizeof vals[r]};
            TT_CHECK(telemem_acc_list_nbi(r, TELEMEM_INT64, &one, &as, 1));
        }
        uint64_t fetched = 0;
        /* a list get, also never on the direct path (a direct get after
         * the accumulate would first wait for it: issue order) */
        telemem_seg_t seg = {(uint8_t *)bases[1] + (size_t)n * SLOT,
                             &fetched, sizeof fetched};
        TT_CHECK(telemem_get_list_nbi(1, &seg, 1));
        for (int k = 0; k < 20; k++) {
            done = 7;
            TT_CHECK(telemem_quiet_test(&done));
            TT_ASSERT(done == 0, "quiet_test with stopped targets: done=%d",
                      done);
            for (int r = 1; r < n; r++) {
                done = 7;
                TT_CHECK(telemem_fence_test(r, &done));
                TT_ASSERT(done == 0,
                          "fence_test(%d) of a stopped target: "
                          "done=%d",
                          r, done);
            }
            /* self is not held up by the others */
            TT_CHECK(telemem_fence_test(0, &done));
            TT_ASSERT(done == 1, "fence_test(0) (self): done=%d", done);
        }
        for (int r = 1; r < n; r++)
            TT_CHECK(telemem_rank_alive(r)); /* stopped is not dead */
        for (int r = 1; r < n; r++) {
            TT_ASSERT(kill(pids[r], SIGCONT) == 0, "SIGCONT %d: %s", pids[r],
                      strerror(errno));
            for (done = 0; !done;)
                TT_CHECK(telemem_fence_test(r, &done));
            if (r == 1)
                TT_ASSERT(fetched == (uint64_t)pids[1],
                          "get_list_nbi after fence_test: 0x%" PRIx64, fetched);
            if (r < n - 1) {
                TT_CHECK(telemem_quiet_test(&done));
                TT_ASSERT(done == 0,
                          "quiet_test with %d targets still "
                          "stopped: done=%d",
                          n - 1 - r, done);
            }
        }
        TT_CHECK(telemem_quiet_test(&done));
        TT_ASSERT(done == 1, "quiet_test after all ran: done=%d", done);
        free(vals);
    }
    TT_CHECK(telemem_barrier());
    if (me != 0) {
        memcpy(&got, mine, sizeof got);
        TT_ASSERT(got == value_for(me), "put from rank 0: 0x%" PRIx64, got);
    }

    /* 5. A refused put (to another rank): OUT_OF_RANGE once, from the
     * test that finds it done (with done = 1), then OK. */
    if (n > 1) {
        int right = (me + 1) % n;
        uint64_t z = 1;
        uint8_t *outside = (uint8_t *)bases[right] + blk + 4096;
        TT_CHECK(telemem_put_nbi(right, outside, &z, sizeof z));
        int rc;
        done = 0;
        while ((rc = telemem_fence_test(right, &done)) == TELEMEM_OK && !done)
            ;
        TT_ASSERT(rc == TELEMEM_ERR_OUT_OF_RANGE && done == 1,
                  "refused put: fence_test %s, done=%d",
                  telemem_status_name(rc), done);
        done = 0;
        TT_CHECK(telemem_quiet_test(&done));
        TT_ASSERT(done == 1, "quiet_test after the refusal: done=%d", done);
    }

    TT_CHECK(telemem_barrier());
    free(pids);
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("conf_quiettest: OK");
    return 0;
}

/* fail_deadpeer.c - failure: a rank dies.  The last rank SIGKILLs itself in
 * the middle of a loop in which the others put to it, get from it and meet
 * it in barriers.  Argument "default": the launcher must end the whole job
 * within seconds (survivors just wait; run_checked.sh checks the time, the
 * exit status 137 and that no process or /dev/shm object is left).
 * Argument "keep" (telemem-run --keep-going, TELEMEM_TIMEOUT=30): the
 * survivors' calls must return TELEMEM_ERR_PEER_DEAD (TELEMEM_ERR_TIMED_OUT
 * is tolerated and reported) - the loop's failing call, then a barrier, a
 * get from the dead rank, a put + quiet to it, a fetch-and-add on it, a
 * lock of its mutex and an active message to it -
 * and they exit 0; in
 * between telemem_rank_alive() names the dead rank and quiet_test after a
 * put to it returns PEER_DEAD too. */
#include <signal.h>

#include "tt.h"

static int dead_status(int rc)
{
    return rc == TELEMEM_ERR_PEER_DEAD || rc == TELEMEM_ERR_TIMED_OUT;
}

static void report(const char *call, int rc, double t0)
{
    tt_log("%s returned %s after %.2f s%s", call, telemem_status_name(rc),
           tt_now() - t0,
           rc == TELEMEM_ERR_TIMED_OUT ? " (timeout, not PEER_DEAD detection)"
                                       : "");
    TT_ASSERT(dead_status(rc), "%s returned %s, want TELEMEM_ERR_PEER_DEAD",
              call, telemem_status_name(rc));
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "fail_deadpeer");
    int me = tt_me, n = tt_n, victim = n - 1;
    int keep = argc > 1 && strcmp(argv[1], "keep") == 0;
    if (n < 2) {
        tt_finalize();
        tt_skip("needs at least 2 ranks");
    }
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(1 << 20, bases));
    int set = -1; /* a mutex on every rank */
    TT_CHECK(telemem_mutexes_create(1, &set));
    uint8_t *buf = malloc(1 << 20);
    memset(buf, 7, 1 << 20);
    TT_CHECK(telemem_barrier());

    const char *failed = NULL;
    int rc = TELEMEM_OK;
    double t0 = 0;
    for (int i = 0; !failed; i++) {
        if (me == victim && i == 20) {
            tt_log("rank %d: SIGKILL to myself now", me);
            raise(SIGKILL);
        }
        TT_ASSERT(i < 100000, "no error after %d iterations", i);
        if (me != victim) {
            t0 = tt_now();
            rc = telemem_put(victim, bases[victim], buf, 64 * 1024);
            if (rc != TELEMEM_OK) {
                failed = "put";
                break;
            }
            rc = telemem_get(victim, buf, (uint8_t *)bases[victim] + 4096, 8);
            if (rc != TELEMEM_OK) {
                failed = "get";
                break;
            }
            rc = telemem_quiet();
            if (rc != TELEMEM_OK) {
                failed = "quiet";
                break;
            }
        }
        t0 = tt_now();
        rc = telemem_barrier();
        if (rc != TELEMEM_OK)
            failed = "barrier";
    }
    report(failed, rc, t0);

    if (!keep) {
        /* Only the launcher should end us, and quickly. */
        tt_log("waiting to be ended by the launcher");
        sleep(60);
        TT_FAIL("still alive 60 s after rank %d died", victim);
    }

    /* telemem_rank_alive: the dead rank and the survivors */
    TT_EXPECT(telemem_rank_alive(victim), TELEMEM_ERR_PEER_DEAD);
    for (int r = 0; r < victim; r++)
        TT_CHECK(telemem_rank_alive(r));
    /* A wait in our own loop on the dead rank ends (any rank: too). */
    for (int k = 0; k < 2; k++) {
        telemem_wait_t w = TELEMEM_WAIT_INIT(k ? -1 : victim);
        t0 = tt_now();
        do
            rc = telemem_wait_poll(&w);
        while (rc == TELEMEM_OK);
        report(k ? "wait_poll on any rank" : "wait_poll on the dead rank", rc,
               t0);
    }
    /* quiet_test after a put to the dead rank */
    int done = 0;
    t0 = tt_now();
    rc = telemem_put_nbi(victim, bases[victim], buf, 8);
    while (rc == TELEMEM_OK && !done)
        rc = telemem_quiet_test(&done);
    report("put + quiet_test to the dead rank", rc, t0);
    t0 = tt_now();
    rc = telemem_barrier();
    report("barrier", rc, t0);
    /* Every rank watches every other in a collective: a survivor whose
     * barrier partner waits for the dead rank still sees PEER_DEAD, not a
     * timeout (shm; network transports learn of a death from errors). */
    if (strcmp(telemem_transport_name(victim), "shm") == 0)
        TT_EXPECT(rc, TELEMEM_ERR_PEER_DEAD);
    t0 = tt_now();
    report("get from the dead rank", telemem_get(victim, buf, bases[victim],
                                                 8), t0);
    t0 = tt_now();
    rc = telemem_put(victim, bases[victim], buf, 8);
    if (rc == TELEMEM_OK)
        rc = telemem_quiet();
    report("put + quiet to the dead rank", rc, t0);
    /* An atomic too (on this node it would be the initiator's own atomic
     * on the dead process's window). */
    int64_t one = 1, old = 0;
    t0 = tt_now();
    report("fetch_add on the dead rank",
           telemem_atomic_fetch_add(victim, bases[victim], TELEMEM_INT64,
                                    &one, &old), t0);
    /* The dead rank's mutex, and an active message to it. */
    t0 = tt_now();
    report("mutex_lock on the dead rank", telemem_mutex_lock(set, 0, victim),
           t0);
    t0 = tt_now();
    report("am_request to the dead rank",
           telemem_am_request(victim, 100, buf, 8, NULL, 0), t0);
    t0 = tt_now();
    rc = telemem_finalize();
    tt_log("finalize returned %s after %.2f s", telemem_status_name(rc),
           tt_now() - t0);
    /* Shut down in every case. */
    TT_EXPECT(telemem_rank(), TELEMEM_ERR_NOT_INITIALIZED);
    tt_log("survivor done");
    free(buf);
    free(bases);
    return 0;
}

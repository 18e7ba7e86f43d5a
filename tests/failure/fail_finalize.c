/* fail_finalize.c - failure: a rank is killed (SIGKILL) while the others
 * are blocked in a call that needs it, and every survivor's finalize must
 * still return, within 5 s, with TELEMEM_ERR_PEER_DEAD.  argv[1] is the
 * call the survivors are in: get, quiet, fence, barrier, broadcast,
 * allreduce, allgather, wait (a get_nb's handle), mutex (a lock the victim
 * holds), amreply (a reply the victim never sends, awaited with
 * telemem_wait_poll), or mixed (each survivor in another one of them: rank
 * 0 in quiet, rank 1 in barrier, ...).  The victim is the last rank; it
 * stops polling (and says so in a file outside Telemem, so that the
 * others block only once it will not answer any more), lets the others
 * block for a while, then kills itself.
 * Run with telemem-run --keep-going and TELEMEM_DIRECT=never (gets and
 * puts then need the victim's CPU); the job ends with 137. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>

#include "tt.h"

static const char *const calls[] = {"quiet", "barrier", "get", "allreduce",
                                    "fence", "broadcast", "wait", "amreply",
                                    "allgather"};

static volatile int replied;

static void on_request(telemem_am_token_t tok, void *payload, size_t bytes,
                       const uint32_t *args, unsigned nargs, void *ctx)
{
    telemem_am_reply(tok, 1, NULL, 0, NULL, 0);
}

static void on_reply(telemem_am_token_t tok, void *payload, size_t bytes,
                     const uint32_t *args, unsigned nargs, void *ctx)
{
    replied = 1;
}

/* The blocking call of a survivor; its status. */
static int blocked_call(const char *call, int victim, void **bases, int set)
{
    int64_t v[64] = {0};
    uint8_t *vb = bases[victim];
    if (!strcmp(call, "get"))
        return telemem_get(victim, v, vb, 8);
    if (!strcmp(call, "quiet") || !strcmp(call, "fence")) {
        int rc = telemem_put(victim, vb + 8 * (size_t)tt_me, v, 8);
        if (rc != TELEMEM_OK)
            return rc;
        return !strcmp(call, "quiet") ? telemem_quiet()
                                      : telemem_fence(victim);
    }
    if (!strcmp(call, "barrier"))
        return telemem_barrier();
    if (!strcmp(call, "broadcast"))
        return telemem_broadcast(v, sizeof(v), victim);
    if (!strcmp(call, "allreduce"))
        return telemem_allreduce(v, 4, TELEMEM_INT64, TELEMEM_SUM);
    if (!strcmp(call, "allgather")) {
        int64_t *all = calloc((size_t)tt_n, sizeof(*all));
        int rc = telemem_allgather(v, all, sizeof(int64_t));
        free(all);
        return rc;
    }
    if (!strcmp(call, "wait")) {
        telemem_handle_t h;
        int rc = telemem_get_nb(victim, v, vb, 16, &h);
        return rc == TELEMEM_OK ? telemem_wait(&h) : rc;
    }
    if (!strcmp(call, "mutex"))
        return telemem_mutex_lock(set, 0, 0);
    if (!strcmp(call, "amreply")) {
        int rc = telemem_am_request(victim, 0, NULL, 0, NULL, 0);
        telemem_wait_t w = TELEMEM_WAIT_INIT(victim);
        while (rc == TELEMEM_OK && !replied)
            rc = telemem_wait_poll(&w);
        return rc;
    }
    TT_FAIL("unknown call %s", call);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "mixed";
    tt_init(&argc, &argv, "fail_finalize");
    int victim = tt_n - 1;
    TT_ASSERT(tt_n >= 2, "needs 2 ranks or more");
    void **bases = calloc((size_t)tt_n, sizeof(*bases));
    TT_CHECK(telemem_malloc_all(4096, bases));
    TT_CHECK(telemem_am_register(0, on_request, NULL));
    TT_CHECK(telemem_am_register(1, on_reply, NULL));
    int set = -1;
    if (!strcmp(mode, "mutex")) {
        /* rank 0 keeps the mutex, the victim takes it and dies with it */
        TT_CHECK(telemem_mutexes_create(tt_me == 0 ? 1 : 0, &set));
        TT_CHECK(telemem_barrier());
        if (tt_me == victim)
            TT_CHECK(telemem_mutex_lock(set, 0, 0));
    }
    TT_CHECK(telemem_barrier());
    char flag[256];
    snprintf(flag, sizeof(flag), "%s/tlm-finalize-%s",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             getenv("TELEMEM_JOBID") ? getenv("TELEMEM_JOBID") : "x");
    if (tt_me == victim) {
        /* no polling from here: the others block on us */
        int fd = open(flag, O_CREAT | O_WRONLY, 0600);
        TT_ASSERT(fd >= 0, "%s: %s", flag, strerror(errno));
        close(fd);
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        tt_log("victim: SIGKILL to myself now (the others are in %s)", mode);
        raise(SIGKILL);
    }
    const char *call = strcmp(mode, "mixed")
                           ? mode
                           : calls[tt_me % (int)(sizeof(calls) / sizeof(calls[0]))];
    for (int i = 0; i < 3000 && access(flag, F_OK) != 0; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    double t0 = tt_now();
    int rc = blocked_call(call, victim, bases, set);
    unlink(flag); /* the first survivor back removes it */
    tt_log("%s returned %s after %.2f s", call, telemem_status_name(rc),
           tt_now() - t0);
    TT_EXPECT(rc, TELEMEM_ERR_PEER_DEAD);
    t0 = tt_now();
    rc = telemem_finalize();
    double dt = tt_now() - t0;
    tt_log("finalize returned %s after %.2f s", telemem_status_name(rc), dt);
    TT_EXPECT(rc, TELEMEM_ERR_PEER_DEAD);
    TT_ASSERT(dt < 5.0, "finalize took %.2f s (more than 5 s)", dt);
    TT_EXPECT(telemem_rank(), TELEMEM_ERR_NOT_INITIALIZED);
    free(bases);
    tt_log("survivor done");
    return 0;
}

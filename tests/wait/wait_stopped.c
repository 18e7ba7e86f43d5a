/* wait_stopped.c - every kind of blocking wait gives the CPU back: rank 0
 * waits on the other ranks while they are stopped (SIGSTOP) for --stop
 * seconds (default 2) - get, quiet, fence, handle wait, atomic, mutex
 * lock, barrier, allreduce, broadcast, telemem_wait_poll on a flag a put
 * sets and on one an active-message handler sets, finalize - and each
 * wait must use little CPU time (under TELEMEM_WAIT=auto or block: less
 * than --cpu-share of the stop, default 0.1; spin and yield only report
 * it), then continue correctly once a timer thread resumes the ranks
 * (SIGCONT).  Rank 0 starts each wait only after /proc shows every other
 * rank stopped.  The data of the RMA waits is in registered memory (the
 * polling path below 4 KiB); the flag of the put round is in a
 * telemem_malloc_all block (the window driver's store wakes the sleeper,
 * or with TELEMEM_DIRECT=never the put's message). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "tt.h"
#include "proc_wait.h"

enum { K_GET, K_QUIET, K_FENCE, K_HANDLE, K_ATOMIC, K_MUTEX, K_BARRIER,
       K_ALLREDUCE, K_BCAST, K_FLAG_PUT, K_FLAG_AM, K_FINALIZE, K_COUNT };
static const char *const kind_name[K_COUNT] = {
    "get", "quiet", "fence", "handle wait", "atomic fetch_add", "mutex lock",
    "barrier", "allreduce", "broadcast", "wait_poll (put)", "wait_poll (am)",
    "finalize"};

static int n, me;
static int *pids;
static double stop_s = 2.0;
static uint64_t am_flag; /* atomic: the handler may run on the progress
                          * thread */

typedef struct {
    uint64_t value;   /* read by get, written by atomics */
    uint64_t target;  /* put here by quiet/fence rounds */
    uint64_t flag;    /* set by a put in the flag round */
    uint64_t pad[5];
} cell_t;

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void *resumer(void *arg)
{
    (void)arg;
    struct timespec ts = {(time_t)stop_s,
                          (long)((stop_s - (double)(time_t)stop_s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    for (int r = 1; r < n; r++)
        kill(pids[r], SIGCONT);
    return NULL;
}

static void on_am(telemem_am_token_t tok, void *payload, size_t bytes,
                  const uint32_t *args, unsigned nargs, void *ctx)
{
    (void)tok, (void)payload, (void)bytes, (void)args, (void)nargs, (void)ctx;
    __atomic_store_n(&am_flag, 1, __ATOMIC_RELEASE);
}

/* Rank 0's side of one wait; the others' part after they are resumed. */
static void wait_kind(int k, cell_t **regs, cell_t **bases, int set)
{
    cell_t *mine = bases[me];
    uint64_t v = 0, one = 1, sum = 0;
    telemem_handle_t h;
    telemem_wait_t w = TELEMEM_WAIT_INIT(-1);
    switch (k) {
    case K_GET:
        TT_CHECK(telemem_get(1, &v, &regs[1]->value, sizeof v));
        TT_ASSERT(v == 1001, "get: %" PRIu64, v);
        break;
    case K_QUIET:
    case K_FENCE:
        v = 77 + (uint64_t)k;
        TT_CHECK(telemem_put(1, &regs[1]->target, &v, sizeof v));
        TT_CHECK(k == K_QUIET ? telemem_quiet() : telemem_fence(1));
        break;
    case K_HANDLE:
        TT_CHECK(telemem_get_nb(1, &v, &regs[1]->value, sizeof v, &h));
        TT_CHECK(telemem_wait(&h));
        TT_ASSERT(v == 1001, "get_nb: %" PRIu64, v);
        break;
    case K_ATOMIC:
        TT_CHECK(telemem_atomic_fetch_add(1, &regs[1]->value,
                                          TELEMEM_UINT64, &one, &v));
        TT_ASSERT(v == 1001, "fetch_add: old %" PRIu64, v);
        break;
    case K_MUTEX:
        TT_CHECK(telemem_mutex_lock(set, 0, 1));
        TT_CHECK(telemem_mutex_unlock(set, 0, 1));
        break;
    case K_BARRIER:
        TT_CHECK(telemem_barrier());
        break;
    case K_ALLREDUCE:
        sum = 1;
        TT_CHECK(telemem_allreduce(&sum, 1, TELEMEM_UINT64, TELEMEM_SUM));
        TT_ASSERT(sum == (uint64_t)n, "allreduce: %" PRIu64, sum);
        break;
    case K_BCAST:
        TT_CHECK(telemem_broadcast(&v, sizeof v, 1));
        TT_ASSERT(v == 4242, "broadcast: %" PRIu64, v);
        break;
    case K_FLAG_PUT:
        while (!__atomic_load_n(&mine->flag, __ATOMIC_ACQUIRE))
            TT_CHECK(telemem_wait_poll(&w));
        break;
    case K_FLAG_AM:
        while (!__atomic_load_n(&am_flag, __ATOMIC_ACQUIRE))
            TT_CHECK(telemem_wait_poll(&w));
        break;
    case K_FINALIZE:
        tt_finalize();
        break;
    }
}

static void others_part(int k, cell_t **bases, int set)
{
    uint64_t v = 4242, sum = 1, one = 1;
    switch (k) {
    case K_BARRIER:
        TT_CHECK(telemem_barrier());
        break;
    case K_ALLREDUCE:
        TT_CHECK(telemem_allreduce(&sum, 1, TELEMEM_UINT64, TELEMEM_SUM));
        break;
    case K_BCAST:
        TT_CHECK(telemem_broadcast(&v, sizeof v, 1));
        break;
    case K_FLAG_PUT:
        if (me == 1)
            TT_CHECK(telemem_put(0, &bases[0]->flag, &one, sizeof one));
        break;
    case K_FLAG_AM:
        if (me == 1)
            TT_CHECK(telemem_am_request(0, 7, NULL, 0, NULL, 0));
        break;
    case K_FINALIZE:
        tt_finalize();
        break;
    default:
        break; /* served by polling in the barrier below */
    }
    (void)set;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "wait_stopped");
    me = tt_me;
    n = tt_n;
    stop_s = (double)tt_arg_long(argc, argv, "--stop-ms", 2000) / 1e3;
    double share = (double)tt_arg_long(argc, argv, "--cpu-permille", 100) /
                   1e3;
    const char *mode = getenv("TELEMEM_WAIT");
    bool check_cpu = !mode || !strcmp(mode, "auto") || !strcmp(mode, "block");
    if (n < 2)
        tt_skip("needs 2 ranks or more");
    cell_t **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(sizeof(cell_t), (void **)bases));
    memset(bases[me], 0, sizeof(cell_t));
    static cell_t reg;
    cell_t **regs = calloc((size_t)n, sizeof *regs);
    cell_t *myreg = &reg;
    TT_CHECK(telemem_register(myreg, sizeof reg));
    TT_CHECK(telemem_allgather(&myreg, regs, sizeof myreg));
    pids = calloc((size_t)n, sizeof *pids);
    int pid = (int)getpid(), set;
    TT_CHECK(telemem_allgather(&pid, pids, sizeof pid));
    TT_CHECK(telemem_mutexes_create(1, &set));
    TT_CHECK(telemem_am_register(7, on_am, NULL));
    TT_CHECK(telemem_barrier());
    for (int k = 0; k < K_COUNT; k++) {
        reg.value = 1001;
        bases[me]->flag = 0;
        __atomic_store_n(&am_flag, 0, __ATOMIC_RELAXED);
        TT_CHECK(telemem_barrier());
        if (me != 0) {
            raise(SIGSTOP); /* rank 0 resumes us after stop_s */
            others_part(k, bases, set);
        } else {
            char err[128];
            for (int r = 1; r < n; r++)
                TT_ASSERT(tt_proc_wait_stopped(pids[r], err, sizeof err) == 0,
                          "%s", err);
            pthread_t th;
            TT_ASSERT(pthread_create(&th, NULL, resumer, NULL) == 0,
                      "pthread_create");
            double c0 = cpu_now(), t0 = tt_now();
            wait_kind(k, regs, bases, set);
            double cpu = cpu_now() - c0, wall = tt_now() - t0;
            pthread_join(th, NULL);
            tt_log("%-17s waited %.2f s, CPU %.4f s (%.2f%%)", kind_name[k],
                   wall, cpu, 100 * cpu / stop_s);
            if (check_cpu)
                TT_ASSERT(cpu < share * stop_s,
                          "%s: CPU %.3f s while the peers were stopped for "
                          "%.1f s (more than %.0f%%)", kind_name[k], cpu,
                          stop_s, 100 * share);
        }
        if (k == K_FINALIZE)
            break;
        TT_CHECK(telemem_barrier());
        if (me == 1 && (k == K_QUIET || k == K_FENCE))
            TT_ASSERT(reg.target == 77 + (uint64_t)k,
                      "put before %s: %" PRIu64, kind_name[k], reg.target);
    }
    if (me == 0)
        tt_log("wait_stopped: OK");
    free(pids);
    free(regs);
    free(bases);
    return 0;
}

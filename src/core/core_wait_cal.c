/* core_wait_cal.c - what sleeping and waking cost on this machine,
 * measured at initialize for the wait policy (core_wait.c): a wake-up of
 * a sleeper whose CPU went idle, a futex ping-pong between busy CPUs, and
 * the scheduler's time slice; and the futex call the sleepers of
 * core_wait.c and core_thread.c use.  docs/wait.md, "The policy". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include "core/core_wait.h"
#include "core/core_wait_cal.h"

long tlm_core_futex(_Atomic uint32_t *w, int op, uint32_t val,
                    const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)(uintptr_t)w, op, val, ts, NULL, 0);
}

/* The cost of a sleep and wake-up here, two ways (each the median of
 * CAL_ROUNDS, at most 20 ms spent):
 * - tlm_core_wait_measure_wake, the spin budget: the waiting thread sleeps on a futex
 *   until a thread on another CPU wakes it, after a pause long enough for
 *   the sleeper's CPU to go idle, as a wait's sleep goes (a virtual CPU
 *   then leaves the host, and waking it costs far more: 21-50 us on the
 *   project's 2-core VM, where the ping-pong below measures 2.4-4 us);
 * - tlm_core_wait_measure_block, the yield phase's bounds: a futex ping-pong between two
 *   threads, a wake-up where no CPU goes idle (ranks that share cores). */
static _Atomic uint32_t cal_word;
static _Atomic int64_t cal_woke_at;
#define CAL_ROUNDS 15

static void *cal_helper(void *arg)
{
    int cpu = (int)(intptr_t)arg;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    for (uint32_t i = 1; i <= CAL_ROUNDS; i++) {
        struct timespec ts = {0, CAL_PAUSE_NS};
        nanosleep(&ts, NULL);
        if (atomic_load(&cal_word) == UINT32_MAX)
            break;
        atomic_store(&cal_woke_at, tlm_util_now_ns());
        atomic_store(&cal_word, i);
        tlm_core_futex(&cal_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
    return NULL;
}

int tlm_core_wait_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A CPU other than the caller's for the waker: one this process may use,
 * else any online one (a rank bound to one CPU is woken from another);
 * -1 with a single CPU. */
static int other_cpu(void)
{
    int me = sched_getcpu();
    cpu_set_t aff;
    if (sched_getaffinity(0, sizeof(aff), &aff) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (c != me && CPU_ISSET(c, &aff))
                return c;
    long on = sysconf(_SC_NPROCESSORS_ONLN);
    return on > 1 ? (me + 1) % (int)on : -1;
}

static void *pong_helper(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < CAL_ROUNDS; i++) {
        uint32_t v;
        while ((v = atomic_load(&cal_word)) < 2 * i + 1)
            tlm_core_futex(&cal_word, FUTEX_WAIT_PRIVATE, v, NULL);
        if (v == UINT32_MAX)
            break;
        atomic_store(&cal_word, 2 * i + 2);
        tlm_core_futex(&cal_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
    return NULL;
}

int64_t tlm_core_wait_measure_block(void)
{
    pthread_t th;
    atomic_store(&cal_word, 0);
    if (pthread_create(&th, NULL, pong_helper, NULL) != 0)
        return BLOCK_NS_GUESS;
    int64_t rtt[CAL_ROUNDS], start = tlm_util_now_ns();
    uint32_t i;
    for (i = 0; i < CAL_ROUNDS && tlm_util_now_ns() - start < 20000000; i++) {
        int64_t t = tlm_util_now_ns();
        atomic_store(&cal_word, 2 * i + 1);
        tlm_core_futex(&cal_word, FUTEX_WAKE_PRIVATE, 1, NULL);
        uint32_t v;
        while ((v = atomic_load(&cal_word)) < 2 * i + 2)
            tlm_core_futex(&cal_word, FUTEX_WAIT_PRIVATE, v, NULL);
        rtt[i] = tlm_util_now_ns() - t;
    }
    if (i < CAL_ROUNDS) {
        atomic_store(&cal_word, UINT32_MAX);
        tlm_core_futex(&cal_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
    pthread_join(th, NULL);
    if (i == 0) /* preempted for the whole budget: no sample */
        return BLOCK_NS_GUESS;
    qsort(rtt, i, sizeof(rtt[0]), tlm_core_wait_cmp_i64);
    int64_t b = rtt[i / 2] / 2;
    return TLM_MIN(TLM_MAX(b, BLOCK_NS_MIN), BLOCK_NS_MAX);
}

int64_t tlm_core_wait_measure_wake(void)
{
    pthread_t th;
    atomic_store(&cal_word, 0);
    if (pthread_create(&th, NULL, cal_helper,
                       (void *)(intptr_t)other_cpu()) != 0)
        return BLOCK_NS_GUESS;
    int64_t lat[CAL_ROUNDS], start = tlm_util_now_ns();
    uint32_t i;
    for (i = 0; i < CAL_ROUNDS && tlm_util_now_ns() - start < 20000000; i++) {
        uint32_t v;
        while ((v = atomic_load(&cal_word)) < i + 1) {
            struct timespec ts = {0, 20000000};
            tlm_core_futex(&cal_word, FUTEX_WAIT_PRIVATE, v, &ts);
            if (tlm_util_now_ns() - start >= 20000000)
                break;
        }
        if (v < i + 1)
            break;
        lat[i] = tlm_util_now_ns() - atomic_load(&cal_woke_at);
    }
    atomic_store(&cal_word, UINT32_MAX);
    pthread_join(th, NULL);
    if (i == 0) /* preempted for the whole budget: no sample */
        return BLOCK_NS_GUESS;
    qsort(lat, i, sizeof(lat[0]), tlm_core_wait_cmp_i64);
    int64_t b = lat[i / 2];
    return TLM_MIN(TLM_MAX(b, BLOCK_NS_MIN), BLOCK_NS_MAX);
}

/* The scheduler's time slice for this thread (sched_getattr's runtime
 * for SCHED_OTHER: EEVDF's base slice, or a slice the program chose). */
/* sched_setattr(2)'s struct sched_attr (glibc 2.36 declares none). */
typedef struct {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t prio;
    uint64_t runtime, deadline, period;
} sched_attr_t;

int tlm_core_wait_set_slice(int64_t ns)
{
    sched_attr_t a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.policy = SCHED_OTHER;
    a.runtime = (uint64_t)ns;
    return syscall(SYS_sched_setattr, 0, &a, 0) == 0 ? 0 : errno;
}

int64_t tlm_core_wait_sched_slice(void)
{
    sched_attr_t a;
    memset(&a, 0, sizeof(a));
    int64_t s = 0;
    if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof(a), 0) == 0 &&
        a.policy == SCHED_OTHER)
        s = (int64_t)a.runtime;
    return TLM_MIN(TLM_MAX(s > 0 ? s : SLICE_GUESS, SLICE_MIN), SLICE_MAX);
}

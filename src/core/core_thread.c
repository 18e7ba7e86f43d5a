/* core_thread.c - threads: the process-wide recursive lock that entry
 * points take under TELEMEM_THREAD_MULTIPLE or with a progress thread, and
 * the optional progress thread that serves requests while the application
 * does not call Telemem (it waits as core_wait.c says: spins briefly, then
 * sleeps until a sender rings the transport's doorbell; it naps while an
 * application thread is inside the library and polls itself). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include "core/core_wait.h"

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uintptr_t owner; /* the holding thread's token, 0 if free */
static int depth;               /* written only by the holder */
/* initial-exec: one %fs-relative address instead of a __tls_get_addr
 * call per lock (libtelemem is linked, not dlopen'ed late; the variable is
 * one byte of the static TLS surplus if it is). */
static _Thread_local char tls_token __attribute__((tls_model("initial-exec")));

/* Application threads inside the library: in an entry point, or in a wait
 * that polls (one that sleeps does not count).  While there are any, the
 * progress thread naps instead of polling beside them: they poll
 * themselves, and on a core that is not its own the progress thread would
 * take time slices and the lock from the thread it serves (measured here:
 * 8-byte ping-pong latency on the polling path with the progress thread
 * 2.4-3.0 us when it polled beside them, 0.36-0.83 us with naps). */
static _Atomic uint32_t app_inside;
static _Atomic bool napping; /* the progress thread naps on app_inside */
static _Thread_local bool tls_progress
    __attribute__((tls_model("initial-exec")));
static _Thread_local bool tls_counted
    __attribute__((tls_model("initial-exec")));

static inline uintptr_t self_token(void)
{
    return (uintptr_t)&tls_token;
}

void tlm_core_lock_slow(void)
{
    uintptr_t me = self_token();
    if (atomic_load_explicit(&owner, memory_order_relaxed) == me) {
        depth++;
        return;
    }
    pthread_mutex_lock(&big_lock);
    atomic_store_explicit(&owner, me, memory_order_relaxed);
    depth = 1;
    if (!tls_progress && !tls_counted) {
        atomic_fetch_add(&app_inside, 1);
        tls_counted = true;
    }
}

void tlm_core_unlock_slow(void)
{
    if (--depth == 0) {
        atomic_store_explicit(&owner, 0, memory_order_relaxed);
        pthread_mutex_unlock(&big_lock);
        if (tls_counted) {
            atomic_fetch_sub(&app_inside, 1);
            tls_counted = false;
        }
    }
}

bool tlm_core_thread_app_sleep(void)
{
    if (!tls_counted)
        return false;
    tls_counted = false;
    atomic_fetch_sub(&app_inside, 1);
    if (atomic_load(&napping)) /* pairs with nap() */
        tlm_core_futex(&app_inside, FUTEX_WAKE_PRIVATE, 1, NULL);
    return true;
}

void tlm_core_thread_app_wake(bool counted)
{
    if (counted && !tls_counted) {
        atomic_fetch_add(&app_inside, 1);
        tls_counted = true;
    }
}

bool tlm_core_lock_mine(void)
{
    return atomic_load_explicit(&owner, memory_order_relaxed) == self_token();
}

int tlm_core_lock_release_all(void)
{
    if (atomic_load_explicit(&owner, memory_order_relaxed) != self_token())
        return 0;
    int d = depth;
    depth = 0;
    atomic_store_explicit(&owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&big_lock);
    return d;
}

void tlm_core_lock_reacquire(int d)
{
    if (d == 0)
        return;
    pthread_mutex_lock(&big_lock);
    atomic_store_explicit(&owner, self_token(), memory_order_relaxed);
    depth = d;
}

/* ---- the progress thread -------------------------------------------------- */

static pthread_t thread;
static bool running;
static _Atomic bool stop;

/* Naps while application threads are inside: NAP_MIN_NS, doubling up to
 * NAP_MAX_NS while they stay.  A request that arrives after the
 * application left the library for good (to compute, or into another
 * library's call) waits at most one nap; a wait that goes to sleep ends
 * the nap at once.  Each nap's end takes the core from an application
 * thread bound to the same CPU: 2 ms naps gave lower latency than 200 us
 * ones (docs/wait.md), and no later overlap of a computing target. */
#define NAP_MIN_NS 20000
#define NAP_MAX_NS 2000000

/* Sleep while an application thread is inside, at most ns: true if one
 * was (the caller naps again, longer), false if none is. */
static bool nap(long ns)
{
    atomic_store(&napping, true);
    uint32_t v = atomic_load(&app_inside); /* pairs with app_sleep */
    if (v == 0 || atomic_load_explicit(&stop, memory_order_acquire)) {
        atomic_store(&napping, false);
        return false;
    }
    struct timespec ts = {0, ns};
    tlm_core_futex(&app_inside, FUTEX_WAIT_PRIVATE, v, &ts);
    atomic_store(&napping, false);
    return true;
}

/* Serve requests until stopped: poll, and when nothing comes spin, yield
 * and sleep on the transports' wait objects as a wait does (core_wait.c):
 * a sender that finds this process asleep wakes it. */
static void *progress_main(void *arg)
{
    tlm_wait_t w;
    tlm_core_wait_init(&w, -1);
    tls_progress = true;
    prctl(PR_SET_TIMERSLACK, 1000UL); /* naps of tens of us, not +50 us */
    long nap_ns = NAP_MIN_NS;
    while (!atomic_load_explicit(&stop, memory_order_acquire)) {
        if (atomic_load_explicit(&app_inside, memory_order_relaxed) > 0) {
            tlm_core_wait_thread_pause(&w);
            if (nap(nap_ns)) {
                nap_ns = TLM_MIN(2 * nap_ns, NAP_MAX_NS);
                continue;
            }
        }
        nap_ns = NAP_MIN_NS;
        tlm_core_lock_slow();
        int n = tlm_core_progress();
        tlm_core_unlock_slow();
        if (n < 0) /* transport failure: the application sees it too */
            break;
        tlm_core_wait_thread_turn(&w, n);
    }
    return NULL;
}

int tlm_core_thread_check_config(const tlm_config_t *c)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (c->PROGRESS_THREAD && c->PROGRESS_CPU >= 0 && n > 0 &&
        c->PROGRESS_CPU >= n) {
        tlm_error("TELEMEM_PROGRESS_CPU=%ld: this machine has no such CPU "
                  "(CPUs 0-%ld)", (long)c->PROGRESS_CPU, n - 1);
        return TELEMEM_ERR_CONFIG;
    }
    return TELEMEM_OK;
}

int tlm_core_thread_start(void)
{
    atomic_store(&stop, false);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    long cpu = tlm_core.cfg.PROGRESS_CPU;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((int)cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    }
    int e = pthread_create(&thread, &attr, progress_main, NULL);
    pthread_attr_destroy(&attr);
    if (e == EINVAL && cpu >= 0) {
        /* The pinning: a CPU outside the process's cpuset (one outside
         * its affinity mask alone is allowed; a CPU the machine does not
         * have was refused before the job was joined). */
        tlm_error("TELEMEM_PROGRESS_CPU=%ld: cannot pin the progress thread "
                  "there (no such CPU, or not allowed to this process; "
                  "%ld CPUs online)", cpu, sysconf(_SC_NPROCESSORS_ONLN));
        return TELEMEM_ERR_CONFIG;
    }
    if (e != 0) {
        tlm_error("cannot start the progress thread: %s", strerror(e));
        return TELEMEM_ERR_NO_MEMORY;
    }
    pthread_setname_np(thread, "telemem-progr");
    running = true;
    tlm_debug("progress thread started%s", cpu >= 0 ? " (pinned)" : "");
    return TELEMEM_OK;
}

void tlm_core_thread_stop(void)
{
    if (!running)
        return;
    atomic_store_explicit(&stop, true, memory_order_release);
    tlm_core_wait_wake_all();
    tlm_core_futex(&app_inside, FUTEX_WAKE_PRIVATE, 1, NULL); /* ends a nap */
    int d = tlm_core_lock_release_all();
    pthread_join(thread, NULL);
    tlm_core_lock_reacquire(d);
    running = false;
}

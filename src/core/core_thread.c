/* core_thread.c - threads: the process-wide recursive lock that entry
 * points take under TELEMEM_THREAD_MULTIPLE or with a progress thread, and
 * the optional progress thread that serves requests while the application
 * does not call Telemem (it spins briefly, then sleeps until a sender rings
 * the transport's doorbell). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uintptr_t owner; /* the holding thread's token, 0 if free */
static int depth;               /* written only by the holder */
/* initial-exec: one %fs-relative address instead of a __tls_get_addr
 * call per lock (libtelemem is linked, not dlopen'ed late; the variable is
 * one byte of the static TLS surplus if it is). */
static _Thread_local char tls_token __attribute__((tls_model("initial-exec")));

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
}

void tlm_core_unlock_slow(void)
{
    if (--depth == 0) {
        atomic_store_explicit(&owner, 0, memory_order_relaxed);
        pthread_mutex_unlock(&big_lock);
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

/* Polls in a row that found nothing before the thread sleeps. */
#define PROGRESS_SPIN 2000
/* Longest sleep: bounds the delay of sends queued by back-pressure (the
 * receiver frees buffers without ringing) and of a stop request. */
#define SLEEP_MAX_MS 50
#define SLEEP_PENDING_MS 1

static void *progress_main(void *arg)
{
    int idle = 0;
    while (!atomic_load_explicit(&stop, memory_order_acquire)) {
        tlm_core_lock_slow();
        int n = tlm_am_progress();
        bool pending = tlm_am.pending != NULL;
        tlm_core_unlock_slow();
        if (n != 0) {
            idle = 0;
            if (n < 0) /* transport failure: the application sees it too */
                break;
            continue;
        }
        if (++idle < PROGRESS_SPIN) {
            if ((idle & 63) == 0)
                sched_yield();
            continue;
        }
        idle = 0;
        /* Arm, then one more look (under the lock: the rings' read
         * positions belong to whoever holds it), then sleep. */
        tlm_core_lock_slow();
        tlm_am_sleep_arm();
        n = tlm_am_progress();
        pending = tlm_am.pending != NULL;
        tlm_core_unlock_slow();
        tlm_am_sleep_wait(n != 0 ? 0 : pending ? SLEEP_PENDING_MS
                                               : SLEEP_MAX_MS);
    }
    return NULL;
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
    tlm_am_wake_self();
    int d = tlm_core_lock_release_all();
    pthread_join(thread, NULL);
    tlm_core_lock_reacquire(d);
    running = false;
}

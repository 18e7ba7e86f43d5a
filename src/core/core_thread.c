/* core_thread.c - threads: the process-wide recursive lock that entry
 * points take under TELEMEM_THREAD_MULTIPLE, the biased guard's slow half
 * (a progress thread beside one application thread at a time: core.h),
 * and the optional progress thread that serves requests while the
 * application does not call Telemem.  Biased, it sleeps until a peer's
 * wait kicks it or its tick comes and serves only while the application is
 * outside the library and has not called it since the last tick; beside
 * THREAD_MULTIPLE it waits as core_wait.c says (sleeps until a sender
 * rings the transport's doorbell; it naps while an application thread is
 * inside the library and polls itself).  docs/wait.md, "The progress
 * thread". */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include "core/core_wait.h"
#include "core/core_wait_cal.h"

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

/* ---- biased: the guard's slow half and the thread's turn ------------------
 * The application pays a plain store and a load per call (core.h).  The
 * progress thread sleeps on its kick fd (transport.h, kick: a peer's wait
 * that needs this rank's CPU writes to it) for a tick, TICK_MIN doubling
 * up to TICK_MAX while ticks find nothing to do.
 * Woken, it serves when the application is outside the library and, unless
 * kicked, has not entered it since the last tick (an application that
 * calls the library serves its requests itself, in its own cache and
 * without a wake-up): a program that waits on plain loads of its memory,
 * or computes for long, still sees every request applied. */
static _Atomic uint32_t own_words[TLM_KICK_WORDS]; /* no transport's */
_Atomic uint32_t *tlm_core_bias_in = &own_words[TLM_KICK_INSIDE];
_Atomic uint32_t tlm_core_bias_pt;
uint32_t tlm_core_bias_seq;
_Thread_local unsigned tlm_core_bias_depth
    __attribute__((tls_model("initial-exec")));
static _Atomic uint32_t bias_waiting; /* application threads in bias_wait */
static _Atomic uint32_t *kick_word; /* TLM_KICK_WORDS (transport.h) */
static int kick_fd = -1;            /* readable when kicked, or -1 */
static int stop_fd = -1;            /* an eventfd: the thread's stop */

#define TICK_MIN_NS 100000L
#define TICK_MAX_NS 10000000L
#define SLICE_NS 100000

bool tlm_core_bias_setup(void)
{
    static int registered; /* 1 yes, -1 no: a process registers once */
    if (registered == 0)
        registered = syscall(SYS_membarrier,
                             MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0,
                             0) == 0
                         ? 1
                         : -1;
    if (registered < 0)
        tlm_debug("membarrier (private expedited) not available: the "
                  "progress thread takes the lock beside the application");
    kick_word = tlm_am_kick_word(&kick_fd);
    if (!kick_word)
        kick_word = own_words;
    if (stop_fd < 0)
        stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    uint64_t v;
    while (stop_fd >= 0 && read(stop_fd, &v, sizeof(v)) > 0)
        ; /* an earlier job's stop (a singleton initializes again) */
    if (stop_fd < 0) {
        tlm_debug("eventfd: %s: the progress thread takes the lock",
                  strerror(errno));
        return false;
    }
    tlm_core_bias_in = &kick_word[TLM_KICK_INSIDE];
    tlm_core_bias_seq = 0;
    atomic_store(tlm_core_bias_in, 0);
    atomic_store(&tlm_core_bias_pt, 0);
    tlm_core_bias_depth = 0;
    return registered > 0;
}

/* An entry found the progress thread serving: wait until it stops (it
 * looks at tlm_core_bias_in between polls and leaves within one). */
void tlm_core_bias_wait(void)
{
    atomic_fetch_add(&bias_waiting, 1); /* pairs with bias_release */
    while (atomic_load_explicit(&tlm_core_bias_pt, memory_order_acquire)) {
        struct timespec ts = {0, 1000000};
        tlm_core_futex(&tlm_core_bias_pt, FUTEX_WAIT_PRIVATE, 1, &ts);
    }
    atomic_fetch_sub(&bias_waiting, 1);
}

static void bias_release(void)
{
    atomic_exchange(&tlm_core_bias_pt, 0); /* release, and a full fence */
    if (atomic_load(&bias_waiting))
        tlm_core_futex(&tlm_core_bias_pt, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* Take the library from an application that is outside it; false if one
 * is inside. */
static bool bias_acquire(void)
{
    atomic_store_explicit(&tlm_core_bias_pt, 1, memory_order_relaxed);
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    if ((atomic_load_explicit(tlm_core_bias_in, memory_order_acquire) & 1) ==
        0)
        return true;
    bias_release();
    return false;
}

/* Serve while the application stays outside: how many messages. */
static int bias_serve(void)
{
    if (!bias_acquire())
        return 0;
    int total = 0, n;
    while ((n = tlm_core_progress()) > 0) {
        total += n;
        if ((atomic_load_explicit(tlm_core_bias_in, memory_order_relaxed) &
             1) ||
            atomic_load_explicit(&stop, memory_order_relaxed))
            break;
    }
    bias_release();
    return n < 0 ? n : total;
}

/* Sleep on the kick fd (and the stop eventfd) for at most ns: true if
 * kicked.  A kick that comes before the flag is seen is lost only to the
 * tick: kicks are hints. */
static bool bias_sleep(long ns)
{
    _Atomic uint32_t *w = kick_word;
    atomic_store(&w[TLM_KICK_LISTEN], 1);
    struct pollfd pf[2] = {{.fd = stop_fd, .events = POLLIN},
                           {.fd = kick_fd, .events = POLLIN}};
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    int k = ppoll(pf, kick_fd >= 0 ? 2 : 1, &ts, NULL);
    atomic_store(&w[TLM_KICK_LISTEN], 0);
    if (k <= 0 || !(pf[1].revents & POLLIN))
        return false;
    char buf[64];
    while (recv(kick_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
        ;
    return true;
}

/* Unpinned (TELEMEM_PROGRESS_CPU=-1), the thread may run on any CPU of
 * the node, not only on those of its rank's binding (launchers bind a rank
 * to its core): it serves requests while its rank computes or spins in
 * another library's wait on that core, and a core whose rank sleeps in a
 * wait is where it runs at once (2 ranks bound to 2 cores, a strided
 * accumulate to a rank spinning in MPI_Barrier: waits of 2-4 ms when the
 * thread had to take its rank's core, measured 2026-11-28).  The kernel
 * keeps it within the process's cpuset. */
static void any_cpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, &set);
    if (n > 0 && sched_setaffinity(0, sizeof(set), &set) != 0)
        tlm_debug("progress thread: stays on its rank's CPUs (%s)",
                  strerror(errno));
}

/* Ask the scheduler for its shortest time slice (Linux 6.12+: EEVDF
 * honours sched_runtime for SCHED_OTHER; older kernels refuse or ignore
 * it): the thread runs for microseconds when it runs, and with a short
 * slice a wake-up gets the core soon instead of waiting behind a task
 * that computes (or spins in another library's wait) for a whole base
 * slice. */
static void short_slice(void)
{
    int e = tlm_core_wait_set_slice(SLICE_NS);
    if (e != 0)
        tlm_debug("progress thread: no short time slice (%s)", strerror(e));
}

static void bias_main(void)
{
    long tick = TICK_MIN_NS;
    uint32_t seen = atomic_load(tlm_core_bias_in);
    while (!atomic_load_explicit(&stop, memory_order_acquire)) {
        bool kicked = bias_sleep(tick);
        uint32_t e = atomic_load_explicit(tlm_core_bias_in,
                                          memory_order_relaxed);
        bool called = e != seen;
        seen = e;
        int n = 0;
        if ((kicked || !called) && !(e & 1))
            n = bias_serve();
        if (n < 0) /* transport failure: the application sees it too */
            break;
        tick = n > 0 ? TICK_MIN_NS : TLM_MIN(2 * tick, TICK_MAX_NS);
    }
}

static void bias_stop(void)
{
    uint64_t one = 1;
    ssize_t k = write(stop_fd, &one, sizeof(one));
    (void)k; /* EAGAIN: signalled already */
}

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
    tlm_core_bias_depth = TLM_BIAS_THREAD_DEPTH;
    prctl(PR_SET_TIMERSLACK, 1000UL); /* naps of tens of us, not +50 us */
    if (tlm_core.cfg.PROGRESS_CPU < 0)
        any_cpu();
    if (tlm_core.biased) {
        short_slice();
        bias_main();
        return NULL;
    }
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
    if (tlm_core.biased)
        bias_stop();
    tlm_core_wait_wake_all();
    tlm_core_futex(&app_inside, FUTEX_WAKE_PRIVATE, 1, NULL); /* ends a nap */
    int d = tlm_core_lock_release_all();
    pthread_join(thread, NULL);
    tlm_core_lock_reacquire(d);
    running = false;
    if (tlm_core.biased) {
        /* The transport's word goes with its memory at teardown; the
         * caller's guard leaves through this process's own. */
        atomic_store(&own_words[TLM_KICK_INSIDE],
                     atomic_load(tlm_core_bias_in));
        tlm_core_bias_in = &own_words[TLM_KICK_INSIDE];
    }
}

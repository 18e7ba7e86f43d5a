/* core_wait.c - the wait policy (TELEMEM_WAIT): every blocking wait polls,
 * spins for as long as a sleep and wake-up costs here (measured at start,
 * then from the wake-ups the job meets: wake_sample), yields as long
 * again, then sleeps on the transports' wait objects (a
 * doorbell, a completion queue's fd) until something arrives; under auto,
 * while the node has more runnable threads than CPUs, a rank bound to its
 * own CPUs spins for a time slice and others not at all, and the spin
 * shrinks while it does not pay; a collective's node step in a job of one
 * node sleeps on the node word instead (one wake-up for all sleepers).
 * Also the bounded wait of every blocking
 * call (TELEMEM_TIMEOUT, liveness) and the wake-up of this process's
 * other sleeping threads.  docs/wait.md describes the protocol.  It and
 * core_thread.c call each other: a wait drops the big lock between polls,
 * and the progress thread waits as a wait does. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include "core/core_wait.h"
#include "core/core_wait_cal.h"
#include "core/core_wait_node.h"

/* Phase of a wait, in the top bits of w->idle; the low bits count the
 * empty polls of the phase.  ARMED: the transports were armed and the
 * caller looked at its condition once more; the next empty turn sleeps. */
enum { PH_SPIN = 0, PH_YIELD = 1, PH_BLOCK = 2, PH_ARMED = 3 };
#define PH_SHIFT 24
#define COUNT_MASK ((1 << PH_SHIFT) - 1)
/* The wait kicked its peer (kick_check) in this idle streak. */
#define KICKED (1u << 30)
#define PHASE(w) (((unsigned)(w)->idle >> PH_SHIFT) & 3u)
#define SET_PHASE(w, ph)                                                    \
    ((w)->idle = (int)(((unsigned)(w)->idle & KICKED) |                     \
                       (unsigned)(ph) << PH_SHIFT))
/* Empty polls between two looks at the clock while spinning: a wait
 * answered within that many polls never reads the clock. */
#define SPIN_CLOCK 64u
/* The wake-up costs a sleeper meets later (wake_sample): the median of
 * the last WAKE_SAMPLES, once WAKE_SEEN came, replaces the start-up
 * measurement, up to WAKE_NS_MAX (a virtual CPU idle for long wakes
 * slowly: 20-40 us after 200 us here, 50-130 us after 1-10 ms). */
#define WAKE_SAMPLES 15
#define WAKE_SEEN 5
#define WAKE_NS_MAX 500000
/* Idle streaks per adjustment of the spin budget. */
#define ADAPT_EVERY 32u
/* A sleep that no transport can end early (a transport without a wait
 * object, a thread that is not the transport sleeper) is kept this short:
 * at most a thousand wake-ups a second, a fraction of a percent of a
 * core.  A telemem_wait_poll sleep that a network driver's silent write
 * could end doubles from it up to SHORT_SLEEP_MS << SILENT_BACKOFF while
 * nothing arrives. */
#define SHORT_SLEEP_MS 1
#define SILENT_BACKOFF 6
/* Yields under auto (yield_turn): at most YIELD_MAX sleep costs per wait;
 * a yield longer than YIELD_LONG lost a whole time slice to another task
 * (Linux's base slice is 0.75 ms, times 1 + log2(CPUs), so a yield that
 * comes back within a third of the smallest one did not); no yields for
 * YIELD_BAD_MIN .. YIELD_BAD_MAX after a long one. */
#define YIELD_MAX 64
#define YIELD_LONG ((int64_t)250000)
#define YIELD_BAD_MIN ((int64_t)50000000)
#define YIELD_BAD_MAX ((int64_t)1000000000)
/* How often auto looks at the number of runnable threads of the node. */
#define SAMPLE_NS 10000000
/* The progress thread's longest sleep (it has no timeout to watch). */
#define THREAD_SLEEP_MS 1000
#define MAX_FDS 8
/* Threads that sleep beside the transport sleeper, each on its own
 * eventfd (and the transports' fds while the sleeper sleeps on them). */
#define SHADOWS 16

static struct {
    int mode;               /* TLM_WAIT_* */
    _Atomic int64_t wake_ns; /* measured: waking a sleeper on an idle CPU */
    int64_t wake_seen[WAKE_SAMPLES]; /* wake_sample's, by the sleeper */
    unsigned nwake;
    int64_t block_ns;       /* measured: a wake-up between busy CPUs */
    _Atomic int64_t spin_ns; /* spin budget in effect (adapted) */
    int online;             /* CPUs of the node */
    bool static_over;       /* more ranks on the node than CPUs */
    bool own_cpus;          /* this process is bound to its share of them */
    int share;              /* CPUs of its affinity mask */
    _Atomic int app_waiters; /* application threads that reached a clock
                              * check in a wait, ever (spin_budget) */
    int64_t slice_ns;       /* the scheduler's time slice for this thread */
    _Atomic bool over;      /* last sample: more runnable threads than CPUs */
    _Atomic int64_t next_sample;
    int loadavg_fd;
    _Atomic unsigned wins, losses; /* idle streaks ended while spinning /
                                    * after the spin */
    _Atomic int64_t yield_bad_until, yield_backoff; /* yield_turn */
    int efd;                /* process-local wake-up of the sleeper */
    /* Sleeping threads: one (the token holder) sleeps on the transports'
     * objects, others on the epoch futex, which progress bumps. */
    _Atomic int token;
    _Atomic bool token_asleep;
    _Atomic uint32_t epoch;
    _Atomic int nwaiters;
    _Atomic int shadow[SHADOWS]; /* eventfds of shadow sleepers, -1: free */
    _Atomic int nshadow;
    /* Armed transports: their fds, whether some cannot wake a sleeper or
     * write silently, and a generation bumped at each disarm. */
    int fds[MAX_FDS];
    int nfds;
    bool bounded;
    _Atomic uint32_t arm_gen;
    bool ready;
    char text[256];
} W = {.loadavg_fd = -1, .efd = -1};

/* Per thread: start of the current phase, and what the thread saw when
 * it armed (epoch, arm generation). */
typedef struct {
    int64_t t0;
    int efd; /* this thread's eventfd for shadow sleeps, -1 until made */
    uint32_t epoch, arm_gen;
    unsigned silent_sleeps; /* user-wait sleeps in a row (SILENT_BACKOFF) */
    int64_t yield_spent;    /* CPU of yields no one else used (yield_turn) */
    bool progress; /* the progress thread */
    bool counted;  /* in W.app_waiters */
} tstate_t;
static _Thread_local tstate_t T
    __attribute__((tls_model("initial-exec"))) = {.efd = -1};
static pthread_key_t efd_key; /* closes a thread's eventfd at its exit */
static bool efd_key_ok;
static pthread_once_t efd_once = PTHREAD_ONCE_INIT;

/* ---- set-up ------------------------------------------------------------- */

static const char *const mode_names[] = {"auto", "spin", "yield", "block"};

static int parse_mode(const char *s)
{
    for (int i = 0; i < (int)TLM_ARRAY_SIZE(mode_names); i++)
        if (strcmp(s, mode_names[i]) == 0)
            return i;
    return -1;
}

int tlm_core_wait_check_config(const char *value)
{
    if (parse_mode(value) >= 0)
        return TELEMEM_OK;
    tlm_error("TELEMEM_WAIT=\"%s\" is invalid: expected auto, spin, yield or "
              "block", value);
    return TELEMEM_ERR_CONFIG;
}

int tlm_core_wait_setup(const char *value, int nlocal)
{
    W.mode = parse_mode(value);
    if (W.mode < 0)
        W.mode = TLM_WAIT_AUTO;
    long on = sysconf(_SC_NPROCESSORS_ONLN);
    W.online = on > 0 ? (int)on : 1;
    W.static_over = nlocal > W.online;
    cpu_set_t aff;
    W.share = sched_getaffinity(0, sizeof(aff), &aff) == 0 ? CPU_COUNT(&aff)
                                                             : W.online;
    W.own_cpus = !W.static_over && (long)W.share * nlocal <= W.online;
    atomic_store(&W.app_waiters, 0);
    W.slice_ns = tlm_core_wait_sched_slice();
    atomic_store(&W.over, W.static_over);
    atomic_store(&W.next_sample, 0);
    W.loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    W.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (W.efd < 0) {
        tlm_error("eventfd: %s", strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    bool cal = W.mode == TLM_WAIT_AUTO || W.mode == TLM_WAIT_YIELD;
    W.block_ns = cal ? tlm_core_wait_measure_block() : BLOCK_NS_GUESS;
    atomic_store(&W.wake_ns, cal ? TLM_MAX(tlm_core_wait_measure_wake(),
                                            W.block_ns)
                                 : BLOCK_NS_GUESS);
    W.nwake = 0;
    atomic_store(&W.spin_ns, atomic_load(&W.wake_ns));
    atomic_store(&W.yield_bad_until, 0);
    atomic_store(&W.yield_backoff, YIELD_BAD_MIN);
    atomic_store(&W.token, 0);
    atomic_store(&W.nwaiters, 0);
    for (int i = 0; i < SHADOWS; i++)
        atomic_store(&W.shadow[i], -1);
    atomic_store(&W.nshadow, 0);
    W.ready = true;
    snprintf(W.text, sizeof(W.text),
             "wait %s: spin up to %.1f us (waking a sleeper on an idle CPU, "
             "measured here), then yield (a wake-up between busy CPUs: "
             "%.1f us), then sleep; %d ranks on %d CPUs%s; "
             "on a busy node spin %s\n",
             mode_names[W.mode], (double)atomic_load(&W.wake_ns) / 1e3,
             (double)W.block_ns / 1e3, nlocal, W.online,
             W.own_cpus ? ", bound to its share" : "",
             W.own_cpus ? "up to a time slice" : "not at all");
    tlm_debug("%s", W.text);
    return TELEMEM_OK;
}

void tlm_core_wait_fini(void)
{
    if (T.efd >= 0) { /* the finalizing thread's; others close at exit */
        if (efd_key_ok)
            pthread_setspecific(efd_key, NULL);
        close(T.efd);
        T.efd = -1;
    }
    if (W.loadavg_fd >= 0)
        close(W.loadavg_fd);
    if (W.efd >= 0)
        close(W.efd);
    memset(&W, 0, sizeof(W));
    W.loadavg_fd = W.efd = -1;
}

const char *tlm_core_wait_string(void)
{
    return W.text;
}

/* ---- auto: is the node oversubscribed, does spinning pay? --------------- */

/* Runnable threads of the node (the 4th field of /proc/loadavg, "r/t"),
 * at most every SAMPLE_NS, by one thread at a time. */
static void sample_load(int64_t now)
{
    int64_t next = atomic_load_explicit(&W.next_sample, memory_order_relaxed);
    if (now < next || W.loadavg_fd < 0 ||
        !atomic_compare_exchange_strong(&W.next_sample, &next,
                                        now + SAMPLE_NS))
        return;
    char buf[128];
    ssize_t k = pread(W.loadavg_fd, buf, sizeof(buf) - 1, 0);
    if (k <= 0)
        return;
    buf[k] = '\0';
    const char *p = buf;
    for (int f = 0; f < 3 && p; f++) {
        p = strchr(p, ' ');
        p = p ? p + 1 : NULL;
    }
    long running = p ? strtol(p, NULL, 10) : 0;
    atomic_store_explicit(&W.over, W.static_over || running > W.online,
                          memory_order_relaxed);
}

/* An idle streak ended with an arrival in phase ph after k empty polls:
 * every ADAPT_EVERY streaks that reached the clock, halve the spin budget
 * when the spin caught fewer than one in five, double it (up to the
 * measured cost) when it caught at least half. */
static void outcome(unsigned ph, unsigned k)
{
    if (W.mode != TLM_WAIT_AUTO || (ph == PH_SPIN && k < SPIN_CLOCK) ||
        atomic_load_explicit(&W.over, memory_order_relaxed))
        return;
    unsigned w = ph == PH_SPIN ? atomic_fetch_add(&W.wins, 1) + 1
                               : atomic_load(&W.wins);
    unsigned l = ph != PH_SPIN ? atomic_fetch_add(&W.losses, 1) + 1
                               : atomic_load(&W.losses);
    if (w + l < ADAPT_EVERY)
        return;
    atomic_store(&W.wins, 0);
    atomic_store(&W.losses, 0);
    int64_t s = atomic_load(&W.spin_ns);
    int64_t cap = atomic_load_explicit(&W.wake_ns, memory_order_relaxed);
    if (w * 4 < l)
        s = TLM_MAX(s / 2, cap / 16);
    else if (w >= l)
        s = TLM_MIN(s * 2, cap);
    atomic_store(&W.spin_ns, s);
}

/* A sleep of the transport sleeper ended ns after a peer rang it, at
 * least CAL_PAUSE_NS into the sleep (the transport's figure): that is
 * what sleeping costs here now.  The start-up measurement (measure_wake)
 * sees a CPU idle for 200 us once; a wait's sleep may last longer, a
 * virtual CPU idle for long wakes more slowly, and the VM's phase
 * changes.  So once WAKE_SEEN wake-ups were seen, the
 * spin budget's cap is the median of the last WAKE_SAMPLES, and a budget
 * at the old cap moves with it.  Not counted on a busy node, where a
 * wake-up also waits for a CPU (the budget is then the slice or none). */
static void wake_sample(int64_t ns)
{
    if (W.mode != TLM_WAIT_AUTO || ns <= 0 || ns > 1000000000 ||
        atomic_load_explicit(&W.over, memory_order_relaxed))
        return;
    W.wake_seen[W.nwake++ % WAKE_SAMPLES] = ns;
    if (W.nwake < WAKE_SEEN)
        return;
    unsigned n = TLM_MIN(W.nwake, (unsigned)WAKE_SAMPLES);
    int64_t v[WAKE_SAMPLES];
    memcpy(v, W.wake_seen, n * sizeof(v[0]));
    qsort(v, n, sizeof(v[0]), tlm_core_wait_cmp_i64);
    int64_t cap = TLM_MIN(TLM_MAX(v[n / 2], W.block_ns), WAKE_NS_MAX);
    int64_t old = atomic_exchange(&W.wake_ns, cap);
    int64_t s = atomic_load(&W.spin_ns);
    if (s >= old || s > cap)
        atomic_store(&W.spin_ns, cap);
}

/* The progress thread (beside THREAD_MULTIPLE) neither spins nor yields
 * unless pinned to a CPU of its own: elsewhere it shares a core with an
 * application thread, and a yield to one that computes loses a time
 * slice. */
static bool thread_sleeps_at_once(void)
{
    return T.progress && tlm_core.cfg.PROGRESS_CPU < 0;
}

static int64_t spin_budget(void)
{
    if (thread_sleeps_at_once())
        return 0;
    if (W.mode == TLM_WAIT_SPIN)
        return INT64_MAX;
    if (W.mode == TLM_WAIT_YIELD)
        return W.block_ns;
    bool own = W.own_cpus && !T.progress &&
               atomic_load_explicit(&W.app_waiters, memory_order_relaxed) <=
                   W.share;
    if (!atomic_load_explicit(&W.over, memory_order_relaxed)) {
        int64_t s = atomic_load_explicit(&W.spin_ns, memory_order_relaxed);
        /* Peers on other nodes: a wait lasts a network round trip or
         * more (a transfer), longer than a sleep costs, so the budget
         * above would sleep through most of them and add a wake-up to
         * each.  A rank on its own CPUs takes nothing from the peer it
         * waits for by spinning: it spins up to a time slice. */
        return own && tlm_am.network ? TLM_MAX(s, W.slice_ns) : s;
    }
    /* Busy node.  A rank bound to its own share of the CPUs shares its
     * core only with other programs: its spin takes nothing from the rank
     * it waits for, and its sleep costs up to a time slice (a woken thread
     * waits for the task that took the core to use its slice), so it
     * spins for as long as a slice.  Else (ranks share cores; this is
     * the progress thread, which shares its core with the application;
     * or more of the rank's threads have waited than its share has CPUs,
     * so they may wait for each other there) a spin takes the core from
     * the thread it waits for: none. */
    return own ? W.slice_ns : 0;
}

/* ---- waking other threads ----------------------------------------------- */

/* Bump the epoch, wake its sleepers and the transport sleeper; returns
 * the new epoch. */
static uint32_t notify(void)
{
    uint32_t e = atomic_fetch_add(&W.epoch, 1) + 1;
    if (atomic_load(&W.nwaiters) > 0)
        tlm_core_futex(&W.epoch, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
    uint64_t one = 1;
    if (atomic_load(&W.token_asleep) && W.efd >= 0) {
        ssize_t k = write(W.efd, &one, sizeof(one));
        (void)k; /* EAGAIN: it is signalled already */
    }
    if (atomic_load(&W.nshadow) > 0) {
        for (int i = 0; i < SHADOWS; i++) {
            int fd = atomic_load(&W.shadow[i]);
            if (fd >= 0) {
                ssize_t k = write(fd, &one, sizeof(one));
                (void)k;
            }
        }
    }
    return e;
}

void tlm_core_wait_notify(void)
{
    (void)notify();
}

void tlm_core_wait_wake_all(void)
{
    if (!W.ready)
        return;
    tlm_core_wait_notify();
    uint64_t one = 1;
    ssize_t k = write(W.efd, &one, sizeof(one)); /* even if not asleep yet */
    (void)k;
}

/* ---- the bounded wait --------------------------------------------------- */

void tlm_core_wait_init(tlm_wait_t *w, int peer)
{
    w->start = 0;
    w->next_check = 0;
    w->idle = 0;
    w->rank = peer;
}

/* The launcher's list of dead ranks (tlm_boot_dead) into the peers' dead
 * flags: a transport may not see a death that this rank only waits on
 * (ofi: docs/transports.md). */
static void read_dead_list(void)
{
    static double next; /* one read per liveness interval */
    if (!tlm_core.boot)
        return;
    double now = tlm_util_now();
    if (now < next)
        return;
    next = now + tlm_core.cfg.LIVENESS_INTERVAL;
    const char *list = tlm_boot_dead(tlm_core.boot);
    for (const char *p = list; p && *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p)
            break;
        if (r >= 0 && r < tlm_core.nranks && r != tlm_core.rank)
            tlm_core.peers[r].dead = true;
        p = *end == ',' ? end + 1 : end;
    }
}

/* Is peer (every rank when < 0) alive and still in the job?  A rank that
 * left (LEAVE: its finalize gave up) counts as dead: it answers nothing
 * more.  Either is remembered for finalize. */
int tlm_core_check_alive(int peer)
{
    int lo = peer < 0 ? 0 : peer, hi = peer < 0 ? tlm_core.nranks : peer + 1;
    read_dead_list();
    for (int r = lo; r < hi; r++) {
        if (r == tlm_core.rank)
            continue;
        if (tlm_core_peer_left(r)) {
            tlm_error("rank %d has left the job (its finalize gave up)", r);
            tlm_core.peers[r].dead = true;
            tlm_core.peer_gone = true;
            return TELEMEM_ERR_PEER_DEAD;
        }
        if (tlm_core.peers[r].dead || tlm_am_peer_alive(r) != TELEMEM_OK) {
            tlm_error("rank %d has died", r);
            tlm_core.peers[r].dead = true;
            tlm_core.peer_gone = true;
            return TELEMEM_ERR_PEER_DEAD;
        }
    }
    return TELEMEM_OK;
}

/* TELEMEM_TIMEOUT and liveness, when the wait looks at the clock. */
static int clock_checks(tlm_wait_t *w, int64_t ns)
{
    if (T.progress)
        return TELEMEM_OK;
    double now = (double)ns * 1e-9;
    if (w->start == 0) {
        w->start = now;
        w->next_check = now + tlm_core.cfg.LIVENESS_INTERVAL;
        return TELEMEM_OK;
    }
    if (tlm_core.cfg.TIMEOUT > 0 && now - w->start > tlm_core.cfg.TIMEOUT) {
        tlm_error("wait timed out after %.1f s (TELEMEM_TIMEOUT)",
                  now - w->start);
        return TELEMEM_ERR_TIMED_OUT;
    }
    if (now >= w->next_check) {
        w->next_check = now + tlm_core.cfg.LIVENESS_INTERVAL;
        return tlm_core_check_alive(w->rank);
    }
    return TELEMEM_OK;
}

/* A wait for one rank whose kick did not get through (its thread was
 * awake between two ticks, or its application inside the library):
 * sleep briefly and kick again, rather than until its thread's next tick
 * (up to 10 ms) serves the request; 1 ms doubling, so that a rank that
 * stays inside (stopped there) costs no more than a few wake-ups. */
static bool kick_missed(const tlm_wait_t *w)
{
    return w->rank >= 0 && tlm_core.guard == TLM_GUARD_BIAS &&
           !((unsigned)w->idle & KICKED);
}

/* This sleep is short, and doubles while nothing arrives (from
 * SHORT_SLEEP_MS, SILENT_BACKOFF times): something that cannot ring this
 * wait may end it (a network driver's silent write to a user wait, a rank
 * asleep on the node word that owes it something, a kick that did not
 * get through). */
static bool backoff_sleep(const tlm_wait_t *w, bool user)
{
    return (user && tlm_am.silent_writes) || tlm_core_wait_node_sleepers() ||
           kick_missed(w);
}

/* Longest sleep (ms) before the wait must look at the clock again. */
static int sleep_limit_ms(const tlm_wait_t *w, int64_t ns, bool user)
{
    if (T.progress)
        return THREAD_SLEEP_MS;
    double now = (double)ns * 1e-9, until = w->next_check;
    if (tlm_core.cfg.TIMEOUT > 0)
        until = TLM_MIN(until, w->start + tlm_core.cfg.TIMEOUT);
    double ms = (until - now) * 1e3 + 1;
    int lim = ms < 1 ? 1 : ms > INT_MAX ? INT_MAX : (int)ms;
    if (backoff_sleep(w, user))
        lim = TLM_MIN(lim, SHORT_SLEEP_MS
                               << TLM_MIN(T.silent_sleeps, SILENT_BACKOFF));
    return lim;
}

/* Between two empty polls other threads may take the lock; a yield also
 * lets another process have this core. */
static void pause_turn(bool yield)
{
    if (!tlm_core.locking) {
        if (yield)
            sched_yield();
        return;
    }
    int d = tlm_core_lock_release_all();
    if (yield)
        sched_yield();
    tlm_core_lock_reacquire(d);
}

/* Yields under auto.  A yield that another task used only briefly (ranks
 * that share a core run until they wait and yield back) costs less than a
 * sleep and a wake-up; one that took the core away for longer than a sleep
 * would have cost does not: a task that computes or a busy loop keeps it
 * for its whole time slice (Linux's EEVDF puts the yielder behind it),
 * while a woken sleeper preempts at once.  Measured here: an ARMCI
 * accumulate served by a progress thread under two busy loops took
 * 1.5-3.8 ms (median) when waits yielded, 0.07-0.12 ms when they slept;
 * 4 ranks on 2 cores in a barrier loop 88 us per barrier sleeping, Open
 * MPI's yielding 13 us.  So a wait yields while yields come back quickly,
 * for at most YIELD_MAX sleep costs; a yield that returned at once (no one
 * else ran) is CPU spent, at most one sleep cost per wait; after a yield
 * that lost a time slice (YIELD_LONG) in a wait that woke a progress
 * thread (the thread it waits for then sleeps no longer, and its
 * wake-up preempts), waits do not yield for YIELD_BAD_MIN, doubling up
 * to YIELD_BAD_MAX while it stays so.  A long yield in other waits (the
 * peers they wait for are ranks or threads that compute or yield
 * themselves) is no reason to sleep: sleepers there wait for each other's
 * wake-ups, and GASNet's testcoll with 2 threads on each of 4 nodes took
 * 6-30 s per phase that way against 0.1-0.9 s (2026-11-29). */

/* One yield turn of w at now; false: the wait sleeps instead. */
static bool yield_turn(const tlm_wait_t *w, int64_t now)
{
    if (thread_sleeps_at_once())
        return false;
    if (W.mode == TLM_WAIT_YIELD) {
        pause_turn(true);
        return true;
    }
    if (now < atomic_load_explicit(&W.yield_bad_until, memory_order_relaxed) ||
        now - T.t0 > YIELD_MAX * W.block_ns || T.yield_spent > W.block_ns)
        return false;
    pause_turn(true);
    int64_t d = tlm_util_now_ns() - now;
    if (d < W.block_ns / 2) {
        T.yield_spent += d;
    } else if (d > TLM_MAX(YIELD_LONG, 2 * W.block_ns) &&
               ((unsigned)w->idle & KICKED)) {
        int64_t b = atomic_load_explicit(&W.yield_backoff,
                                         memory_order_relaxed);
        atomic_store_explicit(&W.yield_bad_until, now + d + b,
                              memory_order_relaxed);
        atomic_store_explicit(&W.yield_backoff, TLM_MIN(2 * b, YIELD_BAD_MAX),
                              memory_order_relaxed);
        return false;
    } else {
        atomic_store_explicit(&W.yield_backoff, YIELD_BAD_MIN,
                              memory_order_relaxed);
    }
    return true;
}

/* ---- sleeping ----------------------------------------------------------- */

static bool may_take_token(void)
{
    return T.progress || !tlm_core.cfg.PROGRESS_THREAD || tlm_core.biased;
}

/* Returns tlm_am_wait_disarm's figure: when a peer rang (0: unknown). */
static int64_t disarm(void)
{
    int64_t rung = tlm_am_wait_disarm();
    atomic_fetch_add(&W.arm_gen, 1);
    return rung;
}

/* Arm the transports for a sleep, then poll once more: > 0 when something
 * is there (disarmed again), 0 when armed, or an error. */
static int arm(void)
{
    bool bounded = false;
    int n = tlm_am_wait_arm(W.fds, MAX_FDS, &bounded);
    if (n >= 0) {
        W.nfds = n;
        W.bounded = bounded;
        n = tlm_core_progress();
        if (n == 0) {
            /* Threads sleeping on the epoch look at their conditions once
             * more: a direct-path write made before this arm rang no one
             * (the doorbell said awake); one made after it rings us. */
            if (tlm_core.locking && (atomic_load(&W.nwaiters) > 0 ||
                                     atomic_load(&W.nshadow) > 0)) {
                uint32_t e = notify();
                if (e == T.epoch + 1) /* our own bump ends no sleep */
                    T.epoch = e;
            }
            return 0;
        }
    } else if (n == TELEMEM_ERR_AGAIN) {
        n = 1;
    }
    disarm();
    return n;
}

/* Step k of a sleep: arm (or, for a thread that waits on the epoch only,
 * note it), so that whatever happens from now on ends the sleep of step
 * k+1; the caller looks at its condition in between. */
static int arm_turn(tlm_wait_t *w)
{
    T.epoch = atomic_load(&W.epoch);
    if (may_take_token()) {
        int n = arm();
        if (n != 0) { /* something came: spin again */
            w->idle = 0;
            return n < 0 ? n : TELEMEM_OK;
        }
        T.arm_gen = atomic_load(&W.arm_gen);
    } else {
        /* The progress thread owns the wait objects and may have armed
         * them before this thread's send found no room: ask for it. */
        tlm_am_wait_want();
    }
    SET_PHASE(w, PH_ARMED);
    return TELEMEM_OK;
}

/* Sleep on the transports' objects and the local eventfd. */
static int sleep_token(int ms)
{
    if (T.arm_gen != atomic_load(&W.arm_gen)) {
        /* Another thread disarmed them since our step k: arm again. */
        int n = arm();
        if (n != 0)
            return n < 0 ? n : TELEMEM_OK;
    }
    struct pollfd pf[MAX_FDS + 1];
    int n = 0;
    for (int i = 0; i < W.nfds; i++)
        pf[n++] = (struct pollfd){.fd = W.fds[i], .events = POLLIN};
    pf[n++] = (struct pollfd){.fd = W.efd, .events = POLLIN};
    if (W.bounded)
        ms = TLM_MIN(ms, SHORT_SLEEP_MS);
    /* Announce the sleep, then look at the epoch (pairs with notify). */
    atomic_store(&W.token_asleep, true);
    if (atomic_load(&W.epoch) != T.epoch) {
        atomic_store(&W.token_asleep, false);
        disarm();
        return TELEMEM_OK;
    }
    int d = tlm_core.locking ? tlm_core_lock_release_all() : 0;
    int64_t t_sleep = tlm_util_now_ns();
    int k = poll(pf, (nfds_t)n, ms);
    tlm_core_lock_reacquire(d);
    atomic_store(&W.token_asleep, false);
    int64_t rung = disarm();
    /* A ring that came within CAL_PAUSE_NS of the sleep found the CPU
     * not yet idle, unlike the sleeps the budget decides on (those that
     * outlast it): not a sample. */
    if (k > 0 && rung - t_sleep >= CAL_PAUSE_NS)
        wake_sample(tlm_util_now_ns() - rung);
    if (k > 0 && (pf[n - 1].revents & POLLIN)) {
        uint64_t v;
        ssize_t r = read(W.efd, &v, sizeof(v));
        (void)r;
    }
    /* Woken by a transport: threads waiting on the epoch look too (a
     * direct-path write rings only this sleeper). */
    if (k > 0 && tlm_core.locking)
        tlm_core_wait_notify();
    return TELEMEM_OK;
}

static void sleep_epoch(int ms)
{
    atomic_fetch_add(&W.nwaiters, 1);
    if (atomic_load(&W.epoch) == T.epoch) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        int d = tlm_core.locking ? tlm_core_lock_release_all() : 0;
        tlm_core_futex(&W.epoch, FUTEX_WAIT_PRIVATE, T.epoch, &ts);
        tlm_core_lock_reacquire(d);
    }
    atomic_fetch_sub(&W.nwaiters, 1);
}

static void close_efd(void *arg)
{
    close((int)(intptr_t)arg - 1);
}

static void make_efd_key(void)
{
    efd_key_ok = pthread_key_create(&efd_key, close_efd) == 0;
}

/* Sleep beside the transport sleeper: on this thread's eventfd, which
 * notify writes, and, while the sleeper sleeps on them, on the
 * transports' fds too, so that an arrival wakes both at once (the sleeper
 * would otherwise wake this thread only after its own wake-up).  Falls
 * back to the epoch futex when no slot or eventfd is to be had. */
static void sleep_shadow(int ms)
{
    if (T.efd < 0) {
        pthread_once(&efd_once, make_efd_key);
        T.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (T.efd >= 0 && efd_key_ok)
            pthread_setspecific(efd_key, (void *)(intptr_t)(T.efd + 1));
    }
    int slot = -1;
    for (int i = 0; T.efd >= 0 && slot < 0 && i < SHADOWS; i++) {
        int freefd = -1;
        if (atomic_compare_exchange_strong(&W.shadow[i], &freefd, T.efd))
            slot = i;
    }
    if (slot < 0) {
        sleep_epoch(ms);
        return;
    }
    atomic_fetch_add(&W.nshadow, 1);
    /* Published, then look at the epoch (pairs with notify). */
    if (atomic_load(&W.epoch) == T.epoch) {
        struct pollfd pf[MAX_FDS + 1];
        int n = 0;
        if (atomic_load(&W.token_asleep))
            for (int i = 0; i < W.nfds; i++)
                pf[n++] = (struct pollfd){.fd = W.fds[i], .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = T.efd, .events = POLLIN};
        int d = tlm_core.locking ? tlm_core_lock_release_all() : 0;
        int k = poll(pf, (nfds_t)n, ms);
        tlm_core_lock_reacquire(d);
        if (k > 0 && (pf[n - 1].revents & POLLIN)) {
            uint64_t v;
            ssize_t r = read(T.efd, &v, sizeof(v));
            (void)r;
        }
    }
    atomic_store(&W.shadow[slot], -1);
    atomic_fetch_sub(&W.nshadow, 1);
}

/* Step k+1: sleep until something arrives, another thread made progress,
 * or ms passed.  Then the wait spins again. */
static int sleep_turn(tlm_wait_t *w, int ms, bool user)
{
    int rc = TELEMEM_OK;
    int free_token = 0;
    bool counted = !T.progress && tlm_core_thread_app_sleep();
    if (may_take_token() &&
        atomic_compare_exchange_strong(&W.token, &free_token, 1)) {
        rc = sleep_token(ms);
        atomic_store(&W.token, 0);
    } else {
        /* Without a progress thread, no thread may be the transports'
         * sleeper right now (its wait ended): short sleeps. */
        sleep_shadow(!tlm_core.cfg.PROGRESS_THREAD ? TLM_MIN(ms, SHORT_SLEEP_MS)
                                                   : ms);
    }
    tlm_core_thread_app_wake(counted);
    T.silent_sleeps += user || backoff_sleep(w, user);
    w->idle = 1; /* spin again; an arrival ends the streak (event_turn) */
    T.t0 = 0;
    return rc;
}

/* A wait for one rank that has lasted as long as waking a sleeper costs
 * here (or that stops spinning: force) asks that rank's progress thread
 * to serve it (transport.h, kick: nothing happens unless the rank has one
 * and its application is outside the library), once per idle streak: the
 * request may sit there until its application calls the library.  A kick
 * that did not get through (the thread between two sleeps, the
 * application inside) is tried again at the next check: a thread that
 * found nothing at its tick sleeps twice as long, and without a second
 * kick a request that came in that moment waited for the tick (a strided
 * accumulate to a rank in MPI_Barrier: 2-4 ms, one run in five of
 * ARMCI-MPI's overlap test, measured 2026-11-28).  True if a thread was
 * woken. */
static bool kick_check(tlm_wait_t *w, int64_t now, bool force)
{
    if (w->rank < 0 || ((unsigned)w->idle & KICKED) ||
        (!force && now - T.t0 < atomic_load_explicit(&W.wake_ns,
                                                     memory_order_relaxed)))
        return false;
    if (!tlm_am_kick(w->rank))
        return false;
    w->idle = (int)((unsigned)w->idle | KICKED);
    return true;
}

/* A node step's sleep on the node word (core_wait_node.c), then spin
 * again as after any sleep. */
static int node_turn(tlm_wait_t *w, int64_t now)
{
    int n = tlm_core_wait_node_sleep(sleep_limit_ms(w, now, false));
    if (n < 0)
        return n;
    w->idle = n > 0 ? 0 : 1;
    T.t0 = 0;
    return TELEMEM_OK;
}

/* ---- one turn ----------------------------------------------------------- */

/* Nothing came.  Spin (looking at the clock every SPIN_CLOCK polls), yield,
 * arm, sleep: each phase ends when its budget is spent. */
static int idle_turn(tlm_wait_t *w, bool user)
{
    unsigned ph = PHASE(w), k = (((unsigned)w->idle & COUNT_MASK) + 1) &
                                COUNT_MASK;
    if (k == 0) /* wrapped: keep looking at the clock every SPIN_CLOCK */
        k = 2 * SPIN_CLOCK;
    w->idle = (int)(((unsigned)w->idle & KICKED) | ph << PH_SHIFT | k);
    if (ph == PH_SPIN && W.mode != TLM_WAIT_BLOCK) {
        if (k % SPIN_CLOCK) {
            pause_turn(false);
            return TELEMEM_OK;
        }
        int64_t now = tlm_util_now_ns();
        if (k == SPIN_CLOCK || T.t0 == 0)
            T.t0 = now;
        if (TLM_UNLIKELY(!T.counted) && !T.progress) {
            T.counted = true;
            atomic_fetch_add_explicit(&W.app_waiters, 1,
                                      memory_order_relaxed);
        }
        if (W.mode == TLM_WAIT_AUTO)
            sample_load(now);
        int rc = clock_checks(w, now);
        /* A woken progress thread may need this core: stop spinning. */
        bool woke = kick_check(w, now, false);
        if (rc != TELEMEM_OK || (!woke && now - T.t0 < spin_budget()))
            return rc;
        kick_check(w, now, true);
        tlm_core_wait_node_need(w->rank);
        SET_PHASE(w, PH_YIELD);
        T.t0 = now;
        T.yield_spent = 0;
        return TELEMEM_OK;
    }
    int64_t now = tlm_util_now_ns();
    int rc = clock_checks(w, now);
    if (rc != TELEMEM_OK)
        return rc;
    if (ph == PH_YIELD || (ph == PH_SPIN && W.mode == TLM_WAIT_BLOCK)) {
        kick_check(w, now, true);
        if (ph == PH_YIELD && yield_turn(w, now))
            return TELEMEM_OK;
        SET_PHASE(w, PH_BLOCK);
        ph = PH_BLOCK;
    }
    if (ph == PH_BLOCK) {
        if (tlm_core_wait_node_sleep_ok())
            return node_turn(w, now);
        tlm_core_wait_node_need(w->rank);
        return arm_turn(w);
    }
    return sleep_turn(w, sleep_limit_ms(w, now, user), user);
}

/* Something came: the idle streak ends. */
static inline void event_turn(tlm_wait_t *w)
{
    if (TLM_UNLIKELY(w->idle != 0)) {
        unsigned ph = PHASE(w);
        if (ph == PH_ARMED && may_take_token())
            disarm();
        outcome(ph, (unsigned)w->idle & COUNT_MASK);
        w->idle = 0;
        T.silent_sleeps = 0;
    }
}

static inline int step(tlm_wait_t *w, bool user)
{
    int n = tlm_core_progress();
    if (TLM_UNLIKELY(n < 0))
        return n;
    if (n > 0) {
        event_turn(w);
        return TELEMEM_OK;
    }
    return idle_turn(w, user);
}

int tlm_core_wait_step(tlm_wait_t *w)
{
    return step(w, false);
}

int tlm_core_wait_user_step(tlm_wait_t *w)
{
    return step(w, true);
}

int tlm_core_wait_node_step(tlm_wait_t *w, _Atomic uint64_t *word,
                            uint64_t target)
{
    tlm_core_wait_node_begin(word, target);
    int rc = step(w, false);
    tlm_core_wait_node_begin(NULL, 0);
    return rc;
}

bool tlm_core_wait_spinning(const tlm_wait_t *w)
{
    return PHASE(w) == PH_SPIN && W.mode != TLM_WAIT_BLOCK;
}

void tlm_core_wait_thread_pause(tlm_wait_t *w)
{
    if (w->idle == 0)
        return;
    if (PHASE(w) == PH_ARMED) {
        tlm_core_lock_slow();
        disarm();
        tlm_core_unlock_slow();
    }
    w->idle = 0;
    T.t0 = 0;
}

void tlm_core_wait_thread_turn(tlm_wait_t *w, int n)
{
    T.progress = true;
    if (n > 0) {
        event_turn(w);
        return;
    }
    if (!tlm_core.locking)
        return;
    tlm_core_lock_slow();
    (void)idle_turn(w, false);
    tlm_core_unlock_slow();
}

/* tlm_core_check_rank's other cases: a rank out of range, or (once some
 * rank is known to be dead or gone) a rank known dead: every later call
 * addressed to it fails at once, whichever path it would take (a store
 * through the direct path into a dead process's window would succeed,
 * and a quiet after it would find nothing outstanding). */
int tlm_core_check_rank_slow(const char *what, int rank)
{
    if (rank < 0 || rank >= tlm_core.nranks) {
        tlm_error("%s: rank %d out of range [0, %d)", what, rank,
                  tlm_core.nranks);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (tlm_core.peers && tlm_core.peers[rank].dead) {
        tlm_debug("%s: rank %d is dead", what, rank);
        return TELEMEM_ERR_PEER_DEAD;
    }
    return TELEMEM_OK;
}

/* netpipe.c - the NetPIPE-style measurement shared by telemem-netpipe,
 * armci-netpipe, armci-mpi-netpipe and mpi-netpipe: ping-pong put latency,
 * burst-put and streaming bandwidth, with the paper's "touch" mode, data
 * checks and odd buffer offsets.  The library calls are behind
 * netpipe_backend.h (one backend_*.c per program).
 *
 * Run with two ranks:  telemem-run -n 2 telemem-netpipe [options]
 * (mpirun -n 2 for the MPI-based builds).  With 2P ranks, P pairs (rank r
 * and rank r+P) run the same measurement at once and the CSV gives the
 * slowest pair's time (two hosts of P ranks each: P pairs across the
 * network).  docs/benchmarks.md explains the modes, the CSV and the flag
 * argument.
 *
 * How the receiver knows a message has arrived (--flag):
 *   last      (default where safe) it polls the last bytes of the data
 *             itself, as NetPIPE's one-sided modules do: one put per
 *             message.  telemem.h guarantees that a put is applied in
 *             increasing address order, each message wholly inside one
 *             Telemem call, so once the last 8 bytes (1 byte for messages
 *             under 8 bytes) show the new value, the whole put is there.
 *   separate  a second put of a flag word after the data; correct by the
 *             issue-order rule (puts from one rank to one target are
 *             applied in order), at the cost of a second message.  For a
 *             library without these rules (ARMCI-MPI) the default, with a
 *             fence between data and flag.
 * A two-sided backend (MPI) receives each message with a matching receive
 * where a one-sided receiver starts polling, then finds the flag there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "netpipe_backend.h"
#include "netpipe_git.h" /* NETPIPE_GIT_HASH, from meson's vcs_tag() */
#include "netpipe_opts.h"

#define MAX_SIZES 4096
#define CHECK_ROUNDS 3  /* checked round trips per size (latency) */
#define GUARD_BYTES 16  /* guard bytes after each checked message */
#define GUARD_VALUE 0xA5
#define PAGE 4096
/* Control words at the start of each rank's block, one cache line each. */
#define CTRL_PP 0    /* ping-pong flag (latency, --flag separate) */
#define CTRL_BS 64   /* end-of-sample flag (burst, stream) */
#define CTRL_GO 128  /* stream: the receiver's clock is running */
#define CTRL_ACK 192 /* burst, two-sided: the receiver has every message */
#define CTRL_BYTES 256

/* ------------------------------------------------------------------------ */
/* Small helpers */

static int g_rank = -1;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                     noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: rank %d: ", nb_info()->prog, g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    nb_abort(1);
}

static uint64_t load_flag(const volatile uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Unaligned 8-byte read that the compiler must redo on every call. */
static uint64_t load_u64(const void *p)
{
    uint64_t v;
    __asm__ __volatile__("" ::: "memory");
    memcpy(&v, p, sizeof v);
    return v;
}

static void store_u64(void *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
}

/* --touch: read every byte of a message area. */
static uint64_t g_touch_sum;

static void touch(const unsigned char *p, size_t n)
{
    uint64_t s = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        s += w;
    }
    for (; i < n; i++)
        s += p[i];
    g_touch_sum += s;
}

/* --check: a byte pattern that depends on the message number and the
 * position, so stale, shifted or torn data is caught. */
static unsigned char pattern(uint64_t seq, size_t i)
{
    uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    return (unsigned char)(x ^ (x >> 17) ^ (i >> 12));
}

static void fill_pattern(unsigned char *p, size_t n, uint64_t seq)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(seq, i);
}

static void verify(const unsigned char *p, size_t n, uint64_t seq,
                   size_t guard_at, const char *mode, size_t bytes)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != pattern(seq, i)) {
            size_t bad = 0;
            for (size_t j = i; j < n; j++)
                bad += p[j] != pattern(seq, j);
            die("check failed: %s, %zu bytes: byte %zu is 0x%02x, expected "
                "0x%02x (message %" PRIu64 "); %zu of %zu bytes wrong",
                mode, bytes, i, p[i], pattern(seq, i), seq, bad, n);
        }
    }
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (p[guard_at + i] != GUARD_VALUE)
            die("check failed: %s, %zu bytes: guard byte %zu after the "
                "message was overwritten (0x%02x)", mode, bytes, i,
                p[guard_at + i]);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------------------ */
/* Sizes: NetPIPE's schedule (bench_common.h) within [min, max]. */

static size_t make_sizes(const struct knobs *k, uint64_t *out, size_t cap)
{
    return bench_netpipe_sizes(k->min, k->max, k->pert, out, cap);
}


/* ------------------------------------------------------------------------ */
/* The benchmark proper */

/* rank and peer are roles in this rank's pair (0 sends first, 1 answers);
 * world[role] is the job's rank of that role. */
struct bench {
    struct knobs k;
    int rank, peer;
    int pairs, pair;    /* pairs in the job; this rank's pair */
    int world[2];
    int two_sided;      /* nb_info()->two_sided */
    void *bases[2];     /* the pair's blocks, by role */
    size_t slot;        /* bytes per data slot, a multiple of PAGE */
    uint64_t seq;       /* message counter, identical on both ranks */
};

static unsigned char *area(struct bench *b, int rank, uint32_t slot)
{
    uintptr_t a = ((uintptr_t)b->bases[rank] + CTRL_BYTES + PAGE - 1) &
                  ~(uintptr_t)(PAGE - 1);
    return (unsigned char *)a + (size_t)slot * b->slot + b->k.off[rank];
}

static volatile uint64_t *ctrl(struct bench *b, int rank, size_t off)
{
    return (volatile uint64_t *)((char *)b->bases[rank] + off);
}

static void spin_timeout(uint64_t want, uint64_t seen, double t0,
                         const char *what) __attribute__((noreturn));
static void spin_timeout(uint64_t want, uint64_t seen, double t0,
                         const char *what)
{
    die("no %s flag %" PRIu64 " after %.0f s (the word holds %" PRIu64
        "); the peer or the library is stuck", what, want, bench_now() - t0,
        seen);
}

/* Put an 8-byte control word into the peer's control area. */
static void put_ctrl(struct bench *b, size_t off, uint64_t value)
{
    nb_put(b->world[b->peer], (void *)ctrl(b, b->peer, off), &value,
           sizeof value);
}

/* Poll until the control word at off in our block holds want.  Two-sided:
 * receive the word first (it is then there at once). */
static void wait_flag(struct bench *b, size_t off, uint64_t want)
{
    const volatile uint64_t *f = ctrl(b, b->rank, off);
    unsigned spins = 0;
    double t0 = 0;
    if (b->two_sided)
        nb_recv(b->world[b->peer], (void *)f, sizeof *f);
    while (load_flag(f) != want) {
        if (b->k.poll)
            nb_poll();
        if (++spins % 65536 == 0) {
            if (t0 == 0)
                t0 = bench_now();
            else if (bench_now() - t0 > b->k.spin_timeout)
                spin_timeout(want, load_flag(f), t0, "control");
        }
    }
}

/* Bytes at the end of an n-byte message that carry the flag (--flag last):
 * 8, or 1 below 8 bytes; 0 for an empty message (a separate flag then). */
static size_t last_bytes(size_t n)
{
    return n >= 8 ? 8 : n ? 1 : 0;
}

static uint64_t last_value(size_t n, uint64_t flag)
{
    return last_bytes(n) == 8 ? flag : (uint64_t)(flag % 255 + 1);
}

/* A plain load the compiler must redo on every call: the ARMCI receivers
 * spin on it without calling the library. */
static uint64_t load_last(const unsigned char *p, size_t n)
{
    return last_bytes(n) == 8 ? load_u64(p + n - 8)
                              : *(const volatile unsigned char *)(p + n - 1);
}

static void store_last(unsigned char *p, size_t n, uint64_t flag)
{
    if (last_bytes(n) == 8)
        store_u64(p + n - 8, flag);
    else
        p[n - 1] = (unsigned char)last_value(n, flag);
}

/* Poll until the last bytes of the n-byte message at p show flag (a
 * two-sided backend receives the message there first). */
static void wait_inline(struct bench *b, unsigned char *p, size_t n,
                        uint64_t flag)
{
    unsigned spins = 0;
    double t0 = 0;
    uint64_t want = last_value(n, flag);
    if (b->two_sided)
        nb_recv(b->world[b->peer], p, n);
    while (load_last(p, n) != want) {
        if (b->k.poll)
            nb_poll();
        if (++spins % 65536 == 0) {
            if (t0 == 0)
                t0 = bench_now();
            else if (bench_now() - t0 > b->k.spin_timeout)
                spin_timeout(want, load_last(p, n), t0, "inline");
        }
    }
}

/* Latency mode sends from its own slot, after the window: as in NetPIPE,
 * the send buffer is not the receive buffer.  (With one buffer for both and
 * a library whose puts land out of order, a still-running put could
 * overwrite the flag the receiver had just stored for its reply.) */
static unsigned char *send_area(struct bench *b)
{
    return area(b, b->rank, b->k.window);
}

/* Before a flag put that announces earlier data: a library whose puts may
 * land out of order must complete the data first. */
static void fence_data(struct bench *b)
{
    if (!nb_info()->ordered)
        nb_fence(b->world[b->peer]);
}

/* One latency message from this rank to the peer: the data, whose last
 * bytes carry the flag (--flag last), or the data and then a flag put. */
static void lat_send(struct bench *b, size_t n, uint64_t flag)
{
    unsigned char *src = send_area(b);
    unsigned char *dst = area(b, b->peer, 0);
    if (b->k.touch)
        touch(src, n);
    if (b->k.inline_flag && last_bytes(n)) {
        store_last(src, n, flag);
        nb_put(b->world[b->peer], dst, src, n);
    } else {
        nb_put(b->world[b->peer], dst, src, n);
        fence_data(b);
        put_ctrl(b, CTRL_PP, flag);
    }
}

static void lat_recv(struct bench *b, size_t n, uint64_t flag)
{
    unsigned char *mine = area(b, b->rank, 0);
    if (b->k.inline_flag && last_bytes(n)) {
        wait_inline(b, mine, n, flag);
    } else {
        if (b->two_sided)
            nb_recv(b->world[b->peer], mine, n);
        wait_flag(b, CTRL_PP, flag);
    }
    if (b->k.touch)
        touch(mine, n);
}

/* Before the barrier that starts ping-pongs of n bytes: zero the bytes
 * where this rank's flag will land.  They may hold a value the first flag
 * has by chance (a guard byte 0xA5 of the last size, an old data byte):
 * the receiver would go on before the message came.  No flag is 0. */
static void clear_inline_flag(struct bench *b, size_t n)
{
    if (b->k.inline_flag && last_bytes(n) && !b->two_sided)
        memset(area(b, b->rank, 0) + n - last_bytes(n), 0, last_bytes(n));
}

/* Ping-pong reps times; returns the half round trip in seconds (rank 0). */
static double run_latency(struct bench *b, size_t n, uint64_t reps)
{
    double t0 = 0, t;
    clear_inline_flag(b, n);
    nb_barrier();
    if (b->rank == 0) {
        t0 = bench_now();
        for (uint64_t i = 0; i < reps; i++) {
            b->seq += 2;
            lat_send(b, n, b->seq);
            lat_recv(b, n, b->seq + 1);
        }
        t = bench_now() - t0;
    } else {
        for (uint64_t i = 0; i < reps; i++) {
            b->seq += 2;
            lat_recv(b, n, b->seq);
            lat_send(b, n, b->seq + 1);
        }
        t = 0;
    }
    return t / (2.0 * (double)reps);
}

/* Burst, rank 0: wait until every data put of the sample is complete at
 * rank 1 (one-sided: quiet; two-sided: rank 1's answer, bulk_receive). */
static void bulk_complete(struct bench *b, uint64_t seq)
{
    if (b->two_sided)
        wait_flag(b, CTRL_ACK, seq);
    else
        nb_quiet();
}

/* Rank 1's part of a bulk sample before the end flag: one-sided, nothing
 * (the puts land by themselves); two-sided, receive the count messages
 * into the window slots in order and, in burst mode, answer. */
static void bulk_receive(struct bench *b, int burst, size_t n,
                         uint64_t count, uint64_t seq)
{
    if (!b->two_sided)
        return;
    for (uint64_t i = 0; i < count; i++)
        nb_recv(b->world[b->peer], area(b, 1, (uint32_t)(i % b->k.window)),
                n);
    if (burst)
        put_ctrl(b, CTRL_ACK, seq);
}

/* Burst and stream: rank 0 puts reps messages of n bytes, rotating over the
 * window, then (burst) waits for their completion; then it puts the
 * end-of-sample flag.  Returns the time per put in seconds: rank 0's view
 * (burst) or rank 1's (stream), on both ranks. */
static double run_bulk(struct bench *b, int stream, size_t n, uint64_t reps)
{
    double t0, t = 0;
    uint32_t w = b->k.window;

    nb_barrier();
    b->seq++;
    if (b->rank == 0) {
        /* Stream: start only when rank 1's clock runs, so no data can be
         * applied before it (its barrier exit may lag ours). */
        if (stream)
            wait_flag(b, CTRL_GO, b->seq);
        t0 = bench_now();
        for (uint64_t i = 0; i < reps; i++) {
            uint32_t s = (uint32_t)(i % w);
            unsigned char *src = area(b, 0, s);
            if (b->k.touch)
                touch(src, n);
            nb_put(b->world[1], area(b, 1, s), src, n);
        }
        if (!stream)
            bulk_complete(b, b->seq);
        t = bench_now() - t0;
        fence_data(b);
        put_ctrl(b, CTRL_BS, b->seq);
    } else {
        t0 = bench_now();
        if (stream)
            put_ctrl(b, CTRL_GO, b->seq);
        bulk_receive(b, !stream, n, reps, b->seq);
        wait_flag(b, CTRL_BS, b->seq);
        t = bench_now() - t0;
        if (b->k.touch)
            for (uint32_t s = 0; s < w && s < reps; s++)
                touch(area(b, 1, s), n);
    }
    if (stream && b->pairs == 1) /* pairs: run_mode gathers the times */
        nb_broadcast(&t, sizeof t, 1);
    return t / (double)reps;
}

static double run_sample(struct bench *b, uint32_t mode, size_t n,
                         uint64_t reps)
{
    if (mode == MODE_LATENCY)
        return run_latency(b, n, reps);
    return run_bulk(b, mode == MODE_STREAM, n, reps);
}

/* Untimed checked messages of size n: patterns at the sender, verified
 * (with the guard bytes behind them) at the receiver. */
static void check_size(struct bench *b, uint32_t mode, size_t n,
                       const char *name)
{
    /* With --flag last the message's last bytes are the flag, not pattern. */
    size_t flag_bytes = mode == MODE_LATENCY && b->k.inline_flag
                            ? last_bytes(n) : 0;
    uint32_t slots = mode == MODE_LATENCY ? 1 : b->k.window;

    for (uint32_t s = 0; s < slots; s++)
        memset(area(b, b->rank, s) + n, GUARD_VALUE, GUARD_BYTES);
    if (mode == MODE_LATENCY)
        clear_inline_flag(b, n);
    nb_barrier();

    if (mode == MODE_LATENCY) {
        for (int r = 0; r < CHECK_ROUNDS; r++) {
            b->seq += 2;
            if (b->rank == 0) {
                fill_pattern(send_area(b), n, b->seq);
                lat_send(b, n, b->seq);
                lat_recv(b, n, b->seq + 1);
                verify(area(b, 0, 0), n - flag_bytes, b->seq + 1, n, name,
                       n);
            } else {
                lat_recv(b, n, b->seq);
                verify(area(b, 1, 0), n - flag_bytes, b->seq, n, name, n);
                fill_pattern(send_area(b), n, b->seq + 1);
                lat_send(b, n, b->seq + 1);
            }
        }
        return;
    }

    /* Bulk: 2 * window puts, so every slot is written twice and must hold
     * the later message (issue order). */
    uint32_t puts = 2 * slots;
    uint64_t first = b->seq + 1;
    b->seq += puts;
    uint64_t flag = ++b->seq;
    if (b->rank == 0) {
        for (uint32_t i = 0; i < puts; i++) {
            unsigned char *src = area(b, 0, i % slots);
            fill_pattern(src, n, first + i);
            nb_put(b->world[1], area(b, 1, i % slots), src, n);
        }
        if (mode == MODE_BURST)
            bulk_complete(b, flag);
        fence_data(b);
        put_ctrl(b, CTRL_BS, flag);
        nb_quiet();
    } else {
        bulk_receive(b, mode == MODE_BURST, n, puts, flag);
        wait_flag(b, CTRL_BS, flag);
        for (uint32_t s = 0; s < slots; s++)
            verify(area(b, 1, s), n, first + slots + s, n, name, n);
    }
    nb_barrier();
}

/* Pin this rank to one CPU: two spinning ranks that the scheduler puts on
 * one core take turns by time slices (milliseconds per message).  Pair p's
 * roles take the (2p)-th and (2p+1)-th CPU this rank may use (modulo
 * their number): the two ranks of a pair never share one when ranks of
 * several "hosts" share a machine.  Fills desc with what was done. */
static void bind_rank(struct bench *b, char *desc, size_t len)
{
    cpu_set_t allowed, one;
    int cpu = -1, seen = 0;

    snprintf(desc, len, "none");
    if (!b->k.bind)
        return;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        snprintf(desc, len, "failed (sched_getaffinity: %s)",
                 strerror(errno));
        return;
    }
    if (CPU_COUNT(&allowed) < 2) {
        snprintf(desc, len, "none (only %d CPU allowed)",
                 CPU_COUNT(&allowed));
        return;
    }
    for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
        if (CPU_ISSET(c, &allowed) &&
            seen++ == (2 * b->pair + b->rank) % CPU_COUNT(&allowed))
            cpu = c;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        snprintf(desc, len, "failed (sched_setaffinity: %s)",
                 strerror(errno));
    else
        snprintf(desc, len, "cpu %d", cpu);
}

static const char *mode_name(uint32_t m)
{
    return m == MODE_LATENCY ? "latency" : m == MODE_BURST ? "burst"
                                                            : "stream";
}

struct result {
    uint64_t bytes, reps;
    double med, min; /* seconds per message */
};

/* Pairs: t[s] becomes the time of sample s of the slowest pair, as its
 * timing rank saw it (role 0; role 1 in stream mode).  all_t holds every
 * rank's samples.  Collective. */
static void slowest_pair(struct bench *b, uint32_t mode, double *t,
                         double *all_t)
{
    uint32_t ns = b->k.samples;
    int first = mode == MODE_STREAM ? b->pairs : 0;
    nb_allgather(t, all_t, ns * sizeof *t);
    for (uint32_t s = 0; s < ns; s++) {
        t[s] = 0;
        for (int r = first; r < first + b->pairs; r++)
            if (all_t[(size_t)r * ns + s] > t[s])
                t[s] = all_t[(size_t)r * ns + s];
    }
}

static void run_mode(struct bench *b, uint32_t mode, const uint64_t *sizes,
                     size_t nsizes, FILE *out)
{
    const char *name = mode_name(mode);
    double *t = calloc(b->k.samples, sizeof *t);
    double est = 0;       /* seconds per iteration, from the last size */
    uint64_t est_bytes = 0;
    double per_sample = b->k.time / (b->k.samples + 1);
    /* A latency iteration is a round trip: two messages. */
    double msgs_per_iter = mode == MODE_LATENCY ? 2 : 1;

    double t_mode = bench_now();
    size_t skipped = 0; /* sizes left out to keep to --max-seconds */

    double *all_t = calloc((size_t)b->k.samples * 2 * b->pairs,
                           sizeof *all_t);
    if (!t || !all_t)
        die("out of memory");
    for (size_t i = 0; i < nsizes; i++) {
        size_t n = (size_t)sizes[i];
        uint64_t reps = b->k.reps;

        if (b->k.max_seconds > 0) {
            /* --max-seconds, decided by rank 0's clock for both ranks:
             * behind schedule (the share of the time used exceeds the
             * share of the sizes done by more than a tenth), run powers
             * of two only, so that
             * the whole size range is still covered; past the limit,
             * stop. */
            int act = 0; /* 0 run, 1 skip, 2 stop */
            if (g_rank == 0) {
                double used = (bench_now() - t_mode) / b->k.max_seconds;
                if (used > 1)
                    act = 2;
                else if (used > 0.1 + (double)i / (double)nsizes &&
                         (n & (n - 1)))
                    act = 1;
            }
            nb_broadcast(&act, sizeof act, 0);
            if (act == 2) {
                if (g_rank == 0)
                    fprintf(out, "# %s: stopped before %zu bytes: "
                            "--max-seconds %.3g reached\n", name, n,
                            b->k.max_seconds);
                break;
            }
            if (act == 1) {
                skipped++;
                continue;
            }
        }

        if (b->k.check)
            check_size(b, mode, n, name);

        if (!reps) {
            /* Warm up (first contact, page faults, caches) and calibrate:
             * rank 0 decides, rank 1 follows. */
            uint64_t warm = 100;
            if (est > 0) {
                double guess = est * (n > est_bytes ? (double)n / est_bytes
                                                    : 1.0);
                double w = 0.25 * per_sample / guess;
                warm = w < 2 ? 2 : w > 1e6 ? 1000000 : (uint64_t)w;
            }
            nb_broadcast(&warm, sizeof warm, 0);
            double it = run_sample(b, mode, n, warm) * msgs_per_iter;
            double r = per_sample / (it > 0 ? it : 1e-9);
            reps = r < 1 ? 1 : r > 1e9 ? 1000000000 : (uint64_t)r;
            nb_broadcast(&reps, sizeof reps, 0);
        }
        for (uint32_t s = 0; s < b->k.samples; s++)
            t[s] = run_sample(b, mode, n, reps);
        if (b->pairs > 1)
            slowest_pair(b, mode, t, all_t);

        if (g_rank == 0) {
            double mn = t[0];
            for (uint32_t s = 1; s < b->k.samples; s++)
                mn = t[s] < mn ? t[s] : mn;
            double md = median(t, b->k.samples);
            double us_md = md * 1e6, us_mn = mn * 1e6;
            fprintf(out, "%s,%d,%zu,%" PRIu64 ",%.4f,%.4f,%.2f,%.2f,%s,%s\n",
                    name, b->k.touch, n, reps, us_md, us_mn, n / us_md,
                    n / us_mn, nb_info()->impl, nb_path());
            fflush(out);
            if (b->k.verbose)
                fprintf(stderr, "%-7s%s %9zu B %10" PRIu64 " reps %11.3f us"
                        " %11.1f MB/s %8.3f Gbit/s\n", name,
                        b->k.touch ? "*" : " ", n, reps, us_md, n / us_md,
                        n / us_md * 8e-3);
            est = md * msgs_per_iter;
            est_bytes = n;
        }
    }
    if (skipped && g_rank == 0)
        fprintf(out, "# %s: %zu sizes (not powers of two) skipped to keep "
                "to --max-seconds %.3g\n", name, skipped, b->k.max_seconds);
    nb_quiet();
    nb_barrier();
    free(all_t);
    free(t);
}

/* The machine is shared: record how busy it was around the run. */
static void print_load(FILE *out, const char *when)
{
    char line[256];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fgets(line, sizeof line, f))
            fprintf(out, "# loadavg (%s) = %s", when, line);
        fclose(f);
    }
}

/* binds: every rank's binding text, BIND_LEN bytes each. */
#define BIND_LEN 64
static void print_header(struct bench *b, FILE *out, size_t nsizes,
                         const char (*binds)[BIND_LEN])
{
    const struct knobs *k = &b->k;
    char date[64] = "unknown", cpu[256] = "unknown";
    struct utsname un;
    time_t tt = time(NULL);
    struct tm tm;
    FILE *f;

    if (gmtime_r(&tt, &tm))
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if ((f = fopen("/proc/cpuinfo", "r"))) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *c = strchr(line, ':');
            if (!strncmp(line, "model name", 10) && c) {
                snprintf(cpu, sizeof cpu, "%s", c + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        }
        fclose(f);
    }
    fprintf(out, "# %s\n", nb_info()->prog);
    fprintf(out, "# impl = %s, path = %s\n", nb_info()->impl, nb_path());
    fprintf(out, "# git = %s\n", NETPIPE_GIT_HASH);
    nb_print_header(out);
    fprintf(out, "# mode = %s%s%s\n",
            k->modes & MODE_LATENCY ? "latency " : "",
            k->modes & MODE_BURST ? "burst " : "",
            k->modes & MODE_STREAM ? "stream" : "");
    fprintf(out, "# touch = %s, check = %s, flag = %s, window = %u, "
            "poll = %s\n", k->touch ? "yes" : "no", k->check ? "yes" : "no",
            k->inline_flag ? "last" : "separate", k->window,
            k->poll ? "yes" : "no");
    if (k->inline_flag && !nb_info()->ordered)
        fprintf(out, "# warning: --flag last with a library whose puts may "
                "land out of order: the receiver can see the flag before "
                "the data (--check fails, --touch reads early)\n");
    fprintf(out, "# offset = %u,%u\n", k->off[0], k->off[1]);
    fprintf(out, "# binding =");
    for (int r = 0; r < 2 * b->pairs; r++)
        fprintf(out, "%s rank %d: %s", r ? ";" : "", r, binds[r]);
    fprintf(out, "\n");
    if (b->pairs > 1)
        fprintf(out, "# pairs = %d: rank r with rank r+%d, all at once; "
                "usec = the slowest pair's time\n", b->pairs, b->pairs);
    fprintf(out, "# sizes = %zu from %" PRIu64 " to %" PRIu64
            ", perturbation %u\n", nsizes, k->min, k->max, k->pert);
    if (k->reps)
        fprintf(out, "# samples = %u, reps = %" PRIu64 "\n", k->samples,
                k->reps);
    else
        fprintf(out, "# samples = %u, reps = auto (%.3g s per size)\n",
                k->samples, k->time);
    fprintf(out, "# units: usec = one-way time per message (latency: half "
            "the round trip), mbps = MB/s = 1e6 bytes/s\n");
    fprintf(out, "# date = %s\n", date);
    fprintf(out, "# host = %s\n", uname(&un) == 0 ? un.nodename : "unknown");
    fprintf(out, "# cpu = %s\n", cpu);
    print_load(out, "start");
    fprintf(out, "mode,touch,bytes,reps,usec_median,usec_min,mbps_median,"
            "mbps_max,impl,path\n");
    fflush(out);
}

int main(int argc, char **argv)
{
    static struct opts o;
    static uint64_t sizes[MAX_SIZES];
    const struct nb_info *in = nb_info();
    struct bench b;
    FILE *out = stdout;
    int nranks;

    np_parse_args(argc, argv, &o);
    if (o.help || o.err[0]) {
        /* Usage problems need no library: print once (rank 0, or when
         * started without a launcher) and leave. */
        if (nb_env_rank() <= 0) {
            if (o.help)
                np_usage(stdout);
            else
                fprintf(stderr, "%s: %s\nTry '%s --help'.\n", in->prog,
                        o.err, in->prog);
        }
        return o.help ? 0 : 2;
    }

    nb_init(&argc, &argv, o.path);
    g_rank = nb_rank();
    nranks = nb_nranks();
    if (nranks < 2 || nranks % 2) {
        if (g_rank == 0)
            fprintf(stderr, "%s: needs 2 ranks (or 2P: P pairs), got %d; "
                    "run '%s %s ...'\n", in->prog, nranks, in->launch,
                    in->prog);
        nb_finalize();
        return 2;
    }

    memset(&b, 0, sizeof b);
    b.k = o.k;
    /* All ranks must agree on every knob: take rank 0's. */
    nb_broadcast(&b.k, sizeof b.k, 0);
    b.pairs = nranks / 2;
    b.pair = g_rank % b.pairs;
    b.rank = g_rank / b.pairs;
    b.peer = 1 - b.rank;
    b.world[0] = b.pair;
    b.world[1] = b.pair + b.pairs;
    b.two_sided = in->two_sided;

    int ok = 1;
    if (g_rank == 0 && o.output) {
        out = fopen(o.output, "w");
        if (!out) {
            fprintf(stderr, "%s: cannot write %s: %s\n", in->prog, o.output,
                    strerror(errno));
            ok = 0;
        }
    }
    nb_broadcast(&ok, sizeof ok, 0);
    if (!ok) {
        nb_finalize();
        return 2;
    }

    size_t nsizes = make_sizes(&b.k, sizes, MAX_SIZES);
    /* Room for the largest message, an inline flag, guard bytes and the
     * offset, rounded to whole pages so every slot starts on a page. */
    b.slot = ((size_t)b.k.max + 8 + GUARD_BYTES + MAX_OFFSET + PAGE) &
             ~(size_t)(PAGE - 1);
    /* window receive slots and the latency send slot */
    size_t block = CTRL_BYTES + PAGE + ((size_t)b.k.window + 1) * b.slot;
    void **all = calloc((size_t)nranks, sizeof *all);
    char(*binds)[BIND_LEN] = calloc((size_t)nranks, BIND_LEN);
    uint64_t *sums = calloc((size_t)nranks, sizeof *sums);
    if (!all || !binds || !sums)
        die("out of memory");
    nb_malloc_all(block, all);
    b.bases[0] = all[b.world[0]];
    b.bases[1] = all[b.world[1]];
    /* Fault every page in now, outside the timed loops. */
    memset(all[g_rank], 0, block);
    nb_barrier();

    char bind_me[BIND_LEN];
    bind_rank(&b, bind_me, sizeof bind_me);
    nb_allgather(bind_me, binds, sizeof bind_me);

    double t_start = bench_now();
    if (g_rank == 0)
        print_header(&b, out, nsizes, (const char(*)[BIND_LEN])binds);
    for (uint32_t m = MODE_LATENCY; m <= MODE_STREAM; m <<= 1)
        if (b.k.modes & m)
            run_mode(&b, m, sizes, nsizes, out);

    /* Keep the touch sums alive: print every rank's checksum. */
    uint64_t mine = g_touch_sum;
    nb_allgather(&mine, sums, sizeof mine);
    if (g_rank == 0) {
        if (b.k.touch) {
            fprintf(out, "# touch checksum =");
            for (int r = 0; r < nranks; r++)
                fprintf(out, " %016" PRIx64, sums[r]);
            fprintf(out, "\n");
        }
        fprintf(out, "# elapsed = %.1f s\n", bench_now() - t_start);
        print_load(out, "end");
        if (out != stdout && fclose(out) != 0)
            die("writing %s: %s", o.output, strerror(errno));
        else if (out == stdout)
            fflush(stdout);
    }
    nb_free_all(all[g_rank]);
    nb_finalize();
    free(sums);
    free(binds);
    free(all);
    return 0;
}

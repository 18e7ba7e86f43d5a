/* tt.h - shared helpers of the Telemem tests (header only): status CHECK
 * macros that print file:line and telemem_strerror(), seeded byte patterns,
 * guard bytes, a small PRNG, skip/fail exits and the "TT_PROC" line that
 * tests/common/run_checked.sh uses to look for leftover processes and
 * /dev/shm objects.  Uses only telemem.h. */
#ifndef TT_H
#define TT_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "telemem.h"

#define TT_SKIP_STATUS 77

/* Rank as far as the test knows it (-1 before initialization); only used
 * to label output. */
static int tt_me = -1;
static int tt_n = 0;

static inline double tt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void tt_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void tt_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int k = snprintf(line, sizeof line, "[tt r%d] ", tt_me);
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k, fmt, ap);
    va_end(ap);
    /* One write per line so ranks do not interleave inside a line. */
    printf("%s\n", line);
    fflush(stdout);
}

static inline void tt_fail_at(const char *file, int line, const char *what,
                              const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static inline void tt_fail_at(const char *file, int line, const char *what,
                              const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "[tt r%d] FAIL %s:%d: %s: %s\n", tt_me, file, line, what,
            msg);
    fflush(stderr);
    exit(1);
}

/* Fail unless cond holds; the rest is a printf message. */
#define TT_ASSERT(cond, ...)                                                \
    do {                                                                    \
        if (!(cond))                                                        \
            tt_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__);             \
    } while (0)

#define TT_FAIL(...) tt_fail_at(__FILE__, __LINE__, "failed", __VA_ARGS__)

/* Fail unless call returns want. */
#define TT_EXPECT(call, want)                                               \
    do {                                                                    \
        int tt_rc_ = (call);                                                \
        int tt_want_ = (want);                                              \
        if (tt_rc_ != tt_want_)                                             \
            tt_fail_at(__FILE__, __LINE__, #call,                           \
                       "returned %s (%d: %s), expected %s",                 \
                       telemem_status_name(tt_rc_), tt_rc_,                 \
                       telemem_strerror(tt_rc_),                            \
                       telemem_status_name(tt_want_));                      \
    } while (0)

#define TT_CHECK(call) TT_EXPECT(call, TELEMEM_OK)

/* telemem_poll() returns a count >= 0 on success. */
#define TT_POLL()                                                           \
    do {                                                                    \
        int tt_rc_ = telemem_poll();                                        \
        if (tt_rc_ < 0)                                                     \
            tt_fail_at(__FILE__, __LINE__, "telemem_poll()",                \
                       "returned %s (%d: %s)", telemem_status_name(tt_rc_), \
                       tt_rc_, telemem_strerror(tt_rc_));                   \
    } while (0)

/* Exit with the skip status, saying why (never a silent pass). */
static inline void tt_skip(const char *why) __attribute__((noreturn));
static inline void tt_skip(const char *why)
{
    tt_log("SKIP: %s", why);
    exit(TT_SKIP_STATUS);
}

/* First thing every test prints: its pid and job id, which run_checked.sh
 * uses to look for processes and /dev/shm objects left after the job. */
static inline void tt_proc_line(void)
{
    const char *job = getenv("TELEMEM_JOBID");
    const char *rk = getenv("TELEMEM_RANK");
    printf("TT_PROC pid=%d rank=%s jobid=%s\n", (int)getpid(),
           rk ? rk : "-", job ? job : "");
    fflush(stdout);
}

/* The seed of every pattern and random choice: TT_SEED or a fixed default
 * (so CI runs are reproducible); TT_SEED=time picks one from the clock. */
static inline uint64_t tt_seed(void)
{
    const char *s = getenv("TT_SEED");
    if (s && strcmp(s, "time") == 0) {
        /* Same on every rank of a job: hash the launcher's job id (unique
         * per run); a singleton uses its clock and pid. */
        const char *job = getenv("TELEMEM_JOBID");
        uint64_t h = 1469598103934665603ull;
        if (!job || !*job)
            return (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        for (; *job; job++)
            h = (h ^ (unsigned char)*job) * 1099511628211ull;
        return h;
    }
    if (s && *s)
        return strtoull(s, NULL, 0);
    return 0x7e1e3e3ull;
}

/* Initialize, learn rank/size, print the header line. */
static inline void tt_init(int *argc, char ***argv, const char *name)
{
    tt_proc_line();
    TT_CHECK(telemem_initialize(argc, argv));
    tt_me = telemem_rank();
    tt_n = telemem_nranks();
    TT_ASSERT(tt_me >= 0 && tt_n >= 1 && tt_me < tt_n, "rank %d of %d",
              tt_me, tt_n);
    if (tt_me == 0)
        tt_log("%s: %d ranks, transport to peer %d: %s, seed 0x%" PRIx64
               " (set TT_SEED to change)", name, tt_n, tt_n > 1 ? 1 : 0,
               telemem_transport_name(tt_n > 1 ? 1 : 0), tt_seed());
}

static inline void tt_finalize(void)
{
    TT_CHECK(telemem_finalize());
}

/* ---- mixing, PRNG ---- */

static inline uint64_t tt_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A pattern key from up to four numbers (seed, rank, case, ...). */
static inline uint64_t tt_key(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return tt_mix(tt_mix(tt_mix(tt_mix(a) ^ b) ^ c) ^ d);
}

typedef struct {
    uint64_t s;
} tt_rng_t;

static inline void tt_rng_seed(tt_rng_t *r, uint64_t seed)
{
    r->s = tt_mix(seed) | 1u;
}

static inline uint64_t tt_rng_next(tt_rng_t *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return tt_mix(r->s);
}

/* Uniform in [0, n) (n > 0). */
static inline uint64_t tt_rng_below(tt_rng_t *r, uint64_t n)
{
    return tt_rng_next(r) % n;
}

/* Uniform in [lo, hi]. */
static inline uint64_t tt_rng_range(tt_rng_t *r, uint64_t lo, uint64_t hi)
{
    return lo + tt_rng_below(r, hi - lo + 1);
}

/* ---- patterns: byte at absolute offset off is a function of (key, off) --
 * so a block copied to another place keeps its expected content only if it
 * arrived from the right offset. */

static inline uint8_t tt_pat_byte(uint64_t key, size_t off)
{
    uint64_t w = tt_mix(key ^ ((uint64_t)(off >> 3) * 0xd6e8feb86659fd93ull));
    return (uint8_t)(w >> (8 * (off & 7)));
}

/* buf[i] = pattern(key, off0 + i). */
static inline void tt_pat_fill(void *buf, size_t n, uint64_t key, size_t off0)
{
    uint8_t *p = buf;
    size_t i = 0;
    while (i < n && ((off0 + i) & 7))
        p[i] = tt_pat_byte(key, off0 + i), i++;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = tt_mix(key ^ ((uint64_t)((off0 + i) >> 3) *
                                   0xd6e8feb86659fd93ull));
        memcpy(p + i, &w, 8); /* little endian: byte k is w >> 8k */
    }
    for (; i < n; i++)
        p[i] = tt_pat_byte(key, off0 + i);
}

/* 0 if buf holds pattern(key, off0 + i); else prints the first difference
 * (and how many bytes differ) under the label what, and returns -1. */
static inline int tt_pat_verify(const void *buf, size_t n, uint64_t key,
                                size_t off0, const char *what)
{
    const uint8_t *p = buf;
    size_t first = (size_t)-1, bad = 0, last = 0;
    uint8_t got = 0, want = 0;
    size_t i = 0;
    while (i < n) {
        if (((off0 + i) & 7) == 0 && i + 8 <= n) {
            uint64_t w = tt_mix(key ^ ((uint64_t)((off0 + i) >> 3) *
                                       0xd6e8feb86659fd93ull));
            if (memcmp(p + i, &w, 8) == 0) {
                i += 8;
                continue;
            }
        }
        uint8_t e = tt_pat_byte(key, off0 + i);
        if (p[i] != e) {
            if (first == (size_t)-1) {
                first = i;
                got = p[i];
                want = e;
            }
            bad++;
            last = i;
        }
        i++;
    }
    if (!bad)
        return 0;
    fprintf(stderr,
            "[tt r%d] %s: %zu of %zu bytes differ, first at offset %zu "
            "(got 0x%02x, expected 0x%02x), last at %zu\n",
            tt_me, what, bad, n, first, got, want, last);
    return -1;
}

/* Compare two buffers; prints the first difference under what. */
static inline int tt_cmp(const void *got, const void *want, size_t n,
                         const char *what)
{
    if (n == 0 || memcmp(got, want, n) == 0)
        return 0;
    const uint8_t *g = got, *w = want;
    size_t first = (size_t)-1, bad = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i] != w[i]) {
            if (first == (size_t)-1)
                first = i;
            bad++;
            last = i;
        }
    }
    fprintf(stderr,
            "[tt r%d] %s: %zu of %zu bytes differ, first at offset %zu "
            "(got 0x%02x, expected 0x%02x), last at %zu\n",
            tt_me, what, bad, n, first, g[first], w[first], last);
    return -1;
}

/* ---- guard bytes: a pattern of their own around each target area ---- */

#define TT_GUARD 64
#define TT_GUARD_SALT 0x6a09e667f3bcc909ull

static inline void tt_guard_set(void *p, size_t n, uint64_t key)
{
    tt_pat_fill(p, n, key ^ TT_GUARD_SALT, 0);
}

static inline int tt_guard_check(const void *p, size_t n, uint64_t key,
                                 const char *what)
{
    return tt_pat_verify(p, n, key ^ TT_GUARD_SALT, 0, what);
}

/* A buffer with TT_GUARD guard bytes on each side of its usable part. */
typedef struct {
    uint8_t *raw;  /* allocation */
    uint8_t *p;    /* usable part: raw + TT_GUARD (+ an offset) */
    size_t n;      /* usable size */
    uint64_t key;  /* guard key */
} tt_gbuf_t;

/* off shifts the usable part off a 64-byte boundary (0..63). */
static inline void tt_gbuf_alloc(tt_gbuf_t *b, size_t n, size_t off,
                                 uint64_t key)
{
    size_t total = n + off + 2 * TT_GUARD;
    b->raw = aligned_alloc(64, (total + 63) & ~(size_t)63);
    TT_ASSERT(b->raw != NULL, "aligned_alloc(%zu) failed", total);
    b->p = b->raw + TT_GUARD + off;
    b->n = n;
    b->key = key;
    tt_guard_set(b->raw, TT_GUARD + off, key);
    tt_guard_set(b->p + n, TT_GUARD, key + 1);
}

static inline int tt_gbuf_check(const tt_gbuf_t *b, const char *what)
{
    char lab[256];
    int rc = 0;
    snprintf(lab, sizeof lab, "%s: guard before", what);
    rc |= tt_guard_check(b->raw, (size_t)(b->p - b->raw), b->key, lab);
    snprintf(lab, sizeof lab, "%s: guard after", what);
    rc |= tt_guard_check(b->p + b->n, TT_GUARD, b->key + 1, lab);
    return rc;
}

static inline void tt_gbuf_free(tt_gbuf_t *b)
{
    free(b->raw);
    b->raw = b->p = NULL;
}

/* Poll until *flag == want; fails (rather than hanging until the meson
 * timeout) after limit seconds, naming what it waited for. */
static inline void tt_wait_flag(volatile uint64_t *flag, uint64_t want,
                                double limit, const char *what)
{
    double t0 = tt_now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != want) {
        TT_POLL();
        if (tt_now() - t0 > limit)
            TT_FAIL("waited %.0f s for %s (value %" PRIu64 ", want %" PRIu64
                    ")", limit, what, *flag, want);
    }
}

/* Integer argument "--name=value" from argv, or def. */
static inline long tt_arg_long(int argc, char **argv, const char *name,
                               long def)
{
    size_t k = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, k) == 0 && argv[i][k] == '=')
            return strtol(argv[i] + k + 1, NULL, 0);
    return def;
}

static inline const char *tt_arg_str(int argc, char **argv, const char *name,
                                     const char *def)
{
    size_t k = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, k) == 0 && argv[i][k] == '=')
            return argv[i] + k + 1;
    return def;
}

#endif

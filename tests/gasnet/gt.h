/* gt.h - helpers of the GASNet-layer tests (header only, gasnet.h and libc
 * only): the TT_PROC line run_checked.sh looks for, checks that end the job
 * through gasnet_exit(1), seeded byte patterns with guard bytes, a bounded
 * polling wait and the start/finish of every test program. */
#ifndef GT_H
#define GT_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gasnet.h>

static int gt_me = -1;
static int gt_n = 0;
static int gt_attached = 0;

static inline double gt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void gt_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void gt_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int k = snprintf(line, sizeof line, "[gt r%d] ", gt_me);
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k, fmt, ap);
    va_end(ap);
    printf("%s\n", line);
    fflush(stdout);
}

static inline void gt_fail_at(const char *file, int line, const char *what,
                              const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static inline void gt_fail_at(const char *file, int line, const char *what,
                              const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "[gt r%d] FAIL %s:%d: %s: %s\n", gt_me, file, line, what,
            msg);
    fflush(stderr);
    if (gt_me >= 0)
        gasnet_exit(1); /* ends every node */
    exit(1);
}

#define GT_ASSERT(cond, ...)                                                \
    do {                                                                    \
        if (!(cond))                                                        \
            gt_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__);             \
    } while (0)

#define GT_FAIL(...) gt_fail_at(__FILE__, __LINE__, "failed", __VA_ARGS__)

/* Fail unless call returns want (GASNet codes). */
#define GT_EXPECT(call, want)                                               \
    do {                                                                    \
        int gt_rc_ = (call);                                                \
        int gt_want_ = (want);                                              \
        if (gt_rc_ != gt_want_)                                             \
            gt_fail_at(__FILE__, __LINE__, #call,                           \
                       "returned %s (%d: %s), expected %s",                 \
                       gasnet_ErrorName(gt_rc_), gt_rc_,                    \
                       gasnet_ErrorDesc(gt_rc_), gasnet_ErrorName(gt_want_)); \
    } while (0)

#define GT_SAFE(call) GT_EXPECT(call, GASNET_OK)

/* The line run_checked.sh uses to find leftover processes and /dev/shm
 * objects (the launcher sets TELEMEM_JOBID and TELEMEM_RANK). */
static inline void gt_proc_line(void)
{
    const char *job = getenv("TELEMEM_JOBID");
    const char *rk = getenv("TELEMEM_RANK");
    printf("TT_PROC pid=%d rank=%s jobid=%s\n", (int)getpid(),
           rk ? rk : "-", job ? job : "");
    fflush(stdout);
}

static inline uint64_t gt_seed(void)
{
    const char *s = getenv("GT_SEED");
    return s && *s ? strtoull(s, NULL, 0) : 0x6a5e7e5ull;
}

/* gasnet_init + gasnet_attach (segsize rounded up to pages). */
static inline void gt_start(int *argc, char ***argv, const char *name,
                            gasnet_handlerentry_t *table, int ntable,
                            uintptr_t segsize)
{
    gt_proc_line();
    GT_SAFE(gasnet_init(argc, argv));
    gt_me = (int)gasnet_mynode();
    gt_n = (int)gasnet_nodes();
    segsize = (segsize + GASNET_PAGESIZE - 1) / GASNET_PAGESIZE *
              GASNET_PAGESIZE;
    GT_SAFE(gasnet_attach(table, ntable, segsize, 0));
    gt_attached = 1;
    if (gt_me == 0)
        gt_log("%s: %d nodes, seed 0x%" PRIx64 " (set GT_SEED to change)",
               name, gt_n, gt_seed());
}

static inline void gt_barrier(void)
{
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    GT_SAFE(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS));
}

/* Synchronise, report and end the job with status 0. */
static inline void gt_finish(const char *name)
{
    gt_barrier();
    if (gt_me == 0)
        gt_log("%s: PASS", name);
    gasnet_exit(0);
}

/* This node's segment. */
static inline gasnet_seginfo_t gt_seg(int node)
{
    gasnet_seginfo_t s[1024];
    GT_ASSERT(gt_n <= 1024, "too many nodes (%d)", gt_n);
    GT_SAFE(gasnet_getSegmentInfo(s, gt_n));
    return s[node];
}

/* Poll until *flag reaches want; fails after limit seconds. */
static inline void gt_wait_ge(volatile int *flag, int want, double limit,
                              const char *what)
{
    double t0 = gt_now();
    while (*flag < want) {
        GT_SAFE(gasnet_AMPoll());
        if (gt_now() - t0 > limit)
            GT_FAIL("waited %.0f s for %s (%d of %d)", limit, what, *flag,
                    want);
    }
}

/* ---- patterns: the byte at offset off is a function of (key, off) ---- */

static inline uint64_t gt_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t gt_key(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return gt_mix(gt_mix(gt_mix(gt_mix(a ^ gt_seed()) ^ b) ^ c) ^ d);
}

static inline uint8_t gt_pat_byte(uint64_t key, size_t off)
{
    return (uint8_t)(gt_mix(key ^ (off >> 3)) >> (8 * (off & 7)));
}

static inline void gt_pat_fill(void *buf, size_t n, uint64_t key)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = gt_pat_byte(key, i);
}

/* 0 if buf holds the pattern; else prints the first difference. */
static inline int gt_pat_check(const void *buf, size_t n, uint64_t key,
                               const char *what)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != gt_pat_byte(key, i)) {
            size_t bad = 0;
            for (size_t j = i; j < n; j++)
                bad += p[j] != gt_pat_byte(key, j);
            fprintf(stderr, "[gt r%d] %s: %zu of %zu bytes differ, first at "
                    "%zu (got 0x%02x, expected 0x%02x)\n", gt_me, what, bad,
                    n, i, p[i], gt_pat_byte(key, i));
            return -1;
        }
    }
    return 0;
}

#define GT_GUARD 64
#define GT_GUARD_SALT 0x243f6a8885a308d3ull

#endif

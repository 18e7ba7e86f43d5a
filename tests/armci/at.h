/* at.h - helpers of the ARMCI tests (header only).  Uses only armci.h,
 * message.h and libc, so that every test builds unchanged against
 * libarmci over Telemem and against Debian's ARMCI-MPI (then with
 * -DAT_MPI=1: ARMCI-MPI needs MPI_Init before ARMCI_Init).  Prints the
 * "TT_PROC" line tests/common/run_checked.sh uses to look for leftover
 * processes, checks with file:line messages, and seeded patterns. */
#ifndef AT_H
#define AT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <armci.h>
#include <message.h>

#ifndef AT_MPI
#define AT_MPI 0
#endif

static int at_me = -1, at_n = 0;

static inline void at_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void at_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int k = snprintf(line, sizeof line, "[at r%d] ", at_me);
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k, fmt, ap);
    va_end(ap);
    printf("%s\n", line);
    fflush(stdout);
}

static inline void at_fail_at(const char *file, int line, const char *what,
                              const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static inline void at_fail_at(const char *file, int line, const char *what,
                              const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "[at r%d] FAIL %s:%d: %s: %s\n", at_me, file, line, what,
            msg);
    fflush(stderr);
    exit(1);
}

/* Fail unless cond holds; the rest is a printf message. */
#define AT_ASSERT(cond, ...)                                                \
    do {                                                                    \
        if (!(cond))                                                        \
            at_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__);             \
    } while (0)

/* ARMCI calls return 0 on success. */
#define AT_OK(call)                                                         \
    do {                                                                    \
        int at_rc_ = (call);                                                \
        if (at_rc_ != 0)                                                    \
            at_fail_at(__FILE__, __LINE__, #call, "returned %d", at_rc_);   \
    } while (0)

static inline void at_proc_line(void)
{
    const char *job = getenv("TELEMEM_JOBID");
    const char *rk = getenv("TELEMEM_RANK");
    printf("TT_PROC pid=%d rank=%s jobid=%s\n", (int)getpid(),
           rk ? rk : "-", job ? job : "");
    fflush(stdout);
}

static inline void at_init(int *argc, char ***argv)
{
    at_proc_line();
#if AT_MPI
    MPI_Init(argc, argv);
#endif
    AT_OK(ARMCI_Init_args(argc, argv));
    at_me = armci_msg_me();
    at_n = armci_msg_nproc();
}

static inline void at_finish(const char *name)
{
    ARMCI_Barrier();
    if (at_me == 0)
        at_log("PASS %s (%d ranks)", name, at_n);
    AT_OK(ARMCI_Finalize());
#if AT_MPI
    MPI_Finalize();
#endif
}

/* The byte of a seeded pattern at position i. */
static inline unsigned char at_byte(unsigned seed, size_t i)
{
    uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + 17u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (unsigned char)x;
}

static inline void at_fill(void *p, size_t n, unsigned seed)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = at_byte(seed, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long at_check(const void *p, size_t n, unsigned seed)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i] != at_byte(seed, i))
            return (long)i;
    return -1;
}

/* A pointer array of one entry per rank. */
static inline void **at_ptrs(void)
{
    void **p = calloc((size_t)at_n, sizeof *p);
    AT_ASSERT(p != NULL, "out of memory");
    return p;
}

#endif /* AT_H */

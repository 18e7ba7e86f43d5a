/* gasnet_only.h - what the benchmarks written against gasnet.h alone
 * (gasnet_medium.c, gasnet_rma.c, gasnet_bar.c) share: a clock, a barrier,
 * a figure line in the format of GASNet's testam, and the check of a
 * GASNet call.  Only libc and gasnet.h, so that any GASNet's makefile
 * fragment builds them (scripts/bench-gasnet.sh).  GB_PROG names the
 * program in messages. */
#ifndef TLM_BENCH_GASNET_ONLY_H
#define TLM_BENCH_GASNET_ONLY_H

#include <gasnet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double gb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void gb_barrier(void)
{
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

/* "0: <what> <size> bytes: <s> sec <us> us", the time per operation of n
 * operations that took sec seconds. */
static inline void gb_report(const char *what, size_t size, double sec, long n)
{
    printf("0: %s %zu bytes: %.6f sec %.4f us\n", what, size, sec,
           sec * 1e6 / (double)n);
    fflush(stdout);
}

static inline void gb_check(int rc, const char *what)
{
    if (rc != GASNET_OK) {
        fprintf(stderr, GB_PROG ": %s failed (%d)\n", what, rc);
        gasnet_exit(1);
    }
}

#endif

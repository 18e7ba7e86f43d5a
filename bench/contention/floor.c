/* floor.c - the physical floor of an 8-byte message on this machine: two
 * threads pinned on two CPUs bounce one cache line (each waits for the
 * other's counter value, then writes the next), no library involved.
 * Prints the one-way time (half a round trip), median and minimum of
 * --samples timed samples of --iters round trips each, as CSV:
 *   floor,cpu_a,cpu_b,iters,usec_median,usec_min
 * scripts/bench-contention.sh compares Telemem's 8-byte put latency with
 * it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Alignas(64) _Atomic uint64_t line;
static long iters = 100000;
static int cpus[2] = {0, 1};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof(s), &s) != 0)
        fprintf(stderr, "floor: cannot pin to CPU %d (running unpinned)\n",
                cpu);
}

/* Thread b answers every odd value with the next even one. */
static void *pong(void *arg)
{
    long rounds = *(long *)arg;
    pin(cpus[1]);
    for (uint64_t v = 1; v < 2 * (uint64_t)rounds; v += 2) {
        while (atomic_load_explicit(&line, memory_order_acquire) != v)
            ;
        atomic_store_explicit(&line, v + 1, memory_order_release);
    }
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int samples = 9;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus") && i + 1 < argc &&
                 sscanf(argv[++i], "%d,%d", &cpus[0], &cpus[1]) == 2)
            ;
        else {
            fprintf(stderr, "usage: floor [--iters N] [--samples N] "
                            "[--cpus A,B]\n");
            return 2;
        }
    }
    if (samples < 1 || samples > 1000 || iters < 1)
        return 2;
    double *us = malloc(sizeof(double) * (size_t)samples);
    pin(cpus[0]);
    long total = iters * (samples + 1); /* one warm-up sample */
    pthread_t th;
    atomic_store(&line, 0);
    pthread_create(&th, NULL, pong, &total);
    uint64_t v = 0;
    for (int s = -1; s < samples; s++) {
        double t0 = now();
        for (long i = 0; i < iters; i++) {
            atomic_store_explicit(&line, v + 1, memory_order_release);
            while (atomic_load_explicit(&line, memory_order_acquire) != v + 2)
                ;
            v += 2;
        }
        if (s >= 0)
            us[s] = (now() - t0) / (double)iters / 2 * 1e6;
    }
    pthread_join(th, NULL);
    qsort(us, (size_t)samples, sizeof(double), cmp);
    printf("test,cpu_a,cpu_b,iters,usec_median,usec_min\n");
    printf("floor,%d,%d,%ld,%.4f,%.4f\n", cpus[0], cpus[1], iters,
           us[samples / 2], us[0]);
    free(us);
    return 0;
}

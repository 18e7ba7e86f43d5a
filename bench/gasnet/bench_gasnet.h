/* bench_gasnet.h - shared parts of the GASNet-layer benchmarks: options,
 * the clock, medians, the polling loops used on the telemem.h side (the
 * same policy as GASNET_BLOCKUNTIL: yield after 200 empty polls), the
 * DONE message that releases the passive rank, and the report header. */
#ifndef BENCH_GASNET_H
#define BENCH_GASNET_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gasnet.h>
#include <telemem.h>

/* GASNet handler indices and Telemem AM ids (below 128, which libgasnet
 * leaves unused above its own few ids) of the benchmarks. */
#define BG_H_DONE 250
#define BG_T_PING 100
#define BG_T_PONG 101

typedef struct {
    int rounds;
    long iters;
    size_t max;
    int quick;
} bg_opts_t;

static inline void bg_opts(int argc, char **argv, bg_opts_t *o)
{
    /* Many short rounds: both halves of a round see the same speed phase
     * of the machine, and the median of the per-round ratios ignores the
     * rounds a phase change splits. */
    o->rounds = 101;
    o->iters = 2000;
    o->max = 4u << 20;
    o->quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--rounds=", 9) == 0)
            o->rounds = atoi(argv[i] + 9);
        else if (strncmp(argv[i], "--iters=", 8) == 0)
            o->iters = atol(argv[i] + 8);
        else if (strncmp(argv[i], "--max=", 6) == 0)
            o->max = (size_t)strtoull(argv[i] + 6, NULL, 0);
        else if (strcmp(argv[i], "--quick") == 0)
            o->quick = 1;
        else {
            fprintf(stderr, "usage: %s [--rounds=N] [--iters=N] [--max=BYTES]"
                    " [--quick]\n", argv[0]);
            exit(2);
        }
    }
    if (o->quick) {
        o->rounds = 2;
        o->iters = 200;
        if (o->max > 65536)
            o->max = 65536;
    }
    if (o->rounds < 1)
        o->rounds = 1;
    if (o->iters < 1)
        o->iters = 1;
}

static inline double bg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bg_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bg_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bg_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The 10th percentile of v (sorted by bg_median() already): the figure of
 * the machine's fast phase. */
static inline double bg_p10(const double *v, int n)
{
    return v[n / 10];
}

static inline void bg_die(const char *what, int rc)
{
    fprintf(stderr, "bench: %s failed (%d)\n", what, rc);
    gasnet_exit(1);
}

/* The telemem.h-side wait: poll until *flag >= want. */
static inline void bg_tpoll_until(volatile long *flag, long want)
{
    unsigned idle = 0;
    while (*flag < want) {
        int n = telemem_poll();
        if (n < 0)
            bg_die("telemem_poll", n);
        if (n > 0) {
            idle = 0;
        } else if (++idle >= 200) {
            idle = 0;
            sched_yield();
        }
    }
}

static volatile long bg_done;

static void bg_done_handler(gasnet_token_t t)
{
    bg_done++;
}

/* Rank 1 serves (its polls apply the puts and run the handlers of either
 * layer) until rank 0 says the phase is over.  It polls the same way in
 * both phases: how fast the passive side polls changes the sender's speed
 * (a tighter loop contends more for the shared cache lines), which would
 * otherwise show up as a difference between the layers. */
static long bg_served; /* phases served so far */

static inline void bg_serve(void)
{
    /* Counted, not relative to bg_done now: the DONE of a short phase may
     * have been handled already, in the barrier that began it. */
    long want = ++bg_served;
    GASNET_BLOCKUNTIL(bg_done >= want);
}

static inline void bg_end_phase(void)
{
    int rc = gasnet_AMRequestShort0(1, BG_H_DONE);
    if (rc != GASNET_OK)
        bg_die("DONE request", rc);
}

static inline void bg_barrier(void)
{
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

static inline void bg_header(const char *prog, const bg_opts_t *o)
{
    printf("# %s\n", prog);
    printf("# telemem version = %s, GASNet release = %d.%d.%d\n",
           telemem_version(), GASNET_RELEASE_VERSION_MAJOR,
           GASNET_RELEASE_VERSION_MINOR, GASNET_RELEASE_VERSION_PATCH);
    printf("# transport = %s, nodes = %u\n", telemem_transport_name(1),
           (unsigned)gasnet_nodes());
    printf("# rounds = %d (gasnet.h and telemem.h alternate, ABBA), "
           "iterations = %ld\n", o->rounds, o->iters);
    printf("# medians over the rounds; ratio = median of the per-round "
           "gasnet/telemem ratios (1.00 = no overhead); *_p10 = the best "
           "tenth of the rounds (the machine's fast phase)\n");
    const char *cfg = telemem_config_string();
    printf("# config:\n");
    while (cfg && *cfg) {
        const char *nl = strchr(cfg, '\n');
        int len = nl ? (int)(nl - cfg) : (int)strlen(cfg);
        printf("#   %.*s\n", len, cfg);
        cfg = nl ? nl + 1 : cfg + len;
    }
}

#endif

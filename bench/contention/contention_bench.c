/* contention_bench.c - how Telemem's waits behave when the cores are
 * shared (scripts/bench-contention.sh runs it):
 *   --mode barrier  (under mpirun, e.g. 4 ranks on 2 cores) --iters times:
 *                   an 8-byte put to the next rank, completion, barrier;
 *                   --impl telemem (telemem_put + telemem_quiet +
 *                   telemem_barrier into telemem_malloc_all memory) or mpi
 *                   (MPI_Put into an MPI_Win_allocate window under
 *                   MPI_Win_lock_all + MPI_Win_flush + MPI_Barrier).
 *                   Prints the seconds of the loop (the slowest rank).
 *   --mode idle     (under telemem-run, 2 ranks) rank 1 sleeps --seconds
 *                   then enters telemem_barrier; rank 0 waits in it and
 *                   prints its CPU time over the wait (process: the
 *                   progress thread, if on, included).
 *   --mode ptidle   (under telemem-run, TELEMEM_PROGRESS_THREAD=on) every
 *                   rank sleeps --seconds outside Telemem, as a program
 *                   that computes: rank 0 prints its CPU time meanwhile,
 *                   the progress thread's.
 * Output: '#' header lines, then CSV:
 *   mode,impl,ranks,iters,seconds,cpu_seconds,cpu_share */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "telemem.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void check(const char *what, int rc)
{
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "contention-bench: %s: %s\n", what,
                telemem_strerror(rc));
        exit(1);
    }
}

static double barrier_telemem(long iters, int me, int n)
{
    void **bases = calloc((size_t)n, sizeof(*bases));
    check("malloc_all", telemem_malloc_all(64, bases));
    uint64_t v = 0;
    int right = (me + 1) % n;
    check("barrier", telemem_barrier());
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        v = (uint64_t)i;
        check("put", telemem_put(right, bases[right], &v, sizeof(v)));
        check("quiet", telemem_quiet());
        check("barrier", telemem_barrier());
    }
    double t = now() - t0;
    uint64_t *mine = bases[me];
    if (*mine != (uint64_t)(iters - 1)) {
        fprintf(stderr, "contention-bench: rank %d saw %llu, not %ld\n", me,
                (unsigned long long)*mine, iters - 1);
        exit(1);
    }
    check("free_all", telemem_free_all(bases[me]));
    free(bases);
    return t;
}

static double barrier_mpi(long iters, int me, int n)
{
    uint64_t *mine, v = 0;
    MPI_Win win;
    MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
    *mine = 0;
    MPI_Win_lock_all(0, win);
    int right = (me + 1) % n;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        v = (uint64_t)i;
        MPI_Put(&v, 1, MPI_UINT64_T, right, 0, 1, MPI_UINT64_T, win);
        MPI_Win_flush(right, win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double t = now() - t0;
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    return t;
}

int main(int argc, char **argv)
{
    const char *mode = "barrier", *impl = "telemem";
    long iters = 10000;
    double seconds = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc)
            mode = argv[++i];
        else if (!strcmp(argv[i], "--impl") && i + 1 < argc)
            impl = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: contention-bench "
                            "[--mode barrier|idle|ptidle] "
                            "[--impl telemem|mpi] [--iters N] "
                            "[--seconds S]\n");
            return 2;
        }
    }
    bool ptidle = !strcmp(mode, "ptidle");
    bool idle = !strcmp(mode, "idle") || ptidle;
    bool use_mpi = !strcmp(impl, "mpi");
    if ((!idle && strcmp(mode, "barrier")) || (!use_mpi &&
                                               strcmp(impl, "telemem")) ||
        (idle && use_mpi) || iters < 1) {
        fprintf(stderr, "contention-bench: bad --mode/--impl/--iters\n");
        return 2;
    }
    if (!idle)
        MPI_Init(&argc, &argv);
    check("initialize", telemem_initialize(&argc, &argv));
    int me = telemem_rank(), n = telemem_nranks();
    double t = 0, cpu = 0;
    if (ptidle) {
        check("barrier", telemem_barrier());
        double c0 = cpu_now(), t0 = now();
        usleep((useconds_t)(seconds * 1e6));
        cpu = cpu_now() - c0;
        t = now() - t0;
        check("barrier", telemem_barrier());
    } else if (idle) {
        if (me == 1)
            usleep((useconds_t)(seconds * 1e6));
        double c0 = cpu_now(), t0 = now();
        check("barrier", telemem_barrier());
        cpu = cpu_now() - c0;
        t = now() - t0;
    } else {
        t = use_mpi ? barrier_mpi(iters, me, n) : barrier_telemem(iters, me, n);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD);
    }
    if (me == 0) {
        printf("# contention-bench %s, telemem %s, %d ranks\n", mode,
               telemem_version(), n);
        printf("mode,impl,ranks,iters,seconds,cpu_seconds,cpu_share\n");
        printf("%s,%s,%d,%ld,%.6f,%.6f,%.6f\n", mode, impl, n,
               idle ? 1 : iters, t, cpu, idle ? cpu / t : 0.0);
    }
    check("finalize", telemem_finalize());
    if (!idle)
        MPI_Finalize();
    return 0;
}

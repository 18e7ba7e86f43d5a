/* acc_bench.c - latency of an 8-byte ARMCI accumulate to a target that sits
 * in MPI_Barrier (scripts/bench-contention.sh runs it under load): rank 0
 * issues --iters ARMCI_Acc of one double (one row of 8 bytes) to rank 1,
 * each completed by ARMCI_Fence, with --gap-us of sleep in between (so a
 * progress thread that spins when busy has gone to sleep again); rank 1
 * waits in MPI_Barrier meanwhile.  Built twice from this source:
 * telemem-acc-bench (libarmci over Telemem, its progress thread on by
 * default) and armci-mpi-acc-bench (Debian's ARMCI-MPI, -DACC_MPI=1); both
 * run under mpirun -n 2.  Output: '#' header, then CSV:
 *   impl,iters,gap_us,usec_median,usec_p90,usec_min,usec_max */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <armci.h>

#ifndef ACC_MPI
#define ACC_MPI 0
#endif

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long iters = 1000, gap_us = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--gap-us") && i + 1 < argc)
            gap_us = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: mpirun -n 2 acc-bench [--iters N] "
                            "[--gap-us U]\n");
            return 2;
        }
    }
    if (iters < 1 || gap_us < 0)
        return 2;
    MPI_Init(&argc, &argv);
    if (ARMCI_Init() != 0) {
        fprintf(stderr, "acc-bench: ARMCI_Init failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    void **bases = calloc((size_t)n, sizeof(*bases));
    double *us = malloc(sizeof(double) * (size_t)iters);
    if (n < 2 || !bases || !us || ARMCI_Malloc(bases, sizeof(double)) != 0) {
        fprintf(stderr, "acc-bench: needs 2 ranks and memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    *(double *)bases[me] = 0;
    ARMCI_Barrier();
    if (me == 0) {
        double one = 1.0, scale = 1.0;
        for (long i = 0; i < iters; i++) {
            if (gap_us)
                usleep((useconds_t)gap_us);
            double t0 = MPI_Wtime();
            if (ARMCI_Acc(ARMCI_ACC_DBL, &scale, &one, bases[1],
                          (int)sizeof(double), 1) != 0)
                MPI_Abort(MPI_COMM_WORLD, 1);
            ARMCI_Fence(1);
            us[i] = (MPI_Wtime() - t0) * 1e6;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 waits here all along */
    ARMCI_Barrier();
    if (me == 1 && *(double *)bases[1] != (double)iters) {
        fprintf(stderr, "acc-bench: target holds %g, not %ld\n",
                *(double *)bases[1], iters);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (me == 0) {
        qsort(us, (size_t)iters, sizeof(double), cmp);
        printf("# acc-bench: %s, %d ranks\n",
               ACC_MPI ? "ARMCI-MPI" : "libarmci over Telemem", n);
        printf("impl,iters,gap_us,usec_median,usec_p90,usec_min,usec_max\n");
        printf("%s,%ld,%ld,%.3f,%.3f,%.3f,%.3f\n",
               ACC_MPI ? "armci-mpi" : "telemem", iters, gap_us,
               us[iters / 2], us[iters * 9 / 10], us[0], us[iters - 1]);
    }
    ARMCI_Free(bases[me]);
    free(bases);
    free(us);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}

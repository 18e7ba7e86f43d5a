/* launcher_mpi.c - a program that uses MPI and Telemem together, started by
 * Open MPI's mpirun: Telemem joins the job through PMIx, and its ranks equal
 * MPI_COMM_WORLD's, whether MPI_Init comes before or after
 * telemem_initialize (argv[1] = "mpi-first" or "telemem-first"). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "telemem.h"

static int fail(const char *what, int rc)
{
    fprintf(stderr, "launcher_mpi: %s: %s\n", what, telemem_strerror(rc));
    return 1;
}

int main(int argc, char **argv)
{
    int mpi_first = argc > 1 && strcmp(argv[1], "mpi-first") == 0;
    int rc;
    if (mpi_first)
        MPI_Init(&argc, &argv);
    if ((rc = telemem_initialize(&argc, &argv)) != TELEMEM_OK)
        return fail("telemem_initialize", rc);
    if (!mpi_first)
        MPI_Init(&argc, &argv);
    int mr, mn;
    MPI_Comm_rank(MPI_COMM_WORLD, &mr);
    MPI_Comm_size(MPI_COMM_WORLD, &mn);
    if (telemem_rank() != mr || telemem_nranks() != mn) {
        fprintf(stderr, "launcher_mpi: telemem rank %d of %d, MPI rank %d of "
                "%d\n", telemem_rank(), telemem_nranks(), mr, mn);
        return 1;
    }
    /* A put ring through Telemem, checked with MPI. */
    void *bases[64];
    if (mn > 64)
        return 1;
    if ((rc = telemem_malloc_all(sizeof(int), bases)) != TELEMEM_OK)
        return fail("malloc_all", rc);
    int me = mr, right = (mr + 1) % mn, got = -1;
    if ((rc = telemem_put(right, bases[right], &me, sizeof me)) != TELEMEM_OK ||
        (rc = telemem_quiet()) != TELEMEM_OK ||
        (rc = telemem_barrier()) != TELEMEM_OK)
        return fail("put ring", rc);
    got = *(int *)bases[mr];
    int want = (mr + mn - 1) % mn, ok = got == want, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        fprintf(stderr, "launcher_mpi: rank %d got %d, want %d\n", mr, got,
                want);
        return 1;
    }
    if ((rc = telemem_free_all(bases[mr])) != TELEMEM_OK ||
        (rc = telemem_finalize()) != TELEMEM_OK)
        return fail("finalize", rc);
    /* A launched rank joins its job once (telemem.h). */
    if ((rc = telemem_initialize(&argc, &argv)) != TELEMEM_ERR_STATE)
        return fail("initialize after finalize (want TELEMEM_ERR_STATE)", rc);
    MPI_Finalize();
    if (mr == 0)
        printf("launcher_mpi: %d ranks, Telemem ranks = MPI ranks (%s)\n", mn,
               mpi_first ? "MPI_Init first" : "telemem_initialize first");
    return 0;
}

/* a2a_mpi.c - the MPI_Alltoall variant of the FFT benchmark's all-to-all
 * (fft.h, --alltoall mpi): arrays in ordinary memory, the exchange is one
 * MPI_Alltoall on MPI_COMM_WORLD. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "fft.h"

static int mpi_fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "fft: %s: %s\n", what, msg);
    return 1;
}

static int a2a_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static const char *a2a_describe(void)
{
    static char buf[MPI_MAX_LIBRARY_VERSION_STRING + 64];
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    /* Only the first line: Open MPI appends its build details. */
    char *nl = strchr(ver, '\n');
    if (nl)
        *nl = 0;
    snprintf(buf, sizeof buf, "MPI_Alltoall of %s", ver);
    return buf;
}

static int a2a_alloc(size_t bytes, void **local_p)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
        fprintf(stderr, "fft: posix_memalign(%zu bytes) failed\n", bytes);
        return 1;
    }
    *local_p = p;
    return 0;
}

static int a2a_alltoall(const void *snd, void *rcv, size_t blk)
{
    /* Blocks are whole complex doubles; count them as such so that blocks
     * up to 32 GiB fit MPI's int count. */
    size_t count = blk / 16;
    if (count > INT_MAX) {
        fprintf(stderr, "fft: MPI_Alltoall block of %zu bytes is too large\n",
                blk);
        return 1;
    }
    int rc = MPI_Alltoall(snd, (int)count, MPI_C_DOUBLE_COMPLEX, rcv,
                          (int)count, MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_fail("MPI_Alltoall", rc);
}

static int a2a_free(void *local)
{
    free(local);
    return 0;
}

static int a2a_fini(void)
{
    return 0;
}

const fft_a2a_t fft_a2a_mpi = {
    .name = "mpi",
    .init = a2a_init,
    .describe = a2a_describe,
    .alloc = a2a_alloc,
    .alltoall = a2a_alltoall,
    .free_array = a2a_free,
    .fini = a2a_fini,
};

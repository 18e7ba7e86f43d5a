/* backend_armci.c - the ARMCI-MPI side of the strided benchmark
 * (armci-mpi-strided): strided_backend.h over ARMCI_PutS/ARMCI_GetS of
 * ARMCI-MPI (Debian's libarmci-mpi-dev, over Open MPI).  ARMCI-MPI reads
 * its settings (ARMCI_STRIDED_METHOD, ARMCI_IOV_METHOD, ...) from the
 * environment at ARMCI_Init; the label of the CSV rows follows
 * ARMCI_STRIDED_METHOD. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <armci.h>

#include "strided_backend.h"

extern char **environ;

static int g_rank = -1;

static void fail(const char *what, int rc, int line)
{
    fprintf(stderr, "armci-mpi-strided: rank %d: %s failed "
            "(backend_armci.c:%d): status %d\n", g_rank, what, line, rc);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define CHECK_ARMCI(call)                                                   \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != 0)                                                       \
            fail(#call, rc_, __LINE__);                                     \
    } while (0)
#define CHECK_MPI(call)                                                     \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != MPI_SUCCESS)                                             \
            fail(#call, rc_, __LINE__);                                     \
    } while (0)

const char *sb_prog(void)
{
    return "armci-mpi-strided";
}

const char *sb_label(void)
{
    const char *m = getenv("ARMCI_STRIDED_METHOD");
    if (!m || !*m)
        return "armci-mpi-default";
    if (!strcmp(m, "DIRECT"))
        return "armci-mpi-direct";
    if (!strcmp(m, "IOV"))
        return "armci-mpi-iov";
    return "armci-mpi-other";
}

int sb_env_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r)
        r = getenv("PMI_RANK");
    return r && *r ? atoi(r) : -1;
}

void sb_init(int *argc, char ***argv)
{
    CHECK_MPI(MPI_Init(argc, argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    CHECK_ARMCI(ARMCI_Init());
}

void sb_finalize(void)
{
    CHECK_ARMCI(ARMCI_Finalize());
    CHECK_MPI(MPI_Finalize());
}

int sb_rank(void)
{
    return g_rank;
}

int sb_nranks(void)
{
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

void sb_malloc_all(size_t bytes, void **bases)
{
    CHECK_ARMCI(ARMCI_Malloc(bases, (armci_size_t)bytes));
}

void sb_free_all(void *mine)
{
    CHECK_ARMCI(ARMCI_Free(mine));
}

void sb_barrier(void)
{
    ARMCI_Barrier();
}

void sb_broadcast(void *buf, size_t bytes, int root)
{
    if (bytes > INT_MAX)
        fail("MPI_Bcast (size)", -1, __LINE__);
    CHECK_MPI(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD));
}

void sb_allgather(const void *in, void *out, size_t bytes_per_rank)
{
    if (bytes_per_rank > INT_MAX)
        fail("MPI_Allgather (size)", -1, __LINE__);
    CHECK_MPI(MPI_Allgather(in, (int)bytes_per_rank, MPI_BYTE, out,
                            (int)bytes_per_rank, MPI_BYTE, MPI_COMM_WORLD));
}

/* ARMCI takes int arrays: convert, refusing what does not fit. */
static void to_int(int *dst, const size_t *src, int n)
{
    for (int i = 0; i < n; i++) {
        if (src[i] > INT_MAX)
            fail("stride/count conversion to int", -1, __LINE__);
        dst[i] = (int)src[i];
    }
}

void sb_put_strided(int rank, void *remote, const size_t *remote_strides,
                    const void *local, const size_t *local_strides,
                    const size_t *count, int levels)
{
    int rs[8], ls[8], c[9];
    to_int(rs, remote_strides, levels);
    to_int(ls, local_strides, levels);
    to_int(c, count, levels + 1);
    CHECK_ARMCI(ARMCI_PutS((void *)local, ls, remote, rs, c, levels, rank));
    ARMCI_Fence(rank);
}

void sb_get_strided(int rank, void *local, const size_t *local_strides,
                    const void *remote, const size_t *remote_strides,
                    const size_t *count, int levels)
{
    int rs[8], ls[8], c[9];
    to_int(rs, remote_strides, levels);
    to_int(ls, local_strides, levels);
    to_int(c, count, levels + 1);
    CHECK_ARMCI(ARMCI_GetS((void *)remote, rs, local, ls, c, levels, rank));
}

void sb_print_header(FILE *out)
{
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    ver[strcspn(ver, "\n")] = '\0';
    fprintf(out, "# library = ARMCI-MPI (Debian libarmci-mpi-dev) over %s\n",
            ver);
    fprintf(out, "# completion = ARMCI_PutS + ARMCI_Fence; ARMCI_GetS\n");
    const char *m = getenv("ARMCI_STRIDED_METHOD");
    fprintf(out, "# ARMCI_STRIDED_METHOD = %s\n",
            m && *m ? m : "(unset: ARMCI-MPI's default, IOV)");
    fprintf(out, "# environment (ARMCI_*):\n");
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "ARMCI_", 6))
            fprintf(out, "#   %s\n", *e);
}

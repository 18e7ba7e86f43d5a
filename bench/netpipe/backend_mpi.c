/* backend_mpi.c - the MPI two-sided side of the NetPIPE benchmark
 * (mpi-netpipe): netpipe_backend.h over MPI_Send / MPI_Recv in NetPIPE's
 * MPI style.  A "put" is an MPI_Send from the sender's message area,
 * matched by a blocking MPI_Recv that the receiver posts into its own
 * message area, where a one-sided receiver would start polling.  The
 * blocks are page-aligned private memory. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "netpipe_backend.h"

static const struct nb_info info = {
    .prog = "mpi-netpipe",
    .impl = "mpi",
    .launch = "mpirun -n 2",
    .two_sided = 1,
    .poll_default = 0,
    .has_path = 0,
    .ordered = 1, /* a message is all there when MPI_Recv returns */
};

#define TAG 7

extern char **environ;

static int g_rank = -1;

static void fail(const char *what, int rc, int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "mpi-netpipe: rank %d: %s failed (backend_mpi.c:%d): "
            "%s\n", g_rank, what, line, msg);
    fflush(stderr);
    nb_abort(1);
}
#define CHECK_MPI(call)                                                     \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != MPI_SUCCESS)                                             \
            fail(#call, rc_, __LINE__);                                     \
    } while (0)

static int to_count(size_t n, int line)
{
    if (n > INT_MAX)
        fail("message size above INT_MAX", MPI_SUCCESS, line);
    return (int)n;
}

const struct nb_info *nb_info(void)
{
    return &info;
}

int nb_env_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r || !*r)
        r = getenv("PMIX_RANK");
    if (!r || !*r)
        r = getenv("PMI_RANK");
    return r && *r ? atoi(r) : -1;
}

void nb_init(int *argc, char ***argv, const char *path)
{
    (void)path;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "mpi-netpipe: MPI_Init failed\n");
        exit(1);
    }
    /* Errors come back as codes, so that fail() can name the call. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
}

void nb_finalize(void)
{
    CHECK_MPI(MPI_Finalize());
}

int nb_rank(void)
{
    return g_rank;
}

int nb_nranks(void)
{
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

void nb_abort(int code)
{
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

void nb_malloc_all(size_t bytes, void **bases)
{
    void *mine = NULL;
    if (posix_memalign(&mine, 4096, bytes ? bytes : 1) != 0)
        fail("posix_memalign", MPI_SUCCESS, __LINE__);
    /* Only this rank's entry is ever dereferenced; the others keep the
     * caller's address arithmetic the same as with one-sided backends. */
    CHECK_MPI(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, bases,
                            sizeof mine, MPI_BYTE, MPI_COMM_WORLD));
}

void nb_free_all(void *mine)
{
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(mine);
}

void nb_barrier(void)
{
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

void nb_broadcast(void *buf, size_t bytes, int root)
{
    CHECK_MPI(MPI_Bcast(buf, to_count(bytes, __LINE__), MPI_BYTE, root,
                        MPI_COMM_WORLD));
}

void nb_allgather(const void *in, void *out, size_t bytes_per_rank)
{
    int c = to_count(bytes_per_rank, __LINE__);
    CHECK_MPI(MPI_Allgather(in, c, MPI_BYTE, out, c, MPI_BYTE,
                            MPI_COMM_WORLD));
}

void nb_put(int peer, void *remote, const void *local, size_t n)
{
    (void)remote; /* where the receiver's matching MPI_Recv points */
    CHECK_MPI(MPI_Send(local, to_count(n, __LINE__), MPI_BYTE, peer, TAG,
                       MPI_COMM_WORLD));
}

void nb_recv(int peer, void *local, size_t n)
{
    MPI_Status st;
    int got = -1;
    CHECK_MPI(MPI_Recv(local, to_count(n, __LINE__), MPI_BYTE, peer, TAG,
                       MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != (int)n) {
        fprintf(stderr, "mpi-netpipe: rank %d: received %d bytes, expected "
                "%zu (the two ranks disagree on the message order)\n",
                g_rank, got, n);
        nb_abort(1);
    }
}

void nb_quiet(void)
{
}

void nb_fence(int peer)
{
    (void)peer;
}

void nb_poll(void)
{
}

const char *nb_path(void)
{
    return "send";
}

void nb_print_header(FILE *out)
{
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    ver[strcspn(ver, "\n")] = '\0';
    fprintf(out, "# library = %s\n", ver);
    fprintf(out, "# completion = MPI_Send / MPI_Recv (blocking, NetPIPE's "
            "MPI module); burst: the receiver answers the last message\n");
    fprintf(out, "# environment (OMPI_MCA_{btl,pml}):\n");
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "OMPI_MCA_btl", 12) ||
            !strncmp(*e, "OMPI_MCA_pml", 12))
            fprintf(out, "#   %s\n", *e);
}

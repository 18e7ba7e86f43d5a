/* backend_armci.c - the ARMCI side of the NetPIPE benchmark:
 * netpipe_backend.h over ARMCI_Malloc / ARMCI_Put / ARMCI_AllFence /
 * ARMCI_Barrier and armci_msg_bcast, built twice: against our libarmci
 * (compat/armci, over Telemem; NB_ARMCI_TELEMEM defined ->
 * armci-netpipe) and against Debian's ARMCI-MPI (-> armci-mpi-netpipe).
 * As in NetPIPE's ARMCI module the receiver waits on plain loads of its own
 * ARMCI memory; with --poll yes (the default over Telemem) it also calls
 * ARMCIX_Progress() while it waits. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <armci.h>
#include <armcix.h>
#include <message.h>
#ifdef NB_ARMCI_TELEMEM
#include <telemem.h>
#else
#include <mpi.h>
#endif

#include "netpipe_backend.h"

extern char **environ;

#ifdef NB_ARMCI_TELEMEM
static const struct nb_info info = {
    .prog = "armci-netpipe",
    .impl = "armci-telemem",
    .launch = "telemem-run -n 2",
    .two_sided = 0,
    /* Plain-load waits alone leave the work to libarmci's progress
     * thread, which the two spinning ranks starve of CPU wherever they
     * fill the cores (about 12 ms per message on a 2-core machine). */
    .poll_default = 1,
    .has_path = 1,
    .ordered = 1, /* ARMCI_Put is telemem_put */
};
#else
static const struct nb_info info = {
    .prog = "armci-mpi-netpipe",
    .impl = "armci-mpi",
    .launch = "mpirun -n 2",
    .two_sided = 0,
    .poll_default = 0,
    .has_path = 0,
    /* Over Open MPI's osc/sm a put is the sender's memcpy, which does not
     * store in address order: the last bytes can land first. */
    .ordered = 0,
};
#endif

static int g_rank = -1;

static void fail(const char *what, int rc, int line)
{
    fprintf(stderr, "%s: rank %d: %s failed (backend_armci.c:%d): "
            "status %d\n", info.prog, g_rank, what, line, rc);
    fflush(stderr);
    nb_abort(1);
}
#define CHECK_ARMCI(call)                                                   \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != 0)                                                       \
            fail(#call, rc_, __LINE__);                                     \
    } while (0)

const struct nb_info *nb_info(void)
{
    return &info;
}

int nb_env_rank(void)
{
    const char *r = getenv("TELEMEM_RANK");
    if (!r || !*r)
        r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r || !*r)
        r = getenv("PMIX_RANK");
    return r && *r ? atoi(r) : -1;
}

void nb_init(int *argc, char ***argv, const char *path)
{
#ifdef NB_ARMCI_TELEMEM
    /* libarmci starts Telemem inside ARMCI_Init, which reads it. */
    if (path && setenv("TELEMEM_DIRECT", path, 1) != 0) {
        perror("armci-netpipe: setenv(TELEMEM_DIRECT)");
        exit(1);
    }
    /* libarmci works without MPI (under telemem-run); it needs none. */
    (void)argc;
    (void)argv;
#else
    (void)path;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "armci-mpi-netpipe: MPI_Init failed\n");
        exit(1);
    }
#endif
    CHECK_ARMCI(ARMCI_Init());
    g_rank = armci_msg_me();
}

void nb_finalize(void)
{
    CHECK_ARMCI(ARMCI_Finalize());
#ifndef NB_ARMCI_TELEMEM
    MPI_Finalize();
#endif
}

int nb_rank(void)
{
    return armci_msg_me();
}

int nb_nranks(void)
{
    return armci_msg_nproc();
}

void nb_abort(int code)
{
    fflush(stdout);
#ifdef NB_ARMCI_TELEMEM
    exit(code);
#else
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
#endif
}

void nb_malloc_all(size_t bytes, void **bases)
{
    if (bytes > INT_MAX)
        fail("ARMCI_Malloc (size above INT_MAX)", -1, __LINE__);
    CHECK_ARMCI(ARMCI_Malloc(bases, (armci_size_t)bytes));
}

void nb_free_all(void *mine)
{
    CHECK_ARMCI(ARMCI_Free(mine));
}

void nb_barrier(void)
{
    ARMCI_Barrier();
}

void nb_broadcast(void *buf, size_t bytes, int root)
{
    if (bytes > INT_MAX)
        fail("armci_msg_bcast (size above INT_MAX)", -1, __LINE__);
    armci_msg_bcast(buf, (int)bytes, root);
}

/* message.h has no allgather: one broadcast per rank. */
void nb_allgather(const void *in, void *out, size_t bytes_per_rank)
{
    int n = nb_nranks();
    for (int r = 0; r < n; r++) {
        char *slot = (char *)out + (size_t)r * bytes_per_rank;
        if (r == g_rank)
            memcpy(slot, in, bytes_per_rank);
        nb_broadcast(slot, bytes_per_rank, r);
    }
}

void nb_put(int peer, void *remote, const void *local, size_t n)
{
    if (n > INT_MAX)
        fail("ARMCI_Put (size above INT_MAX)", -1, __LINE__);
    CHECK_ARMCI(ARMCI_Put((void *)local, remote, (int)n, peer));
}

void nb_recv(int peer, void *local, size_t n)
{
    (void)peer;
    (void)local;
    (void)n;
    fail("nb_recv on a one-sided backend", -1, __LINE__);
}

void nb_quiet(void)
{
    ARMCI_AllFence();
}

void nb_fence(int peer)
{
    ARMCI_Fence(peer);
}

void nb_poll(void)
{
    ARMCIX_Progress();
}

const char *nb_path(void)
{
#ifdef NB_ARMCI_TELEMEM
    static char v[32];
    const char *cfg = telemem_config_string();
    const char *p = cfg ? strstr(cfg, "TELEMEM_DIRECT = ") : NULL;
    if (!p)
        return "am";
    p += strlen("TELEMEM_DIRECT = ");
    snprintf(v, sizeof v, "%.*s", (int)strcspn(p, " \n"), p);
    /* TELEMEM_DIRECT's never / always are the am / direct paths. */
    return !strcmp(v, "never") ? "am" : !strcmp(v, "always") ? "direct" : v;
#else
    return "rma";
#endif
}

void nb_print_header(FILE *out)
{
#ifdef NB_ARMCI_TELEMEM
    fprintf(out, "# library = libarmci (compat/armci) over Telemem %s\n",
            telemem_version());
    fprintf(out, "# transport = %s\n", telemem_transport_name(1));
    fprintf(out, "# path = %s\n", nb_path());
    fprintf(out, "# config:\n");
    const char *cfg = telemem_config_string();
    while (cfg && *cfg) {
        size_t l = strcspn(cfg, "\n");
        fprintf(out, "#   %.*s\n", (int)l, cfg);
        cfg += l + (cfg[l] == '\n');
    }
#else
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    ver[strcspn(ver, "\n")] = '\0';
    fprintf(out, "# library = ARMCI-MPI (Debian libarmci-mpi-dev) over %s\n",
            ver);
#endif
    fprintf(out, "# completion = ARMCI_Put (blocking), ARMCI_AllFence "
            "(burst), ARMCI_Barrier\n");
    fprintf(out, "# environment (ARMCI_*, OMPI_MCA_{osc,btl,pml}):\n");
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "ARMCI_", 6) || !strncmp(*e, "OMPI_MCA_osc", 12) ||
            !strncmp(*e, "OMPI_MCA_btl", 12) ||
            !strncmp(*e, "OMPI_MCA_pml", 12))
            fprintf(out, "#   %s\n", *e);
}

/* a2a_telemem.c - the Telemem variant of the FFT benchmark's all-to-all
 * (fft.h, --alltoall telemem): arrays from telemem_malloc_all, the exchange
 * written naively as the paper's Fig. 7 does it: one telemem_put of each
 * block to its rank (a memcpy for this rank's own block), then
 * telemem_quiet and telemem_barrier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "telemem.h"

#include "fft.h"

/* The arrays of alloc and every rank's address of them. */
#define MAX_ARRAYS 8
static struct {
    void *local;
    void **bases;
} g_arr[MAX_ARRAYS];
static int g_me, g_np;

static int tfail(const char *what, int rc)
{
    fprintf(stderr, "fft: rank %d: %s: %s (%s)\n", g_me, what,
            telemem_strerror(rc), telemem_status_name(rc));
    return 1;
}

static int a2a_init(int *argc, char ***argv)
{
    int rc = telemem_initialize(argc, argv);
    if (rc != TELEMEM_OK)
        return tfail("telemem_initialize", rc);
    g_me = telemem_rank();
    g_np = telemem_nranks();
    int mr, mn;
    MPI_Comm_rank(MPI_COMM_WORLD, &mr);
    MPI_Comm_size(MPI_COMM_WORLD, &mn);
    if (mr != g_me || mn != g_np) {
        fprintf(stderr,
                "fft: Telemem rank %d of %d but MPI rank %d of %d: "
                "start the program with mpirun (Telemem joins its job through "
                "PMIx), not telemem-run\n",
                g_me, g_np, mr, mn);
        return 1;
    }
    return 0;
}

static const char *a2a_describe(void)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "telemem %s puts + quiet + barrier, transport to rank %d: %s\n%s",
             telemem_version(), g_np > 1 ? 1 : 0,
             telemem_transport_name(g_np > 1 ? 1 : 0), telemem_config_string());
    /* The configuration block ends with a newline; the caller adds one. */
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = 0;
    return buf;
}

static int a2a_alloc(size_t bytes, void **local_p)
{
    int slot = 0;
    while (slot < MAX_ARRAYS && g_arr[slot].local)
        slot++;
    if (slot == MAX_ARRAYS) {
        fprintf(stderr, "fft: more than %d Telemem arrays\n", MAX_ARRAYS);
        return 1;
    }
    void **bases = calloc((size_t)g_np, sizeof *bases);
    if (!bases) {
        fprintf(stderr, "fft: out of memory\n");
        return 1;
    }
    int rc = telemem_malloc_all(bytes, bases);
    if (rc != TELEMEM_OK) {
        free(bases);
        return tfail("telemem_malloc_all", rc);
    }
    g_arr[slot].local = bases[g_me];
    g_arr[slot].bases = bases;
    *local_p = bases[g_me];
    return 0;
}

static int find(const void *local)
{
    for (int i = 0; i < MAX_ARRAYS; i++)
        if (g_arr[i].local == local)
            return i;
    return -1;
}

/* The paper's Fig. 7, with Telemem. */
static int a2a_alltoall(const void *snd, void *rcv, size_t blk)
{
    int a = find(rcv);
    if (a < 0) {
        fprintf(stderr, "fft: alltoall into memory not from alloc\n");
        return 1;
    }
    const char *from = snd;
    for (int n = 0; n < g_np; n++) {
        if (n == g_me) {
            memcpy((char *)rcv + blk * (size_t)g_me, from + blk * (size_t)n,
                   blk);
            continue;
        }
        char *to = (char *)g_arr[a].bases[n] + blk * (size_t)g_me;
        int rc = telemem_put(n, to, from + blk * (size_t)n, blk);
        if (rc != TELEMEM_OK)
            return tfail("telemem_put", rc);
    }
    int rc = telemem_quiet();
    if (rc != TELEMEM_OK)
        return tfail("telemem_quiet", rc);
    rc = telemem_barrier();
    if (rc != TELEMEM_OK)
        return tfail("telemem_barrier", rc);
    return 0;
}

static int a2a_free(void *local)
{
    int a = find(local);
    if (a < 0) {
        fprintf(stderr, "fft: free of memory not from alloc\n");
        return 1;
    }
    int rc = telemem_free_all(local);
    free(g_arr[a].bases);
    g_arr[a].local = NULL;
    g_arr[a].bases = NULL;
    return rc == TELEMEM_OK ? 0 : tfail("telemem_free_all", rc);
}

static int a2a_fini(void)
{
    int rc = telemem_finalize();
    return rc == TELEMEM_OK ? 0 : tfail("telemem_finalize", rc);
}

const fft_a2a_t fft_a2a_telemem = {
    .name = "telemem",
    .init = a2a_init,
    .describe = a2a_describe,
    .alloc = a2a_alloc,
    .alltoall = a2a_alltoall,
    .free_array = a2a_free,
    .fini = a2a_fini,
};

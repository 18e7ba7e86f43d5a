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
static fft_sym_t g_arr[FFT_SYM_MAX];
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
    fft_sym_t *e = fft_sym_new(g_arr, g_np, "Telemem");
    if (!e)
        return 1;
    void **bases = e->bases;
    int rc = telemem_malloc_all(bytes, bases);
    if (rc != TELEMEM_OK) {
        fft_sym_drop(e);
        return tfail("telemem_malloc_all", rc);
    }
    e->local = bases[g_me];
    *local_p = bases[g_me];
    return 0;
}

/* The paper's Fig. 7, with Telemem. */
static int a2a_alltoall(const void *snd, void *rcv, size_t blk)
{
    const fft_sym_t *a = fft_sym_find(g_arr, rcv, "alltoall into");
    if (!a)
        return 1;
    const char *from = snd;
    for (int n = 0; n < g_np; n++) {
        if (n == g_me) {
            memcpy((char *)rcv + blk * (size_t)g_me, from + blk * (size_t)n,
                   blk);
            continue;
        }
        char *to = (char *)a->bases[n] + blk * (size_t)g_me;
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
    fft_sym_t *a = fft_sym_find(g_arr, local, "free of");
    if (!a)
        return 1;
    int rc = telemem_free_all(local);
    fft_sym_drop(a);
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

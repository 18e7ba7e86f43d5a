/* a2a_armci.c - the ARMCI variant of the FFT benchmark's all-to-all
 * (fft.h, --alltoall armci): arrays from ARMCI_Malloc, the exchange written
 * as the paper's Fig. 7: one ARMCI_Put of each block (a memcpy for this
 * rank's own block), then ARMCI_AllFence and ARMCI_Barrier.  Compiled
 * twice from this file: against libarmci's armci.h (compat/armci, ARMCI
 * over Telemem; TELEMEM_ARMCI is defined) into telemem-fft, and against
 * Debian ARMCI-MPI's armci.h (ARMCI over MPI-3 RMA) into armci-mpi-fft. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <armci.h>
#include <message.h> /* armci_msg_me, armci_msg_nproc */

#ifdef TELEMEM_ARMCI
#include "telemem.h"
#endif

#include "fft.h"

/* The arrays of alloc and every rank's address of them. */
static fft_sym_t g_arr[FFT_SYM_MAX];
static int g_me, g_np;

static int a2a_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_me);
    MPI_Comm_size(MPI_COMM_WORLD, &g_np);
    int rc = ARMCI_Init();
    if (rc != 0) {
        fprintf(stderr, "fft: rank %d: ARMCI_Init: status %d\n", g_me, rc);
        return 1;
    }
    int ar = armci_msg_me(), an = armci_msg_nproc();
    if (ar != g_me || an != g_np) {
        fprintf(stderr,
                "fft: ARMCI rank %d of %d but MPI rank %d of %d: "
                "start the program with mpirun\n",
                ar, an, g_me, g_np);
        return 1;
    }
    return 0;
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static const char *a2a_describe(void)
{
    static char buf[8192];
#ifdef TELEMEM_ARMCI
    snprintf(buf, sizeof buf,
             "ARMCI_Put + ARMCI_AllFence + ARMCI_Barrier of libarmci over "
             "telemem %s (ARMCI_PROGRESS_THREAD=%s), transport to rank %d: "
             "%s\n%s",
             telemem_version(), env_or("ARMCI_PROGRESS_THREAD", "(default)"),
             g_np > 1 ? 1 : 0, telemem_transport_name(g_np > 1 ? 1 : 0),
             telemem_config_string());
#else
    snprintf(buf, sizeof buf,
             "ARMCI_Put + ARMCI_AllFence + ARMCI_Barrier of ARMCI-MPI "
             "(Debian libarmci-mpi-dev) over MPI-3 RMA, OMPI_MCA_osc=%s, "
             "ARMCI_USE_WIN_ALLOCATE=%s",
             env_or("OMPI_MCA_osc", "(default)"),
             env_or("ARMCI_USE_WIN_ALLOCATE", "(default)"));
#endif
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = 0;
    return buf;
}

static int a2a_alloc(size_t bytes, void **local_p)
{
    fft_sym_t *e = fft_sym_new(g_arr, g_np, "ARMCI");
    if (!e)
        return 1;
    void **bases = e->bases;
    int rc = ARMCI_Malloc(bases, (armci_size_t)bytes);
    if (rc != 0 || !bases[g_me]) {
        fprintf(stderr, "fft: rank %d: ARMCI_Malloc(%zu): status %d\n", g_me,
                bytes, rc);
        fft_sym_drop(e);
        return 1;
    }
    e->local = bases[g_me];
    *local_p = bases[g_me];
    return 0;
}

/* The paper's Fig. 7, with ARMCI. */
static int a2a_alltoall(const void *snd, void *rcv, size_t blk)
{
    const fft_sym_t *a = fft_sym_find(g_arr, rcv, "alltoall into");
    if (!a)
        return 1;
    if (blk > INT_MAX) {
        fprintf(stderr, "fft: ARMCI_Put of %zu bytes is too large\n", blk);
        return 1;
    }
    char *from = (char *)snd; /* ARMCI_Put takes a non-const source */
    for (int n = 0; n < g_np; n++) {
        if (n == g_me) {
            memcpy((char *)rcv + blk * (size_t)g_me, from + blk * (size_t)n,
                   blk);
            continue;
        }
        char *to = (char *)a->bases[n] + blk * (size_t)g_me;
        int rc = ARMCI_Put(from + blk * (size_t)n, to, (int)blk, n);
        if (rc != 0) {
            fprintf(stderr, "fft: rank %d: ARMCI_Put to %d: status %d\n", g_me,
                    n, rc);
            return 1;
        }
    }
    ARMCI_AllFence();
    ARMCI_Barrier();
    return 0;
}

static int a2a_free(void *local)
{
    fft_sym_t *a = fft_sym_find(g_arr, local, "free of");
    if (!a)
        return 1;
    int rc = ARMCI_Free(local);
    fft_sym_drop(a);
    if (rc != 0) {
        fprintf(stderr, "fft: rank %d: ARMCI_Free: status %d\n", g_me, rc);
        return 1;
    }
    return 0;
}

static int a2a_fini(void)
{
    int rc = ARMCI_Finalize();
    if (rc != 0) {
        fprintf(stderr, "fft: rank %d: ARMCI_Finalize: status %d\n", g_me, rc);
        return 1;
    }
    return 0;
}

const fft_a2a_t fft_a2a_armci = {
    .name = "armci",
    .init = a2a_init,
    .describe = a2a_describe,
    .alloc = a2a_alloc,
    .alltoall = a2a_alltoall,
    .free_array = a2a_free,
    .fini = a2a_fini,
};

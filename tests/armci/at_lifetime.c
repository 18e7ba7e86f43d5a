/* at_lifetime.c - how long ARMCI lives, as Global Arrays' programs use it
 * (argv[1] picks the pattern):
 *   nested    ARMCI_Init twice, an allocation, the inner ARMCI_Finalize,
 *             puts and gets, then the outer one (GA's "simple")
 *   double    ARMCI_Finalize called again after the last one (TCGMSG's
 *             tcg_pend() after GA_Terminate: GA's "ga-mpi")
 *   msg       armci_msg_init, messages, armci_msg_finalize, exit(0)
 *   msg-exit  armci_msg_init, ARMCI_Init_args, a barrier, then only
 *             armci_msg_finalize and exit(0) (GA's "test_groups" below 4
 *             ranks)
 * Under mpirun the msg patterns also check that armci_msg_finalize
 * finalized the MPI that armci_msg_init initialized.  nested and double
 * build against ARMCI-MPI too (-DAT_MPI=1); it has no armci_msg_init. */
#include "at.h"

#if defined(MPI_VERSION)
#define AT_HAVE_MPI_H 1
#else
#define AT_HAVE_MPI_H 0
#endif

/* Each rank puts a pattern into its right neighbour's block and checks
 * its own, then gets the left neighbour's block back. */
static void ring(void **base, size_t bytes, unsigned seed)
{
    int right = (at_me + 1) % at_n, left = (at_me + at_n - 1) % at_n;
    unsigned char *buf = malloc(bytes);
    AT_ASSERT(buf != NULL, "out of memory");
    at_fill(buf, bytes, seed + (unsigned)at_me);
    AT_OK(ARMCI_Put(buf, base[right], (int)bytes, right));
    ARMCI_AllFence();
    ARMCI_Barrier();
    long bad = at_check(base[at_me], bytes, seed + (unsigned)left);
    AT_ASSERT(bad < 0, "put from rank %d: byte %ld", left, bad);
    memset(buf, 0, bytes);
    AT_OK(ARMCI_Get(base[left], buf, (int)bytes, left));
    bad = at_check(buf, bytes, seed + (unsigned)((left + at_n - 1) % at_n));
    AT_ASSERT(bad < 0, "get from rank %d: byte %ld", left, bad);
    free(buf);
    ARMCI_Barrier();
}

static void nested(int *argc, char ***argv)
{
    at_init(argc, argv);
    AT_OK(ARMCI_Init());
    AT_ASSERT(ARMCI_Initialized(), "not initialized after two inits");
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 1 << 16));
    ring(base, 1 << 16, 10);
    /* The inner finalize only counts down. */
    AT_OK(ARMCI_Finalize());
    AT_ASSERT(ARMCI_Initialized(), "the inner ARMCI_Finalize ended ARMCI");
    ring(base, 1 << 16, 20);
    int rank = -1;
    ARMCI_Group world;
    ARMCI_Group_get_world(&world);
    AT_OK(ARMCI_Group_rank(&world, &rank));
    AT_ASSERT(rank == at_me, "world rank %d", rank);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    ARMCI_Barrier();
    if (at_me == 0)
        at_log("PASS lifetime nested (%d ranks)", at_n);
    AT_OK(ARMCI_Finalize());
    AT_ASSERT(!ARMCI_Initialized(), "initialized after the outer finalize");
#if AT_MPI
    MPI_Finalize();
#endif
}

static void twice(int *argc, char ***argv)
{
    at_init(argc, argv);
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 4096));
    ring(base, 4096, 30);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    ARMCI_Barrier();
    if (at_me == 0)
        at_log("PASS lifetime double (%d ranks)", at_n);
    AT_OK(ARMCI_Finalize());
    AT_ASSERT(!ARMCI_Initialized(), "initialized after ARMCI_Finalize");
    AT_OK(ARMCI_Finalize());
    AT_OK(ARMCI_Finalize());
    AT_ASSERT(!ARMCI_Initialized(), "initialized after three finalizes");
#if AT_MPI
    MPI_Finalize();
#endif
}

#if !AT_MPI
/* Did armci_msg_init start MPI (under mpirun)?  Then the last
 * armci_msg_finalize must finalize it. */
static int mpi_started(void)
{
#if AT_HAVE_MPI_H
    int inited = 0;
    MPI_Initialized(&inited);
    return inited;
#else
    return 0;
#endif
}

static void mpi_ended(int started)
{
#if AT_HAVE_MPI_H
    int finalized = 0;
    MPI_Finalized(&finalized);
    AT_ASSERT(!started || finalized,
              "armci_msg_finalize left running the MPI armci_msg_init "
              "started");
#else
    (void)started;
#endif
}

static void msg_only(int *argc, char ***argv, int with_armci)
{
    at_proc_line();
    armci_msg_init(argc, argv);
    int started = mpi_started();
    at_me = armci_msg_me();
    at_n = armci_msg_nproc();
    if (with_armci) {
        AT_OK(ARMCI_Init_args(argc, argv));
        ARMCI_Barrier();
    } else {
        long x = 1;
        armci_msg_lgop(&x, 1, "+");
        AT_ASSERT(x == at_n, "lgop gave %ld", x);
        armci_msg_barrier();
    }
    if (at_me == 0)
        at_log("PASS lifetime %s (%d ranks)", with_armci ? "msg-exit" : "msg",
               at_n);
    armci_msg_finalize();
    /* Ending the messaging layer ends ARMCI over it; a late
     * ARMCI_Finalize is harmless. */
    AT_ASSERT(!ARMCI_Initialized(), "ARMCI still up after armci_msg_finalize");
    AT_OK(ARMCI_Finalize());
    mpi_ended(started);
    exit(0);
}
#endif

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "nested") == 0)
        nested(&argc, &argv);
    else if (strcmp(mode, "double") == 0)
        twice(&argc, &argv);
#if !AT_MPI
    else if (strcmp(mode, "msg") == 0)
        msg_only(&argc, &argv, 0);
    else if (strcmp(mode, "msg-exit") == 0)
        msg_only(&argc, &argv, 1);
#endif
    else {
        fprintf(stderr, "usage: at_lifetime nested|double|msg|msg-exit\n");
        return 2;
    }
    return 0;
}

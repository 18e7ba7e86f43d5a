/* at_order.c - one order of starting and ending ARMCI, its messaging
 * layer and MPI, given on the command line, to run on libarmci and on
 * ARMCI-MPI alike:
 *
 *   at_order START END     e.g.  at_order mi,ai mf      (GA's test_groups
 *                                                         below 4 ranks)
 *   START  comma list of  mi  armci_msg_init
 *                         pi  MPI_Init
 *                         ai  ARMCI_Init_args (must be in the list)
 *   END    comma list of  af  ARMCI_Finalize
 *                         mf  armci_msg_finalize
 *                         pf  MPI_Finalize
 *          or "-" for none; then exit(0).
 *
 * Between START and END every rank allocates ARMCI memory, puts into its
 * right neighbour's block, checks its own, and frees the block.  With
 * AT_RPL (always on ARMCI-MPI, which has neither) the program brings its
 * own armci_msg_init / armci_msg_finalize, as Global Arrays' tests do
 * when the ARMCI library lacks them (armci/testing/rpl_armci_msg_*.c):
 * MPI_Init unless MPI is up, and MPI_Finalize. */
#include <mpi.h>

#include "at.h"

#if AT_MPI && !defined(AT_RPL)
#define AT_RPL 1
#endif

#if AT_RPL
/* ARMCI-MPI's message.h declares neither. */
void armci_msg_init(int *argc, char ***argv);
void armci_msg_finalize(void);

void armci_msg_init(int *argc, char ***argv)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag)
        MPI_Init(argc, argv);
}

void armci_msg_finalize(void)
{
    MPI_Finalize();
}
#endif

static void work(void)
{
    at_me = armci_msg_me();
    at_n = armci_msg_nproc();
    int right = (at_me + 1) % at_n, left = (at_me + at_n - 1) % at_n;
    size_t bytes = 1 << 14;
    void **base = at_ptrs();
    unsigned char *buf = malloc(bytes);
    AT_ASSERT(buf != NULL, "out of memory");
    AT_OK(ARMCI_Malloc(base, (int)bytes));
    at_fill(buf, bytes, 40u + (unsigned)at_me);
    AT_OK(ARMCI_Put(buf, base[right], (int)bytes, right));
    ARMCI_AllFence();
    ARMCI_Barrier();
    long bad = at_check(base[at_me], bytes, 40u + (unsigned)left);
    AT_ASSERT(bad < 0, "put from rank %d: byte %ld", left, bad);
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    free(buf);
}

/* Runs the comma list's steps in order; returns how many there were. */
static int steps(const char *list, int *argc, char ***argv)
{
    char copy[64];
    snprintf(copy, sizeof copy, "%s", list);
    int k = 0;
    for (char *s = strtok(copy, ","); s; s = strtok(NULL, ","), k++) {
        if (strcmp(s, "mi") == 0)
            armci_msg_init(argc, argv);
        else if (strcmp(s, "pi") == 0)
            MPI_Init(argc, argv);
        else if (strcmp(s, "ai") == 0)
            AT_OK(ARMCI_Init_args(argc, argv));
        else if (strcmp(s, "af") == 0)
            AT_OK(ARMCI_Finalize());
        else if (strcmp(s, "mf") == 0)
            armci_msg_finalize();
        else if (strcmp(s, "pf") == 0)
            MPI_Finalize();
        else if (strcmp(s, "-") == 0)
            k--;
        else
            at_fail_at(__FILE__, __LINE__, "usage", "unknown step \"%s\"", s);
    }
    return k;
}

int main(int argc, char **argv)
{
    if (argc != 3 || !strstr(argv[1], "ai")) {
        fprintf(stderr, "usage: at_order mi|pi|ai,... af|mf|pf,...|-\n");
        return 2;
    }
    const char *start = argv[1], *end = argv[2];
    at_proc_line();
    steps(start, &argc, &argv);
    work();
    int me = at_me, n = at_n;
    steps(end, &argc, &argv);
    if (me == 0)
        printf("[at r0] PASS order %s %s (%d ranks)\n", start, end, n);
    fflush(stdout);
    exit(0);
}

/* at_init.c - start-up and topology: ARMCI_Init_args / _Init_thread
 * (argv[1] = "thread"), ARMCI_Initialized, a second (counted) ARMCI_Init,
 * ranks from armci_msg_me / _nproc, the SMP-domain calls, ARMCI_Same_node,
 * ARMCI_Uses_shm, ARMCIX_Progress, and ARMCI_Finalize. */
#include "at.h"

#include <armcix.h>

int main(int argc, char **argv)
{
    at_proc_line();
#if AT_MPI
    MPI_Init(&argc, &argv);
#endif
    AT_ASSERT(!ARMCI_Initialized(), "initialized before ARMCI_Init");
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        /* MPI_THREAD_SINGLE is 0 in Open MPI and Telemem alike. */
        AT_OK(ARMCI_Init_thread(0));
    } else {
        AT_OK(ARMCI_Init_args(&argc, &argv));
    }
    AT_ASSERT(ARMCI_Initialized(), "not initialized after ARMCI_Init");
    AT_OK(ARMCI_Init()); /* a second call is counted */
    at_me = armci_msg_me();
    at_n = armci_msg_nproc();
    AT_ASSERT(at_n >= 1 && at_me >= 0 && at_me < at_n, "rank %d of %d",
              at_me, at_n);
    /* Every rank is counted once. */
    int ranks[2] = {1, at_me};
    armci_msg_igop(ranks, 2, "+");
    AT_ASSERT(ranks[0] == at_n && ranks[1] == at_n * (at_n - 1) / 2,
              "ranks sum %d %d", ranks[0], ranks[1]);
    /* Domains: consistent with each other (each rank its own node in
     * both ARMCI-MPI and Telemem's libarmci). */
    int nd = armci_domain_count(ARMCI_DOMAIN_SMP);
    int my = armci_domain_my_id(ARMCI_DOMAIN_SMP);
    AT_ASSERT(nd >= 1 && nd <= at_n && my >= 0 && my < nd,
              "domain %d of %d", my, nd);
    AT_ASSERT(armci_domain_id(ARMCI_DOMAIN_SMP, at_me) == my,
              "armci_domain_id(me) != armci_domain_my_id");
    int total = 0;
    for (int d = 0; d < nd; d++) {
        int np = armci_domain_nprocs(ARMCI_DOMAIN_SMP, d);
        AT_ASSERT(np >= 1, "domain %d has %d procs", d, np);
        for (int l = 0; l < np; l++) {
            int g = armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, d, l);
            AT_ASSERT(armci_domain_id(ARMCI_DOMAIN_SMP, g) == d,
                      "proc %d listed in domain %d", g, d);
        }
        total += np;
    }
    AT_ASSERT(total == at_n, "domains hold %d procs", total);
    for (int p = 0; p < at_n; p++) {
        int same = armci_domain_id(ARMCI_DOMAIN_SMP, p) == my;
        AT_ASSERT(!!armci_domain_same_id(ARMCI_DOMAIN_SMP, p) == same,
                  "armci_domain_same_id(%d)", p);
        AT_ASSERT(!!ARMCI_Same_node(p) == same, "ARMCI_Same_node(%d)", p);
    }
    AT_ASSERT(ARMCI_Same_node(at_me), "not on my own node");
    /* Uses_shm is 0 when ARMCI memory is not load/store shared. */
    int shm = ARMCI_Uses_shm();
    AT_ASSERT(shm == 0 || shm == 1, "ARMCI_Uses_shm() = %d", shm);
    ARMCI_Set_shm_limit(1UL << 30);
    ARMCIX_Progress();
    ARMCI_Barrier();
    AT_OK(ARMCI_Finalize());
    /* Two inits: the first finalize only counts down (as ARMCI-MPI). */
    AT_ASSERT(ARMCI_Initialized(), "the inner ARMCI_Finalize ended ARMCI");
    AT_OK(ARMCI_Finalize());
    AT_ASSERT(!ARMCI_Initialized(), "initialized after the last finalize");
    if (at_me == 0)
        at_log("PASS init (%d ranks)", at_n);
#if AT_MPI
    MPI_Finalize();
#endif
    return 0;
}

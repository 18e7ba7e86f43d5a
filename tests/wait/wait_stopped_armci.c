/* wait_stopped_armci.c - libarmci's waits give the CPU back: rank 0 waits
 * while the other ranks are stopped (SIGSTOP) for --stop-ms (default 1000)
 * in ARMCI_Barrier, ARMCI_Acc + ARMCI_Fence, armci_notify_wait and
 * ARMCI_Lock, using less than 10% of a core (progress thread included:
 * libarmci starts it by default; TELEMEM_WAIT=spin/yield only report),
 * and each continues correctly after SIGCONT. */
#include <stdbool.h>

#include "at.h"
#include "proc_wait.h"
#include "stop_common.h"

enum { K_BARRIER, K_ACC, K_NOTIFY, K_LOCK, K_COUNT };
static const char *const names[K_COUNT] = {"ARMCI_Barrier",
                                           "ARMCI_Acc + Fence",
                                           "armci_notify_wait", "ARMCI_Lock"};

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    if (at_n < 2) {
        at_log("SKIP: needs 2 ranks or more");
        AT_OK(ARMCI_Finalize());
        return 77;
    }
    long stop_ms = 1000;
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--stop-ms=", 10))
            stop_ms = atol(argv[i] + 10);
    const char *mode = getenv("TELEMEM_WAIT");
    bool check = !mode || !strcmp(mode, "auto") || !strcmp(mode, "block");
    void **bases = at_ptrs();
    AT_OK(ARMCI_Malloc(bases, sizeof(double) + sizeof(int) * (size_t)at_n));
    double *acc = bases[at_me];
    int *pids = (int *)(void *)(acc + 1);
    *acc = 0;
    for (int r = 0; r < at_n; r++)
        pids[r] = 0;
    pids[at_me] = (int)getpid();
    ARMCI_Barrier();
    for (int r = 0; r < at_n; r++)
        AT_OK(ARMCI_Get((int *)(void *)((double *)bases[r] + 1) + r,
                        &pids[r], sizeof(int), r));
    AT_OK(ARMCI_Create_mutexes(1));
    ARMCI_Barrier();
    for (int k = 0; k < K_COUNT; k++) {
        ARMCI_Barrier();
        if (at_me != 0) {
            raise(SIGSTOP);
            if (k == K_BARRIER)
                ARMCI_Barrier();
            if (k == K_NOTIFY && at_me == 1)
                armci_notify(0);
            ARMCI_Barrier();
            continue;
        }
        char err[128];
        for (int r = 1; r < at_n; r++)
            AT_ASSERT(tt_proc_wait_stopped(pids[r], err, sizeof err) == 0,
                      "%s", err);
        sc_resumer_t res = {.pids = pids, .n = at_n,
                            .seconds = (double)stop_ms / 1e3};
        AT_ASSERT(sc_resume_later(&res) == 0, "pthread_create");
        double c0 = sc_cpu_now();
        double one = 1.0, two = 2.0;
        switch (k) {
        case K_BARRIER:
            ARMCI_Barrier();
            break;
        case K_ACC:
            AT_OK(ARMCI_Acc(ARMCI_ACC_DBL, &two, &one, bases[1],
                            sizeof(double), 1));
            ARMCI_Fence(1);
            break;
        case K_NOTIFY:
            armci_notify_wait(1, NULL);
            break;
        case K_LOCK:
            ARMCI_Lock(0, 1);
            ARMCI_Unlock(0, 1);
            break;
        }
        double cpu = sc_cpu_now() - c0;
        sc_resume_join(&res);
        at_log("%-18s CPU %.4f s while the peers were stopped %.1f s",
               names[k], cpu, (double)stop_ms / 1e3);
        if (check)
            AT_ASSERT(cpu < 0.1 * (double)stop_ms / 1e3,
                      "%s: CPU %.3f s (more than 10%%)", names[k], cpu);
        ARMCI_Barrier();
    }
    if (at_me == 1)
        AT_ASSERT(*acc == 2.0, "accumulate: %g", *acc);
    AT_OK(ARMCI_Destroy_mutexes());
    AT_OK(ARMCI_Free(acc));
    free(bases);
    at_finish("wait_stopped_armci");
    return 0;
}

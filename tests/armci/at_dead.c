/* at_dead.c - libarmci's own waits end when the rank they wait for dies:
 * rank 1 SIGKILLs itself while rank 0 waits in armci_notify_wait
 * ("notify"), in ARMCI_Lock for a mutex rank 1 holds ("lock"), in
 * ARMCIX_Lock_hdl likewise ("lock-hdl") or in armci_msg_rcv ("recv").
 * Run with telemem-run --keep-going so that only rank 0's own detection
 * ends it: rank 0 must print "[armci r0] CALL: rank 1 died ..." and exit;
 * meson checks the message and that the job ended (no launcher timeout).
 * "timeout": rank 1 stays alive but never notifies, and TELEMEM_TIMEOUT
 * ends rank 0's armci_notify_wait. */
#include <signal.h>
#include <unistd.h>

#include "at.h"

#include <armcix.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    at_init(&argc, &argv);
    if (at_n != 2) {
        at_log("needs 2 ranks");
        return 77;
    }
    AT_OK(ARMCI_Create_mutexes(1));
    ARMCI_Group w;
    ARMCI_Group_get_world(&w);
    armcix_mutex_hdl_t h = ARMCIX_Create_mutexes_hdl(1, &w);
    /* rank 1 takes the mutex (of rank 0) before the barrier */
    if (at_me == 1 && strcmp(mode, "lock") == 0)
        ARMCI_Lock(0, 0);
    if (at_me == 1 && strcmp(mode, "lock-hdl") == 0)
        ARMCIX_Lock_hdl(h, 0, 0);
    ARMCI_Barrier();
    if (at_me == 1 && strcmp(mode, "timeout") == 0) {
        sleep(60); /* the launcher ends it when rank 0 fails */
        return 0;
    }
    if (at_me == 1) {
        at_log("rank 1: SIGKILL to myself (%s)", mode);
        raise(SIGKILL);
    }
    int v = 0, len = 0;
    if (strcmp(mode, "notify") == 0 || strcmp(mode, "timeout") == 0)
        armci_notify_wait(1, &v);
    else if (strcmp(mode, "lock") == 0)
        ARMCI_Lock(0, 0);
    else if (strcmp(mode, "lock-hdl") == 0)
        ARMCIX_Lock_hdl(h, 0, 0);
    else if (strcmp(mode, "recv") == 0)
        armci_msg_rcv(5, &v, sizeof v, &len, 1);
    else
        at_log("unknown mode \"%s\"", mode);
    /* not reached: the wait above must fail */
    at_log("FAIL: %s returned although rank 1 is dead", mode);
    return 3;
}

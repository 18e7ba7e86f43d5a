/* at_errors.c - ARMCI's error convention in libarmci: a bad argument or a
 * failed operation prints "[armci rR] CALL: what, with the value" and ends
 * the job.  argv[1] picks the mistake; every rank makes it; meson checks
 * the exit status and the message. */
#include "at.h"

#include <armcix.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    char buf[64] = {0};
    at_proc_line();
    if (strcmp(mode, "before-init") == 0)
        ARMCI_Put(buf, buf, 8, 0);
    AT_OK(ARMCI_Init());
    at_me = armci_msg_me();
    at_n = armci_msg_nproc();
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 4096));
    int to = (at_me + 1) % at_n;
    int cnt[10] = {8, 1, 1, 1, 1, 1, 1, 1, 1, 1}, st[9] = {8};
    if (strcmp(mode, "put-proc") == 0)
        ARMCI_Put(buf, base[to], 8, at_n + 5);
    else if (strcmp(mode, "get-size") == 0)
        ARMCI_Get(base[to], buf, -1, to);
    else if (strcmp(mode, "acc-type") == 0)
        ARMCI_Acc(99, buf, buf, base[to], 8, to);
    else if (strcmp(mode, "acc-size") == 0) {
        double s = 1;
        ARMCI_Acc(ARMCI_ACC_DBL, &s, buf, base[to], 12, to);
    } else if (strcmp(mode, "strided-levels") == 0)
        ARMCI_PutS(buf, st, base[to], st, cnt, 9, to);
    else if (strcmp(mode, "strided-count") == 0) {
        cnt[1] = -3;
        ARMCI_GetS(base[to], st, buf, st, cnt, 1, to);
    } else if (strcmp(mode, "rmw-op") == 0)
        ARMCI_Rmw(42, buf, base[to], 1, to);
    else if (strcmp(mode, "gop-op") == 0) {
        int x = 1;
        armci_msg_igop(&x, 1, "xor");
    } else if (strcmp(mode, "error") == 0)
        ARMCI_Error("custom failure", 5);
    else if (strcmp(mode, "out-of-region") == 0) {
        /* A stack address is not ARMCI memory at the target. */
        ARMCI_Put(buf, buf + 8, 8, to);
        ARMCI_Fence(to);
    } else if (strcmp(mode, "free-world") == 0) {
        ARMCI_Group w;
        ARMCI_Group_get_world(&w);
        ARMCI_Group_free(&w);
    } else if (strcmp(mode, "lock-twice") == 0) {
        ARMCI_Group w;
        ARMCI_Group_get_world(&w);
        armcix_mutex_hdl_t h = ARMCIX_Create_mutexes_hdl(1, &w);
        ARMCIX_Lock_hdl(h, 0, at_me);
        ARMCIX_Lock_hdl(h, 0, at_me);
    } else if (strcmp(mode, "free-bad") == 0) {
        ARMCI_Free(buf);
    } else if (strcmp(mode, "reinit") == 0) {
        AT_OK(ARMCI_Free(base[at_me]));
        AT_OK(ARMCI_Finalize());
        ARMCI_Init();
    } else if (strcmp(mode, "ok") != 0)
        at_fail_at(__FILE__, __LINE__, "mode", "unknown mode \"%s\"", mode);
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    at_finish("errors (no error made)");
    return 0;
}

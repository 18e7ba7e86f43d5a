/* at_profile.c - the PARMCI profiling interface: this program defines its
 * own ARMCI_Put and ARMCI_Barrier that count calls and forward to
 * PARMCI_Put / PARMCI_Barrier.  Linked with the static libarmci, the link
 * succeeds only because libarmci's ARMCI_* are weak; the counts prove the
 * program's wrappers run, also when ARMCI_Put_flag is not wrapped. */
#include "at.h"

static int puts_seen, barriers_seen;

int ARMCI_Put(void *src, void *dst, int size, int target)
{
    puts_seen++;
    return PARMCI_Put(src, dst, size, target);
}

void ARMCI_Barrier(void)
{
    barriers_seen++;
    PARMCI_Barrier();
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 64));
    int v = 7 + at_me, to = (at_me + 1) % at_n;
    AT_OK(ARMCI_Put(&v, base[to], sizeof v, to));
    ARMCI_Barrier();
    AT_ASSERT(*(int *)base[at_me] == 7 + (at_me + at_n - 1) % at_n,
              "value %d", *(int *)base[at_me]);
    AT_ASSERT(puts_seen == 1 && barriers_seen == 1,
              "wrappers saw %d puts, %d barriers", puts_seen, barriers_seen);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    at_finish("profile");
    return 0;
}

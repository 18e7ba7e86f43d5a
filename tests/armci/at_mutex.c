/* at_mutex.c - mutexes: ARMCI_Create_mutexes with different counts per
 * rank protecting a non-atomic read-modify-write (get, add, put), and
 * ARMCIX mutex handles over the world and over a subgroup, with trylock. */
#include "at.h"

#include <armcix.h>

#define ROUNDS 40

/* Get, increment, put under the lock: exact only if mutual exclusion. */
static void bump(void *counter, int owner)
{
    long v = 0;
    AT_OK(ARMCI_Get(counter, &v, sizeof v, owner));
    v++;
    AT_OK(ARMCI_Put(&v, counter, sizeof v, owner));
}

static void test_armci_mutexes(void **base)
{
    /* Rank r owns r + 1 mutexes; mutex r of rank n-1 guards counter r. */
    AT_OK(ARMCI_Create_mutexes(at_me + 1));
    int owner = at_n - 1;
    for (int i = 0; i < ROUNDS; i++) {
        int m = i % at_n;
        ARMCI_Lock(m, owner);
        bump((long *)base[owner] + m, owner);
        ARMCI_Unlock(m, owner);
    }
    ARMCI_Barrier();
    long total = 0;
    for (int m = 0; m < at_n; m++)
        total += ARMCI_GetValueLong((long *)base[owner] + m, owner);
    AT_ASSERT(total == (long)ROUNDS * at_n, "counters sum to %ld, "
                                            "expected %ld",
              total, (long)ROUNDS * at_n);
    ARMCI_Barrier();
    AT_OK(ARMCI_Destroy_mutexes());
    /* A second set after the first. */
    AT_OK(ARMCI_Create_mutexes(1));
    ARMCI_Lock(0, 0);
    ARMCI_Unlock(0, 0);
    ARMCI_Barrier();
    AT_OK(ARMCI_Destroy_mutexes());
}

static void test_hdl(void **base, ARMCI_Group *grp, int slot)
{
    int grank = -1, gsize = 0;
    ARMCI_Group_rank(grp, &grank);
    ARMCI_Group_size(grp, &gsize);
    armcix_mutex_hdl_t h = ARMCIX_Create_mutexes_hdl(2, grp);
    AT_ASSERT(h != NULL, "ARMCIX_Create_mutexes_hdl returned NULL");
    /* Mutexes live on the group's last member (absolute id). */
    int owner = ARMCI_Absolute_id(grp, gsize - 1);
    long *ctr = (long *)base[owner] + 8 + slot;
    for (int i = 0; i < ROUNDS; i++) {
        if (i % 3 == 0) {
            while (ARMCIX_Trylock_hdl(h, 1, owner) != 0)
                ARMCIX_Progress();
            bump(ctr, owner);
            ARMCIX_Unlock_hdl(h, 1, owner);
        } else {
            ARMCIX_Lock_hdl(h, 1, owner);
            bump(ctr, owner);
            ARMCIX_Unlock_hdl(h, 1, owner);
        }
    }
    armci_msg_group_barrier(grp);
    long v = ARMCI_GetValueLong(ctr, owner);
    AT_ASSERT(v == (long)ROUNDS * gsize, "group counter %ld, expected %ld",
              v, (long)ROUNDS * gsize);
    (void)grank;
    AT_OK(ARMCIX_Destroy_mutexes_hdl(h));
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 32 * sizeof(long)));
    memset(base[at_me], 0, 32 * sizeof(long));
    ARMCI_Barrier();
    test_armci_mutexes(base);
    ARMCI_Group world;
    ARMCI_Group_get_world(&world);
    test_hdl(base, &world, 0);
    /* The even ranks. */
    int *evens = malloc((size_t)at_n * sizeof(int)), ne = 0;
    for (int r = 0; r < at_n; r += 2)
        evens[ne++] = r;
    /* Zeroed: ARMCI-MPI 0.3.1 leaves a non-member's group fields unset
     * and ARMCI_Group_free then frees them (as in at_group.c). */
    ARMCI_Group g;
    memset(&g, 0, sizeof g);
    ARMCI_Group_create(ne, evens, &g);
    /* (Not on a one-rank group: ARMCI-MPI 0.3.1 then fails in
     * MPI_Win_create.) */
    if (at_me % 2 == 0 && ne > 1)
        test_hdl(base, &g, 1);
    ARMCI_Barrier();
    ARMCI_Group_free(&g);
    free(evens);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    at_finish("mutex");
    return 0;
}

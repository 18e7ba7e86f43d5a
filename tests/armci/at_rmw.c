/* at_rmw.c - ARMCI_Rmw: fetch-and-add and swap of int and long on every
 * rank's memory, a contended shared counter on rank 0 (every fetched value
 * distinct, the final value exact), and Rmw mixed with ARMCI_Acc on the
 * same location (atomic with respect to each other). */
#include "at.h"

#define ROUNDS 300

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 64));
    memset(base[at_me], 0, 64);
    ARMCI_Barrier();

    /* Shared counter (int) on rank 0: each fetch is unique. */
    int *got = malloc(ROUNDS * sizeof(int));
    for (int i = 0; i < ROUNDS; i++) {
        AT_OK(ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &got[i], base[0], 1, 0));
        AT_ASSERT(got[i] >= 0 && got[i] < ROUNDS * at_n, "fetched %d",
                  got[i]);
    }
    ARMCI_Barrier();
    AT_ASSERT(ARMCI_GetValueInt(base[0], 0) == ROUNDS * at_n,
              "counter = %d, expected %d", ARMCI_GetValueInt(base[0], 0),
              ROUNDS * at_n);
    int *all = calloc((size_t)ROUNDS * at_n, sizeof(int));
    memcpy(all + at_me * ROUNDS, got, ROUNDS * sizeof(int));
    armci_msg_igop(all, ROUNDS * at_n, "+"); /* others' slots are 0 */
    qsort(all, (size_t)ROUNDS * at_n, sizeof(int), cmp_int);
    for (int i = 0; i < ROUNDS * at_n; i++)
        AT_ASSERT(all[i] == i, "fetched values not a permutation at %d", i);
    free(all);
    free(got);

    /* Long fetch-and-add on the next rank, with negative increments. */
    int to = (at_me + 1) % at_n;
    long *lc = (long *)((char *)base[to] + 8);
    long lold = 0;
    AT_OK(ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &lold, lc, -5, to));
    AT_OK(ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &lold, lc, 3, to));
    AT_ASSERT(lold == -5, "long fetch-and-add returned %ld", lold);
    ARMCI_Barrier();
    AT_ASSERT(*(long *)((char *)base[at_me] + 8) == -2, "long counter %ld",
              *(long *)((char *)base[at_me] + 8));

    /* Swap: int at +16, long at +24 on the next rank. */
    ARMCI_Barrier();
    int iv = 1000 + at_me;
    AT_OK(ARMCI_Rmw(ARMCI_SWAP, &iv, (char *)base[to] + 16, 0, to));
    AT_ASSERT(iv == 0, "swap returned %d", iv);
    long lv = (1L << 35) + at_me;
    AT_OK(ARMCI_Rmw(ARMCI_SWAP_LONG, &lv, (char *)base[to] + 24, 0, to));
    AT_ASSERT(lv == 0, "swap long returned %ld", lv);
    ARMCI_Barrier();
    int from = (at_me + at_n - 1) % at_n;
    AT_ASSERT(*(int *)((char *)base[at_me] + 16) == 1000 + from,
              "swapped int %d", *(int *)((char *)base[at_me] + 16));
    AT_ASSERT(*(long *)((char *)base[at_me] + 24) == (1L << 35) + from,
              "swapped long");
    ARMCI_Barrier();

    /* Rmw and Acc on the same long of rank 0, from every rank. */
    long *mix = (long *)((char *)base[0] + 32);
    long one = 1, sink;
    for (int i = 0; i < ROUNDS; i++) {
        if (i % 2)
            AT_OK(ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &sink, mix, 2, 0));
        else
            AT_OK(ARMCI_Acc(ARMCI_ACC_LNG, &one, &one, mix, sizeof(long), 0));
    }
    ARMCI_Barrier();
    long want = (long)at_n * (ROUNDS / 2) * 3;
    AT_ASSERT(ARMCI_GetValueLong(mix, 0) == want, "mixed counter %ld, "
                                                  "expected %ld",
              ARMCI_GetValueLong(mix, 0), want);
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    at_finish("rmw");
    return 0;
}

/* at_group_disjoint.c - ARMCI_Group_create_child called collectively with
 * a different list on each rank (Global Arrays' read-only arrays make one
 * group per node this way): every list is its own group, ordered as the
 * list, with its own ARMCI_Malloc_group memory that the members read with
 * ARMCI_Get (GA's pattern); ranks not in their own list are in no group. */
#include "at.h"

/* The group of this rank's list: check rank, size, ids, a group
 * collective, and an allocation every member reads from every other. */
static void check_group(ARMCI_Group *g, const int *list, int size,
                        const char *what)
{
    int rank = -7, gs = -7;
    AT_OK(ARMCI_Group_rank(g, &rank));
    ARMCI_Group_size(g, &gs);
    AT_ASSERT(gs == size, "%s: group size %d, expected %d (lists merged?)",
              what, gs, size);
    AT_ASSERT(rank >= 0 && rank < size && list[rank] == at_me,
              "%s: group rank %d", what, rank);
    for (int i = 0; i < size; i++)
        AT_ASSERT(ARMCI_Absolute_id(g, i) == list[i],
                  "%s: ARMCI_Absolute_id(%d) = %d, expected %d", what, i,
                  ARMCI_Absolute_id(g, i), list[i]);
    long sum = at_me, want = 0;
    for (int i = 0; i < size; i++)
        want += list[i];
    armci_msg_group_lgop(&sum, 1, "+", g);
    AT_ASSERT(sum == want, "%s: group lgop sum %ld, expected %ld", what, sum,
              want);

    /* GA's read-only copy: each member fills its part, all read all. */
    enum { BYTES = 4096 };
    void **ptr = calloc((size_t)size, sizeof *ptr);
    AT_ASSERT(ptr != NULL, "out of memory");
    AT_OK(ARMCI_Malloc_group(ptr, BYTES, g));
    at_fill(ptr[rank], BYTES, 1000u + (unsigned)at_me);
    armci_msg_group_barrier(g);
    unsigned char *buf = malloc(BYTES);
    AT_ASSERT(buf != NULL, "out of memory");
    for (int i = 0; i < size; i++) {
        memset(buf, 0, BYTES);
        AT_OK(ARMCI_Get(ptr[i], buf, BYTES, ARMCI_Absolute_id(g, i)));
        long bad = at_check(buf, BYTES, 1000u + (unsigned)list[i]);
        AT_ASSERT(bad < 0, "%s: get from group rank %d (proc %d): byte %ld",
                  what, i, list[i], bad);
    }
    free(buf);
    armci_msg_group_barrier(g);
    AT_OK(ARMCI_Free_group(ptr[rank], g));
    free(ptr);
}

static void not_member(ARMCI_Group *g, const char *what)
{
    int r = 5, s = -7;
    AT_ASSERT(ARMCI_Group_rank(g, &r) != 0 && r < 0,
              "%s: not in my list, yet group rank %d", what, r);
    ARMCI_Group_size(g, &s);
    AT_ASSERT(s == 0, "%s: not a member, yet size %d", what, s);
}

/* Collective: this rank passes list[0..size); member if it is in it. */
static void round_trip(int size, int *list, const char *what)
{
    ARMCI_Group world, g;
    /* ARMCI-MPI 0.3.1 leaves a non-member's translation tables unset and
     * ARMCI_Group_free then frees them: start from zeros. */
    memset(&g, 0, sizeof g);
    ARMCI_Group_get_world(&world);
    ARMCI_Group_create_child(size, list, &g, &world);
    int member = 0;
    for (int i = 0; i < size; i++)
        member |= list[i] == at_me;
    if (member)
        check_group(&g, list, size, what);
    else
        not_member(&g, what);
    ARMCI_Group_free(&g);
    ARMCI_Barrier();
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    int n = at_n, h = (n + 1) / 2;
    int *list = malloc((size_t)n * sizeof(int));
    AT_ASSERT(list != NULL, "out of memory");

    /* Each rank alone: n groups of one. */
    list[0] = at_me;
    round_trip(1, list, "{me}");

    /* Two halves [0, h) and [h, n), each rank passing its own half. */
    int lo = at_me < h ? 0 : h, hi = at_me < h ? h : n, k = 0;
    for (int i = lo; i < hi; i++)
        list[k++] = i;
    round_trip(k, list, "halves");

    /* The same halves listed backwards: group rank i is list[i]. */
    k = 0;
    for (int i = hi - 1; i >= lo; i--)
        list[k++] = i;
    round_trip(k, list, "halves, reversed");

    /* Pairs {0,1}, {2,3}, ... ({n-1} alone when n is odd). */
    k = 0;
    for (int i = at_me - at_me % 2; i < n && i < at_me - at_me % 2 + 2; i++)
        list[k++] = i;
    round_trip(k, list, "pairs");

    /* Ranks of the second half pass the first half's list: one group,
     * the second half in none. */
    k = 0;
    for (int i = 0; i < h; i++)
        list[k++] = i;
    round_trip(k, list, "first half only");

    free(list);
    at_finish("group-disjoint");
    return 0;
}

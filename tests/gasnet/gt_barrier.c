/* gt_barrier.c - GASNet barriers: named and anonymous split-phase and
 * blocking barriers, wait and try, mixed named/anonymous notifies, the
 * result query, and every deliberate mismatch (MISMATCH flag on one node,
 * differing names, a wait name differing from the notify name). */
#include "gt.h"

#define ANON GASNET_BARRIERFLAG_ANONYMOUS
#define MISM GASNET_BARRIERFLAG_MISMATCH

static int use_try;

static int bwait(int id, int flags)
{
    if (!use_try)
        return gasnet_barrier_wait(id, flags);
    int rc;
    while ((rc = gasnet_barrier_try(id, flags)) == GASNET_ERR_NOT_READY)
        ;
    return rc;
}

static int split(int nid, int nflags, int wid, int wflags)
{
    gasnet_barrier_notify(nid, nflags);
    return bwait(wid, wflags);
}

static void expect_named(int want, const char *what)
{
    int id = -1;
    GT_ASSERT(gasnet_barrier_result(&id) == 0 && id == want,
              "%s: barrier_result gave %d, expected named %d", what, id,
              want);
}

static void expect_anon(const char *what)
{
    int id;
    GT_ASSERT(gasnet_barrier_result(&id) != 0, "%s: expected anonymous",
              what);
}

static void round_of_tests(int iter)
{
    int me = gt_me;
    /* All named, all anonymous. */
    GT_SAFE(split(iter, 0, iter, 0));
    expect_named(iter, "all named");
    GT_SAFE(gasnet_barrier(iter + 1, 0));
    expect_named(iter + 1, "blocking named");
    GT_SAFE(split(iter ^ me, ANON, iter ^ me, ANON));
    expect_anon("all anonymous");
    GT_SAFE(gasnet_barrier(me, ANON));
    expect_anon("blocking anonymous");
    /* Flags may differ between notify and wait. */
    GT_SAFE(split(0, ANON, 0, 0));
    expect_anon("anonymous notify, named wait");
    GT_SAFE(split(5, 0, 0, ANON));
    expect_named(5, "named notify, anonymous wait");
    /* Named value differing between notify and wait (all nodes). */
    GT_EXPECT(split(0, 0, 1, 0), GASNET_ERR_BARRIER_MISMATCH);
    /* Every node signals a mismatch. */
    GT_EXPECT(split(0, MISM, 0, MISM), GASNET_ERR_BARRIER_MISMATCH);
    GT_EXPECT(gasnet_barrier(0, MISM), GASNET_ERR_BARRIER_MISMATCH);

    for (int j = 0; j < gt_n && gt_n > 1; j++) {
        /* One anonymous among named ones. */
        if (me == j)
            GT_SAFE(split(12345, ANON, 12345, ANON));
        else
            GT_SAFE(split(5551212, 0, 5551212, 0));
        expect_named(5551212, "one anonymous");
        /* One named among anonymous ones. */
        int rc = me == j ? gasnet_barrier((int)0xcafef00d, 0)
                         : gasnet_barrier(911, ANON);
        GT_SAFE(rc);
        expect_named((int)0xcafef00d, "one named");
        /* Anonymous notify, mis-named wait on node j. */
        if (me == j)
            GT_EXPECT(split(12345, ANON, 12345, 0),
                      GASNET_ERR_BARRIER_MISMATCH);
        else
            (void)split(5551212, 0, 5551212, 0);
        /* Node j names a different value. */
        GT_EXPECT(split(me == j, 0, me == j, 0), GASNET_ERR_BARRIER_MISMATCH);
        GT_EXPECT(gasnet_barrier(me == j, 0), GASNET_ERR_BARRIER_MISMATCH);
        /* Node j signals a mismatch. */
        GT_EXPECT(split(0, j == me ? MISM : 0, 0, j == me ? MISM : 0),
                  GASNET_ERR_BARRIER_MISMATCH);
        GT_EXPECT(gasnet_barrier(0, j == me ? MISM : 0),
                  GASNET_ERR_BARRIER_MISMATCH);
    }
    /* Two different names among anonymous ones. */
    if (gt_n > 2) {
        int rc;
        if (me == 0)
            rc = split(1592, 0, 1592, 0);
        else if (me == 1)
            rc = split(1776, 0, 1776, 0);
        else
            rc = split(7, ANON, 7, ANON);
        GT_EXPECT(rc, GASNET_ERR_BARRIER_MISMATCH);
    }
}

int main(int argc, char **argv)
{
    gt_start(&argc, &argv, "gt_barrier", NULL, 0, 0);
    for (int iter = 0; iter < 20; iter++) {
        use_try = iter % 2;
        round_of_tests(iter * 2);
    }
    /* try before every node has notified is NOT_READY and changes
     * nothing: node 0 waits for a sign from the last node, which notifies
     * only after node 0 saw NOT_READY at least once (skipped on 1 node). */
    if (gt_n > 1) {
        if (gt_me == 0) {
            gasnet_barrier_notify(42, 0);
            int rc = gasnet_barrier_try(42, 0);
            int tries = 1;
            while (rc == GASNET_ERR_NOT_READY) {
                rc = gasnet_barrier_try(42, 0);
                tries++;
            }
            GT_SAFE(rc);
            gt_log("barrier_try returned GASNET_OK after %d tries", tries);
        } else {
            /* Let node 0 spin on try for a moment first. */
            double t0 = gt_now();
            while (gt_now() - t0 < 0.05)
                GT_SAFE(gasnet_AMPoll());
            GT_SAFE(split(42, 0, 42, 0));
        }
    }
    double t0 = gt_now();
    for (int i = 0; i < 1000; i++)
        GT_SAFE(gasnet_barrier(i, 0));
    if (gt_me == 0)
        gt_log("1000 named barriers: %.2f us each",
               (gt_now() - t0) * 1e6 / 1000);
    gt_finish("gt_barrier");
    return 0;
}

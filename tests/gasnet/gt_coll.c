/* gt_coll.c - the GASNet-1 collectives extension: gasnet_coll_init,
 * broadcast (blocking and _nb, every root, sizes from 0 to 1 MiB, every
 * synchronisation mode, src == dst on the root), scatter, gather,
 * gather_all, exchange, the sync calls and the team barrier. */
#include <gasnet_coll.h>

#include "gt.h"

static const int modes[] = {
    GASNET_COLL_IN_NOSYNC | GASNET_COLL_OUT_NOSYNC,
    GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC,
    GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC,
    GASNET_COLL_IN_NOSYNC | GASNET_COLL_OUT_ALLSYNC,
};

int main(int argc, char **argv)
{
    gt_start(&argc, &argv, "gt_coll", NULL, 0, GASNET_PAGESIZE);
    gasnet_coll_init(NULL, 0, NULL, 0, 0);
    GT_ASSERT(gasnet_coll_team_size(GASNET_TEAM_ALL) == (gasnet_node_t)gt_n,
              "team size");
    GT_ASSERT(gasnet_coll_team_rank2node(GASNET_TEAM_ALL, gt_me) ==
              (gasnet_node_t)gt_me, "rank2node");
    const size_t sizes[] = {0, 1, 7, 4096, 16385, 100000, 1048576};
    size_t maxsz = 1048576;
    uint8_t *src = malloc(maxsz * (size_t)gt_n + 64);
    uint8_t *dst = malloc(maxsz * (size_t)gt_n + 64);
    GT_ASSERT(src && dst, "malloc");

    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        for (int root = 0; root < gt_n; root++) {
            int mode = modes[(s + (size_t)root) % 4] |
                       (root % 2 ? GASNET_COLL_LOCAL : GASNET_COLL_SINGLE);
            uint64_t key = gt_key(0xb, (uint64_t)root, n, 1);
            memset(dst, 0, n);
            gt_pat_fill(src, n, key);
            if (s % 2) {
                gasnet_coll_broadcast(GASNET_TEAM_ALL, dst,
                                      (gasnet_image_t)root, src, n, mode);
            } else {
                gasnet_coll_handle_t h = gasnet_coll_broadcast_nb(
                    GASNET_TEAM_ALL, dst, (gasnet_image_t)root, src, n, mode);
                while (gasnet_coll_try_sync(h) != GASNET_OK)
                    ;
                gasnet_coll_wait_sync(h);
            }
            if (gt_pat_check(dst, n, key, "broadcast") != 0)
                GT_FAIL("broadcast of %zu bytes from %d", n, root);
            /* In place on the root. */
            if (gt_me == root)
                gt_pat_fill(dst, n, key ^ 1);
            gasnet_coll_broadcast(GASNET_TEAM_ALL, dst, (gasnet_image_t)root,
                                  dst, n, mode);
            if (gt_pat_check(dst, n, key ^ 1, "in-place broadcast") != 0)
                GT_FAIL("in-place broadcast of %zu bytes from %d", n, root);
        }
        if (n > 100000)
            continue;
        int mode = modes[s % 4] | GASNET_COLL_SINGLE;
        /* scatter from node 0: block i to node i */
        for (int i = 0; i < gt_n; i++)
            gt_pat_fill(src + (size_t)i * n, n, gt_key(0xc, (uint64_t)i, n, 2));
        gasnet_coll_scatter(GASNET_TEAM_ALL, dst, 0, src, n, mode);
        if (gt_pat_check(dst, n, gt_key(0xc, (uint64_t)gt_me, n, 2),
                         "scatter") != 0)
            GT_FAIL("scatter of %zu bytes", n);
        /* gather to the last node and gather_all */
        gt_pat_fill(src, n, gt_key(0xd, (uint64_t)gt_me, n, 3));
        gasnet_coll_gather(GASNET_TEAM_ALL, (gasnet_image_t)(gt_n - 1), dst,
                           src, n, mode);
        if (gt_me == gt_n - 1)
            for (int i = 0; i < gt_n; i++)
                if (gt_pat_check(dst + (size_t)i * n, n,
                                 gt_key(0xd, (uint64_t)i, n, 3), "gather"))
                    GT_FAIL("gather of %zu bytes, block %d", n, i);
        memset(dst, 0, n * (size_t)gt_n);
        gasnet_coll_handle_t hs[2];
        hs[0] = gasnet_coll_gather_all_nb(GASNET_TEAM_ALL, dst, src, n, mode);
        hs[1] = GASNET_COLL_INVALID_HANDLE;
        gasnet_coll_wait_sync_all(hs, 2);
        for (int i = 0; i < gt_n; i++)
            if (gt_pat_check(dst + (size_t)i * n, n,
                             gt_key(0xd, (uint64_t)i, n, 3), "gather_all"))
                GT_FAIL("gather_all of %zu bytes, block %d", n, i);
        /* exchange: block j of node i goes to block i of node j */
        for (int j = 0; j < gt_n; j++)
            gt_pat_fill(src + (size_t)j * n, n,
                        gt_key(0xe, (uint64_t)gt_me, (uint64_t)j, n));
        hs[0] = gasnet_coll_exchange_nb(GASNET_TEAM_ALL, dst, src, n, mode);
        GT_SAFE(gasnet_coll_try_sync_some(hs, 1));
        gasnet_coll_wait_sync_some(hs, 1);
        for (int i = 0; i < gt_n; i++)
            if (gt_pat_check(dst + (size_t)i * n, n,
                             gt_key(0xe, (uint64_t)i, (uint64_t)gt_me, n),
                             "exchange"))
                GT_FAIL("exchange of %zu bytes, block %d", n, i);
    }
    gasnet_coll_barrier_notify(GASNET_TEAM_ALL, 3, 0);
    GT_SAFE(gasnet_coll_barrier_wait(GASNET_TEAM_ALL, 3, 0));
    free(src);
    free(dst);
    gt_finish("gt_coll");
    return 0;
}

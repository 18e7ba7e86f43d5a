/* gt_collm.c - the GASNet-1 collectives beyond gt_coll.c: the M
 * (multi-address) forms in SINGLE and LOCAL mode, their _nb forms,
 * reductions (registered functions, every root, sum/max with an argument,
 * M and _nb), inclusive and exclusive scans, team_split into row and column teams with collectives and
 * named barriers (and a mismatch) on them, and gasnet_coll_barrier. */
#include <gasnet_coll.h>

#include "gt.h"

static void reduce_fn(void *res, size_t rc, const void *left, size_t lc,
                      const void *right, size_t esz, int flags, int arg)
{
    (void)flags;
    int64_t *r = res;
    const int64_t *a = left, *b = right;
    GT_ASSERT(rc == lc && esz == sizeof(int64_t), "reduce arguments");
    for (size_t i = 0; i < rc; i++)
        r[i] = arg == 0 ? a[i] + b[i] : (a[i] > b[i] ? a[i] : b[i]);
}

static int64_t val(int rank, size_t i)
{
    return (int64_t)(gt_mix((uint64_t)rank * 1000 + i) % 100000);
}

#define NE 257

int main(int argc, char **argv)
{
    gt_start(&argc, &argv, "gt_collm", NULL, 0, GASNET_PAGESIZE);
    gasnet_coll_fn_entry_t fns[1] = {{reduce_fn, 0}};
    gasnet_coll_init(NULL, 0, fns, 1, 0);
    int n = gt_n;
    int64_t *src = malloc(sizeof(int64_t) * NE * (size_t)n);
    int64_t *dst = malloc(sizeof(int64_t) * NE * (size_t)n);
    void **dl = malloc(sizeof(void *) * (size_t)n);
    void **sl = malloc(sizeof(void *) * (size_t)n);
    GT_ASSERT(src && dst && dl && sl, "malloc");
    size_t blk = sizeof(int64_t) * NE;
    for (int mode = 0; mode < 4; mode++) {
        int flags = (mode & 1 ? GASNET_COLL_SINGLE : GASNET_COLL_LOCAL) |
                    (mode & 2 ? GASNET_COLL_IN_ALLSYNC |
                                    GASNET_COLL_OUT_ALLSYNC
                              : GASNET_COLL_IN_MYSYNC |
                                    GASNET_COLL_OUT_MYSYNC);
        /* LOCAL: one address (ours); SINGLE: every image's, ours used. */
        for (int i = 0; i < n; i++) {
            dl[i] = (mode & 1) && i != gt_me ? NULL : dst;
            sl[i] = (mode & 1) && i != gt_me ? NULL : src;
        }
        if (!(mode & 1)) {
            dl[0] = dst;
            sl[0] = src;
        }
        for (int root = 0; root < n; root++) {
            for (size_t i = 0; i < NE * (size_t)n; i++)
                src[i] = val(gt_me, i);
            memset(dst, 0, blk * (size_t)n);
            gasnet_coll_broadcastM(GASNET_TEAM_ALL, dl, (gasnet_image_t)root,
                                   src, blk, flags);
            for (size_t i = 0; i < NE; i++)
                GT_ASSERT(dst[i] == val(root, i), "broadcastM");
            gasnet_coll_handle_t h = gasnet_coll_scatterM_nb(
                GASNET_TEAM_ALL, dl, (gasnet_image_t)root, src, blk, flags);
            gasnet_coll_wait_sync(h);
            for (size_t i = 0; i < NE; i++)
                GT_ASSERT(dst[i] == val(root, (size_t)gt_me * NE + i),
                          "scatterM_nb");
            memset(dst, 0, blk * (size_t)n);
            gasnet_coll_gatherM(GASNET_TEAM_ALL, (gasnet_image_t)root, dst,
                                sl, blk, flags);
            if (gt_me == root)
                for (int r = 0; r < n; r++)
                    for (size_t i = 0; i < NE; i++)
                        GT_ASSERT(dst[(size_t)r * NE + i] == val(r, i),
                                  "gatherM");
            int64_t red[NE];
            for (int arg = 0; arg < 2; arg++) {
                memset(red, 0, sizeof red);
                if (arg)
                    gasnet_coll_reduceM(GASNET_TEAM_ALL, (gasnet_image_t)root,
                                        red, sl, 0, 0, sizeof(int64_t), NE,
                                        0, arg, flags);
                else
                    gasnet_coll_wait_sync(gasnet_coll_reduce_nb(
                        GASNET_TEAM_ALL, (gasnet_image_t)root, red, src, 0,
                        0, sizeof(int64_t), NE, 0, arg, flags));
                if (gt_me == root)
                    for (size_t i = 0; i < NE; i++) {
                        int64_t want = arg ? INT64_MIN : 0;
                        for (int r = 0; r < n; r++)
                            want = arg ? (val(r, i) > want ? val(r, i) : want)
                                       : want + val(r, i);
                        GT_ASSERT(red[i] == want, "reduce arg %d", arg);
                    }
            }
        }
        memset(dst, 0, blk * (size_t)n);
        gasnet_coll_gather_allM(GASNET_TEAM_ALL, dl, sl, blk, flags);
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < NE; i++)
                GT_ASSERT(dst[(size_t)r * NE + i] == val(r, i),
                          "gather_allM");
        memset(dst, 0, blk * (size_t)n);
        gasnet_coll_wait_sync(gasnet_coll_exchangeM_nb(GASNET_TEAM_ALL, dl,
                                                       sl, blk, flags));
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < NE; i++)
                GT_ASSERT(dst[(size_t)r * NE + i] ==
                          val(r, (size_t)gt_me * NE + i), "exchangeM_nb");
    }

    /* Scans: inclusive and exclusive sums. */
    for (int ex = 0; ex < 2; ex++) {
        int64_t sc[NE];
        for (size_t i = 0; i < NE; i++) {
            src[i] = val(gt_me, i);
            sc[i] = -1;
        }
        int sflags = GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC |
                     GASNET_COLL_LOCAL |
                     (ex ? GASNET_COLL_EXCLUSIVE_SCAN
                         : GASNET_COLL_INCLUSIVE_SCAN);
        gasnet_coll_wait_sync(gasnet_coll_scan_nb(
            GASNET_TEAM_ALL, sc, 0, 0, src, 0, 0, sizeof(int64_t), NE, 0, 0,
            sflags));
        for (size_t i = 0; i < NE; i++) {
            int64_t want = 0;
            for (int r = 0; r < gt_me + !ex; r++)
                want += val(r, i);
            GT_ASSERT((ex && gt_me == 0) ? sc[i] == -1 : sc[i] == want,
                      "scan (exclusive %d)", ex);
        }
    }

    /* Teams: rows of 2 nodes and columns. */
    int ncols = n > 1 ? 2 : 1;
    int row = gt_me / ncols, col = gt_me % ncols;
    gasnet_team_handle_t rt = gasnet_coll_team_split(
        GASNET_TEAM_ALL, (gasnet_node_t)row, (gasnet_node_t)col, NULL);
    gasnet_team_handle_t ct = gasnet_coll_team_split(
        GASNET_TEAM_ALL, (gasnet_node_t)col, (gasnet_node_t)row, NULL);
    int rsize = (int)gasnet_coll_team_size(rt);
    GT_ASSERT(gasnet_coll_team_rank2node(rt, col) == (gasnet_node_t)gt_me &&
              gasnet_coll_team_node2rank(ct, (gasnet_node_t)gt_me) ==
              (gasnet_node_t)row, "team ranks");
    int flags = GASNET_COLL_IN_NOSYNC | GASNET_COLL_OUT_NOSYNC |
                GASNET_COLL_LOCAL;
    for (int it = 0; it < 20; it++) {
        int64_t mine = gt_me * 100 + it, all[64];
        gasnet_coll_gather_all(rt, all, &mine, sizeof mine, flags);
        for (int r = 0; r < rsize; r++)
            GT_ASSERT(all[r] == (row * ncols + r) * 100 + it, "row gather");
        gasnet_coll_barrier_notify(rt, it, 0);
        GT_SAFE(gasnet_coll_barrier_wait(rt, it, 0));
        int got = -1;
        GT_ASSERT(gasnet_coll_barrier_result(rt, &got) == 0 && got == it,
                  "team barrier result");
        int64_t b = gt_me;
        gasnet_coll_broadcast(ct, &b, 0, &b, sizeof b, flags);
        GT_ASSERT(b == col, "column broadcast");
        GT_SAFE(gasnet_coll_barrier(ct, 5, GASNET_BARRIERFLAG_ANONYMOUS));
    }
    if ((int)gasnet_coll_team_size(ct) > 1) {
        gasnet_coll_barrier_notify(ct, row, 0); /* names differ */
        GT_EXPECT(gasnet_coll_barrier_wait(ct, row, 0),
                  GASNET_ERR_BARRIER_MISMATCH);
    }
    GT_SAFE(gasnet_coll_barrier(GASNET_TEAM_ALL, 3, 0));
    free(src);
    free(dst);
    free(dl);
    free(sl);
    gt_finish("gt_collm");
    return 0;
}

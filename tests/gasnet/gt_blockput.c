/* gt_blockput.c - GASNET_BLOCKUNTIL for another node's put (as OpenSHMEM's
 * shmem_wait does it): node 1 waits, asleep under TELEMEM_WAIT=block, for
 * a flag node 0 puts 0.3 s later (gasnet_put, gasnet_put_nbi then its
 * sync, gasnet_put_val, gasnet_memset), then answers the same way while
 * node 0 waits.  On one host the puts are node 0's own stores: each wait
 * must end in well under the 60 s liveness interval the test runs with
 * (the only other end of such a sleep).  Needs 2 or more nodes. */
#include <unistd.h>

#include "gt.h"

enum { F_PUT, F_NBI, F_VAL, F_MEMSET, F_COUNT };
static const char *const names[F_COUNT] = {"gasnet_put", "gasnet_put_nbi",
                                           "gasnet_put_val", "gasnet_memset"};

static void signal_flag(int form, int node, uint64_t *remote, uint64_t v)
{
    switch (form) {
    case F_PUT:
        gasnet_put((gasnet_node_t)node, remote, &v, sizeof v);
        break;
    case F_NBI:
        gasnet_put_nbi((gasnet_node_t)node, remote, &v, sizeof v);
        gasnet_wait_syncnbi_puts();
        break;
    case F_VAL:
        gasnet_put_val((gasnet_node_t)node, remote, v, sizeof v);
        break;
    default:
        gasnet_memset((gasnet_node_t)node, remote, (int)v, sizeof v);
        break;
    }
}

int main(int argc, char **argv)
{
    gt_start(&argc, &argv, "gt_blockput", NULL, 0, GASNET_PAGESIZE);
    if (gt_n < 2) {
        gt_log("gt_blockput: needs 2 nodes (skipped)");
        gt_finish("gt_blockput");
    }
    volatile uint64_t *mine = (volatile uint64_t *)gt_seg(gt_me).addr;
    uint64_t *peer = (uint64_t *)gt_seg(gt_me == 0 ? 1 : 0).addr;
    for (int f = 0; f < F_COUNT; f++) {
        uint64_t want = f == F_MEMSET ? 0x0101010101010101ull * (2 + f)
                                      : (uint64_t)(2 + f);
        mine[f] = 0;
        gt_barrier();
        if (gt_me > 1)
            continue;
        double t0 = gt_now();
        if (gt_me == 0) {
            usleep(300 * 1000); /* node 1 falls asleep */
            signal_flag(f, 1, &peer[f], want);
        }
        GASNET_BLOCKUNTIL(mine[f] == want);
        double t = gt_now() - t0;
        if (gt_me == 1)
            signal_flag(f, 0, &peer[f], want);
        GT_ASSERT(t < 10, "%s: the wait took %.1f s", names[f], t);
        gt_log("%s: waited %.3f s", names[f], t);
    }
    gt_finish("gt_blockput");
    return 0;
}

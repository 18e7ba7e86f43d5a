/* gasnet_bar.c - telemem-gasnet-barrier: GASNet barriers among all nodes,
 * anonymous and named (gasnet_barrier_notify + gasnet_barrier_wait),
 * written only against GASNet-1's gasnet.h, so that the same source
 * builds with any GASNet's makefile fragment (scripts/bench-gasnet.sh
 * --tests bar).
 *
 *   telemem-run -n N telemem-gasnet-barrier [iterations]
 *
 * Node 0 prints one line per figure in the format of GASNet's testam
 * ("0: <what>: <s> sec <us> us"): the mean time of one barrier over the
 * iterations, as node 0 sees it. */
#define GB_PROG "telemem-gasnet-barrier"
#include "gasnet_only.h"

/* n barriers, named by their index (named) or anonymous; seconds. */
static double run(long n, int named)
{
    int flags = named ? 0 : GASNET_BARRIERFLAG_ANONYMOUS;
    double t0 = gb_now();
    for (long i = 0; i < n; i++) {
        gasnet_barrier_notify((int)i, flags);
        gb_check(gasnet_barrier_wait((int)i, flags), "gasnet_barrier_wait");
    }
    return gb_now() - t0;
}

int main(int argc, char **argv)
{
    if (gasnet_init(&argc, &argv) != GASNET_OK)
        return 1;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        if (gasnet_mynode() == 0)
            printf("usage: telemem-run -n N telemem-gasnet-barrier "
                   "[iterations]\nGASNet barriers, anonymous and named, "
                   "among all nodes.\n");
        gasnet_exit(0);
    }
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    if (iters < 1) {
        fprintf(stderr, "telemem-gasnet-barrier: iterations must be "
                        "positive\n");
        gasnet_exit(2);
    }
    gb_check(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0), "gasnet_attach");
    int nodes = (int)gasnet_nodes();
    for (int named = 0; named < 2; named++) {
        run(iters / 10 + 1, named); /* warm-up */
        double s = run(iters, named);
        if (gasnet_mynode() == 0) {
            printf("0: barrier %s %d nodes: %.6f sec %.3f us\n",
                   named ? "named" : "anonymous", nodes, s,
                   s * 1e6 / (double)iters);
            fflush(stdout);
        }
    }
    gasnet_exit(0);
    return 0;
}

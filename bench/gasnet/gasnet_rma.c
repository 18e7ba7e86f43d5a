/* gasnet_rma.c - telemem-gasnet-rma: GASNet puts and gets between nodes 0
 * and 1 into the other node's segment, 1 B to 64 KiB, written only
 * against GASNet-1's gasnet.h, so that the same source builds with any
 * GASNet's makefile fragment (scripts/bench-gasnet.sh --tests rma).
 *
 *   telemem-run -n 2 telemem-gasnet-rma [iterations]
 *
 * Node 0 prints one line per figure in the format of GASNet's testam
 * ("0: <what> <size> bytes: <s> sec <us> us"), the time per operation:
 * blocking gasnet_put / gasnet_get (latency), and gasnet_put_nbi_bulk /
 * gasnet_get_nbi_bulk in a row closed by one sync (throughput, as
 * GASNet's testsmall measures them).  The local buffer is in node 0's own
 * segment, at the offset of the remote one, as in testsmall. */
#define GB_PROG "telemem-gasnet-rma"
#include "gasnet_only.h"

#define MAXSZ 65536

/* One figure: n operations of kind k (0 put, 1 get, 2 put_nbi, 3 get_nbi)
 * of size bytes; seconds. */
static double run(int k, char *loc, char *rem, size_t size, long n)
{
    double t0 = gb_now();
    switch (k) {
    case 0:
        for (long i = 0; i < n; i++)
            gasnet_put(1, rem, loc, size);
        break;
    case 1:
        for (long i = 0; i < n; i++)
            gasnet_get(loc, 1, rem, size);
        break;
    case 2:
        for (long i = 0; i < n; i++)
            gasnet_put_nbi_bulk(1, rem, loc, size);
        gasnet_wait_syncnbi_puts();
        break;
    default:
        for (long i = 0; i < n; i++)
            gasnet_get_nbi_bulk(loc, 1, rem, size);
        gasnet_wait_syncnbi_gets();
        break;
    }
    return gb_now() - t0;
}

int main(int argc, char **argv)
{
    static const char *what[] = {"put", "get", "put_nbi_bulk", "get_nbi_bulk"};
    if (gasnet_init(&argc, &argv) != GASNET_OK)
        return 1;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        if (gasnet_mynode() == 0)
            printf("usage: telemem-run -n 2 telemem-gasnet-rma "
                   "[iterations]\nGASNet puts and gets, blocking and nbi, "
                   "1 B to 64 KiB, node 0 to node 1's segment.\n");
        gasnet_exit(0);
    }
    long iters = argc > 1 ? atol(argv[1]) : 100000;
    if (iters < 1) {
        fprintf(stderr, "telemem-gasnet-rma: iterations must be positive\n");
        gasnet_exit(2);
    }
    if (gasnet_attach(NULL, 0, 2 * MAXSZ, 0) != GASNET_OK)
        gasnet_exit(1);
    if (gasnet_nodes() < 2) {
        fprintf(stderr, "telemem-gasnet-rma: needs 2 nodes\n");
        gasnet_exit(77);
    }
    gasnet_seginfo_t seg[2];
    if (gasnet_getSegmentInfo(seg, 2) != GASNET_OK)
        gasnet_exit(1);
    int me = (int)gasnet_mynode();
    char *loc = (char *)seg[me].addr, *rem = (char *)seg[1].addr;
    memset(loc, me + 1, MAXSZ);
    gb_barrier();
    if (me == 0) {
        for (int k = 0; k < 4; k++)
            for (size_t size = 1; size <= MAXSZ; size *= 2) {
                /* Fewer of the large ones: about the same time each. */
                long n = size <= 1024 ? iters : iters * 1024 / (long)size;
                if (n < 10)
                    n = 10;
                run(k, loc, rem, size, n / 10 + 1);
                gb_report(what[k], size, run(k, loc, rem, size, n), n);
            }
    }
    gb_barrier();
    gasnet_exit(0);
    return 0;
}

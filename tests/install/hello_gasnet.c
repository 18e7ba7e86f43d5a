/* hello_gasnet.c - a client of the installed gasnet.h (libgasnet over
 * Telemem): attach a segment, put into the right neighbour's, barrier. */
#include <stdio.h>
#include <stdlib.h>

#include <gasnet.h>

int main(int argc, char **argv)
{
    if (gasnet_init(&argc, &argv) != GASNET_OK ||
        gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0) != GASNET_OK)
        return 1;
    int me = (int)gasnet_mynode(), n = (int)gasnet_nodes();
    gasnet_seginfo_t *seg = malloc(sizeof(*seg) * (size_t)n);
    if (!seg || gasnet_getSegmentInfo(seg, n) != GASNET_OK)
        return 1;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    gasnet_put(right, seg[right].addr, &me, sizeof(me));
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS) != GASNET_OK)
        return 1;
    int got = *(int *)seg[me].addr;
    if (got != left) {
        fprintf(stderr, "node %d: got %d, want %d\n", me, got, left);
        gasnet_exit(1);
    }
    printf("gasnet: node %d of %d ok\n", me, n);
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    free(seg);
    gasnet_exit(0);
    return 0;
}

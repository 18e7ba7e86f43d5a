/* at_vector.c - I/O-vector transfers: ARMCI_PutV / _GetV / _AccV with one
 * and several armci_giov_t descriptors, segments of 1 byte to 8 KiB in
 * scattered order, and empty descriptors. */
#include "at.h"

#define AREA (512 * 1024)

static void test_putget(void **base)
{
    enum { NSEG = 50 };
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    static const int seglen[3] = {1, 24, 8192};
    unsigned char *local = malloc(AREA), *back = malloc(AREA);
    AT_ASSERT(local && back, "out of memory");
    for (int li = 0; li < 3; li++) {
        int len = seglen[li];
        unsigned seed = 11u * (unsigned)li + (unsigned)at_me;
        at_fill(local, AREA, seed);
        memset(base[at_me], 0, AREA);
        ARMCI_Barrier();
        /* Two descriptors: even segments and odd segments, remote slots in
         * reverse order. */
        void *src[2][NSEG], *dst[2][NSEG];
        int cnt[2] = {0, 0};
        for (int s = 0; s < NSEG; s++) {
            int d = s % 2;
            src[d][cnt[d]] = local + (size_t)s * (size_t)(len + 3);
            dst[d][cnt[d]] =
                (char *)base[to] + (size_t)(NSEG - 1 - s) * (size_t)(len + 5);
            cnt[d]++;
        }
        armci_giov_t iov[3] = {
            {src[0], dst[0], len, cnt[0]},
            {src[1], dst[1], len, cnt[1]},
            {NULL, NULL, len, 0},
        };
        AT_OK(ARMCI_PutV(iov, 3, to));
        ARMCI_Barrier();
        unsigned fseed = 11u * (unsigned)li + (unsigned)from;
        unsigned char *mine = base[at_me];
        for (int s = 0; s < NSEG; s++) {
            size_t ro = (size_t)(NSEG - 1 - s) * (size_t)(len + 5);
            size_t lo = (size_t)s * (size_t)(len + 3);
            for (int b = 0; b < len; b++)
                AT_ASSERT(mine[ro + b] == at_byte(fseed, lo + b),
                          "PutV len %d seg %d byte %d", len, s, b);
            for (int b = len; b < len + 5 && ro + b < AREA; b++)
                AT_ASSERT(mine[ro + b] == 0, "PutV wrote a gap byte");
        }
        /* Get the segments back, one descriptor (swap src and dst). */
        memset(back, 0, AREA);
        void *rsrc[NSEG], *ldst[NSEG];
        for (int s = 0; s < NSEG; s++) {
            rsrc[s] =
                (char *)base[to] + (size_t)(NSEG - 1 - s) * (size_t)(len + 5);
            ldst[s] = back + (size_t)s * (size_t)(len + 3);
        }
        armci_giov_t g1 = {rsrc, ldst, len, NSEG};
        AT_OK(ARMCI_GetV(&g1, 1, to));
        for (int s = 0; s < NSEG; s++)
            for (int b = 0; b < len; b++) {
                size_t lo = (size_t)s * (size_t)(len + 3) + (size_t)b;
                AT_ASSERT(back[lo] == local[lo], "GetV len %d seg %d", len, s);
            }
        /* And with two descriptors (halves). */
        memset(back, 0, AREA);
        armci_giov_t g2[2] = {{rsrc, ldst, len, NSEG / 2},
                              {rsrc + NSEG / 2, ldst + NSEG / 2, len,
                               NSEG - NSEG / 2}};
        AT_OK(ARMCI_GetV(g2, 2, to));
        for (int s = 0; s < NSEG; s++)
            for (int b = 0; b < len; b++) {
                size_t lo = (size_t)s * (size_t)(len + 3) + (size_t)b;
                AT_ASSERT(back[lo] == local[lo], "GetV x2 len %d seg %d", len,
                          s);
            }
        ARMCI_Barrier();
    }
    free(local);
    free(back);
}

static void test_acc(void **base)
{
    enum { NSEG = 16, E = 5 };
    long *mine = base[at_me];
    memset(mine, 0, NSEG * 8 * sizeof(long));
    ARMCI_Barrier();
    long local[NSEG][E];
    void *src[NSEG], *dst[NSEG];
    for (int s = 0; s < NSEG; s++) {
        for (int e = 0; e < E; e++)
            local[s][e] = 100L * s + e + at_me;
        src[s] = local[s];
        dst[s] = (long *)base[0] + s * 8; /* 8-long slots, E used */
    }
    long scale = -1;
    armci_giov_t iov = {src, dst, E * (int)sizeof(long), NSEG};
    AT_OK(ARMCI_AccV(ARMCI_ACC_LNG, &scale, &iov, 1, 0));
    ARMCI_Barrier();
    if (at_me == 0) {
        long rsum = (long)at_n * (at_n - 1) / 2;
        for (int s = 0; s < NSEG; s++)
            for (int e = 0; e < 8; e++) {
                long want = e < E ? -((100L * s + e) * at_n + rsum) : 0;
                AT_ASSERT(mine[s * 8 + e] == want, "AccV [%d][%d] = %ld", s,
                          e, mine[s * 8 + e]);
            }
    }
    ARMCI_Barrier();
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, AREA));
    test_putget(base);
    test_acc(base);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    at_finish("vector");
    return 0;
}

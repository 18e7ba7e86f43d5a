/* at_contig.c - contiguous transfers: ARMCI_Put / _Get at sizes around
 * the usual thresholds (0 .. 1 MiB, odd offsets) to every rank including
 * itself, ARMCI_Acc for all six types with a scale, ARMCI_Put_flag seen
 * by a target polling the flag, ARMCI_Copy, the value calls, and
 * Fence / AllFence / Barrier completion. */
#include <complex.h>

#include "at.h"

#define BIG (1 << 20)

static void test_putget(void)
{
    static const int sizes[] = {0,    1,    7,     8,     63,    64,   65,
                                4095, 4096, 16383, 16384, 16385, 65536,
                                100003, BIG};
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 2 * BIG + 64));
    unsigned char *src = ARMCI_Malloc_local(BIG + 64);
    unsigned char *dst = ARMCI_Malloc_local(BIG + 64);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int sz = sizes[k];
        int off = (int)(k % 3); /* odd offsets too */
        /* Rank r puts into rank (r+1)%n's first half, at off. */
        int to = (at_me + 1) % at_n;
        unsigned seed = 1000u * (unsigned)k + (unsigned)at_me;
        at_fill(src + off, (size_t)sz, seed);
        AT_OK(ARMCI_Put(src + off, (char *)base[to] + off, sz, to));
        ARMCI_Barrier();
        int from = (at_me + at_n - 1) % at_n;
        long bad = at_check((char *)base[at_me] + off, (size_t)sz,
                            1000u * (unsigned)k + (unsigned)from);
        AT_ASSERT(bad < 0, "put of %d bytes: byte %ld wrong", sz, bad);
        /* Get it back from the next rank (its data came from me). */
        memset(dst, 0xee, (size_t)sz + 64);
        AT_OK(ARMCI_Get((char *)base[to] + off, dst + 1, sz, to));
        bad = at_check(dst + 1, (size_t)sz, seed);
        AT_ASSERT(bad < 0, "get of %d bytes: byte %ld wrong", sz, bad);
        AT_ASSERT(dst[0] == 0xee && dst[sz + 1] == 0xee,
                  "get of %d bytes wrote outside its buffer", sz);
        ARMCI_Barrier();
    }
    /* Self put and get, in the second half. */
    char *mine = (char *)base[at_me] + BIG;
    at_fill(src, 5000, 77);
    AT_OK(ARMCI_Put(src, mine, 5000, at_me));
    ARMCI_Fence(at_me);
    AT_ASSERT(at_check(mine, 5000, 77) < 0, "self put");
    AT_OK(ARMCI_Get(mine, dst, 5000, at_me));
    AT_ASSERT(at_check(dst, 5000, 77) < 0, "self get");
    ARMCI_Barrier();
    ARMCI_Free_local(src);
    ARMCI_Free_local(dst);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
}

/* Every rank accumulates into rank 0's arrays: scale * (rank + 1). */
static void test_acc(void)
{
    enum { N = 1000 };
    void **base = at_ptrs();
    size_t bytes = N * sizeof(double complex);
    AT_OK(ARMCI_Malloc(base, (armci_size_t)(6 * bytes)));
    memset(base[at_me], 0, 6 * bytes);
    ARMCI_Barrier();
    char *t = base[0];
    int vi[N];
    long vl[N];
    float vf[N];
    double vd[N];
    float complex vc[N];
    double complex vz[N];
    for (int i = 0; i < N; i++) {
        vi[i] = i + at_me;
        vl[i] = (long)i * 100000L + at_me;
        vf[i] = (float)(i % 7) + 0.5f;
        vd[i] = i * 0.25 + at_me;
        vc[i] = (float)i + (float)at_me * I;
        vz[i] = (double)i - 2.0 * I;
    }
    int si = 2;
    long sl = 3;
    float sf = 2.0f;
    double sd = 0.5;
    float complex sc = 1.0f + 1.0f * I;
    double complex sz = 0.0 + 1.0 * I;
    AT_OK(ARMCI_Acc(ARMCI_ACC_INT, &si, vi, t, N * sizeof(int), 0));
    AT_OK(ARMCI_Acc(ARMCI_ACC_LNG, &sl, vl, t + bytes, N * sizeof(long), 0));
    AT_OK(ARMCI_Acc(ARMCI_ACC_FLT, &sf, vf, t + 2 * bytes, N * sizeof(float),
                    0));
    AT_OK(ARMCI_Acc(ARMCI_ACC_DBL, &sd, vd, t + 3 * bytes,
                    N * sizeof(double), 0));
    AT_OK(ARMCI_Acc(ARMCI_ACC_CPL, &sc, vc, t + 4 * bytes,
                    N * sizeof(float complex), 0));
    AT_OK(ARMCI_Acc(ARMCI_ACC_DCP, &sz, vz, t + 5 * bytes,
                    N * sizeof(double complex), 0));
    ARMCI_Barrier();
    if (at_me == 0) {
        long rsum = (long)at_n * (at_n - 1) / 2; /* sum of ranks */
        int *ri = (int *)t;
        long *rl = (long *)(t + bytes);
        float *rf = (float *)(t + 2 * bytes);
        double *rd = (double *)(t + 3 * bytes);
        float complex *rc = (float complex *)(t + 4 * bytes);
        double complex *rz = (double complex *)(t + 5 * bytes);
        for (int i = 0; i < N; i++) {
            AT_ASSERT(ri[i] == 2 * (at_n * i + (int)rsum), "int acc [%d] %d",
                      i, ri[i]);
            AT_ASSERT(rl[i] == 3 * ((long)at_n * i * 100000L + rsum),
                      "long acc [%d] %ld", i, rl[i]);
            AT_ASSERT(rf[i] == 2.0f * at_n * ((float)(i % 7) + 0.5f),
                      "float acc [%d] %g", i, (double)rf[i]);
            AT_ASSERT(rd[i] == 0.5 * (at_n * i * 0.25 + (double)rsum),
                      "double acc [%d] %g", i, rd[i]);
            /* (1+i)(i + r i) summed: re = n*i - rsum, im = n*i + rsum */
            float complex wc =
                ((float)(at_n * i) - (float)rsum) +
                ((float)(at_n * i) + (float)rsum) * I;
            AT_ASSERT(rc[i] == wc, "complex acc [%d] %g%+gi", i,
                      (double)crealf(rc[i]), (double)cimagf(rc[i]));
            /* i * (i - 2i) = 2 + i*i  (times n) */
            double complex wz = 2.0 * at_n + (double)(at_n * i) * I;
            AT_ASSERT(rz[i] == wz, "dcomplex acc [%d] %g%+gi", i,
                      creal(rz[i]), cimag(rz[i]));
        }
    }
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
}

/* Rank r sends data + flag to rank r+1, which waits on the flag with
 * plain loads and then checks the data. */
static void test_put_flag(void)
{
    enum { BYTES = 40000, ROUNDS = 20 };
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, BYTES + 64));
    memset(base[at_me], 0, BYTES + 64);
    ARMCI_Barrier();
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    char *buf = malloc(BYTES);
    volatile int *myflag = (volatile int *)((char *)base[at_me] + BYTES);
    for (int round = 1; round <= ROUNDS; round++) {
        at_fill(buf, BYTES, (unsigned)(round * 31 + at_me));
        AT_OK(ARMCI_Put_flag(buf, base[to], BYTES,
                             (int *)((char *)base[to] + BYTES), round, to));
        while (*myflag != round)
            ; /* ARMCI programs wait on plain loads */
        long bad = at_check(base[at_me], BYTES,
                            (unsigned)(round * 31 + from));
        AT_ASSERT(bad < 0, "round %d: data before flag, byte %ld", round,
                  bad);
        ARMCI_Barrier();
    }
    free(buf);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
}

static void test_values_copy(void)
{
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 64));
    memset(base[at_me], 0, 64);
    ARMCI_Barrier();
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    char *t = base[to];
    AT_OK(ARMCI_PutValueInt(100 + at_me, t, to));
    AT_OK(ARMCI_PutValueLong(1L << 40 | at_me, t + 8, to));
    AT_OK(ARMCI_PutValueFloat(1.5f + (float)at_me, t + 16, to));
    AT_OK(ARMCI_PutValueDouble(2.25 + at_me, t + 24, to));
    ARMCI_Barrier();
    char *m = base[at_me];
    AT_ASSERT(*(int *)m == 100 + from, "PutValueInt %d", *(int *)m);
    AT_ASSERT(*(long *)(m + 8) == (1L << 40 | from), "PutValueLong");
    AT_ASSERT(*(float *)(m + 16) == 1.5f + (float)from, "PutValueFloat");
    AT_ASSERT(*(double *)(m + 24) == 2.25 + from, "PutValueDouble");
    AT_ASSERT(ARMCI_GetValueInt(t, to) == 100 + at_me, "GetValueInt");
    AT_ASSERT(ARMCI_GetValueLong(t + 8, to) == (1L << 40 | at_me),
              "GetValueLong");
    AT_ASSERT(ARMCI_GetValueFloat(t + 16, to) == 1.5f + (float)at_me,
              "GetValueFloat");
    AT_ASSERT(ARMCI_GetValueDouble(t + 24, to) == 2.25 + at_me,
              "GetValueDouble");
    char a[100], b[100];
    at_fill(a, sizeof a, 5);
    ARMCI_Copy(a, b, (int)sizeof a);
    AT_ASSERT(memcmp(a, b, sizeof a) == 0, "ARMCI_Copy");
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
}

/* After ARMCI_Fence(p), p holds this rank's puts: p reads them after a
 * barrier without any further completion call by the writer. */
static void test_fence(void)
{
    enum { N = 64 };
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, (armci_size_t)(N * sizeof(long) * at_n)));
    memset(base[at_me], 0, N * sizeof(long) * at_n);
    ARMCI_Barrier();
    long v[N];
    for (int p = 0; p < at_n; p++) {
        for (int i = 0; i < N; i++)
            v[i] = 1000L * at_me + p + i;
        AT_OK(ARMCI_Put(v, (long *)base[p] + N * at_me, N * sizeof(long), p));
        ARMCI_Fence(p);
    }
    armci_msg_barrier(); /* no fence in here */
    long *m = base[at_me];
    for (int r = 0; r < at_n; r++)
        for (int i = 0; i < N; i++)
            AT_ASSERT(m[N * r + i] == 1000L * r + at_me + i,
                      "fenced put from %d: [%d] = %ld", r, i, m[N * r + i]);
    ARMCI_Barrier();
    for (int p = 0; p < at_n; p++) {
        for (int i = 0; i < N; i++)
            v[i] = -1000L * at_me - p - i;
        AT_OK(ARMCI_Put(v, (long *)base[p] + N * at_me, N * sizeof(long), p));
    }
    ARMCI_AllFence();
    armci_msg_barrier();
    for (int r = 0; r < at_n; r++)
        for (int i = 0; i < N; i++)
            AT_ASSERT(m[N * r + i] == -1000L * r - at_me - i,
                      "all-fenced put from %d", r);
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    test_putget();
    test_acc();
    test_put_flag();
    test_values_copy();
    test_fence();
    at_finish("contig");
    return 0;
}

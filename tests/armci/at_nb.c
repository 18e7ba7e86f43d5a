/* at_nb.c - non-blocking calls: ARMCI_NbPut / _NbGet / _NbAcc, the strided
 * and vector Nb forms, NbPutValue*, handles (ARMCI_INIT_HANDLE, aggregate
 * handles over several targets, ARMCI_Wait, ARMCI_Test as the only
 * completion), NULL handles
 * completed by ARMCI_WaitProc / ARMCI_WaitAll. */
#include "at.h"

#define SLOT 4096

/* Slot s of rank p's area. */
static char *slot(void **base, int p, int s)
{
    return (char *)base[p] + (size_t)s * SLOT;
}

static void test_contig(void **base)
{
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    char out[3][SLOT], in[SLOT];
    armci_hdl_t h[3];
    for (int i = 0; i < 3; i++) {
        at_fill(out[i], SLOT, (unsigned)(at_me * 10 + i));
        ARMCI_INIT_HANDLE(&h[i]);
        AT_OK(ARMCI_NbPut(out[i], slot(base, to, i), SLOT, to, &h[i]));
    }
    for (int i = 0; i < 3; i++)
        AT_OK(ARMCI_Wait(&h[i]));
    ARMCI_Barrier();
    for (int i = 0; i < 3; i++)
        AT_ASSERT(at_check(slot(base, at_me, i), SLOT,
                           (unsigned)(from * 10 + i)) < 0,
                  "NbPut slot %d", i);
    /* NbGet with a handle, tested until complete. */
    armci_hdl_t g;
    ARMCI_INIT_HANDLE(&g);
    memset(in, 0, SLOT);
    AT_OK(ARMCI_NbGet(slot(base, to, 1), in, SLOT, to, &g));
    while (ARMCI_Test(&g) != 0)
        ;
    AT_OK(ARMCI_Wait(&g)); /* waiting again is harmless */
    AT_ASSERT(at_check(in, SLOT, (unsigned)(at_me * 10 + 1)) < 0, "NbGet");
    /* NbAcc into rank 0, NULL handle, completed by WaitProc. */
    ARMCI_Barrier();
    int *acc = (int *)slot(base, 0, 4);
    if (at_me == 0)
        memset(acc, 0, SLOT);
    ARMCI_Barrier();
    int v[100], scale = 3;
    for (int i = 0; i < 100; i++)
        v[i] = i + at_me;
    AT_OK(ARMCI_NbAcc(ARMCI_ACC_INT, &scale, v, acc, (int)sizeof v, 0, NULL));
    AT_OK(ARMCI_WaitProc(0));
    ARMCI_Barrier();
    if (at_me == 0)
        for (int i = 0; i < 100; i++)
            AT_ASSERT(acc[i] == 3 * (at_n * i + at_n * (at_n - 1) / 2),
                      "NbAcc [%d] = %d", i, acc[i]);
    ARMCI_Barrier();
}

/* One aggregate handle over puts to every rank. */
static void test_aggregate(void **base)
{
    char *out = malloc((size_t)at_n * 256);
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    ARMCI_SET_AGGREGATE_HANDLE(&h);
    for (int p = 0; p < at_n; p++) {
        at_fill(out + p * 256, 256, (unsigned)(at_me * 100 + p));
        AT_OK(ARMCI_NbPut(out + p * 256, slot(base, p, 5) + at_me * 256, 256,
                          p, &h));
    }
    AT_OK(ARMCI_Wait(&h));
    ARMCI_UNSET_AGGREGATE_HANDLE(&h);
    ARMCI_Barrier();
    for (int r = 0; r < at_n; r++)
        AT_ASSERT(at_check(slot(base, at_me, 5) + r * 256, 256,
                           (unsigned)(r * 100 + at_me)) < 0,
                  "aggregate put from %d", r);
    free(out);
    ARMCI_Barrier();
}

/* Test handle h until it says complete (0); anything but 0 or 1 fails.
 * Nothing assumes Test ever says 1 (ARMCI-MPI's completes at once). */
static void test_until_done(armci_hdl_t *h, const char *what)
{
    int rc;
    while ((rc = ARMCI_Test(h)) != 0)
        AT_ASSERT(rc == 1, "ARMCI_Test (%s) returned %d", what, rc);
    /* spent: testing or waiting again says complete */
    AT_ASSERT(ARMCI_Test(h) == 0, "ARMCI_Test again (%s)", what);
    AT_OK(ARMCI_Wait(h));
}

/* ARMCI_Test as the only completion: a get has its data once Test says
 * 0, for one target and for an aggregate handle over every rank; a put
 * tested complete is in place after the barrier. */
static void test_test(void **base)
{
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    AT_ASSERT(ARMCI_Test(&h) == 0, "ARMCI_Test of an empty handle");
    at_fill(slot(base, at_me, 6), SLOT, (unsigned)(at_me * 7 + 3));
    ARMCI_Barrier();
    char *in = malloc((size_t)at_n * SLOT);
    AT_OK(ARMCI_NbGet(slot(base, to, 6), in, SLOT, to, &h));
    test_until_done(&h, "NbGet");
    AT_ASSERT(at_check(in, SLOT, (unsigned)(to * 7 + 3)) < 0, "tested NbGet");
    memset(in, 0, (size_t)at_n * SLOT);
    ARMCI_INIT_HANDLE(&h);
    ARMCI_SET_AGGREGATE_HANDLE(&h);
    for (int p = 0; p < at_n; p++)
        AT_OK(ARMCI_NbGet(slot(base, p, 6), in + (size_t)p * SLOT, SLOT, p,
                          &h));
    test_until_done(&h, "aggregate NbGet");
    ARMCI_UNSET_AGGREGATE_HANDLE(&h);
    for (int p = 0; p < at_n; p++)
        AT_ASSERT(at_check(in + (size_t)p * SLOT, SLOT,
                           (unsigned)(p * 7 + 3)) < 0,
                  "tested aggregate NbGet from %d", p);
    ARMCI_Barrier();
    at_fill(in, SLOT, (unsigned)(at_me * 7 + 5));
    ARMCI_INIT_HANDLE(&h);
    AT_OK(ARMCI_NbPut(in, slot(base, to, 7), SLOT, to, &h));
    test_until_done(&h, "NbPut");
    ARMCI_Barrier();
    AT_ASSERT(at_check(slot(base, at_me, 7), SLOT,
                       (unsigned)(from * 7 + 5)) < 0,
              "tested NbPut");
    free(in);
    ARMCI_Barrier();
}

static void test_strided_vector_values(void **base)
{
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    /* NbPutS: 8 rows of 16 bytes, remote rows 32 apart. */
    char rows[8 * 16];
    at_fill(rows, sizeof rows, (unsigned)(500 + at_me));
    int count[2] = {16, 8}, ls[1] = {16}, rs[1] = {32};
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    AT_OK(ARMCI_NbPutS(rows, ls, slot(base, to, 6), rs, count, 1, to, &h));
    AT_OK(ARMCI_Wait(&h));
    /* NbPutV with a NULL handle: 4 segments of 8 bytes. */
    char seg[4][8];
    void *src[4], *dst[4];
    for (int i = 0; i < 4; i++) {
        at_fill(seg[i], 8, (unsigned)(600 + at_me * 4 + i));
        src[i] = seg[i];
        dst[i] = slot(base, to, 7) + 100 * i;
    }
    armci_giov_t iov = {src, dst, 8, 4};
    AT_OK(ARMCI_NbPutV(&iov, 1, to, NULL));
    /* NbPutValue*, one handle each. */
    armci_hdl_t hv[4];
    for (int i = 0; i < 4; i++)
        ARMCI_INIT_HANDLE(&hv[i]);
    char *vs = slot(base, to, 8);
    AT_OK(ARMCI_NbPutValueInt(7 + at_me, vs, to, &hv[0]));
    AT_OK(ARMCI_NbPutValueLong(-8L - at_me, vs + 8, to, &hv[1]));
    AT_OK(ARMCI_NbPutValueFloat(0.5f + (float)at_me, vs + 16, to, &hv[2]));
    AT_OK(ARMCI_NbPutValueDouble(0.25 + at_me, vs + 24, to, &hv[3]));
    for (int i = 0; i < 4; i++)
        AT_OK(ARMCI_Wait(&hv[i]));
    AT_OK(ARMCI_WaitAll());
    ARMCI_Barrier();
    char *m6 = slot(base, at_me, 6);
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 16; c++)
            AT_ASSERT((unsigned char)m6[r * 32 + c] ==
                          at_byte((unsigned)(500 + from), (size_t)(r * 16 + c)),
                      "NbPutS [%d][%d]", r, c);
    for (int i = 0; i < 4; i++)
        AT_ASSERT(at_check(slot(base, at_me, 7) + 100 * i, 8,
                           (unsigned)(600 + from * 4 + i)) < 0,
                  "NbPutV segment %d", i);
    char *mv = slot(base, at_me, 8);
    AT_ASSERT(*(int *)mv == 7 + from, "NbPutValueInt");
    AT_ASSERT(*(long *)(mv + 8) == -8L - from, "NbPutValueLong");
    AT_ASSERT(*(float *)(mv + 16) == 0.5f + (float)from, "NbPutValueFloat");
    AT_ASSERT(*(double *)(mv + 24) == 0.25 + from, "NbPutValueDouble");
    /* NbGetS and NbGetV back. */
    char back[8 * 16];
    memset(back, 0, sizeof back);
    ARMCI_INIT_HANDLE(&h);
    AT_OK(ARMCI_NbGetS(slot(base, to, 6), rs, back, ls, count, 1, to, &h));
    AT_OK(ARMCI_Wait(&h));
    AT_ASSERT(memcmp(back, rows, sizeof back) == 0, "NbGetS");
    char gseg[4][8];
    void *gsrc[4], *gdst[4];
    for (int i = 0; i < 4; i++) {
        gsrc[i] = slot(base, to, 7) + 100 * i;
        gdst[i] = gseg[i];
    }
    armci_giov_t giov = {gsrc, gdst, 8, 4};
    ARMCI_INIT_HANDLE(&h);
    AT_OK(ARMCI_NbGetV(&giov, 1, to, &h));
    AT_OK(ARMCI_Wait(&h));
    AT_ASSERT(memcmp(gseg, seg, sizeof seg) == 0, "NbGetV");
    ARMCI_Barrier();
    /* NbAccS and NbAccV into rank 0 with NULL handles, then WaitAll. */
    double *ma = (double *)slot(base, 0, 9);
    if (at_me == 0)
        memset(ma, 0, SLOT);
    ARMCI_Barrier();
    double d[4][4];
    for (int i = 0; i < 16; i++)
        d[i / 4][i % 4] = i;
    double one = 1.0;
    int dc[2] = {4 * (int)sizeof(double), 4};
    int dls[1] = {4 * (int)sizeof(double)}, drs[1] = {8 * (int)sizeof(double)};
    AT_OK(ARMCI_NbAccS(ARMCI_ACC_DBL, &one, d, dls, ma, drs, dc, 1, 0, NULL));
    void *as[1] = {d}, *ad[1] = {ma + 40};
    armci_giov_t aiov = {as, ad, 16 * (int)sizeof(double), 1};
    AT_OK(ARMCI_NbAccV(ARMCI_ACC_DBL, &one, &aiov, 1, 0, NULL));
    AT_OK(ARMCI_WaitAll());
    ARMCI_Barrier();
    if (at_me == 0) {
        for (int i = 0; i < 16; i++) {
            AT_ASSERT(ma[(i / 4) * 8 + i % 4] == (double)(i * at_n),
                      "NbAccS [%d]", i);
            AT_ASSERT(ma[40 + i] == (double)(i * at_n), "NbAccV [%d]", i);
        }
    }
    ARMCI_Barrier();
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, 10 * SLOT));
    memset(base[at_me], 0, 10 * SLOT);
    ARMCI_Barrier();
    test_contig(base);
    test_aggregate(base);
    test_test(base);
    test_strided_vector_values(base);
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    at_finish("nb");
    return 0;
}

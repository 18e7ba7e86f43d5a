/* at_strided.c - strided transfers: ARMCI_PutS / _GetS / _AccS with 0 to 3
 * stride levels, different local and remote strides, rows of 1 byte to
 * 16 KiB, zero counts; ARMCI_PutS_flag; and the local
 * armci_write_strided / armci_read_strided copies.  Every byte of the
 * remote area is checked, so writes outside the patch are caught. */
#include "at.h"

#define AREA (1 << 20)

/* Offset of element (i0 byte, i1, i2, i3) of a patch with these strides. */
static size_t at_off(const int *stride, int levels, const int *idx)
{
    size_t o = (size_t)idx[0];
    for (int l = 1; l <= levels; l++)
        o += (size_t)idx[l] * (size_t)stride[l - 1];
    return o;
}

/* Visit every byte of the patch: f(offset in patch A, offset in B, k)
 * with k the byte's index in packed order. */
#define AT_FOR_PATCH(levels, count, sa, sb, oa, ob, k, body)                \
    do {                                                                    \
        int idx_[4] = {0, 0, 0, 0};                                         \
        size_t k = 0;                                                       \
        int total_ = 1;                                                     \
        for (int l_ = 0; l_ <= (levels); l_++)                              \
            total_ *= (count)[l_];                                          \
        for (int t_ = 0; t_ < total_; t_++, k++) {                          \
            int rem_ = t_;                                                  \
            for (int l_ = 0; l_ <= (levels); l_++) {                        \
                idx_[l_] = rem_ % (count)[l_];                              \
                rem_ /= (count)[l_];                                        \
            }                                                               \
            size_t oa = at_off(sa, levels, idx_);                           \
            size_t ob = at_off(sb, levels, idx_);                           \
            (void)oa;                                                       \
            (void)ob;                                                       \
            (void)k;                                                        \
            body;                                                           \
        }                                                                   \
    } while (0)

typedef struct shape {
    int levels;
    int count[4];
    int lstride[3]; /* local */
    int rstride[3]; /* remote */
} shape_t;

static const shape_t shapes[] = {
    {0, {1}, {0}, {0}},
    {0, {1000}, {0}, {0}},
    {1, {1, 100}, {3}, {1}},
    {1, {8, 64}, {8}, {24}},
    {1, {64, 33}, {100}, {64}},
    {1, {16384, 5}, {16384}, {20000}},
    {1, {0, 10}, {8}, {8}},
    {1, {8, 0}, {8}, {8}},
    {2, {4, 5, 6}, {4, 20}, {10, 60}},
    {2, {100, 7, 3}, {128, 1000}, {100, 2000}},
    {3, {3, 4, 2, 5}, {3, 12, 24}, {5, 21, 50}},
    {3, {256, 4, 4, 4}, {256, 1024, 4096}, {512, 4096, 20000}},
};

static void test_shape(const shape_t *s, int si, void **base,
                       unsigned char *local, unsigned char *check)
{
    int to = (at_me + 1) % at_n;
    int from = (at_me + at_n - 1) % at_n;
    unsigned seed = 7u * (unsigned)si + 3u * (unsigned)at_me;
    unsigned char *mine = base[at_me];
    memset(mine, 0, AREA);
    at_fill(local, AREA, seed);
    ARMCI_Barrier();
    AT_OK(ARMCI_PutS(local, (int *)s->lstride, base[to], (int *)s->rstride,
                     (int *)s->count, s->levels, to));
    ARMCI_Barrier();
    /* mine holds from's local bytes at the remote positions, 0 elsewhere */
    memset(check, 0, AREA);
    unsigned fseed = 7u * (unsigned)si + 3u * (unsigned)from;
    AT_FOR_PATCH(s->levels, s->count, s->lstride, s->rstride, lo, ro, k,
                 check[ro] = at_byte(fseed, lo));
    for (size_t i = 0; i < AREA; i++)
        AT_ASSERT(mine[i] == check[i], "shape %d: PutS byte %zu is %d, "
                                       "expected %d",
                  si, i, mine[i], check[i]);
    /* Get it back into a cleared local area with the local strides. */
    memset(local, 0, AREA);
    AT_OK(ARMCI_GetS(base[to], (int *)s->rstride, local, (int *)s->lstride,
                     (int *)s->count, s->levels, to));
    AT_FOR_PATCH(s->levels, s->count, s->lstride, s->rstride, lo, ro, k,
                 AT_ASSERT(local[lo] == at_byte(seed, lo),
                           "shape %d: GetS byte %zu", si, lo));
    ARMCI_Barrier();
}

/* Doubles: every rank accumulates 2 * its patch into rank 0. */
static void test_accs(void **base)
{
    enum { R = 6, C = 10, LD_L = 12, LD_R = 16 };
    double *mine = base[at_me];
    memset(mine, 0, R * LD_R * sizeof(double));
    double local[R * LD_L];
    for (int i = 0; i < R * LD_L; i++)
        local[i] = i + 0.5 * at_me;
    ARMCI_Barrier();
    int count[2] = {C * (int)sizeof(double), R};
    int ls[1] = {LD_L * (int)sizeof(double)};
    int rs[1] = {LD_R * (int)sizeof(double)};
    double scale = 2.0;
    AT_OK(ARMCI_AccS(ARMCI_ACC_DBL, &scale, local, ls, base[0], rs, count, 1,
                     0));
    ARMCI_Barrier();
    if (at_me == 0) {
        double rsum = 0.5 * at_n * (at_n - 1) / 2.0;
        for (int r = 0; r < R; r++)
            for (int c = 0; c < LD_R; c++) {
                double want =
                    c < C ? 2.0 * (at_n * (r * LD_L + c) + rsum) : 0.0;
                AT_ASSERT(mine[r * LD_R + c] == want,
                          "AccS [%d][%d] = %g, expected %g", r, c,
                          mine[r * LD_R + c], want);
            }
    }
    ARMCI_Barrier();
}

static void test_puts_flag(void **base)
{
    enum { R = 20, C = 24 };
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    char *mine = base[at_me];
    memset(mine, 0, 4096);
    ARMCI_Barrier();
    char local[R * C];
    for (int round = 1; round <= 10; round++) {
        at_fill(local, sizeof local, (unsigned)(round * 13 + at_me));
        int count[2] = {C, R};
        int ls[1] = {C}, rs[1] = {C + 8};
        /* Not AT_OK: ARMCI-MPI 0.3.1 returns 1 on success here. */
        ARMCI_PutS_flag(local, ls, base[to], rs, count, 1,
                        (int *)((char *)base[to] + 2048), round, to);
        while (*(volatile int *)(mine + 2048) != round)
            ;
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++)
                AT_ASSERT((unsigned char)mine[r * (C + 8) + c] ==
                              at_byte((unsigned)(round * 13 + from),
                                      (size_t)(r * C + c)),
                          "PutS_flag round %d [%d][%d]", round, r, c);
        ARMCI_Barrier();
    }
}

static void test_local_strided(void)
{
    unsigned char area[4000], packed[2000], back[4000];
    at_fill(area, sizeof area, 99);
    int stride[2] = {10, 70};
    int count[3] = {7, 6, 4};
    armci_write_strided(area, 2, stride, count, (char *)packed);
    size_t k = 0;
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 6; i++)
            for (int b = 0; b < 7; b++, k++)
                AT_ASSERT(packed[k] == area[j * 70 + i * 10 + b],
                          "armci_write_strided byte %zu", k);
    memset(back, 0, sizeof back);
    armci_read_strided(back, 2, stride, count, (char *)packed);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 6; i++)
            for (int b = 0; b < 10; b++) {
                int o = j * 70 + i * 10 + b;
                AT_ASSERT(back[o] == (b < 7 ? area[o] : 0),
                          "armci_read_strided byte %d", o);
            }
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    void **base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, AREA));
    unsigned char *local = malloc(AREA), *check = malloc(AREA);
    AT_ASSERT(local && check, "out of memory");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        test_shape(&shapes[i], (int)i, base, local, check);
    test_accs(base);
    test_puts_flag(base);
    test_local_strided();
    free(local);
    free(check);
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    at_finish("strided");
    return 0;
}

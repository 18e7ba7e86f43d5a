/* unit_copy.c - unit: tlm_util_copy (src/util/util_copy.c), the copy loop
 * of message buffers: every size 0..5000 at every source offset 0..64 (with
 * a destination offset that varies with both), the full offset cross
 * product for sizes around the loop's thresholds, and a few large sizes;
 * compared with the source by memcmp, guard bytes around the destination,
 * the source unchanged. */
#include "tt.h"
#include "util/util.h"

#define MAXN (8u << 20)
#define PAD 256

static uint8_t *srcbuf, *dstbuf, *ref;
static long fails;

static void one(size_t n, size_t so, size_t dof)
{
    uint8_t *s = srcbuf + PAD + so, *d = dstbuf + PAD + dof;
    /* Destination: guards before/after, junk inside. */
    memset(dstbuf + PAD + dof - 64, 0xa5, 64);
    memset(d, 0x5a, n);
    memset(d + n, 0xc3, 64);
    tlm_util_copy(d, s, n);
    int bad = memcmp(d, s, n) != 0;
    for (int i = 0; i < 64 && !bad; i++)
        bad = d[-1 - i] != 0xa5 || d[n + (size_t)i] != 0xc3;
    if (!bad && memcmp(s, ref + PAD + so, n) != 0)
        bad = 2;
    if (bad && fails++ < 10)
        fprintf(stderr, "FAIL: tlm_util_copy(dst+%zu, src+%zu, %zu): %s\n",
                dof, so, n, bad == 2 ? "source changed" : "wrong result");
}

int main(void)
{
    srcbuf = aligned_alloc(4096, MAXN + 8192);
    dstbuf = aligned_alloc(4096, MAXN + 8192);
    ref = aligned_alloc(4096, MAXN + 8192);
    if (!srcbuf || !dstbuf || !ref)
        return 1;
    tt_pat_fill(srcbuf, MAXN + 8192, 0x1234, 0);
    memcpy(ref, srcbuf, MAXN + 8192);
    long count = 0;
    for (size_t n = 0; n <= 5000; n++)
        for (size_t so = 0; so <= 64; so++, count++)
            one(n, so, (so * 13 + n) % 65);
    static const size_t edge[] = {0, 1, 15, 16, 63, 64, 127, 128, 129,
                                  511, 512, 513, 575, 576, 577, 4095, 4096,
                                  4097};
    for (size_t e = 0; e < sizeof edge / sizeof edge[0]; e++)
        for (size_t so = 0; so <= 64; so++)
            for (size_t dof = 0; dof <= 64; dof++, count++)
                one(edge[e], so, dof);
    static const size_t large[] = {65536, 65537, 262147, 1048576 + 17,
                                   MAXN - 64};
    static const size_t offs[][2] = {{0, 0}, {1, 0}, {0, 1}, {7, 63},
                                     {33, 17}, {64, 3}};
    for (size_t l = 0; l < sizeof large / sizeof large[0]; l++)
        for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++, count++)
            one(large[l], offs[o][0], offs[o][1]);
    free(srcbuf);
    free(dstbuf);
    free(ref);
    if (fails) {
        fprintf(stderr, "%ld of %ld copies wrong\n", fails, count);
        return 1;
    }
    printf("PASS: %ld copies\n", count);
    return 0;
}

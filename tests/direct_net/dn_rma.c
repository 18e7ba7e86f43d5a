/* dn_rma.c - multi-process white-box test of the ofi-rma / ucx-rma drivers
 * (ofi_direct.c, ucx_direct.c) without core's direct-path choice:
 * each rank exposes its telemem_malloc_all block through the driver of the
 * transport that reaches its neighbours, keys go round with
 * telemem_allgather, then every rank writes chains (contiguous,
 * block-stride with positive and negative strides, random multi-segment
 * chains) into its right neighbour's block and reads chains from its left
 * neighbour's, and each result is compared, byte for byte over the whole
 * block (guards included), with the reference loop.  Also: flush of a peer
 * with nothing outstanding answers at once, flush(-1) covers everything,
 * and with --released a write or read under a key the initiator has
 * released is refused by the driver, never attempted (the target's block
 * is unchanged).
 *
 * usage: dn_rma [--expect=ofi-rma|ucx-rma] [--released] [--random=N] */
#include "dn.h"

#define BLOCK ((4u << 20) + (64u << 10))
#define MAXSEGS 8

typedef struct dn_case {
    tlm_direct_seg_t segs[MAXSEGS]; /* offsets, not addresses */
    int nsegs;
    const char *what;
} dn_case_t;

static const size_t contig[] = {1, 8, 63, 4095, 4096, 65537, 1u << 20,
                                4u << 20};
#define NCONTIG (int)(sizeof(contig) / sizeof(contig[0]))

/* One segment at the cursors (both sides kept disjoint, so the result does
 * not depend on the order the network applies blocks in). */
static void add_seg(dn_case_t *c, size_t *lcur, size_t *rcur, size_t block,
                    size_t count, size_t lstride, size_t rstride, int lneg,
                    int rneg)
{
    tlm_direct_seg_t *g = &c->segs[c->nsegs++];
    size_t lext = count ? (count - 1) * lstride + block : 0;
    size_t rext = count ? (count - 1) * rstride + block : 0;
    g->block = block;
    g->count = count;
    g->local = *lcur + (lneg && count ? (count - 1) * lstride : 0);
    g->remote = *rcur + (rneg && count ? (count - 1) * rstride : 0);
    g->local_stride = lneg ? -(ptrdiff_t)lstride : (ptrdiff_t)lstride;
    g->remote_stride = rneg ? -(ptrdiff_t)rstride : (ptrdiff_t)rstride;
    *lcur += lext + 24;
    *rcur += rext + 40;
    TT_ASSERT(*lcur < BLOCK && *rcur < BLOCK, "case does not fit");
}

/* Case i: the same on every rank (depends only on i and the seed). */
static void make_case(int i, dn_case_t *c)
{
    memset(c, 0, sizeof(*c));
    size_t lcur = 7 + (size_t)(i % 5) * 3, rcur = 13 + (size_t)(i % 7) * 5;
    if (i < NCONTIG) {
        c->what = "contiguous";
        add_seg(c, &lcur, &rcur, contig[i], 1, 0, 0, 0, 0);
        return;
    }
    i -= NCONTIG;
    switch (i) {
    case 0:
        c->what = "block-stride 8 B x 1000";
        add_seg(c, &lcur, &rcur, 8, 1000, 16, 24, 0, 0);
        return;
    case 1:
        c->what = "block-stride 3000 B x 50";
        add_seg(c, &lcur, &rcur, 3000, 50, 4096, 5000, 0, 0);
        return;
    case 2:
        c->what = "block-stride, negative local stride";
        add_seg(c, &lcur, &rcur, 100, 300, 128, 100, 1, 0);
        return;
    case 3:
        c->what = "block-stride, negative remote stride";
        add_seg(c, &lcur, &rcur, 512, 64, 512, 1000, 0, 1);
        return;
    case 4:
        c->what = "block-stride 64 KiB x 20";
        add_seg(c, &lcur, &rcur, 65536, 20, 65536 + 8, 65536 + 4096, 0, 0);
        return;
    case 5:
        c->what = "zero counts and blocks in a chain";
        add_seg(c, &lcur, &rcur, 16, 0, 16, 16, 0, 0);
        add_seg(c, &lcur, &rcur, 0, 5, 16, 16, 0, 0);
        add_seg(c, &lcur, &rcur, 33, 3, 40, 50, 0, 0);
        return;
    default:
        break;
    }
    c->what = "random chain";
    tt_rng_t r;
    tt_rng_seed(&r, tt_key(tt_seed(), 0xd1, (uint64_t)i, 0));
    int n = 1 + (int)tt_rng_below(&r, MAXSEGS);
    for (int s = 0; s < n; s++) {
        size_t block = 1 + tt_rng_below(&r, tt_rng_below(&r, 4) ? 300 : 9000);
        size_t count = 1 + tt_rng_below(&r, 120);
        size_t ls = block + tt_rng_below(&r, 64);
        size_t rs = block + tt_rng_below(&r, 200);
        add_seg(c, &lcur, &rcur, block, count, ls, rs,
                (int)tt_rng_below(&r, 4) == 0, (int)tt_rng_below(&r, 4) == 0);
    }
}

/* The chain as addresses for the driver. */
static void to_addrs(const dn_case_t *c, uint8_t *lbase, uint8_t *rbase,
                     tlm_direct_seg_t *out)
{
    for (int s = 0; s < c->nsegs; s++) {
        out[s] = c->segs[s];
        out[s].local += (uintptr_t)lbase;
        out[s].remote += (uintptr_t)rbase;
    }
}

static void check_equal(const uint8_t *got, const uint8_t *want, size_t n,
                        int ci, const char *what, const char *dir)
{
    if (memcmp(got, want, n) == 0)
        return;
    size_t k = 0;
    while (got[k] == want[k])
        k++;
    TT_FAIL("case %d (%s, %s): byte %zu is %#x, reference %#x", ci, what,
            dir, k, got[k], want[k]);
}

int main(int argc, char **argv)
{
    const char *want = NULL;
    int released = 0, nrandom = 20;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--expect=", 9) == 0)
            want = argv[i] + 9;
        else if (strcmp(argv[i], "--released") == 0)
            released = 1;
        else if (strncmp(argv[i], "--random=", 9) == 0)
            nrandom = atoi(argv[i] + 9);
        else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: dn_rma [--expect=DRIVER] [--released] "
                   "[--random=N]\n");
            return 0;
        }
    }
    tt_init(&argc, &argv, "dn_rma");
    int me = tt_me, n = tt_n;
    if (n < 2)
        tt_skip("needs at least 2 ranks");
    int right = (me + 1) % n, left = (me + n - 1) % n;
    tlm_direct_t *d = dn_driver(right, want);
    TT_ASSERT(dn_driver(left, want) == d, "one driver per transport");

    void **bases = calloc((size_t)n, sizeof(void *));
    dn_key_t *keys = calloc((size_t)n, sizeof(dn_key_t));
    uint8_t *src = malloc(BLOCK), *ref = malloc(BLOCK),
            *img = malloc(BLOCK);
    TT_ASSERT(bases && keys && src && ref && img, "no memory");
    TT_CHECK(telemem_malloc_all(BLOCK, bases));
    uint8_t *mine = bases[me];

    tlm_direct_mr_t *mr;
    uint8_t key[TLM_DIRECT_KEY_MAX];
    size_t klen = 0;
    /* Core may expose the block too (its own path choice): compare the
     * cache with this baseline rather than with empty. */
    const tlm_regcache_t *cache = dn_cache(d);
    size_t base_bytes = cache->bytes, base_entries = cache->entries;
    TT_CHECK(d->ops->expose(d, mine, BLOCK, &mr, key, &klen));
    dn_exchange(key, klen, keys);
    tlm_direct_rkey_t *rk_right, *rk_left;
    TT_CHECK(d->ops->import(d, right, (uintptr_t)bases[right], BLOCK,
                            keys[right].bytes, keys[right].len, &rk_right));
    TT_CHECK(d->ops->import(d, left, (uintptr_t)bases[left], BLOCK,
                            keys[left].bytes, keys[left].len, &rk_left));
    if (me == 0)
        tt_log("driver %s, key %zu bytes, %s", d->name, klen,
               d->sync ? "synchronous" : "asynchronous");

    /* Nothing outstanding: flush answers at once. */
    TT_CHECK(d->ops->flush(d, right));
    TT_CHECK(d->ops->flush(d, -1));

    int ncases = NCONTIG + 6 + nrandom;
    long agains = 0;
    for (int ci = 0; ci < ncases; ci++) {
        dn_case_t c;
        tlm_direct_seg_t segs[MAXSEGS];
        make_case(ci, &c);

        /* Write: me -> right; verified by right (who knows my pattern). */
        dn_fill(mine, BLOCK, tt_key(tt_seed(), (uint64_t)me, (uint64_t)ci, 1));
        dn_fill(src, BLOCK, tt_key(tt_seed(), (uint64_t)me, (uint64_t)ci, 2));
        TT_CHECK(telemem_barrier());
        to_addrs(&c, src, bases[right], segs);
        TT_CHECK(d->ops->write(d, right, rk_right, segs, c.nsegs));
        if (n > 2) /* a peer with nothing outstanding is not held up */
            TT_CHECK(d->ops->flush(d, left));
        TT_CHECK(dn_flush(d, ci % 2 ? -1 : right, &agains));
        TT_CHECK(telemem_barrier());
        dn_fill(ref, BLOCK, tt_key(tt_seed(), (uint64_t)me, (uint64_t)ci, 1));
        dn_fill(img, BLOCK,
                tt_key(tt_seed(), (uint64_t)left, (uint64_t)ci, 2));
        dn_reference(img, ref, c.segs, c.nsegs, 1);
        check_equal(mine, ref, BLOCK, ci, c.what, "write");

        /* Read: me <- left's block (filled with left's pattern 3). */
        dn_fill(mine, BLOCK, tt_key(tt_seed(), (uint64_t)me, (uint64_t)ci, 3));
        memset(src, 0xa5, BLOCK);
        TT_CHECK(telemem_barrier());
        to_addrs(&c, src, bases[left], segs);
        TT_CHECK(d->ops->read(d, left, rk_left, segs, c.nsegs));
        TT_CHECK(dn_flush(d, left, &agains));
        memset(ref, 0xa5, BLOCK);
        dn_fill(img, BLOCK,
                tt_key(tt_seed(), (uint64_t)left, (uint64_t)ci, 3));
        dn_reference(ref, img, c.segs, c.nsegs, 0);
        check_equal(src, ref, BLOCK, ci, c.what, "read");
        TT_CHECK(telemem_barrier()); /* left's block may change now */
    }
    if (me == 0)
        tt_log("%d cases written and read back; flush said again %ld "
               "times", ncases, agains);

    if (released) {
        /* Rank 0 releases its key to rank 1, then writes under it: the
         * driver refuses (TELEMEM_ERR_INVALID_ARG), nothing is in flight,
         * and rank 1's block is unchanged. */
        dn_fill(mine, BLOCK, tt_key(tt_seed(), (uint64_t)me, 99, 1));
        TT_CHECK(telemem_barrier());
        if (me == 0) {
            tlm_direct_seg_t g = {.local = (uintptr_t)src,
                                  .remote = (uintptr_t)bases[right] + 4096,
                                  .block = 64, .count = 1};
            memset(src, 0x5a, 64);
            d->ops->release(d, rk_right);
            TT_EXPECT(d->ops->write(d, right, rk_right, &g, 1),
                      TELEMEM_ERR_INVALID_ARG);
            TT_EXPECT(d->ops->read(d, right, rk_right, &g, 1),
                      TELEMEM_ERR_INVALID_ARG);
            TT_CHECK(d->ops->flush(d, right)); /* nothing in flight */
            rk_right = NULL;
        }
        TT_CHECK(telemem_barrier());
        dn_fill(ref, BLOCK, tt_key(tt_seed(), (uint64_t)me, 99, 1));
        TT_ASSERT(memcmp(mine, ref, BLOCK) == 0,
                  "a write under a released key changed rank %d's block", me);
        if (me == 0)
            tt_log("write and read under a released key refused");
    }

    if (rk_right)
        d->ops->release(d, rk_right);
    d->ops->release(d, rk_left);
    if (mr)
        d->ops->unexpose(d, mr);
    TT_CHECK(telemem_barrier());
    TT_ASSERT(cache->bytes == base_bytes && cache->entries == base_entries,
              "%zu bytes in %zu registrations after unexpose, %zu in %zu "
              "before expose", cache->bytes, cache->entries, base_bytes,
              base_entries);
    TT_CHECK(telemem_free_all(mine));
    TT_ASSERT(cache->bytes == 0 && cache->entries == 0,
              "%zu bytes in %zu registrations left after the last free",
              cache->bytes, cache->entries);
    free(bases);
    free(keys);
    free(src);
    free(ref);
    free(img);
    if (me == 0)
        tt_log("PASS");
    tt_finalize();
    return 0;
}

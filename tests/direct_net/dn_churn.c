/* dn_churn.c - multi-process white-box test of the direct-path drivers'
 * registration cache under allocate/free churn: blocks of mixed sizes are
 * allocated with telemem_malloc_all, exposed (or refused when the cap
 * TELEMEM_REG_CACHE_MAX, set small by the test run, is full), used for a
 * write to the right neighbour, and freed, with up to three alive at a
 * time.  The registered bytes never pass the cap, a refusal happens only
 * when the block really does not fit, and after the last free nothing is
 * left registered.
 *
 * usage: dn_churn [--expect=ofi-rma|ucx-rma] [--iters=N] */
#include "dn.h"

#define LIVE 3

typedef struct blk {
    void **bases;
    size_t size;
    tlm_direct_mr_t *mr;       /* NULL: not exposed (refused) */
    dn_key_t *keys;
} blk_t;

static const size_t sizes[] = {4096, 65536, 300000, 700000, 2u << 20, 12345};

static void put_block(tlm_direct_t *d, blk_t *b)
{
    if (b->mr)
        d->ops->unexpose(d, b->mr);
    TT_CHECK(telemem_free_all(b->bases[tt_me]));
    free(b->bases);
    free(b->keys);
    memset(b, 0, sizeof(*b));
}

int main(int argc, char **argv)
{
    const char *want = NULL;
    int iters = 60;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--expect=", 9) == 0)
            want = argv[i] + 9;
        else if (strncmp(argv[i], "--iters=", 8) == 0)
            iters = atoi(argv[i] + 8);
        else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: dn_churn [--expect=DRIVER] [--iters=N]\n");
            return 0;
        }
    }
    tt_init(&argc, &argv, "dn_churn");
    int me = tt_me, n = tt_n;
    if (n < 2)
        tt_skip("needs at least 2 ranks");
    int right = (me + 1) % n, left = (me + n - 1) % n;
    tlm_direct_t *d = dn_driver(right, want);
    const tlm_regcache_t *cache = dn_cache(d);
    const size_t cap = cache->cap;
    if (cap > (8u << 20))
        tt_skip("run with a small TELEMEM_REG_CACHE_MAX (the test sets 1m)");
    blk_t live[LIVE];
    memset(live, 0, sizeof live);
    tt_rng_t r;
    tt_rng_seed(&r, tt_seed());
    long exposed = 0, refused = 0;
    uint8_t src[64];
    for (int it = 0; it < iters; it++) {
        blk_t *b = &live[it % LIVE];
        if (b->bases)
            put_block(d, b);
        b->size = sizes[tt_rng_below(&r, sizeof(sizes) / sizeof(sizes[0]))];
        b->bases = calloc((size_t)n, sizeof(void *));
        b->keys = calloc((size_t)n, sizeof(dn_key_t));
        TT_ASSERT(b->bases && b->keys, "no memory");
        TT_CHECK(telemem_malloc_all(b->size, b->bases));
        uint8_t *mine = b->bases[me];
        memset(mine, 0, b->size);
        uint8_t key[TLM_DIRECT_KEY_MAX];
        size_t klen = 0;
        size_t before = cache->bytes;
        uintptr_t lo = (uintptr_t)mine & ~(uintptr_t)4095;
        size_t need = TLM_ALIGN_UP((uintptr_t)mine + b->size, 4096) - lo;
        int rc = d->ops->expose(d, mine, b->size, &b->mr, key, &klen);
        if (rc == TELEMEM_ERR_UNSUPPORTED) {
            /* Refused: only if it could not fit beside the blocks in use. */
            size_t used = 0;
            for (int k = 0; k < LIVE; k++)
                if (live[k].mr && &live[k] != b)
                    used += ((tlm_regcache_entry_t *)(void *)live[k].mr)->hi -
                            ((tlm_regcache_entry_t *)(void *)live[k].mr)->lo;
            TT_ASSERT(used + need > cap, "iteration %d: %zu bytes refused "
                      "with %zu in use, cap %zu", it, need, used, cap);
            b->mr = NULL;
            klen = 0;
            refused++;
        } else {
            TT_CHECK(rc);
            exposed++;
        }
        TT_ASSERT(cache->bytes <= cap, "iteration %d: %zu bytes registered "
                  "(before %zu), cap %zu", it, cache->bytes, before, cap);
        dn_exchange(key, klen, b->keys);
        /* Write 64 bytes at a random offset of right's block, if exposed. */
        size_t off = tt_rng_below(&r, b->size - 64);
        if (b->keys[right].len) {
            tlm_direct_rkey_t *rk;
            TT_CHECK(d->ops->import(d, right, (uintptr_t)b->bases[right],
                                    b->size, b->keys[right].bytes,
                                    b->keys[right].len, &rk));
            dn_fill(src, 64, tt_key(tt_seed(), (uint64_t)me, (uint64_t)it, 0));
            tlm_direct_seg_t g = {.local = (uintptr_t)src,
                                  .remote = (uintptr_t)b->bases[right] + off,
                                  .block = 64, .count = 1};
            TT_CHECK(d->ops->write(d, right, rk, &g, 1));
            TT_CHECK(dn_flush(d, right, NULL));
            d->ops->release(d, rk);
        }
        TT_CHECK(telemem_barrier());
        if (b->keys[me].len) {
            uint8_t want_bytes[64];
            dn_fill(want_bytes, 64,
                    tt_key(tt_seed(), (uint64_t)left, (uint64_t)it, 0));
            TT_ASSERT(memcmp(mine + off, want_bytes, 64) == 0,
                      "iteration %d: rank %d's write missing", it, left);
        }
    }
    for (int k = 0; k < LIVE; k++)
        if (live[k].bases)
            put_block(d, &live[k]);
    TT_ASSERT(cache->bytes == 0 && cache->entries == 0,
              "%zu bytes in %zu registrations left after the last free",
              cache->bytes, cache->entries);
    TT_ASSERT(cache->peak <= cap, "peak %zu above cap %zu", cache->peak, cap);
    tt_log("%d blocks: %ld exposed, %ld refused (cap %zu), peak %zu bytes, "
           "%lu registrations, %lu evictions", iters, exposed, refused, cap,
           cache->peak, cache->misses, cache->evictions);
    tt_finalize();
    return 0;
}

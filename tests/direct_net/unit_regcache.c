/* unit_regcache.c - unit: the direct path's registration cache
 * (src/backends/regcache.c) with bookkeeping callbacks that record every
 * registration: hits on covering entries, page rounding, least recently
 * used eviction of unused entries only, refusal above the cap, flush of a
 * range, and a long random allocate/use/free churn whose registered bytes
 * never pass the cap and whose registrations are all given back. */
#include "tt.h"
#include "backends/regcache.h"

#define PG 4096u
#define MAXREG 200000

typedef struct fake {
    long live;            /* registrations not yet deregistered */
    size_t bytes;         /* their size */
    long regs, deregs;
    int fail_next;        /* the next reg fails */
    size_t len[MAXREG];   /* by handle - 1 */
} fake_t;

static int fake_reg(void *arg, uintptr_t lo, size_t len, void **h)
{
    fake_t *f = arg;
    TT_ASSERT(lo % PG == 0 && len % PG == 0, "unaligned registration");
    if (f->fail_next) {
        f->fail_next = 0;
        return TELEMEM_ERR_TRANSPORT;
    }
    TT_ASSERT(f->regs < MAXREG, "too many registrations for the fake");
    f->len[f->regs] = len;
    f->regs++;
    f->live++;
    f->bytes += len;
    *h = (void *)(uintptr_t)f->regs;
    return TELEMEM_OK;
}

static void fake_dereg(void *arg, void *h)
{
    fake_t *f = arg;
    uintptr_t i = (uintptr_t)h;
    TT_ASSERT(i >= 1 && i <= (uintptr_t)f->regs && f->len[i - 1],
              "deregistration of an unknown handle %lu", (unsigned long)i);
    f->bytes -= f->len[i - 1];
    f->len[i - 1] = 0;
    f->live--;
    f->deregs++;
}

static void basics(void)
{
    fake_t *f = calloc(1, sizeof(*f));
    tlm_regcache_t c;
    tlm_regcache_entry_t *a, *b, *x, *y;
    TT_CHECK(tlm_regcache_init(&c, 4 * PG, PG, fake_reg, fake_dereg, f));
    TT_EXPECT(tlm_regcache_init(&c, 1, 3000, fake_reg, fake_dereg, f),
              TELEMEM_ERR_INVALID_ARG);
    TT_CHECK(tlm_regcache_init(&c, 4 * PG, PG, fake_reg, fake_dereg, f));
    TT_EXPECT(tlm_regcache_get(&c, 0x10000, 0, &a), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(tlm_regcache_get(&c, UINTPTR_MAX - 10, 100, &a),
              TELEMEM_ERR_INVALID_ARG);
    /* Rounded out to pages: 0x10010 + 5000 spans two pages. */
    TT_CHECK(tlm_regcache_get(&c, 0x10010, 5000, &a));
    TT_ASSERT(a->lo == 0x10000 && a->hi == 0x12000 && c.bytes == 2 * PG,
              "rounding: [%#lx, %#lx)", (unsigned long)a->lo,
              (unsigned long)a->hi);
    /* A covered range is a hit on the same entry. */
    TT_CHECK(tlm_regcache_get(&c, 0x11000, 100, &b));
    TT_ASSERT(b == a && a->refs == 2 && c.hits == 1 && f->regs == 1, "hit");
    tlm_regcache_put(&c, b);
    tlm_regcache_put(&c, a);
    TT_ASSERT(a->refs == 0 && f->live == 1, "unused entries stay cached");
    /* Two more pages: fits (4 pages). */
    TT_CHECK(tlm_regcache_get(&c, 0x20000, 2 * PG, &x));
    TT_ASSERT(c.bytes == 4 * PG, "bytes %zu", c.bytes);
    /* One more page: the unused entry a (least recently used) goes. */
    TT_CHECK(tlm_regcache_get(&c, 0x30000, 1, &y));
    TT_ASSERT(c.evictions == 1 && c.bytes == 3 * PG && f->live == 2,
              "eviction of the unused entry");
    /* x and y are in use: 2 pages more cannot fit, nothing evicted. */
    TT_EXPECT(tlm_regcache_get(&c, 0x40000, 2 * PG, &a),
              TELEMEM_ERR_UNSUPPORTED);
    TT_ASSERT(c.refused == 1 && f->live == 2 && x->refs == 1 && y->refs == 1,
              "in-use entries were touched");
    /* Larger than the cap: refused outright. */
    TT_EXPECT(tlm_regcache_get(&c, 0x100000, 5 * PG, &a),
              TELEMEM_ERR_UNSUPPORTED);
    /* A failing registration passes its status up, leaves nothing. */
    f->fail_next = 1;
    TT_EXPECT(tlm_regcache_get(&c, 0x50000, 1, &a), TELEMEM_ERR_TRANSPORT);
    TT_ASSERT(c.entries == 2 && c.bytes == 3 * PG, "failed reg left state");
    /* LRU order: use x again after y; free both; a new 3-page range must
     * evict y first (least recent), then x. */
    tlm_regcache_put(&c, y);
    tlm_regcache_put(&c, x);
    TT_CHECK(tlm_regcache_get(&c, 0x20000, 10, &x)); /* x most recent */
    tlm_regcache_put(&c, x);
    TT_CHECK(tlm_regcache_get(&c, 0x60000, 2 * PG, &a));
    TT_ASSERT(c.entries == 2 && c.head == a && c.head->next == x,
              "LRU order: expected y evicted, x kept");
    /* Flush drops unused overlapping entries only. */
    TT_ASSERT(tlm_regcache_flush(&c, 0x60000, PG) == 0, "flushed in use");
    TT_ASSERT(tlm_regcache_flush(&c, 0x21000, 1) == 1, "flush x");
    TT_ASSERT(c.entries == 1 && c.bytes == 2 * PG, "after flush");
    TT_ASSERT(tlm_regcache_fini(&c) == 1, "fini counts a in use");
    TT_ASSERT(f->live == 0 && f->bytes == 0 && f->regs == f->deregs,
              "fini left %ld registrations", f->live);
    free(f);
}

/* Random churn: up to 16 live users of random ranges in a 64 MiB space,
 * cap 1 MiB; bytes never above the cap; everything given back. */
static void churn(void)
{
    fake_t *f = calloc(1, sizeof(*f));
    tlm_regcache_t c;
    const size_t cap = 1u << 20;
    TT_CHECK(tlm_regcache_init(&c, cap, PG, fake_reg, fake_dereg, f));
    tlm_regcache_entry_t *live[16] = {0};
    tt_rng_t r;
    tt_rng_seed(&r, tt_seed());
    long ok = 0, refused = 0;
    for (int it = 0; it < 200000; it++) {
        int k = (int)tt_rng_below(&r, 16);
        if (live[k]) {
            tlm_regcache_put(&c, live[k]);
            live[k] = NULL;
            continue;
        }
        /* Mostly a few hot ranges (hits), sometimes a fresh one. */
        uintptr_t addr = tt_rng_below(&r, 4)
                             ? 0x1000000u + tt_rng_below(&r, 8) * 0x40000u
                             : 0x1000000u + tt_rng_below(&r, 64u << 20);
        size_t len = 1 + tt_rng_below(&r, 256u << 10);
        int rc = tlm_regcache_get(&c, addr, len, &live[k]);
        if (rc == TELEMEM_OK) {
            ok++;
            TT_ASSERT(live[k]->lo <= addr && addr + len <= live[k]->hi,
                      "entry does not cover the range");
        } else {
            TT_ASSERT(rc == TELEMEM_ERR_UNSUPPORTED, "status %d", rc);
            live[k] = NULL;
            refused++;
        }
        TT_ASSERT(c.bytes <= cap && f->bytes == c.bytes &&
                      (size_t)f->live == c.entries,
                  "iteration %d: %zu bytes (fake %zu), cap %zu", it, c.bytes,
                  f->bytes, cap);
    }
    for (int k = 0; k < 16; k++)
        if (live[k])
            tlm_regcache_put(&c, live[k]);
    TT_ASSERT(c.peak <= cap, "peak %zu", c.peak);
    tlm_regcache_flush(&c, 0, 0);
    TT_ASSERT(c.entries == 0 && c.bytes == 0 && f->live == 0,
              "%ld registrations left", f->live);
    TT_ASSERT(tlm_regcache_fini(&c) == 0, "in use at fini");
    printf("churn: %ld taken, %ld refused, %lu hits, %lu misses, %lu "
           "evictions, peak %zu of %zu bytes\n", ok, refused, c.hits,
           c.misses, c.evictions, c.peak, cap);
    TT_ASSERT(c.hits > 0 && c.evictions > 0 && refused > 0,
              "churn did not exercise hits, evictions and refusals");
    free(f);
}

int main(void)
{
    basics();
    churn();
    printf("PASS\n");
    return 0;
}

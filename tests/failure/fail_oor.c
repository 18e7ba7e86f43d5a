/* fail_oor.c - failure: requests outside the target's regions.  Each rank
 * aims bad puts and gets at its right neighbour (at itself when alone):
 * before a block, straddling its end, a random address, NULL + 16, a 1-byte
 * put into a 0-byte block, a range spanning two adjacent registered
 * regions, and 8 MiB ranges straddling either end of a registered 8 MiB
 * region (fragmented).  Each must be refused: put -> the next quiet or
 * fence returns TELEMEM_ERR_OUT_OF_RANGE (a put to self: the call itself),
 * put_nb -> wait, get -> the call, get_nb -> wait/test, get_nbi -> quiet;
 * the target's memory and guard bytes are untouched, the get destination
 * too, and afterwards the job carries on: a valid put lands and quiet
 * returns OK again. */
#include "tt.h"

#define BN (64 * 1024)          /* malloc_all block */
#define RN (8u << 20)           /* registered region */
#define RG_BEFORE 4096          /* our memory before it */
#define RG_AFTER ((4u << 20) + 4096) /* and after it */
#define AN 100                  /* two adjacent registered regions */

typedef struct {
    uint8_t *b, *z, *r, *adj;
} addrs_t;

static int me, n, target, source;
static uint64_t seed;
static addrs_t *all;
static uint8_t *heap, *adjbuf, *src, *dst;
static void **bases, **zbases;
static int ncase;

static void fill_target(void)
{
    tt_pat_fill(bases[me], BN, tt_key(seed, 1, me, 0), 0);
    tt_pat_fill(heap, RG_BEFORE + RN + RG_AFTER, tt_key(seed, 2, me, 0), 0);
    tt_pat_fill(adjbuf, 4 * AN, tt_key(seed, 3, me, 0), 0);
}

/* After each case: a valid put of a marker must work, quiet is OK again;
 * the target checks the marker and that nothing else changed. */
static void finish_case(const char *what)
{
    uint64_t marker = tt_key(seed, 9, me, ncase);
    uint8_t *tb = all[target].b;
    TT_CHECK(telemem_put(target, tb + BN - 8, &marker, 8));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    uint64_t want = tt_key(seed, 9, source, ncase), got;
    uint8_t *b = bases[me];
    memcpy(&got, b + BN - 8, 8);
    char lab[120];
    snprintf(lab, sizeof lab, "case %d (%s): target block", ncase, what);
    TT_ASSERT(got == want, "%s: the valid put after the refused one did "
              "not land", lab);
    TT_ASSERT(!tt_pat_verify(b, BN - 8, tt_key(seed, 1, me, 0), 0, lab),
              "%s changed", lab);
    snprintf(lab, sizeof lab, "case %d (%s): registered region and guards",
             ncase, what);
    TT_ASSERT(!tt_pat_verify(heap, RG_BEFORE + RN + RG_AFTER,
                             tt_key(seed, 2, me, 0), 0, lab), "%s changed",
              lab);
    snprintf(lab, sizeof lab, "case %d (%s): adjacent regions", ncase, what);
    TT_ASSERT(!tt_pat_verify(adjbuf, 4 * AN, tt_key(seed, 3, me, 0), 0, lab),
              "%s changed", lab);
    /* Restore the marker slot's pattern for the next case. */
    tt_pat_fill(b + BN - 8, 8, tt_key(seed, 1, me, 0), BN - 8);
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("case %d: %s refused as expected", ncase, what);
    ncase++;
}

/* A put (blocking, nbi or nb) that the target must refuse. */
static void bad_put(uint8_t *raddr, size_t len, int api, const char *what)
{
    char lab[160];
    snprintf(lab, sizeof lab, "%s, %zu bytes, %s", what, len,
             api == 0 ? "put" : api == 1 ? "put_nbi+fence" : "put_nb+wait");
    tt_pat_fill(src, len, tt_key(seed, 5, me, ncase), 0);
    if (target == me && api != 2) {
        if (api == 0)
            TT_EXPECT(telemem_put(me, raddr, src, len),
                      TELEMEM_ERR_OUT_OF_RANGE);
        else
            TT_EXPECT(telemem_put_nbi(me, raddr, src, len),
                      TELEMEM_ERR_OUT_OF_RANGE);
        TT_CHECK(telemem_quiet());
    } else if (api == 0) {
        TT_CHECK(telemem_put(target, raddr, src, len));
        TT_EXPECT(telemem_quiet(), TELEMEM_ERR_OUT_OF_RANGE);
    } else if (api == 1) {
        TT_CHECK(telemem_put_nbi(target, raddr, src, len));
        TT_EXPECT(telemem_fence(target), TELEMEM_ERR_OUT_OF_RANGE);
    } else {
        telemem_handle_t h;
        int rc = telemem_put_nb(target, raddr, src, len, &h);
        if (target == me && rc == TELEMEM_ERR_OUT_OF_RANGE) {
            /* A self put may be refused by the call. */
        } else {
            TT_CHECK(rc);
            TT_EXPECT(telemem_wait(&h), TELEMEM_ERR_OUT_OF_RANGE);
            TT_CHECK(telemem_wait(&h)); /* spent */
        }
        /* wait reported it; quiet has nothing left to report */
        TT_CHECK(telemem_quiet());
    }
    finish_case(lab);
}

/* A get that the target must refuse; the destination stays untouched. */
static void bad_get(uint8_t *raddr, size_t len, int api, const char *what)
{
    char lab[160];
    snprintf(lab, sizeof lab, "%s, %zu bytes, %s", what, len,
             api == 0 ? "get" : api == 1 ? "get_nbi+quiet"
             : api == 2 ? "get_nb+wait" : "get_nb+test");
    tt_pat_fill(dst, len, tt_key(seed, 6, me, ncase), 0);
    if (api == 0) {
        TT_EXPECT(telemem_get(target, dst, raddr, len),
                  TELEMEM_ERR_OUT_OF_RANGE);
    } else if (api == 1) {
        int rc = telemem_get_nbi(target, dst, raddr, len);
        if (!(target == me && rc == TELEMEM_ERR_OUT_OF_RANGE)) {
            TT_CHECK(rc);
            TT_EXPECT(telemem_quiet(), TELEMEM_ERR_OUT_OF_RANGE);
        }
    } else {
        telemem_handle_t h;
        int rc = telemem_get_nb(target, dst, raddr, len, &h);
        if (!(target == me && rc == TELEMEM_ERR_OUT_OF_RANGE)) {
            TT_CHECK(rc);
            if (api == 2) {
                TT_EXPECT(telemem_wait(&h), TELEMEM_ERR_OUT_OF_RANGE);
            } else {
                int done = 0;
                for (;;) {
                    rc = telemem_test(&h, &done);
                    if (done || rc != TELEMEM_OK)
                        break;
                }
                TT_ASSERT(done == 1 && rc == TELEMEM_ERR_OUT_OF_RANGE,
                          "%s: test() gave done=%d %s", lab, done,
                          telemem_status_name(rc));
            }
        }
    }
    TT_CHECK(telemem_quiet());
    TT_ASSERT(!tt_pat_verify(dst, len, tt_key(seed, 6, me, ncase), 0, lab),
              "%s: a refused get wrote its destination", lab);
    finish_case(lab);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "fail_oor");
    me = tt_me;
    n = tt_n;
    seed = tt_seed();
    target = (me + 1) % n;
    source = (me + n - 1) % n;

    bases = calloc((size_t)n, sizeof *bases);
    zbases = calloc((size_t)n, sizeof *zbases);
    TT_CHECK(telemem_malloc_all(BN, bases));
    TT_CHECK(telemem_malloc_all(0, zbases));
    heap = aligned_alloc(4096, RG_BEFORE + RN + RG_AFTER);
    adjbuf = aligned_alloc(64, 512); /* >= 4 * AN, a multiple of 64 */
    src = malloc(RN);
    dst = malloc(RN);
    TT_ASSERT(heap && adjbuf && src && dst, "out of memory");
    TT_CHECK(telemem_register(heap + RG_BEFORE, RN));
    TT_CHECK(telemem_register(adjbuf + AN, AN));
    TT_CHECK(telemem_register(adjbuf + 2 * AN, AN));
    fill_target();
    addrs_t mine = {bases[me], zbases[me], heap + RG_BEFORE, adjbuf + AN};
    all = malloc((size_t)n * sizeof *all);
    TT_CHECK(telemem_allgather(&mine, all, sizeof mine));
    TT_CHECK(telemem_barrier());

    addrs_t t = all[target];
    for (int api = 0; api < 3; api++) {
        bad_put(t.b - 16, 32, api, "straddling the start of a block");
        bad_put(t.b + BN - 10, 20, api, "straddling the end of a block");
        bad_put((uint8_t *)(uintptr_t)0x10000000, 64, api, "random address");
        bad_put((uint8_t *)(uintptr_t)16, 8, api, "NULL + 16");
    }
    bad_put(t.z, 1, 0, "1 byte into a 0-byte block");
    bad_put(t.adj + AN - 10, 20, 0, "two adjacent regions");
    bad_put(t.r + RN / 2, RN, 0, "8 MiB straddling the end of a region");
    bad_put(t.r - 1, RN, 1, "8 MiB straddling the start of a region");
    bad_put(t.r + 1, RN, 2, "8 MiB straddling the end of a region");
    for (int api = 0; api < 4; api++) {
        bad_get(t.b - 16, 32, api, "straddling the start of a block");
        bad_get(t.b + BN - 10, 20, api, "straddling the end of a block");
        bad_get((uint8_t *)(uintptr_t)16, 8, api, "NULL + 16");
    }
    bad_get(t.z, 1, 0, "1 byte from a 0-byte block");
    bad_get(t.adj + AN - 10, 20, 1, "two adjacent regions");
    bad_get(t.r + RN / 2, RN, 0, "8 MiB straddling the end of a region");
    bad_get(t.r - 1, RN, 2, "8 MiB straddling the start of a region");

    /* Several refusals before one quiet: it reports OUT_OF_RANGE once and
     * completes the valid puts in between. */
    {
        uint64_t v = 42;
        if (target != me) {
            TT_CHECK(telemem_put(target, t.b - 8, &v, 8));
            TT_CHECK(telemem_put(target, t.b + BN - 16, &v, 8));
            TT_CHECK(telemem_put(target, t.b + BN, &v, 8));
            TT_EXPECT(telemem_quiet(), TELEMEM_ERR_OUT_OF_RANGE);
            TT_CHECK(telemem_quiet());
        }
        TT_CHECK(telemem_barrier());
        uint64_t got;
        memcpy(&got, (uint8_t *)bases[me] + BN - 16, 8);
        TT_ASSERT(target == me || got == 42,
                  "a valid put between refused ones did not land");
        tt_pat_fill((uint8_t *)bases[me] + BN - 16, 8,
                    tt_key(seed, 1, me, 0), BN - 16);
    }

    /* Valid operations at the edges still work (sanity of the above). */
    TT_CHECK(telemem_put(target, t.adj, src, AN));
    TT_CHECK(telemem_put(target, t.adj + AN, src, AN));
    TT_CHECK(telemem_put(target, t.r, src, RN));
    TT_CHECK(telemem_put(target, t.z, src, 0));
    TT_CHECK(telemem_get(target, dst, t.r + RN - 1, 1));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());

    TT_CHECK(telemem_deregister(heap + RG_BEFORE));
    TT_CHECK(telemem_deregister(adjbuf + AN));
    TT_CHECK(telemem_deregister(adjbuf + 2 * AN));
    TT_CHECK(telemem_free_all(zbases[me]));
    TT_CHECK(telemem_free_all(bases[me]));
    free(heap);
    free(adjbuf);
    free(src);
    free(dst);
    free(all);
    tt_finalize();
    if (me == 0)
        tt_log("PASS: %d refused cases", ncase);
    return 0;
}

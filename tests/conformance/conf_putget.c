/* conf_putget.c - conformance: blocking put and get at every size that
 * crosses a threshold (0 B to 8 MB: inline-cell, copy-loop, message-buffer
 * and fragment boundaries for 4k and 16k buffers), at odd source and
 * destination offsets, to the right neighbour, from the left neighbour and
 * to/from self, with guard bytes around every target block. */
#include "tt.h"

/* Every size is one slot of each area.  The list sweeps each threshold
 * the library has or may have: 40-byte inline cells, 512-byte copy loop,
 * buffer size minus a header of up to 64 bytes (4k and 16k buffers), and
 * multiples of the buffer size. */
static size_t sizes[512];
static size_t nsizes;

static void add(size_t s)
{
    if (nsizes < sizeof sizes / sizeof sizes[0])
        sizes[nsizes++] = s;
}

static void add_range(size_t lo, size_t hi)
{
    for (size_t s = lo; s <= hi; s++)
        add(s);
}

static void build_sizes(void)
{
    add_range(0, 80);
    add_range(127, 129);
    add_range(255, 257);
    add_range(511, 513);
    add_range(1023, 1025);
    add_range(4031, 4033);
    add_range(4095, 4097);
    add_range(8127, 8129);
    add_range(8191, 8193);
    add_range(12287, 12289);
    add_range(16300, 16400);
    add_range(16447, 16449);
    add_range(32703, 32705);
    add_range(32767, 32769);
    add(49152);
    add_range(65535, 65537);
    add(1048573);
    add(1048576);
    add(1048579);
    add(8388608);
}

/* Offsets: {initiator-side, target-side}. */
static const size_t offs[][2] = {{0, 0}, {1, 7}, {63, 3}, {5, 61}};
#define NOFFS (sizeof offs / sizeof offs[0])

static size_t slot_off[512];
static size_t area_len;

static size_t stride_of(size_t size)
{
    return (TT_GUARD + 64 + size + TT_GUARD + 63) & ~(size_t)63;
}

static int errors;

static void note(int rc)
{
    if (rc && ++errors > 50)
        TT_FAIL("too many mismatches");
}

/* Verify one slot of an area: guard, data (key), guard. */
static void verify_slot(uint8_t *area, size_t k, size_t doff, uint64_t dkey,
                        uint64_t gkey, const char *what)
{
    char lab[200];
    uint8_t *s = area + slot_off[k];
    size_t size = sizes[k];
    snprintf(lab, sizeof lab, "%s size %zu off %zu: data", what, size, doff);
    note(tt_pat_verify(s + TT_GUARD + doff, size, dkey, 0, lab));
    snprintf(lab, sizeof lab, "%s size %zu off %zu: guard before", what, size,
             doff);
    note(tt_guard_check(s, TT_GUARD + doff, gkey, lab));
    snprintf(lab, sizeof lab, "%s size %zu off %zu: guard after", what, size,
             doff);
    note(tt_guard_check(s + TT_GUARD + doff + size, TT_GUARD, gkey + 1, lab));
}

/* Guards around a slot's data and junk in it (so a missing write shows). */
static void prepare_slot(uint8_t *area, size_t k, size_t doff, uint64_t gkey)
{
    uint8_t *s = area + slot_off[k];
    tt_guard_set(s, TT_GUARD + doff, gkey);
    tt_pat_fill(s + TT_GUARD + doff, sizes[k], gkey ^ 0x1234, 0);
    tt_guard_set(s + TT_GUARD + doff + sizes[k], TT_GUARD, gkey + 1);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_putget");
    uint64_t seed = tt_seed();
    int me = tt_me, n = tt_n;
    int right = (me + 1) % n, left = (me + n - 1) % n;

    build_sizes();
    size_t maxsize = 0;
    for (size_t k = 0; k < nsizes; k++) {
        slot_off[k] = area_len;
        area_len += stride_of(sizes[k]);
        if (sizes[k] > maxsize)
            maxsize = sizes[k];
    }

    /* Block: PUT area (written by the left neighbour), SELF area (written
     * by this rank), GET area (filled here, read by right neighbour and
     * self). */
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(3 * area_len, bases));
    uint8_t *mine = bases[me];
    uint8_t *put_area = mine, *self_area = mine + area_len,
            *get_area = mine + 2 * area_len;
    uint8_t *getn = aligned_alloc(64, area_len);  /* gets from left */
    uint8_t *gets = aligned_alloc(64, area_len);  /* gets from self */
    uint8_t *scratch = aligned_alloc(64, maxsize + 128);
    TT_ASSERT(getn && gets && scratch, "out of memory");

    /* NULL with 0 bytes is a valid no-op. */
    TT_CHECK(telemem_put(right, NULL, NULL, 0));
    TT_CHECK(telemem_get(left, NULL, NULL, 0));

    if (me == 0)
        tt_log("%zu sizes (0 .. %zu), %zu offset pairs, area %zu bytes",
               nsizes, maxsize, (size_t)NOFFS, area_len);

    for (size_t p = 0; p < NOFFS; p++) {
        size_t ioff = offs[p][0], toff = offs[p][1];
        /* Prepare this rank's target areas and its GET area contents. */
        for (size_t k = 0; k < nsizes; k++) {
            prepare_slot(put_area, k, toff, tt_key(seed, 10, me, p * 1000 + k));
            prepare_slot(self_area, k, toff, tt_key(seed, 11, me, p * 1000 + k));
            prepare_slot(getn, k, ioff, tt_key(seed, 12, me, p * 1000 + k));
            prepare_slot(gets, k, ioff, tt_key(seed, 13, me, p * 1000 + k));
            uint8_t *g = get_area + slot_off[k];
            uint64_t gk = tt_key(seed, 14, me, p * 1000 + k);
            tt_guard_set(g, TT_GUARD + toff, gk);
            tt_pat_fill(g + TT_GUARD + toff, sizes[k],
                        tt_key(seed, 3, me, p * 1000 + k), 0);
            tt_guard_set(g + TT_GUARD + toff + sizes[k], TT_GUARD, gk + 1);
        }
        TT_CHECK(telemem_barrier());

        uint8_t *rput = (uint8_t *)bases[right];
        uint8_t *rget = (uint8_t *)bases[left] + 2 * area_len;
        for (size_t k = 0; k < nsizes; k++) {
            size_t sz = sizes[k];
            tt_pat_fill(scratch + ioff, sz, tt_key(seed, 1, me, p * 1000 + k),
                        0);
            TT_CHECK(telemem_put(right, rput + slot_off[k] + TT_GUARD + toff,
                                 scratch + ioff, sz));
            tt_pat_fill(scratch + ioff, sz, tt_key(seed, 2, me, p * 1000 + k),
                        0);
            TT_CHECK(telemem_put(me, self_area + slot_off[k] + TT_GUARD + toff,
                                 scratch + ioff, sz));
            TT_CHECK(telemem_get(left, getn + slot_off[k] + TT_GUARD + ioff,
                                 rget + slot_off[k] + TT_GUARD + toff, sz));
            TT_CHECK(telemem_get(me, gets + slot_off[k] + TT_GUARD + ioff,
                                 get_area + slot_off[k] + TT_GUARD + toff, sz));
        }
        TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_barrier());

        for (size_t k = 0; k < nsizes; k++) {
            verify_slot(put_area, k, toff, tt_key(seed, 1, left, p * 1000 + k),
                        tt_key(seed, 10, me, p * 1000 + k), "put from left");
            verify_slot(self_area, k, toff, tt_key(seed, 2, me, p * 1000 + k),
                        tt_key(seed, 11, me, p * 1000 + k), "put to self");
            verify_slot(getn, k, ioff, tt_key(seed, 3, left, p * 1000 + k),
                        tt_key(seed, 12, me, p * 1000 + k), "get from left");
            verify_slot(gets, k, ioff, tt_key(seed, 3, me, p * 1000 + k),
                        tt_key(seed, 13, me, p * 1000 + k), "get from self");
            /* Gets must not disturb the source. */
            uint8_t *g = get_area + slot_off[k];
            char lab[120];
            snprintf(lab, sizeof lab, "get source size %zu", sizes[k]);
            note(tt_pat_verify(g + TT_GUARD + toff, sizes[k],
                               tt_key(seed, 3, me, p * 1000 + k), 0, lab));
        }
        /* Everyone has verified before the next round overwrites. */
        TT_CHECK(telemem_barrier());
        if (me == 0)
            tt_log("offsets (%zu, %zu) done", ioff, toff);
    }

    int all = errors;
    TT_CHECK(telemem_allreduce(&all, 1, TELEMEM_INT32, TELEMEM_SUM));
    TT_ASSERT(errors == 0, "%d mismatches on this rank", errors);
    TT_ASSERT(all == 0, "%d mismatches on other ranks", all);
    TT_CHECK(telemem_free_all(mine));
    free(getn);
    free(gets);
    free(scratch);
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

/* unit_pack_strided.c - unit_pack's strided cases: normalisation, pack /
 * unpack of random shapes whole and in fragments, the wire form and its
 * decoding of malformed input (unit_pack.c says what the test covers). */
#include "unit_pack.h"

/* ---- normalisation ------------------------------------------------------ */

/* The invariants of the normalised form, and total / extent against the
 * reference. */
static void check_norm(const ushape_t *u, const tlm_pack_desc_t *d)
{
    size_t total = ref_total(u);
    CHECK(d->total == total, "total %zu, expected %zu", d->total, total);
    CHECK(d->levels >= 0 && d->levels <= u->levels, "levels %d from %d",
          d->levels, u->levels);
    if (total == 0) {
        CHECK(d->levels == 0 && d->count[0] == 0,
              "empty: levels %d count[0] %zu", d->levels, d->count[0]);
        CHECK(tlm_pack_extent(d, LOCAL) == 0 && tlm_pack_extent(d, REMOTE) == 0,
              "empty extent not 0");
        return;
    }
    size_t prod = 1;
    for (int k = 0; k <= d->levels; k++) {
        CHECK(d->count[k] >= (k ? 2u : 1u), "count[%d] = %zu", k, d->count[k]);
        prod *= d->count[k];
    }
    CHECK(prod == total, "product of counts %zu != total %zu", prod, total);
    for (int k = 1; k <= d->levels; k++) {
        bool both = true;
        for (int s = 0; s < 2; s++) {
            size_t below =
                k == 1 ? d->count[0] : d->stride[s][k - 2] * d->count[k - 1];
            both = both && d->stride[s][k - 1] == below;
        }
        CHECK(!both, "dimension %d left unmerged", k);
    }
    for (int s = 0; s < 2; s++) {
        size_t e = ref_extent(u, s), got = tlm_pack_extent(d, s);
        CHECK(got == e, "extent side %d: %zu, expected %zu", s, got, e);
    }
}

/* One hand-made case: the expected normalised levels, counts and strides. */
static void norm_case(int levels, const size_t *count, const size_t *ls,
                      const size_t *rs, int want_rc, int want_levels,
                      const size_t *want_count, const size_t *want_ls,
                      const size_t *want_rs)
{
    tlm_pack_desc_t d;
    snprintf(what, sizeof what,
             "normalize hand case, levels %d, count[0] "
             "%zu",
             levels, count ? count[0] : 0);
    int rc = tlm_pack_normalize(&d, levels, count, ls, rs);
    CHECK(rc == want_rc, "returned %d, expected %d", rc, want_rc);
    if (rc != 0)
        return;
    CHECK(d.levels == want_levels, "levels %d, expected %d", d.levels,
          want_levels);
    size_t total = 1;
    for (int k = 0; k <= want_levels; k++) {
        CHECK(d.count[k] == want_count[k], "count[%d] %zu, expected %zu", k,
              d.count[k], want_count[k]);
        total *= want_count[k];
    }
    CHECK(d.total == total, "total %zu, expected %zu", d.total, total);
    for (int k = 0; k < want_levels; k++) {
        CHECK(d.stride[LOCAL][k] == want_ls[k],
              "local stride[%d] %zu, "
              "expected %zu",
              k, d.stride[LOCAL][k], want_ls[k]);
        CHECK(d.stride[REMOTE][k] == want_rs[k],
              "remote stride[%d] %zu, "
              "expected %zu",
              k, d.stride[REMOTE][k], want_rs[k]);
    }
}

void test_normalize_cases(void)
{
    const size_t M = SIZE_MAX;
    /* Contiguous. */
    norm_case(0, (size_t[]){5}, NULL, NULL, 0, 0, (size_t[]){5}, NULL, NULL);
    norm_case(0, (size_t[]){1}, NULL, NULL, 0, 0, (size_t[]){1}, NULL, NULL);
    /* A 2-D patch, no merge. */
    norm_case(1, (size_t[]){8, 4}, (size_t[]){16}, (size_t[]){8}, 0, 1,
              (size_t[]){8, 4}, (size_t[]){16}, (size_t[]){8});
    /* Rows contiguous on both sides: one run. */
    norm_case(2, (size_t[]){8, 4, 3}, (size_t[]){8, 32}, (size_t[]){8, 32}, 0,
              0, (size_t[]){96}, NULL, NULL);
    /* Contiguous on one side only at each level: nothing merges. */
    norm_case(2, (size_t[]){8, 4, 3}, (size_t[]){8, 32}, (size_t[]){16, 100}, 0,
              2, (size_t[]){8, 4, 3}, (size_t[]){8, 32}, (size_t[]){16, 100});
    /* Rows contiguous locally only, planes continue the rows on both
     * sides: dimension 2 merges into dimension 1. */
    norm_case(2, (size_t[]){8, 4, 3}, (size_t[]){8, 32}, (size_t[]){16, 64}, 0,
              1, (size_t[]){8, 12}, (size_t[]){8}, (size_t[]){16});
    /* Dimension 1 merges into the run, dimension 2 stays. */
    norm_case(2, (size_t[]){8, 4, 3}, (size_t[]){8, 100}, (size_t[]){8, 40}, 0,
              1, (size_t[]){32, 3}, (size_t[]){100}, (size_t[]){40});
    /* Dimension 2 merges into dimension 1 (gapped rows, planes adjacent). */
    norm_case(2, (size_t[]){8, 4, 3}, (size_t[]){16, 64}, (size_t[]){24, 96}, 0,
              1, (size_t[]){8, 12}, (size_t[]){16}, (size_t[]){24});
    /* Counts of 1 are dropped, and what they separated merges. */
    norm_case(3, (size_t[]){8, 4, 1, 3}, (size_t[]){8, 999, 32},
              (size_t[]){8, 7, 32}, 0, 0, (size_t[]){96}, NULL, NULL);
    norm_case(3, (size_t[]){8, 1, 5, 1}, (size_t[]){M, 20, 3},
              (size_t[]){0, 30, M}, 0, 1, (size_t[]){8, 5}, (size_t[]){20},
              (size_t[]){30});
    norm_case(3, (size_t[]){1, 1, 1, 1}, (size_t[]){1, 2, 3},
              (size_t[]){4, 5, 6}, 0, 0, (size_t[]){1}, NULL, NULL);
    /* 1-byte runs at stride 1 on both sides: one run. */
    norm_case(1, (size_t[]){1, 7}, (size_t[]){1}, (size_t[]){1}, 0, 0,
              (size_t[]){7}, NULL, NULL);
    /* Stride 1 on one side (transposed elsewhere) stays. */
    norm_case(1, (size_t[]){1, 7}, (size_t[]){1}, (size_t[]){9}, 0, 1,
              (size_t[]){1, 7}, (size_t[]){1}, (size_t[]){9});
    /* 8 levels of 2, everything contiguous. */
    norm_case(8, (size_t[]){4, 2, 2, 2, 2, 2, 2, 2, 2},
              (size_t[]){4, 8, 16, 32, 64, 128, 256, 512},
              (size_t[]){4, 8, 16, 32, 64, 128, 256, 512}, 0, 0,
              (size_t[]){1024}, NULL, NULL);
    /* Zero counts anywhere: empty. */
    norm_case(2, (size_t[]){8, 0, 3}, (size_t[]){8, 32}, (size_t[]){8, 32}, 0,
              0, (size_t[]){0}, NULL, NULL);
    norm_case(2, (size_t[]){0, 4, 3}, (size_t[]){8, 32}, (size_t[]){8, 32}, 0,
              0, (size_t[]){0}, NULL, NULL);
    norm_case(1, (size_t[]){M, 0}, (size_t[]){M}, (size_t[]){M}, 0, 0,
              (size_t[]){0}, NULL, NULL);
    norm_case(0, (size_t[]){0}, NULL, NULL, 0, 0, (size_t[]){0}, NULL, NULL);
    /* Invalid arguments. */
    norm_case(-1, (size_t[]){8}, NULL, NULL, -1, 0, NULL, NULL, NULL);
    norm_case(9, (size_t[]){8, 2, 2, 2, 2, 2, 2, 2, 2, 2},
              (size_t[]){8, 16, 32, 64, 128, 256, 512, 1024, 2048},
              (size_t[]){8, 16, 32, 64, 128, 256, 512, 1024, 2048}, -1, 0, NULL,
              NULL, NULL);
    norm_case(1, NULL, (size_t[]){8}, (size_t[]){8}, -1, 0, NULL, NULL, NULL);
    norm_case(1, (size_t[]){8, 2}, NULL, (size_t[]){8}, -1, 0, NULL, NULL,
              NULL);
    norm_case(1, (size_t[]){8, 2}, (size_t[]){8}, NULL, -1, 0, NULL, NULL,
              NULL);
    /* Overflow: total, then either side's extent. */
    norm_case(1, (size_t[]){M / 2 + 1, 2}, (size_t[]){M / 2 + 1},
              (size_t[]){M / 2 + 1}, -1, 0, NULL, NULL, NULL);
    norm_case(2, (size_t[]){1 << 20, 1 << 22, 1 << 22},
              (size_t[]){1 << 20, 1 << 23}, (size_t[]){1 << 21, 1 << 24}, -1, 0,
              NULL, NULL, NULL);
    norm_case(1, (size_t[]){8, 2}, (size_t[]){M - 4}, (size_t[]){8}, -1, 0,
              NULL, NULL, NULL);
    norm_case(1, (size_t[]){8, 2}, (size_t[]){16}, (size_t[]){M - 7}, -1, 0,
              NULL, NULL, NULL);
    norm_case(1, (size_t[]){8, 3}, (size_t[]){16}, (size_t[]){M / 2}, -1, 0,
              NULL, NULL, NULL);
    norm_case(2, (size_t[]){8, 2, 3}, (size_t[]){16, M / 2}, (size_t[]){16, 32},
              -1, 0, NULL, NULL, NULL);
    /* ... and the largest extent that fits. */
    norm_case(1, (size_t[]){8, 2}, (size_t[]){M - 8}, (size_t[]){8}, 0, 1,
              (size_t[]){8, 2}, (size_t[]){M - 8}, (size_t[]){8});
    /* A stride product that overflows (2^63 * 2 wraps to 0) is not
     * "contiguous". */
    norm_case(2, (size_t[]){1, 2, 2}, (size_t[]){M / 2 + 1, 0},
              (size_t[]){M / 2 + 1, 0}, 0, 2, (size_t[]){1, 2, 2},
              (size_t[]){M / 2 + 1, 0}, (size_t[]){M / 2 + 1, 0});

    tlm_pack_desc_t d;
    snprintf(what, sizeof what, "normalize NULL descriptor");
    CHECK(tlm_pack_normalize(NULL, 0, (size_t[]){1}, NULL, NULL) == -1,
          "NULL d accepted");
    /* Extent by the formula on a hand case: 8 + 3*100 + 2*1000. */
    CHECK(tlm_pack_normalize(&d, 2, (size_t[]){8, 4, 3}, (size_t[]){100, 1000},
                             (size_t[]){8, 32}) == 0,
          "extent case rejected");
    CHECK(tlm_pack_extent(&d, LOCAL) == 2308 &&
              tlm_pack_extent(&d, REMOTE) == 96,
          "extent %zu / %zu, expected 2308 / 96", tlm_pack_extent(&d, LOCAL),
          tlm_pack_extent(&d, REMOTE));
    CHECK(!tlm_pack_is_contig(&d), "2-D patch contiguous");
}

/* ---- pack / unpack of one shape ----------------------------------------- */

/* The packing callback of tlm_pack_walk, as its contract describes it. */
struct walk_chk {
    char *next_buf;
    size_t bytes;
};

static void walk_pack_cb(void *arg, char *mem, size_t stride, char *buf,
                         size_t run, size_t rows)
{
    struct walk_chk *w = arg;
    if (buf != w->next_buf)
        fail_at(__FILE__, __LINE__, "tlm_pack_walk: buf %p, expected %p",
                (void *)buf, (void *)w->next_buf);
    for (size_t r = 0; r < rows; r++)
        memcpy(buf + r * run, mem + r * stride, run);
    w->next_buf = buf + rows * run;
    w->bytes += rows * run;
}

static void test_pack_side(const ushape_t *u, const tlm_pack_desc_t *d,
                           int side, uint64_t key)
{
    size_t total = d->total, ext = tlm_pack_extent(d, side);
    size_t run = u->count[0], nruns = ref_runs(u, side);
    tt_gbuf_t mem, out, in;
    uint8_t *ref = xmalloc(total), *img = xmalloc(ext);
    char name[64];

    /* Pack: the reference stream from the naive loop. */
    gb_alloc(&mem, ext, key);
    tt_pat_fill(mem.p, ext, key, 0);
    for (size_t r = 0; r < nruns; r++)
        memcpy(ref + r * run, mem.p + roffs[r], run);
    gb_alloc(&out, total, key + 2);
    for (int pass = 0; pass < 4; pass++) {
        size_t n;
        memset(out.p, 0xee, total);
        if (pass == 0) {
            frags[0].off = 0;
            frags[0].len = total;
            n = total ? 1 : 0;
            if (total == 0) /* an empty call must be harmless */
                tlm_pack(d, side, mem.p, 0, out.p, 0);
        } else {
            n = make_frags(total, 1, frags);
            nfrags += (long)n;
            if (pass >= 2)
                shuffle(frags, n);
        }
        if (pass == 3) { /* walk with a callback, as tlm_unpack_acc does */
            for (size_t i = 0; i < n; i++) {
                struct walk_chk w = {(char *)out.p + frags[i].off, 0};
                tlm_pack_walk(d, side, mem.p, frags[i].off,
                              out.p + frags[i].off, frags[i].len, walk_pack_cb,
                              &w);
                CHECK(w.bytes == frags[i].len, "walk covered %zu of %zu",
                      w.bytes, frags[i].len);
            }
        } else {
            for (size_t i = 0; i < n; i++)
                tlm_pack(d, side, mem.p, frags[i].off, out.p + frags[i].off,
                         frags[i].len);
        }
        snprintf(name, sizeof name, "pack side %d pass %d (%zu fragments)",
                 side, pass, n);
        CMP(out.p, ref, total, name);
        GB_CHECK(&out, name);
    }
    nchecks++;
    if (tt_pat_verify(mem.p, ext, key, 0, "pack source") != 0)
        fail_at(__FILE__, __LINE__, "tlm_pack wrote to its source");
    GB_CHECK(&mem, "pack source");

    /* Single random slices into their own guarded buffer. */
    for (int i = 0; i < 4 && total; i++) {
        size_t off = (size_t)rnd(total);
        size_t len = (size_t)rnd_range(0, total - off);
        if (rnd(2))
            len = len % (3 * run + 1);
        gb_alloc(&in, len, key + 7);
        tlm_pack(d, side, mem.p, off, in.p, len);
        snprintf(name, sizeof name, "pack slice [%zu, +%zu)", off, len);
        CMP(in.p, ref + off, len, name);
        GB_CHECK(&in, name);
        tt_gbuf_free(&in);
    }

    /* Unpack: the stream's bytes land where the naive loop puts them. */
    gb_alloc(&in, total, key + 4);
    tt_pat_fill(in.p, total, key + 5, 0);
    tt_pat_fill(img, ext, key, 0);
    for (size_t r = 0; r < nruns; r++)
        memcpy(img + roffs[r], in.p + r * run, run);
    for (int pass = 0; pass < 3; pass++) {
        size_t n;
        tt_pat_fill(mem.p, ext, key, 0);
        if (pass == 0) {
            frags[0].off = 0;
            frags[0].len = total;
            n = total ? 1 : 0;
        } else {
            n = make_frags(total, 1, frags);
            if (pass == 2)
                shuffle(frags, n);
        }
        for (size_t i = 0; i < n; i++)
            tlm_unpack(d, side, mem.p, frags[i].off, in.p + frags[i].off,
                       frags[i].len);
        snprintf(name, sizeof name, "unpack side %d pass %d (%zu fragments)",
                 side, pass, n);
        CMP(mem.p, img, ext, name);
        GB_CHECK(&mem, name);
        nchecks++;
        if (tt_pat_verify(in.p, total, key + 5, 0, "unpack source") != 0)
            fail_at(__FILE__, __LINE__, "tlm_unpack wrote to its source");
    }
    tt_gbuf_free(&in);
    tt_gbuf_free(&out);
    tt_gbuf_free(&mem);
    free(ref);
    free(img);
}

/* Wire round trip of each side, checked by packing with the decoded
 * descriptor (REMOTE and LOCAL) against the original. */
static void test_wire_shape(const tlm_pack_desc_t *d)
{
    uint8_t buf[TLM_PACK_WIRE_MAX + 64];
    for (int side = 0; side < 2; side++) {
        size_t ws = tlm_pack_wire_size(d);
        CHECK(ws <= TLM_PACK_WIRE_MAX, "wire size %zu", ws);
        memset(buf, 0xc5, sizeof buf);
        size_t w = tlm_pack_wire_encode(d, side, buf);
        CHECK(w == ws, "encode returned %zu, wire size %zu", w, ws);
        for (size_t i = ws; i < sizeof buf; i++)
            CHECK(buf[i] == 0xc5, "encode wrote byte %zu past %zu", i, ws);
        for (size_t len = 0; len < ws; len++) {
            tlm_pack_desc_t t;
            CHECK(tlm_pack_wire_decode(&t, buf, len) == 0,
                  "decode of %zu of %zu bytes accepted", len, ws);
        }
        tlm_pack_desc_t e;
        size_t got = tlm_pack_wire_decode(&e, buf, ws + (size_t)rnd(64));
        CHECK(got == ws, "decode returned %zu, expected %zu", got, ws);
        CHECK(e.total == d->total, "decoded total %zu, expected %zu", e.total,
              d->total);
        CHECK(e.levels <= d->levels, "decoded levels %d > %d", e.levels,
              d->levels);
        CHECK(tlm_pack_extent(&e, REMOTE) == tlm_pack_extent(d, side),
              "decoded extent %zu, expected %zu", tlm_pack_extent(&e, REMOTE),
              tlm_pack_extent(d, side));
        for (int k = 0; k < e.levels; k++)
            CHECK(e.stride[LOCAL][k] == e.stride[REMOTE][k],
                  "decoded local stride[%d] differs", k);
        if (e.levels == d->levels) {
            for (int k = 0; k <= e.levels; k++)
                CHECK(e.count[k] == d->count[k], "decoded count[%d]", k);
            for (int k = 0; k < e.levels; k++)
                CHECK(e.stride[REMOTE][k] == d->stride[side][k],
                      "decoded stride[%d]", k);
        }
        /* Same stream through both descriptors. */
        size_t ext = tlm_pack_extent(d, side), total = d->total;
        if (total > (1u << 16) || ext > (1u << 20))
            continue;
        uint8_t *mem = xmalloc(ext), *a = xmalloc(total), *b = xmalloc(total);
        tt_pat_fill(mem, ext, 99, 0);
        tlm_pack(d, side, mem, 0, a, total);
        tlm_pack(&e, rnd(2) ? REMOTE : LOCAL, mem, 0, b, total);
        CMP(b, a, total, "pack through decoded descriptor");
        free(mem);
        free(a);
        free(b);
    }
}

static void test_shape(const ushape_t *u, const char *tag, bool wire)
{
    tlm_pack_desc_t d;
    describe(u, tag);
    int rc = tlm_pack_normalize(&d, u->levels, u->count, u->stride[LOCAL],
                                u->stride[REMOTE]);
    CHECK(rc == 0, "normalize returned %d", rc);
    check_norm(u, &d);
    nshapes++;
    nlevels[d.levels]++;
    nempty += d.total == 0;
    nbytes += (double)d.total;
    uint64_t key = tt_rng_next(&rng);
    for (int side = 0; side < 2; side++)
        test_pack_side(u, &d, side, key + 16 * (uint64_t)side);
    if (wire)
        test_wire_shape(&d);
}

void test_shapes(void)
{
    ushape_t u;
    /* The sizes the issue names, as 2-D patches. */
    static const size_t runs[] = {1, 8, 16, 24, 64, 65, 4096};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        for (int rep = 0; rep < 6; rep++) {
            gen_shape(&u, 1, runs[i], 1u << 16, 4u << 20, 300);
            test_shape(&u, "2-D", true);
        }
    for (int i = 0; i < 1500; i++) {
        int levels = rnd(10) ? 1 + (int)rnd(4) : 0;
        gen_shape(&u, levels, pick_run(), 1u << 14, 1u << 18, 24);
        test_shape(&u, "small", true);
    }
    for (int i = 0; i < 100; i++) {
        gen_shape(&u, 1 + (int)rnd(4), pick_run(), 1u << 18, 4u << 20, 400);
        test_shape(&u, "large", i < 20);
    }
    pmerge = 8;
    p1 = 12;
    for (int i = 0; i < 60; i++) {
        gen_shape(&u, 5 + (int)rnd(4), pick_run() % 33 + 1, 1u << 15, 1u << 21,
                  3);
        test_shape(&u, "deep", true);
    }
    pmerge = 15;
    p1 = 6;
}

/* ---- wire decode of malformed input ------------------------------------- */

static size_t wire_put(uint8_t *buf, const uint64_t *w, size_t n)
{
    memcpy(buf, w, n * 8);
    return n * 8;
}

static void wire_reject(const uint64_t *w, size_t n, const char *why)
{
    uint8_t buf[8 * 40];
    tlm_pack_desc_t d;
    size_t len = wire_put(buf, w, n);
    snprintf(what, sizeof what, "wire decode: %s", why);
    CHECK(tlm_pack_wire_decode(&d, buf, len) == 0, "accepted");
    CHECK(tlm_pack_wire_decode(&d, buf, sizeof buf) == 0,
          "accepted with more room");
}

static void wire_accept(const uint64_t *w, size_t n, const char *why,
                        int levels, size_t total)
{
    uint8_t buf[8 * 40];
    tlm_pack_desc_t d;
    size_t len = wire_put(buf, w, n);
    snprintf(what, sizeof what, "wire decode: %s", why);
    size_t got = tlm_pack_wire_decode(&d, buf, len + 5);
    CHECK(got == len, "returned %zu, expected %zu", got, len);
    CHECK(d.levels == levels && d.total == total,
          "levels %d total %zu, expected %d %zu", d.levels, d.total, levels,
          total);
}

void test_wire_malformed(void)
{
    const uint64_t M = UINT64_MAX;
    wire_accept((uint64_t[]){0, 0}, 2, "empty", 0, 0);
    wire_accept((uint64_t[]){0, 1}, 2, "one byte", 0, 1);
    wire_accept((uint64_t[]){1, 1, 5, 3}, 4, "1-byte runs", 1, 5);
    wire_accept((uint64_t[]){1, 4, 5, 4}, 4, "contiguous: merged", 0, 20);
    wire_accept((uint64_t[]){2, 4, 5, 3, 8, 40}, 6, "upper merged", 1, 60);
    wire_accept((uint64_t[]){1, 8, 2, M - 8}, 4, "largest extent", 1, 16);
    uint64_t w8[18] = {8, 2, 2,  2,  2,   2,    2,    2,     2,
                       2, 4, 16, 64, 256, 1024, 4096, 16384, 65536};
    wire_accept(w8, 18, "8 levels", 8, 512);
    wire_reject((uint64_t[]){9, 2, 2, 2,  2,  2,  2,   2,   2,   2,
                             2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
                20, "levels 9");
    wire_reject((uint64_t[]){M, 1}, 2, "levels 2^64-1");
    wire_reject((uint64_t[]){1ull << 32, 1}, 2, "levels 2^32");
    wire_reject((uint64_t[]){1, 8, 1, 16}, 4, "count 1");
    wire_reject((uint64_t[]){2, 8, 3, 1, 16, 64}, 6, "upper count 1");
    wire_reject((uint64_t[]){1, 8, 0, 16}, 4, "count 0");
    wire_reject((uint64_t[]){1, 0, 3, 16}, 4, "run 0 with levels");
    wire_reject((uint64_t[]){2, 8, 3, 0, 16, 64}, 6, "upper count 0");
    wire_reject((uint64_t[]){2, 1ull << 32, 1ull << 16, 1ull << 16, 1ull << 32,
                             1ull << 48},
                6, "total overflows");
    wire_reject((uint64_t[]){1, M, 2, M}, 4, "total overflows (run)");
    wire_reject((uint64_t[]){1, 8, 2, M - 7}, 4, "extent overflows");
    wire_reject((uint64_t[]){1, 8, 3, 1ull << 63}, 4,
                "stride product overflows");
    wire_reject((uint64_t[]){2, 8, 3, 3, 16, M / 2}, 6,
                "upper extent overflows");

    /* Truncations of a valid 8-level descriptor, and NULL. */
    uint8_t buf[TLM_PACK_WIRE_MAX];
    tlm_pack_desc_t d;
    size_t len = wire_put(buf, w8, 18);
    snprintf(what, sizeof what, "wire decode: truncated");
    for (size_t l = 0; l < len; l++)
        CHECK(tlm_pack_wire_decode(&d, buf, l) == 0, "%zu bytes accepted", l);
    CHECK(tlm_pack_wire_decode(&d, NULL, 100) == 0, "NULL buffer accepted");
    CHECK(tlm_pack_wire_decode(NULL, buf, len) == 0, "NULL d accepted");
}

/* Random words, biased towards what almost parses (small levels, small
 * counts), each buffer exactly len bytes so a read past it is caught by
 * ASan.  Anything accepted must satisfy the normalised form. */
void test_wire_fuzz(void)
{
    long accepted = 0;
    snprintf(what, sizeof what, "wire decode fuzz");
    for (int it = 0; it < 100000; it++) {
        size_t len = (size_t)rnd(TLM_PACK_WIRE_MAX + 9);
        if (rnd(4) == 0)
            len &= ~(size_t)7;
        uint8_t *buf = xmalloc(len);
        uint64_t w[TLM_PACK_WIRE_MAX / 8 + 2];
        int mode = (int)rnd(4);
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
            uint64_t x = tt_rng_next(&rng);
            switch (mode) {
            case 0:
                break; /* anything */
            case 1:
                x %= 5;
                break;
            case 2:
                x = rnd(3) ? x % 70 : x >> rnd(64);
                break;
            default:
                x = rnd(8) ? x % 4000 : ~(x % 5);
                break;
            }
            w[i] = x;
        }
        if (mode)
            w[0] = rnd(10) ? rnd(9) : rnd(12);
        memcpy(buf, w, len);
        tlm_pack_desc_t d;
        size_t got = tlm_pack_wire_decode(&d, buf, len);
        if (got) {
            accepted++;
            uint64_t lv = w[0];
            CHECK(lv <= 8 && got == 8 * (2 + 2 * lv) && got <= len,
                  "accepted levels %" PRIu64 " using %zu of %zu bytes", lv, got,
                  len);
            unsigned __int128 prod = 1, ext = 0;
            for (uint64_t k = 0; k <= lv; k++)
                prod *= w[1 + k];
            CHECK(prod == d.total, "total %zu, product of the words %.0f",
                  d.total, (double)prod);
            CHECK(d.levels <= (int)lv, "levels %d > %" PRIu64, d.levels, lv);
            if (d.total) {
                ext = w[1];
                for (uint64_t k = 1; k <= lv; k++)
                    ext += (unsigned __int128)(w[1 + k] - 1) * w[1 + lv + k];
                CHECK(ext <= SIZE_MAX &&
                          (size_t)ext == tlm_pack_extent(&d, REMOTE),
                      "extent %zu, words give %.0f",
                      tlm_pack_extent(&d, REMOTE), (double)ext);
            }
            for (int k = 1; k <= d.levels; k++)
                CHECK(d.count[k] >= 2, "count[%d] = %zu", k, d.count[k]);
        }
        free(buf);
    }
    naccepted = accepted;
    CHECK(accepted > 1000,
          "only %ld of 100000 random descriptors parsed: "
          "the fuzz mix is off",
          accepted);
}

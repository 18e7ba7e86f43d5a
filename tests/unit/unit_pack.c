/* unit_pack.c - unit: the pack engine (src/pack).  Strided pack / unpack /
 * unpack-accumulate of random shapes (0-4 levels, some 8; runs of 1..4096+
 * bytes; strides contiguous on one side, both or neither; zero counts and
 * counts of 1) against a naive nested loop over the user's description,
 * for the whole stream and for fragments in and out of order, with guard
 * bytes around every buffer; normalisation and extent on hand-made and
 * random shapes; the wire form (round trip, every truncation, malformed
 * words, 100k random byte strings); the accumulate kernels of every type
 * against a serial loop written with the same expressions; vector gather /
 * scatter / scatter-acc / list encoding in the three list forms from random
 * cursors; tlm_vec_total's error cases.  UNIT_SEED=<n> changes the seed. */
#include "tt.h"
#include "pack/pack.h"

#define LOCAL TLM_PACK_LOCAL
#define REMOTE TLM_PACK_REMOTE
#define MAXL TLM_PACK_MAX_LEVELS

static uint64_t seed;
static tt_rng_t rng;
static long nchecks;
static long nempty, nshapes, nfrags, nlevels[MAXL + 1], naccepted;
static double nbytes;
static char what[1024]; /* the case being run, printed on failure */

static void fail_at(int line, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void fail_at(int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr,
            "FAIL unit_pack.c:%d: %s\n  case: %s\n  seed 0x%" PRIx64
            " (rerun with UNIT_SEED=0x%" PRIx64 ")\n",
            line, msg, what, seed, seed);
    exit(1);
}

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        nchecks++;                                                             \
        if (!(cond))                                                           \
            fail_at(__LINE__, __VA_ARGS__);                                    \
    } while (0)

static uint64_t rnd(uint64_t n) /* [0, n), n > 0 */
{
    return tt_rng_below(&rng, n);
}

static uint64_t rnd_range(uint64_t lo, uint64_t hi)
{
    return tt_rng_range(&rng, lo, hi);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "FAIL: malloc(%zu)\n", n);
        exit(1);
    }
    return p;
}

/* A buffer with guards; the usable part starts off (0..63) bytes past a
 * 64-byte boundary. */
static void gb_alloc(tt_gbuf_t *b, size_t n, uint64_t key)
{
    tt_gbuf_alloc(b, n, (size_t)rnd(64), key);
}

static void gb_check(const tt_gbuf_t *b, const char *name, int line)
{
    nchecks++;
    if (tt_gbuf_check(b, name) != 0)
        fail_at(line, "%s: guard bytes changed", name);
}
#define GB_CHECK(b, name) gb_check(b, name, __LINE__)

static void cmp_at(const void *got, const void *want, size_t n,
                   const char *name, int line)
{
    nchecks++;
    if (tt_cmp(got, want, n, name) != 0)
        fail_at(line, "%s: wrong bytes", name);
}
#define CMP(got, want, n, name) cmp_at(got, want, n, name, __LINE__)

/* ---- the user's description and the naive reference ------------------- */

typedef struct {
    int levels;
    size_t count[MAXL + 1];
    size_t stride[2][MAXL];
} ushape_t;

static void describe(const ushape_t *u, const char *tag)
{
    int k = snprintf(what, sizeof what, "%s levels %d count {", tag, u->levels);
    for (int i = 0; i <= u->levels && k < 900; i++)
        k += snprintf(what + k, sizeof what - (size_t)k, "%s%zu", i ? "," : "",
                      u->count[i]);
    for (int s = 0; s < 2 && k < 900; s++) {
        k += snprintf(what + k, sizeof what - (size_t)k, "} %s {",
                      s ? "remote" : "local");
        for (int i = 0; i < u->levels && k < 900; i++)
            k += snprintf(what + k, sizeof what - (size_t)k, "%s%zu",
                          i ? "," : "", u->stride[s][i]);
    }
    if (k < 1000)
        snprintf(what + k, sizeof what - (size_t)k, "}");
}

static size_t *roffs;
static size_t roffs_cap;

/* Offsets of every run on one side in stream order, by nested loops over
 * the description as given (dimension 1 fastest); returns the count. */
static size_t ref_runs(const ushape_t *u, int side)
{
    size_t n = 1, idx[MAXL + 1] = {0};
    for (int k = 0; k <= u->levels; k++)
        if (u->count[k] == 0)
            return 0;
    for (int k = 1; k <= u->levels; k++)
        n *= u->count[k];
    if (n > roffs_cap) {
        free(roffs);
        roffs_cap = n;
        roffs = xmalloc(n * sizeof *roffs);
    }
    for (size_t r = 0; r < n; r++) {
        size_t o = 0;
        for (int k = 1; k <= u->levels; k++)
            o += idx[k] * u->stride[side][k - 1];
        roffs[r] = o;
        for (int k = 1; k <= u->levels; k++) {
            if (++idx[k] < u->count[k])
                break;
            idx[k] = 0;
        }
    }
    return n;
}

static size_t ref_total(const ushape_t *u)
{
    size_t t = 1;
    for (int k = 0; k <= u->levels; k++)
        t *= u->count[k];
    return t;
}

static size_t ref_extent(const ushape_t *u, int side)
{
    size_t n = ref_runs(u, side), e = 0;
    for (size_t r = 0; r < n; r++)
        if (roffs[r] + u->count[0] > e)
            e = roffs[r] + u->count[0];
    return e;
}

/* ---- random shapes ------------------------------------------------------ */

static size_t pick_run(void)
{
    static const size_t runs[] = {1,  1,  2,  3,  4,  7,  8,  8,   12,  16,
                                  16, 24, 32, 63, 64, 64, 65, 100, 4096};
    switch (rnd(4)) {
    case 0:
        return (size_t)rnd_range(1, 300);
    default:
        return runs[rnd(sizeof runs / sizeof runs[0])];
    }
}

static size_t pick_gap(size_t run)
{
    size_t cap = run < 64 ? 64 : run;
    switch (rnd(3)) {
    case 0:
        return (size_t)rnd_range(1, 8);
    case 1:
        return (size_t)rnd_range(1, 64);
    default:
        return (size_t)rnd_range(1, cap);
    }
}

/* Counts with a product of at most max_total (before zero counts), strides
 * that never overlap runs: per dimension both sides continue the block
 * below (mergeable, pmerge percent), one side does, or neither; a
 * dimension of count 1 (one in p1) gets a junk stride.  Retries until each
 * side's extent fits. */
static int pmerge = 15, p1 = 6;

static void gen_shape(ushape_t *u, int levels, size_t run, size_t max_total,
                      size_t max_extent, size_t max_count)
{
    for (;;) {
        memset(u, 0, sizeof *u);
        u->levels = levels;
        u->count[0] = run;
        size_t total = run;
        for (int k = 1; k <= levels; k++) {
            size_t room = max_total / total, c;
            if (room < 2 || rnd((uint64_t)p1) == 0)
                c = 1;
            else
                c = (size_t)rnd_range(2, room < max_count ? room : max_count);
            u->count[k] = c;
            total *= c;
        }
        size_t ext[2] = {run, run}, last_s[2] = {1, 1}, last_c = run;
        for (int k = 1; k <= levels; k++) {
            size_t c = u->count[k];
            if (c == 1) {
                for (int s = 0; s < 2; s++)
                    u->stride[s][k - 1] = rnd(4) == 0
                                              ? (size_t)tt_rng_next(&rng)
                                              : (size_t)rnd(1000);
                continue;
            }
            int mode = (int)rnd(100) - pmerge;
            for (int s = 0; s < 2; s++) {
                bool cont = mode < 0 || (mode < 15 && s == LOCAL) ||
                            (mode < 30 && mode >= 15 && s == REMOTE);
                size_t st;
                if (cont)
                    st = last_s[s] * last_c; /* merges on this side */
                else if (mode >= 30 && mode < 40)
                    st = ext[s]; /* touches the block below, no merge
                                    unless that block is contiguous */
                else
                    st = ext[s] + pick_gap(run);
                u->stride[s][k - 1] = st;
                ext[s] += (c - 1) * st;
                last_s[s] = st;
            }
            last_c = c;
        }
        if (ext[0] <= max_extent && ext[1] <= max_extent)
            break;
    }
    if (rnd(30) == 0)
        u->count[rnd((uint64_t)levels + 1)] = 0;
}

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

static void test_normalize_cases(void)
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

/* ---- fragments ---------------------------------------------------------- */

typedef struct {
    size_t off, len;
} frag_t;

#define MAXFRAG 600

/* Cuts [0, total) into fragments of random sizes, multiples of unit
 * (total is one too); returns how many. */
static size_t make_frags(size_t total, size_t unit, frag_t *f)
{
    size_t n = 0, off = 0, units = total / unit;
    if (total == 0)
        return 0;
    size_t base = units / (size_t)rnd_range(1, 64);
    if (rnd(4) == 0)
        base = (size_t)rnd_range(1, 20); /* tiny: cuts through runs */
    if (base == 0)
        base = 1;
    while (off < units) {
        size_t len = (size_t)rnd_range(1, 2 * base);
        if (len > units - off || n == MAXFRAG - 1)
            len = units - off;
        f[n].off = off * unit;
        f[n].len = len * unit;
        n++;
        off += len;
    }
    return n;
}

static void shuffle(frag_t *f, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rnd(i);
        frag_t t = f[i - 1];
        f[i - 1] = f[j];
        f[j] = t;
    }
}

/* ---- pack / unpack of one shape ----------------------------------------- */

static frag_t frags[MAXFRAG];

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
        fail_at(__LINE__, "tlm_pack_walk: buf %p, expected %p", (void *)buf,
                (void *)w->next_buf);
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
        fail_at(__LINE__, "tlm_pack wrote to its source");
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
            fail_at(__LINE__, "tlm_unpack wrote to its source");
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

static void test_shapes(void)
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

static void test_wire_malformed(void)
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
static void test_wire_fuzz(void)
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

/* ---- accumulate ---------------------------------------------------------- */

static const char *const tname[TLM_ACC_NTYPES] = {
    "int32", "int64", "uint64", "float", "double", "cfloat", "cdouble"};

/* A finite value (no NaN payloads, whose propagation may depend on the
 * order of an addition's operands) or, for integers, any bits. */
static void rand_elem(int type, void *p)
{
    uint64_t x = tt_rng_next(&rng);
    double v = (double)(int64_t)(x % 2000001) / 1024.0 - 976.0;
    switch (type) {
    case TLM_ACC_INT32: {
        uint32_t y = (uint32_t)x;
        memcpy(p, &y, 4);
        break;
    }
    case TLM_ACC_INT64:
    case TLM_ACC_UINT64:
        memcpy(p, &x, 8);
        break;
    case TLM_ACC_FLOAT: {
        float f = (float)v;
        memcpy(p, &f, 4);
        break;
    }
    case TLM_ACC_DOUBLE:
        v += (double)(x >> 40) * 1e-9;
        memcpy(p, &v, 8);
        break;
    case TLM_ACC_CFLOAT: {
        float f[2] = {(float)v, (float)((double)(x >> 44) / 97.0 - 50)};
        memcpy(p, f, 8);
        break;
    }
    default: {
        double g[2] = {v, (double)(x >> 30) / 1e4 - 500.0};
        memcpy(p, g, 16);
        break;
    }
    }
}

static void rand_elems(int type, void *p, size_t n)
{
    size_t es = tlm_acc_elem_size(type);
    for (size_t i = 0; i < n; i++)
        rand_elem(type, (char *)p + i * es);
}

/* A scale: 1, or another value (for complex sometimes (1, 0), which the
 * library treats as 1, and (1, x)). */
static bool rand_scale(int type, void *a, bool one)
{
    switch (type) {
    case TLM_ACC_INT32: {
        int32_t v = one ? 1 : (int32_t)rnd_range(0, 20) - 10;
        if (!one && rnd(3) == 0)
            v = (int32_t)tt_rng_next(&rng);
        if (v == 1)
            v = -3;
        memcpy(a, &v, 4);
        break;
    }
    case TLM_ACC_INT64:
    case TLM_ACC_UINT64: {
        uint64_t v = one ? 1 : (rnd(2) ? tt_rng_next(&rng) : (uint64_t)-7);
        if (v == 1)
            v = 5;
        memcpy(a, &v, 8);
        break;
    }
    case TLM_ACC_FLOAT: {
        float f = one ? 1.0f : rnd(2) ? 0.75f : -2.5f;
        memcpy(a, &f, 4);
        break;
    }
    case TLM_ACC_DOUBLE: {
        double v = one ? 1.0 : rnd(2) ? 0.1 : -1.75;
        memcpy(a, &v, 8);
        break;
    }
    case TLM_ACC_CFLOAT: {
        float f[2] = {1.0f, 0.0f};
        if (!one) {
            f[0] = rnd(2) ? 0.5f : 1.0f;
            f[1] = rnd(2) ? -1.25f : 3.0f;
        }
        memcpy(a, f, 8);
        break;
    }
    default: {
        double g[2] = {1.0, 0.0};
        if (!one) {
            g[0] = rnd(2) ? 0.3 : 1.0;
            g[1] = rnd(2) ? -1.1 : 2.0;
        }
        memcpy(a, g, 16);
        break;
    }
    }
    return one;
}

/* The serial reference: one element, the same expressions as the
 * library's (x + y for a scale of 1, x + a * y otherwise; complex by the
 * textbook product). */
static void ref_acc1(int type, void *dp, const void *sp, const void *ap)
{
    switch (type) {
    case TLM_ACC_INT32: {
        uint32_t x, y, a;
        memcpy(&x, dp, 4);
        memcpy(&y, sp, 4);
        memcpy(&a, ap, 4);
        x = a == 1 ? x + y : x + a * y;
        memcpy(dp, &x, 4);
        break;
    }
    case TLM_ACC_INT64:
    case TLM_ACC_UINT64: {
        uint64_t x, y, a;
        memcpy(&x, dp, 8);
        memcpy(&y, sp, 8);
        memcpy(&a, ap, 8);
        x = a == 1 ? x + y : x + a * y;
        memcpy(dp, &x, 8);
        break;
    }
    case TLM_ACC_FLOAT: {
        float x, y, a;
        memcpy(&x, dp, 4);
        memcpy(&y, sp, 4);
        memcpy(&a, ap, 4);
        x = a == 1.0f ? x + y : x + a * y;
        memcpy(dp, &x, 4);
        break;
    }
    case TLM_ACC_DOUBLE: {
        double x, y, a;
        memcpy(&x, dp, 8);
        memcpy(&y, sp, 8);
        memcpy(&a, ap, 8);
        x = a == 1.0 ? x + y : x + a * y;
        memcpy(dp, &x, 8);
        break;
    }
    case TLM_ACC_CFLOAT: {
        float x[2], y[2], a[2], re, im;
        memcpy(x, dp, 8);
        memcpy(y, sp, 8);
        memcpy(a, ap, 8);
        if (a[0] == 1.0f && a[1] == 0.0f) {
            re = x[0] + y[0];
            im = x[1] + y[1];
        } else {
            re = x[0] + (a[0] * y[0] - a[1] * y[1]);
            im = x[1] + (a[0] * y[1] + a[1] * y[0]);
        }
        x[0] = re;
        x[1] = im;
        memcpy(dp, x, 8);
        break;
    }
    default: {
        double x[2], y[2], a[2], re, im;
        memcpy(x, dp, 16);
        memcpy(y, sp, 16);
        memcpy(a, ap, 16);
        if (a[0] == 1.0 && a[1] == 0.0) {
            re = x[0] + y[0];
            im = x[1] + y[1];
        } else {
            re = x[0] + (a[0] * y[0] - a[1] * y[1]);
            im = x[1] + (a[0] * y[1] + a[1] * y[0]);
        }
        x[0] = re;
        x[1] = im;
        memcpy(dp, x, 16);
        break;
    }
    }
}

static void ref_acc(int type, void *d, const void *s, size_t n, const void *a)
{
    size_t es = tlm_acc_elem_size(type);
    for (size_t i = 0; i < n; i++)
        ref_acc1(type, (char *)d + i * es, (const char *)s + i * es, a);
}

static void test_acc_kernels(void)
{
    static const size_t want[TLM_ACC_NTYPES] = {4, 8, 8, 4, 8, 8, 16};
    snprintf(what, sizeof what, "tlm_acc_elem_size");
    for (int t = 0; t < TLM_ACC_NTYPES; t++)
        CHECK(tlm_acc_elem_size(t) == want[t], "type %d: %zu", t,
              tlm_acc_elem_size(t));
    CHECK(tlm_acc_elem_size(-1) == 0 &&
              tlm_acc_elem_size(TLM_ACC_NTYPES) == 0 &&
              tlm_acc_elem_size(1000) == 0,
          "unknown types have a size");

    for (int t = 0; t < TLM_ACC_NTYPES; t++) {
        size_t es = tlm_acc_elem_size(t);
        for (int it = 0; it < 120; it++) {
            size_t n =
                it < 20 ? (size_t)it : (size_t)rnd(it < 110 ? 300 : 5000);
            uint8_t a[16];
            bool one = rand_scale(t, a, it % 2 == 0);
            /* Every third run with TLM_ACC_ATOMIC (atomic integer adds;
             * other types ignore it): the same results. */
            int tf = t | (it % 3 == 2 ? TLM_ACC_ATOMIC : 0);
            snprintf(what, sizeof what, "tlm_acc_apply %s%s n %zu scale %s",
                     tname[t], tf != t ? " atomic" : "", n,
                     one ? "1" : "other");
            tt_gbuf_t dst, src;
            gb_alloc(&dst, n * es, 11);
            gb_alloc(&src, n * es, 12);
            rand_elems(t, dst.p, n);
            rand_elems(t, src.p, n);
            uint8_t *want_d = xmalloc(n * es), *src0 = xmalloc(n * es);
            memcpy(want_d, dst.p, n * es);
            memcpy(src0, src.p, n * es);
            ref_acc(t, want_d, src.p, n, a);
            tlm_acc_apply(tf, dst.p, src.p, n, a);
            CMP(dst.p, want_d, n * es, "acc result");
            CMP(src.p, src0, n * es, "acc source");
            GB_CHECK(&dst, "acc dst");
            GB_CHECK(&src, "acc src");
            free(want_d);
            free(src0);
            tt_gbuf_free(&dst);
            tt_gbuf_free(&src);
        }
    }
    /* An unknown type does nothing. */
    uint64_t x = 5, y = 7, one = 1;
    snprintf(what, sizeof what, "tlm_acc_apply unknown type");
    tlm_acc_apply(TLM_ACC_NTYPES, &x, &y, 1, &one);
    tlm_acc_apply(-1, &x, &y, 1, &one);
    CHECK(x == 5, "unknown type changed dst");
    /* Integer wrap-around, by value. */
    int32_t i1 = INT32_MAX, i2 = 1, s1 = 1, s2 = 2;
    tlm_acc_apply(TLM_ACC_INT32, &i1, &i2, 1, &s1);
    CHECK(i1 == INT32_MIN, "int32 max + 1 = %d", i1);
    i1 = 5;
    i2 = INT32_MIN;
    tlm_acc_apply(TLM_ACC_INT32, &i1, &i2, 1, &s2);
    CHECK(i1 == 5, "int32 5 + 2 * min = %d", i1);
    int64_t l1 = -3, l2 = 4, ls = -2;
    tlm_acc_apply(TLM_ACC_INT64, &l1, &l2, 1, &ls);
    CHECK(l1 == -11, "int64 -3 + -2 * 4 = %" PRId64, l1);
}

/* tlm_unpack_acc of random shapes whose run is a multiple of the element
 * size, in element-aligned fragments in and out of order. */
static void test_unpack_acc(void)
{
    ushape_t u;
    for (int it = 0; it < 280; it++) {
        int t = it % TLM_ACC_NTYPES;
        size_t es = tlm_acc_elem_size(t);
        static const size_t mult[] = {1, 1, 1, 2, 3, 4, 8, 9, 33};
        size_t run = es * mult[rnd(sizeof mult / sizeof mult[0])];
        gen_shape(&u, (int)rnd(4), run, it < 250 ? 1u << 12 : 1u << 16,
                  1u << 20, it < 250 ? 20 : 300);
        describe(&u, tname[t]);
        tlm_pack_desc_t d;
        CHECK(tlm_pack_normalize(&d, u.levels, u.count, u.stride[LOCAL],
                                 u.stride[REMOTE]) == 0,
              "normalize failed");
        int side = (int)rnd(2);
        size_t total = d.total, ext = tlm_pack_extent(&d, side);
        size_t nruns = ref_runs(&u, side), ne = run / es;
        uint8_t a[16];
        rand_scale(t, a, rnd(2));
        tt_gbuf_t mem, src;
        gb_alloc(&mem, ext, 21);
        gb_alloc(&src, total, 22);
        uint8_t *init = xmalloc(ext), *img = xmalloc(ext);
        tt_pat_fill(init, ext, 23, 0);
        for (size_t r = 0; r < nruns; r++)
            rand_elems(t, init + roffs[r], ne);
        rand_elems(t, src.p, total / es);
        memcpy(img, init, ext);
        for (size_t r = 0; r < nruns; r++)
            ref_acc(t, img + roffs[r], src.p + r * run, ne, a);
        for (int pass = 0; pass < 3; pass++) {
            size_t n;
            memcpy(mem.p, init, ext);
            if (pass == 0) {
                frags[0].off = 0;
                frags[0].len = total;
                n = total ? 1 : 0;
            } else {
                n = make_frags(total, es, frags);
                if (pass == 2)
                    shuffle(frags, n);
            }
            for (size_t i = 0; i < n; i++)
                tlm_unpack_acc(&d, side, mem.p, frags[i].off,
                               src.p + frags[i].off, frags[i].len,
                               t | (pass == 1 ? TLM_ACC_ATOMIC : 0), a);
            char name[80];
            snprintf(name, sizeof name, "unpack_acc side %d pass %d", side,
                     pass);
            CMP(mem.p, img, ext, name);
            GB_CHECK(&mem, name);
            GB_CHECK(&src, name);
        }
        free(init);
        free(img);
        tt_gbuf_free(&mem);
        tt_gbuf_free(&src);
    }
}

/* ---- vectors ------------------------------------------------------------- */

#define MAXSEG 48

typedef struct {
    size_t n;
    size_t len[MAXSEG];
    size_t loff[MAXSEG], roff[MAXSEG]; /* offsets in the two buffers */
    size_t prefix[MAXSEG + 1];         /* stream offset of each segment */
    size_t lsize, rsize;
    tt_gbuf_t lbuf, rbuf;
    void *lp[MAXSEG], *rp[MAXSEG];
    tlm_vec_seg3_t seg3[MAXSEG];
    uint64_t recs[2 * MAXSEG];
} vlist_t;

/* Lays n segments out in each buffer in a shuffled order with gaps. */
static void layout(size_t n, const size_t *len, size_t *off, size_t *size)
{
    size_t order[MAXSEG], pos = (size_t)rnd(16);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rnd(i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        off[order[i]] = pos;
        pos += len[order[i]] + (size_t)rnd(24);
    }
    *size = pos + 1;
}

/* A list: giov (one common length) or free lengths; elem: lengths are
 * multiples of it. */
static void make_vlist(vlist_t *v, bool giov, size_t elem)
{
    v->n = (size_t)rnd(MAXSEG + 1);
    size_t common = elem * (size_t)rnd_range(0, 200 / elem + 1);
    v->prefix[0] = 0;
    for (size_t i = 0; i < v->n; i++) {
        size_t l;
        if (giov)
            l = common;
        else if (rnd(6) == 0)
            l = 0;
        else if (rnd(8) == 0)
            l = (size_t)rnd_range(1, 5000);
        else
            l = (size_t)rnd_range(1, 70);
        v->len[i] = l / elem * elem;
        v->prefix[i + 1] = v->prefix[i] + v->len[i];
    }
    layout(v->n, v->len, v->loff, &v->lsize);
    layout(v->n, v->len, v->roff, &v->rsize);
    gb_alloc(&v->lbuf, v->lsize, 31);
    gb_alloc(&v->rbuf, v->rsize, 32);
    for (size_t i = 0; i < v->n; i++) {
        v->lp[i] = v->lbuf.p + v->loff[i];
        v->rp[i] = v->rbuf.p + v->roff[i];
        v->seg3[i] = (tlm_vec_seg3_t){v->rp[i], v->lp[i], v->len[i]};
        v->recs[2 * i] = (uint64_t)(uintptr_t)v->rp[i];
        v->recs[2 * i + 1] = v->len[i];
    }
}

static void free_vlist(vlist_t *v)
{
    tt_gbuf_free(&v->lbuf);
    tt_gbuf_free(&v->rbuf);
}

/* The three forms of one list (records carry the remote side only). */
static tlm_vec_t vform(const vlist_t *v, int form)
{
    tlm_vec_t x;
    memset(&x, 0, sizeof x);
    x.n = v->n;
    if (form == 0) {
        x.local = v->lp;
        x.remote = v->rp;
        x.bytes = v->n ? v->len[0] : 0;
    } else if (form == 1) {
        x.segs = v->seg3;
    } else {
        x.recs = v->recs;
    }
    return x;
}

static size_t cur_pos(const vlist_t *v, const tlm_vec_cursor_t *c)
{
    return v->prefix[c->seg < v->n ? c->seg : v->n] + c->off;
}

/* A random cursor: any segment, any offset within it (its end too),
 * element-aligned. */
static tlm_vec_cursor_t rand_cursor(const vlist_t *v, size_t elem)
{
    tlm_vec_cursor_t c = {0, 0};
    if (v->n == 0 || rnd(4) == 0)
        return c;
    c.seg = (size_t)rnd(v->n + 1);
    if (c.seg < v->n)
        c.off = (size_t)rnd(v->len[c.seg] / elem + 1) * elem;
    return c;
}

static const char *const fname[3] = {"giov", "triples", "records"};

static void test_vec_one(int form, int it)
{
    vlist_t v;
    bool acc = it % 3 == 2;
    int type = acc ? (int)rnd(TLM_ACC_NTYPES) : 0;
    size_t es = acc ? tlm_acc_elem_size(type) : 1;
    make_vlist(&v, form == 0, es);
    tlm_vec_t x = vform(&v, form);
    size_t total = v.prefix[v.n], got_total = 12345;
    snprintf(what, sizeof what, "vector %s, %zu segments, %zu bytes%s%s",
             fname[form], v.n, total, acc ? ", acc " : "",
             acc ? tname[type] : "");
    CHECK(tlm_vec_total(&x, &got_total) == 0 && got_total == total,
          "tlm_vec_total gave %zu, expected %zu", got_total, total);
    int side = form == 2 ? REMOTE : (int)rnd(2);
    tt_gbuf_t *mb = side == REMOTE ? &v.rbuf : &v.lbuf;
    const size_t *moff = side == REMOTE ? v.roff : v.loff;
    size_t msize = side == REMOTE ? v.rsize : v.lsize;
    uint8_t *stream = xmalloc(total), *img = xmalloc(msize);
    tt_gbuf_t out;

    /* Gather from a random cursor in random chunks. */
    tt_pat_fill(mb->p, msize, 41, 0);
    for (size_t i = 0; i < v.n; i++)
        memcpy(stream + v.prefix[i], mb->p + moff[i], v.len[i]);
    tlm_vec_cursor_t c = rand_cursor(&v, es), c0 = c;
    size_t start = cur_pos(&v, &c), pos = start;
    gb_alloc(&out, total - start, 42);
    while (pos < total) {
        size_t len = (size_t)rnd_range(1, rnd(2) ? 40 : total - pos);
        if (len > total - pos)
            len = total - pos;
        tlm_vec_gather(&x, side, &c, out.p + (pos - start), len);
        pos += len;
        CHECK(cur_pos(&v, &c) == pos, "gather cursor at %zu, expected %zu",
              cur_pos(&v, &c), pos);
    }
    CMP(out.p, stream + start, total - start, "gather");
    GB_CHECK(&out, "gather out");
    GB_CHECK(mb, "gather source");
    tt_gbuf_free(&out);

    /* Scatter (or scatter-acc) from the same cursor. */
    tt_gbuf_t in;
    gb_alloc(&in, total, 43);
    uint8_t a[16];
    if (acc) {
        rand_scale(type, a, rnd(2));
        for (size_t i = 0; i < v.n; i++)
            rand_elems(type, mb->p + moff[i], v.len[i] / es);
        rand_elems(type, in.p, total / es);
    } else {
        tt_pat_fill(in.p, total, 44, 0);
    }
    memcpy(img, mb->p, msize);
    for (size_t i = 0; i < v.n; i++) {
        size_t lo = v.prefix[i] > start ? 0 : start - v.prefix[i];
        if (lo >= v.len[i])
            continue;
        if (acc)
            ref_acc(type, img + moff[i] + lo, in.p + v.prefix[i] + lo,
                    (v.len[i] - lo) / es, a);
        else
            memcpy(img + moff[i] + lo, in.p + v.prefix[i] + lo, v.len[i] - lo);
    }
    c = c0;
    pos = start;
    while (pos < total) {
        size_t len = es * (size_t)rnd_range(1, rnd(2) ? 10 : total / es);
        if (len > total - pos)
            len = total - pos;
        if (acc)
            tlm_vec_scatter_acc(&x, side, &c, in.p + pos, len, type, a);
        else
            tlm_vec_scatter(&x, side, &c, in.p + pos, len);
        pos += len;
        CHECK(cur_pos(&v, &c) == pos, "scatter cursor at %zu, expected %zu",
              cur_pos(&v, &c), pos);
    }
    CMP(mb->p, img, msize, acc ? "scatter_acc" : "scatter");
    GB_CHECK(mb, "scatter target");
    GB_CHECK(&in, "scatter source");
    tt_gbuf_free(&in);

    /* The wire list: whole records from a random segment on. */
    tlm_vec_cursor_t e = {v.n ? (size_t)rnd(v.n + 1) : 0, 0};
    size_t first = e.seg;
    uint8_t lbuf[16 * MAXSEG + 64];
    size_t used = 0;
    while (e.seg < v.n) {
        size_t room = (size_t)rnd(16 * 6 + 1), before = e.seg;
        memset(lbuf + used, 0xd7, sizeof lbuf - used);
        if (room > sizeof lbuf - used)
            room = sizeof lbuf - used;
        size_t w = tlm_vec_encode_list(&x, &e, lbuf + used, room);
        CHECK(w % 16 == 0 && w <= room && w / 16 == e.seg - before,
              "encode_list wrote %zu of room %zu, cursor %zu -> %zu", w, room,
              before, e.seg);
        CHECK(room < 16 || w > 0, "encode_list made no progress");
        CHECK(e.off == 0, "encode_list cursor off %zu", e.off);
        for (size_t i = used + w; i < sizeof lbuf; i++)
            CHECK(lbuf[i] == 0xd7, "encode_list wrote past its records");
        used += w;
    }
    CHECK(used == 16 * (v.n - first),
          "encode_list wrote %zu bytes for %zu "
          "segments",
          used, v.n - first);
    for (size_t i = first; i < v.n; i++) {
        uint64_t r[2];
        memcpy(r, lbuf + 16 * (i - first), 16);
        CHECK(r[0] == (uint64_t)(uintptr_t)v.rp[i] && r[1] == v.len[i],
              "record %zu: {%#" PRIx64 ", %" PRIu64 "}", i, r[0], r[1]);
    }
    CHECK(tlm_vec_encode_list(&x, &e, lbuf, sizeof lbuf) == 0,
          "encode_list past the end wrote records");

    /* The decoded list gathers what the triples gather. */
    if (form != 2 && total) {
        tlm_vec_t rx;
        memset(&rx, 0, sizeof rx);
        rx.n = v.n;
        rx.recs = (const uint64_t *)(const void *)v.recs;
        tlm_vec_cursor_t c1 = {0, 0}, c2 = {0, 0};
        uint8_t *g1 = xmalloc(total), *g2 = xmalloc(total);
        tlm_vec_gather(&x, REMOTE, &c1, g1, total);
        tlm_vec_gather(&rx, REMOTE, &c2, g2, total);
        CMP(g2, g1, total, "gather through records");
        free(g1);
        free(g2);
    }
    free(stream);
    free(img);
    free_vlist(&v);
}

static void test_vec_total_errors(void)
{
    char b1[8], b2[8];
    void *l[3] = {b1, b2, b1}, *r[3] = {b2, b1, b2};
    void *ln[3] = {b1, NULL, b1};
    tlm_vec_t x;
    size_t t;
#define TOTAL_FAILS(why)                                                       \
    do {                                                                       \
        t = 777;                                                               \
        snprintf(what, sizeof what, "tlm_vec_total: %s", why);                 \
        CHECK(tlm_vec_total(&x, &t) == -1, "accepted");                        \
        CHECK(t == 777, "output set on error");                                \
    } while (0)
#define TOTAL_IS(why, want)                                                    \
    do {                                                                       \
        snprintf(what, sizeof what, "tlm_vec_total: %s", why);                 \
        CHECK(tlm_vec_total(&x, &t) == 0 && t == (want), "gave %zu", t);       \
    } while (0)

    memset(&x, 0, sizeof x);
    TOTAL_IS("empty list, no arrays", 0);
    x.n = 3;
    TOTAL_FAILS("giov arrays NULL");
    x.local = l;
    TOTAL_FAILS("giov remote array NULL");
    x.remote = r;
    x.bytes = 8;
    TOTAL_IS("giov", 24);
    x.bytes = 0;
    x.local = ln;
    TOTAL_IS("giov NULL address, 0 bytes", 0);
    x.bytes = 8;
    TOTAL_FAILS("giov NULL local address");
    x.local = l;
    x.remote = ln;
    TOTAL_FAILS("giov NULL remote address");
    void *hi[3] = {(void *)(UINTPTR_MAX - 3), b1, b2};
    x.remote = hi;
    TOTAL_FAILS("giov wrapping range");
    x.remote = r;
    x.bytes = SIZE_MAX / 2;
    void *lo[3] = {(void *)4096, (void *)8192, (void *)4096};
    x.local = lo;
    x.remote = lo;
    TOTAL_FAILS("giov sum overflows");

    tlm_vec_seg3_t s[3] = {{b1, b2, 8}, {NULL, NULL, 0}, {b2, b1, 5}};
    memset(&x, 0, sizeof x);
    x.n = 3;
    x.segs = s;
    TOTAL_IS("triples with an empty NULL segment", 13);
    s[1].local = b1;
    s[1].bytes = 1;
    TOTAL_FAILS("triple NULL remote");
    s[1].remote = b1;
    s[1].local = NULL;
    TOTAL_FAILS("triple NULL local");
    s[1].local = (void *)(UINTPTR_MAX - 6);
    s[1].bytes = 7;
    TOTAL_IS("triple ending at the top of the address space", 20);
    s[1].bytes = 8;
    TOTAL_FAILS("triple wrapping range");
    s[1] = (tlm_vec_seg3_t){(void *)1, (void *)1, SIZE_MAX - 2};
    TOTAL_FAILS("triple sum overflows");

    uint64_t rec[6] = {(uintptr_t)b1, 8, 0, 0, (uintptr_t)b2, 3};
    memset(&x, 0, sizeof x);
    x.n = 3;
    x.recs = rec;
    TOTAL_IS("records", 11);
    rec[3] = 4;
    TOTAL_FAILS("record NULL address");
    rec[2] = UINT64_MAX - 2;
    TOTAL_FAILS("record wrapping range");
    rec[2] = 1;
    rec[3] = UINT64_MAX - 5;
    TOTAL_FAILS("record sum overflows");
    snprintf(what, sizeof what, "tlm_vec_total: NULL");
    CHECK(tlm_vec_total(NULL, &t) == -1 && tlm_vec_total(&x, NULL) == -1,
          "NULL accepted");
#undef TOTAL_FAILS
#undef TOTAL_IS
}

static void test_vec(void)
{
    test_vec_total_errors();
    for (int it = 0; it < 300; it++)
        test_vec_one(it % 3, it / 3);
}

int main(void)
{
    const char *s = getenv("UNIT_SEED");
    seed = s && *s ? strtoull(s, NULL, 0) : 0x5eed9ac4ull;
    printf("unit_pack: seed 0x%" PRIx64 " (set UNIT_SEED to change)\n", seed);
    fflush(stdout);
    tt_rng_seed(&rng, seed);
    double t0 = tt_now();

    test_normalize_cases();
    test_shapes();
    test_wire_malformed();
    test_wire_fuzz();
    test_acc_kernels();
    test_unpack_acc();
    test_vec();

    free(roffs);
    printf("strided: %ld shapes (normalised levels", nshapes);
    for (int k = 0; k <= MAXL; k++)
        printf(" %d:%ld", k, nlevels[k]);
    printf(
        "), %ld empty, %.1f MB, %ld packed fragments; wire fuzz: %ld of 100000 "
        "accepted\n",
        nempty, nbytes / 1e6, nfrags, naccepted);
    printf("PASS: %ld checks in %.1f s\n", nchecks, tt_now() - t0);
    return 0;
}

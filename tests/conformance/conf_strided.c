/* conf_strided.c - conformance: strided put and get (blocking, _nb, _nbi)
 * against a reference loop.  Every case gives each (initiator, target)
 * pair, self included, its own random shape (seeded, so the target can
 * rebuild it): 0..4 levels, runs of 1 byte to 64 KiB (1, 8, 16, 24, 64 and
 * 65 among them), random counts with the odd zero, strides >= the extent
 * below them, contiguous on one side, both or neither, patches of up to
 * 96 KiB and, every few cases, about 1 MiB (many fragments).  The
 * initiator puts its patch into its slot of the target's block; the
 * target compares the slot, 64 background bytes before and after
 * included, with the image the reference loop computes; then the
 * initiator gets the patch back into a third layout and compares that,
 * and checks that its source area is untouched. */
#include "tt.h"

#define MAXL 4                        /* levels generated here */
#define SLOT ((size_t)(2u << 20) + 4096) /* per (initiator, target) */
#define MARGIN 64                     /* background checked past a patch */
#define SMALL_BUDGET ((size_t)96 << 10)
#define BIG_BUDGET ((size_t)1 << 20)

enum { SIDE_R, SIDE_P, SIDE_G }; /* remote, local put source, local get */
enum { FORM_BLOCKING, FORM_NB, FORM_NBI };
static const char *const form_name[] = {"blocking", "nb", "nbi"};

typedef struct {
    int levels;
    size_t count[MAXL + 1];
    size_t st[3][MAXL];  /* strides per side */
    size_t off[3];       /* patch base in the side's area */
    size_t ext[3];       /* extent per side (0 when empty) */
    size_t total;
    int put_form, get_form;
    int null_strides;    /* levels 0: pass NULL stride arrays */
} shape_t;

static uint64_t seed;
static int errors;

/* Extent of a side (the counts of empty dimensions taken as 1). */
static size_t extent_of(const size_t *count, const size_t *st, int levels)
{
    size_t ext = count[0] ? count[0] : 1;
    for (int k = 1; k <= levels; k++)
        ext += (count[k] ? count[k] - 1 : 0) * st[k - 1];
    return ext;
}

/* Strides of one side: each stride is the extent of the block below it
 * plus a gap (0 = contiguous). gapmax 0: contiguous throughout. */
static void gen_strides(tt_rng_t *r, const size_t *count, int levels,
                        size_t *st, size_t gapmax)
{
    size_t ext = count[0] ? count[0] : 1;
    for (int k = 1; k <= levels; k++) {
        size_t gap = 0;
        if (gapmax && tt_rng_below(r, 4) != 0)
            gap = tt_rng_below(r, 3) == 0 ? tt_rng_range(r, 1, gapmax)
                                          : tt_rng_range(r, 1, 64 < gapmax
                                                               ? 64 : gapmax);
        st[k - 1] = ext + gap;
        ext += ((count[k] ? count[k] : 1) - 1) * st[k - 1];
    }
}

static void gen_side(tt_rng_t *r, shape_t *s, int side, int contig,
                     size_t limit)
{
    static const size_t gapmaxes[] = {4096, 64, 8, 0};
    for (size_t i = contig ? 3 : 0; i < 4; i++) {
        gen_strides(r, s->count, s->levels, s->st[side], gapmaxes[i]);
        s->ext[side] = extent_of(s->count, s->st[side], s->levels);
        if (s->ext[side] <= limit)
            break;
    }
    TT_ASSERT(s->ext[side] <= limit, "shape generator: extent %zu",
              s->ext[side]);
    s->off[side] = MARGIN + (size_t)tt_rng_below(r, 512);
    if (s->total == 0)
        s->ext[side] = 0;
}

static void gen_shape(shape_t *s, uint64_t key, int big)
{
    static const size_t fixed[] = {1, 8, 16, 24, 64, 65};
    tt_rng_t r;
    tt_rng_seed(&r, key);
    memset(s, 0, sizeof *s);
    size_t budget = big ? BIG_BUDGET : SMALL_BUDGET;
    s->levels = big ? 1 + (int)tt_rng_below(&r, MAXL)
                    : (int)tt_rng_below(&r, MAXL + 1);
    size_t run;
    switch (tt_rng_below(&r, 10)) {
    case 0: case 1: case 2: case 3:
        run = fixed[tt_rng_below(&r, 6)];
        break;
    case 4: case 5:
        run = tt_rng_range(&r, 1, 256);
        break;
    case 6: case 7:
        run = tt_rng_range(&r, 1, 4096);
        break;
    case 8:
        run = tt_rng_range(&r, 4097, 65536);
        break;
    default:
        run = 65536;
        break;
    }
    s->count[0] = run;
    size_t rem = budget / run;
    for (int k = 1; k <= s->levels; k++) {
        size_t c;
        if (big && k == s->levels)
            c = rem; /* fill the budget */
        else if (tt_rng_below(&r, 8) == 0)
            c = 1;
        else
            c = tt_rng_range(&r, 1, rem);
        s->count[k] = c;
        rem /= c;
        if (rem == 0)
            rem = 1;
    }
    if (!big && tt_rng_below(&r, 10) == 0)
        s->count[tt_rng_below(&r, (uint64_t)s->levels + 1)] = 0;
    s->total = 1;
    for (int k = 0; k <= s->levels; k++)
        s->total *= s->count[k];

    size_t limit = SLOT - 2 * MARGIN - 1024;
    int pat = (int)tt_rng_below(&r, 6);
    gen_side(&r, s, SIDE_R, pat == 0 || pat == 1, limit);
    gen_side(&r, s, SIDE_P, pat == 0 || pat == 2, limit);
    gen_side(&r, s, SIDE_G, tt_rng_below(&r, 4) == 0, limit);
    s->put_form = (int)tt_rng_below(&r, 3);
    s->get_form = (int)tt_rng_below(&r, 3);
    s->null_strides = s->levels == 0 && tt_rng_below(&r, 2) == 0;
}

static void describe(const shape_t *s, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "levels %d counts [", s->levels);
    for (int i = 0; i <= s->levels && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%zu", i ? " " : "",
                              s->count[i]);
    static const char sides[] = "RPG";
    for (int side = 0; side < 3 && k < len; side++) {
        k += (size_t)snprintf(buf + k, len - k, "] %c off %zu strides [",
                              sides[side], s->off[side]);
        for (int i = 0; i < s->levels && k < len; i++)
            k += (size_t)snprintf(buf + k, len - k, "%s%zu", i ? " " : "",
                                  s->st[side][i]);
    }
    if (k < len)
        snprintf(buf + k, len - k, "] put %s get %s%s",
                 form_name[s->put_form], form_name[s->get_form],
                 s->null_strides ? " (NULL strides)" : "");
}

/* The reference loop: every run, dimension 1 fastest, copied from the
 * source layout to the destination layout. */
static void copy_runs(uint8_t *dst, const size_t *dst_st, const uint8_t *src,
                      const size_t *src_st, const size_t *count, int levels)
{
    size_t idx[MAXL + 1] = {0};
    for (int k = 0; k <= levels; k++)
        if (count[k] == 0)
            return;
    for (;;) {
        size_t od = 0, os = 0;
        for (int k = 1; k <= levels; k++) {
            od += idx[k] * dst_st[k - 1];
            os += idx[k] * src_st[k - 1];
        }
        memcpy(dst + od, src + os, count[0]);
        int k = 1;
        while (k <= levels && ++idx[k] == count[k])
            idx[k++] = 0;
        if (k > levels)
            break;
    }
}

/* Bytes of a side's area that are prepared and checked. */
static size_t span(const shape_t *s, int side)
{
    return s->off[side] + s->ext[side] + MARGIN;
}

static uint64_t key_of(int what, int c, int src, int dst)
{
    return tt_key(seed ^ ((uint64_t)what << 56), (uint64_t)c, (uint64_t)src,
                  (uint64_t)dst);
}
enum { K_SHAPE = 1, K_SRC, K_BG, K_GET };

static int is_big(int c)
{
    return c % 8 == 7;
}

static void check(int rc)
{
    if (rc && ++errors > 20)
        TT_FAIL("too many mismatches");
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_strided");
    seed = tt_seed();
    int me = tt_me, n = tt_n;
    int ncases = (int)tt_arg_long(argc, argv, "--cases", 32);

    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "out of memory");
    TT_CHECK(telemem_malloc_all((size_t)n * SLOT, bases));
    uint8_t *block = bases[me];
    uint8_t *srcs = aligned_alloc(64, (size_t)n * SLOT);
    uint8_t *gets = aligned_alloc(64, (size_t)n * SLOT);
    uint8_t *img = aligned_alloc(64, SLOT);  /* source image (reference) */
    uint8_t *want = aligned_alloc(64, SLOT); /* expected bytes */
    shape_t *sh = calloc((size_t)n, sizeof *sh);
    telemem_handle_t *hs = calloc((size_t)n, sizeof *hs);
    TT_ASSERT(srcs && gets && img && want && sh && hs, "out of memory");
    char desc[512], lab[700];
    size_t bytes_moved = 0;

    for (int c = 0; c < ncases; c++) {
        /* Target side: background in every slot, for every initiator. */
        for (int s = 0; s < n; s++) {
            shape_t ts;
            gen_shape(&ts, key_of(K_SHAPE, c, s, me), is_big(c));
            tt_pat_fill(block + (size_t)s * SLOT, span(&ts, SIDE_R),
                        key_of(K_BG, c, s, me), 0);
        }
        /* Initiator side: shapes, sources, get areas. */
        for (int t = 0; t < n; t++) {
            gen_shape(&sh[t], key_of(K_SHAPE, c, me, t), is_big(c));
            tt_pat_fill(srcs + (size_t)t * SLOT, span(&sh[t], SIDE_P),
                        key_of(K_SRC, c, me, t), 0);
            tt_pat_fill(gets + (size_t)t * SLOT, span(&sh[t], SIDE_G),
                        key_of(K_GET, c, me, t), 0);
            hs[t] = TELEMEM_HANDLE_NULL;
            bytes_moved += 2 * sh[t].total;
        }
        if (me == 0 && c < 2) {
            describe(&sh[n > 1 ? 1 : 0], desc, sizeof desc);
            tt_log("case %d, to rank %d: %s", c, n > 1 ? 1 : 0, desc);
        }
        TT_CHECK(telemem_barrier());

        /* Puts, to every rank starting with the right neighbour. */
        int need_quiet = 0;
        for (int i = 1; i <= n; i++) {
            int t = (me + i) % n;
            shape_t *s = &sh[t];
            uint8_t *rdst = (uint8_t *)bases[t] + (size_t)me * SLOT +
                            s->off[SIDE_R];
            uint8_t *lsrc = srcs + (size_t)t * SLOT + s->off[SIDE_P];
            const size_t *rst = s->null_strides ? NULL : s->st[SIDE_R];
            const size_t *lst = s->null_strides ? NULL : s->st[SIDE_P];
            switch (s->put_form) {
            case FORM_BLOCKING:
                TT_CHECK(telemem_put_strided(t, rdst, rst, lsrc, lst,
                                             s->count, s->levels));
                need_quiet = 1;
                break;
            case FORM_NB:
                TT_CHECK(telemem_put_strided_nb(t, rdst, rst, lsrc, lst,
                                                s->count, s->levels, &hs[t]));
                break;
            default:
                TT_CHECK(telemem_put_strided_nbi(t, rdst, rst, lsrc, lst,
                                                 s->count, s->levels));
                need_quiet = 1;
                break;
            }
        }
        for (int t = 0; t < n; t++)
            TT_CHECK(telemem_wait(&hs[t]));
        if (need_quiet)
            TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_barrier());

        /* Target: every slot against the reference image. */
        for (int s = 0; s < n; s++) {
            shape_t ts;
            gen_shape(&ts, key_of(K_SHAPE, c, s, me), is_big(c));
            size_t rs = span(&ts, SIDE_R);
            tt_pat_fill(want, rs, key_of(K_BG, c, s, me), 0);
            tt_pat_fill(img, span(&ts, SIDE_P), key_of(K_SRC, c, s, me), 0);
            copy_runs(want + ts.off[SIDE_R], ts.st[SIDE_R],
                      img + ts.off[SIDE_P], ts.st[SIDE_P], ts.count,
                      ts.levels);
            describe(&ts, desc, sizeof desc);
            snprintf(lab, sizeof lab, "case %d: put from rank %d (%s)", c, s,
                     desc);
            check(tt_cmp(block + (size_t)s * SLOT, want, rs, lab));
        }

        /* Gets back, into the third layout. */
        need_quiet = 0;
        for (int i = 1; i <= n; i++) {
            int t = (me + i) % n;
            shape_t *s = &sh[t];
            uint8_t *rsrc = (uint8_t *)bases[t] + (size_t)me * SLOT +
                            s->off[SIDE_R];
            uint8_t *ldst = gets + (size_t)t * SLOT + s->off[SIDE_G];
            const size_t *rst = s->null_strides ? NULL : s->st[SIDE_R];
            const size_t *lst = s->null_strides ? NULL : s->st[SIDE_G];
            switch (s->get_form) {
            case FORM_BLOCKING:
                TT_CHECK(telemem_get_strided(t, ldst, lst, rsrc, rst,
                                             s->count, s->levels));
                break;
            case FORM_NB:
                TT_CHECK(telemem_get_strided_nb(t, ldst, lst, rsrc, rst,
                                                s->count, s->levels, &hs[t]));
                break;
            default:
                TT_CHECK(telemem_get_strided_nbi(t, ldst, lst, rsrc, rst,
                                                 s->count, s->levels));
                need_quiet = 1;
                break;
            }
        }
        for (int t = 0; t < n; t++)
            TT_CHECK(telemem_wait(&hs[t]));
        if (need_quiet)
            TT_CHECK(telemem_quiet());

        for (int t = 0; t < n; t++) {
            shape_t *s = &sh[t];
            describe(s, desc, sizeof desc);
            size_t gs = span(s, SIDE_G);
            tt_pat_fill(want, gs, key_of(K_GET, c, me, t), 0);
            copy_runs(want + s->off[SIDE_G], s->st[SIDE_G],
                      srcs + (size_t)t * SLOT + s->off[SIDE_P],
                      s->st[SIDE_P], s->count, s->levels);
            snprintf(lab, sizeof lab, "case %d: get from rank %d (%s)", c, t,
                     desc);
            check(tt_cmp(gets + (size_t)t * SLOT, want, gs, lab));
            snprintf(lab, sizeof lab, "case %d: source area of the put to "
                     "rank %d (%s)", c, t, desc);
            check(tt_pat_verify(srcs + (size_t)t * SLOT, span(s, SIDE_P),
                                key_of(K_SRC, c, me, t), 0, lab));
        }
        /* Nobody prepares the next case while others still get. */
        TT_CHECK(telemem_barrier());
    }
    TT_ASSERT(errors == 0, "%d mismatches (seed 0x%" PRIx64 ")", errors,
              seed);
    if (me == 0)
        tt_log("%d cases, %zu bytes moved by rank 0: all match", ncases,
               bytes_moved);
    TT_CHECK(telemem_free_all(block));
    free(srcs);
    free(gets);
    free(img);
    free(want);
    free(sh);
    free(hs);
    free(bases);
    tt_finalize();
    return 0;
}

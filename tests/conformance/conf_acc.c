/* conf_acc.c - conformance: accumulate (remote += scale * local) of every
 * element type (INT32, INT64, UINT64, FLOAT, DOUBLE, COMPLEX_FLOAT,
 * COMPLEX_DOUBLE), contiguous, strided, vector and list, with scale 1 and
 * one or two other scales ((0,1) and (2,-1) for the complex types), each
 * rank accumulating three times (blocking, _nb, _nbi) into the same area
 * of every rank's block at once.  Each case's remote layout is the same
 * for all initiators (seeded by the case), the local layout is each
 * initiator's own.  Values are small integers times powers of two, so
 * every floating-point sum is exact whatever the order the target applies
 * them in, and the result must equal the serial sum computed here
 * (integers bit for bit, floating point by value); the elements around
 * and between the updated ones must keep their initial values. */
#include "tt.h"

#define NTYPES 7
#define ITERS 3          /* blocking, nb, nbi */
#define MARGIN_EL 8      /* untouched elements before and after an area */
#define MAXL 3

enum { F_CONTIG, F_STRIDED, F_VECTOR, F_LIST, NFORMS };
static const char *const form_name[] = {"contiguous", "strided", "vector",
                                        "list"};
static const char *const type_name[] = {"INT32", "INT64", "UINT64", "FLOAT",
                                        "DOUBLE", "COMPLEX_FLOAT",
                                        "COMPLEX_DOUBLE"};
static const size_t esize[] = {4, 8, 8, 4, 8, 8, 16};

typedef struct {
    int type, form, scale_i;
    size_t esz;
    uint8_t scale[16];
    /* Remote side, the same on every initiator. */
    size_t n;            /* elements in packed order */
    size_t *relem;       /* remote element index of packed element j */
    size_t area_el;      /* elements of the target area, margins included */
    size_t area_off;     /* byte offset of the area in every block */
    int levels;
    size_t count[MAXL + 1]; /* count[0] in elements */
    size_t rst[MAXL];    /* remote strides in elements */
    size_t nseg;
    size_t *seg_len;     /* elements */
    size_t *seg_r;       /* remote element offset of each segment */
    /* Local side, this initiator's own. */
    size_t *lelem;
    size_t local_el;
    size_t lst[MAXL];
    size_t *seg_l;
} plan_t;

static uint64_t seed;
static int me, n;
static int errors;

/* ---- values: exact in every type ---- */

static void value(int type, uint64_t key, size_t j, void *out)
{
    uint64_t h = tt_mix(key ^ ((uint64_t)j * 0x9e3779b97f4a7c15ull));
    uint64_t h2 = tt_mix(h);
    switch (type) {
    case TELEMEM_INT32: {
        int32_t v = (int32_t)(h & 0x1fffff) - 0x100000;
        memcpy(out, &v, 4);
        break;
    }
    case TELEMEM_INT64: {
        int64_t v = (int64_t)(h & ((1ull << 41) - 1)) - ((int64_t)1 << 40);
        memcpy(out, &v, 8);
        break;
    }
    case TELEMEM_UINT64: {
        uint64_t v = h >> 14;
        memcpy(out, &v, 8);
        break;
    }
    case TELEMEM_FLOAT:
    case TELEMEM_COMPLEX_FLOAT: {
        float v[2];
        for (int i = 0; i < 2; i++) {
            uint64_t x = i ? h2 : h;
            int k = (int)(x & 127) - 64;
            v[i] = (float)(k ? k : 1) * (float)(1u << ((x >> 7) & 7)) /
                   16.0f; /* k * 2^(0..7) / 16 */
        }
        memcpy(out, v, type == TELEMEM_FLOAT ? 4 : 8);
        break;
    }
    default: {
        double v[2];
        for (int i = 0; i < 2; i++) {
            uint64_t x = i ? h2 : h;
            int k = (int)(x & 0xffff) - 32768;
            v[i] = (double)(k ? k : 1) * (double)(1u << ((x >> 16) & 15)) /
                   256.0;
        }
        memcpy(out, v, type == TELEMEM_DOUBLE ? 8 : 16);
        break;
    }
    }
}

static int nscales(int type)
{
    return type >= TELEMEM_COMPLEX_FLOAT ? 3 : 2;
}

static void make_scale(int type, int i, void *out)
{
    switch (type) {
    case TELEMEM_INT32: {
        int32_t v = i ? -3 : 1;
        memcpy(out, &v, 4);
        break;
    }
    case TELEMEM_INT64: {
        int64_t v = i ? 5 : 1;
        memcpy(out, &v, 8);
        break;
    }
    case TELEMEM_UINT64: {
        uint64_t v = i ? 3 : 1;
        memcpy(out, &v, 8);
        break;
    }
    case TELEMEM_FLOAT: {
        float v = i ? 2.0f : 1.0f;
        memcpy(out, &v, 4);
        break;
    }
    case TELEMEM_DOUBLE: {
        double v = i ? -2.5 : 1.0;
        memcpy(out, &v, 8);
        break;
    }
    case TELEMEM_COMPLEX_FLOAT: {
        static const float v[3][2] = {{1, 0}, {0, 1}, {2, -1}};
        memcpy(out, v[i], 8);
        break;
    }
    default: {
        static const double v[3][2] = {{1, 0}, {0, 1}, {2, -1}};
        memcpy(out, v[i], 16);
        break;
    }
    }
}

/* *dst += *scale * *src, the reference (wrapping integer arithmetic). */
static void acc_one(int type, void *dst, const void *scale, const void *src)
{
    switch (type) {
    case TELEMEM_INT32: {
        uint32_t d, s, x;
        memcpy(&d, dst, 4);
        memcpy(&s, scale, 4);
        memcpy(&x, src, 4);
        d += s * x;
        memcpy(dst, &d, 4);
        break;
    }
    case TELEMEM_INT64:
    case TELEMEM_UINT64: {
        uint64_t d, s, x;
        memcpy(&d, dst, 8);
        memcpy(&s, scale, 8);
        memcpy(&x, src, 8);
        d += s * x;
        memcpy(dst, &d, 8);
        break;
    }
    case TELEMEM_FLOAT: {
        float d, s, x;
        memcpy(&d, dst, 4);
        memcpy(&s, scale, 4);
        memcpy(&x, src, 4);
        d += s * x;
        memcpy(dst, &d, 4);
        break;
    }
    case TELEMEM_DOUBLE: {
        double d, s, x;
        memcpy(&d, dst, 8);
        memcpy(&s, scale, 8);
        memcpy(&x, src, 8);
        d += s * x;
        memcpy(dst, &d, 8);
        break;
    }
    case TELEMEM_COMPLEX_FLOAT: {
        float d[2], s[2], x[2];
        memcpy(d, dst, 8);
        memcpy(s, scale, 8);
        memcpy(x, src, 8);
        d[0] += s[0] * x[0] - s[1] * x[1];
        d[1] += s[0] * x[1] + s[1] * x[0];
        memcpy(dst, d, 8);
        break;
    }
    default: {
        double d[2], s[2], x[2];
        memcpy(d, dst, 16);
        memcpy(s, scale, 16);
        memcpy(x, src, 16);
        d[0] += s[0] * x[0] - s[1] * x[1];
        d[1] += s[0] * x[1] + s[1] * x[0];
        memcpy(dst, d, 16);
        break;
    }
    }
}

/* Equal: integers bit for bit, floating point by value (a sum may end in
 * +0 or -0 depending on the order). */
static int same(int type, const void *a, const void *b)
{
    if (type == TELEMEM_FLOAT || type == TELEMEM_COMPLEX_FLOAT) {
        float x[2] = {0, 0}, y[2] = {0, 0};
        size_t k = type == TELEMEM_FLOAT ? 1 : 2;
        memcpy(x, a, 4 * k);
        memcpy(y, b, 4 * k);
        return x[0] == y[0] && x[1] == y[1];
    }
    if (type == TELEMEM_DOUBLE || type == TELEMEM_COMPLEX_DOUBLE) {
        double x[2] = {0, 0}, y[2] = {0, 0};
        size_t k = type == TELEMEM_DOUBLE ? 1 : 2;
        memcpy(x, a, 8 * k);
        memcpy(y, b, 8 * k);
        return x[0] == y[0] && x[1] == y[1];
    }
    return memcmp(a, b, esize[type]) == 0;
}

static void show(int type, const void *p, char *buf, size_t len)
{
    switch (type) {
    case TELEMEM_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(buf, len, "%" PRId32, v);
        break;
    }
    case TELEMEM_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, len, "%" PRId64, v);
        break;
    }
    case TELEMEM_UINT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, len, "%" PRIu64, v);
        break;
    }
    case TELEMEM_FLOAT: {
        float v;
        memcpy(&v, p, 4);
        snprintf(buf, len, "%.9g", (double)v);
        break;
    }
    case TELEMEM_DOUBLE: {
        double v;
        memcpy(&v, p, 8);
        snprintf(buf, len, "%.17g", v);
        break;
    }
    case TELEMEM_COMPLEX_FLOAT: {
        float v[2];
        memcpy(v, p, 8);
        snprintf(buf, len, "(%.9g, %.9g)", (double)v[0], (double)v[1]);
        break;
    }
    default: {
        double v[2];
        memcpy(v, p, 16);
        snprintf(buf, len, "(%.17g, %.17g)", v[0], v[1]);
        break;
    }
    }
}

/* ---- plans ---- */

static uint64_t key_of(int what, int c, int a, int b)
{
    return tt_key(seed ^ ((uint64_t)what << 56), (uint64_t)c, (uint64_t)a,
                  (uint64_t)b);
}
enum { K_PLAN = 1, K_LOCAL, K_VAL, K_INIT };

static size_t pick_count(tt_rng_t *r)
{
    static const size_t big[] = {0, 1, 2, 7, 64, 1000, 2049, 5000};
    return tt_rng_below(r, 2) ? big[tt_rng_below(r, 8)]
                              : tt_rng_range(r, 1, 300);
}

/* Strides (elements) over count[] with random gaps, each >= the extent of
 * the block below; returns the extent. */
static size_t gen_strides(tt_rng_t *r, const size_t *count, int levels,
                          size_t *st)
{
    size_t ext = count[0];
    for (int k = 1; k <= levels; k++) {
        st[k - 1] = ext + (tt_rng_below(r, 3) ? tt_rng_below(r, 9) : 0);
        ext += (count[k] - 1) * st[k - 1];
    }
    return ext;
}

/* Segments placed without overlap, in random order, with gaps; offsets in
 * elements; returns the extent. */
static size_t place(tt_rng_t *r, size_t nseg, const size_t *len, size_t *off)
{
    size_t *perm = malloc((nseg + 1) * sizeof *perm);
    TT_ASSERT(perm, "out of memory");
    for (size_t i = 0; i < nseg; i++)
        perm[i] = i;
    for (size_t i = nseg; i > 1; i--) {
        size_t j = tt_rng_below(r, i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    size_t cur = 0;
    for (size_t i = 0; i < nseg; i++) {
        cur += tt_rng_below(r, 2) ? tt_rng_below(r, 5) : 0;
        off[perm[i]] = cur;
        cur += len[perm[i]];
    }
    free(perm);
    return cur;
}

/* Element index lists in packed order: strided (runs, dimension 1
 * fastest) or segments. */
static void strided_elems(const size_t *count, const size_t *st, int levels,
                          size_t base, size_t *out)
{
    size_t idx[MAXL + 1] = {0}, j = 0;
    for (int k = 0; k <= levels; k++)
        if (count[k] == 0)
            return;
    for (;;) {
        size_t o = base;
        for (int k = 1; k <= levels; k++)
            o += idx[k] * st[k - 1];
        for (size_t e = 0; e < count[0]; e++)
            out[j++] = o + e;
        int k = 1;
        while (k <= levels && ++idx[k] == count[k])
            idx[k++] = 0;
        if (k > levels)
            break;
    }
}

static void seg_elems(size_t nseg, const size_t *len, const size_t *off,
                      size_t base, size_t *out)
{
    size_t j = 0;
    for (size_t i = 0; i < nseg; i++)
        for (size_t e = 0; e < len[i]; e++)
            out[j++] = base + off[i] + e;
}

static void gen_plan(plan_t *p, int c, int type, int form, int si)
{
    tt_rng_t r, lr;
    tt_rng_seed(&r, key_of(K_PLAN, c, 0, 0));
    tt_rng_seed(&lr, key_of(K_LOCAL, c, me, 0));
    memset(p, 0, sizeof *p);
    p->type = type;
    p->form = form;
    p->scale_i = si;
    p->esz = esize[type];
    make_scale(type, si, p->scale);
    size_t rext = 0, lext = 0;

    if (form == F_CONTIG) {
        p->n = pick_count(&r);
        rext = lext = p->n;
    } else if (form == F_STRIDED) {
        p->levels = (int)tt_rng_range(&r, 0, MAXL);
        p->count[0] = tt_rng_range(&r, 1, tt_rng_below(&r, 2) ? 4 : 40);
        p->n = p->count[0];
        for (int k = 1; k <= p->levels; k++) {
            p->count[k] = tt_rng_range(&r, 1, k == 1 ? 60 : 6);
            p->n *= p->count[k];
        }
        if (tt_rng_below(&r, 12) == 0) { /* an empty patch */
            p->count[tt_rng_below(&r, (uint64_t)p->levels + 1)] = 0;
            p->n = 0;
        }
        size_t cnt1[MAXL + 1];
        for (int k = 0; k <= p->levels; k++)
            cnt1[k] = p->count[k] ? p->count[k] : 1;
        rext = gen_strides(&r, cnt1, p->levels, p->rst);
        lext = gen_strides(&lr, cnt1, p->levels, p->lst);
    } else {
        p->nseg = tt_rng_below(&r, 6) == 0 ? tt_rng_below(&r, 3)
                                           : tt_rng_range(&r, 1, 200);
        size_t k = tt_rng_range(&r, 1, 16);
        p->seg_len = calloc(p->nseg + 1, sizeof *p->seg_len);
        p->seg_r = calloc(p->nseg + 1, sizeof *p->seg_r);
        p->seg_l = calloc(p->nseg + 1, sizeof *p->seg_l);
        TT_ASSERT(p->seg_len && p->seg_r && p->seg_l, "out of memory");
        for (size_t i = 0; i < p->nseg; i++) {
            p->seg_len[i] = form == F_VECTOR ? k : tt_rng_below(&r, 40);
            p->n += p->seg_len[i];
        }
        rext = place(&r, p->nseg, p->seg_len, p->seg_r);
        lext = place(&lr, p->nseg, p->seg_len, p->seg_l);
    }
    p->area_el = rext + 2 * MARGIN_EL;
    p->local_el = lext + 1;
    p->relem = calloc(p->n + 1, sizeof *p->relem);
    p->lelem = calloc(p->n + 1, sizeof *p->lelem);
    TT_ASSERT(p->relem && p->lelem, "out of memory");
    if (form == F_CONTIG) {
        for (size_t j = 0; j < p->n; j++) {
            p->relem[j] = MARGIN_EL + j;
            p->lelem[j] = j;
        }
    } else if (form == F_STRIDED) {
        strided_elems(p->count, p->rst, p->levels, MARGIN_EL, p->relem);
        strided_elems(p->count, p->lst, p->levels, 0, p->lelem);
    } else {
        seg_elems(p->nseg, p->seg_len, p->seg_r, MARGIN_EL, p->relem);
        seg_elems(p->nseg, p->seg_len, p->seg_l, 0, p->lelem);
    }
}

static void free_plan(plan_t *p)
{
    free(p->relem);
    free(p->lelem);
    free(p->seg_len);
    free(p->seg_r);
    free(p->seg_l);
}

static void describe(const plan_t *p, char *buf, size_t len)
{
    char sc[96];
    show(p->type, p->scale, sc, sizeof sc);
    int k = snprintf(buf, len, "%s %s, scale %s, %zu elements",
                     type_name[p->type], form_name[p->form], sc, p->n);
    if (p->form == F_STRIDED && k > 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, ", levels %d, run %zu elements, "
                 "counts %zu %zu %zu", p->levels, p->count[0], p->count[1],
                 p->count[2], p->count[3]);
    else if (p->form >= F_VECTOR && k > 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, ", %zu segments", p->nseg);
}

/* Issue one accumulate of plan p from lbuf into rank t's area. */
static void issue(const plan_t *p, int t, uint8_t *rarea, uint8_t *lbuf,
                  int form, telemem_handle_t *h)
{
    int ty = p->type;
    const void *sc = p->scale;
    size_t esz = p->esz;
    uint8_t *rdst = rarea + MARGIN_EL * esz;
    if (p->form == F_CONTIG) {
        size_t b = p->n * esz;
        if (form == 0)
            TT_CHECK(telemem_acc(t, ty, sc, rdst, lbuf, b));
        else if (form == 1)
            TT_CHECK(telemem_acc_nb(t, ty, sc, rdst, lbuf, b, h));
        else
            TT_CHECK(telemem_acc_nbi(t, ty, sc, rdst, lbuf, b));
    } else if (p->form == F_STRIDED) {
        size_t cnt[MAXL + 1], rs[MAXL], ls[MAXL];
        for (int k = 0; k <= p->levels; k++)
            cnt[k] = p->count[k];
        cnt[0] *= esz;
        for (int k = 0; k < p->levels; k++) {
            rs[k] = p->rst[k] * esz;
            ls[k] = p->lst[k] * esz;
        }
        if (form == 0)
            TT_CHECK(telemem_acc_strided(t, ty, sc, rdst, rs, lbuf, ls, cnt,
                                         p->levels));
        else if (form == 1)
            TT_CHECK(telemem_acc_strided_nb(t, ty, sc, rdst, rs, lbuf, ls,
                                            cnt, p->levels, h));
        else
            TT_CHECK(telemem_acc_strided_nbi(t, ty, sc, rdst, rs, lbuf, ls,
                                             cnt, p->levels));
    } else if (p->form == F_VECTOR) {
        void **ra = calloc(p->nseg + 1, sizeof *ra);
        const void **la = calloc(p->nseg + 1, sizeof *la);
        TT_ASSERT(ra && la, "out of memory");
        for (size_t i = 0; i < p->nseg; i++) {
            ra[i] = rdst + p->seg_r[i] * esz;
            la[i] = lbuf + p->seg_l[i] * esz;
        }
        size_t b = p->nseg ? p->seg_len[0] * esz : 8 * esz;
        if (form == 0)
            TT_CHECK(telemem_acc_vector(t, ty, sc, ra, la, p->nseg, b));
        else if (form == 1)
            TT_CHECK(telemem_acc_vector_nb(t, ty, sc, ra, la, p->nseg, b, h));
        else
            TT_CHECK(telemem_acc_vector_nbi(t, ty, sc, ra, la, p->nseg, b));
        free(ra); /* reusable as soon as the call returns */
        free(la);
    } else {
        telemem_seg_t *segs = calloc(p->nseg + 1, sizeof *segs);
        TT_ASSERT(segs, "out of memory");
        for (size_t i = 0; i < p->nseg; i++) {
            segs[i].remote = rdst + p->seg_r[i] * esz;
            segs[i].local = lbuf + p->seg_l[i] * esz;
            segs[i].bytes = p->seg_len[i] * esz;
        }
        if (form == 0)
            TT_CHECK(telemem_acc_list(t, ty, sc, segs, p->nseg));
        else if (form == 1)
            TT_CHECK(telemem_acc_list_nb(t, ty, sc, segs, p->nseg, h));
        else
            TT_CHECK(telemem_acc_list_nbi(t, ty, sc, segs, p->nseg));
        free(segs);
    }
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_acc");
    seed = tt_seed();
    me = tt_me;
    n = tt_n;

    /* Cases: every type x form x scale. */
    int ncases = 0;
    plan_t *plans = calloc(NTYPES * NFORMS * 3, sizeof *plans);
    TT_ASSERT(plans, "out of memory");
    size_t block = 0, maxlocal = 0;
    for (int ty = 0; ty < NTYPES; ty++)
        for (int f = 0; f < NFORMS; f++)
            for (int si = 0; si < nscales(ty); si++) {
                plan_t *p = &plans[ncases];
                gen_plan(p, ncases, ty, f, si);
                p->area_off = block;
                block += (p->area_el * p->esz + 63) & ~(size_t)63;
                if (p->local_el * p->esz > maxlocal)
                    maxlocal = p->local_el * p->esz;
                ncases++;
            }

    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "out of memory");
    TT_CHECK(telemem_malloc_all(block, bases));
    uint8_t *mine = bases[me];
    uint8_t *lbuf[ITERS];
    for (int it = 0; it < ITERS; it++) {
        lbuf[it] = aligned_alloc(64, (maxlocal + 63) & ~(size_t)63);
        TT_ASSERT(lbuf[it], "out of memory");
    }
    telemem_handle_t *hs = calloc((size_t)n * ITERS, sizeof *hs);
    uint8_t *want = aligned_alloc(64, (block + 63) & ~(size_t)63);
    TT_ASSERT(hs && want, "out of memory");

    /* Initial values of this rank's areas (margins included). */
    for (int c = 0; c < ncases; c++) {
        plan_t *p = &plans[c];
        for (size_t e = 0; e < p->area_el; e++)
            value(p->type, key_of(K_INIT, c, me, 0), e,
                  mine + p->area_off + e * p->esz);
    }
    if (me == 0)
        tt_log("%d cases, %zu bytes of target areas per rank", ncases,
               block);
    TT_CHECK(telemem_barrier());

    size_t ops = 0;
    for (int c = 0; c < ncases; c++) {
        plan_t *p = &plans[c];
        for (int it = 0; it < ITERS; it++) {
            /* Garbage in the gaps of the local layout, values in place. */
            tt_pat_fill(lbuf[it], p->local_el * p->esz,
                        key_of(K_VAL, c, me, 100 + it), 0);
            for (size_t j = 0; j < p->n; j++)
                value(p->type, key_of(K_VAL, c, me, it), j,
                      lbuf[it] + p->lelem[j] * p->esz);
            for (int i = 1; i <= n; i++) {
                int t = (me + i + it) % n;
                hs[it * n + t] = TELEMEM_HANDLE_NULL;
                issue(p, t, (uint8_t *)bases[t] + p->area_off, lbuf[it], it,
                      &hs[it * n + t]);
                ops++;
            }
        }
        for (int k = 0; k < n * ITERS; k++)
            TT_CHECK(telemem_wait(&hs[k]));
        TT_CHECK(telemem_quiet());
    }
    TT_CHECK(telemem_barrier());

    /* The serial sum, in rank and iteration order. */
    char desc[256], got_s[96], want_s[96];
    for (int c = 0; c < ncases; c++) {
        plan_t *p = &plans[c];
        uint8_t *w = want + p->area_off, *g = mine + p->area_off;
        uint8_t v[16];
        for (size_t e = 0; e < p->area_el; e++)
            value(p->type, key_of(K_INIT, c, me, 0), e, w + e * p->esz);
        for (int r = 0; r < n; r++)
            for (int it = 0; it < ITERS; it++)
                for (size_t j = 0; j < p->n; j++) {
                    value(p->type, key_of(K_VAL, c, r, it), j, v);
                    acc_one(p->type, w + p->relem[j] * p->esz, p->scale, v);
                }
        size_t bad = 0, first = 0;
        for (size_t e = 0; e < p->area_el; e++)
            if (!same(p->type, g + e * p->esz, w + e * p->esz) && !bad++)
                first = e;
        if (bad) {
            describe(p, desc, sizeof desc);
            show(p->type, g + first * p->esz, got_s, sizeof got_s);
            show(p->type, w + first * p->esz, want_s, sizeof want_s);
            fprintf(stderr, "[tt r%d] case %d (%s): %zu of %zu elements "
                    "differ, first element %zu: got %s, expected %s\n", me,
                    c, desc, bad, p->area_el, first, got_s, want_s);
            if (++errors > 10)
                break;
        }
    }
    TT_ASSERT(errors == 0, "%d cases wrong (seed 0x%" PRIx64 ")", errors,
              seed);
    if (me == 0)
        tt_log("%zu accumulates issued by rank 0, all sums exact", ops);

    TT_CHECK(telemem_free_all(mine));
    for (int c = 0; c < ncases; c++)
        free_plan(&plans[c]);
    for (int it = 0; it < ITERS; it++)
        free(lbuf[it]);
    free(plans);
    free(hs);
    free(want);
    free(bases);
    tt_finalize();
    return 0;
}

/* unit_pack_acc.c - unit_pack's accumulate cases: the kernels of every
 * type against a serial loop, and unpack-accumulate of random shapes in
 * fragments (unit_pack.c says what the test covers). */
#include "unit_pack.h"

/* ---- accumulate ---------------------------------------------------------- */

const char *const tname[TLM_ACC_NTYPES] = {
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

void rand_elems(int type, void *p, size_t n)
{
    size_t es = tlm_acc_elem_size(type);
    for (size_t i = 0; i < n; i++)
        rand_elem(type, (char *)p + i * es);
}

/* A scale: 1, or another value (for complex sometimes (1, 0), which the
 * library treats as 1, and (1, x)). */
bool rand_scale(int type, void *a, bool one)
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

void ref_acc(int type, void *d, const void *s, size_t n, const void *a)
{
    size_t es = tlm_acc_elem_size(type);
    for (size_t i = 0; i < n; i++)
        ref_acc1(type, (char *)d + i * es, (const char *)s + i * es, a);
}

void test_acc_kernels(void)
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
void test_unpack_acc(void)
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

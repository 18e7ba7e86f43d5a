/* conf_coll.c - conformance: collectives.  broadcast from every root at
 * sizes 0, 1, 8, 100 KB, 3 MB; allreduce for every type x op at counts 0,
 * 1, 1000, 100000 against a locally computed expectation, with the result
 * bit-identical on all ranks (also for inexact floating-point sums);
 * allgather at 0, 1, 3, 64 KB.  Guard bytes around every buffer. */
#include <math.h>

#include "tt.h"

static int me, n;
static uint64_t seed;
static int errors;

static void note(int bad, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(int bad, const char *fmt, ...)
{
    if (!bad)
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[tt r%d] MISMATCH: %s\n", me, msg);
    if (++errors > 30)
        TT_FAIL("too many mismatches");
}

static uint64_t fnv(const void *p, size_t n_)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n_; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Every rank's results hash the same. */
static void same_everywhere(const void *buf, size_t bytes, const char *what)
{
    uint64_t h = fnv(buf, bytes);
    uint64_t *all = malloc((size_t)n * 8);
    TT_CHECK(telemem_allgather(&h, all, 8));
    for (int i = 0; i < n; i++)
        note(all[i] != h, "%s: rank %d's result differs from mine", what, i);
    free(all);
}

static void test_broadcast(void)
{
    static const size_t sz[] = {0, 1, 8, 100 * 1024, 3 * 1024 * 1024};
    for (int root = 0; root < n; root++) {
        for (size_t k = 0; k < sizeof sz / sizeof sz[0]; k++) {
            tt_gbuf_t b;
            char lab[80];
            tt_gbuf_alloc(&b, sz[k], (size_t)root % 8,
                          tt_key(seed, 60, me, k));
            uint64_t key = tt_key(seed, 61, root, k);
            if (me == root)
                tt_pat_fill(b.p, sz[k], key, 0);
            else
                tt_pat_fill(b.p, sz[k], key ^ 1, 0);
            TT_CHECK(telemem_broadcast(b.p, sz[k], root));
            snprintf(lab, sizeof lab, "broadcast root %d size %zu", root,
                     sz[k]);
            note(tt_pat_verify(b.p, sz[k], key, 0, lab) != 0, "%s", lab);
            note(tt_gbuf_check(&b, lab) != 0, "%s guards", lab);
            tt_gbuf_free(&b);
        }
    }
    /* NULL with 0 bytes is fine. */
    TT_CHECK(telemem_broadcast(NULL, 0, n - 1));
    if (me == 0)
        tt_log("broadcast from %d roots done", n);
}

static const char *tname[] = {"INT32", "INT64", "UINT64", "FLOAT", "DOUBLE"};
static const char *oname[] = {"SUM", "MIN", "MAX"};
static const size_t tsize[] = {4, 8, 8, 4, 8};

/* Rank r's element j; exact != 0 gives values whose sums are exact in
 * every type, else arbitrary floating-point values. */
static void value(int type, int r, size_t j, int exact, void *out)
{
    uint64_t m = tt_key(seed, 70 + (uint64_t)exact, (uint64_t)r, j);
    int32_t small = (int32_t)(m % 2001) - 1000;
    switch (type) {
    case TELEMEM_INT32: {
        int32_t v = small * 1000 + (int32_t)(m >> 40) % 1000;
        memcpy(out, &v, 4);
        break;
    }
    case TELEMEM_INT64: {
        int64_t v = (int64_t)(m >> 14) - ((int64_t)1 << 49);
        memcpy(out, &v, 8);
        break;
    }
    case TELEMEM_UINT64: {
        uint64_t v = m >> 4;
        memcpy(out, &v, 8);
        break;
    }
    case TELEMEM_FLOAT: {
        float v = exact ? (float)small * 0.25f
                        : (float)((double)(m >> 11) / 9007199254740992.0 *
                                  2e6 - 1e6);
        memcpy(out, &v, 4);
        break;
    }
    default: {
        double v = exact ? (double)small * 0.125
                         : ((double)(m >> 11) / 9007199254740992.0 - 0.5) *
                               1e10;
        memcpy(out, &v, 8);
        break;
    }
    }
}

#define COMBINE(T)                                                          \
    do {                                                                    \
        T a_, b_;                                                           \
        memcpy(&a_, acc, sizeof a_);                                        \
        memcpy(&b_, v, sizeof b_);                                          \
        T r_ = op == TELEMEM_SUM ? (T)(a_ + b_)                             \
             : op == TELEMEM_MIN ? (b_ < a_ ? b_ : a_)                      \
                                 : (b_ > a_ ? b_ : a_);                     \
        memcpy(acc, &r_, sizeof r_);                                        \
    } while (0)

static void combine(int type, int op, void *acc, const void *v)
{
    switch (type) {
    case TELEMEM_INT32: COMBINE(int32_t); break;
    case TELEMEM_INT64: COMBINE(int64_t); break;
    case TELEMEM_UINT64: COMBINE(uint64_t); break;
    case TELEMEM_FLOAT: COMBINE(float); break;
    default: COMBINE(double); break;
    }
}

/* Inexact sums may differ from the local left-to-right sum by rounding:
 * bound it by n * largest operand * epsilon (with room). */
static int close_enough(int type, const void *got, const void *want)
{
    double g, w, tol;
    if (type == TELEMEM_FLOAT) {
        float a, b;
        memcpy(&a, got, 4);
        memcpy(&b, want, 4);
        g = a;
        w = b;
        tol = 4.0 * n * 1e6 * 1.2e-7;
    } else {
        memcpy(&g, got, 8);
        memcpy(&w, want, 8);
        tol = 4.0 * n * 1e10 * 2.3e-16;
    }
    return fabs(g - w) <= tol;
}

static void test_allreduce(void)
{
    static const size_t counts[] = {0, 1, 1000, 100000};
    for (int type = 0; type < 5; type++) {
        for (int op = 0; op < 3; op++) {
            int passes = type >= TELEMEM_FLOAT ? 2 : 1;
            for (int exact = 1; exact >= 2 - passes; exact--) {
                for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                    size_t cnt = counts[c], es = tsize[type];
                    char lab[120];
                    snprintf(lab, sizeof lab, "allreduce %s %s count %zu%s",
                             tname[type], oname[op], cnt,
                             exact ? "" : " (inexact values)");
                    tt_gbuf_t b;
                    tt_gbuf_alloc(&b, cnt * es, 0, tt_key(seed, 80, me, c));
                    uint8_t *want = malloc(cnt * es + 8);
                    for (size_t j = 0; j < cnt; j++) {
                        value(type, me, j, exact, b.p + j * es);
                        value(type, 0, j, exact, want + j * es);
                        for (int r = 1; r < n; r++) {
                            uint8_t v[8];
                            value(type, r, j, exact, v);
                            combine(type, op, want + j * es, v);
                        }
                    }
                    TT_CHECK(telemem_allreduce(b.p, cnt, (telemem_type_t)type,
                                               (telemem_op_t)op));
                    if (exact || op != TELEMEM_SUM) {
                        note(tt_cmp(b.p, want, cnt * es, lab) != 0, "%s", lab);
                    } else {
                        for (size_t j = 0; j < cnt; j++)
                            if (!close_enough(type, b.p + j * es,
                                              want + j * es)) {
                                note(1, "%s: element %zu far off", lab, j);
                                break;
                            }
                    }
                    note(tt_gbuf_check(&b, lab) != 0, "%s guards", lab);
                    same_everywhere(b.p, cnt * es, lab);
                    tt_gbuf_free(&b);
                    free(want);
                }
            }
        }
    }
    TT_CHECK(telemem_allreduce(NULL, 0, TELEMEM_DOUBLE, TELEMEM_MAX));
    if (me == 0)
        tt_log("allreduce: 5 types x 3 ops done");
}

static void test_allgather(void)
{
    static const size_t sz[] = {0, 1, 3, 64 * 1024};
    for (size_t k = 0; k < sizeof sz / sizeof sz[0]; k++) {
        tt_gbuf_t in, out;
        char lab[80];
        tt_gbuf_alloc(&in, sz[k], 1, tt_key(seed, 90, me, k));
        tt_gbuf_alloc(&out, sz[k] * (size_t)n, 3, tt_key(seed, 91, me, k));
        tt_pat_fill(in.p, sz[k], tt_key(seed, 92, me, k), 0);
        memset(out.p, 0xcc, out.n);
        TT_CHECK(telemem_allgather(in.p, out.p, sz[k]));
        for (int r = 0; r < n; r++) {
            snprintf(lab, sizeof lab, "allgather size %zu, part of rank %d",
                     sz[k], r);
            note(tt_pat_verify(out.p + (size_t)r * sz[k], sz[k],
                               tt_key(seed, 92, r, k), 0, lab) != 0, "%s", lab);
        }
        snprintf(lab, sizeof lab, "allgather size %zu", sz[k]);
        note(tt_gbuf_check(&out, lab) != 0, "%s out guards", lab);
        note(tt_gbuf_check(&in, lab) != 0, "%s in guards", lab);
        note(tt_pat_verify(in.p, sz[k], tt_key(seed, 92, me, k), 0, lab) != 0,
             "%s: input changed", lab);
        tt_gbuf_free(&in);
        tt_gbuf_free(&out);
    }
    TT_CHECK(telemem_allgather(NULL, NULL, 0));
    if (me == 0)
        tt_log("allgather done");
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_coll");
    me = tt_me;
    n = tt_n;
    seed = tt_seed();
    test_broadcast();
    test_allreduce();
    test_allgather();
    int all = errors;
    TT_CHECK(telemem_allreduce(&all, 1, TELEMEM_INT32, TELEMEM_SUM));
    TT_ASSERT(errors == 0, "%d mismatches on this rank", errors);
    TT_ASSERT(all == 0, "%d mismatches on other ranks", all);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

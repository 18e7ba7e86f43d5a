/* conf_collmix.c - conformance: a seeded random sequence of collectives,
 * the same on every rank, back to back: barriers, broadcasts from any
 * root, allreduces of every type and operator, allgathers, at sizes
 * around the node area's slots (docs/coll.md: 512-byte small slots,
 * page-sized pieces), each result checked exactly (integer-valued data,
 * so sums are exact in every type).  A broadcast's readers do not wait
 * for each other, so the next collective's writers must: any mix of
 * them has to hold.  First, requests that come late: rank 0 gets from and
 * puts to every other rank while those already wait in a barrier (asleep
 * after 200 ms: on the node word or their doorbells, docs/wait.md), then
 * joins it.  --ops=N (default 600). */
#include "tt.h"

static int me, n;

static const size_t sizes[] = {0, 1, 8, 100, 511, 512, 513, 4095, 4096,
                               5000, 70000, 300000};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void check_bcast(tt_rng_t *g, uint64_t seed, int i)
{
    size_t b = sizes[tt_rng_below(g, NSIZES)];
    int root = (int)tt_rng_below(g, (uint64_t)n);
    tt_gbuf_t buf;
    tt_gbuf_alloc(&buf, b, (size_t)i % 8, tt_key(seed, 1, me, i));
    uint64_t key = tt_key(seed, 2, root, i);
    tt_pat_fill(buf.p, b, me == root ? key : key ^ 5, 0);
    TT_CHECK(telemem_broadcast(buf.p, b, root));
    char lab[96];
    snprintf(lab, sizeof lab, "op %d: broadcast of %zu bytes from %d", i, b,
             root);
    TT_ASSERT(tt_pat_verify(buf.p, b, key, 0, lab) == 0, "%s", lab);
    TT_ASSERT(tt_gbuf_check(&buf, lab) == 0, "%s: guards", lab);
    tt_gbuf_free(&buf);
}

static const size_t tsz[] = {4, 8, 8, 4, 8};

/* Rank r's element j of op i: a small integer, exact in every type. */
static int64_t elem(int r, size_t j, int i)
{
    return (int64_t)(tt_key(7, (uint64_t)r, j, (uint64_t)i) % 2001) - 1000;
}

static void put_elem(int type, void *p, int64_t v)
{
    switch (type) {
    case TELEMEM_INT32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case TELEMEM_INT64: memcpy(p, &v, 8); break;
    case TELEMEM_UINT64: { uint64_t x = (uint64_t)(v + 1000); memcpy(p, &x, 8); break; }
    case TELEMEM_FLOAT: { float x = (float)v; memcpy(p, &x, 4); break; }
    default: { double x = (double)v; memcpy(p, &x, 8); break; }
    }
}

static void check_allreduce(tt_rng_t *g, int i)
{
    int type = (int)tt_rng_below(g, 5), op = (int)tt_rng_below(g, 3);
    size_t es = tsz[type], cnt = sizes[tt_rng_below(g, NSIZES)] / es;
    uint8_t *buf = malloc(cnt * es + 1), *want = malloc(cnt * es + 1);
    for (size_t j = 0; j < cnt; j++) {
        int64_t acc = elem(0, j, i);
        for (int r = 1; r < n; r++) {
            int64_t v = elem(r, j, i);
            acc = op == TELEMEM_SUM ? acc + v
                  : op == TELEMEM_MIN ? (v < acc ? v : acc)
                                      : (v > acc ? v : acc);
        }
        if (type == TELEMEM_UINT64 && op == TELEMEM_SUM)
            acc += 1000 * (int64_t)(n - 1); /* every rank's +1000 */
        put_elem(type, want + j * es, acc);
        put_elem(type, buf + j * es, elem(me, j, i));
    }
    TT_CHECK(telemem_allreduce(buf, cnt, (telemem_type_t)type,
                               (telemem_op_t)op));
    char lab[96];
    snprintf(lab, sizeof lab, "op %d: allreduce type %d op %d count %zu", i,
             type, op, cnt);
    TT_ASSERT(tt_cmp(buf, want, cnt * es, lab) == 0, "%s", lab);
    free(buf);
    free(want);
}

static void check_allgather(tt_rng_t *g, uint64_t seed, int i)
{
    size_t b = sizes[tt_rng_below(g, NSIZES - 1)];
    uint8_t *in = malloc(b + 1);
    tt_gbuf_t out;
    tt_gbuf_alloc(&out, b * (size_t)n, 0, tt_key(seed, 3, me, i));
    tt_pat_fill(in, b, tt_key(seed, 4, me, i), 0);
    TT_CHECK(telemem_allgather(in, out.p, b));
    char lab[96];
    for (int r = 0; r < n; r++) {
        snprintf(lab, sizeof lab, "op %d: allgather of %zu bytes, rank %d's",
                 i, b, r);
        TT_ASSERT(tt_pat_verify(out.p + (size_t)r * b, b,
                                tt_key(seed, 4, r, i), 0, lab) == 0, "%s",
                  lab);
    }
    TT_ASSERT(tt_gbuf_check(&out, lab) == 0, "%s: guards", lab);
    tt_gbuf_free(&out);
    free(in);
}

static void late_requests(void)
{
    static uint64_t cell[2];
    uintptr_t mine = (uintptr_t)cell, *at = malloc((size_t)n * sizeof(*at));
    TT_ASSERT(at != NULL, "malloc");
    cell[0] = 1000 + (uint64_t)me;
    TT_CHECK(telemem_register(cell, sizeof cell));
    TT_CHECK(telemem_allgather(&mine, at, sizeof mine));
    if (me == 0) {
        usleep(200000);
        for (int r = 1; r < n; r++) {
            uint64_t v = 0, seven = 7;
            TT_CHECK(telemem_get(r, &v, (void *)at[r], sizeof v));
            TT_ASSERT(v == 1000 + (uint64_t)r, "late get from rank %d: %llu",
                      r, (unsigned long long)v);
            TT_CHECK(telemem_put(r, (void *)(at[r] + 8), &seven, 8));
        }
        TT_CHECK(telemem_quiet());
    }
    TT_CHECK(telemem_barrier());
    TT_ASSERT(me == 0 || cell[1] == 7, "late put: %llu",
              (unsigned long long)cell[1]);
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_deregister(cell));
    free(at);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_collmix");
    me = tt_me;
    n = tt_n;
    long ops = tt_arg_long(argc, argv, "--ops", 600);
    uint64_t seed = tt_seed();
    tt_rng_t g;
    tt_rng_seed(&g, seed);
    late_requests();
    int counts[4] = {0};
    for (int i = 0; i < ops; i++) {
        int kind = (int)tt_rng_below(&g, 4);
        counts[kind]++;
        switch (kind) {
        case 0: TT_CHECK(telemem_barrier()); break;
        case 1: check_bcast(&g, seed, i); break;
        case 2: check_allreduce(&g, i); break;
        default: check_allgather(&g, seed, i); break;
        }
    }
    if (me == 0)
        tt_log("%ld collectives: %d barriers, %d broadcasts, %d allreduces, "
               "%d allgathers", ops, counts[0], counts[1], counts[2],
               counts[3]);
    tt_finalize();
    tt_log("PASS");
    return 0;
}

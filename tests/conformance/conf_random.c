/* conf_random.c - conformance: seeded random mixed traffic (put, get,
 * put_nbi, get_nbi, put_nb/get_nb completed by wait or test, fence, quiet)
 * with random sizes and targets, many ranks hammering rank 0 at once.  Each
 * initiator writes only its own slice of every target, so the end state is
 * known: every get is checked against what this rank last wrote there, and
 * at the end every target's memory is compared bit for bit with the
 * initiators' shadow copies.  Options: --ops=N total operations (default
 * 100000, shared among the ranks). */
#include "tt.h"

#define SL (256 * 1024) /* one initiator's slice of a target block */
#define MAXOPSIZE (200 * 1024)
#define MAXNB 48

typedef struct {
    int kind; /* 0 put_nb, 1 get_nb, 2 put_nbi, 3 get_nbi */
    int target;
    telemem_handle_t h;
    uint8_t *buf;
    uint8_t *expect; /* gets: shadow at issue time */
    size_t size, off;
    long opno;
} op_t;

static int me, n;
static uint8_t **shadow; /* shadow[t]: my slice of target t */
static void **bases;
static long nerr;

static uint8_t *slice_addr(int t)
{
    return (uint8_t *)bases[t] + TT_GUARD + (size_t)me * (SL + TT_GUARD);
}

static void check_get(const op_t *o, const uint8_t *got, const uint8_t *want)
{
    char lab[160];
    snprintf(lab, sizeof lab, "op %ld: get from rank %d, offset %zu, %zu bytes",
             o->opno, o->target, o->off, o->size);
    if (tt_cmp(got, want, o->size, lab) && ++nerr > 20)
        TT_FAIL("too many mismatches");
}

static void retire(op_t *o)
{
    if (o->kind == 1 || o->kind == 3)
        check_get(o, o->buf, o->expect);
    free(o->buf);
    free(o->expect);
    o->buf = o->expect = NULL;
}

static uint8_t *dupmem(const void *p, size_t size)
{
    uint8_t *d = malloc(size ? size : 1);
    TT_ASSERT(d != NULL, "malloc(%zu)", size);
    memcpy(d, p, size);
    return d;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_random");
    me = tt_me;
    n = tt_n;
    uint64_t seed = tt_seed();
    long total = tt_arg_long(argc, argv, "--ops", 100000);
    long myops = (total + n - 1) / n;
    tt_rng_t rng;
    tt_rng_seed(&rng, tt_key(seed, 99, (uint64_t)me, 0));

    size_t blk = TT_GUARD + (size_t)n * (SL + TT_GUARD);
    bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(blk, bases));
    uint8_t *mine = bases[me];
    /* Initial contents: slice i of target t = pattern(t, i); guards. */
    for (int i = 0; i < n; i++) {
        uint8_t *s = mine + TT_GUARD + (size_t)i * (SL + TT_GUARD);
        tt_guard_set(s - TT_GUARD, TT_GUARD, tt_key(seed, 21, me, i));
        tt_pat_fill(s, SL, tt_key(seed, 20, me, i), 0);
    }
    tt_guard_set(mine + blk - TT_GUARD, TT_GUARD, tt_key(seed, 21, me, n));
    shadow = calloc((size_t)n, sizeof *shadow);
    for (int t = 0; t < n; t++) {
        shadow[t] = malloc(SL);
        tt_pat_fill(shadow[t], SL, tt_key(seed, 20, t, me), 0);
    }
    uint8_t *tmp = malloc(MAXOPSIZE);
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("%ld operations in total, %ld per rank", total, myops);

    op_t nb[MAXNB];
    int nnb = 0;
    op_t *nbi = NULL;
    size_t nnbi = 0, capnbi = 0, nbi_bytes = 0;
    long counts[8] = {0};

    for (long opno = 0; opno < myops; opno++) {
        int t = tt_rng_below(&rng, 100) < 40 ? 0 : (int)tt_rng_below(&rng, n);
        unsigned r = (unsigned)tt_rng_below(&rng, 1000);
        size_t size;
        if (r < 600)
            size = tt_rng_range(&rng, 0, 64);
        else if (r < 800)
            size = tt_rng_range(&rng, 65, 2048);
        else if (r < 940)
            size = tt_rng_range(&rng, 2049, 20000);
        else if (r < 995)
            size = tt_rng_range(&rng, 20001, 70000);
        else
            size = tt_rng_range(&rng, 70001, MAXOPSIZE);
        size_t off = tt_rng_below(&rng, SL - size + 1);
        uint8_t *remote = slice_addr(t) + off;
        unsigned k = (unsigned)tt_rng_below(&rng, 100);
        int kind = k < 20 ? 4 : k < 32 ? 5 : k < 54 ? 2 : k < 66 ? 3
                 : k < 83 ? 0 : 1; /* 4 put, 5 get */
        counts[kind]++;
        op_t o = {kind, t, TELEMEM_HANDLE_NULL, NULL, NULL, size, off, opno};

        switch (kind) {
        case 4: /* put: source reusable at return */
            tt_pat_fill(tmp, size, tt_key(seed, 30, me, opno), 0);
            TT_CHECK(telemem_put(t, remote, tmp, size));
            memcpy(shadow[t] + off, tmp, size);
            /* Scribble: the library must not read it after return. */
            memset(tmp, 0xee, size);
            break;
        case 5: /* get: sees every earlier op of this rank to t */
            memset(tmp, 0xdd, size);
            TT_CHECK(telemem_get(t, tmp, remote, size));
            check_get(&o, tmp, shadow[t] + off);
            break;
        case 0:
        case 2:
            o.buf = malloc(size ? size : 1);
            tt_pat_fill(o.buf, size, tt_key(seed, 30, me, opno), 0);
            if (kind == 0)
                TT_CHECK(telemem_put_nb(t, remote, o.buf, size, &o.h));
            else
                TT_CHECK(telemem_put_nbi(t, remote, o.buf, size));
            memcpy(shadow[t] + off, o.buf, size);
            break;
        case 1:
        case 3:
            o.buf = malloc(size ? size : 1);
            memset(o.buf, 0xdd, size);
            o.expect = dupmem(shadow[t] + off, size);
            if (kind == 1)
                TT_CHECK(telemem_get_nb(t, o.buf, remote, size, &o.h));
            else
                TT_CHECK(telemem_get_nbi(t, o.buf, remote, size));
            break;
        }
        if (kind == 0 || kind == 1) {
            if (nnb == MAXNB) {
                /* Complete a random one: wait, or test until done. */
                int v = (int)tt_rng_below(&rng, MAXNB);
                if (tt_rng_below(&rng, 2)) {
                    TT_CHECK(telemem_wait(&nb[v].h));
                } else {
                    int done = 0;
                    while (!done)
                        TT_CHECK(telemem_test(&nb[v].h, &done));
                }
                retire(&nb[v]);
                nb[v] = nb[--nnb];
            }
            nb[nnb++] = o;
        } else if (kind == 2 || kind == 3) {
            if (nnbi == capnbi) {
                capnbi = capnbi ? 2 * capnbi : 256;
                nbi = realloc(nbi, capnbi * sizeof *nbi);
            }
            nbi[nnbi++] = o;
            nbi_bytes += size;
        }

        /* Now and then: test all handles once, fence one target, quiet. */
        unsigned e = (unsigned)tt_rng_below(&rng, 1000);
        if (e < 20) {
            for (int i = 0; i < nnb;) {
                int done = 0;
                TT_CHECK(telemem_test(&nb[i].h, &done));
                if (done) {
                    retire(&nb[i]);
                    nb[i] = nb[--nnb];
                } else {
                    i++;
                }
            }
        } else if (e < 30 || nbi_bytes > 16u << 20) {
            TT_CHECK(telemem_quiet());
            for (size_t i = 0; i < nnbi; i++)
                retire(&nbi[i]);
            nnbi = 0;
            nbi_bytes = 0;
        } else if (e < 40) {
            int ft = (int)tt_rng_below(&rng, n);
            TT_CHECK(telemem_fence(ft));
            for (size_t i = 0; i < nnbi;) {
                if (nbi[i].target == ft) {
                    nbi_bytes -= nbi[i].size;
                    retire(&nbi[i]);
                    nbi[i] = nbi[--nnbi];
                } else {
                    i++;
                }
            }
        }
    }
    for (int i = 0; i < nnb; i++) {
        TT_CHECK(telemem_wait(&nb[i].h));
        retire(&nb[i]);
    }
    TT_CHECK(telemem_quiet());
    for (size_t i = 0; i < nnbi; i++)
        retire(&nbi[i]);
    tt_log("ops: put %ld get %ld put_nbi %ld get_nbi %ld put_nb %ld get_nb "
           "%ld", counts[4], counts[5], counts[2], counts[3], counts[0],
           counts[1]);
    TT_CHECK(telemem_barrier());

    /* 1: read back every slice of mine. */
    uint8_t *rb = malloc(SL);
    for (int t = 0; t < n; t++) {
        char lab[80];
        TT_CHECK(telemem_get(t, rb, slice_addr(t), SL));
        snprintf(lab, sizeof lab, "final read-back of my slice at rank %d", t);
        if (tt_cmp(rb, shadow[t], SL, lab))
            nerr++;
    }
    /* 2: each target compares its own memory with all shadows. */
    uint8_t *all = malloc((size_t)n * SL);
    for (int t = 0; t < n; t++) {
        TT_CHECK(telemem_allgather(shadow[t], all, SL));
        if (t != me)
            continue;
        for (int i = 0; i < n; i++) {
            char lab[80];
            uint8_t *s = mine + TT_GUARD + (size_t)i * (SL + TT_GUARD);
            snprintf(lab, sizeof lab, "my memory, slice of rank %d", i);
            if (tt_cmp(s, all + (size_t)i * SL, SL, lab))
                nerr++;
            snprintf(lab, sizeof lab, "guard before slice %d", i);
            if (tt_guard_check(s - TT_GUARD, TT_GUARD, tt_key(seed, 21, me, i),
                               lab))
                nerr++;
        }
        if (tt_guard_check(mine + blk - TT_GUARD, TT_GUARD,
                           tt_key(seed, 21, me, n), "guard at end"))
            nerr++;
    }
    long long errs = nerr;
    TT_CHECK(telemem_allreduce(&errs, 1, TELEMEM_INT64, TELEMEM_SUM));
    TT_ASSERT(nerr == 0, "%ld mismatches on this rank", nerr);
    TT_ASSERT(errs == 0, "%lld mismatches on other ranks", errs);
    TT_CHECK(telemem_free_all(mine));
    for (int t = 0; t < n; t++)
        free(shadow[t]);
    free(shadow);
    free(all);
    free(rb);
    free(tmp);
    free(nbi);
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

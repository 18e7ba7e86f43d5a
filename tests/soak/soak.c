/* soak.c - random traffic for a given time with verification.
 *
 * Every rank owns one slot of SLOT bytes in every rank's block (from
 * telemem_malloc_all) and is the only writer of its slots, so it keeps a
 * shadow copy of each and can predict every byte, every fetched atomic
 * value and every get.  Operations (random kind, target, offset, size):
 * put / get blocking, _nb and _nbi, strided put / get (1-2 levels),
 * vector put / get, accumulate (int64, contiguous and strided), atomics
 * (fetch-add, swap, cswap, int32 and int64, blocking and _nb), active
 * messages (request + reply carrying a checksum of the payload, and long
 * requests written into the slot).  Epochs of EPOCH_OPS operations end at
 * agreed points: quiet, a full check of this rank's slots every
 * VERIFY_EVERY epochs, allgather + allreduce of the counters, barrier, and
 * rank 0 broadcasts whether to go on (--seconds S).
 *
 * --faults: ranks sleep without polling at random points (delays), and
 * one rank chosen from the seed (never rank 0) SIGKILLs itself at a time
 * chosen from the seed.  The survivors must see TELEMEM_ERR_PEER_DEAD (or
 * _TIMED_OUT) from some call within seconds; each then completes its
 * outstanding operations, fences every live rank (must succeed), verifies
 * all its slots at live ranks against the shadow (everything it issued
 * there, not only what a quiet acknowledged), meets the other survivors
 * on a counter at rank 0 and exits.
 *
 * Exit status of a rank: 0 = ran and verified (with --faults: also
 * detected the dead peer and verified the survivors' data); 1 = a check
 * failed or an unexpected error.  Under telemem-run --keep-going a --faults
 * job therefore ends with 137 (the killed rank, 128 + SIGKILL) when every
 * survivor passed, and 1 if one of them failed.
 *
 * Usage: soak [--seconds=S] [--faults] [--slot=BYTES]; TT_SEED as in tt.h.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>

#include "tt.h"

#define EPOCH_OPS 400
#define VERIFY_EVERY 4
#define MAXPEND 24
#define ATOM_BYTES 1024 /* [0, ATOM_BYTES) of a slot: int64 words for
                         * atomics and accumulate */
#define AM_MAXB 2048

static size_t slot = 32 * 1024;
static int me, n;
static void **bases;          /* every rank's block */
static uint8_t *shadow;       /* n * slot: my slot at each rank */
static tt_rng_t rng;
static bool faults;
static double t0, seconds;
static int victim = -1;       /* --faults: the rank that kills itself */
static double kill_at;        /* seconds after t0 */
static bool dead_seen;

static struct {
    uint64_t ops, bytes_verified, delays, am_sent, am_replies, errors_seen;
    uint64_t kinds[32];
} st;

static const char *const kind_names[] = {
    "put", "put_nb", "put_nbi", "get", "get_nb", "get_nbi", "put_strided",
    "get_strided", "put_strided_nbi", "put_vector", "get_vector_nb", "acc",
    "acc_nbi", "acc_strided", "atomic", "atomic_nb", "am", "am_long"};
#define NKINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

static uint8_t *rslot(int t) /* my slot in rank t's block */
{
    return (uint8_t *)bases[t] + (size_t)me * slot;
}

static uint8_t *shd(int t)
{
    return shadow + (size_t)t * slot;
}

/* Rank 0's meeting counter for survivors: after the n slots. */
static uint64_t *meet_word(void)
{
    return (uint64_t *)(void *)((uint8_t *)bases[0] + (size_t)n * slot);
}

static void rnd_fill(void *p, size_t len)
{
    uint8_t *b = p;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = tt_rng_next(&rng);
        memcpy(b + i, &w, 8);
    }
    for (; i < len; i++)
        b[i] = (uint8_t)tt_rng_next(&rng);
}

static void survive(int rc, const char *what, int t);

/* Status of a call: OK goes on; with --faults a dead peer or a timeout
 * starts the survivor's path; anything else fails the test. */
static void check(int rc, const char *what, int t)
{
    if (rc == TELEMEM_OK)
        return;
    if (faults && (rc == TELEMEM_ERR_PEER_DEAD ||
                   rc == TELEMEM_ERR_TIMED_OUT))
        survive(rc, what, t);
    TT_FAIL("%s (rank %d) returned %s: %s", what, t,
            telemem_status_name(rc), telemem_strerror(rc));
}

/* ---- outstanding operations ------------------------------------------- */

enum { P_PUT, P_GET, P_ATOM };
typedef struct pend {
    bool used, has_h;
    telemem_handle_t h;
    int kind, t;
    const char *what;
    uint8_t *buf, *expect; /* get: result and what it must be */
    size_t len;
    int64_t old, want_old; /* atomic */
    int width;
} pend_t;
static pend_t pend[MAXPEND];
static int npend;

static pend_t *pend_new(int kind, int t, const char *what)
{
    for (int i = 0; i < MAXPEND; i++) {
        if (!pend[i].used) {
            pend_t *p = &pend[i];
            memset(p, 0, sizeof *p);
            p->used = true;
            p->kind = kind;
            p->t = t;
            p->what = what;
            npend++;
            return p;
        }
    }
    TT_FAIL("no free pending entry");
}

static void pend_verify(pend_t *p)
{
    if (p->kind == P_GET) {
        if (tt_cmp(p->buf, p->expect, p->len, p->what) != 0)
            TT_FAIL("%s from rank %d: %zu bytes differ from the shadow",
                    p->what, p->t, p->len);
        st.bytes_verified += p->len;
    } else if (p->kind == P_ATOM) {
        int64_t got = p->old;
        if (p->width == 4)
            got = (int64_t)(int32_t)got;
        if (got != p->want_old)
            TT_FAIL("%s at rank %d: old value %" PRId64 ", expected %" PRId64,
                    p->what, p->t, got, p->want_old);
        st.bytes_verified += (size_t)p->width;
    }
}

static void pend_free(pend_t *p)
{
    free(p->buf);
    free(p->expect);
    p->buf = p->expect = NULL;
    p->used = false;
    npend--;
}

/* Wait for every handle, quiet, verify gets and atomics. */
static void complete_all(void)
{
    for (int i = 0; i < MAXPEND; i++) {
        if (pend[i].used && pend[i].has_h) {
            pend[i].has_h = false;
            check(telemem_wait(&pend[i].h), pend[i].what, pend[i].t);
        }
    }
    check(telemem_quiet(), "quiet", -1);
    for (int i = 0; i < MAXPEND; i++) {
        if (pend[i].used) {
            pend_verify(&pend[i]);
            pend_free(&pend[i]);
        }
    }
}

/* ---- active messages ---------------------------------------------------- */

static uint64_t am_outstanding;
static uint64_t am_expect[64]; /* by token % 64: checksum expected back */

static uint64_t fnv(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Request: answer with the payload's checksum and length. */
static void on_req(telemem_am_token_t tok, void *payload, size_t bytes,
                   const uint32_t *args, unsigned nargs, void *ctx)
{
    uint64_t h = fnv(payload, bytes);
    uint32_t a[4] = {nargs ? args[0] : 0, (uint32_t)h, (uint32_t)(h >> 32),
                     (uint32_t)bytes};
    int rc = telemem_am_reply(tok, 1, NULL, 0, a, 4);
    if (rc != TELEMEM_OK)
        TT_FAIL("am_reply: %s", telemem_status_name(rc));
}

static void on_rep(telemem_am_token_t tok, void *payload, size_t bytes,
                   const uint32_t *args, unsigned nargs, void *ctx)
{
    if (nargs != 4)
        TT_FAIL("am reply with %u arguments", nargs);
    uint64_t h = args[1] | (uint64_t)args[2] << 32;
    if (h != am_expect[args[0] % 64])
        TT_FAIL("am reply for token %u: checksum %016" PRIx64
                ", expected %016" PRIx64, args[0], h,
                am_expect[args[0] % 64]);
    st.am_replies++;
    st.bytes_verified += args[3];
    am_outstanding--;
}

static void on_long(telemem_am_token_t tok, void *payload, size_t bytes,
                    const uint32_t *args, unsigned nargs, void *ctx)
{
    (void)tok;
}

static void am_drain(double limit)
{
    double start = tt_now();
    while (am_outstanding) {
        int rc = telemem_poll();
        if (rc < 0)
            check(rc, "poll (am replies)", -1);
        if (tt_now() - start > limit) {
            if (faults && dead_seen)
                return; /* replies from the dead rank never come */
            TT_FAIL("%" PRIu64 " active-message replies missing after %.0f s",
                    am_outstanding, limit);
        }
    }
}

/* ---- faults ------------------------------------------------------------- */

static void maybe_fault(void)
{
    if (!faults)
        return;
    if (me == victim && tt_now() - t0 >= kill_at) {
        tt_log("soak: fault: rank %d kills itself (SIGKILL) at %.2f s", me,
               tt_now() - t0);
        raise(SIGKILL);
    }
    if (tt_rng_below(&rng, 400) == 0) {
        /* A delay without polling: peers must keep going (back-pressure,
         * no false dead-peer verdict). */
        unsigned ms = (unsigned)tt_rng_range(&rng, 1, 40);
        struct timespec ts = {0, (long)ms * 1000000L};
        nanosleep(&ts, NULL);
        st.delays++;
    }
}

/* ---- one random operation ------------------------------------------------ */

static size_t rnd_len(void)
{
    /* mostly small, sometimes around the eager / buffer sizes */
    switch (tt_rng_below(&rng, 8)) {
    case 0: return (size_t)tt_rng_range(&rng, 0, 8);
    case 1: return (size_t)tt_rng_range(&rng, 4000, 4200);
    case 2: return (size_t)tt_rng_range(&rng, 16300, 16500);
    default: return (size_t)tt_rng_range(&rng, 1, 2048);
    }
}

/* A data range [off, off + len) in the data part of a slot. */
static void rnd_range(size_t *off, size_t *len)
{
    size_t room = slot - ATOM_BYTES;
    size_t l = rnd_len();
    if (l > room)
        l = room;
    *off = ATOM_BYTES + (size_t)tt_rng_below(&rng, room - l + 1);
    *len = l;
}

static int rnd_target(void)
{
    for (;;) {
        int t = (int)tt_rng_below(&rng, (uint64_t)n);
        if (!(faults && dead_seen && t == victim))
            return t;
    }
}

static void do_put(int mode, int t)
{
    size_t off, len;
    rnd_range(&off, &len);
    uint8_t *buf = malloc(len ? len : 1);
    TT_ASSERT(buf, "malloc");
    rnd_fill(buf, len);
    memcpy(shd(t) + off, buf, len);
    if (mode == 0) {
        check(telemem_put(t, rslot(t) + off, buf, len), "put", t);
        free(buf);
    } else {
        pend_t *p = pend_new(P_PUT, t, mode == 1 ? "put_nb" : "put_nbi");
        p->buf = buf;
        p->len = len;
        if (mode == 1) {
            p->has_h = true;
            check(telemem_put_nb(t, rslot(t) + off, buf, len, &p->h), p->what,
                  t);
        } else {
            check(telemem_put_nbi(t, rslot(t) + off, buf, len), p->what, t);
        }
    }
}

static void do_get(int mode, int t)
{
    size_t off, len;
    rnd_range(&off, &len);
    uint8_t *buf = malloc(len ? len : 1);
    TT_ASSERT(buf, "malloc");
    if (mode == 0) {
        check(telemem_get(t, buf, rslot(t) + off, len), "get", t);
        if (tt_cmp(buf, shd(t) + off, len, "get") != 0)
            TT_FAIL("get of [%zu, +%zu) from rank %d differs from the "
                    "shadow", off, len, t);
        st.bytes_verified += len;
        free(buf);
        return;
    }
    pend_t *p = pend_new(P_GET, t, mode == 1 ? "get_nb" : "get_nbi");
    p->buf = buf;
    p->len = len;
    p->expect = malloc(len ? len : 1);
    TT_ASSERT(p->expect, "malloc");
    memcpy(p->expect, shd(t) + off, len);
    if (mode == 1) {
        p->has_h = true;
        check(telemem_get_nb(t, buf, rslot(t) + off, len, &p->h), p->what, t);
    } else {
        check(telemem_get_nbi(t, buf, rslot(t) + off, len), p->what, t);
    }
}

/* A random strided patch inside the data part: levels 1 or 2. */
typedef struct patch {
    int levels;
    size_t count[3], rstr[2], lstr[2], off, lext, rext;
} patch_t;

static void rnd_patch(patch_t *p, size_t elem)
{
    size_t room = slot - ATOM_BYTES;
    for (;;) {
        p->levels = (int)tt_rng_range(&rng, 1, 2);
        p->count[0] = elem * (size_t)tt_rng_range(&rng, 1, 96 / elem + 1);
        p->count[1] = (size_t)tt_rng_range(&rng, 1, 12);
        p->count[2] = p->levels == 2 ? (size_t)tt_rng_range(&rng, 1, 4) : 1;
        p->rstr[0] = p->count[0] + elem * (size_t)tt_rng_below(&rng, 9);
        p->lstr[0] = p->count[0] + elem * (size_t)tt_rng_below(&rng, 5);
        p->rstr[1] = p->rstr[0] * p->count[1] + elem * tt_rng_below(&rng, 5);
        p->lstr[1] = p->lstr[0] * p->count[1] + elem * tt_rng_below(&rng, 3);
        p->rext = p->count[0] + (p->count[1] - 1) * p->rstr[0] +
                  (p->count[2] - 1) * p->rstr[1];
        p->lext = p->count[0] + (p->count[1] - 1) * p->lstr[0] +
                  (p->count[2] - 1) * p->lstr[1];
        if (p->rext <= room)
            break;
    }
    size_t span = (room - p->rext) / elem;
    p->off = ATOM_BYTES + elem * (size_t)tt_rng_below(&rng, span + 1);
}

/* Apply fn to every run: remote offset (from the patch base), local
 * offset. */
#define PATCH_RUNS(p, roff, loff)                                           \
    for (size_t i2_ = 0; i2_ < (p)->count[2]; i2_++)                        \
        for (size_t i1_ = 0, roff = i2_ * (p)->rstr[1],                     \
                    loff = i2_ * (p)->lstr[1];                              \
             i1_ < (p)->count[1];                                           \
             i1_++, roff += (p)->rstr[0], loff += (p)->lstr[0])

static void do_put_strided(int mode, int t)
{
    patch_t p;
    rnd_patch(&p, 1);
    uint8_t *buf = malloc(p.lext);
    TT_ASSERT(buf, "malloc");
    rnd_fill(buf, p.lext);
    PATCH_RUNS(&p, ro, lo)
        memcpy(shd(t) + p.off + ro, buf + lo, p.count[0]);
    if (mode == 0) {
        check(telemem_put_strided(t, rslot(t) + p.off, p.rstr, buf, p.lstr,
                                  p.count, p.levels), "put_strided", t);
        free(buf);
    } else {
        pend_t *q = pend_new(P_PUT, t, "put_strided_nbi");
        q->buf = buf;
        check(telemem_put_strided_nbi(t, rslot(t) + p.off, p.rstr, buf,
                                      p.lstr, p.count, p.levels), q->what, t);
    }
}

static void do_get_strided(int t)
{
    patch_t p;
    rnd_patch(&p, 1);
    uint8_t *buf = calloc(1, p.lext);
    TT_ASSERT(buf, "malloc");
    check(telemem_get_strided(t, buf, p.lstr, rslot(t) + p.off, p.rstr,
                              p.count, p.levels), "get_strided", t);
    PATCH_RUNS(&p, ro, lo) {
        if (tt_cmp(buf + lo, shd(t) + p.off + ro, p.count[0],
                   "get_strided") != 0)
            TT_FAIL("get_strided from rank %d: run at remote offset %zu "
                    "differs", t, p.off + ro);
        st.bytes_verified += p.count[0];
    }
    free(buf);
}

/* k segments of `bytes` each, at distinct slots of a grid. */
static void rnd_vector(size_t *k, size_t *bytes, size_t *offs)
{
    *k = (size_t)tt_rng_range(&rng, 1, 8);
    *bytes = (size_t)tt_rng_range(&rng, 1, 600);
    size_t cells = (slot - ATOM_BYTES) / 608;
    size_t first = (size_t)tt_rng_below(&rng, cells - *k + 1);
    size_t step = (cells - first) / *k;
    for (size_t i = 0; i < *k; i++)
        offs[i] = ATOM_BYTES + (first + i * step) * 608 +
                  (size_t)tt_rng_below(&rng, 8);
    /* list order shuffled */
    for (size_t i = *k; i > 1; i--) {
        size_t j = (size_t)tt_rng_below(&rng, i), x = offs[i - 1];
        offs[i - 1] = offs[j];
        offs[j] = x;
    }
}

static void do_put_vector(int t)
{
    size_t k, bytes, offs[8];
    void *rem[8];
    const void *loc[8];
    rnd_vector(&k, &bytes, offs);
    uint8_t *buf = malloc(k * bytes);
    TT_ASSERT(buf, "malloc");
    rnd_fill(buf, k * bytes);
    for (size_t i = 0; i < k; i++) {
        rem[i] = rslot(t) + offs[i];
        loc[i] = buf + i * bytes;
        memcpy(shd(t) + offs[i], buf + i * bytes, bytes);
    }
    check(telemem_put_vector(t, rem, loc, k, bytes), "put_vector", t);
    free(buf);
}

static void do_get_vector_nb(int t)
{
    size_t k, bytes, offs[8];
    void *loc[8];
    const void *rem[8];
    rnd_vector(&k, &bytes, offs);
    pend_t *p = pend_new(P_GET, t, "get_vector_nb");
    p->len = k * bytes;
    p->buf = malloc(p->len);
    p->expect = malloc(p->len);
    TT_ASSERT(p->buf && p->expect, "malloc");
    for (size_t i = 0; i < k; i++) {
        loc[i] = p->buf + i * bytes;
        rem[i] = rslot(t) + offs[i];
        memcpy(p->expect + i * bytes, shd(t) + offs[i], bytes);
    }
    p->has_h = true;
    check(telemem_get_vector_nb(t, loc, rem, k, bytes, &p->h), p->what, t);
}

/* int64 accumulate on the atomic words: shadow w += scale * v. */
static void acc_shadow(int t, size_t off, const int64_t *v, size_t cnt,
                       int64_t scale)
{
    for (size_t i = 0; i < cnt; i++) {
        uint64_t w;
        memcpy(&w, shd(t) + off + 8 * i, 8);
        w += (uint64_t)scale * (uint64_t)v[i];
        memcpy(shd(t) + off + 8 * i, &w, 8);
    }
}

static void do_acc(int mode, int t)
{
    size_t cnt = (size_t)tt_rng_range(&rng, 1, 16);
    size_t off = 8 * (size_t)tt_rng_below(&rng, ATOM_BYTES / 8 - cnt + 1);
    int64_t scale = (int64_t)tt_rng_range(&rng, 1, 5) - 2;
    int64_t *v = malloc(cnt * 8);
    TT_ASSERT(v, "malloc");
    for (size_t i = 0; i < cnt; i++)
        v[i] = (int64_t)(tt_rng_next(&rng) >> 20) - (1ll << 42);
    acc_shadow(t, off, v, cnt, scale);
    if (mode == 0) {
        check(telemem_acc(t, TELEMEM_INT64, &scale, rslot(t) + off, v,
                          cnt * 8), "acc", t);
        free(v);
    } else {
        pend_t *p = pend_new(P_PUT, t, "acc_nbi");
        p->buf = (uint8_t *)v;
        /* scale is read before the call returns */
        check(telemem_acc_nbi(t, TELEMEM_INT64, &scale, rslot(t) + off, v,
                              cnt * 8), p->what, t);
    }
}

static void do_acc_strided(int t)
{
    /* rows of int64 inside the atomic words: count[0] = 8 * m */
    size_t m = (size_t)tt_rng_range(&rng, 1, 4);
    size_t rows = (size_t)tt_rng_range(&rng, 1, 6);
    size_t rstr = 8 * (m + (size_t)tt_rng_below(&rng, 4));
    size_t ext = (rows - 1) * rstr + 8 * m;
    size_t off = 8 * (size_t)tt_rng_below(&rng, (ATOM_BYTES - ext) / 8 + 1);
    size_t count[2] = {8 * m, rows}, lstr[1] = {8 * m}, rs[1] = {rstr};
    int64_t scale = (int64_t)tt_rng_range(&rng, 1, 3);
    int64_t *v = malloc(rows * m * 8);
    TT_ASSERT(v, "malloc");
    for (size_t i = 0; i < rows * m; i++)
        v[i] = (int64_t)(tt_rng_next(&rng) >> 24);
    for (size_t r = 0; r < rows; r++)
        acc_shadow(t, off + r * rstr, v + r * m, m, scale);
    check(telemem_acc_strided(t, TELEMEM_INT64, &scale, rslot(t) + off, rs,
                              v, lstr, count, 1), "acc_strided", t);
    free(v);
}

static void do_atomic(int mode, int t)
{
    int width = tt_rng_below(&rng, 4) == 0 ? 4 : 8;
    size_t off = (size_t)width *
                 (size_t)tt_rng_below(&rng, ATOM_BYTES / (size_t)width);
    int op = (int)tt_rng_below(&rng, 3);
    int64_t val = (int64_t)tt_rng_next(&rng), cmp;
    int64_t old = 0;
    uint8_t *s = shd(t) + off;
    if (width == 4) {
        int32_t o32;
        memcpy(&o32, s, 4);
        old = o32;
        val = (int32_t)val;
    } else {
        memcpy(&old, s, 8);
    }
    /* cswap: half the time with the right compare value */
    cmp = tt_rng_below(&rng, 2) ? old : old + 1;
    if (width == 4)
        cmp = (int32_t)cmp;
    int64_t nv = op == 0 ? (int64_t)((uint64_t)old + (uint64_t)val)
                 : op == 1 ? val : (old == cmp ? val : old);
    if (width == 4) {
        int32_t n32 = (int32_t)nv;
        memcpy(s, &n32, 4);
    } else {
        memcpy(s, &nv, 8);
    }
    telemem_type_t ty = width == 4 ? TELEMEM_INT32 : TELEMEM_INT64;
    int32_t v32 = (int32_t)val, c32 = (int32_t)cmp;
    const void *vp = width == 4 ? (const void *)&v32 : (const void *)&val;
    const void *cp = width == 4 ? (const void *)&c32 : (const void *)&cmp;
    void *rem = rslot(t) + off;
    if (mode == 0) {
        int64_t got = 0;
        int rc = op == 0 ? telemem_atomic_fetch_add(t, rem, ty, vp, &got)
                 : op == 1 ? telemem_atomic_swap(t, rem, ty, vp, &got)
                           : telemem_atomic_cswap(t, rem, ty, cp, vp, &got);
        check(rc, "atomic", t);
        if (width == 4)
            got = (int32_t)got;
        if (got != old)
            TT_FAIL("atomic op %d width %d at rank %d offset %zu: old %" PRId64
                    ", expected %" PRId64, op, width, t, off, got, old);
        st.bytes_verified += (size_t)width;
        return;
    }
    pend_t *p = pend_new(P_ATOM, t, "atomic_nb");
    p->width = width;
    p->want_old = old;
    p->has_h = true;
    int rc = op == 0
        ? telemem_atomic_fetch_add_nb(t, rem, ty, vp, &p->old, &p->h)
        : op == 1 ? telemem_atomic_swap_nb(t, rem, ty, vp, &p->old, &p->h)
                  : telemem_atomic_cswap_nb(t, rem, ty, cp, vp, &p->old,
                                            &p->h);
    check(rc, p->what, t);
}

static void do_am(bool lng, int t)
{
    static uint32_t token;
    uint8_t buf[AM_MAXB];
    size_t len = (size_t)tt_rng_range(&rng, 0, AM_MAXB);
    rnd_fill(buf, len);
    if (lng) {
        size_t off, l2;
        rnd_range(&off, &l2);
        if (len > slot - off)
            len = slot - off;
        if (len == 0)
            len = 1;
        memcpy(shd(t) + off, buf, len);
        uint32_t a[1] = {token++};
        check(telemem_am_request_long(t, 2, buf, len, rslot(t) + off, a, 1),
              "am_request_long", t);
        return;
    }
    /* at most 64 outstanding: am_expect is indexed by token % 64 */
    if (am_outstanding >= 64)
        am_drain(30);
    uint32_t a[2] = {token, (uint32_t)tt_rng_next(&rng)};
    am_expect[token % 64] = fnv(buf, len);
    token++;
    am_outstanding++;
    st.am_sent++;
    check(telemem_am_request(t, 0, buf, len, a, 2), "am_request", t);
}

static void one_op(void)
{
    int t = rnd_target();
    int k = (int)tt_rng_below(&rng, (uint64_t)NKINDS);
    if (npend >= MAXPEND - 1)
        complete_all();
    maybe_fault();
    switch (k) {
    case 0: do_put(0, t); break;
    case 1: do_put(1, t); break;
    case 2: do_put(2, t); break;
    case 3: do_get(0, t); break;
    case 4: do_get(1, t); break;
    case 5: do_get(2, t); break;
    case 6: do_put_strided(0, t); break;
    case 7: do_get_strided(t); break;
    case 8: do_put_strided(1, t); break;
    case 9: do_put_vector(t); break;
    case 10: do_get_vector_nb(t); break;
    case 11: do_acc(0, t); break;
    case 12: do_acc(1, t); break;
    case 13: do_acc_strided(t); break;
    case 14: do_atomic(0, t); break;
    case 15: do_atomic(1, t); break;
    case 16: do_am(false, t); break;
    default: do_am(true, t); break;
    }
    st.ops++;
    st.kinds[k]++;
}

/* Get all of my slot at t and compare with the shadow. */
static int verify_slot(int t, bool fatal)
{
    uint8_t *buf = malloc(slot);
    TT_ASSERT(buf, "malloc");
    int rc = telemem_get(t, buf, rslot(t), slot);
    if (rc != TELEMEM_OK) {
        free(buf);
        if (fatal)
            check(rc, "get (verify)", t);
        return rc;
    }
    if (tt_cmp(buf, shd(t), slot, "slot") != 0)
        TT_FAIL("my slot at rank %d differs from the shadow", t);
    st.bytes_verified += slot;
    free(buf);
    return TELEMEM_OK;
}

/* ---- the survivor's path (--faults) ------------------------------------- */

static void survive(int rc, const char *what, int t)
{
    static bool in;
    if (in)
        TT_FAIL("%s (rank %d) returned %s while verifying after the fault",
                what, t, telemem_status_name(rc));
    in = true;
    dead_seen = true;
    double now = tt_now() - t0;
    st.errors_seen++;
    tt_log("soak: detected: %s to rank %d returned %s at %.2f s; rank %d "
           "was to die at %.2f s (%.2f s before)", what, t,
           telemem_status_name(rc), now, victim, kill_at, now - kill_at);
    if (now - kill_at > 15.0)
        TT_FAIL("the dead peer was reported %.1f s after the kill",
                now - kill_at);
    /* Finish what is outstanding; errors are expected only for the dead
     * rank. */
    for (int i = 0; i < MAXPEND; i++) {
        if (!pend[i].used)
            continue;
        int r2 = TELEMEM_OK;
        if (pend[i].has_h)
            r2 = telemem_wait(&pend[i].h);
        if (pend[i].t == victim || pend[i].t < 0) {
            pend_free(&pend[i]);
            continue;
        }
        if (r2 != TELEMEM_OK)
            TT_FAIL("%s to live rank %d returned %s after the fault",
                    pend[i].what, pend[i].t, telemem_status_name(r2));
        if (pend[i].has_h || pend[i].kind == P_PUT) {
            pend_verify(&pend[i]);
            pend_free(&pend[i]);
        }
    }
    /* nbi gets and atomics complete with a fence of their target. */
    int live = 0;
    for (int r = 0; r < n; r++) {
        if (r == victim)
            continue;
        live++;
        int r2 = telemem_fence(r);
        if (r2 != TELEMEM_OK)
            TT_FAIL("fence(%d) of a live rank returned %s after the fault",
                    r, telemem_status_name(r2));
    }
    for (int i = 0; i < MAXPEND; i++)
        if (pend[i].used) {
            pend_verify(&pend[i]);
            pend_free(&pend[i]);
        }
    am_drain(5);
    uint64_t before = st.bytes_verified;
    for (int r = 0; r < n; r++)
        if (r != victim && verify_slot(r, false) != TELEMEM_OK)
            TT_FAIL("verifying my slot at live rank %d failed", r);
    tt_log("soak: rank %d verified its slots at the %d live ranks "
           "(%" PRIu64 " bytes) after the fault", me, live,
           st.bytes_verified - before);
    /* Meet the other survivors at rank 0 (counter after the slots), then
     * keep serving until all of them have verified. */
    uint64_t one = 1, got = 0;
    int r2 = telemem_atomic_fetch_add(0, meet_word(), TELEMEM_UINT64, &one,
                                      &got);
    if (r2 != TELEMEM_OK)
        TT_FAIL("survivor count at rank 0: %s", telemem_status_name(r2));
    double start = tt_now();
    for (;;) {
        uint64_t zero = 0;
        if (me == 0)
            got = __atomic_load_n(meet_word(), __ATOMIC_ACQUIRE);
        else if ((r2 = telemem_atomic_fetch_add(0, meet_word(),
                                                TELEMEM_UINT64, &zero,
                                                &got)) != TELEMEM_OK)
            TT_FAIL("survivor count at rank 0: %s",
                    telemem_status_name(r2));
        if (got >= (uint64_t)live)
            break;
        if (tt_now() - start > 60)
            TT_FAIL("only %" PRIu64 " of %d survivors verified in 60 s", got,
                    live);
        for (int i = 0; i < 100; i++)
            TT_POLL();
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (me == 0) {
        /* Rank 0 leaves last: the others may still read the counter. */
        struct timespec ts = {0, 200000000};
        double s2 = tt_now();
        while (tt_now() - s2 < 0.5) {
            TT_POLL();
            nanosleep(&ts, NULL);
        }
    }
    tt_log("soak: survived: rank %d, %" PRIu64 " ops, %" PRIu64
           " bytes verified, %" PRIu64 " delays injected, 1 rank killed "
           "(rank %d), dead peer reported %.2f s after the kill",
           me, st.ops, st.bytes_verified, st.delays, victim, now - kill_at);
    /* Finalize cannot complete its collective with a dead rank: its status
     * is reported, not checked. */
    rc = telemem_finalize();
    tt_log("soak: finalize after the fault: %s", telemem_status_name(rc));
    exit(0);
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
    seconds = (double)tt_arg_long(argc, argv, "--seconds", 30);
    slot = (size_t)tt_arg_long(argc, argv, "--slot", 32 * 1024);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--faults") == 0)
            faults = true;
    if (slot < 8 * 1024)
        slot = 8 * 1024;
    slot &= ~(size_t)63;
    tt_init(&argc, &argv, "soak");
    me = tt_me;
    n = tt_n;
    uint64_t seed = tt_seed();
    tt_rng_seed(&rng, tt_key(seed, (uint64_t)me, 1, 0));
    if (faults && n > 1) {
        tt_rng_t shared;
        tt_rng_seed(&shared, tt_key(seed, 0xdead, 0, 0));
        victim = 1 + (int)tt_rng_below(&shared, (uint64_t)(n - 1));
        kill_at = seconds * (0.2 + 0.5 * (double)tt_rng_below(&shared, 1000)
                                       / 1000.0);
    }
    if (me == 0)
        tt_log("soak: %d ranks, %.0f s, slot %zu bytes%s", n, seconds, slot,
               victim >= 0 ? ", faults on" : faults ? ", faults on (no "
               "rank to kill at 1 rank: delays only)" : "");
    if (me == 0 && victim >= 0)
        tt_log("soak: fault plan: rank %d dies at %.2f s", victim, kill_at);

    bases = calloc((size_t)n, sizeof(void *));
    shadow = calloc((size_t)n, slot);
    TT_ASSERT(bases && shadow, "calloc");
    TT_CHECK(telemem_malloc_all((size_t)n * slot + 64, bases));
    memset(bases[me], 0, (size_t)n * slot + 64);
    TT_CHECK(telemem_am_register(0, on_req, NULL));
    TT_CHECK(telemem_am_register(1, on_rep, NULL));
    TT_CHECK(telemem_am_register(2, on_long, NULL));
    TT_CHECK(telemem_barrier());
    t0 = tt_now();

    uint64_t epoch = 0;
    int go = 1;
    while (go) {
        for (int i = 0; i < EPOCH_OPS; i++)
            one_op();
        complete_all();
        am_drain(30);
        maybe_fault();
        if (++epoch % VERIFY_EVERY == 0)
            for (int t = 0; t < n; t++)
                verify_slot(t, true);
        /* agreed point: counters, checksums, continue? */
        uint64_t mine[2] = {st.ops, st.bytes_verified}, sum[2];
        memcpy(sum, mine, sizeof sum);
        check(telemem_allreduce(sum, 2, TELEMEM_UINT64, TELEMEM_SUM),
              "allreduce", -1);
        uint64_t ck = fnv(shadow, (size_t)n * slot);
        uint64_t *all = malloc((size_t)n * 8);
        TT_ASSERT(all, "malloc");
        check(telemem_allgather(&ck, all, 8), "allgather", -1);
        if (all[me] != ck)
            TT_FAIL("allgather returned %016" PRIx64 " for my own entry",
                    all[me]);
        free(all);
        if (me == 0)
            go = tt_now() - t0 < seconds;
        check(telemem_broadcast(&go, sizeof go, 0), "broadcast", -1);
        check(telemem_barrier(), "barrier", -1);
    }
    /* final check of everything */
    for (int t = 0; t < n; t++)
        verify_slot(t, true);
    check(telemem_barrier(), "barrier", -1);
    double el = tt_now() - t0;
    tt_log("soak: rank %d: %" PRIu64 " ops, %" PRIu64 " bytes verified, "
           "%" PRIu64 " am round trips, %" PRIu64 " delays injected",
           me, st.ops, st.bytes_verified, st.am_replies, st.delays);
    uint64_t tot[3] = {st.ops, st.bytes_verified, st.delays};
    check(telemem_allreduce(tot, 3, TELEMEM_UINT64, TELEMEM_SUM),
          "allreduce", -1);
    if (me == 0) {
        char kinds[1024];
        size_t o = 0;
        for (int k = 0; k < NKINDS; k++)
            o += (size_t)snprintf(kinds + o, sizeof kinds - o, "%s%s %" PRIu64,
                                  k ? ", " : "", kind_names[k], st.kinds[k]);
        tt_log("soak: rank 0 op mix: %s", kinds);
        tt_log("soak: PASS: %d ranks, %.1f s, %" PRIu64 " operations, %"
               PRIu64 " bytes verified, %" PRIu64 " delays injected%s", n, el,
               tot[0], tot[1], tot[2],
               faults && victim >= 0 ? " (no kill happened: run too short)"
                                     : "");
    }
    free(shadow);
    free(bases);
    tt_finalize();
    return 0;
}

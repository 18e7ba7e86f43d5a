/* conf_am.c - conformance: active messages.  Explicit and lowest-free
 * (register_any) handler ids; requests with 0..16 arguments and payloads of
 * 0 B, 1 B, around the 16 KB buffer and 1 MB (fragmented transparently) to
 * self and every other rank; the handler checks payload, alignment,
 * arguments, telemem_am_source() and ctx, replies once (a second reply
 * fails), and every other Telemem call from a handler returns
 * TELEMEM_ERR_IN_HANDLER; the reply handler records its source; a request
 * issued after puts sees them applied at the target; quiet waits until
 * earlier requests have been handled; long requests and replies land
 * in place in the target's block and their handlers see the data there. */
#include "tt.h"

#define H_REQ 5
#define ORDER_MAX 100000

static int me, n;
static uint64_t seed;
static int h_reply, h_order, h_count, h_long, h_long_rep;
static long long_replies;
static long herr;              /* errors seen inside handlers */
static long *req_from;         /* requests handled, per source */
static long *replies_from;     /* replies received, per source */
static long count_hits;
static void **bases;
static int ctx_marker;

#define HCHECK(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "[tt r%d] HANDLER FAIL %s:%d: %s: ", me,        \
                    __FILE__, __LINE__, #cond);                             \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
            herr++;                                                         \
        }                                                                   \
    } while (0)

#define HEXPECT(call, want)                                                 \
    do {                                                                    \
        int rc_ = (call);                                                   \
        HCHECK(rc_ == (want), "%s returned %s (%s), expected %s", #call,    \
               telemem_status_name(rc_), telemem_strerror(rc_),             \
               telemem_status_name(want));                                  \
    } while (0)

static uint32_t arg_of(int src, unsigned nargs, size_t bytes, unsigned i)
{
    return (uint32_t)tt_key(seed, 502, (uint64_t)src * 100 + nargs, bytes) +
           i * 0x9e3779b9u;
}

static uint64_t payload_key(int src, size_t bytes)
{
    return tt_key(seed, 501, src, bytes);
}

static uint64_t hash_of(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Everything but reply must refuse inside a handler. */
static void check_in_handler_calls(int src)
{
    uint64_t v = 0;
    void **tmpb = calloc((size_t)n, sizeof *tmpb);
    telemem_handle_t h = TELEMEM_HANDLE_NULL;
    int done = 0;
    uint8_t *tb = bases[src];
    HEXPECT(telemem_put(src, tb, &v, 8), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_get(src, &v, tb, 8), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_put_nbi(src, tb, &v, 8), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_get_nbi(src, &v, tb, 8), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_put_nb(src, tb, &v, 8, &h), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_get_nb(src, &v, tb, 8, &h), TELEMEM_ERR_IN_HANDLER);
    /* Atomics have a lock-free path for window blocks: still refused. */
    HEXPECT(telemem_atomic_fetch_add(src, tb, TELEMEM_INT64, &v, NULL),
            TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_atomic_swap_nbi(src, tb, TELEMEM_INT64, &v, NULL),
            TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_atomic_cswap_nb(src, tb, TELEMEM_INT64, &v, &v, NULL, &h),
            TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_wait(&h), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_test(&h, &done), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_quiet(), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_fence(src), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_barrier(), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_poll(), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_am_request(src, h_count, NULL, 0, NULL, 0),
            TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_broadcast(&v, 8, 0), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_allreduce(&v, 1, TELEMEM_UINT64, TELEMEM_SUM),
            TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_allgather(&v, tmpb, 8), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_malloc_all(64, tmpb), TELEMEM_ERR_IN_HANDLER);
    HEXPECT(telemem_free_all(bases[me]), TELEMEM_ERR_IN_HANDLER);
    /* Still allowed: */
    HCHECK(telemem_rank() == me, "telemem_rank() in handler");
    HCHECK(telemem_nranks() == n, "telemem_nranks() in handler");
    free(tmpb);
}

static void req_handler(telemem_am_token_t token, void *payload, size_t bytes,
                        const uint32_t *args, unsigned nargs, void *ctx)
{
    int src = -1;
    HEXPECT(telemem_am_source(token, &src), TELEMEM_OK);
    HCHECK(src >= 0 && src < n, "source %d", src);
    if (src < 0 || src >= n)
        return;
    HCHECK(ctx == &ctx_marker, "ctx %p", ctx);
    HCHECK(nargs <= TELEMEM_AM_MAX_ARGS, "nargs %u", nargs);
    HCHECK((bytes == 0) == (payload == NULL), "payload %p with %zu bytes",
           payload, bytes);
    HCHECK(((uintptr_t)payload & 7) == 0, "payload %p not 8-byte aligned",
           payload);
    if (bytes) {
        char lab[100];
        snprintf(lab, sizeof lab, "AM payload from %d, %zu bytes, %u args",
                 src, bytes, nargs);
        HCHECK(!tt_pat_verify(payload, bytes, payload_key(src, bytes), 0, lab),
               "%s", lab);
    }
    for (unsigned i = 0; i < nargs; i++)
        HCHECK(args[i] == arg_of(src, nargs, bytes, i),
               "arg %u of %u from %d (%zu bytes): 0x%08x", i, nargs, src,
               bytes, args[i]);
    req_from[src]++;
    if (bytes <= 1)
        check_in_handler_calls(src);

    uint64_t echo = bytes ? hash_of(payload, bytes) : 0;
    uint32_t rargs[2] = {nargs, (uint32_t)bytes};
    HEXPECT(telemem_am_reply(token, h_reply, &echo, 8, rargs, 2), TELEMEM_OK);
    HEXPECT(telemem_am_reply(token, h_reply, &echo, 8, rargs, 2),
            TELEMEM_ERR_INVALID_ARG);
}

static uint64_t *expect_hash; /* indexed by a size index, see size_index */
static size_t req_sizes[32];
static size_t nreq_sizes;

static void reply_handler(telemem_am_token_t token, void *payload,
                          size_t bytes, const uint32_t *args, unsigned nargs,
                          void *ctx)
{
    int src = -1;
    HEXPECT(telemem_am_source(token, &src), TELEMEM_OK);
    HCHECK(src >= 0 && src < n, "reply source %d", src);
    if (src < 0 || src >= n)
        return;
    HCHECK(bytes == 8 && payload != NULL, "reply payload %p/%zu", payload,
           bytes);
    HCHECK(nargs == 2, "reply nargs %u", nargs);
    if (bytes == 8 && nargs == 2) {
        uint64_t echo;
        memcpy(&echo, payload, 8);
        size_t sz = args[1];
        uint64_t want = 0;
        for (size_t i = 0; i < nreq_sizes; i++)
            if (req_sizes[i] == sz)
                want = expect_hash[i];
        HCHECK(echo == want, "reply from %d echoes hash %" PRIx64 " for %zu "
               "bytes, want %" PRIx64, src, echo, sz, want);
    }
    /* Replies cannot be replied to; other calls refuse too. */
    uint64_t x = 0;
    HEXPECT(telemem_am_reply(token, h_reply, &x, 8, NULL, 0),
            TELEMEM_ERR_INVALID_ARG);
    HEXPECT(telemem_put(src, bases[src], &x, 8), TELEMEM_ERR_IN_HANDLER);
    replies_from[src]++;
}

/* The target checks that the sender's puts issued before this request are
 * applied: args = {size, seq}. */
static void order_handler(telemem_am_token_t token, void *payload,
                          size_t bytes, const uint32_t *args, unsigned nargs,
                          void *ctx)
{
    int src = -1;
    HEXPECT(telemem_am_source(token, &src), TELEMEM_OK);
    HCHECK(nargs == 2, "order nargs %u", nargs);
    if (src < 0 || src >= n || nargs != 2)
        return;
    uint8_t *area = (uint8_t *)ctx + (size_t)src * ORDER_MAX;
    char lab[100];
    snprintf(lab, sizeof lab, "data put by %d before request %u (%u bytes)",
             src, args[1], args[0]);
    HCHECK(!tt_pat_verify(area, args[0], tt_key(seed, 600, src, args[1]), 0,
                          lab), "%s", lab);
}

static void count_handler(telemem_am_token_t token, void *payload,
                          size_t bytes, const uint32_t *args, unsigned nargs,
                          void *ctx)
{
    count_hits++;
}

static void dummy_handler(telemem_am_token_t token, void *payload,
                          size_t bytes, const uint32_t *args, unsigned nargs,
                          void *ctx)
{
    herr++;
}

/* Long request: payload written at bases[me] + src * ORDER_MAX.  Echo it
 * with a long reply into the requester's slot n + me. */
static void long_handler(telemem_am_token_t token, void *payload,
                         size_t bytes, const uint32_t *args, unsigned nargs,
                         void *ctx)
{
    int src = -1;
    HEXPECT(telemem_am_source(token, &src), TELEMEM_OK);
    uint8_t *want = (uint8_t *)bases[me] + (size_t)src * ORDER_MAX;
    HCHECK(nargs == 2 && args[0] == bytes, "long: nargs %u, size arg %u, "
           "bytes %zu", nargs, nargs ? args[0] : 0, bytes);
    HCHECK(bytes == 0 ? payload == NULL : payload == want,
           "long: payload at %p, want %p", payload, (void *)want);
    if (bytes)
        HCHECK(tt_pat_verify(payload, bytes, tt_key(seed, 700, src, args[1]),
                             0, "long request") == 0,
               "long request payload from %d differs", src);
    uint8_t *back = (uint8_t *)bases[src] + (size_t)(n + me) * ORDER_MAX;
    HEXPECT(telemem_am_reply_long(token, h_long_rep, payload, bytes, back,
                                  args, nargs), TELEMEM_OK);
}

static void long_reply_handler(telemem_am_token_t token, void *payload,
                               size_t bytes, const uint32_t *args,
                               unsigned nargs, void *ctx)
{
    int src = -1;
    HEXPECT(telemem_am_source(token, &src), TELEMEM_OK);
    uint8_t *want = (uint8_t *)bases[me] + (size_t)(n + src) * ORDER_MAX;
    HCHECK(bytes == 0 ? payload == NULL : payload == want,
           "long reply: payload at %p, want %p", payload, (void *)want);
    if (bytes)
        HCHECK(tt_pat_verify(payload, bytes, tt_key(seed, 700, me, args[1]),
                             0, "long reply") == 0,
               "long reply payload from %d differs", src);
    long_replies++;
}

static void wait_replies(const long *want)
{
    double t0 = tt_now();
    for (;;) {
        int ok = 1;
        for (int t = 0; t < n; t++)
            ok &= replies_from[t] == want[t];
        if (ok)
            return;
        TT_POLL();
        if (tt_now() - t0 > 60) {
            for (int t = 0; t < n; t++)
                fprintf(stderr, "[tt r%d] replies from %d: %ld of %ld\n", me,
                        t, replies_from[t], want[t]);
            TT_FAIL("replies missing after 60 s");
        }
    }
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_am");
    me = tt_me;
    n = tt_n;
    seed = tt_seed();
    req_from = calloc((size_t)n, sizeof *req_from);
    replies_from = calloc((size_t)n, sizeof *replies_from);
    long *sent = calloc((size_t)n, sizeof *sent);
    bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(2 * (size_t)n * ORDER_MAX, bases));

    /* Ids: 5 explicitly, then lowest-free gives 0, 1, 2, 3, 4, 6. */
    TT_CHECK(telemem_am_register(H_REQ, req_handler, &ctx_marker));
    int want_ids[] = {0, 1, 2, 3, 4, 6};
    int ids[6];
    telemem_am_handler_t fns[6] = {reply_handler, order_handler,
                                   count_handler, dummy_handler,
                                   dummy_handler, dummy_handler};
    for (int i = 0; i < 6; i++) {
        ids[i] = -1;
        TT_CHECK(telemem_am_register_any(fns[i], i == 1 ? bases[me] : NULL,
                                         &ids[i]));
        TT_ASSERT(ids[i] == want_ids[i], "register_any gave id %d, want the "
                  "lowest free id %d", ids[i], want_ids[i]);
    }
    h_reply = ids[0];
    h_order = ids[1];
    h_count = ids[2];
    TT_CHECK(telemem_am_register_any(long_handler, NULL, &h_long));
    TT_CHECK(telemem_am_register_any(long_reply_handler, NULL, &h_long_rep));
    /* Replacing a handler is allowed. */
    TT_CHECK(telemem_am_register(h_count, count_handler, NULL));
    TT_CHECK(telemem_barrier());

    /* Payload sizes and the hash each reply must echo. */
    static const size_t big[] = {8, 40, 41, 4033, 16320, 16321, 16383,
                                 16384, 16385, 16400, 16449, 32769, 1048576};
    req_sizes[nreq_sizes++] = 0;
    req_sizes[nreq_sizes++] = 1;
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        req_sizes[nreq_sizes++] = big[i];
    expect_hash = calloc(nreq_sizes, sizeof *expect_hash);
    uint8_t *pl = malloc(1048576 + 8);
    for (size_t i = 0; i < nreq_sizes; i++) {
        tt_pat_fill(pl, req_sizes[i], payload_key(me, req_sizes[i]), 0);
        expect_hash[i] = req_sizes[i] ? hash_of(pl, req_sizes[i]) : 0;
    }

    /* Requests to every rank, self included, starting at a different rank
     * on each. */
    uint32_t args[TELEMEM_AM_MAX_ARGS];
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        for (size_t si = 0; si < nreq_sizes; si++) {
            size_t sz = req_sizes[si];
            tt_pat_fill(pl, sz, payload_key(me, sz), 0);
            for (unsigned na = 0; na <= TELEMEM_AM_MAX_ARGS; na++) {
                if (sz > 1 && na != 0 && na != 7 && na != 16)
                    continue;
                for (unsigned i = 0; i < na; i++)
                    args[i] = arg_of(me, na, sz, i);
                TT_CHECK(telemem_am_request(t, H_REQ, sz ? pl : NULL, sz,
                                            na ? args : NULL, na));
                sent[t]++;
                /* The caller may reuse payload and args at once. */
                memset(args, 0xab, sizeof args);
            }
            memset(pl, 0xab, sz);
        }
    }
    wait_replies(sent);
    if (me == 0)
        tt_log("requests and replies done (%ld to each rank)", sent[0]);

    /* Every target handled what every source sent. */
    long *matrix = malloc((size_t)n * (size_t)n * sizeof *matrix);
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_allgather(sent, matrix, (size_t)n * sizeof *sent));
    for (int s = 0; s < n; s++)
        TT_ASSERT(req_from[s] == matrix[(size_t)s * n + me],
                  "handled %ld requests from %d, it sent %ld", req_from[s], s,
                  matrix[(size_t)s * n + me]);

    /* Ordering: puts then a request; the handler sees the puts. */
    uint8_t *src = malloc(ORDER_MAX);
    static const uint32_t osz[] = {5, 16385, ORDER_MAX, 41, 70000};
    for (uint32_t seq = 0; seq < 10; seq++) {
        uint32_t sz = osz[seq % 5];
        tt_pat_fill(src, sz, tt_key(seed, 600, me, seq), 0);
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            uint8_t *dst = (uint8_t *)bases[t] + (size_t)me * ORDER_MAX;
            if (seq & 1) {
                TT_CHECK(telemem_put_nbi(t, dst, src, sz / 2));
                TT_CHECK(telemem_put(t, dst + sz / 2, src + sz / 2,
                                     sz - sz / 2));
            } else {
                TT_CHECK(telemem_put(t, dst, src, sz));
            }
            uint32_t oargs[2] = {sz, seq};
            TT_CHECK(telemem_am_request(t, h_order, NULL, 0, oargs, 2));
        }
        TT_CHECK(telemem_quiet()); /* before src is reused */
    }

    /* Long requests and replies, in place, of sizes across fragments. */
    static const uint32_t lsz[] = {0, 1, 41, 16385, 70000, ORDER_MAX};
    long long_sent = 0;
    for (uint32_t seq = 0; seq < 6; seq++) {
        uint32_t sz = lsz[seq];
        tt_pat_fill(src, sz, tt_key(seed, 700, me, seq), 0);
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            uint8_t *dst = (uint8_t *)bases[t] + (size_t)me * ORDER_MAX;
            uint32_t largs[2] = {sz, seq};
            TT_CHECK(telemem_am_request_long(t, h_long, sz ? src : NULL, sz,
                                             dst, largs, 2));
            long_sent++;
        }
        TT_CHECK(telemem_quiet());
        double t0 = tt_now();
        while (long_replies < long_sent && tt_now() - t0 < 60)
            TT_POLL();
        TT_ASSERT(long_replies == long_sent, "%ld long replies, want %ld",
                  long_replies, long_sent);
        TT_CHECK(telemem_barrier()); /* before slots are written again */
    }
    TT_EXPECT(telemem_am_request_long(me, h_long, src, 8, NULL, NULL, 0),
              TELEMEM_ERR_INVALID_ARG);

    /* quiet waits for requests to be handled. */
    TT_CHECK(telemem_barrier());
    for (int i = 0; i < 100; i++)
        for (int t = 0; t < n; t++)
            TT_CHECK(telemem_am_request(t, h_count, NULL, 0, NULL, 0));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    TT_ASSERT(count_hits == 100L * n, "count handler ran %ld times, want %ld "
              "after quiet + barrier", count_hits, 100L * n);

    long long bad = herr;
    TT_CHECK(telemem_allreduce(&bad, 1, TELEMEM_INT64, TELEMEM_SUM));
    TT_ASSERT(herr == 0, "%ld errors inside handlers on this rank", herr);
    TT_ASSERT(bad == 0, "%lld errors inside handlers on other ranks", bad);
    TT_CHECK(telemem_free_all(bases[me]));
    free(src);
    free(pl);
    free(matrix);
    free(sent);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

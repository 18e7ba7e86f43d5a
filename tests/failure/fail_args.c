/* fail_args.c - failure: every documented bad-input return of every public
 * function: calls before telemem_initialize() and after telemem_finalize()
 * (TELEMEM_ERR_NOT_INITIALIZED), a second initialize, initialize again
 * after finalize (a singleton may, a launched rank gets TELEMEM_ERR_STATE),
 * bad ranks, NULL
 * buffers with bytes > 0 (and NULL with 0 bytes being fine), wrapping
 * address ranges, NULL handle/done/id pointers, bad type/op/root, bad
 * handler ids and nargs, bad replies from inside handlers, free_all and
 * (de)register misuse, telemem_strerror()/status_name() of unknown codes.
 * Output parameters must stay untouched on failure.  Runs at 1 and 2+
 * ranks; every rank makes the same (collective) calls. */
#include <limits.h>

#include "tt.h"

#define E(call, want) TT_EXPECT(call, want)
#define NI TELEMEM_ERR_NOT_INITIALIZED
#define IA TELEMEM_ERR_INVALID_ARG

static void dummy(telemem_am_token_t t, void *p, size_t b, const uint32_t *a,
                  unsigned na, void *ctx)
{
}

/* Every call that needs an initialized library. */
static void all_not_initialized(const char *when)
{
    uint8_t buf[64];
    void *bases[4];
    telemem_handle_t h = TELEMEM_HANDLE_NULL;
    int done = 0, id = -1, src = -1;
    tt_log("checking every call %s", when);
    E(telemem_rank(), NI);
    E(telemem_nranks(), NI);
    E(telemem_finalize(), NI);
    E(telemem_malloc_all(64, bases), NI);
    E(telemem_free_all(buf), NI);
    E(telemem_register(buf, sizeof buf), NI);
    E(telemem_deregister(buf), NI);
    E(telemem_put(0, buf, buf + 8, 8), NI);
    E(telemem_get(0, buf, buf + 8, 8), NI);
    E(telemem_quiet(), NI);
    E(telemem_fence(0), NI);
    E(telemem_barrier(), NI);
    E(telemem_poll(), NI);
    E(telemem_wait_wake(), NI);
    E(telemem_ptr(0, buf, 8, (void **)&bases[0]), NI);
    E(telemem_ptr_wake(0), NI);
    E(telemem_put_nb(0, buf, buf + 8, 8, &h), NI);
    E(telemem_get_nb(0, buf, buf + 8, 8, &h), NI);
    E(telemem_wait(&h), NI);
    E(telemem_test(&h, &done), NI);
    E(telemem_put_nbi(0, buf, buf + 8, 8), NI);
    E(telemem_get_nbi(0, buf, buf + 8, 8), NI);
    E(telemem_broadcast(buf, 8, 0), NI);
    E(telemem_allreduce(buf, 2, TELEMEM_INT32, TELEMEM_SUM), NI);
    E(telemem_allgather(buf, buf + 32, 8), NI);
    E(telemem_am_register(0, dummy, NULL), NI);
    E(telemem_am_register_any(dummy, NULL, &id), NI);
    E(telemem_am_request(0, 0, NULL, 0, NULL, 0), NI);
    TT_ASSERT(id == -1, "register_any set *id_p on failure (%d)", id);
    /* Token calls: not initialized, whatever the token (a forged one is
     * never read). */
    E(telemem_am_source(NULL, &src), NI);
    E(telemem_am_source((telemem_am_token_t)(void *)buf, &src), NI);
    E(telemem_am_source((telemem_am_token_t)(uintptr_t)8, &src), NI);
    E(telemem_am_reply((telemem_am_token_t)(void *)buf, 0, NULL, 0, NULL, 0),
      NI);
    TT_ASSERT(src == -1, "am_source set *rank_p on failure");
    /* Always callable. */
    TT_ASSERT(telemem_version() && strcmp(telemem_version(), "0.1.0") == 0,
              "telemem_version() = %s", telemem_version());
    TT_ASSERT(strcmp(telemem_transport_name(0), "none") == 0,
              "transport_name(0) %s = '%s', want 'none'", when,
              telemem_transport_name(0));
    TT_ASSERT(telemem_config_string() &&
                  strcmp(telemem_config_string(), "") == 0,
              "config_string() %s is not \"\"", when);
    TT_ASSERT(telemem_strerror(NI) && telemem_status_name(NI),
              "strerror %s", when);
}

static void status_strings(void)
{
    static const int unknown[] = {12345, -12345, 2, -17, INT_MIN, INT_MAX};
    for (int c = TELEMEM_ERR_NOT_FOUND; c <= TELEMEM_INPROGRESS; c++) {
        TT_ASSERT(telemem_strerror(c) != NULL, "strerror(%d) is NULL", c);
        TT_ASSERT(strcmp(telemem_strerror(c), "unknown status") != 0,
                  "strerror(%d) does not know a documented code", c);
        TT_ASSERT(strncmp(telemem_status_name(c), "TELEMEM_", 8) == 0,
                  "status_name(%d) = %s", c, telemem_status_name(c));
    }
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        TT_ASSERT(telemem_strerror(unknown[i]) != NULL, "strerror(%d) NULL",
                  unknown[i]);
        TT_ASSERT(telemem_status_name(unknown[i]) != NULL,
                  "status_name(%d) NULL", unknown[i]);
    }
}

/* ---- handler-side checks: bad replies and token use ---- */
static int me, n, h_bad, h_rep;
static long hfails, handled;

#define HE(call, want)                                                      \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != (want)) {                                                \
            fprintf(stderr, "[tt r%d] HANDLER FAIL %s:%d: %s returned %s, " \
                    "expected %s\n", me, __FILE__, __LINE__, #call,         \
                    telemem_status_name(rc_), telemem_status_name(want));   \
            hfails++;                                                       \
        }                                                                   \
    } while (0)

static telemem_am_token_t kept_token; /* a token kept past its handler */

static void bad_reply_handler(telemem_am_token_t tok, void *p, size_t b,
                              const uint32_t *a, unsigned na, void *ctx)
{
    kept_token = tok;
    uint32_t args[TELEMEM_AM_MAX_ARGS + 1] = {0};
    uint64_t x = 0;
    HE(telemem_am_source(tok, NULL), IA);
    HE(telemem_am_reply(NULL, h_rep, &x, 8, NULL, 0), IA);
    HE(telemem_am_reply(tok, -1, &x, 8, NULL, 0), IA);
    HE(telemem_am_reply(tok, TELEMEM_AM_MAX_HANDLERS, &x, 8, NULL, 0), IA);
    HE(telemem_am_reply(tok, h_rep, &x, 8, args, TELEMEM_AM_MAX_ARGS + 1),
       IA);
    HE(telemem_am_reply(tok, h_rep, NULL, 8, NULL, 0), IA);
    HE(telemem_am_reply(tok, h_rep, &x, 8, NULL, 2), IA);
    handled++;
}

static void rep_handler(telemem_am_token_t tok, void *p, size_t b,
                        const uint32_t *a, unsigned na, void *ctx)
{
    hfails++; /* bad_reply_handler never sends a valid reply */
}

int main(int argc, char **argv)
{
    tt_proc_line();
    status_strings();
    all_not_initialized("before initialize");

    /* Initialize with NULL argc/argv; a second time fails. */
    TT_CHECK(telemem_initialize(NULL, NULL));
    E(telemem_initialize(&argc, &argv), TELEMEM_ERR_ALREADY_INITIALIZED);
    tt_me = me = telemem_rank();
    tt_n = n = telemem_nranks();
    TT_ASSERT(me >= 0 && me < n, "rank %d of %d", me, n);
    tt_log("fail_args: %d ranks", n);
    int peer = (me + 1) % n;
    uint64_t seed = tt_seed();
    (void)seed;

    void **bases = calloc((size_t)n + 1, sizeof *bases);
    TT_CHECK(telemem_malloc_all(4096, bases));
    uint8_t *mine = bases[me], *pb = bases[peer];
    uint8_t loc[256];
    memset(loc, 1, sizeof loc);
    void *wrap = (void *)(UINTPTR_MAX - 10);
    int badr[] = {-1, n, INT_MIN, INT_MAX};

    /* config_string and transport_name while initialized. */
    TT_ASSERT(strstr(telemem_config_string(), "TELEMEM_SHM_BUF_SIZE") != NULL,
              "config_string() lacks TELEMEM_SHM_BUF_SIZE:\n%s",
              telemem_config_string());
    TT_ASSERT(strcmp(telemem_transport_name(-1), "none") == 0 &&
                  strcmp(telemem_transport_name(n), "none") == 0,
              "transport_name of a bad rank is not \"none\"");
    TT_ASSERT(strcmp(telemem_transport_name(peer), "none") != 0,
              "transport_name(peer) = none");

    /* ---- one-sided: ranks, NULL buffers, wrap ---- */
    for (size_t i = 0; i < sizeof badr / sizeof badr[0]; i++) {
        int r = badr[i];
        telemem_handle_t h = {77, 77};
        E(telemem_put(r, pb, loc, 8), IA);
        E(telemem_get(r, loc, pb, 8), IA);
        E(telemem_put_nbi(r, pb, loc, 8), IA);
        E(telemem_get_nbi(r, loc, pb, 8), IA);
        E(telemem_put_nb(r, pb, loc, 8, &h), IA);
        E(telemem_get_nb(r, loc, pb, 8, &h), IA);
        TT_ASSERT(h.index_ == 77 && h.generation_ == 77,
                  "a failed nb call changed the handle");
        E(telemem_fence(r), IA);
        E(telemem_am_request(r, 0, NULL, 0, NULL, 0), IA);
        E(telemem_broadcast(loc, 8, r), IA);
    }
    {
        telemem_handle_t h = {77, 77};
        /* NULL local or remote with bytes > 0. */
        E(telemem_put(peer, NULL, loc, 8), IA);
        E(telemem_put(peer, pb, NULL, 8), IA);
        E(telemem_get(peer, NULL, pb, 8), IA);
        E(telemem_get(peer, loc, NULL, 8), IA);
        E(telemem_put_nbi(peer, NULL, loc, 8), IA);
        E(telemem_put_nbi(peer, pb, NULL, 8), IA);
        E(telemem_get_nbi(peer, NULL, pb, 8), IA);
        E(telemem_get_nbi(peer, loc, NULL, 8), IA);
        E(telemem_put_nb(peer, NULL, loc, 8, &h), IA);
        E(telemem_put_nb(peer, pb, NULL, 8, &h), IA);
        E(telemem_get_nb(peer, NULL, pb, 8, &h), IA);
        E(telemem_get_nb(peer, loc, NULL, 8, &h), IA);
        /* Ranges that wrap around the address space. */
        E(telemem_put(peer, wrap, loc, 100), IA);
        E(telemem_put(peer, pb, wrap, 100), IA);
        E(telemem_get(peer, wrap, pb, 100), IA);
        E(telemem_get(peer, loc, wrap, 100), IA);
        E(telemem_put_nbi(peer, wrap, loc, 100), IA);
        E(telemem_get_nbi(peer, loc, wrap, 100), IA);
        E(telemem_put_nb(peer, wrap, loc, 100, &h), IA);
        E(telemem_get_nb(peer, loc, wrap, 100, &h), IA);
        E(telemem_put(peer, pb, loc, SIZE_MAX), IA);
        E(telemem_get(peer, loc, pb, SIZE_MAX), IA);
        /* NULL handle / done pointers. */
        int done = 5;
        telemem_handle_t ok = TELEMEM_HANDLE_NULL;
        E(telemem_put_nb(peer, pb, loc, 8, NULL), IA);
        E(telemem_get_nb(peer, loc, pb, 8, NULL), IA);
        E(telemem_wait(NULL), IA);
        E(telemem_test(NULL, &done), IA);
        E(telemem_test(&ok, NULL), IA);
        TT_ASSERT(done == 5, "test() set *done on failure");
        TT_ASSERT(h.index_ == 77 && h.generation_ == 77,
                  "a failed nb call changed the handle");
        /* NULL with 0 bytes is fine, everywhere. */
        TT_CHECK(telemem_put(peer, NULL, NULL, 0));
        TT_CHECK(telemem_get(peer, NULL, NULL, 0));
        TT_CHECK(telemem_put_nbi(peer, NULL, NULL, 0));
        TT_CHECK(telemem_get_nbi(peer, NULL, NULL, 0));
        TT_CHECK(telemem_put_nb(peer, NULL, NULL, 0, &h));
        TT_CHECK(telemem_wait(&h));
        TT_CHECK(telemem_get_nb(peer, NULL, NULL, 0, &h));
        TT_CHECK(telemem_wait(&h));
        TT_CHECK(telemem_quiet());
        /* Nothing above may have been sent. */
        TT_CHECK(telemem_fence(peer));
    }

    /* ---- collectives (all ranks make the same bad calls) ---- */
    {
        uint64_t v[4] = {0};
        void *outp[4];
        E(telemem_broadcast(NULL, 8, 0), IA);
        E(telemem_allreduce(v, 1, (telemem_type_t)5, TELEMEM_SUM), IA);
        E(telemem_allreduce(v, 1, (telemem_type_t)-1, TELEMEM_SUM), IA);
        E(telemem_allreduce(v, 1, TELEMEM_INT32, (telemem_op_t)3), IA);
        E(telemem_allreduce(v, 1, TELEMEM_INT32, (telemem_op_t)-1), IA);
        E(telemem_allreduce(NULL, 1, TELEMEM_DOUBLE, TELEMEM_MAX), IA);
        E(telemem_allreduce(v, SIZE_MAX / 4, TELEMEM_DOUBLE, TELEMEM_SUM), IA);
        E(telemem_allgather(NULL, v, 8), IA);
        E(telemem_allgather(v, NULL, 8), IA);
        if (n > 1)
            E(telemem_allgather(v, outp, SIZE_MAX / 2 + 1), IA);
        E(telemem_malloc_all(64, NULL), IA);
        /* The collectives still work afterwards. */
        TT_CHECK(telemem_broadcast(NULL, 0, 0));
        TT_CHECK(telemem_allreduce(NULL, 0, TELEMEM_INT32, TELEMEM_SUM));
        TT_CHECK(telemem_allgather(NULL, NULL, 0));
        v[0] = 1;
        TT_CHECK(telemem_allreduce(v, 1, TELEMEM_UINT64, TELEMEM_SUM));
        TT_ASSERT(v[0] == (uint64_t)n, "allreduce after bad calls: %llu",
                  (unsigned long long)v[0]);
    }

    /* ---- memory ---- */
    {
        static uint8_t region[4096];
        uint8_t stack[64];
        E(telemem_free_all(NULL), IA);
        E(telemem_free_all(stack), TELEMEM_ERR_NOT_FOUND);
        E(telemem_free_all(mine + 64), TELEMEM_ERR_NOT_FOUND);
        /* The peer's block (its address may equal ours: same binary,
         * deterministic allocator, e.g. under ASan). */
        if (n > 1 && pb != mine)
            E(telemem_free_all(pb), TELEMEM_ERR_NOT_FOUND);
        E(telemem_register(NULL, 64), IA);
        E(telemem_register(region, 0), IA);
        E(telemem_register(wrap, 100), IA);
        E(telemem_register(region, SIZE_MAX), IA);
        TT_CHECK(telemem_register(region + 1024, 1024));
        /* Overlaps: same range, inside, straddling either end, covering,
         * and a malloc_all block. */
        E(telemem_register(region + 1024, 1024), IA);
        E(telemem_register(region + 1500, 10), IA);
        E(telemem_register(region + 1000, 100), IA);
        E(telemem_register(region + 2000, 100), IA);
        E(telemem_register(region, 4096), IA);
        E(telemem_register(mine + 100, 100), IA);
        E(telemem_register(mine - 10, 20), IA);
        /* Adjacent is not overlapping. */
        TT_CHECK(telemem_register(region + 2048, 16));
        TT_CHECK(telemem_register(region + 1000, 24));
        E(telemem_deregister(NULL), IA);
        E(telemem_deregister(stack), TELEMEM_ERR_NOT_FOUND);
        E(telemem_deregister(region + 1025), TELEMEM_ERR_NOT_FOUND);
        E(telemem_deregister(mine), TELEMEM_ERR_NOT_FOUND);
        TT_CHECK(telemem_deregister(region + 1024));
        E(telemem_deregister(region + 1024), TELEMEM_ERR_NOT_FOUND);
        TT_CHECK(telemem_deregister(region + 2048));
        TT_CHECK(telemem_deregister(region + 1000));
        /* Registering the same range again now works. */
        TT_CHECK(telemem_register(region + 1024, 1024));
        TT_CHECK(telemem_deregister(region + 1024));
        /* A failed malloc_all leaves bases[] alone and all ranks get
         * TELEMEM_ERR_NO_MEMORY (rank 0 asks for too much). */
        void **b2 = calloc((size_t)n, sizeof *b2);
        for (int i = 0; i < n; i++)
            b2[i] = (void *)(uintptr_t)0x1234;
        E(telemem_malloc_all(me == 0 ? SIZE_MAX / 2 : 64, b2),
          TELEMEM_ERR_NO_MEMORY);
        for (int i = 0; i < n; i++)
            TT_ASSERT(b2[i] == (void *)(uintptr_t)0x1234,
                      "failed malloc_all changed bases[%d]", i);
        /* ...and the next one works. */
        TT_CHECK(telemem_malloc_all(128, b2));
        TT_CHECK(telemem_free_all(b2[me]));
        free(b2);
    }

    /* ---- active messages ---- */
    {
        uint32_t args[TELEMEM_AM_MAX_ARGS + 1] = {0};
        uint8_t pl[8] = {0};
        int id = -7;
        E(telemem_am_register(-1, dummy, NULL), IA);
        E(telemem_am_register(TELEMEM_AM_MAX_HANDLERS, dummy, NULL), IA);
        E(telemem_am_register(0, NULL, NULL), IA);
        E(telemem_am_register_any(NULL, NULL, &id), IA);
        E(telemem_am_register_any(dummy, NULL, NULL), IA);
        TT_ASSERT(id == -7, "register_any set *id_p on failure");
        TT_CHECK(telemem_am_register_any(bad_reply_handler, NULL, &h_bad));
        TT_CHECK(telemem_am_register_any(rep_handler, NULL, &h_rep));
        E(telemem_am_request(peer, -1, NULL, 0, NULL, 0), IA);
        E(telemem_am_request(peer, TELEMEM_AM_MAX_HANDLERS, NULL, 0, NULL, 0),
          IA);
        E(telemem_am_request(peer, h_bad, NULL, 0, args,
                             TELEMEM_AM_MAX_ARGS + 1), IA);
        E(telemem_am_request(peer, h_bad, NULL, 8, NULL, 0), IA);
        E(telemem_am_request(peer, h_bad, pl, 8, NULL, 3), IA);
        /* Outside a handler there is no token: NULL, forged or kept past
         * its handler, it is refused without being read. */
        int src = -3;
        E(telemem_am_reply(NULL, h_rep, pl, 8, NULL, 0), IA);
        E(telemem_am_source(NULL, &src), IA);
        E(telemem_am_source((telemem_am_token_t)(uintptr_t)8, &src), IA);
        E(telemem_am_source((telemem_am_token_t)(void *)pl, &src), IA);
        E(telemem_am_reply((telemem_am_token_t)(uintptr_t)8, h_rep, pl, 8,
                           NULL, 0), IA);
        TT_ASSERT(src == -3, "am_source set *rank_p on failure");
        TT_CHECK(telemem_barrier());
        /* The handler makes bad replies; nothing reaches rep_handler. */
        TT_CHECK(telemem_am_request(peer, h_bad, pl, 8, args, 2));
        TT_CHECK(telemem_quiet());
        double t0 = tt_now();
        while (handled < 1 && tt_now() - t0 < 30)
            TT_POLL();
        TT_CHECK(telemem_barrier());
        TT_ASSERT(handled == 1, "bad_reply_handler ran %ld times", handled);
        /* its token is gone with it: refused, not read */
        E(telemem_am_source(kept_token, &src), IA);
        E(telemem_am_reply(kept_token, h_rep, pl, 8, NULL, 0), IA);
        TT_ASSERT(src == -3, "am_source set *rank_p on failure");
        TT_CHECK(telemem_barrier());
        TT_ASSERT(hfails == 0, "%ld failures inside handlers", hfails);
        /* Exhaust the ids: register_any then says NO_MEMORY. */
        int got = 0, last = -1;
        for (;;) {
            int rc = telemem_am_register_any(dummy, NULL, &last);
            if (rc == TELEMEM_ERR_NO_MEMORY)
                break;
            TT_CHECK(rc);
            TT_ASSERT(++got <= TELEMEM_AM_MAX_HANDLERS, "too many ids");
        }
        TT_ASSERT(got == TELEMEM_AM_MAX_HANDLERS - 2,
                  "register_any gave %d ids, want %d", got,
                  TELEMEM_AM_MAX_HANDLERS - 2);
        TT_ASSERT(last == TELEMEM_AM_MAX_HANDLERS - 1, "last id %d", last);
    }

    TT_CHECK(telemem_wait_wake()); /* no thread waits: nothing to do */
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_finalize());
    tt_me = -1;
    all_not_initialized("after finalize");
    E(telemem_finalize(), NI);
    /* Initialize again (telemem.h): a singleton may; a launched rank has
     * left its job for good (it got "rank N joined the store already"). */
    const char *kvs = getenv("TELEMEM_KVS");
    if (kvs && kvs[0]) {
        E(telemem_initialize(NULL, NULL), TELEMEM_ERR_STATE);
        E(telemem_rank(), NI);
        E(telemem_initialize(NULL, NULL), TELEMEM_ERR_STATE);
    } else {
        TT_CHECK(telemem_initialize(NULL, NULL));
        TT_CHECK(telemem_barrier());
        TT_CHECK(telemem_finalize());
        E(telemem_rank(), NI);
    }
    free(bases);
    tt_log("PASS");
    return 0;
}

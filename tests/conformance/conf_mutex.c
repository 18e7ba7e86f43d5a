/* conf_mutex.c - conformance: mutexes.
 *   create: sets with different counts per rank (rank r owns r % 3 in set
 *     A, 2 + r in set B), the same set number on every rank;
 *   exclusion: every rank locks (a) one hot mutex and (b) random mutexes of
 *     set B, and inside the lock does a plain get / +1 / put of a counter
 *     on another rank (unlock completes it) and stamps a holder word that
 *     must still hold its stamp after polling a while; every counter must
 *     end at the number of increments made under its mutex;
 *   trylock: on a mutex another rank holds it returns acquired = 0, on a
 *     free one acquired = 1;
 *   FIFO: rank 0 holds a mutex while ranks 1..n-1 request it one after
 *     another (in order 1..n-1, n-1..1, then random orders); the next rank
 *     is told to go only when the previous one's request is known to be at
 *     rank 0 (rank 0 pings it with an active message; the handler runs
 *     inside its telemem_mutex_lock() and replies, and that reply reaches
 *     rank 0 after the earlier lock request: issue order).  The grant
 *     order, logged at rank 0 by each holder, must be the request order;
 *   destroy and re-create: the sets are destroyed, a new one is created
 *     and works at once (each rank locks its neighbour's new mutex right
 *     after create returns, with no barrier in between). */
#include "tt.h"

#define HOT_ITERS 150
#define RAND_ITERS 150
#define FIFO_ROUNDS 4
#define HOLD_POLLS 20
#define AM_PING 41
#define AM_PONG 42

/* Words (8 bytes) of every rank's block. */
enum { W_HOT_CNT, W_HOT_HOLDER, W_LOG_LEN, W_LOG, NFIXED = W_LOG + 64 };

static int me, n;
static void **bases;
static int set_a, set_b;

static uint64_t *word(int rank, size_t w)
{
    return (uint64_t *)bases[rank] + w;
}

/* Counters of set B's mutexes: mutex (owner r, m) protects word
 * cnt_word(r, m) on rank (r + 1) % n (and a holder word next to it). */
static size_t mutexes_b(int r)
{
    return 2 + (size_t)r;
}

static size_t cnt_word(int r, int m)
{
    return NFIXED + 2 * ((size_t)r * ((size_t)n + 2) + (size_t)m);
}

/* Inside a lock: stamp the holder word, poll (others may try to enter),
 * check the stamp, then the plain read-modify-write. */
static void critical(int data_rank, size_t cw, size_t hw, const char *what)
{
    static uint64_t entries;
    uint64_t stamp = ((uint64_t)me + 1) << 32 | ++entries, got = 0, x = 0;
    TT_CHECK(telemem_put(data_rank, word(data_rank, hw), &stamp, 8));
    TT_CHECK(telemem_fence(data_rank));
    for (int i = 0; i < HOLD_POLLS; i++)
        TT_POLL();
    TT_CHECK(telemem_get(data_rank, &got, word(data_rank, hw), 8));
    TT_ASSERT(got == stamp, "%s: another rank (stamp %" PRIx64 ") entered "
              "while this rank held the mutex", what, got);
    TT_CHECK(telemem_get(data_rank, &x, word(data_rank, cw), 8));
    x++;
    TT_CHECK(telemem_put(data_rank, word(data_rank, cw), &x, 8));
}

static void test_exclusion(void)
{
    char what[96];
    /* (a) One hot mutex: set B, mutex 0 of rank 0; counter on rank n-1. */
    for (int i = 0; i < HOT_ITERS; i++) {
        TT_CHECK(telemem_mutex_lock(set_b, 0, 0));
        snprintf(what, sizeof what, "hot mutex, iteration %d", i);
        critical(n - 1, W_HOT_CNT, W_HOT_HOLDER, what);
        TT_CHECK(telemem_mutex_unlock(set_b, 0, 0));
    }
    /* (b) Random mutexes of set B (and of set A where they exist). */
    uint64_t *incs = calloc((size_t)n * ((size_t)n + 2), sizeof *incs);
    TT_ASSERT(incs, "out of memory");
    tt_rng_t r;
    tt_rng_seed(&r, tt_key(tt_seed(), 77, (uint64_t)me, 0));
    for (int i = 0; i < RAND_ITERS; i++) {
        int owner = (int)tt_rng_below(&r, (uint64_t)n);
        int m = (int)tt_rng_below(&r, mutexes_b(owner));
        int d = (owner + 1) % n;
        TT_CHECK(telemem_mutex_lock(set_b, m, owner));
        snprintf(what, sizeof what, "mutex %d of rank %d", m, owner);
        critical(d, cnt_word(owner, m), cnt_word(owner, m) + 1, what);
        TT_CHECK(telemem_mutex_unlock(set_b, m, owner));
        incs[(size_t)owner * ((size_t)n + 2) + (size_t)m]++;
        /* Set A: rank owner owns owner % 3 mutexes; lock and release one
         * (no data: it only has to work with uneven counts). */
        if (owner % 3) {
            int ma = (int)tt_rng_below(&r, (uint64_t)(owner % 3));
            TT_CHECK(telemem_mutex_lock(set_a, ma, owner));
            TT_CHECK(telemem_mutex_unlock(set_a, ma, owner));
        }
    }
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_allreduce(incs, (size_t)n * ((size_t)n + 2),
                               TELEMEM_UINT64, TELEMEM_SUM));
    if (me == n - 1)
        TT_ASSERT(*word(me, W_HOT_CNT) == (uint64_t)n * HOT_ITERS,
                  "hot mutex: counter is %" PRIu64 ", expected %d",
                  *word(me, W_HOT_CNT), n * HOT_ITERS);
    for (int owner = 0; owner < n; owner++) {
        if ((owner + 1) % n != me)
            continue;
        for (int m = 0; m < (int)mutexes_b(owner); m++) {
            uint64_t want = incs[(size_t)owner * ((size_t)n + 2) + (size_t)m];
            uint64_t got = *word(me, cnt_word(owner, m));
            TT_ASSERT(got == want, "mutex %d of rank %d: counter is %" PRIu64
                      ", but %" PRIu64 " increments were made under it", m,
                      owner, got, want);
        }
    }
    free(incs);
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("exclusion: hot mutex %d increments, %d random locks per rank, "
               "counters exact", n * HOT_ITERS, RAND_ITERS);
}

static void test_trylock(void)
{
    int holder = n - 1, owner = 0, acq = -1;
    /* Rank n-1 holds mutex 1 of rank 0; the others must fail to take it. */
    if (me == holder)
        TT_CHECK(telemem_mutex_lock(set_b, 1, owner));
    TT_CHECK(telemem_barrier());
    if (me != holder) {
        TT_CHECK(telemem_mutex_trylock(set_b, 1, owner, &acq));
        TT_ASSERT(acq == 0, "trylock of a held mutex: acquired = %d", acq);
    }
    TT_CHECK(telemem_barrier());
    if (me == holder)
        TT_CHECK(telemem_mutex_unlock(set_b, 1, owner));
    TT_CHECK(telemem_barrier());
    /* Each rank in turn takes a free mutex of its right neighbour. */
    for (int turn = 0; turn < n; turn++) {
        if (turn == me) {
            int right = (me + 1) % n;
            acq = -1;
            TT_CHECK(telemem_mutex_trylock(set_b, 1, right, &acq));
            TT_ASSERT(acq == 1, "trylock of a free mutex: acquired = %d",
                      acq);
            TT_CHECK(telemem_mutex_unlock(set_b, 1, right));
        }
        TT_CHECK(telemem_barrier());
    }
    if (me == 0)
        tt_log("trylock: held -> 0, free -> 1");
}

/* ---- FIFO ---- */

static volatile int in_lock;  /* set just before telemem_mutex_lock() */
static volatile uint64_t pong_count, pong_value;

static void on_ping(telemem_am_token_t tok, void *p, size_t b,
                    const uint32_t *args, unsigned nargs, void *ctx)
{
    uint32_t v = (uint32_t)in_lock;
    int rc = telemem_am_reply(tok, AM_PONG, NULL, 0, &v, 1);
    if (rc != TELEMEM_OK)
        TT_FAIL("am_reply: %s", telemem_strerror(rc));
}

static void on_pong(telemem_am_token_t tok, void *p, size_t b,
                    const uint32_t *args, unsigned nargs, void *ctx)
{
    pong_value = nargs ? args[0] : 0;
    __atomic_store_n(&pong_count, pong_count + 1, __ATOMIC_RELEASE);
}

/* Rank 0: true when rank k answers from inside its lock call. */
static int ping(int k)
{
    uint64_t want = pong_count + 1;
    TT_CHECK(telemem_am_request(k, AM_PING, NULL, 0, NULL, 0));
    tt_wait_flag(&pong_count, want, 60, "the answer to a ping");
    return pong_value == 1;
}

/* One round: ranks request in order[0..n-2]; the grants must follow. */
static void fifo_round(int round, const int *order)
{
    int owner = 0, m = 1;
    uint64_t *go = word(me, W_LOG + 63); /* this rank's "go" flag */
    TT_CHECK(telemem_barrier());

    if (me == 0) {
        *word(0, W_LOG_LEN) = 0;
        TT_CHECK(telemem_mutex_lock(set_b, m, owner));
        for (int i = 0; i < n - 1; i++) {
            int k = order[i];
            uint64_t flag = (uint64_t)round + 1;
            TT_CHECK(telemem_put(k, word(k, W_LOG + 63), &flag, 8));
            TT_CHECK(telemem_fence(k));
            /* Twice "in the lock call": the second answer surely comes
             * after the lock request went out. */
            int yes = 0;
            double t0 = tt_now();
            while (yes < 2) {
                if (ping(k))
                    yes++;
                else
                    TT_POLL();
                TT_ASSERT(tt_now() - t0 < 60, "rank %d never entered "
                          "telemem_mutex_lock()", k);
            }
        }
        /* Every request is queued at this rank, in the given order. */
        TT_CHECK(telemem_mutex_unlock(set_b, m, owner));
    } else {
        tt_wait_flag(go, (uint64_t)round + 1, 60, "the go signal");
        in_lock = 1;
        TT_CHECK(telemem_mutex_lock(set_b, m, owner));
        in_lock = 0;
        uint64_t len = 0;
        TT_CHECK(telemem_get(0, &len, word(0, W_LOG_LEN), 8));
        uint64_t v = (uint64_t)me;
        TT_CHECK(telemem_put(0, word(0, W_LOG + len), &v, 8));
        len++;
        TT_CHECK(telemem_put(0, word(0, W_LOG_LEN), &len, 8));
        TT_CHECK(telemem_mutex_unlock(set_b, m, owner));
    }
    TT_CHECK(telemem_barrier());
    if (me == 0) {
        uint64_t len = *word(0, W_LOG_LEN);
        char got[512] = "", want[512] = "";
        size_t k = 0, j = 0;
        for (uint64_t i = 0; i < len && k < sizeof got; i++)
            k += (size_t)snprintf(got + k, sizeof got - k, " %" PRIu64,
                                  *word(0, W_LOG + i));
        for (int i = 0; i < n - 1 && j < sizeof want; i++)
            j += (size_t)snprintf(want + j, sizeof want - j, " %d",
                                  order[i]);
        TT_ASSERT(len == (uint64_t)(n - 1), "FIFO round %d: %" PRIu64
                  " grants logged, expected %d (log:%s)", round, len, n - 1,
                  got);
        for (uint64_t i = 0; i < len; i++)
            TT_ASSERT(*word(0, W_LOG + i) == (uint64_t)order[i],
                      "FIFO round %d: grant order%s, request order%s", round,
                      got, want);
    }
}

static void test_fifo(void)
{
    TT_CHECK(telemem_am_register(AM_PING, on_ping, NULL));
    TT_CHECK(telemem_am_register(AM_PONG, on_pong, NULL));
    int *order = calloc((size_t)n, sizeof *order);
    TT_ASSERT(order, "out of memory");
    tt_rng_t r;
    tt_rng_seed(&r, tt_key(tt_seed(), 78, 0, 0));
    for (int round = 0; round < FIFO_ROUNDS; round++) {
        /* 1..n-1, then n-1..1, then random orders (same on every rank). */
        for (int i = 0; i < n - 1; i++)
            order[i] = round == 1 ? n - 1 - i : i + 1;
        if (round >= 2)
            for (int i = n - 1; i > 1; i--) {
                int j = (int)tt_rng_below(&r, (uint64_t)i), t = order[i - 1];
                order[i - 1] = order[j];
                order[j] = t;
            }
        fifo_round(round, order);
    }
    free(order);
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("FIFO: %d rounds of %d waiters granted in request order",
               FIFO_ROUNDS, n - 1);
}

static void check_same_set(int set, const char *what)
{
    int *all = calloc((size_t)n, sizeof *all);
    TT_ASSERT(all, "out of memory");
    TT_CHECK(telemem_allgather(&set, all, sizeof set));
    for (int r = 0; r < n; r++)
        TT_ASSERT(all[r] == set, "%s: rank %d got set %d, rank %d got %d",
                  what, r, all[r], me, set);
    free(all);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_mutex");
    me = tt_me;
    n = tt_n;
    bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "out of memory");
    size_t words = cnt_word(n, 0) + 2;
    TT_CHECK(telemem_malloc_all(words * 8, bases));
    memset(bases[me], 0, words * 8);

    set_a = set_b = -1;
    TT_CHECK(telemem_mutexes_create(me % 3, &set_a));
    TT_CHECK(telemem_mutexes_create((int)mutexes_b(me), &set_b));
    check_same_set(set_a, "set A");
    check_same_set(set_b, "set B");
    TT_ASSERT(set_a != set_b, "two sets with the same number %d", set_a);
    TT_CHECK(telemem_barrier());

    test_exclusion();
    test_trylock();
    test_fifo();

    /* Destroy both, create a new set, use every rank's mutex once. */
    TT_CHECK(telemem_mutexes_destroy(set_a));
    TT_CHECK(telemem_mutexes_destroy(set_b));
    /* The new set is usable as soon as create returns (no barrier): lock
     * the right neighbour's mutex first, it may still be in create. */
    int set_c = -1;
    TT_CHECK(telemem_mutexes_create(1, &set_c));
    for (int k = 1; k <= n; k++) {
        int r = (me + k) % n;
        TT_CHECK(telemem_mutex_lock(set_c, 0, r));
        TT_CHECK(telemem_mutex_unlock(set_c, 0, r));
    }
    check_same_set(set_c, "set C");
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_mutexes_destroy(set_c));
    /* And a set with no mutex on any rank. */
    int set_d = -1;
    TT_CHECK(telemem_mutexes_create(0, &set_d));
    TT_CHECK(telemem_mutexes_destroy(set_d));
    if (me == 0)
        tt_log("destroy and re-create: sets %d, %d -> %d, %d", set_a, set_b,
               set_c, set_d);

    TT_CHECK(telemem_free_all(bases[me]));
    free(bases);
    tt_finalize();
    return 0;
}

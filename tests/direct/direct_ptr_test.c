/* direct_ptr_test.c - telemem_ptr and telemem_ptr_wake: a peer's
 * telemem_malloc_all block is mapped here exactly when the window driver
 * reaches it (shm, TELEMEM_DIRECT not never), loads through the address
 * see the peer's data and stores reach the peer; ranges outside one block,
 * registered ranges of peers, TELEMEM_DIRECT=never give UNSUPPORTED; the
 * caller's own block and registered range map to themselves; bad
 * arguments leave *local_p untouched; a peer asleep in telemem_wait_poll
 * (TELEMEM_WAIT=block) is woken by telemem_ptr_wake after a store (run
 * with TELEMEM_LIVENESS_INTERVAL=60, the only other thing that would end
 * its sleep). */
#include <stdatomic.h>
#include <stdbool.h>

#include "tt.h"

#define BLOCK (1u << 16)
#define SLOT 256u
#define FLAG (BLOCK - 64)

static int me, n;

static bool reachable(int r)
{
    return !strstr(telemem_config_string(), "TELEMEM_DIRECT = never") &&
           !strcmp(telemem_transport_name(r), "shm");
}

static void check_args(uint8_t **bases)
{
    void *p = (void *)&p;
    void *const keep = p;
    TT_EXPECT(telemem_ptr(-1, bases[0], 8, &p), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_ptr(n, bases[0], 8, &p), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_ptr(0, NULL, 8, &p), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_ptr(0, bases[0], 8, NULL), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_ptr(0, (void *)(UINTPTR_MAX - 3), 8, &p),
              TELEMEM_ERR_INVALID_ARG);
    TT_ASSERT(p == keep, "telemem_ptr set *local_p on failure");
    TT_EXPECT(telemem_ptr_wake(-1), TELEMEM_ERR_INVALID_ARG);
    TT_EXPECT(telemem_ptr_wake(n), TELEMEM_ERR_INVALID_ARG);
    TT_CHECK(telemem_ptr_wake(me));
}

static void check_self(uint8_t **bases, uint8_t *reg)
{
    void *p = NULL;
    uint64_t stack = 0;
    TT_CHECK(telemem_ptr(me, bases[me] + 5, 10, &p));
    TT_ASSERT(p == bases[me] + 5, "own block maps to %p, not itself", p);
    TT_CHECK(telemem_ptr(me, reg + 1, 0, &p));
    TT_ASSERT(p == reg + 1, "own registered range maps to %p", p);
    TT_EXPECT(telemem_ptr(me, &stack, 8, &p), TELEMEM_ERR_UNSUPPORTED);
}

/* Every rank fills its own slot of every peer's block through the
 * address, and reads the peer's own pattern from it. */
static void check_peers(uint8_t **bases, uint8_t **regs)
{
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        void *p = NULL;
        int rc = telemem_ptr(r, bases[r] + 100, 64, &p);
        if (!reachable(r)) {
            TT_EXPECT(rc, TELEMEM_ERR_UNSUPPORTED);
            continue;
        }
        TT_EXPECT(rc, TELEMEM_OK);
        uint8_t *peer = (uint8_t *)p - 100;
        TT_ASSERT(!tt_pat_verify(peer + FLAG - SLOT, SLOT, r, 0,
                                 "peer's data through telemem_ptr"),
                  "rank %d's own data not seen through telemem_ptr", r);
        tt_pat_fill(peer + (size_t)me * SLOT, SLOT, 1000 + me, 0);
        TT_CHECK(telemem_ptr_wake(r));
        TT_EXPECT(telemem_ptr(r, bases[r] + BLOCK - 8, 16, &p),
                  TELEMEM_ERR_UNSUPPORTED);
        TT_EXPECT(telemem_ptr(r, regs[r], 8, &p), TELEMEM_ERR_UNSUPPORTED);
    }
    TT_CHECK(telemem_barrier());
    for (int r = 0; r < n; r++)
        if (r != me && reachable(r))
            TT_ASSERT(!tt_pat_verify(bases[me] + (size_t)r * SLOT, SLOT,
                                     1000 + r, 0, "a peer's stores"),
                      "rank %d's stores through telemem_ptr not here", r);
}

/* Rank 1 sleeps in telemem_wait_poll until rank 0 stores its flag through
 * the address and calls telemem_ptr_wake; it answers the same way, while
 * rank 0 watches its own memory without calling Telemem (so no message of
 * rank 0 wakes rank 1 instead). */
static void check_wake(uint8_t **bases)
{
    if (n < 2 || me > 1 || !reachable(1 - me)) {
        TT_CHECK(telemem_barrier());
        TT_CHECK(telemem_barrier());
        return;
    }
    int peer = 1 - me;
    void *p = NULL;
    TT_CHECK(telemem_ptr(peer, bases[peer] + FLAG, 8, &p));
    _Atomic uint64_t *theirs = p;
    _Atomic uint64_t *mine = (_Atomic uint64_t *)(void *)(bases[me] + FLAG);
    TT_CHECK(telemem_barrier());
    double t0 = tt_now();
    if (me == 1) {
        telemem_wait_t w = TELEMEM_WAIT_INIT(0);
        while (atomic_load_explicit(mine, memory_order_acquire) != 1)
            TT_CHECK(telemem_wait_poll(&w));
        tt_log("woken after %.3f s (rank 0 stored at 0.3 s)", tt_now() - t0);
        atomic_store_explicit(theirs, 2, memory_order_release);
        TT_CHECK(telemem_ptr_wake(0));
    } else {
        usleep(300 * 1000); /* rank 1 falls asleep (TELEMEM_WAIT=block) */
        atomic_store_explicit(theirs, 1, memory_order_release);
        TT_CHECK(telemem_ptr_wake(1));
        while (atomic_load_explicit(mine, memory_order_acquire) != 2)
            TT_ASSERT(tt_now() - t0 < 10, "rank 1, asleep, was not woken "
                      "by telemem_ptr_wake");
    }
    TT_CHECK(telemem_barrier());
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "direct_ptr_test");
    me = telemem_rank();
    n = telemem_nranks();
    void *b[256];
    TT_ASSERT(n <= 256 && (size_t)n * SLOT < FLAG - SLOT, "too many ranks");
    TT_CHECK(telemem_malloc_all(BLOCK, b));
    uint8_t **bases = (uint8_t **)b;
    memset(bases[me], 0, BLOCK);
    tt_pat_fill(bases[me] + FLAG - SLOT, SLOT, me, 0);
    uint8_t *reg = malloc(4096);
    TT_ASSERT(reg, "out of memory");
    TT_CHECK(telemem_register(reg, 4096));
    uint64_t ra = (uint64_t)(uintptr_t)reg, rall[256];
    TT_CHECK(telemem_allgather(&ra, rall, 8));
    uint8_t *regs[256];
    for (int r = 0; r < n; r++)
        regs[r] = (uint8_t *)(uintptr_t)rall[r];
    TT_CHECK(telemem_barrier());
    check_args(bases);
    check_self(bases, reg);
    check_peers(bases, regs);
    check_wake(bases);
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_deregister(reg));
    free(reg);
    TT_CHECK(telemem_free_all(bases[me]));
    tt_log("direct_ptr_test: ok");
    tt_finalize();
    return 0;
}

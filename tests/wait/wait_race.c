/* wait_race.c - stress of the wake-up race (a message that arrives just as
 * its receiver goes to sleep) for --seconds (default 3): ranks pair up and
 * play ping-pong, each turn after a random delay of 0-20 us, so the
 * message lands anywhere in the receiver's arm / last poll / sleep
 * sequence.  A turn is one of: a flag put the partner waits for in
 * telemem_wait_poll (woken by the put's message, or on one node by the
 * window driver's store); an active message whose handler sets the flag;
 * a get that wakes the partner (who keeps waiting) followed by a flag put.
 * Every flag carries the turn number and every get's value is checked.
 * Run with TELEMEM_WAIT=block, TELEMEM_LIVENESS_INTERVAL large and
 * TELEMEM_TIMEOUT set: a lost wake-up is not cut short by a liveness check
 * and ends the run with TELEMEM_ERR_TIMED_OUT instead of passing slowly. */
#include <stdbool.h>

#include "tt.h"

#define AM_ID 11

static uint64_t am_flag; /* set by the handler (maybe on the progress
                          * thread): atomic accesses */

typedef struct {
    uint64_t flag;    /* turn number, by put */
    uint64_t counter; /* read by gets */
    uint64_t pad[6];
} cell_t;

static void on_am(telemem_am_token_t tok, void *payload, size_t bytes,
                  const uint32_t *args, unsigned nargs, void *ctx)
{
    (void)tok, (void)payload, (void)bytes, (void)ctx;
    if (nargs == 2)
        __atomic_store_n(&am_flag, (uint64_t)args[0] | (uint64_t)args[1] << 32,
                         __ATOMIC_RELEASE);
}

static void delay(tt_rng_t *r)
{
    double until = tt_now() + 1e-9 * (double)tt_rng_below(r, 20000);
    while (tt_now() < until)
        ;
}

/* Wait for turn (or the stop marker) from the partner. */
static void take_turn(cell_t *mine, uint64_t turn, int kind, int partner)
{
    telemem_wait_t w = TELEMEM_WAIT_INIT(partner);
    for (;;) {
        uint64_t f = __atomic_load_n(&mine->flag, __ATOMIC_ACQUIRE);
        uint64_t a = __atomic_load_n(&am_flag, __ATOMIC_ACQUIRE);
        if (f == UINT64_MAX || (kind == 1 ? a == turn : f == turn))
            return;
        TT_CHECK(telemem_wait_poll(&w));
    }
}

static void give_turn(cell_t **bases, uint64_t turn, int kind, int partner)
{
    if (kind == 1) {
        uint32_t args[2] = {(uint32_t)turn, (uint32_t)(turn >> 32)};
        TT_CHECK(telemem_am_request(partner, AM_ID, NULL, 0, args, 2));
        return;
    }
    if (kind == 2) {
        uint64_t v = 0;
        TT_CHECK(telemem_get(partner, &v, &bases[partner]->counter,
                             sizeof v));
        TT_ASSERT(v == turn - 1, "get of the partner's counter: %" PRIu64
                  ", want %" PRIu64, v, turn - 1);
    }
    TT_CHECK(telemem_put(partner, &bases[partner]->flag, &turn, sizeof turn));
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "wait_race");
    int me = tt_me, n = tt_n;
    double seconds = (double)tt_arg_long(argc, argv, "--seconds", 3);
    if (n < 2 || n % 2)
        tt_skip("needs an even number of ranks");
    int partner = me ^ 1;
    cell_t **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(sizeof(cell_t), (void **)bases));
    cell_t *mine = bases[me];
    memset(mine, 0, sizeof *mine);
    TT_CHECK(telemem_am_register(AM_ID, on_am, NULL));
    TT_CHECK(telemem_barrier());
    tt_rng_t r, kinds;
    tt_rng_seed(&r, tt_key(tt_seed(), (uint64_t)me, 0x7ace, 0));
    tt_rng_seed(&kinds, tt_key(tt_seed(), (uint64_t)(me / 2), 0x7ace, 1));
    /* The even rank of a pair decides when to stop and says so on its
     * turn with the flag UINT64_MAX. */
    double end = tt_now() + seconds;
    uint64_t turn;
    for (turn = 1;; turn++) {
        int kind = (int)tt_rng_below(&kinds, 3);
        if ((int)((turn + 1) & 1) == (me & 1)) { /* odd turns: even rank */
            if ((me & 1) == 0 && tt_now() > end) {
                uint64_t stop = UINT64_MAX;
                TT_CHECK(telemem_put(partner, &bases[partner]->flag, &stop,
                                     sizeof stop));
                break;
            }
            delay(&r);
            mine->counter = turn; /* the partner's get of turn + 1 */
            give_turn(bases, turn, kind, partner);
        } else {
            take_turn(mine, turn, kind, partner);
            if (__atomic_load_n(&mine->flag, __ATOMIC_ACQUIRE) == UINT64_MAX)
                break;
        }
    }
    TT_CHECK(telemem_barrier());
    uint64_t turns = turn;
    TT_CHECK(telemem_allreduce(&turns, 1, TELEMEM_UINT64, TELEMEM_MIN));
    if (me == 0)
        tt_log("wait_race: %" PRIu64 " turns per pair or more: OK", turns);
    free(bases);
    tt_finalize();
    return 0;
}

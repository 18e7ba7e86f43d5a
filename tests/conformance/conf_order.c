/* conf_order.c - conformance: quiet, fence, barrier and ordering.
 * (a) message passing: data put, quiet (or fence, or nothing but issue
 *     order), then a flag put; the receiver spins with telemem_poll() on
 *     the flag and must then see the data;  (b) data, quiet, barrier;
 * (c) overlapping puts from one initiator to one target land in issue
 *     order (last writer wins, also a big put followed by small ones into
 *     its middle across fragment boundaries) and a get after them sees
 *     them;  (d) 1000 barriers, each checked with a put+quiet. */
#include "tt.h"

#define DMAX (1048576 + 5)
#define OV (256 * 1024)
#define NBAR 1000

/* Block layout. */
#define OFF_FLAG 0          /* uint64 flag written by left */
#define OFF_ACK 64          /* uint64 ack written by right */
#define OFF_DATA 128        /* DMAX data written by left */
#define OFF_OV (OFF_DATA + DMAX + 64)
#define OFF_BAR (OFF_OV + OV + 64)
#define BLK (OFF_BAR + 8 * (NBAR + 2))

static const size_t msizes[] = {8, 40, 41, 4097, 16320, 16385, 100000, DMAX};
#define NMS (sizeof msizes / sizeof msizes[0])

/* One overlapping-put op of initiator `who` (deterministic so the target
 * can replay it). */
typedef struct {
    size_t off, size;
    uint64_t key;
    int api; /* 0 put, 1 put_nbi, 2 put_nb */
} ovop_t;

#define NOV 300

static void gen_ov(uint64_t seed, int who, ovop_t *ops)
{
    tt_rng_t r;
    tt_rng_seed(&r, tt_key(seed, 40, who, 0));
    /* Fixed openers: big, then small ones into its middle, crossing the
     * 4k/16k buffer boundaries. */
    static const size_t fixed[][2] = {
        {0, 200000}, {100000, 10}, {16318, 5}, {16380, 8}, {4030, 4},
        {32767, 3}, {1000, 150000}, {16383, 1}, {0, 1}, {OV - 1, 1}};
    size_t nf = sizeof fixed / sizeof fixed[0];
    for (size_t i = 0; i < NOV; i++) {
        ovop_t *o = &ops[i];
        if (i < nf) {
            o->off = fixed[i][0];
            o->size = fixed[i][1];
        } else {
            unsigned c = (unsigned)tt_rng_below(&r, 10);
            o->size = c < 6 ? tt_rng_range(&r, 0, 100)
                    : c < 9 ? tt_rng_range(&r, 101, 20000)
                            : tt_rng_range(&r, 20001, OV);
            o->off = tt_rng_below(&r, OV - o->size + 1);
        }
        o->key = tt_key(seed, 41, who, i);
        o->api = (int)tt_rng_below(&r, 3);
    }
}

static void apply_ov(uint8_t *shadow, const ovop_t *ops)
{
    for (size_t i = 0; i < NOV; i++)
        tt_pat_fill(shadow + ops[i].off, ops[i].size, ops[i].key, 0);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_order");
    uint64_t seed = tt_seed();
    int me = tt_me, n = tt_n;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(BLK, bases));
    uint8_t *mine = bases[me], *rb = bases[right], *lb = bases[left];
    memset(mine, 0, BLK);
    volatile uint64_t *flag = (volatile uint64_t *)(void *)(mine + OFF_FLAG);
    volatile uint64_t *ack = (volatile uint64_t *)(void *)(mine + OFF_ACK);
    uint8_t *src = malloc(DMAX);
    TT_CHECK(telemem_barrier());

    /* (a) flag protocol: mode 0 quiet, 1 fence(right), 2 issue order only,
     * 3 data by put_nbi + quiet, flag by put_nb + wait. */
    uint64_t seq = 0;
    for (int mode = 0; mode < 4; mode++) {
        for (int rep = 0; rep < 3; rep++) {
            for (size_t k = 0; k < NMS; k++) {
                size_t sz = msizes[k];
                seq++;
                uint64_t key = tt_key(seed, 30, seq, me);
                tt_pat_fill(src, sz, key, 0);
                if (mode == 3)
                    TT_CHECK(telemem_put_nbi(right, rb + OFF_DATA, src, sz));
                else
                    TT_CHECK(telemem_put(right, rb + OFF_DATA, src, sz));
                if (mode == 0 || mode == 3)
                    TT_CHECK(telemem_quiet());
                else if (mode == 1)
                    TT_CHECK(telemem_fence(right));
                uint64_t fv = seq;
                if (mode == 3) {
                    telemem_handle_t h;
                    TT_CHECK(telemem_put_nb(right, rb + OFF_FLAG, &fv, 8, &h));
                    TT_CHECK(telemem_wait(&h));
                } else {
                    TT_CHECK(telemem_put(right, rb + OFF_FLAG, &fv, 8));
                }
                /* Receive from the left. */
                tt_wait_flag(flag, seq, 60, "data flag from left");
                char lab[80];
                snprintf(lab, sizeof lab, "mode %d: data seen with flag, "
                         "size %zu", mode, sz);
                TT_ASSERT(!tt_pat_verify(mine + OFF_DATA, sz,
                                         tt_key(seed, 30, seq, left), 0, lab),
                          "%s", lab);
                /* Ack to the left; wait for the right's ack before
                 * overwriting its data area again. */
                TT_CHECK(telemem_put(left, lb + OFF_ACK, &fv, 8));
                TT_CHECK(telemem_quiet());
                tt_wait_flag(ack, seq, 60, "ack from right");
            }
        }
    }
    if (me == 0)
        tt_log("message passing with flags: %" PRIu64 " rounds", seq);

    /* (b) data, quiet, barrier. */
    for (size_t k = 0; k < NMS; k++) {
        uint64_t key = tt_key(seed, 31, k, me);
        tt_pat_fill(src, msizes[k], key, 0);
        TT_CHECK(telemem_put(right, rb + OFF_DATA, src, msizes[k]));
        TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_barrier());
        TT_ASSERT(!tt_pat_verify(mine + OFF_DATA, msizes[k],
                                 tt_key(seed, 31, k, left), 0,
                                 "put+quiet+barrier"),
                  "size %zu", msizes[k]);
        TT_CHECK(telemem_barrier());
    }

    /* (c) overlapping puts in issue order, then a get sees them. */
    {
        ovop_t *ops = malloc(NOV * sizeof *ops);
        uint8_t *shadow = malloc(OV), *got = malloc(OV);
        uint8_t **bufs = calloc(NOV, sizeof *bufs);
        telemem_handle_t *hs = calloc(NOV, sizeof *hs);
        memset(shadow, 0, OV);
        gen_ov(seed, me, ops);
        for (size_t i = 0; i < NOV; i++) {
            bufs[i] = malloc(ops[i].size + 1);
            tt_pat_fill(bufs[i], ops[i].size, ops[i].key, 0);
            uint8_t *dst = rb + OFF_OV + ops[i].off;
            hs[i] = TELEMEM_HANDLE_NULL;
            if (ops[i].api == 0)
                TT_CHECK(telemem_put(right, dst, bufs[i], ops[i].size));
            else if (ops[i].api == 1)
                TT_CHECK(telemem_put_nbi(right, dst, bufs[i], ops[i].size));
            else
                TT_CHECK(telemem_put_nb(right, dst, bufs[i], ops[i].size,
                                        &hs[i]));
            if (i == NOV / 2) {
                /* A get in the middle sees everything issued before it. */
                uint8_t *half = calloc(1, OV);
                for (size_t j = 0; j <= i; j++)
                    tt_pat_fill(half + ops[j].off, ops[j].size, ops[j].key, 0);
                TT_CHECK(telemem_get(right, got, rb + OFF_OV, OV));
                TT_ASSERT(!tt_cmp(got, half, OV, "get after half the puts"),
                          "get after overlapping puts (no quiet)");
                free(half);
            }
        }
        apply_ov(shadow, ops);
        TT_CHECK(telemem_get(right, got, rb + OFF_OV, OV));
        TT_ASSERT(!tt_cmp(got, shadow, OV, "get after all overlapping puts"),
                  "get after overlapping puts (no quiet)");
        for (size_t i = 0; i < NOV; i++)
            TT_CHECK(telemem_wait(&hs[i]));
        TT_CHECK(telemem_quiet());
        for (size_t i = 0; i < NOV; i++)
            free(bufs[i]);
        TT_CHECK(telemem_barrier());
        /* The target replays the left neighbour's sequence. */
        gen_ov(seed, left, ops);
        memset(shadow, 0, OV);
        apply_ov(shadow, ops);
        TT_ASSERT(!tt_cmp(mine + OFF_OV, shadow, OV,
                          "target memory after overlapping puts"),
                  "overlapping puts not applied in issue order");
        free(ops);
        free(shadow);
        free(got);
        free(bufs);
        free(hs);
    }

    /* (d) NBAR barriers; each iteration puts 1 into slot i at the right,
     * quiet, barrier: slot i is set, slot i+2 cannot be yet. */
    uint64_t *bar = (uint64_t *)(void *)(mine + OFF_BAR);
    TT_CHECK(telemem_barrier());
    for (int i = 0; i < NBAR; i++) {
        uint64_t one = 1;
        TT_CHECK(telemem_put(right, rb + OFF_BAR + 8 * (size_t)i, &one, 8));
        TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_barrier());
        TT_ASSERT(__atomic_load_n(&bar[i], __ATOMIC_ACQUIRE) == 1,
                  "barrier %d: left's put before the barrier missing", i);
        TT_ASSERT(__atomic_load_n(&bar[i + 2], __ATOMIC_ACQUIRE) == 0,
                  "barrier %d: left is two barriers ahead", i);
    }
    if (me == 0)
        tt_log("%d checked barriers", NBAR);

    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(mine));
    free(src);
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

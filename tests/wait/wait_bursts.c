/* wait_bursts.c - doorbell correctness: --rounds rounds (default 200) in
 * which every rank sends a short burst (1-12 messages: puts of 1 B - 40 KiB
 * and active-message requests with payload) to random ranks, completes it
 * (quiet), sleeps 0-2 ms so that the others go to sleep, then every rank
 * verifies every byte of its receive area: each source's ranges carry the
 * seeded pattern, the rest keeps its guard byte.  Run under
 * TELEMEM_WAIT=block (every wait sleeps: each message must wake its
 * receiver) and with tiny shared-memory rings and buffers (senders sleep
 * until the receiver makes room and rings them back). */
#include <errno.h>
#include <time.h>

#include "tt.h"

#define AREA ((size_t)96 << 10) /* per source */
#define GUARD 0xee
#define AM_ID 9
#define MAX_MSG ((size_t)40 << 10)

static int n, me;
static uint8_t *area; /* n * AREA, registered */

/* One message of a round: source src writes [off, off+len) of its part
 * of dst's area, by put (am = 0) or an active-message request. */
typedef struct {
    int dst;
    size_t off, len;
    int am;
} msg_t;

/* The burst of src in round k, the same on every rank. */
static int burst(uint64_t seed, int k, int src, msg_t *m)
{
    tt_rng_t r;
    tt_rng_seed(&r, tt_key(seed, (uint64_t)k, (uint64_t)src, 0xb0b));
    int cnt = tt_rng_below(&r, 4) == 0 ? 0 : (int)tt_rng_range(&r, 1, 12);
    size_t next[64] = {0};
    int k2 = 0;
    for (int i = 0; i < cnt; i++) {
        int dst = (int)tt_rng_below(&r, (uint64_t)n);
        size_t len = tt_rng_below(&r, 3) == 0
                         ? (size_t)tt_rng_range(&r, 1, 64)
                         : (size_t)tt_rng_range(&r, 1, MAX_MSG);
        if (next[dst % 64] + len > AREA)
            continue;
        m[k2++] = (msg_t){dst, next[dst % 64], len,
                          (int)(tt_rng_below(&r, 3) == 0)};
        next[dst % 64] += len + tt_rng_below(&r, 100);
    }
    return k2;
}

static void on_am(telemem_am_token_t tok, void *payload, size_t bytes,
                  const uint32_t *args, unsigned nargs, void *ctx)
{
    (void)tok, (void)ctx;
    TT_ASSERT(nargs == 2, "am with %u args", nargs);
    size_t off = (size_t)args[1];
    TT_ASSERT((int)args[0] < n && off + bytes <= AREA, "am range");
    memcpy(area + (size_t)args[0] * AREA + off, payload, bytes);
}

static void send_burst(uint64_t seed, int k, void **regs, uint8_t *src)
{
    msg_t m[16];
    int cnt = burst(seed, k, me, m);
    for (int i = 0; i < cnt; i++) {
        uint64_t key = tt_key(seed, (uint64_t)k, (uint64_t)me,
                              (uint64_t)m[i].off);
        tt_pat_fill(src, m[i].len, key, 0);
        if (m[i].am) {
            uint32_t args[2] = {(uint32_t)me, (uint32_t)m[i].off};
            TT_CHECK(telemem_am_request(m[i].dst, AM_ID, src, m[i].len,
                                        args, 2));
        } else {
            uint8_t *to = (uint8_t *)regs[m[i].dst] + (size_t)me * AREA +
                          m[i].off;
            TT_CHECK(telemem_put(m[i].dst, to, src, m[i].len));
        }
    }
    TT_CHECK(telemem_quiet());
}

/* Every byte of this rank's area after round k. */
static long verify(uint64_t seed, int k)
{
    long bytes = 0;
    msg_t m[16];
    for (int src = 0; src < n; src++) {
        uint8_t *part = area + (size_t)src * AREA;
        size_t pos = 0;
        int cnt = burst(seed, k, src, m);
        for (int i = 0; i < cnt; i++) {
            if (m[i].dst != me)
                continue;
            for (; pos < m[i].off; pos++)
                TT_ASSERT(part[pos] == GUARD, "round %d: byte %zu from rank "
                          "%d changed outside every message (0x%02x)", k,
                          pos, src, part[pos]);
            uint64_t key = tt_key(seed, (uint64_t)k, (uint64_t)src,
                                  (uint64_t)m[i].off);
            TT_ASSERT(tt_pat_verify(part + m[i].off, m[i].len, key, 0,
                                    "burst") == 0,
                      "round %d: %s of %zu bytes from rank %d at %zu is "
                      "wrong", k, m[i].am ? "am" : "put", m[i].len, src,
                      m[i].off);
            pos = m[i].off + m[i].len;
            bytes += (long)m[i].len;
        }
        for (; pos < AREA; pos++)
            TT_ASSERT(part[pos] == GUARD, "round %d: byte %zu from rank %d "
                      "changed after the last message", k, pos, src);
    }
    return bytes;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "wait_bursts");
    me = tt_me;
    n = tt_n;
    int rounds = (int)tt_arg_long(argc, argv, "--rounds", 200);
    if (n > 64)
        tt_skip("at most 64 ranks (burst bookkeeping)");
    uint64_t seed = tt_seed();
    area = malloc((size_t)n * AREA);
    uint8_t *src = malloc(MAX_MSG);
    void **regs = calloc((size_t)n, sizeof *regs);
    TT_ASSERT(area && src && regs, "no memory");
    TT_CHECK(telemem_register(area, (size_t)n * AREA));
    TT_CHECK(telemem_allgather(&area, regs, sizeof area));
    TT_CHECK(telemem_am_register(AM_ID, on_am, NULL));
    tt_rng_t r;
    tt_rng_seed(&r, tt_key(seed, (uint64_t)me, 0x51ee9, 0));
    long checked = 0;
    for (int k = 0; k < rounds; k++) {
        memset(area, GUARD, (size_t)n * AREA);
        TT_CHECK(telemem_barrier());
        send_burst(seed, k, regs, src);
        struct timespec ts = {0, (long)tt_rng_below(&r, 2000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        TT_CHECK(telemem_barrier());
        checked += verify(seed, k);
        TT_CHECK(telemem_barrier());
    }
    long total = 0;
    TT_CHECK(telemem_allreduce(&checked, 1, TELEMEM_INT64, TELEMEM_SUM));
    total = checked;
    if (me == 0)
        tt_log("wait_bursts: %d rounds, %ld bytes verified: OK", rounds,
               total);
    TT_CHECK(telemem_deregister(area));
    free(regs);
    free(src);
    free(area);
    tt_finalize();
    return 0;
}

/* direct_test.c - the direct (RDMA) path through telemem.h: a target that
 * never calls Telemem is still written and read (TELEMEM_DIRECT=always on
 * one node), strided shapes as block-stride chains against a reference
 * loop, transfers outside the target's memory refused before any byte
 * moves, and a deregistered range never written again.  Run with
 * TELEMEM_DIRECT=always, never and auto (and TELEMEM_DIRECT_CMA=n): the
 * data must be the same.  An atomic on a window block after puts by the
 * AM path to the same target finds them applied (the lock-free express
 * path must not overtake them).
 * Usage: direct_test [nopoll|chains|oor|dereg|atomic-order]... */
#include <stdatomic.h>
#include <stdbool.h>

#include "tt.h"

#define BLOCK (1u << 20)
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static int me, n;

static uint8_t pat(uint64_t seed, size_t i)
{
    return (uint8_t)tt_key(seed, i, 0x5eed, 7);
}

static bool config_has(const char *line)
{
    return strstr(telemem_config_string(), line) != NULL;
}

/* ---- a target that does not poll ----------------------------------------- */

static void test_nopoll(uint8_t **bases)
{
    if (!config_has("TELEMEM_DIRECT = always") || n < 2 ||
        strcmp(telemem_transport_name(me == 0 ? 1 : 0), "shm") != 0) {
        if (me == 0)
            tt_log("nopoll: needs TELEMEM_DIRECT=always and shm (skipped)");
        return;
    }
    /* Layout of each block: flags at 0, 8, 16; data from 4096. */
    enum { F_DATA = 0, F_READY = 8, F_DONE = 16, DATA = 4096 };
    size_t len = 65536 + 3;
    TT_CHECK(telemem_barrier());
    if (me == 1) {
        volatile uint64_t *f = (volatile uint64_t *)(void *)bases[1];
        while (f[F_DATA / 8] != 1)
            ; /* no Telemem call: only a direct write can end this */
        atomic_thread_fence(memory_order_acquire);
        for (size_t i = 0; i < len; i++)
            TT_ASSERT(bases[1][DATA + i] == pat(11, i), "byte %zu", i);
        for (size_t i = 0; i < len; i++)
            bases[1][DATA + len + i] = pat(12, i);
        atomic_thread_fence(memory_order_release);
        f[F_READY / 8] = 1;
        while (f[F_DONE / 8] != 1)
            ;
    } else if (me == 0) {
        uint8_t *buf = malloc(len);
        for (size_t i = 0; i < len; i++)
            buf[i] = pat(11, i);
        uint64_t one = 1, v = 0;
        TT_CHECK(telemem_put(1, bases[1] + DATA, buf, len));
        TT_CHECK(telemem_put(1, bases[1] + F_DATA, &one, 8));
        while (v != 1)
            TT_CHECK(telemem_get(1, &v, bases[1] + F_READY, 8));
        TT_CHECK(telemem_get(1, buf, bases[1] + DATA + len, len));
        for (size_t i = 0; i < len; i++)
            TT_ASSERT(buf[i] == pat(12, i), "byte %zu", i);
        TT_CHECK(telemem_put(1, bases[1] + F_DONE, &one, 8));
        free(buf);
    }
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("nopoll: ok (the target never called Telemem)");
}

/* ---- strided shapes against the reference loop ---------------------------- */

typedef struct shape {
    int levels;
    size_t count[4];
    size_t lstr[3], rstr[3];
} shape_t;

static const shape_t shapes[] = {
    {1, {8, 100}, {16}, {24}},
    {1, {4096, 16}, {4096 + 64}, {8192}},
    {1, {3, 1000}, {5}, {7}},
    {2, {64, 10, 7}, {64, 640}, {128, 2000}},
    {2, {1000, 3, 5}, {1000, 3000}, {1024, 4096}},
    {3, {16, 4, 3, 2}, {32, 128, 384}, {48, 200, 700}},
    {1, {65536, 4}, {65536}, {65536 + 8}},
    {2, {0, 3, 3}, {8, 24}, {8, 24}}, /* empty */
};

static size_t extent(const shape_t *s, const size_t *str)
{
    size_t e = s->count[0];
    for (int k = 1; k <= s->levels; k++)
        e += (s->count[k] - 1) * str[k - 1];
    return s->count[0] ? e : 0;
}

/* Reference: visit every row, C loop order. */
static void ref_copy(const shape_t *s, uint8_t *dst, const size_t *dstr,
                     const uint8_t *src, const size_t *sstr)
{
    size_t idx[4] = {0};
    size_t rows = 1;
    for (int k = 1; k <= s->levels; k++)
        rows *= s->count[k];
    for (size_t r = 0; r < rows && s->count[0]; r++) {
        size_t d = 0, o = 0;
        for (int k = 1; k <= s->levels; k++) {
            d += idx[k] * dstr[k - 1];
            o += idx[k] * sstr[k - 1];
        }
        memcpy(dst + d, src + o, s->count[0]);
        for (int k = 1; k <= s->levels; k++) {
            if (++idx[k] < s->count[k])
                break;
            idx[k] = 0;
        }
    }
}

static void test_chains(uint8_t **bases, uint8_t *reg, uint8_t **regs)
{
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    uint8_t *src = malloc(BLOCK), *want = malloc(BLOCK), *got = malloc(BLOCK);
    for (size_t si = 0; si < NSHAPES; si++) {
        for (int where = 0; where < 2; where++) {
            const shape_t *s = &shapes[si];
            uint8_t *mine = where ? reg : bases[me];
            uint8_t *theirs = where ? regs[peer] : bases[peer];
            size_t re = extent(s, s->rstr), le = extent(s, s->lstr);
            TT_ASSERT(re <= BLOCK / 2 && le <= BLOCK, "shape %zu", si);
            for (size_t i = 0; i < le; i++)
                src[i] = pat(100 + si * 2 + (size_t)where, i ^ (size_t)me);
            memset(mine, 0xee, re);
            TT_CHECK(telemem_barrier());
            TT_CHECK(telemem_put_strided(peer, theirs, s->rstr, src, s->lstr,
                                         s->count, s->levels));
            TT_CHECK(telemem_quiet());
            TT_CHECK(telemem_barrier());
            /* What `from` wrote into my memory, by the reference loop. */
            for (size_t i = 0; i < le; i++)
                src[i] = pat(100 + si * 2 + (size_t)where, i ^ (size_t)from);
            memset(want, 0xee, re);
            ref_copy(s, want, s->rstr, src, s->lstr);
            TT_ASSERT(memcmp(mine, want, re) == 0,
                      "put_strided shape %zu (%s) differs from the reference",
                      si, where ? "registered" : "malloc_all");
            /* Read it back from the peer into a fresh local layout. */
            memset(got, 0x11, le);
            memset(want, 0x11, le);
            for (size_t i = 0; i < le; i++)
                src[i] = pat(100 + si * 2 + (size_t)where, i ^ (size_t)me);
            uint8_t *tmp = malloc(re ? re : 1);
            memset(tmp, 0xee, re);
            ref_copy(s, tmp, s->rstr, src, s->lstr); /* the peer's memory */
            ref_copy(s, want, s->lstr, tmp, s->rstr);
            free(tmp);
            TT_CHECK(telemem_get_strided(peer, got, s->lstr, theirs, s->rstr,
                                         s->count, s->levels));
            TT_ASSERT(memcmp(got, want, le) == 0,
                      "get_strided shape %zu (%s) differs from the reference",
                      si, where ? "registered" : "malloc_all");
            TT_CHECK(telemem_barrier());
        }
    }
    free(src);
    free(want);
    free(got);
    if (me == 0)
        tt_log("chains: %zu shapes ok", NSHAPES);
}

/* ---- refused before any byte moves ---------------------------------------- */

static void test_oor(uint8_t **bases, uint8_t *reg, uint8_t **regs)
{
    int peer = (me + 1) % n;
    size_t len = 8192;
    uint8_t *src = malloc(len);
    memset(src, 0x77, len);
    for (int where = 0; where < 2; where++) {
        uint8_t *mine = where ? reg : bases[me];
        size_t size = where ? BLOCK / 2 : BLOCK;
        uint8_t *theirs = where ? regs[peer] : bases[peer];
        memset(mine + size - len, 0x33, len);
        TT_CHECK(telemem_barrier());
        /* Straddles the end: the first half is inside, and must stay
         * untouched too. */
        int rc = telemem_put(peer, theirs + size - len / 2, src, len);
        int qrc = telemem_quiet();
        TT_ASSERT(rc == TELEMEM_ERR_OUT_OF_RANGE ||
                      qrc == TELEMEM_ERR_OUT_OF_RANGE,
                  "put across the end: %s / %s", telemem_strerror(rc),
                  telemem_strerror(qrc));
        uint8_t back[64];
        rc = telemem_get(peer, back, theirs + size - 32, 64);
        TT_EXPECT(rc, TELEMEM_ERR_OUT_OF_RANGE);
        size_t cnt[2] = {512, 4};
        size_t lstr[1] = {512}, rstr[1] = {1024};
        rc = telemem_put_strided(peer, theirs + size - 3 * 1024 - 256, rstr,
                                 src, lstr, cnt, 1);
        qrc = telemem_quiet();
        TT_ASSERT(rc == TELEMEM_ERR_OUT_OF_RANGE ||
                      qrc == TELEMEM_ERR_OUT_OF_RANGE,
                  "strided put across the end: %s / %s",
                  telemem_strerror(rc), telemem_strerror(qrc));
        TT_CHECK(telemem_barrier());
        for (size_t i = 0; i < len; i++)
            TT_ASSERT(mine[size - len + i] == 0x33,
                      "byte %zu before the end of my %s memory was written "
                      "by a refused transfer", len - i,
                      where ? "registered" : "malloc_all");
        TT_CHECK(telemem_barrier());
    }
    free(src);
    if (me == 0)
        tt_log("oor: ok");
}

/* ---- a deregistered range is never written -------------------------------- */

static void test_dereg(void)
{
    int peer = (me + 1) % n;
    size_t len = 256 * 1024;
    uint8_t *mem = malloc(len), *src = malloc(len);
    uint8_t **all = malloc(sizeof(void *) * (size_t)n);
    memset(mem, 0, len);
    TT_CHECK(telemem_register(mem, len));
    uint64_t a = (uint64_t)(uintptr_t)mem, *aa = malloc(8 * (size_t)n);
    TT_CHECK(telemem_allgather(&a, aa, 8));
    for (int r = 0; r < n; r++)
        all[r] = (uint8_t *)(uintptr_t)aa[r];
    for (size_t i = 0; i < len; i++)
        src[i] = pat(7, i);
    TT_CHECK(telemem_put(peer, all[peer], src, len)); /* caches its key */
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    /* Peers answer the withdrawal while they wait in the barrier. */
    TT_CHECK(telemem_deregister(mem));
    memset(mem, 0xab, len);
    TT_CHECK(telemem_barrier());
    int rc = telemem_put(peer, all[peer], src, len);
    int qrc = telemem_quiet();
    TT_ASSERT(rc == TELEMEM_ERR_OUT_OF_RANGE ||
                  qrc == TELEMEM_ERR_OUT_OF_RANGE,
              "put into a deregistered range: %s / %s", telemem_strerror(rc),
              telemem_strerror(qrc));
    TT_CHECK(telemem_barrier());
    for (size_t i = 0; i < len; i++)
        TT_ASSERT(mem[i] == 0xab, "byte %zu of a deregistered range was "
                  "written", i);
    free(mem);
    free(src);
    free(all);
    free(aa);
    if (me == 0)
        tt_log("dereg: ok");
}

/* ---- atomics after AM puts -------------------------------------------------- */

/* Rank 0 puts a value into rank 1's registered range (64 bytes: the AM
 * path, CMA keys start at 4 KiB), then swaps a word of rank 1's window
 * block; rank 1 polls until it sees the swap and must find the put there
 * already, then acknowledges.  Both forms: blocking swap and
 * fetch-and-add nbi + quiet. */
static void test_atomic_order(uint8_t **bases, uint8_t **regs)
{
    enum { ROUNDS = 200, FLAG = 32768 };
    memset(regs[me], 0, 64); /* earlier tests left data in both */
    memset(bases[me] + FLAG, 0, 8);
    TT_CHECK(telemem_barrier());
    volatile uint64_t *flag = (volatile uint64_t *)(void *)(bases[1] + FLAG);
    volatile uint64_t *ack = (volatile uint64_t *)(void *)(bases[0] + FLAG);
    for (int64_t k = 1; k <= ROUNDS; k++) {
        if (me == 0) {
            uint64_t v[8];
            for (int i = 0; i < 8; i++)
                v[i] = (uint64_t)k * 1000 + (uint64_t)i;
            TT_CHECK(telemem_put_nbi(1, regs[1], v, sizeof(v)));
            int64_t old = -1;
            if (k % 2) {
                TT_CHECK(telemem_atomic_swap(1, (void *)flag, TELEMEM_INT64,
                                             &k, &old));
            } else {
                int64_t one = 1;
                TT_CHECK(telemem_atomic_fetch_add_nbi(
                    1, (void *)flag, TELEMEM_INT64, &one, &old));
                TT_CHECK(telemem_quiet());
            }
            TT_ASSERT(old == k - 1, "round %lld: old %lld",
                      (long long)k, (long long)old);
            tt_wait_flag(ack, (uint64_t)k, 60, "rank 1's acknowledgement");
        } else if (me == 1) {
            tt_wait_flag(flag, (uint64_t)k, 60, "rank 0's atomic");
            uint64_t *r = (uint64_t *)(void *)regs[1];
            for (int i = 0; i < 8; i++)
                TT_ASSERT(__atomic_load_n(&r[i], __ATOMIC_RELAXED) ==
                              (uint64_t)k * 1000 + (uint64_t)i,
                          "round %lld: word %d of the put is %llu: the "
                          "atomic overtook it", (long long)k, i,
                          (unsigned long long)r[i]);
            TT_CHECK(telemem_put(0, (void *)ack, &k, sizeof(k)));
            TT_CHECK(telemem_fence(0));
        }
    }
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("atomic-order: ok (%d rounds)", ROUNDS);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "direct_test");
    me = telemem_rank();
    n = telemem_nranks();
    if (n < 2)
        tt_skip("needs 2 or more ranks");
    void *b[256];
    TT_ASSERT(n <= 256, "too many ranks");
    TT_CHECK(telemem_malloc_all(BLOCK, b));
    uint8_t **bases = (uint8_t **)b;
    memset(bases[me], 0, BLOCK);
    /* A registered range of every rank (CMA, or the AM path). */
    uint8_t *reg = malloc(BLOCK / 2);
    TT_CHECK(telemem_register(reg, BLOCK / 2));
    uint64_t ra = (uint64_t)(uintptr_t)reg, rall[256];
    TT_CHECK(telemem_allgather(&ra, rall, 8));
    uint8_t *regs[256];
    for (int r = 0; r < n; r++)
        regs[r] = (uint8_t *)(uintptr_t)rall[r];
    TT_CHECK(telemem_barrier());
    bool all = argc < 2;
    for (int i = 1; i < argc || all; i++) {
        const char *t = all ? "all" : argv[i];
        if (all || !strcmp(t, "nopoll"))
            test_nopoll(bases);
        if (all || !strcmp(t, "chains"))
            test_chains(bases, reg, regs);
        if (all || !strcmp(t, "oor"))
            test_oor(bases, reg, regs);
        if (all || !strcmp(t, "dereg"))
            test_dereg();
        if (all || !strcmp(t, "atomic-order"))
            test_atomic_order(bases, regs);
        all = false;
    }
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_deregister(reg));
    free(reg);
    TT_CHECK(telemem_free_all(bases[me]));
    tt_finalize();
    return 0;
}

/* limits.c - what happens at the edges (docs/hardening.md
 * "Limits"), one case per run:
 *   zero       0-byte operations of every kind, to every rank (self
 *              included): TELEMEM_OK, nothing written, handles complete;
 *              a 0-byte request at an address outside every region is a
 *              no-op too (nothing to refuse)
 *   handles    more nb handles than the op table holds: TLM_OP_MAX
 *              (1,048,575) get_nb handles outstanding at once work, the
 *              next one fails with TELEMEM_ERR_NO_MEMORY, all complete
 *              with the right data and the table is usable again
 *   bigput     one put of 4 GiB + 24 bytes (source: a 1 MiB + 4 KiB
 *              pattern mapped over and over, so only the target's 4 GiB
 *              is real memory), verified byte for byte at the target;
 *              skipped (exit 77, reason printed) when memory is short
 *   hugealloc  telemem_malloc_all() beyond memory: TELEMEM_ERR_NO_MEMORY on
 *              every rank whether every rank or only one asks (sizes past
 *              the address space, and past RAM + swap unless the kernel
 *              overcommits always), then a normal block works
 *   handler    a handler that sends: replies (short, fragmented, long) and
 *              a reply to itself work; requests, puts, gets, quiet, poll,
 *              barrier and malloc_all inside a handler return
 *              TELEMEM_ERR_IN_HANDLER; a second reply and a reply to a
 *              reply return TELEMEM_ERR_INVALID_ARG
 * Usage: limits CASE   (under telemem-run -n N, or a singleton) */
#define _GNU_SOURCE
#include "tt.h"

#include <errno.h>
#include <sys/mman.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define TT_ASAN 1
#else
#define TT_ASAN 0
#endif

static int me, n;

static uint8_t pat(uint64_t i)
{
    return (uint8_t)((i * 2654435761u) >> 13);
}

/* ---- zero ---------------------------------------------------------------- */

#define BLK 4096

static void check_untouched(void *const *bases, const char *what)
{
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    const uint8_t *b = bases[me];
    for (size_t i = 0; i < BLK; i++)
        TT_ASSERT(b[i] == pat(i + (size_t)me), "%s: byte %zu of rank %d's "
                  "block changed", what, i, me);
    TT_CHECK(telemem_barrier());
}

static long zero_runs;
static void zero_handler(telemem_am_token_t t, void *p, size_t b,
                         const uint32_t *a, unsigned na, void *ctx)
{
    TT_ASSERT(b == 0 && p == NULL && na == 0, "0-byte AM: %zu bytes, "
              "payload %p, %u args", b, p, na);
    zero_runs++;
    if (ctx)
        TT_CHECK(telemem_am_reply(t, 30, NULL, 0, NULL, 0));
}

static void case_zero(void)
{
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "calloc");
    TT_CHECK(telemem_malloc_all(BLK, bases));
    for (size_t i = 0; i < BLK; i++)
        ((uint8_t *)bases[me])[i] = pat(i + (size_t)me);
    TT_CHECK(telemem_am_register(30, zero_handler, NULL));
    TT_CHECK(telemem_am_register(31, zero_handler, (void *)1));
    /* A zero-size block (a unique address, 0-byte operations only). */
    void **zb = calloc((size_t)n, sizeof *zb);
    TT_ASSERT(zb, "calloc");
    TT_CHECK(telemem_malloc_all(0, zb));
    TT_CHECK(telemem_barrier());
    uint8_t local[16] = {0};
    int64_t one = 1;
    telemem_handle_t h[16];
    for (int r = 0; r < n; r++) {
        uint8_t *rb = (uint8_t *)bases[r] + 100;
        /* Contiguous, every completion form, in a block, at the end of a
         * block, in a zero-size block, with NULL buffers. */
        void *where[4] = {rb, (uint8_t *)bases[r] + BLK, zb[r], NULL};
        for (int w = 0; w < 4; w++) {
            void *dst = where[w];
            TT_CHECK(telemem_put(r, dst, local, 0));
            TT_CHECK(telemem_put(r, dst, NULL, 0));
            TT_CHECK(telemem_get(r, local, dst, 0));
            TT_CHECK(telemem_get(r, NULL, dst, 0));
            TT_CHECK(telemem_put_nb(r, dst, local, 0, &h[0]));
            TT_CHECK(telemem_get_nb(r, local, dst, 0, &h[1]));
            TT_CHECK(telemem_wait(&h[0]));
            TT_CHECK(telemem_wait(&h[1]));
            TT_CHECK(telemem_put_nbi(r, dst, local, 0));
            TT_CHECK(telemem_get_nbi(r, local, dst, 0));
        }
        /* Accumulate: 0 bytes. */
        TT_CHECK(telemem_acc(r, TELEMEM_INT64, &one, rb, local, 0));
        TT_CHECK(telemem_acc_nb(r, TELEMEM_INT64, &one, rb, local, 0, &h[2]));
        TT_CHECK(telemem_wait(&h[2]));
        TT_CHECK(telemem_acc_nbi(r, TELEMEM_DOUBLE, &one, rb, local, 0));
        /* Strided: a zero count at each level. */
        size_t st[2] = {64, 256}, cnt[3];
        for (int z = 0; z < 3; z++) {
            cnt[0] = 8; cnt[1] = 2; cnt[2] = 2;
            cnt[z] = 0;
            TT_CHECK(telemem_put_strided(r, rb, st, local, st, cnt, 2));
            TT_CHECK(telemem_get_strided(r, local, st, rb, st, cnt, 2));
            TT_CHECK(telemem_put_strided_nb(r, rb, st, local, st, cnt, 2,
                                            &h[3]));
            TT_CHECK(telemem_get_strided_nb(r, local, st, rb, st, cnt, 2,
                                            &h[4]));
            TT_CHECK(telemem_wait(&h[3]));
            TT_CHECK(telemem_wait(&h[4]));
            TT_CHECK(telemem_put_strided_nbi(r, rb, st, local, st, cnt, 2));
            TT_CHECK(telemem_get_strided_nbi(r, local, st, rb, st, cnt, 2));
            TT_CHECK(telemem_acc_strided_nbi(r, TELEMEM_INT64, &one, rb, st,
                                             local, st, cnt, 2));
        }
        /* Vector and list: no segments, and segments of 0 bytes. */
        void *rd[2] = {rb, rb + 32};
        const void *ls[2] = {local, local + 8};
        void *ld[2] = {local, local + 8};
        const void *rs[2] = {rb, rb + 32};
        for (size_t cnt_v = 0; cnt_v < 3; cnt_v += 2) {
            size_t bytes = cnt_v ? 0 : 8;
            TT_CHECK(telemem_put_vector(r, rd, ls, cnt_v, bytes));
            TT_CHECK(telemem_get_vector(r, ld, rs, cnt_v, bytes));
            TT_CHECK(telemem_put_vector_nb(r, rd, ls, cnt_v, bytes, &h[5]));
            TT_CHECK(telemem_get_vector_nb(r, ld, rs, cnt_v, bytes, &h[6]));
            TT_CHECK(telemem_wait(&h[5]));
            TT_CHECK(telemem_wait(&h[6]));
            TT_CHECK(telemem_acc_vector(r, TELEMEM_INT64, &one, rd, ls,
                                        cnt_v, bytes));
        }
        telemem_seg_t segs[2] = {{rb, local, 0}, {rb + 64, local, 0}};
        for (size_t cnt_l = 0; cnt_l < 3; cnt_l += 2) {
            TT_CHECK(telemem_put_list(r, segs, cnt_l));
            TT_CHECK(telemem_get_list(r, segs, cnt_l));
            TT_CHECK(telemem_put_list_nb(r, segs, cnt_l, &h[7]));
            TT_CHECK(telemem_wait(&h[7]));
            TT_CHECK(telemem_acc_list_nbi(r, TELEMEM_INT64, &one, segs,
                                          cnt_l));
        }
        /* Active messages without payload or arguments; a 0-byte long
         * request (its destination is still checked: it must be known). */
        TT_CHECK(telemem_am_request(r, 30, NULL, 0, NULL, 0));
        TT_CHECK(telemem_am_request(r, 31, NULL, 0, NULL, 0));
        TT_CHECK(telemem_am_request_long(r, 30, NULL, 0, rb, NULL, 0));
    }
    check_untouched(bases, "0-byte operations");
    /* Every rank sent 4 messages to handler 30 and 31 of every rank
     * (30: request, long request, and the replies of 31's requests). */
    double t0 = tt_now();
    while (zero_runs < 4L * n && tt_now() - t0 < 60)
        TT_POLL();
    TT_ASSERT(zero_runs == 4L * n, "0-byte AMs: %ld handler runs, "
              "expected %ld", zero_runs, 4L * n);
    /* Collectives of nothing. */
    TT_CHECK(telemem_broadcast(NULL, 0, n - 1));
    TT_CHECK(telemem_allreduce(NULL, 0, TELEMEM_DOUBLE, TELEMEM_SUM));
    TT_CHECK(telemem_allgather(NULL, NULL, 0));
    /* Registration of 0 bytes is refused (documented). */
    TT_EXPECT(telemem_register(local, 0), TELEMEM_ERR_INVALID_ARG);
    TT_CHECK(telemem_free_all(zb[me]));
    TT_CHECK(telemem_free_all(bases[me]));
    free(zb);
    free(bases);
    tt_log("zero: every 0-byte operation returned OK, nothing written");
}

/* ---- handles ------------------------------------------------------------- */

#define OP_MAX ((1u << 20) - 1u) /* TLM_OP_MAX of src/core/core.h */

static void case_handles(void)
{
    if (n < 2)
        tt_skip("needs 2 ranks (gets to a peer hold handles)");
    size_t cnt = OP_MAX;
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "calloc");
    TT_CHECK(telemem_malloc_all(BLK, bases));
    uint64_t *blk = bases[me];
    for (size_t i = 0; i < BLK / 8; i++)
        blk[i] = ((uint64_t)me << 32) | i;
    TT_CHECK(telemem_barrier());
    if (me == 0) {
        int peer = 1;
        const uint64_t *rblk = bases[peer];
        telemem_handle_t *h = malloc(cnt * sizeof *h);
        uint64_t *dst = malloc(cnt * sizeof *dst);
        TT_ASSERT(h && dst, "malloc of %zu handles", cnt);
        double t0 = tt_now();
        for (size_t i = 0; i < cnt; i++) {
            dst[i] = ~(uint64_t)0;
            TT_CHECK(telemem_get_nb(peer, &dst[i], &rblk[i % (BLK / 8)], 8,
                                    &h[i]));
        }
        uint64_t extra = 0;
        telemem_handle_t hx;
        TT_EXPECT(telemem_get_nb(peer, &extra, rblk, 8, &hx),
                  TELEMEM_ERR_NO_MEMORY);
        TT_EXPECT(telemem_put_nb(peer, (void *)rblk, &extra, 8, &hx),
                  TELEMEM_ERR_NO_MEMORY);
        tt_log("handles: %zu get_nb outstanding, the next refused with "
               "NO_MEMORY (%.1f s)", cnt, tt_now() - t0);
        /* Complete them in reverse order: any aliasing of wire ids would
         * put a reply into the wrong buffer. */
        for (size_t i = cnt; i-- > 0;) {
            TT_CHECK(telemem_wait(&h[i]));
            uint64_t want = ((uint64_t)peer << 32) | (i % (BLK / 8));
            TT_ASSERT(dst[i] == want, "get %zu: 0x%llx, expected 0x%llx", i,
                      (unsigned long long)dst[i], (unsigned long long)want);
        }
        /* The table is usable again. */
        TT_CHECK(telemem_get_nb(peer, &extra, &rblk[3], 8, &hx));
        TT_CHECK(telemem_wait(&hx));
        TT_ASSERT(extra == (((uint64_t)peer << 32) | 3), "get after the "
                  "table was full: 0x%llx", (unsigned long long)extra);
        tt_log("handles: all %zu completed with the right data (%.1f s)",
               cnt, tt_now() - t0);
        free(h);
        free(dst);
    }
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(bases[me]));
    free(bases);
}

/* ---- bigput -------------------------------------------------------------- */

static long long meminfo_kb(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    long long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            v = atoll(line + kl + 1);
            break;
        }
    fclose(f);
    return v;
}

#define PERIOD ((size_t)(1u << 20) + 4096u) /* not a power of two */

/* A read-only range of len bytes whose byte i is pat(i % PERIOD), backed
 * by one PERIOD-byte memfd mapped again and again. */
static uint8_t *pattern_range(size_t len, size_t *maplen_p)
{
    int fd = memfd_create("tt-limits", 0);
    TT_ASSERT(fd >= 0, "memfd_create: %s", strerror(errno));
    TT_ASSERT(ftruncate(fd, (off_t)PERIOD) == 0, "ftruncate");
    uint8_t *w = mmap(NULL, PERIOD, PROT_WRITE, MAP_SHARED, fd, 0);
    TT_ASSERT(w != MAP_FAILED, "mmap");
    for (size_t i = 0; i < PERIOD; i++)
        w[i] = pat(i);
    munmap(w, PERIOD);
    size_t maplen = (len + PERIOD - 1) / PERIOD * PERIOD;
    uint8_t *base = mmap(NULL, maplen, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    TT_ASSERT(base != MAP_FAILED, "mmap of %zu bytes", maplen);
    for (size_t off = 0; off < maplen; off += PERIOD) {
        void *p = mmap(base + off, PERIOD, PROT_READ, MAP_SHARED | MAP_FIXED,
                       fd, 0);
        TT_ASSERT(p == base + off, "mmap at +%zu: %s", off, strerror(errno));
    }
    close(fd);
    *maplen_p = maplen;
    return base;
}

static void case_bigput(void)
{
    if (n < 2)
        tt_skip("needs 2 ranks");
    const size_t len = ((size_t)4 << 30) + 24, soff = 3, doff = 8;
    /* The target's block is real memory; under ASan its shadow adds 1/8.
     * Keep 2 GiB for everything else on the machine (4 GiB under ASan,
     * whose allocator and quarantine hold more). */
    long long avail = meminfo_kb("MemAvailable");
    long long need = (long long)((len + doff) / 1024) * (TT_ASAN ? 9 : 8) / 8 +
                     (TT_ASAN ? 4LL << 20 : 2LL << 20);
    int ok = avail >= need;
    TT_CHECK(telemem_allreduce(&ok, 1, TELEMEM_INT32, TELEMEM_MIN));
    if (!ok) {
        char why[160];
        snprintf(why, sizeof why, "a 4 GiB put needs %lld MiB available, "
                 "this machine has %lld MiB (MemAvailable)", need >> 10,
                 avail >> 10);
        tt_skip(why);
    }
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "calloc");
    const size_t tail = 8; /* guard bytes after the put's range */
    int rc = telemem_malloc_all(me == 1 ? len + doff + tail : 0, bases);
    if (rc == TELEMEM_ERR_NO_MEMORY)
        tt_skip("the 4 GiB target block was refused (NO_MEMORY)");
    TT_CHECK(rc);
    if (me == 1) {
        memset(bases[1], 0xee, doff);
        memset((uint8_t *)bases[1] + doff + len, 0xee, tail);
    }
    TT_CHECK(telemem_barrier());
    if (me == 0) {
        size_t maplen;
        uint8_t *src = pattern_range(len + soff, &maplen);
        double t0 = tt_now();
        TT_CHECK(telemem_put(1, (uint8_t *)bases[1] + doff, src + soff, len));
        TT_CHECK(telemem_quiet());
        double dt = tt_now() - t0;
        tt_log("bigput: %zu bytes put and quiet in %.2f s (%.2f GB/s; noisy "
               "shared machine)", len, dt, (double)len / dt * 1e-9);
        munmap(src, maplen);
    }
    TT_CHECK(telemem_barrier());
    if (me == 1) {
        const uint8_t *d = bases[1];
        for (size_t i = 0; i < tail; i++)
            TT_ASSERT(d[i] == 0xee && d[doff + len + i] == 0xee, "a guard "
                      "byte around the put's range changed");
        uint8_t *want = malloc(PERIOD);
        TT_ASSERT(want, "malloc");
        for (size_t i = 0; i < PERIOD; i++)
            want[i] = pat(i);
        /* d[doff + j] must be pat((soff + j) % PERIOD). */
        size_t j = 0;
        while (j < len) {
            size_t k = (soff + j) % PERIOD;
            size_t run = PERIOD - k < len - j ? PERIOD - k : len - j;
            if (memcmp(d + doff + j, want + k, run) != 0) {
                size_t x = 0;
                while (d[doff + j + x] == want[k + x])
                    x++;
                TT_FAIL("byte %zu of the 4 GiB put is 0x%02x, expected "
                        "0x%02x", j + x, d[doff + j + x], want[k + x]);
            }
            j += run;
        }
        free(want);
        tt_log("bigput: all %zu bytes verified", len);
    }
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(bases[me]));
    free(bases);
}

/* ---- hugealloc ----------------------------------------------------------- */

static int overcommit_mode(void)
{
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    int m = -1;
    if (f) {
        if (fscanf(f, "%d", &m) != 1)
            m = -1;
        fclose(f);
    }
    return m;
}

static void case_hugealloc(void)
{
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "calloc");
    const size_t past_va = (size_t)1 << 47; /* > x86-64 user space */
    /* Every rank asks for more than the address space. */
    TT_EXPECT(telemem_malloc_all(past_va, bases), TELEMEM_ERR_NO_MEMORY);
    /* Only the last rank does: all fail together. */
    TT_EXPECT(telemem_malloc_all(me == n - 1 ? past_va : 4096, bases),
              TELEMEM_ERR_NO_MEMORY);
    TT_EXPECT(telemem_malloc_all(me == 0 ? SIZE_MAX - 4096 : 0, bases),
              TELEMEM_ERR_NO_MEMORY);
    /* Twice RAM + swap: refused unless the kernel overcommits always
     * (vm.overcommit_memory = 1); the library never touches the block,
     * so then it is granted (and may not be touched: docs). */
    long long ram = meminfo_kb("MemTotal"), swap = meminfo_kb("SwapTotal");
    TT_ASSERT(ram > 0, "no MemTotal in /proc/meminfo");
    size_t big = (size_t)(ram + (swap > 0 ? swap : 0)) * 1024 * 2;
    int mode = overcommit_mode();
    int rc = telemem_malloc_all(me == 0 ? big : 64, bases);
    if (mode == 1) {
        TT_CHECK(rc);
        TT_CHECK(telemem_free_all(bases[me]));
        tt_log("hugealloc: overcommit mode 1: %zu bytes granted untouched",
               big);
    } else {
        TT_EXPECT(rc, TELEMEM_ERR_NO_MEMORY);
    }
    /* Nothing is left over: a normal block works. */
    TT_CHECK(telemem_malloc_all(4096, bases));
    uint64_t v = 0x1234 + (uint64_t)me, got = 0;
    int peer = (me + 1) % n;
    TT_CHECK(telemem_put(peer, bases[peer], &v, 8));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_get(me, &got, bases[me], 8));
    TT_ASSERT(got == 0x1234 + (uint64_t)((me - 1 + n) % n), "after the "
              "refused allocations: 0x%llx", (unsigned long long)got);
    TT_CHECK(telemem_free_all(bases[me]));
    free(bases);
    tt_log("hugealloc: NO_MEMORY on every rank (overcommit mode %d)", mode);
}

/* ---- handler ------------------------------------------------------------- */

enum { H_REQ = 40, H_REP = 41, H_REP_LONG = 42, H_SELF = 43 };
#define REP_BIG 100000

static uint8_t *rep_buf;   /* reply_long destination (this rank's block) */
static long reqs, reps, rep_longs, bad;
static int seen[16];       /* statuses seen inside the request handler */

static void on_req(telemem_am_token_t t, void *p, size_t b,
                   const uint32_t *a, unsigned na, void *ctx)
{
    static uint8_t big[REP_BIG];
    uint64_t x = 0;
    int k = 0;
    reqs++;
    /* Communication other than a reply is refused. */
    seen[k++] = telemem_am_request(me, H_REQ, NULL, 0, NULL, 0);
    seen[k++] = telemem_put(me, &x, &x, 8);
    seen[k++] = telemem_get(me, &x, &x, 8);
    seen[k++] = telemem_put_nbi(me, &x, &x, 8);
    seen[k++] = telemem_quiet();
    seen[k++] = telemem_fence(me);
    seen[k++] = telemem_barrier();
    seen[k++] = telemem_poll();
    void *bb[64];
    seen[k++] = n <= 64 ? telemem_malloc_all(64, bb)
                        : TELEMEM_ERR_IN_HANDLER;
    /* Which reply: a[0] = 0 short, 1 fragmented, 2 long into a[1..2]. */
    uint32_t kind = na ? a[0] : 0;
    int rc;
    if (kind == 0) {
        rc = telemem_am_reply(t, H_REP, p, b, a, na);
    } else if (kind == 1) {
        for (size_t i = 0; i < REP_BIG; i++)
            big[i] = pat(i);
        rc = telemem_am_reply(t, H_REP, big, REP_BIG, a, na);
    } else {
        uint64_t dst = (uint64_t)a[1] | (uint64_t)a[2] << 32;
        for (size_t i = 0; i < 256; i++)
            big[i] = pat(i + 7);
        rc = telemem_am_reply_long(t, H_REP_LONG, big, 256,
                                   (void *)(uintptr_t)dst, a, na);
    }
    if (rc != TELEMEM_OK)
        bad++;
    /* A second reply is refused. */
    if (telemem_am_reply(t, H_REP, NULL, 0, NULL, 0) !=
        TELEMEM_ERR_INVALID_ARG)
        bad++;
}

static void on_rep(telemem_am_token_t t, void *p, size_t b,
                   const uint32_t *a, unsigned na, void *ctx)
{
    reps++;
    if (b == REP_BIG) {
        const uint8_t *d = p;
        for (size_t i = 0; i < b; i++)
            if (d[i] != pat(i)) {
                bad++;
                break;
            }
    }
    /* A reply cannot be replied to; nor can it send requests. */
    if (telemem_am_reply(t, H_REP, NULL, 0, NULL, 0) !=
        TELEMEM_ERR_INVALID_ARG)
        bad++;
    if (telemem_am_request(0, H_REQ, NULL, 0, NULL, 0) !=
        TELEMEM_ERR_IN_HANDLER)
        bad++;
}

static void on_rep_long(telemem_am_token_t t, void *p, size_t b,
                        const uint32_t *a, unsigned na, void *ctx)
{
    rep_longs++;
    const uint8_t *d = p;
    if (p != rep_buf || b != 256)
        bad++;
    for (size_t i = 0; i < b; i++)
        if (d[i] != pat(i + 7)) {
            bad++;
            break;
        }
}

static void case_handler(void)
{
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "calloc");
    TT_CHECK(telemem_malloc_all(BLK, bases));
    rep_buf = (uint8_t *)bases[me] + 512;
    TT_CHECK(telemem_am_register(H_REQ, on_req, NULL));
    TT_CHECK(telemem_am_register(H_REP, on_rep, NULL));
    TT_CHECK(telemem_am_register(H_REP_LONG, on_rep_long, NULL));
    TT_CHECK(telemem_barrier());
    uintptr_t rb = (uintptr_t)rep_buf;
    long sent = 0;
    for (int r = 0; r < n; r++) { /* the calling rank included */
        uint32_t a0[1] = {0}, a1[1] = {1};
        uint32_t a2[3] = {2, (uint32_t)rb, (uint32_t)((uint64_t)rb >> 32)};
        uint8_t small[24];
        memset(small, 0x3c, sizeof small);
        TT_CHECK(telemem_am_request(r, H_REQ, small, sizeof small, a0, 1));
        TT_CHECK(telemem_am_request(r, H_REQ, NULL, 0, a1, 1));
        TT_CHECK(telemem_am_request(r, H_REQ, NULL, 0, a2, 3));
        sent += 3;
    }
    double t0 = tt_now();
    while ((reps < 2L * n || rep_longs < n) && tt_now() - t0 < 60)
        TT_POLL();
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    TT_ASSERT(reps == 2L * n && rep_longs == n, "%ld replies and %ld long "
              "replies, expected %d and %d", reps, rep_longs, 2 * n, n);
    TT_ASSERT(reqs == sent, "%ld requests handled, %ld sent to this rank",
              reqs, sent);
    TT_ASSERT(bad == 0, "%ld wrong results in handlers", bad);
    for (int k = 0; k < 9; k++)
        TT_ASSERT(seen[k] == TELEMEM_ERR_IN_HANDLER, "call %d inside a "
                  "handler returned %s, expected TELEMEM_ERR_IN_HANDLER", k,
                  telemem_status_name(seen[k]));
    TT_CHECK(telemem_free_all(bases[me]));
    free(bases);
    tt_log("handler: replies from handlers work, other calls refused");
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !*c) {
        printf("usage: limits zero|handles|bigput|hugealloc|handler\n"
               "  (under telemem-run -n N; see the top of limits.c)\n");
        return *c ? 0 : 2;
    }
    tt_init(&argc, &argv, "limits");
    me = tt_me;
    n = tt_n;
    if (!strcmp(c, "zero"))
        case_zero();
    else if (!strcmp(c, "handles"))
        case_handles();
    else if (!strcmp(c, "bigput"))
        case_bigput();
    else if (!strcmp(c, "hugealloc"))
        case_hugealloc();
    else if (!strcmp(c, "handler"))
        case_handler();
    else
        TT_FAIL("unknown case '%s'", c);
    tt_finalize();
    return 0;
}

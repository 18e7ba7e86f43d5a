/* gt_putget.c - GASNet's extended API: blocking, nb and nbi puts and gets
 * (plain and bulk) to every node at sizes around every threshold, with
 * guard bytes on both sides of the target and misaligned addresses; source
 * reuse right after non-bulk puts; memset in all three forms; the value
 * forms for 1..8 bytes; syncnb_all/_some and the try forms; access
 * regions; with the targets stopped (SIGSTOP), memset_nbi and gets done
 * at once where the segments are mapped here (one host, TELEMEM_DIRECT not
 * never) and try_syncnbi not ready where active messages carry them
 * (TELEMEM_DIRECT=never); and the fatal checks' happy paths (0 bytes,
 * self). */
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "gt.h"
#include "../common/proc_wait.h"

/* Each node owns one slice of every node's segment. */
#define SLICE (2u * 1024 * 1024 + 4 * GT_GUARD)
#define MAXSZ (2u * 1024 * 1024)

static gasnet_seginfo_t *seg;

static const size_t sizes[] = {0,     1,     2,     3,     4,     7,
                               8,     9,     15,    16,    17,    63,
                               64,    65,    100,   1000,  4095,  4096,
                               4097,  16319, 16320, 16383, 16384, 16385,
                               32768, 65536, 65537, 300000, 1048576,
                               MAXSZ};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum {
    OP_PUT, OP_PUT_BULK, OP_PUT_NB, OP_PUT_NB_BULK, OP_PUT_NBI,
    OP_PUT_NBI_BULK, OP_PUT_REGION, OP_MEMSET, OP_MEMSET_NB, OP_MEMSET_NBI,
    OP_COUNT
};
static const char *const op_names[] = {
    "put", "put_bulk", "put_nb", "put_nb_bulk", "put_nbi", "put_nbi_bulk",
    "put_nbi in a region", "memset", "memset_nb", "memset_nbi"};

static char *slice(int node)
{
    return (char *)seg[node].addr + (size_t)gt_me * SLICE;
}

/* Target area inside my slice at node: guards around [off, off+n). */
static void check_remote(int node, size_t off, size_t n, uint64_t key,
                         int memset_val, const char *what, uint8_t *tmp)
{
    size_t span = off + n + GT_GUARD;
    gasnet_get_bulk(tmp, (gasnet_node_t)node, slice(node), span);
    char lab[160];
    snprintf(lab, sizeof lab, "%s %zu bytes to node %d: guard before", what,
             n, node);
    if (gt_pat_check(tmp, off, key ^ GT_GUARD_SALT, lab) != 0)
        GT_FAIL("%s", lab);
    snprintf(lab, sizeof lab, "%s %zu bytes to node %d: guard after", what,
             n, node);
    if (gt_pat_check(tmp + off + n, GT_GUARD, key ^ GT_GUARD_SALT ^ 1, lab) !=
        0)
        GT_FAIL("%s", lab);
    snprintf(lab, sizeof lab, "%s %zu bytes to node %d: data", what, n, node);
    if (memset_val >= 0) {
        for (size_t i = 0; i < n; i++)
            if (tmp[off + i] != (uint8_t)memset_val)
                GT_FAIL("%s: byte %zu is 0x%02x, expected 0x%02x", lab, i,
                        tmp[off + i], (unsigned)memset_val);
    } else if (gt_pat_check(tmp + off, n, key, lab) != 0) {
        GT_FAIL("%s", lab);
    }
}

/* Guards at [0, off) and [off+n, off+n+GT_GUARD) of my slice at node. */
static void set_guards(int node, size_t off, size_t n, uint64_t key,
                       uint8_t *tmp)
{
    gt_pat_fill(tmp, off, key ^ GT_GUARD_SALT);
    gasnet_put_bulk((gasnet_node_t)node, slice(node), tmp, off);
    gt_pat_fill(tmp, GT_GUARD, key ^ GT_GUARD_SALT ^ 1);
    gasnet_put((gasnet_node_t)node, slice(node) + off + n, tmp, GT_GUARD);
}

static void one_put(int op, int node, size_t off, size_t n, uint64_t key,
                    uint8_t *src, uint8_t *tmp)
{
    gasnet_node_t nd = (gasnet_node_t)node;
    char *dst = slice(node) + off;
    int val = (int)(key & 0xff);
    set_guards(node, off, n, key, tmp);
    gt_pat_fill(src, n, key);
    gasnet_handle_t h = GASNET_INVALID_HANDLE;
    switch (op) {
    case OP_PUT:
        gasnet_put(nd, dst, src, n);
        memset(src, 0x5a, n); /* complete already */
        break;
    case OP_PUT_BULK:
        gasnet_put_bulk(nd, dst, src, n);
        break;
    case OP_PUT_NB:
        h = gasnet_put_nb(nd, dst, src, n);
        memset(src, 0x5a, n); /* non-bulk: the source is free at once */
        gasnet_wait_syncnb(h);
        break;
    case OP_PUT_NB_BULK:
        h = gasnet_put_nb_bulk(nd, dst, src, n);
        while (gasnet_try_syncnb(h) == GASNET_ERR_NOT_READY)
            ;
        break;
    case OP_PUT_NBI:
        gasnet_put_nbi(nd, dst, src, n);
        memset(src, 0x5a, n);
        gasnet_wait_syncnbi_puts();
        break;
    case OP_PUT_NBI_BULK:
        gasnet_put_nbi_bulk(nd, dst, src, n);
        while (gasnet_try_syncnbi_all() == GASNET_ERR_NOT_READY)
            ;
        break;
    case OP_PUT_REGION:
        gasnet_begin_nbi_accessregion();
        /* Two halves, non-bulk then bulk. */
        gasnet_put_nbi(nd, dst, src, n / 2);
        memset(src, 0x5a, n / 2);
        gt_pat_fill(src, n, key);
        gasnet_put_nbi_bulk(nd, dst + n / 2, src + n / 2, n - n / 2);
        h = gasnet_end_nbi_accessregion();
        if (n == 0)
            GT_ASSERT(h == GASNET_INVALID_HANDLE, "empty region handle");
        gasnet_wait_syncnb(h);
        break;
    case OP_MEMSET:
        gasnet_memset(nd, dst, val, n);
        break;
    case OP_MEMSET_NB:
        h = gasnet_memset_nb(nd, dst, val, n);
        gasnet_wait_syncnb(h);
        break;
    case OP_MEMSET_NBI:
        gasnet_memset_nbi(nd, dst, val, n);
        gasnet_wait_syncnbi_all();
        break;
    }
    check_remote(node, off, n, key,
                 op >= OP_MEMSET ? val : -1, op_names[op], tmp);
}

/* Gets of every form from node's segment into guarded local buffers. */
static void gets(int node, size_t off, size_t n, uint64_t key, uint8_t *src,
                 uint8_t *dst)
{
    gasnet_node_t nd = (gasnet_node_t)node;
    char *rem = slice(node) + off;
    gt_pat_fill(src, n, key);
    gasnet_put_bulk(nd, rem, src, n);
    static const char *const names[] = {"get", "get_bulk", "get_nb",
                                        "get_nb_bulk", "get_nbi",
                                        "get_nbi_bulk", "get in a region"};
    for (int g = 0; g < 7; g++) {
        uint8_t *d = dst + GT_GUARD + (size_t)g % 5;
        size_t before = GT_GUARD + (size_t)g % 5;
        gt_pat_fill(dst, before, key ^ 77);
        gt_pat_fill(d + n, GT_GUARD, key ^ 78);
        gasnet_handle_t h;
        switch (g) {
        case 0: gasnet_get(d, nd, rem, n); break;
        case 1: gasnet_get_bulk(d, nd, rem, n); break;
        case 2:
            h = gasnet_get_nb(d, nd, rem, n);
            gasnet_wait_syncnb(h);
            break;
        case 3: {
            gasnet_handle_t hs[3] = {GASNET_INVALID_HANDLE,
                                     gasnet_get_nb_bulk(d, nd, rem, n),
                                     GASNET_INVALID_HANDLE};
            gasnet_wait_syncnb_some(hs, 3);
            GT_ASSERT(hs[1] == GASNET_INVALID_HANDLE, "syncnb_some");
            break;
        }
        case 4:
            gasnet_get_nbi(d, nd, rem, n);
            gasnet_wait_syncnbi_gets();
            break;
        case 5:
            gasnet_get_nbi_bulk(d, nd, rem, n);
            while (gasnet_try_syncnbi_gets() == GASNET_ERR_NOT_READY)
                ;
            break;
        case 6:
            gasnet_begin_nbi_accessregion();
            gasnet_get_nbi(d, nd, rem, n);
            h = gasnet_end_nbi_accessregion();
            while (gasnet_try_syncnb(h) != GASNET_OK)
                ;
            break;
        }
        char lab[128];
        snprintf(lab, sizeof lab, "%s %zu bytes from node %d", names[g], n,
                 node);
        if (gt_pat_check(d, n, key, lab) != 0 ||
            gt_pat_check(dst, before, key ^ 77, "local guard before") != 0 ||
            gt_pat_check(d + n, GT_GUARD, key ^ 78, "local guard after") != 0)
            GT_FAIL("%s", lab);
    }
}

static void values(int node)
{
    gasnet_node_t nd = (gasnet_node_t)node;
    char *rem = slice(node) + 8;
    for (size_t n = 1; n <= SIZEOF_GASNET_REGISTER_VALUE_T; n++) {
        gasnet_register_value_t v =
            (gasnet_register_value_t)gt_key(n, (uint64_t)node, 5, 6);
        gasnet_register_value_t mask =
            n == sizeof v ? ~(gasnet_register_value_t)0
                          : (((gasnet_register_value_t)1 << (8 * n)) - 1);
        uint8_t zero[24] = {0};
        gasnet_put(nd, rem - 8, zero, 24);
        gasnet_put_val(nd, rem, v, n);
        GT_ASSERT(gasnet_get_val(nd, rem, n) == (v & mask),
                  "put_val/get_val %zu bytes", n);
        /* The bytes are those of an n-byte integer; nothing else moved. */
        uint8_t back[24];
        gasnet_get(back, nd, rem - 8, 24);
        gasnet_register_value_t got = 0;
        memcpy(&got, back + 8, n);
        GT_ASSERT(got == (v & mask) && back[7] == 0 && back[8 + n] == 0,
                  "put_val layout %zu bytes", n);
        gasnet_handle_t h = gasnet_put_nb_val(nd, rem, v ^ 0x5555, n);
        gasnet_wait_syncnb(h);
        gasnet_valget_handle_t vh = gasnet_get_nb_val(nd, rem, n);
        GT_ASSERT(gasnet_wait_syncnb_valget(vh) == ((v ^ 0x5555) & mask),
                  "put_nb_val/get_nb_val %zu bytes", n);
        gasnet_put_nbi_val(nd, rem, v ^ 0xaaaa, n);
        gasnet_wait_syncnbi_puts();
        GT_ASSERT(gasnet_get_val(nd, rem, n) == ((v ^ 0xaaaa) & mask),
                  "put_nbi_val %zu bytes", n);
    }
}

/* Many outstanding nb operations, completed with the list calls. */
static void lists(int node, uint8_t *src, uint8_t *dst)
{
    enum { K = 64, SZ = 1000 };
    gasnet_node_t nd = (gasnet_node_t)node;
    gasnet_handle_t h[K];
    for (int i = 0; i < K; i++) {
        gt_pat_fill(src + (size_t)i * SZ, SZ, gt_key(node, (uint64_t)i, 9, 9));
        h[i] = i % 2 ? gasnet_put_nb(nd, slice(node) + (size_t)i * SZ,
                                     src + (size_t)i * SZ, SZ)
                     : gasnet_put_nb_bulk(nd, slice(node) + (size_t)i * SZ,
                                          src + (size_t)i * SZ, SZ);
    }
    while (gasnet_try_syncnb_all(h, K) != GASNET_OK)
        ;
    for (int i = 0; i < K; i++)
        GT_ASSERT(h[i] == GASNET_INVALID_HANDLE, "try_syncnb_all left %d", i);
    for (int i = 0; i < K; i++)
        h[i] = gasnet_get_nb(dst + (size_t)i * SZ, nd,
                             slice(node) + (size_t)i * SZ, SZ);
    int done = 0;
    while (done < K) {
        if (gasnet_try_syncnb_some(h, K) == GASNET_OK) {
            done = 0;
            for (int i = 0; i < K; i++)
                done += h[i] == GASNET_INVALID_HANDLE;
        }
    }
    gasnet_wait_syncnb_all(h, K); /* all invalid: returns at once */
    for (int i = 0; i < K; i++)
        if (gt_pat_check(dst + (size_t)i * SZ, SZ,
                         gt_key(node, (uint64_t)i, 9, 9), "list get") != 0)
            GT_FAIL("list transfer %d from node %d", i, node);
}

/* Wait until pid is in state T (stopped) as /proc reports it. */
static void wait_stopped(int pid)
{
    char err[128];
    GT_ASSERT(tt_proc_wait_stopped(pid, err, sizeof err) == 0, "%s", err);
}

/* The other nodes stop themselves with SIGSTOP; node 0 resumes them once
 * /proc shows them stopped (no timing).  Where their segments are mapped
 * here, node 0's memset_nbi stores at once: the try_syncnbi forms report
 * GASNET_OK and gets read the bytes while the targets are stopped.  Where
 * active messages carry the memsets (TELEMEM_DIRECT=never), the
 * try_syncnbi forms report GASNET_ERR_NOT_READY, every time, while the
 * targets cannot poll, and GASNET_OK once they ran. */
static void try_nbi_stopped(void)
{
    const char *direct = getenv("TELEMEM_DIRECT");
    int mapped = !direct || strcmp(direct, "never") != 0;
    if (gt_n < 2)
        return;
    /* my slice in my own segment: this node's pid, then the put's target */
    uint64_t *mine = (uint64_t *)(void *)slice(gt_me);
    mine[0] = (uint64_t)getpid();
    mine[1] = 0;
    mine[2] = 0;
    gt_barrier();
    uint64_t *pids = calloc((size_t)gt_n, sizeof *pids);
    uint64_t *got = calloc((size_t)gt_n, sizeof *got);
    GT_ASSERT(pids && got, "calloc");
    if (gt_me == 0)
        for (int r = 1; r < gt_n; r++)
            gasnet_get(&pids[r], (gasnet_node_t)r,
                       (char *)seg[r].addr + (size_t)r * SLICE, 8);
    gt_barrier();
    if (gt_me != 0) {
        raise(SIGSTOP); /* node 0 resumes us */
    } else {
        for (int r = 1; r < gt_n; r++)
            wait_stopped((int)pids[r]);
        for (int r = 1; r < gt_n; r++) {
            uint64_t *theirs = (uint64_t *)(void *)((char *)seg[r].addr +
                                                    (size_t)r * SLICE);
            gasnet_memset_nbi((gasnet_node_t)r, &theirs[1], 0x7e, 8);
            gasnet_memset_nbi((gasnet_node_t)r, &theirs[2], 0x5c, 8);
        }
        int want = mapped ? GASNET_OK : GASNET_ERR_NOT_READY;
        for (int k = 0; k < 10; k++) {
            GT_EXPECT(gasnet_try_syncnbi_puts(), want);
            GT_EXPECT(gasnet_try_syncnbi_gets(), want);
            GT_EXPECT(gasnet_try_syncnbi_all(), want);
        }
        for (int r = 1; r < gt_n && mapped; r++) { /* still stopped */
            gasnet_get(&got[r], (gasnet_node_t)r,
                       (char *)seg[r].addr + (size_t)r * SLICE + 8, 8);
            GT_ASSERT(got[r] == 0x7e7e7e7e7e7e7e7eull,
                      "memset_nbi to stopped node %d: 0x%" PRIx64, r, got[r]);
        }
        for (int r = 1; r < gt_n; r++)
            GT_ASSERT(kill((pid_t)pids[r], SIGCONT) == 0, "SIGCONT %d: %s",
                      (int)pids[r], strerror(errno));
        while (gasnet_try_syncnbi_all() == GASNET_ERR_NOT_READY)
            ;
        for (int r = 1; r < gt_n; r++) /* complete: read them back */
            gasnet_get(&got[r], (gasnet_node_t)r,
                       (char *)seg[r].addr + (size_t)r * SLICE + 16, 8);
        for (int r = 1; r < gt_n; r++)
            GT_ASSERT(got[r] == 0x5c5c5c5c5c5c5c5cull,
                      "memset_nbi to node %d: 0x%" PRIx64, r, got[r]);
        GT_SAFE(gasnet_try_syncnbi_puts()); /* nothing outstanding */
    }
    gt_barrier();
    if (gt_me != 0) {
        GT_ASSERT(mine[1] == 0x7e7e7e7e7e7e7e7eull,
                  "memset_nbi from node 0: 0x%" PRIx64, mine[1]);
        GT_ASSERT(mine[2] == 0x5c5c5c5c5c5c5c5cull,
                  "memset_nbi from node 0: 0x%" PRIx64, mine[2]);
    }
    free(pids);
    free(got);
    gt_barrier();
}

int main(int argc, char **argv)
{
    int nodes_guess = atoi(getenv("TELEMEM_NRANKS") ? getenv("TELEMEM_NRANKS")
                                                    : "1");
    if (nodes_guess < 1)
        nodes_guess = 1;
    gt_start(&argc, &argv, "gt_putget", NULL, 0,
             (uintptr_t)SLICE * (uintptr_t)nodes_guess);
    seg = calloc((size_t)gt_n, sizeof *seg);
    GT_ASSERT(seg, "calloc");
    GT_SAFE(gasnet_getSegmentInfo(seg, gt_n));
    uint8_t *src = malloc(MAXSZ + 256), *tmp = malloc(SLICE + 256);
    GT_ASSERT(src && tmp, "malloc");

    for (int k = 0; k < gt_n; k++) {
        int node = (gt_me + k) % gt_n;
        for (size_t s = 0; s < NSIZES; s++) {
            size_t n = sizes[s];
            size_t off = GT_GUARD + (s * 5) % 13; /* misaligned targets */
            for (int op = 0; op < OP_COUNT; op++) {
                /* Large sizes: a subset of forms keeps the run short. */
                if (n > 70000 && op % 3 != (int)(s % 3))
                    continue;
                uint64_t key = gt_key((uint64_t)gt_me, (uint64_t)node,
                                      (uint64_t)op, n);
                one_put(op, node, off, n, key, src + (s % 7), tmp);
            }
            gets(node, off, n, gt_key((uint64_t)gt_me, (uint64_t)node, 99, n),
                 src + 1, tmp);
        }
        values(node);
        lists(node, src, tmp);
    }
    try_nbi_stopped();
    /* Blocking ops of 0 bytes and gets/puts with self are fine anywhere. */
    gasnet_put((gasnet_node_t)gt_me, slice(gt_me), NULL, 0);
    gasnet_get(NULL, (gasnet_node_t)gt_me, slice(gt_me), 0);
    GT_ASSERT(gasnet_put_nb((gasnet_node_t)gt_me, slice(gt_me), src, 0) ==
              GASNET_INVALID_HANDLE, "0-byte put_nb");
    gasnet_wait_syncnb(GASNET_INVALID_HANDLE);
    GT_SAFE(gasnet_try_syncnb(GASNET_INVALID_HANDLE));
    gasnet_wait_syncnb_all(NULL, 0);
    GT_SAFE(gasnet_try_syncnb_some(NULL, 0));
    free(src);
    free(tmp);
    free(seg);
    gt_finish("gt_putget");
    return 0;
}

/* gt_am.c - GASNet active messages: Short, Medium, Long and LongAsync
 * requests and their replies with 0..16 arguments to every node (itself
 * included), Medium payloads from 0 to gasnet_AMMaxMedium(), checksummed
 * Long payloads from 0 to the maximum written into the segment and echoed
 * back by Long replies, a request/reply ping-pong, the message source, and
 * the argument checks of the request calls. */
#include <gasnet_tools.h>

#include "gt.h"

enum { K_REQ_SHORT, K_REP_SHORT, K_REQ_MED, K_REP_MED, K_REQ_LONG, K_REP_LONG,
       K_COUNT };
#define IDX(kind, m) (128 + (kind) * 17 + (m))
#define PING_IDX 240
#define PONG_IDX 241

/* Room in the segment for one Long: the largest of long_sizes, which go
 * past the 4 MiB that gasnet_AMMaxLongRequest() was until 2026-11-29
 * (GASNet-1's smp-conduit allows 2 GiB - 1, and clients send more). */
#define LONGSLOT ((size_t)9 << 20)

static gasnet_seginfo_t *seg;
static volatile int replies, pongs;
static int errors;

/* Argument i of a message of kind from node src with m arguments and
 * nbytes of payload. */
static gasnet_handlerarg_t argval(int kind, int src, int m, size_t nbytes,
                                  int i)
{
    return (gasnet_handlerarg_t)(uint32_t)gt_key((uint64_t)kind,
                                                 (uint64_t)src,
                                                 (uint64_t)m * 1000003u +
                                                     nbytes,
                                                 (uint64_t)i);
}

/* Payload of a message from requester to target (both directions). */
static uint64_t paykey(int requester, int target, int m, size_t nbytes)
{
    return gt_key(0xa11ull + (uint64_t)requester, (uint64_t)target,
                  (uint64_t)m, nbytes);
}

/* Where requester's Long request lands at target, and the echo at the
 * requester. */
static void *long_slot(int target, int requester)
{
    return (char *)seg[target].addr + (size_t)requester * LONGSLOT;
}
static void *reply_slot(int requester, int target)
{
    return (char *)seg[requester].addr + (size_t)(gt_n + target) * LONGSLOT;
}

static void fill_args(gasnet_handlerarg_t *v, int kind, int src, int m,
                      size_t nbytes, const void *payload)
{
    for (int i = 0; i < m; i++)
        v[i] = argval(kind, src, m, nbytes, i);
    if ((kind == K_REQ_LONG || kind == K_REP_LONG) && m >= 2) {
        uint64_t c = gasnett_checksum(payload, (int)nbytes);
        v[0] = (gasnet_handlerarg_t)(uint32_t)c;
        v[1] = (gasnet_handlerarg_t)(uint32_t)(c >> 32);
    }
}

/* ---- sending with m arguments from a vector ------------------------------ */

#define CL_0
#define CL_1 , v[0]
#define CL_2 CL_1, v[1]
#define CL_3 CL_2, v[2]
#define CL_4 CL_3, v[3]
#define CL_5 CL_4, v[4]
#define CL_6 CL_5, v[5]
#define CL_7 CL_6, v[6]
#define CL_8 CL_7, v[7]
#define CL_9 CL_8, v[8]
#define CL_10 CL_9, v[9]
#define CL_11 CL_10, v[10]
#define CL_12 CL_11, v[11]
#define CL_13 CL_12, v[12]
#define CL_14 CL_13, v[13]
#define CL_15 CL_14, v[14]
#define CL_16 CL_15, v[15]

#define ALL_M(X)                                                            \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)     \
    X(13) X(14) X(15) X(16)

/* kind K_REQ_*: request to dest; K_REP_*: reply on token t. */
static int send_msg(int kind, gasnet_node_t dest, gasnet_token_t t, int m,
                    void *buf, size_t nbytes, void *dst_addr, int async,
                    const gasnet_handlerarg_t *v)
{
    int h = IDX(kind, m);
    switch (kind * 17 + m) {
#define REQ_SHORT_CASE(M)                                                   \
    case K_REQ_SHORT * 17 + M:                                              \
        return gasnet_AMRequestShort##M(dest, h CL_##M);
#define REP_SHORT_CASE(M)                                                   \
    case K_REP_SHORT * 17 + M:                                              \
        return gasnet_AMReplyShort##M(t, h CL_##M);
#define REQ_MED_CASE(M)                                                     \
    case K_REQ_MED * 17 + M:                                                \
        return gasnet_AMRequestMedium##M(dest, h, buf, nbytes CL_##M);
#define REP_MED_CASE(M)                                                     \
    case K_REP_MED * 17 + M:                                                \
        return gasnet_AMReplyMedium##M(t, h, buf, nbytes CL_##M);
#define REQ_LONG_CASE(M)                                                    \
    case K_REQ_LONG * 17 + M:                                               \
        return async ? gasnet_AMRequestLongAsync##M(dest, h, buf, nbytes,    \
                                                    dst_addr CL_##M)        \
                     : gasnet_AMRequestLong##M(dest, h, buf, nbytes,        \
                                               dst_addr CL_##M);
#define REP_LONG_CASE(M)                                                    \
    case K_REP_LONG * 17 + M:                                               \
        return gasnet_AMReplyLong##M(t, h, buf, nbytes, dst_addr CL_##M);
        ALL_M(REQ_SHORT_CASE)
        ALL_M(REP_SHORT_CASE)
        ALL_M(REQ_MED_CASE)
        ALL_M(REP_MED_CASE)
        ALL_M(REQ_LONG_CASE)
        ALL_M(REP_LONG_CASE)
    }
    GT_FAIL("bad kind %d / m %d", kind, m);
}

/* ---- handlers ------------------------------------------------------------ */

static void bad(const char *what, int kind, int m, int src, size_t n)
{
    fprintf(stderr, "[gt r%d] FAIL: %s (kind %d, %d args, from node %d, %zu "
            "bytes)\n", gt_me, what, kind, m, src, n);
    errors++;
}

static void on_msg(int kind, int m, gasnet_token_t t, void *buf, size_t n,
                   const gasnet_handlerarg_t *a)
{
    gasnet_node_t srcn = 0;
    if (gasnet_AMGetMsgSource(t, &srcn) != GASNET_OK) {
        bad("gasnet_AMGetMsgSource", kind, m, -1, n);
        return;
    }
    int src = (int)srcn;
    /* The payload, where it must be and what it must hold. */
    int requester = kind % 2 == 0 ? src : gt_me;
    int target = kind % 2 == 0 ? gt_me : src;
    if (kind == K_REQ_MED || kind == K_REP_MED || kind == K_REQ_LONG ||
        kind == K_REP_LONG) {
        if (kind == K_REQ_LONG && n && buf != long_slot(gt_me, src))
            bad("Long request buf is not dest_addr", kind, m, src, n);
        if (kind == K_REP_LONG && n && buf != reply_slot(gt_me, src))
            bad("Long reply buf is not dest_addr", kind, m, src, n);
        if (n && ((uintptr_t)buf & 7) && kind == K_REQ_MED)
            bad("Medium payload not 8-byte aligned", kind, m, src, n);
        if (n && gt_pat_check(buf, n, paykey(requester, target, m, n),
                              "payload") != 0)
            bad("payload corrupt", kind, m, src, n);
    }
    gasnet_handlerarg_t want[16];
    fill_args(want, kind, src, m, n, buf);
    for (int i = 0; i < m; i++)
        if (a[i] != want[i]) {
            bad("argument differs", kind, m, src, n);
            break;
        }
    /* Requests reply with the same kind; replies count. */
    if (kind % 2 == 1) {
        replies++;
        return;
    }
    gasnet_handlerarg_t v[16] = {0};
    void *dst = kind == K_REQ_LONG ? reply_slot(src, gt_me) : NULL;
    fill_args(v, kind + 1, gt_me, m, n, buf);
    int rc = send_msg(kind + 1, 0, t, m, buf, n, dst, 0, v);
    if (rc != GASNET_OK)
        bad("reply failed", kind, m, src, n);
}

#define PL_0
#define PL_1 , gasnet_handlerarg_t a0
#define PL_2 PL_1, gasnet_handlerarg_t a1
#define PL_3 PL_2, gasnet_handlerarg_t a2
#define PL_4 PL_3, gasnet_handlerarg_t a3
#define PL_5 PL_4, gasnet_handlerarg_t a4
#define PL_6 PL_5, gasnet_handlerarg_t a5
#define PL_7 PL_6, gasnet_handlerarg_t a6
#define PL_8 PL_7, gasnet_handlerarg_t a7
#define PL_9 PL_8, gasnet_handlerarg_t a8
#define PL_10 PL_9, gasnet_handlerarg_t a9
#define PL_11 PL_10, gasnet_handlerarg_t a10
#define PL_12 PL_11, gasnet_handlerarg_t a11
#define PL_13 PL_12, gasnet_handlerarg_t a12
#define PL_14 PL_13, gasnet_handlerarg_t a13
#define PL_15 PL_14, gasnet_handlerarg_t a14
#define PL_16 PL_15, gasnet_handlerarg_t a15
#define AL_0
#define AL_1 , a0
#define AL_2 AL_1, a1
#define AL_3 AL_2, a2
#define AL_4 AL_3, a3
#define AL_5 AL_4, a4
#define AL_6 AL_5, a5
#define AL_7 AL_6, a6
#define AL_8 AL_7, a7
#define AL_9 AL_8, a8
#define AL_10 AL_9, a9
#define AL_11 AL_10, a10
#define AL_12 AL_11, a11
#define AL_13 AL_12, a12
#define AL_14 AL_13, a13
#define AL_15 AL_14, a14
#define AL_16 AL_15, a15

#define DEF_SHORT(K, M)                                                     \
    static void h_##K##_##M(gasnet_token_t t PL_##M)                        \
    {                                                                       \
        gasnet_handlerarg_t a[17] = {0 AL_##M};                             \
        on_msg(K, M, t, NULL, 0, a + 1);                                    \
    }
#define DEF_MED(K, M)                                                       \
    static void h_##K##_##M(gasnet_token_t t, void *buf, size_t n PL_##M)   \
    {                                                                       \
        gasnet_handlerarg_t a[17] = {0 AL_##M};                             \
        on_msg(K, M, t, buf, n, a + 1);                                     \
    }
#define DEF_REQ_SHORT(M) DEF_SHORT(K_REQ_SHORT, M)
#define DEF_REP_SHORT(M) DEF_SHORT(K_REP_SHORT, M)
#define DEF_REQ_MED(M) DEF_MED(K_REQ_MED, M)
#define DEF_REP_MED(M) DEF_MED(K_REP_MED, M)
#define DEF_REQ_LONG(M) DEF_MED(K_REQ_LONG, M)
#define DEF_REP_LONG(M) DEF_MED(K_REP_LONG, M)
ALL_M(DEF_REQ_SHORT)
ALL_M(DEF_REP_SHORT)
ALL_M(DEF_REQ_MED)
ALL_M(DEF_REP_MED)
ALL_M(DEF_REQ_LONG)
ALL_M(DEF_REP_LONG)

static void h_ping(gasnet_token_t t, gasnet_handlerarg_t i)
{
    if (gasnet_AMReplyShort1(t, PONG_IDX, i + 1) != GASNET_OK)
        errors++;
}
static void h_pong(gasnet_token_t t, gasnet_handlerarg_t i)
{
    if (i != pongs + 1)
        errors++;
    pongs = i;
}

#define ENTRY(K, M) {IDX(K, M), h_##K##_##M},
#define E_REQ_SHORT(M) ENTRY(K_REQ_SHORT, M)
#define E_REP_SHORT(M) ENTRY(K_REP_SHORT, M)
#define E_REQ_MED(M) ENTRY(K_REQ_MED, M)
#define E_REP_MED(M) ENTRY(K_REP_MED, M)
#define E_REQ_LONG(M) ENTRY(K_REQ_LONG, M)
#define E_REP_LONG(M) ENTRY(K_REP_LONG, M)
static gasnet_handlerentry_t table[] = {
    ALL_M(E_REQ_SHORT) ALL_M(E_REP_SHORT) ALL_M(E_REQ_MED)
    ALL_M(E_REP_MED) ALL_M(E_REQ_LONG) ALL_M(E_REP_LONG)
    {PING_IDX, h_ping},
    {PONG_IDX, h_pong},
};

/* ---- the test ------------------------------------------------------------ */

static void expect_replies(int want, const char *what)
{
    gt_wait_ge(&replies, want, 120, what);
    GT_ASSERT(errors == 0, "%d handler errors (%s)", errors, what);
}

static const size_t med_sizes[] = {0, 1, 7, 8, 63, 64, 1000, 4096, 16383,
                                   16384, 16385, 32768, 65535, 65536};
static const size_t long_sizes[] = {0,       1,       8,       4095,
                                    4097,    16384,   16385,   65536,
                                    1048579, 4194304, 4194305, 8388611};

int main(int argc, char **argv)
{
    size_t ntable = sizeof table / sizeof table[0];
    /* Long slots: one per requester plus one per replier, LONGSLOT each. */
    int nodes_guess = atoi(getenv("TELEMEM_NRANKS") ? getenv("TELEMEM_NRANKS")
                                                    : "1");
    if (nodes_guess < 1)
        nodes_guess = 1;
    gt_start(&argc, &argv, "gt_am", table, (int)ntable,
             2 * (uintptr_t)nodes_guess * LONGSLOT);
    GT_ASSERT(nodes_guess == gt_n, "TELEMEM_NRANKS %d, nodes %d",
              nodes_guess, gt_n);
    seg = calloc((size_t)gt_n, sizeof *seg);
    GT_ASSERT(seg, "calloc");
    GT_SAFE(gasnet_getSegmentInfo(seg, gt_n));
    uint8_t *buf = malloc(LONGSLOT + 64);
    GT_ASSERT(buf, "malloc");
    gasnet_handlerarg_t v[16] = {0};
    int sent = 0;

    for (int k = 0; k < gt_n; k++) {
        gasnet_node_t dest = (gasnet_node_t)((gt_me + k) % gt_n);
        /* Short, 0..16 arguments. */
        for (int m = 0; m <= 16; m++) {
            fill_args(v, K_REQ_SHORT, gt_me, m, 0, NULL);
            GT_SAFE(send_msg(K_REQ_SHORT, dest, NULL, m, NULL, 0, NULL, 0, v));
            sent++;
        }
        expect_replies(sent, "Short replies");
        /* Medium, every size with every argument count. */
        for (size_t s = 0; s < sizeof med_sizes / sizeof *med_sizes; s++) {
            size_t n = med_sizes[s];
            for (int m = 0; m <= 16; m++) {
                /* An odd offset: the source need not be aligned. */
                uint8_t *src = buf + (m & 7);
                gt_pat_fill(src, n, paykey(gt_me, (int)dest, m, n));
                fill_args(v, K_REQ_MED, gt_me, m, n, src);
                GT_SAFE(send_msg(K_REQ_MED, dest, NULL, m, src, n, NULL, 0,
                                 v));
                /* The source may be reused at once. */
                memset(src, 0xee, n);
                sent++;
            }
        }
        expect_replies(sent, "Medium replies");
        /* Long and LongAsync: checksummed, one round trip each. */
        for (size_t s = 0; s < sizeof long_sizes / sizeof *long_sizes; s++) {
            size_t n = long_sizes[s];
            int ms[3] = {(int)(s % 17), 16, 2};
            for (int j = 0; j < 3; j++) {
                int m = ms[j];
                uint8_t *src = buf + 3;
                gt_pat_fill(src, n, paykey(gt_me, (int)dest, m, n));
                fill_args(v, K_REQ_LONG, gt_me, m, n, src);
                GT_SAFE(send_msg(K_REQ_LONG, dest, NULL, m, src, n,
                                 long_slot((int)dest, gt_me), j == 1, v));
                sent++;
                expect_replies(sent, "Long replies");
            }
        }
    }
    gt_barrier();
    if (gt_me == 0)
        gt_log("Short/Medium/Long with 0..16 args to every node: %d round "
               "trips each", sent);

    /* Ping-pong with the next node. */
    gasnet_node_t peer = (gasnet_node_t)((gt_me + 1) % gt_n);
    double t0 = gt_now();
    for (int i = 0; i < 2000; i++) {
        GT_SAFE(gasnet_AMRequestShort1(peer, PING_IDX, i));
        GASNET_BLOCKUNTIL(pongs == i + 1);
    }
    GT_ASSERT(errors == 0, "ping-pong errors");
    if (gt_me == 0)
        gt_log("2000 Short ping-pongs in %.3f s", gt_now() - t0);
    gt_barrier();

    /* Argument checks. */
    GT_EXPECT(gasnet_AMRequestMedium0(peer, IDX(K_REQ_MED, 0), buf,
                                      gasnet_AMMaxMedium() + 1),
              GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_AMRequestShort0((gasnet_node_t)gt_n, IDX(K_REQ_SHORT, 0)),
              GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_AMRequestShort0(peer, 5), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_AMRequestMedium0(peer, IDX(K_REQ_MED, 0), NULL, 8),
              GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_AMRequestLong0(peer, IDX(K_REQ_LONG, 0), buf, 8,
                                    (char *)seg[peer].addr +
                                        seg[peer].size - 4),
              GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_AMRequestLong0(peer, IDX(K_REQ_LONG, 0), buf,
                                    gasnet_AMMaxLongRequest() + 1,
                                    seg[peer].addr),
              GASNET_ERR_BAD_ARG);
    gasnet_node_t src;
    GT_EXPECT(gasnet_AMGetMsgSource(NULL, &src), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnetc_AMRequestShortM(peer, IDX(K_REQ_SHORT, 0), 17, v),
              GASNET_ERR_BAD_ARG);
    free(buf);
    free(seg);
    gt_finish("gt_am");
    return 0;
}

/* gt_variadic.c - the variadic active-message forms
 * (gasnet_AMRequestShort(dest, handler, numargs, ...) and the Medium, Long,
 * LongAsync and reply forms) with 0..16 arguments to every node, each
 * argument and payload checked, beside the numbered forms. */
#include "gt.h"

#define H_SHORT 201
#define H_MEDIUM 202
#define H_LONG 203
#define H_REPLY 204

static volatile int replies;
static volatile int bad;

static int32_t argval(int node, int nargs, int i)
{
    return (int32_t)gt_key((uint64_t)node, (uint64_t)nargs, (uint64_t)i, 9);
}

/* Every handler takes the maximum; the extra ones are not looked at. */
#define ARGS16                                                              \
    gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, \
        gasnet_handlerarg_t a3, gasnet_handlerarg_t a4,                     \
        gasnet_handlerarg_t a5, gasnet_handlerarg_t a6,                     \
        gasnet_handlerarg_t a7, gasnet_handlerarg_t a8,                     \
        gasnet_handlerarg_t a9, gasnet_handlerarg_t a10,                    \
        gasnet_handlerarg_t a11, gasnet_handlerarg_t a12,                   \
        gasnet_handlerarg_t a13, gasnet_handlerarg_t a14,                   \
        gasnet_handlerarg_t a15

/* The request carries (nargs, arg1..); arg0 is nargs. */
static void check_args(gasnet_token_t tok, const gasnet_handlerarg_t *a)
{
    gasnet_node_t src;
    gasnet_AMGetMsgSource(tok, &src);
    int n = a[0];
    for (int i = 1; i < n; i++)
        if (a[i] != argval((int)src, n, i))
            bad++;
}

#define UNPACK                                                              \
    gasnet_handlerarg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7,            \
                                 a8, a9, a10, a11, a12, a13, a14, a15}

static void h_short(gasnet_token_t tok, ARGS16)
{
    UNPACK;
    check_args(tok, a);
    gasnet_AMReplyShort(tok, H_REPLY, 2, a[0], 1);
}

static void h_medium(gasnet_token_t tok, void *buf, size_t n, ARGS16)
{
    UNPACK;
    check_args(tok, a);
    gasnet_node_t src;
    gasnet_AMGetMsgSource(tok, &src);
    if (gt_pat_check(buf, n, gt_key(src, 1, 0, 0), "medium") != 0)
        bad++;
    gasnet_AMReplyMedium(tok, H_REPLY, buf, n, 2, a[0], 2);
}

static void h_long(gasnet_token_t tok, void *buf, size_t n, ARGS16)
{
    UNPACK;
    check_args(tok, a);
    gasnet_node_t src;
    gasnet_AMGetMsgSource(tok, &src);
    if (gt_pat_check(buf, n, gt_key(src, 2, 0, 0), "long") != 0)
        bad++;
    gasnet_AMReplyShort(tok, H_REPLY, 1, a[0]);
}

static void h_reply(gasnet_token_t tok, ARGS16)
{
    (void)tok;
    replies++;
}

static gasnet_handlerentry_t table[] = {
    {H_SHORT, h_short},
    {H_MEDIUM, h_medium},
    {H_LONG, h_long},
    {H_REPLY, h_reply},
};

/* A request of form f with n arguments (arg0 = n) to node d. */
static void send(int f, gasnet_node_t d, int n, void *buf, size_t len,
                 void *dst)
{
    gasnet_handlerarg_t v[16];
    v[0] = n;
    for (int i = 1; i < 16; i++)
        v[i] = argval(gt_me, n, i);
#define V16 v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], \
            v[10], v[11], v[12], v[13], v[14], v[15]
    /* numargs is n: the callee reads only n of the 16 passed. */
    switch (f) {
    case 0:
        GT_SAFE(gasnet_AMRequestShort(d, H_SHORT, n, V16));
        break;
    case 1:
        GT_SAFE(gasnet_AMRequestMedium(d, H_MEDIUM, buf, len, n, V16));
        break;
    case 2:
        GT_SAFE(gasnet_AMRequestLong(d, H_LONG, buf, len, dst, n, V16));
        break;
    default:
        GT_SAFE(gasnet_AMRequestLongAsync(d, H_LONG, buf, len, dst, n, V16));
        break;
    }
}

int main(int argc, char **argv)
{
    const size_t len = 4096;
    gt_start(&argc, &argv, "gt_variadic", table, 4,
             len * (size_t)64);
    uint8_t *med = malloc(len), *lng = malloc(len);
    GT_ASSERT(med && lng, "malloc");
    gt_pat_fill(med, len, gt_key((uint64_t)gt_me, 1, 0, 0));
    gt_pat_fill(lng, len, gt_key((uint64_t)gt_me, 2, 0, 0));
    int want = 0;
    for (int f = 0; f < 4; f++)
        for (int n = 1; n <= 16; n++)
            for (int d = 0; d < gt_n; d++) {
                gasnet_seginfo_t s = gt_seg(d);
                void *dst = (char *)s.addr + (size_t)gt_me * len;
                send(f, (gasnet_node_t)d, n, f == 1 ? med : lng,
                     (size_t)(n * 200) % len, dst);
                want++;
                gt_wait_ge(&replies, want, 60, "replies");
            }
    gt_barrier();
    GT_ASSERT(bad == 0, "%d bad arguments or payloads", bad);
    free(med);
    free(lng);
    gt_finish("gt_variadic");
    return 0;
}

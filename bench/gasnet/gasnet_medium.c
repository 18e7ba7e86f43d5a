/* gasnet_medium.c - telemem-gasnet-medium: AM Medium latency and flood
 * rate between nodes 0 and 1, 8 B to 63 KiB, written only
 * against GASNet-1's gasnet.h, so that the same source builds with any
 * GASNet's makefile fragment (Telemem's telemem-<model>.mak, a real
 * GASNet's smp-<model>.mak: scripts/bench-gasnet.sh --tests medium).
 *
 *   telemem-run -n 2 telemem-gasnet-medium [iterations]
 *
 * Sizes double from 8 B to 32 KiB, then 48 and 63 KiB, up to
 * gasnet_AMMaxMedium() (65536 in Telemem's layer, 65416 in GASNet-EX
 * 2025.8's smp-conduit).
 * Node 0 prints one line per figure in the format of GASNet's testam
 * ("0: <what> <size> bytes: <s> sec <us> us"), the time per operation:
 * a ping-pong (Medium request, the handler replies with a Medium of the
 * same payload, GASNET_BLOCKUNTIL for the reply) and a flood (requests
 * in a row, each answered by a Short; the time per request once every
 * reply is in). */
#define GB_PROG "telemem-gasnet-medium"
#include "gasnet_only.h"

#define H_PING 201
#define H_PONG 202
#define H_FLOOD 203
#define H_ACK 204

static volatile long pongs, acks;

static void h_ping(gasnet_token_t t, void *buf, size_t n)
{
    gasnet_AMReplyMedium0(t, H_PONG, buf, n);
}

static void h_pong(gasnet_token_t t, void *buf, size_t n)
{
    (void)t, (void)buf, (void)n;
    pongs++;
}

static void h_flood(gasnet_token_t t, void *buf, size_t n)
{
    (void)buf, (void)n;
    gasnet_AMReplyShort0(t, H_ACK);
}

static void h_ack(gasnet_token_t t)
{
    (void)t;
    acks++;
}

int main(int argc, char **argv)
{
    gasnet_handlerentry_t table[] = {
        {H_PING, h_ping}, {H_PONG, h_pong}, {H_FLOOD, h_flood}, {H_ACK, h_ack}};
    gb_check(gasnet_init(&argc, &argv), "gasnet_init");
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        if (gasnet_mynode() == 0)
            printf(
                "usage: telemem-run -n 2 telemem-gasnet-medium "
                "[iterations]\nAM Medium ping-pong and flood, 8 B to 63 KiB, "
                "nodes 0 and 1.\n");
        gasnet_exit(0);
    }
    long iters = argc > 1 ? atol(argv[1]) : 2000;
    if (iters < 1) {
        fprintf(stderr, "telemem-gasnet-medium: iterations must be "
                        "positive\n");
        gasnet_exit(2);
    }
    gb_check(gasnet_attach(table, 4, GASNET_PAGESIZE, 0), "gasnet_attach");
    if (gasnet_nodes() < 2) {
        fprintf(stderr, "telemem-gasnet-medium: needs 2 nodes\n");
        gasnet_exit(77);
    }
    int me = (int)gasnet_mynode();
    size_t max = gasnet_AMMaxMedium();
    char *buf = calloc(1, max);
    if (!buf)
        gb_check(GASNET_ERR_RESOURCE, "calloc");
    /* 8 B to 32 KiB doubling, then 48 KiB and 63 KiB. */
    static const size_t sizes[] = {8,    16,    32,    64,    128,
                                   256,  512,   1024,  2048,  4096,
                                   8192, 16384, 32768, 49152, 64512};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t size = sizes[k];
        if (size > max)
            break;
        gb_barrier();
        if (me == 0) {
            long n = iters / 10 + 1; /* warm-up, then the timed run */
            for (int timed = 0; timed < 2; timed++, n = iters) {
                double t0 = gb_now();
                for (long i = 0; i < n; i++) {
                    long want = pongs + 1;
                    gb_check(gasnet_AMRequestMedium0(1, H_PING, buf, size),
                             "gasnet_AMRequestMedium0");
                    GASNET_BLOCKUNTIL(pongs >= want);
                }
                if (timed)
                    gb_report("AMMedium ping-pong", size, gb_now() - t0, n);
            }
            n = iters / 10 + 1;
            for (int timed = 0; timed < 2; timed++, n = iters) {
                long want = acks + n;
                double t0 = gb_now();
                for (long i = 0; i < n; i++)
                    gb_check(gasnet_AMRequestMedium0(1, H_FLOOD, buf, size),
                             "gasnet_AMRequestMedium0");
                GASNET_BLOCKUNTIL(acks >= want);
                if (timed)
                    gb_report("AMMedium flood", size, gb_now() - t0, n);
            }
        }
        gb_barrier();
    }
    free(buf);
    gasnet_exit(0);
    return 0;
}

/* gasnet_ampp.c - telemem-gasnet-ampp: AM Short (and Medium) round-trip
 * latency between ranks 0 and 1, through gasnet.h (request, handler
 * replies, GASNET_BLOCKUNTIL) and the same exchange straight through
 * telemem.h (telemem_am_request / _reply / telemem_poll), alternating in
 * one run; prints medians and the gasnet/telemem ratio as CSV. */
#include "bench_gasnet.h"

#define H_PING 200
#define H_PONG 201
#define H_MPING 202
#define H_MPONG 203

static volatile long pongs;

static void g_ping(gasnet_token_t t)
{
    gasnet_AMReplyShort0(t, H_PONG);
}
static void g_pong(gasnet_token_t t)
{
    pongs++;
}
static void g_mping(gasnet_token_t t, void *buf, size_t n)
{
    gasnet_AMReplyMedium0(t, H_MPONG, buf, n);
}
static void g_mpong(gasnet_token_t t, void *buf, size_t n)
{
    pongs++;
}

static void t_ping(telemem_am_token_t tok, void *payload, size_t bytes,
                   const uint32_t *args, unsigned nargs, void *ctx)
{
    telemem_am_reply(tok, BG_T_PONG, payload, bytes, NULL, 0);
}
static void t_pong(telemem_am_token_t tok, void *payload, size_t bytes,
                   const uint32_t *args, unsigned nargs, void *ctx)
{
    pongs++;
}

/* One timed phase on rank 0: iters round trips of size bytes (0 = Short);
 * returns microseconds per round trip. */
static double phase(int use_gasnet, size_t size, long iters, char *buf)
{
    double t0 = bg_now();
    for (long i = 0; i < iters; i++) {
        long want = pongs + 1;
        if (use_gasnet) {
            int rc = size ? gasnet_AMRequestMedium0(1, H_MPING, buf, size)
                          : gasnet_AMRequestShort0(1, H_PING);
            if (rc != GASNET_OK)
                bg_die("gasnet request", rc);
            GASNET_BLOCKUNTIL(pongs >= want);
        } else {
            int rc = telemem_am_request(1, BG_T_PING, size ? buf : NULL, size,
                                        NULL, 0);
            if (rc != TELEMEM_OK)
                bg_die("telemem_am_request", rc);
            bg_tpoll_until(&pongs, want);
        }
    }
    return (bg_now() - t0) * 1e6 / (double)iters;
}

int main(int argc, char **argv)
{
    bg_opts_t o;
    gasnet_handlerentry_t table[] = {{H_PING, g_ping},
                                     {H_PONG, g_pong},
                                     {H_MPING, g_mping},
                                     {H_MPONG, g_mpong},
                                     {BG_H_DONE, bg_done_handler}};
    if (gasnet_init(&argc, &argv) != GASNET_OK)
        return 1;
    bg_opts(argc, argv, &o);
    if (gasnet_attach(table, 5, 0, 0) != GASNET_OK)
        gasnet_exit(1);
    if (gasnet_nodes() < 2) {
        fprintf(stderr, "telemem-gasnet-ampp: needs 2 ranks "
                "(telemem-run -n 2)\n");
        gasnet_exit(77);
    }
    int me = (int)gasnet_mynode();
    if (telemem_am_register(BG_T_PING, t_ping, NULL) != TELEMEM_OK ||
        telemem_am_register(BG_T_PONG, t_pong, NULL) != TELEMEM_OK)
        bg_die("telemem_am_register", -1);
    bg_barrier();
    static char buf[4096];
    const size_t sizes[] = {0, 8, 1024, 4096};
    const int nsizes = o.quick ? 2 : 4;
    double *g = calloc((size_t)o.rounds, sizeof *g);
    double *t = calloc((size_t)o.rounds, sizeof *t);
    double *r = calloc((size_t)o.rounds, sizeof *r);
    if (me == 0)
        bg_header("telemem-gasnet-ampp: AM round trip, rank 0 <-> rank 1",
                  &o);
    if (me == 0)
        printf("metric,bytes,gasnet_us,telemem_us,ratio,gasnet_p10,"
               "telemem_p10\n");
    for (int s = 0; s < nsizes; s++) {
        size_t size = sizes[s];
        for (int round = -1; round < o.rounds; round++) {
            /* round -1 warms up; ABBA order cancels drift. */
            for (int k = 0; k < 2; k++) {
                int use_gasnet = (k == 0) == (round % 2 == 0);
                bg_barrier();
                if (me == 0) {
                    double us = phase(use_gasnet, size,
                                      round < 0 ? o.iters / 10 + 1 : o.iters,
                                      buf);
                    if (round >= 0)
                        (use_gasnet ? g : t)[round] = us;
                    bg_end_phase();
                } else if (me == 1) {
                    bg_serve();
                }
            }
            if (me == 0 && round >= 0)
                r[round] = g[round] / t[round];
        }
        if (me == 0) {
            double rr = bg_median(r, o.rounds);
            double gm = bg_median(g, o.rounds), tm = bg_median(t, o.rounds);
            printf("%s,%zu,%.4f,%.4f,%.3f,%.4f,%.4f\n",
                   size ? "am_medium_rtt" : "am_short_rtt", size, gm, tm, rr,
                   bg_p10(g, o.rounds), bg_p10(t, o.rounds));
            fflush(stdout);
        }
    }
    free(g);
    free(t);
    free(r);
    bg_barrier();
    gasnet_exit(0);
}

/* gasnet_amrt.c - telemem-gasnet-amrt-seq and -par: the same AM Short
 * round trip (rank 0 requests, rank 1's handler replies, rank 0 waits with
 * GASNET_BLOCKUNTIL) built with GASNET_SEQ and with GASNET_PAR, one client
 * thread each; bench/gasnet/amrt-seq-par.sh runs them alternately and
 * compares.  Prints the median round trip over the rounds. */
#include "bench_gasnet.h"

#define H_PING 201
#define H_PONG 202

static volatile long pongs;

static void h_ping(gasnet_token_t tok)
{
    gasnet_AMReplyShort0(tok, H_PONG);
}

static void h_pong(gasnet_token_t tok)
{
    (void)tok;
    pongs++;
}

int main(int argc, char **argv)
{
    bg_opts_t o;
    gasnet_handlerentry_t table[] = {{BG_H_DONE, bg_done_handler},
                                     {H_PING, h_ping},
                                     {H_PONG, h_pong}};
    if (gasnet_init(&argc, &argv) != GASNET_OK)
        return 1;
    bg_opts(argc, argv, &o);
    if (gasnet_attach(table, 3, GASNET_PAGESIZE, 0) != GASNET_OK)
        gasnet_exit(1);
    if (gasnet_nodes() < 2) {
        fprintf(stderr, "telemem-gasnet-amrt: needs 2 ranks\n");
        gasnet_exit(77);
    }
    int me = (int)gasnet_mynode();
    double *us = calloc((size_t)o.rounds, sizeof *us);
    for (int round = -1; round < o.rounds; round++) {
        bg_barrier();
        if (me == 0) {
            double t0 = bg_now();
            long n = round < 0 ? o.iters / 10 + 1 : o.iters;
            for (long i = 0; i < n; i++) {
                long want = pongs + 1;
                if (gasnet_AMRequestShort0(1, H_PING) != GASNET_OK)
                    bg_die("request", 1);
                GASNET_BLOCKUNTIL(pongs >= want);
            }
            if (round >= 0)
                us[round] = (bg_now() - t0) * 1e6 / (double)n;
            bg_end_phase();
        } else if (me == 1) {
            bg_serve();
        }
    }
    if (me == 0) {
        double med = bg_median(us, o.rounds); /* sorts: p10 after it */
        printf("am_short_roundtrip_us,%s,%.4f,p10,%.4f\n",
               GASNETC_THREADMODEL_STR, med, bg_p10(us, o.rounds));
    }
    free(us);
    bg_barrier();
    gasnet_exit(0);
}

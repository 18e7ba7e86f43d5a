/* gasnet_putget.c - telemem-gasnet-putget: put and get latency (blocking,
 * complete at the target) and burst bandwidth (nbi puts/gets then one
 * sync) from rank 0 into rank 1's segment, through gasnet.h and straight
 * through telemem.h (telemem_put_nb+telemem_wait, telemem_get,
 * telemem_put_nbi/get_nbi+telemem_quiet), alternating in one run; prints
 * medians and the gasnet/telemem ratio as CSV. */
#include "bench_gasnet.h"

enum { M_PUT_LAT, M_GET_LAT, M_PUT_BW, M_GET_BW };
static const char *const names[] = {"put_latency", "get_latency",
                                    "put_bw_burst", "get_bw_burst"};

static void check(int rc, const char *what)
{
    if (rc != TELEMEM_OK)
        bg_die(what, rc);
}

/* One timed phase on rank 0; returns microseconds per operation (latency)
 * or per byte moved (bandwidth). */
static double phase(int metric, int use_gasnet, size_t size, long iters,
                    char *local, char *remote)
{
    double t0 = bg_now();
    long burst = 16;
    switch (metric) {
    case M_PUT_LAT:
        for (long i = 0; i < iters; i++) {
            local[0] = (char)i;
            if (use_gasnet) {
                gasnet_put(1, remote, local, size);
            } else {
                telemem_handle_t h;
                check(telemem_put_nb(1, remote, local, size, &h), "put_nb");
                check(telemem_wait(&h), "wait");
            }
        }
        return (bg_now() - t0) * 1e6 / (double)iters;
    case M_GET_LAT:
        for (long i = 0; i < iters; i++) {
            if (use_gasnet)
                gasnet_get(local, 1, remote, size);
            else
                check(telemem_get(1, local, remote, size), "get");
        }
        return (bg_now() - t0) * 1e6 / (double)iters;
    case M_PUT_BW:
    case M_GET_BW:
        for (long i = 0; i < iters; i++) {
            for (long b = 0; b < burst; b++) {
                if (metric == M_PUT_BW) {
                    if (use_gasnet)
                        gasnet_put_nbi_bulk(1, remote, local, size);
                    else
                        check(telemem_put_nbi(1, remote, local, size),
                              "put_nbi");
                } else {
                    if (use_gasnet)
                        gasnet_get_nbi_bulk(local, 1, remote, size);
                    else
                        check(telemem_get_nbi(1, local, remote, size),
                              "get_nbi");
                }
            }
            if (use_gasnet)
                gasnet_wait_syncnbi_all();
            else
                check(telemem_quiet(), "quiet");
        }
        return (bg_now() - t0) * 1e6 / ((double)iters * (double)burst);
    }
    return 0;
}

int main(int argc, char **argv)
{
    bg_opts_t o;
    gasnet_handlerentry_t table[] = {{BG_H_DONE, bg_done_handler}};
    if (gasnet_init(&argc, &argv) != GASNET_OK)
        return 1;
    bg_opts(argc, argv, &o);
    size_t segsize = (o.max + 2 * GASNET_PAGESIZE - 1) / GASNET_PAGESIZE *
                     GASNET_PAGESIZE;
    if (gasnet_attach(table, 1, segsize, 0) != GASNET_OK)
        gasnet_exit(1);
    if (gasnet_nodes() < 2) {
        fprintf(stderr, "telemem-gasnet-putget: needs 2 ranks "
                "(telemem-run -n 2)\n");
        gasnet_exit(77);
    }
    int me = (int)gasnet_mynode();
    gasnet_seginfo_t seg[2];
    if (gasnet_getSegmentInfo(seg, 2) != GASNET_OK)
        gasnet_exit(1);
    /* The local buffer is in this node's segment too (both layers may use
     * any memory; this keeps the copies alike). */
    char *local = malloc(o.max + 64);
    if (!local)
        gasnet_exit(1);
    memset(local, 1, o.max + 64);
    char *remote = seg[1].addr;
    double *g = calloc((size_t)o.rounds, sizeof *g);
    double *t = calloc((size_t)o.rounds, sizeof *t);
    double *r = calloc((size_t)o.rounds, sizeof *r);
    if (me == 0) {
        bg_header("telemem-gasnet-putget: rank 0 -> rank 1's segment", &o);
        printf("# latency: us per blocking operation (put complete at the "
               "target); bandwidth: MB/s over bursts of 16 nbi operations "
               "and one sync\n");
        printf("metric,bytes,gasnet,telemem,ratio,gasnet_p10,telemem_p10\n");
    }
    bg_barrier();
    static const size_t lat_sizes[] = {8, 4096};
    static const size_t bw_sizes[] = {1024, 16384, 65536, 262144, 1048576,
                                      4194304};
    for (int metric = M_PUT_LAT; metric <= M_GET_BW; metric++) {
        const size_t *sizes = metric <= M_GET_LAT ? lat_sizes : bw_sizes;
        int nsizes = metric <= M_GET_LAT ? 2 : 6;
        for (int si = 0; si < nsizes && sizes[si] <= o.max; si++) {
            size_t size = sizes[si];
            long iters = o.iters;
            if (metric >= M_PUT_BW) {
                /* about 8 MB per phase */
                long per = (long)((8u << 20) / (size * 16) + 1);
                iters = o.quick ? 2 : (per < o.iters ? per : o.iters);
            }
            for (int round = -1; round < o.rounds; round++) {
                /* round -1 warms up; ABBA order cancels drift. */
                for (int k = 0; k < 2; k++) {
                    int use_gasnet = (k == 0) == (round % 2 == 0);
                    bg_barrier();
                    if (me == 0) {
                        double v = phase(metric, use_gasnet, size,
                                         round < 0 ? iters / 10 + 1 : iters,
                                         local, remote);
                        if (round >= 0)
                            (use_gasnet ? g : t)[round] = v;
                        bg_end_phase();
                    } else if (me == 1) {
                        bg_serve();
                    }
                }
                /* Ratio of times: > 1 means GASNet is slower. */
                if (me == 0 && round >= 0)
                    r[round] = g[round] / t[round];
            }
            if (me == 0) {
                double gm = bg_median(g, o.rounds), tm = bg_median(t, o.rounds);
                double rr = bg_median(r, o.rounds);
                double gp = bg_p10(g, o.rounds), tp = bg_p10(t, o.rounds);
                if (metric >= M_PUT_BW)
                    printf("%s,%zu,%.1f,%.1f,%.3f,%.1f,%.1f\n", names[metric],
                           size, (double)size / gm, (double)size / tm, rr,
                           (double)size / gp, (double)size / tp);
                else
                    printf("%s,%zu,%.4f,%.4f,%.3f,%.4f,%.4f\n", names[metric],
                           size, gm, tm, rr, gp, tp);
                fflush(stdout);
            }
        }
    }
    free(g);
    free(t);
    free(r);
    free(local);
    bg_barrier();
    gasnet_exit(0);
}

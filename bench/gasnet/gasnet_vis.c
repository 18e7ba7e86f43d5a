/* gasnet_vis.c - telemem-gasnet-vis: a strided put of a 64 KiB patch of
 * 8-byte rows (8192 rows, every other 8 bytes of rank 1's segment, from a
 * contiguous local buffer), complete at the target, three ways in one run:
 * gasnet_puts_bulk(), the same transfer straight through telemem.h
 * (telemem_put_strided_nb + telemem_wait), and a loop of gasnet_put() per
 * row.  Rounds alternate the three; prints medians, the per-round ratios'
 * medians and the load. */
#include "bench_gasnet.h"

#define ROWS 8192
#define ROW 8

static double vis_phase(int how, long iters, char *local, char *remote)
{
    size_t rstride[1] = {2 * ROW}, lstride[1] = {ROW};
    size_t count[2] = {ROW, ROWS};
    double t0 = bg_now();
    for (long i = 0; i < iters; i++) {
        local[0] = (char)i;
        if (how == 0) {
            gasnet_puts_bulk(1, remote, rstride, local, lstride, count, 1);
        } else if (how == 1) {
            telemem_handle_t h;
            int rc = telemem_put_strided_nb(1, remote, rstride, local,
                                            lstride, count, 1, &h);
            if (rc == TELEMEM_OK)
                rc = telemem_wait(&h);
            if (rc != TELEMEM_OK)
                bg_die("telemem_put_strided_nb", rc);
        } else {
            for (size_t r = 0; r < ROWS; r++)
                gasnet_put(1, remote + r * 2 * ROW, local + r * ROW, ROW);
        }
    }
    return (bg_now() - t0) * 1e6 / (double)iters;
}

int main(int argc, char **argv)
{
    bg_opts_t o;
    gasnet_handlerentry_t table[] = {{BG_H_DONE, bg_done_handler}};
    if (gasnet_init(&argc, &argv) != GASNET_OK)
        return 1;
    bg_opts(argc, argv, &o);
    if (gasnet_attach(table, 1, 2 * ROWS * ROW + 2 * GASNET_PAGESIZE, 0) !=
        GASNET_OK)
        gasnet_exit(1);
    if (gasnet_nodes() < 2) {
        fprintf(stderr, "telemem-gasnet-vis: needs 2 ranks "
                "(telemem-run -n 2)\n");
        gasnet_exit(77);
    }
    int me = (int)gasnet_mynode();
    gasnet_seginfo_t seg[2];
    if (gasnet_getSegmentInfo(seg, 2) != GASNET_OK)
        gasnet_exit(1);
    char *local = malloc(ROWS * ROW);
    if (!local)
        gasnet_exit(1);
    memset(local, 3, ROWS * ROW);
    int rounds = o.quick ? 2 : (o.rounds < 31 ? o.rounds : 31);
    long iters = o.quick ? 2 : 20;
    double *v[3], *rt = calloc((size_t)rounds, sizeof(double));
    double *rl = calloc((size_t)rounds, sizeof(double));
    for (int k = 0; k < 3; k++)
        v[k] = calloc((size_t)rounds, sizeof(double));
    o.rounds = rounds;
    o.iters = iters;
    if (me == 0) {
        bg_header("telemem-gasnet-vis: strided put, 64 KiB of 8-byte rows, "
                  "rank 0 -> rank 1's segment", &o);
        printf("# us per transfer complete at the target; vis/telemem and "
               "loop/vis are medians of per-round ratios\n");
    }
    static const int order[2][3] = {{0, 1, 2}, {2, 1, 0}};
    for (int round = -1; round < rounds; round++) {
        for (int k = 0; k < 3; k++) {
            int how = order[(round + 2) % 2][k];
            bg_barrier();
            if (me == 0) {
                /* the per-row loop is slow: fewer iterations */
                long n = how == 2 ? (iters + 9) / 10 : iters;
                double x = vis_phase(how, round < 0 ? 1 : n, local,
                                     seg[1].addr);
                if (round >= 0)
                    v[how][round] = x;
                bg_end_phase();
            } else if (me == 1) {
                bg_serve();
            }
        }
        if (me == 0 && round >= 0) {
            rt[round] = v[0][round] / v[1][round];
            rl[round] = v[2][round] / v[0][round];
        }
    }
    if (me == 0) {
        double mv = bg_median(v[0], rounds), mt = bg_median(v[1], rounds);
        double ml = bg_median(v[2], rounds);
        printf("metric,us\n");
        printf("gasnet_puts_bulk,%.1f\n", mv);
        printf("telemem_put_strided,%.1f\n", mt);
        printf("gasnet_put_per_row,%.1f\n", ml);
        printf("vis_over_telemem,%.3f (target <= 1.10)\n",
               bg_median(rt, rounds));
        printf("loop_over_vis,%.1f (target >= 10)\n", bg_median(rl, rounds));
        FILE *f = fopen("/proc/loadavg", "r");
        char load[128] = "?";
        if (f) {
            if (!fgets(load, sizeof load, f))
                load[0] = '?';
            fclose(f);
        }
        printf("# load: %s", load);
        fflush(stdout);
    }
    for (int k = 0; k < 3; k++)
        free(v[k]);
    free(rt);
    free(rl);
    free(local);
    bg_barrier();
    gasnet_exit(0);
}

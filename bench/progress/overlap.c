/* overlap.c - telemem-overlap: does communication overlap computation?
 * Rank 1 puts --bytes into rank 0 while rank 0 computes for T seconds
 * without calling Telemem.  Without a progress thread the transfer waits
 * for rank 0's next call (total ~ T + transfer); with one
 * (TELEMEM_PROGRESS_THREAD=on) it proceeds meanwhile (total ~ max(T,
 * transfer)).  Prints the transfer time alone, T, the overlapped total and
 * total / max(T, transfer). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "../netpipe/bench_common.h"

#define CHUNK (1u << 20)

static void check(int rc, const char *what)
{
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "telemem-overlap: %s: %s\n", what,
                telemem_strerror(rc));
        exit(1);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
"usage: telemem-run -n 2 telemem-overlap [options]\n"
"Rank 1 puts BYTES into rank 0 (1 MB put_nbi chunks, then quiet) while\n"
"rank 0 computes (a loop reading the clock, no Telemem call) for T.\n"
"Run it with TELEMEM_PROGRESS_THREAD=on and =off to compare.\n"
"  --bytes SIZE    data moved (default 64m; k/m/g units)\n"
"  --compute SEC   rank 0's compute time T (default: the measured\n"
"                  transfer time, the hardest case for overlap)\n"
"  --rounds N      repetitions; the median is printed (default 5)\n"
"  --help          this text\n"
"Output: one line per figure, and 'ratio' = total / max(T, transfer).\n");
}

static double transfer(int me, void *dst, const char *src, size_t bytes)
{
    double t0 = bench_now();
    if (me == 1) {
        for (size_t off = 0; off < bytes; off += CHUNK) {
            size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
            check(telemem_put_nbi(0, (char *)dst + off, src + off, n),
                  "put_nbi");
        }
        check(telemem_quiet(), "quiet");
    }
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    uint64_t bytes = 64u << 20;
    double compute = -1;
    int rounds = 5;
    static const struct option opts[] = {
        {"bytes", required_argument, NULL, 'b'},
        {"compute", required_argument, NULL, 'c'},
        {"rounds", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (bench_parse_u64(optarg, &bytes, 1) || bytes == 0) {
                fprintf(stderr, "telemem-overlap: bad --bytes '%s'\n", optarg);
                return 2;
            }
            break;
        case 'c':
            compute = strtod(optarg, NULL);
            if (compute < 0) {
                fprintf(stderr, "telemem-overlap: bad --compute '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'r':
            rounds = atoi(optarg);
            if (rounds < 1 || rounds > 1000) {
                fprintf(stderr, "telemem-overlap: bad --rounds '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    check(telemem_initialize(&argc, &argv), "initialize");
    int me = telemem_rank();
    if (telemem_nranks() != 2) {
        if (me == 0)
            fprintf(stderr, "telemem-overlap: needs exactly 2 ranks\n");
        telemem_finalize();
        return 2;
    }
    void *bases[2];
    check(telemem_malloc_all(me == 0 ? bytes : 0, bases), "malloc_all");
    char *src = malloc(bytes);
    if (!src) {
        fprintf(stderr, "telemem-overlap: no memory for %llu bytes\n",
                (unsigned long long)bytes);
        return 1;
    }
    memset(src, 7, bytes);
    if (me == 0)
        memset(bases[0], 0, bytes);
    bool thread = strstr(telemem_config_string(), "PROGRESS_THREAD = y");
    double *tx = calloc((size_t)rounds, sizeof(double));
    double *tot = calloc((size_t)rounds, sizeof(double));
    double *tc = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        /* The transfer alone, rank 0 polling in the barrier. */
        check(telemem_barrier(), "barrier");
        double t = transfer(me, bases[0], src, bytes);
        check(telemem_barrier(), "barrier");
        check(telemem_broadcast(&t, sizeof t, 1), "broadcast");
        tx[r] = t;
        double T = compute >= 0 ? compute : t;
        /* Overlapped: rank 0 computes without calling Telemem. */
        check(telemem_barrier(), "barrier");
        double t0 = bench_now();
        if (me == 0) {
            volatile double sink = 0;
            while (bench_now() - t0 < T)
                sink += 1.0;
        } else {
            transfer(me, bases[0], src, bytes);
        }
        check(telemem_barrier(), "barrier");
        double total = bench_now() - t0;
        check(telemem_allreduce(&total, 1, TELEMEM_DOUBLE, TELEMEM_MAX),
              "allreduce");
        tot[r] = total;
        tc[r] = T;
    }
    if (me == 0) {
        qsort(tx, (size_t)rounds, sizeof(double), bench_cmp_double);
        qsort(tot, (size_t)rounds, sizeof(double), bench_cmp_double);
        qsort(tc, (size_t)rounds, sizeof(double), bench_cmp_double);
        double x = tx[rounds / 2], T = tc[rounds / 2], s = tot[rounds / 2];
        printf("# telemem-overlap %s, %llu bytes, %d rounds (medians)\n",
               telemem_version(), (unsigned long long)bytes, rounds);
        printf("progress_thread %s\n", thread ? "on" : "off");
        printf("transfer_s %.6f\n", x);
        printf("compute_s %.6f\n", T);
        printf("total_s %.6f\n", s);
        printf("ratio %.3f\n", s / (T > x ? T : x));
    }
    free(src);
    free(tx);
    free(tot);
    free(tc);
    check(telemem_free_all(bases[me]), "free_all");
    check(telemem_finalize(), "finalize");
    return 0;
}

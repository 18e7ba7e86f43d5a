/* coll.c - the collectives benchmark (scripts/bench-coll.sh runs it): the
 * time of barrier, broadcast, allreduce and allgather at given sizes, one
 * source built twice: telemem-coll (telemem.h, started by telemem-run) and
 * mpi-coll (-DCOLL_MPI: the same calls of MPI, started by mpirun).
 *
 * Each measurement: a barrier, one call (warm-up), then rank 0 times one
 * call and chooses how many fit in --budget seconds (1..--max-iters),
 * which every rank learns; then, as the OSU micro-benchmarks do, every
 * rank times each call alone, a barrier between two calls (barriers are
 * timed back to back), and the figures are the mean over the ranks of
 * their mean time per call, and the slowest rank's.  allreduce sums
 * doubles and checks the result; broadcast comes from rank 0 and is
 * checked; allgather checks every contribution.
 *
 * --startup: initialize, one barrier, finalize (the script times the
 * whole job).  --barriers N: initialize, N + 1 barriers, finalize (the
 * script counts the network packets of two such jobs).  Every run ends with a line of the largest and mean peak
 * RSS of the ranks (getrusage).
 * Output: '#' header lines, then CSV:
 *   impl,ranks,op,bytes,iters,usec,usec_max
 *   impl,ranks,rss_kib_max,rss_kib_mean   (a line starting with "rss") */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef COLL_MPI
#include <mpi.h>
#define IMPL "mpi"
#else
#include "telemem.h"
#define IMPL "telemem"
#endif

static int me, n;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "coll-bench r%d: %s failed (%d)\n", me, what, rc);
    exit(1);
}

/* ---- the two libraries' calls ------------------------------------------ */
#ifdef COLL_MPI
static void lib_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
}
static void lib_fini(void) { MPI_Finalize(); }
static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void bcast(void *b, size_t len)
{
    MPI_Bcast(b, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
}
static void allreduce_sum(double *b, size_t count)
{
    MPI_Allreduce(MPI_IN_PLACE, b, (int)count, MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
}
static void allreduce_max(double *b, size_t count)
{
    MPI_Allreduce(MPI_IN_PLACE, b, (int)count, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
}
static void allgather(const void *in, void *out, size_t len)
{
    MPI_Allgather(in, (int)len, MPI_BYTE, out, (int)len, MPI_BYTE,
                  MPI_COMM_WORLD);
}
#else
static void lib_init(int *argc, char ***argv)
{
    int rc = telemem_initialize(argc, argv);
    if (rc != TELEMEM_OK)
        die("telemem_initialize", rc);
    me = telemem_rank();
    n = telemem_nranks();
}
static void lib_fini(void)
{
    int rc = telemem_finalize();
    if (rc != TELEMEM_OK)
        die("telemem_finalize", rc);
}
static void barrier(void)
{
    int rc = telemem_barrier();
    if (rc != TELEMEM_OK)
        die("telemem_barrier", rc);
}
static void bcast(void *b, size_t len)
{
    int rc = telemem_broadcast(b, len, 0);
    if (rc != TELEMEM_OK)
        die("telemem_broadcast", rc);
}
static void allreduce_sum(double *b, size_t count)
{
    int rc = telemem_allreduce(b, count, TELEMEM_DOUBLE, TELEMEM_SUM);
    if (rc != TELEMEM_OK)
        die("telemem_allreduce", rc);
}
static void allreduce_max(double *b, size_t count)
{
    int rc = telemem_allreduce(b, count, TELEMEM_DOUBLE, TELEMEM_MAX);
    if (rc != TELEMEM_OK)
        die("telemem_allreduce", rc);
}
static void allgather(const void *in, void *out, size_t len)
{
    int rc = telemem_allgather(in, out, len);
    if (rc != TELEMEM_OK)
        die("telemem_allgather", rc);
}
#endif

/* ---- measurements ------------------------------------------------------- */

enum { OP_BARRIER, OP_BCAST, OP_ALLREDUCE, OP_ALLGATHER };
static const char *const op_names[] = {"barrier", "bcast", "allreduce",
                                       "allgather"};

typedef struct {
    int op;
    size_t bytes;  /* bcast: message; allreduce: count*8; allgather: per rank */
    double *buf;   /* bytes (allgather: in), and out for allgather */
    uint8_t *out;
} meas_t;

/* --smaps DIR: after each measurement, every rank appends its memory
 * counters (/proc/self/status) to DIR/r<rank>.txt, and ranks 0, 1 and
 * the last copy their /proc/self/smaps (where the RSS goes). */
static const char *smaps_dir;

static void copy_file(const char *from, const char *to, const char *tag)
{
    FILE *in = fopen(from, "r"), *out = fopen(to, "a");
    char line[512];
    if (in && out) {
        fprintf(out, "== %s\n", tag);
        while (fgets(line, sizeof line, in))
            if (!tag[0] || strstr(line, "Vm") == line || strstr(line, "Rss") == line)
                fputs(line, out);
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}

static void dump_smaps(const char *op, size_t bytes)
{
    char to[4096], tag[64];
    if (!smaps_dir)
        return;
    snprintf(tag, sizeof tag, "%s %zu", op, bytes);
    snprintf(to, sizeof to, "%s/r%d.txt", smaps_dir, me);
    copy_file("/proc/self/status", to, tag);
    if (me == 0 || me == 1 || me == n - 1) {
        snprintf(to, sizeof to, "%s/smaps-r%d-%s-%zu.txt", smaps_dir, me, op,
                 bytes);
        copy_file("/proc/self/smaps", to, "");
    }
}

static void one_call(meas_t *m, long i)
{
    switch (m->op) {
    case OP_BARRIER: barrier(); break;
    case OP_BCAST:
        if (me == 0 && m->bytes)
            ((uint8_t *)m->buf)[0] = (uint8_t)i;
        bcast(m->buf, m->bytes);
        break;
    case OP_ALLREDUCE:
        m->buf[0] = (double)me + (double)i;
        allreduce_sum(m->buf, m->bytes / 8);
        break;
    default: allgather(m->buf, m->out, m->bytes); break;
    }
}

/* After call i: is the result right? */
static void verify(const meas_t *m, long i)
{
    bool bad = false;
    if (m->op == OP_BCAST && m->bytes)
        bad = ((uint8_t *)m->buf)[0] != (uint8_t)i;
    if (m->op == OP_ALLREDUCE && m->bytes) {
        double want = (double)n * (n - 1) / 2 + (double)n * (double)i;
        bad = m->buf[0] != want;
    }
    if (m->op == OP_ALLGATHER)
        for (int r = 0; r < n && !bad; r++)
            bad = m->out[(size_t)r * m->bytes] != (uint8_t)r;
    if (bad) {
        fprintf(stderr, "coll-bench r%d: %s of %zu bytes gave a wrong "
                        "result\n", me, op_names[m->op], m->bytes);
        exit(1);
    }
}

/* As the OSU micro-benchmarks do: every call is timed alone and followed
 * by a barrier (barriers: back to back); a rank's figure is its mean time
 * per call, reported as the mean over the ranks and the slowest rank's. */
static void measure(meas_t *m, double budget, long max_iters)
{
    barrier();
    one_call(m, 0);
    verify(m, 0);
    barrier();
    double t0 = now();
    one_call(m, 1);
    if (m->op != OP_BARRIER)
        barrier();
    double t = now() - t0;
    double d = me == 0 ? (t > 0 ? budget / t : (double)max_iters) : 0;
    allreduce_max(&d, 1);
    long iters = d < 1 ? 1 : d > (double)max_iters ? max_iters : (long)d;
    barrier();
    double sum = 0;
    for (long i = 0; i < iters; i++) {
        double t1 = now();
        one_call(m, 2 + i);
        sum += now() - t1;
        if (m->op != OP_BARRIER)
            barrier();
    }
    double mine = sum / (double)iters, mean = mine;
    verify(m, 1 + iters);
    allreduce_max(&mine, 1);
    allreduce_sum(&mean, 1);
    if (me == 0)
        printf("%s,%d,%s,%zu,%ld,%.3f,%.3f\n", IMPL, n, op_names[m->op],
               m->bytes, iters, mean / n * 1e6, mine * 1e6);
    fflush(stdout);
    dump_smaps(op_names[m->op], m->bytes);
}

static size_t *parse_sizes(const char *s, int *count)
{
    size_t *v = NULL;
    int k = 0;
    while (s && *s) {
        char *end;
        double x = strtod(s, &end);
        if (end == s)
            break;
        if (*end == 'k' || *end == 'K')
            x *= 1024, end++;
        else if (*end == 'm' || *end == 'M')
            x *= 1048576, end++;
        v = realloc(v, (size_t)(k + 1) * sizeof(*v));
        v[k++] = (size_t)x;
        s = *end == ',' ? end + 1 : end;
    }
    *count = k;
    return v;
}

static void run_op(int op, const char *sizes, double budget, long max_iters)
{
    int k;
    size_t *sz = parse_sizes(sizes, &k);
    for (int j = 0; j < k; j++) {
        meas_t m = {op, op == OP_ALLREDUCE ? sz[j] * 8 : sz[j], NULL, NULL};
        m.buf = calloc(1, m.bytes + 8);
        if (op == OP_ALLGATHER) {
            m.out = calloc((size_t)n, m.bytes + 1);
            memset(m.buf, me, m.bytes);
        }
        if (!m.buf || (op == OP_ALLGATHER && !m.out))
            die("calloc", 0);
        measure(&m, budget, max_iters);
        free(m.buf);
        free(m.out);
    }
    free(sz);
}

static void print_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mx = (double)ru.ru_maxrss, sum = (double)ru.ru_maxrss;
    allreduce_max(&mx, 1);
    allreduce_sum(&sum, 1);
    if (me == 0)
        printf("rss,%s,%d,%.0f,%.0f\n", IMPL, n, mx, sum / n);
}

int main(int argc, char **argv)
{
    const char *ops = "barrier,bcast,allreduce,allgather";
    const char *bsz = "8,64k,1m", *asz = "1,1k,1m", *gsz = "8,16k";
    double budget = 0.2;
    long max_iters = 10000;
    bool startup = false;
    long barriers = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--startup")) { startup = true; continue; }
        bool help = !strcmp(a, "--help") || !strcmp(a, "-h");
        if (help || !v) {
            FILE *f = help ? stdout : stderr;
            fprintf(f, "usage: %s [--ops LIST] [--bcast-sizes LIST] "
                    "[--allreduce-counts LIST] [--allgather-sizes LIST] "
                    "[--budget S] [--max-iters N] [--startup] [--barriers N] "
                    "[--smaps DIR]\n"
                    "  --ops LIST    of barrier,bcast,allreduce,allgather "
                    "(default all)\n"
                    "  --bcast-sizes, --allgather-sizes LIST  bytes (k, m "
                    "suffixes); --allreduce-counts LIST  doubles\n"
                    "  --budget S    seconds per size (default 0.2); "
                    "--max-iters N  calls per size at most\n"
                    "  --startup     initialize, meet once, finalize; "
                    "--barriers N  then N barriers\n"
                    "  --smaps DIR   each rank appends its memory counters "
                    "to DIR/r<rank>.txt after every\n"
                    "                measurement; ranks 0, 1 and the last "
                    "also copy /proc/self/smaps there\n"
                    "Runs under telemem-run (telemem-coll) or mpirun "
                    "(mpi-coll); docs/coll.md, \"Benchmark\".\n",
                    argv[0]);
            return f == stdout ? 0 : 2;
        }
        i++;
        if (!strcmp(a, "--ops")) ops = v;
        else if (!strcmp(a, "--bcast-sizes")) bsz = v;
        else if (!strcmp(a, "--allreduce-counts")) asz = v;
        else if (!strcmp(a, "--allgather-sizes")) gsz = v;
        else if (!strcmp(a, "--budget")) budget = atof(v);
        else if (!strcmp(a, "--max-iters")) max_iters = atol(v);
        else if (!strcmp(a, "--smaps")) smaps_dir = v;
        else if (!strcmp(a, "--barriers")) { barriers = atol(v); startup = true; }
        else { fprintf(stderr, "unknown option %s\n", a); return 2; }
    }
    lib_init(&argc, &argv);
    if (me == 0 && !startup) {
        printf("# coll-bench %s, %d ranks, budget %.2f s per size\n", IMPL,
               n, budget);
        printf("impl,ranks,op,bytes,iters,usec,usec_max\n");
    }
    if (startup) {
        for (long i = 0; i <= (barriers > 0 ? barriers : 0); i++)
            barrier();
    } else {
        if (strstr(ops, "barrier"))
            run_op(OP_BARRIER, "0", budget, max_iters);
        if (strstr(ops, "bcast"))
            run_op(OP_BCAST, bsz, budget, max_iters);
        if (strstr(ops, "allreduce"))
            run_op(OP_ALLREDUCE, asz, budget, max_iters);
        if (strstr(ops, "allgather"))
            run_op(OP_ALLGATHER, gsz, budget, max_iters);
    }
    print_rss();
    lib_fini();
    return 0;
}

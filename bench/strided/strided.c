/* strided.c - strided put/get bandwidth between two ranks: a 2-D patch of
 * --patch bytes (default 1 MiB) made of rows of 8 B .. 64 KiB, written
 * into (read from) the target's memory at a row stride of twice the row.
 * The same source builds telemem-strided (backend_telemem.c, Telemem's
 * telemem_put_strided/telemem_get_strided) and armci-mpi-strided
 * (backend_armci.c, ARMCI-MPI's ARMCI_PutS/ARMCI_GetS), so both libraries
 * are measured by identical code.  docs/benchmarks-strided.md describes
 * the method and the output.
 *
 *   telemem-run -n 2 telemem-strided [options]
 *   mpirun -n 2 armci-mpi-strided [options]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../netpipe/bench_common.h"
#include "strided_backend.h"
#include "strided_git.h" /* STRIDED_GIT_HASH, from meson's vcs_tag() */

#define MAX_ROW ((uint64_t)1 << 30)
#define MAX_PATCH ((uint64_t)1 << 30)
#define MAX_SAMPLES 1000
#define MAX_FACTOR 64
#define MAX_ROWLENS 64
#define PAGE 4096

enum { OP_PUT = 1u << 0, OP_GET = 1u << 1 };

/* Every knob both ranks must agree on (broadcast from rank 0). */
struct knobs {
    uint64_t min, max;     /* row lengths: powers of two from min to max */
    uint64_t patch;        /* bytes per patch */
    uint64_t reps;         /* operations per sample, 0 = automatic */
    double time;           /* seconds per row length and op (automatic) */
    uint32_t samples;      /* timed samples per row length and op */
    uint32_t ops;          /* OP_* mask */
    uint32_t rfactor;      /* target row stride = rfactor x row */
    uint32_t lfactor;      /* local row stride = lfactor x row */
    int32_t check, verbose;
};

struct opts {
    struct knobs k;
    const char *output; /* NULL = stdout */
    const char *label;  /* NULL = the backend's */
    int help;
    char err[512];
};

static int g_rank = -1;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                     noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: rank %d: ", sb_prog(), g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------------------ */
/* Data check (--check): the byte of row r at column j of pass seq, and the
 * guard byte at position i of an area (gaps between rows must keep it). */

static unsigned char data_byte(uint64_t seq, size_t r, size_t j)
{
    uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)r * 0xBF58476D1CE4E5B9ull ^
                 (uint64_t)j * 0x94D049BB133111EBull;
    x ^= x >> 29;
    x *= 0xD6E8FEB86659FD93ull;
    return (unsigned char)(x >> 32);
}

static unsigned char guard_byte(size_t i)
{
    return (unsigned char)(0xA5 ^ (i * 7) ^ (i >> 9));
}

static void fill_guard(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = guard_byte(i);
}

static void fill_rows(unsigned char *p, size_t rows, size_t len,
                      size_t stride, uint64_t seq)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < len; j++)
            p[r * stride + j] = data_byte(seq, r, j);
}

/* An area of n bytes holding rows at stride, guard bytes elsewhere. */
static void verify_area(const unsigned char *p, size_t n, size_t rows,
                        size_t len, size_t stride, uint64_t seq,
                        const char *what)
{
    for (size_t i = 0; i < n; i++) {
        size_t r = i / stride, j = i % stride;
        int in_row = r < rows && j < len;
        unsigned char want = in_row ? data_byte(seq, r, j) : guard_byte(i);
        if (p[i] != want)
            die("check failed: %s, row length %zu: byte %zu (row %zu, "
                "column %zu, %s) is 0x%02x, expected 0x%02x", what, len, i,
                r, j, in_row ? "data" : "gap", p[i], want);
    }
}

/* ------------------------------------------------------------------------ */
/* Arguments */

static void usage(FILE *f)
{
    fprintf(f,
"Usage: %s [options]\n"
"  telemem-run -n 2 telemem-strided [options]     (Telemem)\n"
"  mpirun -n 2 armci-mpi-strided [options]         (ARMCI-MPI)\n"
"\n"
"Strided put and get bandwidth between two ranks.  Rank 0 moves a 2-D\n"
"patch of --patch bytes (rows of R bytes, patch/R rows) into (put) or out\n"
"of (get) rank 1's memory, where the rows lie --remote-stride x R bytes\n"
"apart; on rank 0 they lie --local-stride x R bytes apart (default 1:\n"
"contiguous).  R runs over the powers of two from --min to --max.\n"
"Each operation is complete when it is timed: a put is followed by the\n"
"library's completion call (Telemem: telemem_fence; ARMCI: ARMCI_Fence),\n"
"a get returns with the data.  Rank 1 waits in a barrier meanwhile.\n"
"\n"
"Rank 0 prints a '#' header (library, settings, git hash) and CSV:\n"
"  impl,op,row_bytes,rows,patch_bytes,reps,usec_median,usec_min,\n"
"  mbps_median,mbps_max\n"
"usec = time per operation (median / minimum over --samples samples);\n"
"reps = operations in the smallest sample; mbps = MB/s = 1e6 bytes/s =\n"
"patch_bytes / usec.\n"
"\n"
"Options:\n"
"  --ops LIST           put, get or put,get (default)\n"
"  --min SIZE           shortest row (default 8); sizes take k/m/g\n"
"  --max SIZE           longest row (default 64k)\n"
"  --patch SIZE         bytes per patch (default 1m); rows = patch / row\n"
"  --remote-stride F    target row stride in rows (default 2)\n"
"  --local-stride F     local row stride in rows (default 1)\n"
"  --reps N             operations per sample (default: automatic, so that\n"
"                       each row length and op takes about --time s; a\n"
"                       sample then also ends after 4x its share of it)\n"
"  --samples N          timed samples (default 5)\n"
"  --time SEC           seconds per row length and op (default 0.5)\n"
"  --check              verify the data and the gaps between rows once per\n"
"                       row length and op (untimed)\n"
"  --quick              smoke test: --time 0.01 --samples 2 --check\n"
"  --label NAME         impl column (default: telemem, or armci-mpi-default\n"
"                       / -direct / -iov after ARMCI_STRIDED_METHOD)\n"
"  --output FILE        write the header and CSV to FILE (default stdout)\n"
"  -v, --verbose        progress lines on stderr\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 done, 1 a library call or a data check failed, 2 bad\n"
"arguments or not exactly 2 ranks.\n", sb_prog());
}

static int bad(struct opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int bad(struct opts *o, const char *fmt, ...)
{
    va_list ap;
    if (o->err[0])
        return -1;
    va_start(ap, fmt);
    vsnprintf(o->err, sizeof o->err, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0) || v > 1e6)
        return -1;
    *out = v;
    return 0;
}

static int parse_ops(const char *s, uint32_t *out)
{
    char buf[64];
    uint32_t m = 0;
    if (!s || strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "put"))
            m |= OP_PUT;
        else if (!strcmp(t, "get"))
            m |= OP_GET;
        else
            return -1;
    }
    if (!m)
        return -1;
    *out = m;
    return 0;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
    enum { O_MIN = 256, O_MAX, O_PATCH, O_RSTRIDE, O_LSTRIDE, O_REPS,
           O_SAMPLES, O_TIME, O_CHECK, O_QUICK, O_LABEL, O_OUTPUT, O_OPS };
    static const struct option lo[] = {
        {"ops", required_argument, NULL, O_OPS},
        {"min", required_argument, NULL, O_MIN},
        {"max", required_argument, NULL, O_MAX},
        {"patch", required_argument, NULL, O_PATCH},
        {"remote-stride", required_argument, NULL, O_RSTRIDE},
        {"local-stride", required_argument, NULL, O_LSTRIDE},
        {"reps", required_argument, NULL, O_REPS},
        {"samples", required_argument, NULL, O_SAMPLES},
        {"time", required_argument, NULL, O_TIME},
        {"check", no_argument, NULL, O_CHECK},
        {"quick", no_argument, NULL, O_QUICK},
        {"label", required_argument, NULL, O_LABEL},
        {"output", required_argument, NULL, O_OUTPUT},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct knobs *k = &o->k;
    int have_time = 0, have_samples = 0, quick = 0, c;
    uint64_t v;

    memset(o, 0, sizeof *o);
    k->min = 8;
    k->max = 64 * 1024;
    k->patch = 1u << 20;
    k->samples = 5;
    k->time = 0.5;
    k->ops = OP_PUT | OP_GET;
    k->rfactor = 2;
    k->lfactor = 1;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":vh", lo, NULL)) != -1) {
        switch (c) {
        case O_OPS:
            if (parse_ops(optarg, &k->ops))
                bad(o, "bad --ops '%s' (expected put, get or put,get)",
                    optarg);
            break;
        case O_MIN:
        case O_MAX:
            if (bench_parse_u64(optarg, &v, 1) || v < 1 || v > MAX_ROW)
                bad(o, "bad --%s '%s' (expected a size from 1 to 1g, e.g. "
                    "8, 4k)", c == O_MIN ? "min" : "max", optarg);
            else if (c == O_MIN)
                k->min = v;
            else
                k->max = v;
            break;
        case O_PATCH:
            if (bench_parse_u64(optarg, &v, 1) || v < 1 || v > MAX_PATCH)
                bad(o, "bad --patch '%s' (expected a size from 1 to 1g)",
                    optarg);
            else
                k->patch = v;
            break;
        case O_RSTRIDE:
        case O_LSTRIDE:
            if (bench_parse_u64(optarg, &v, 0) || v < 1 || v > MAX_FACTOR)
                bad(o, "bad --%s '%s' (expected 1..%d)",
                    c == O_RSTRIDE ? "remote-stride" : "local-stride",
                    optarg, MAX_FACTOR);
            else if (c == O_RSTRIDE)
                k->rfactor = (uint32_t)v;
            else
                k->lfactor = (uint32_t)v;
            break;
        case O_REPS:
            if (bench_parse_u64(optarg, &v, 0) || v < 1 || v > 1000000000)
                bad(o, "bad --reps '%s' (expected 1..1000000000)", optarg);
            else
                k->reps = v;
            break;
        case O_SAMPLES:
            if (bench_parse_u64(optarg, &v, 0) || v < 1 || v > MAX_SAMPLES)
                bad(o, "bad --samples '%s' (expected 1..%d)", optarg,
                    MAX_SAMPLES);
            else {
                k->samples = (uint32_t)v;
                have_samples = 1;
            }
            break;
        case O_TIME:
            if (parse_seconds(optarg, &k->time))
                bad(o, "bad --time '%s' (expected seconds > 0)", optarg);
            else
                have_time = 1;
            break;
        case O_CHECK:
            k->check = 1;
            break;
        case O_QUICK:
            quick = 1;
            break;
        case O_LABEL:
            if (!*optarg || strpbrk(optarg, ",\n\""))
                bad(o, "bad --label '%s' (no commas, quotes or newlines)",
                    optarg);
            else
                o->label = optarg;
            break;
        case O_OUTPUT:
            o->output = optarg;
            break;
        case 'v':
            k->verbose = 1;
            break;
        case 'h':
            o->help = 1;
            break;
        case ':':
            bad(o, "option '%s' needs a value", argv[optind - 1]);
            break;
        default:
            bad(o, "unknown option '%s'", argv[optind - 1]);
            break;
        }
    }
    if (optind < argc)
        bad(o, "unexpected argument '%s'", argv[optind]);
    if (quick) {
        if (!have_time)
            k->time = 0.01;
        if (!have_samples)
            k->samples = 2;
        k->check = 1;
    }
    if (k->min > k->max)
        bad(o, "--min %" PRIu64 " is larger than --max %" PRIu64, k->min,
            k->max);
    if (k->max > k->patch)
        bad(o, "--max %" PRIu64 " is larger than --patch %" PRIu64
            " (a patch holds at least one row)", k->max, k->patch);
}

/* ------------------------------------------------------------------------ */
/* The measurement */

struct bench {
    struct knobs k;
    void *bases[2];          /* the blocks of both ranks */
    unsigned char *local;    /* rank 0's side of the patch */
    size_t area, larea;      /* bytes of the remote and the local area */
    uint64_t seq;            /* check pass number */
    const char *label;
};

struct shape {
    size_t len, rows, rstride, lstride;
    size_t count[2], rs[1], ls[1];
};

static void make_shape(const struct knobs *k, size_t len, struct shape *s)
{
    s->len = len;
    s->rows = (size_t)(k->patch / len);
    s->rstride = len * k->rfactor;
    s->lstride = len * k->lfactor;
    s->count[0] = len;
    s->count[1] = s->rows;
    s->rs[0] = s->rstride;
    s->ls[0] = s->lstride;
}

static void do_op(struct bench *b, const struct shape *s, uint32_t op)
{
    unsigned char *remote = b->bases[1];
    if (op == OP_PUT)
        sb_put_strided(1, remote, s->rs, b->local, s->ls, s->count, 1);
    else
        sb_get_strided(1, b->local, s->ls, remote, s->rs, s->count, 1);
}

/* One checked operation: the target area (put) or the local area (get)
 * must hold the rows and keep the guard bytes in every gap. */
static void check_op(struct bench *b, const struct shape *s, uint32_t op)
{
    unsigned char *mine = b->bases[g_rank];
    size_t rarea = (s->rows - 1) * s->rstride + s->len + s->rstride;
    size_t larea = (s->rows - 1) * s->lstride + s->len + s->lstride;
    uint64_t seq = ++b->seq;

    if (rarea > b->area)
        rarea = b->area;
    if (larea > b->larea)
        larea = b->larea;
    sb_barrier();
    if (op == OP_PUT) {
        if (g_rank == 1)
            fill_guard(mine, rarea);
        else
            fill_rows(b->local, s->rows, s->len, s->lstride, seq);
        sb_barrier();
        if (g_rank == 0)
            do_op(b, s, op);
        sb_barrier();
        if (g_rank == 1)
            verify_area(mine, rarea, s->rows, s->len, s->rstride, seq,
                        "put, target memory");
    } else {
        if (g_rank == 1) {
            fill_guard(mine, rarea);
            fill_rows(mine, s->rows, s->len, s->rstride, seq);
        } else {
            fill_guard(b->local, larea);
        }
        sb_barrier();
        if (g_rank == 0) {
            do_op(b, s, op);
            verify_area(b->local, larea, s->rows, s->len, s->lstride, seq,
                        "get, local memory");
        }
    }
    sb_barrier();
}

static void run_one(struct bench *b, size_t len, uint32_t op, FILE *out)
{
    const struct knobs *k = &b->k;
    struct shape s;
    static double dt[MAX_SAMPLES];
    uint64_t reps = k->reps;

    make_shape(k, len, &s);
    if (k->check)
        check_op(b, &s, op);

    /* Warm-up: one untimed operation; with automatic reps, then enough
     * for about a tenth of the budget to estimate the time per operation.
     * Rank 0 decides the count for everybody. */
    sb_barrier();
    if (g_rank == 0)
        do_op(b, &s, op);
    if (g_rank == 0 && !reps) {
        /* The median of single operations: a few slow ones (first
         * contact, the target waking up) must not set the count. */
        static double est[1000];
        double t0 = bench_now(), t = t0;
        size_t n = 0;
        do {
            do_op(b, &s, op);
            double t1 = bench_now();
            est[n++] = t1 - t;
            t = t1;
        } while (t - t0 < 0.1 * k->time && n < 1000);
        double per = median(est, n);
        double want = 0.9 * k->time / k->samples / per;
        reps = want < 1 ? 1 : want > 1e9 ? 1000000000 : (uint64_t)want;
    }
    sb_broadcast(&reps, sizeof reps, 0);

    /* With automatic reps a sample also ends after 4x its share of the
     * budget: when other jobs take the cores the time per operation can
     * grow tenfold, and the run must still end. */
    double cap = k->reps ? 1e30 : 4 * k->time / k->samples;
    uint64_t done_min = reps;
    for (uint32_t i = 0; i < k->samples; i++) {
        sb_barrier();
        if (g_rank == 0) {
            double t0 = bench_now(), t = t0;
            uint64_t r = 0;
            while (r < reps && (r == 0 || t - t0 < cap)) {
                do_op(b, &s, op);
                r++;
                if (!(r & 7) || r == reps)
                    t = bench_now();
            }
            t = bench_now();
            dt[i] = (t - t0) / (double)r;
            if (r < done_min)
                done_min = r;
        }
    }
    sb_barrier();
    if (g_rank != 0)
        return;
    double med = median(dt, k->samples), min = dt[0]; /* sorted */
    size_t bytes = s.rows * s.len;
    double umed = med * 1e6, umin = min * 1e6;
    fprintf(out, "%s,%s,%zu,%zu,%zu,%" PRIu64 ",%.3f,%.3f,%.2f,%.2f\n",
            b->label, op == OP_PUT ? "put" : "get", len, s.rows, bytes,
            done_min, umed, umin, (double)bytes / umed,
            (double)bytes / umin);
    fflush(out);
    if (k->verbose)
        fprintf(stderr, "%s: %s %s row %7zu B: %10.1f us  %9.1f MB/s "
                "(%" PRIu64 " reps)\n", sb_prog(), b->label,
                op == OP_PUT ? "put" : "get", len, umed,
                (double)bytes / umed, done_min);
}

/* ------------------------------------------------------------------------ */
/* Header */

static void cpus_allowed(char *desc, size_t len)
{
    cpu_set_t set;
    size_t k = 0;
    snprintf(desc, len, "unknown");
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    desc[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && k + 8 < len; c++)
        if (CPU_ISSET(c, &set))
            k += (size_t)snprintf(desc + k, len - k, "%s%d", k ? "," : "",
                                  c);
}

static void print_load(FILE *out, const char *when)
{
    char line[256];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fgets(line, sizeof line, f))
            fprintf(out, "# loadavg (%s) = %s", when, line);
        fclose(f);
    }
}

static void print_header(struct bench *b, FILE *out, size_t nrows,
                         const char cpus[2][128])
{
    const struct knobs *k = &b->k;
    char date[64] = "unknown", cpu[256] = "unknown";
    struct utsname un;
    time_t tt = time(NULL);
    struct tm tm;
    FILE *f;

    if (gmtime_r(&tt, &tm))
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if ((f = fopen("/proc/cpuinfo", "r"))) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *c = strchr(line, ':');
            if (!strncmp(line, "model name", 10) && c) {
                snprintf(cpu, sizeof cpu, "%s", c + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        }
        fclose(f);
    }
    fprintf(out, "# %s\n", sb_prog());
    fprintf(out, "# git = %s\n", STRIDED_GIT_HASH);
    sb_print_header(out);
    fprintf(out, "# ops = %s%s\n", k->ops & OP_PUT ? "put " : "",
            k->ops & OP_GET ? "get" : "");
    fprintf(out, "# patch = %" PRIu64 " bytes, rows of %" PRIu64 " .. %"
            PRIu64 " bytes (%zu lengths, powers of two)\n", k->patch,
            k->min, k->max, nrows);
    fprintf(out, "# strides = target %u x row, local %u x row\n", k->rfactor,
            k->lfactor);
    if (k->reps)
        fprintf(out, "# samples = %u, reps = %" PRIu64 "\n", k->samples,
                k->reps);
    else
        fprintf(out, "# samples = %u, reps = auto (%.3g s per row length "
                "and op)\n", k->samples, k->time);
    fprintf(out, "# check = %s\n", k->check ? "yes" : "no");
    fprintf(out, "# cpus allowed = rank 0: %s; rank 1: %s\n", cpus[0],
            cpus[1]);
    fprintf(out, "# units: usec = time per complete operation, mbps = MB/s "
            "= 1e6 bytes/s\n");
    if (uname(&un) == 0)
        fprintf(out, "# date = %s, host = %s %s, cpu = %s\n", date,
                un.nodename, un.release, cpu);
    print_load(out, "start");
    fprintf(out, "impl,op,row_bytes,rows,patch_bytes,reps,usec_median,"
            "usec_min,mbps_median,mbps_max\n");
    fflush(out);
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    static struct opts o;
    static struct bench b;
    size_t lens[MAX_ROWLENS], nlens = 0;
    FILE *out = stdout;

    parse_args(argc, argv, &o);
    if (o.help || o.err[0]) {
        /* Usage problems need no library: rank 0 (or a process started
         * without a launcher) prints, every rank leaves. */
        if (sb_env_rank() <= 0) {
            if (o.help)
                usage(stdout);
            else
                fprintf(stderr, "%s: %s\nTry '%s --help'.\n", sb_prog(),
                        o.err, sb_prog());
        }
        return o.help ? 0 : 2;
    }

    sb_init(&argc, &argv);
    g_rank = sb_rank();
    if (sb_nranks() != 2) {
        if (g_rank == 0)
            fprintf(stderr, "%s: needs exactly 2 ranks, got %d\n", sb_prog(),
                    sb_nranks());
        sb_finalize();
        return 2;
    }
    b.k = o.k;
    sb_broadcast(&b.k, sizeof b.k, 0);
    b.label = o.label ? o.label : sb_label();

    int ok = 1;
    if (g_rank == 0 && o.output) {
        out = fopen(o.output, "w");
        if (!out) {
            fprintf(stderr, "%s: cannot write %s: %s\n", sb_prog(), o.output,
                    strerror(errno));
            ok = 0;
        }
    }
    sb_broadcast(&ok, sizeof ok, 0);
    if (!ok) {
        sb_finalize();
        return 2;
    }

    for (uint64_t len = b.k.min; len <= b.k.max && nlens < MAX_ROWLENS;
         len *= 2)
        lens[nlens++] = (size_t)len;

    /* The largest extent of any row length (rows at the stride, and one
     * more stride of gap so the check sees bytes past the last row). */
    b.area = (size_t)b.k.patch * b.k.rfactor + (size_t)b.k.max * b.k.rfactor;
    b.larea = (size_t)b.k.patch * b.k.lfactor + (size_t)b.k.max * b.k.lfactor;
    b.area = (b.area + PAGE - 1) & ~(size_t)(PAGE - 1);
    b.larea = (b.larea + PAGE - 1) & ~(size_t)(PAGE - 1);
    sb_malloc_all(b.area, b.bases);
    b.local = aligned_alloc(PAGE, b.larea);
    if (!b.local)
        die("out of memory (%zu bytes)", b.larea);
    /* Fault every page in now, outside the timed loops. */
    memset(b.bases[g_rank], 0, b.area);
    memset(b.local, 0, b.larea);

    char cpus_me[128], cpus[2][128];
    cpus_allowed(cpus_me, sizeof cpus_me);
    sb_allgather(cpus_me, cpus, sizeof cpus_me);

    double t_start = bench_now();
    if (g_rank == 0)
        print_header(&b, out, nlens, (const char(*)[128])cpus);
    for (uint32_t op = OP_PUT; op <= OP_GET; op <<= 1)
        if (b.k.ops & op)
            for (size_t i = 0; i < nlens; i++)
                run_one(&b, lens[i], op, out);

    if (g_rank == 0) {
        fprintf(out, "# elapsed = %.1f s\n", bench_now() - t_start);
        print_load(out, "end");
        if (out != stdout && fclose(out) != 0)
            die("writing %s: %s", o.output, strerror(errno));
        else if (out == stdout)
            fflush(stdout);
    }
    sb_barrier();
    free(b.local);
    sb_free_all(b.bases[g_rank]);
    sb_finalize();
    return 0;
}

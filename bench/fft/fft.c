/* fft.c - the distributed FFT benchmark (docs/fft.md): an HPCC-MPIFFT-style
 * 1-D complex double FFT of N = N1 x N2 points over P ranks, the six-step
 * algorithm with three all-to-all transposes, FFTW for the local FFTs, two
 * arrays that swap roles at each all-to-all; the all-to-all is chosen at
 * run time (fft.h backends).  Owns the options, the algorithm, the timing,
 * the correctness checks and the output (a '#' header, a table, CSV). */
#include <complex.h> /* before fftw3.h: fftw_complex is double complex */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>
#include <mpi.h>

#include "fft.h"
#include "fft_git.h" /* FFT_GIT_HASH, from meson's vcs_tag() */

#ifndef FFT_PROG
#define FFT_PROG "fft"
#endif
#ifndef FFT_VERSION
#define FFT_VERSION "unknown"
#endif

typedef double complex cplx;

/* ---- options ---------------------------------------------------------- */

static struct {
    const fft_a2a_t *a2a;
    int min_log2, max_log2;
    int reps, warmup, max_samples;
    double min_time;
    int measure;      /* FFTW_MEASURE (else FFTW_ESTIMATE) */
    double plan_time; /* fftw_set_timelimit, seconds */
    const char *csv;
    int quiet;
    int corrupt; /* test hook: damage the output before the checks */
    double tol;
} opt = {
    .min_log2 = 12,
    .max_log2 = 20,
    .reps = 5,
    .warmup = 1,
    .max_samples = 200,
    .min_time = 0.2,
    .measure = 1,
    .plan_time = 0.2,
    .tol = 1e-10,
};

static const fft_a2a_t *const g_backends[] = {
    &fft_a2a_mpi,
#ifdef FFT_HAVE_TELEMEM
    &fft_a2a_telemem,
#endif
    &fft_a2a_armci,
};
#define NBACKENDS ((int)(sizeof g_backends / sizeof g_backends[0]))

static int g_me, g_np;

/* The help text is laid out as printed. */
/* clang-format off */
static void usage(FILE *f)
{
    fprintf(f,
"Usage: mpirun -n P " FFT_PROG " [options]\n"
"\n"
"Distributed 1-D complex double FFT of N = 2^k points over P ranks, in the\n"
"style of HPCC's MPIFFT: the six-step algorithm (N = N1 x N2) with three\n"
"all-to-all transposes, FFTW for the local FFTs.  For every size k in\n"
"[--min-log2, --max-log2] it times the forward transform, splits the time\n"
"into all-to-all and compute (everything else), reads PAPI counters around\n"
"the compute phases, and checks the result: the inverse transform must give\n"
"the input back within --tol relative error, and one output point per rank\n"
"must match the directly summed DFT; otherwise it exits with status 1.\n"
"P must be a power of two with P*P <= N.\n"
"\n"
"Options:\n"
"  --alltoall NAME   the all-to-all (default mpi):\n"
"                      mpi      MPI_Alltoall\n"
#ifdef FFT_HAVE_TELEMEM
"                      telemem  telemem_put of each block, telemem_quiet,\n"
"                               telemem_barrier (the paper's Fig. 7)\n"
"                      armci    the same with ARMCI_Put, ARMCI_AllFence,\n"
"                               ARMCI_Barrier of libarmci (over Telemem)\n"
#else
"                      armci    ARMCI_Put of each block, ARMCI_AllFence,\n"
"                               ARMCI_Barrier of ARMCI-MPI (the paper's\n"
"                               Fig. 7)\n"
#endif
"  --min-log2 K      smallest size 2^K points (default 12; at least 2)\n"
"  --max-log2 K      largest size 2^K points (default 20; at most 30)\n"
"  --reps R          timed transforms per size, at least (default 5)\n"
"  --min-time SEC    more timed transforms for small sizes, until they\n"
"                    add up to SEC seconds (default 0.2)\n"
"  --max-samples S   at most S timed transforms per size (default 200)\n"
"  --warmup W        untimed transforms before the timed ones (default 1)\n"
"  --plan MODE       FFTW planner: measure (default) or estimate\n"
"  --plan-time SEC   FFTW planning time limit per plan (default 0.2)\n"
"  --tol X           relative error allowed in the checks (default 1e-10)\n"
"  --csv FILE        write the '#' header and CSV rows to FILE (rank 0)\n"
"  --quiet           no table on stdout (the header still)\n"
"  --corrupt         (for tests) change one output point of rank 0 before\n"
"                    the checks: the run must fail with status 1\n"
"  -h, --help        this text\n"
"\n"
"Reported per size (median transform by wall time): gflops = 5 N log2(N) /\n"
"wall time (as HPCC), total_s, alltoall_s and compute_s = total - alltoall\n"
"(means over ranks), alltoall_share = alltoall/total, alltoall_per_compute\n"
"= alltoall/compute (the paper's Fig. 10), relerr, dfterr, and PAPI counts\n"
"summed over ranks (empty when the machine has no counters).  Columns:\n"
"docs/fft.md.\n");
}
/* clang-format on */

static int parse_int(const char *s, const char *name, int lo, int hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, FFT_PROG ": %s: '%s' is not an integer in [%d, %d]\n",
                name, s, lo, hi);
        exit(2);
    }
    return (int)v;
}

static double parse_double(const char *s, const char *name, double lo)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo)) {
        fprintf(stderr, FFT_PROG ": %s: '%s' is not a number >= %g\n", name, s,
                lo);
        exit(2);
    }
    return v;
}

static void parse_args(int argc, char **argv)
{
    enum {
        O_A2A = 256,
        O_MIN,
        O_MAX,
        O_REPS,
        O_MINT,
        O_MAXS,
        O_WARM,
        O_PLAN,
        O_PLANT,
        O_TOL,
        O_CSV,
        O_QUIET,
        O_CORRUPT
    };
    static const struct option lo[] = {
        {"alltoall", required_argument, 0, O_A2A},
        {"min-log2", required_argument, 0, O_MIN},
        {"max-log2", required_argument, 0, O_MAX},
        {"reps", required_argument, 0, O_REPS},
        {"min-time", required_argument, 0, O_MINT},
        {"max-samples", required_argument, 0, O_MAXS},
        {"warmup", required_argument, 0, O_WARM},
        {"plan", required_argument, 0, O_PLAN},
        {"plan-time", required_argument, 0, O_PLANT},
        {"tol", required_argument, 0, O_TOL},
        {"csv", required_argument, 0, O_CSV},
        {"quiet", no_argument, 0, O_QUIET},
        {"corrupt", no_argument, 0, O_CORRUPT},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *a2a = "mpi";
    int c;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case O_A2A:
            a2a = optarg;
            break;
        case O_MIN:
            opt.min_log2 = parse_int(optarg, "--min-log2", 2, 30);
            break;
        case O_MAX:
            opt.max_log2 = parse_int(optarg, "--max-log2", 2, 30);
            break;
        case O_REPS:
            opt.reps = parse_int(optarg, "--reps", 1, 1000000);
            break;
        case O_MINT:
            opt.min_time = parse_double(optarg, "--min-time", 0);
            break;
        case O_MAXS:
            opt.max_samples = parse_int(optarg, "--max-samples", 1, 1000000);
            break;
        case O_WARM:
            opt.warmup = parse_int(optarg, "--warmup", 0, 1000);
            break;
        case O_PLAN:
            if (!strcmp(optarg, "measure"))
                opt.measure = 1;
            else if (!strcmp(optarg, "estimate"))
                opt.measure = 0;
            else {
                fprintf(stderr,
                        FFT_PROG ": --plan: '%s' is not measure or "
                                 "estimate\n",
                        optarg);
                exit(2);
            }
            break;
        case O_PLANT:
            opt.plan_time = parse_double(optarg, "--plan-time", 0);
            break;
        case O_TOL:
            opt.tol = parse_double(optarg, "--tol", 0);
            break;
        case O_CSV:
            opt.csv = optarg;
            break;
        case O_QUIET:
            opt.quiet = 1;
            break;
        case O_CORRUPT:
            opt.corrupt = 1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, FFT_PROG ": unexpected argument '%s' (see --help)\n",
                argv[optind]);
        exit(2);
    }
    if (opt.min_log2 > opt.max_log2) {
        fprintf(stderr, FFT_PROG ": --min-log2 %d is above --max-log2 %d\n",
                opt.min_log2, opt.max_log2);
        exit(2);
    }
    for (int i = 0; i < NBACKENDS; i++)
        if (!strcmp(a2a, g_backends[i]->name))
            opt.a2a = g_backends[i];
    if (!opt.a2a) {
        fprintf(stderr,
                FFT_PROG ": --alltoall: unknown variant '%s'; this "
                         "program has:",
                a2a);
        for (int i = 0; i < NBACKENDS; i++)
            fprintf(stderr, " %s", g_backends[i]->name);
        fprintf(stderr, "\n");
        exit(2);
    }
}

/* ---- input, twiddles, complex arithmetic ------------------------------ */

/* The input x[n], a function of the global index only, so that any rank
 * can recompute any point (for the checks): splitmix64, two values in
 * [-1, 1). */
static inline cplx input_at(uint64_t n)
{
    uint64_t z = n * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    double re = (double)(z >> 32) / 2147483648.0 - 1.0;
    double im = (double)(z & 0xffffffffu) / 2147483648.0 - 1.0;
    return CMPLX(re, im);
}

/* Written out so that gcc does not call __muldc3 (C's Annex G NaN rules). */
static inline cplx cmul(cplx a, cplx b)
{
    double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
    return CMPLX(ar * br - ai * bi, ar * bi + ai * br);
}

/* W_N^e = exp(-2 pi i e / N) for 0 <= e < N from two tables of about
 * sqrt(N) entries each: W^e = hi[e >> lsh] * lo[e & (S - 1)], S = 2^lsh.
 * Small enough to stay in cache; one extra multiplication per use. */
typedef struct {
    cplx *lo, *hi;
    int lsh;
    uint64_t mask;
} twiddle_t;

static int twiddle_init(twiddle_t *t, int log2n)
{
    uint64_t n = 1ULL << log2n;
    t->lsh = (log2n + 1) / 2;
    uint64_t s = 1ULL << t->lsh, h = n >> t->lsh;
    t->mask = s - 1;
    t->lo = fftw_malloc(s * sizeof(cplx));
    t->hi = fftw_malloc(h * sizeof(cplx));
    if (!t->lo || !t->hi)
        return 1;
    for (uint64_t r = 0; r < s; r++) {
        double a = -2.0 * M_PI * (double)r / (double)n;
        t->lo[r] = CMPLX(cos(a), sin(a));
    }
    for (uint64_t r = 0; r < h; r++) {
        double a = -2.0 * M_PI * (double)r / (double)h;
        t->hi[r] = CMPLX(cos(a), sin(a));
    }
    return 0;
}

static void twiddle_free(twiddle_t *t)
{
    fftw_free(t->lo);
    fftw_free(t->hi);
}

static inline cplx twiddle(const twiddle_t *t, uint64_t e)
{
    return cmul(t->hi[e >> t->lsh], t->lo[e & t->mask]);
}

/* ---- the six-step FFT ------------------------------------------------- */

/*
 * Rank r holds x[r*N/P .. (r+1)*N/P) in A; with n = n1 + N1*n2 that is the
 * rows n2 in [r*M2, (r+1)*M2) of the N2 x N1 matrix x[n2][n1] (M1 = N1/P,
 * M2 = N2/P).  X[k2 + N2*k1] = sum_n1 W_N1^(n1 k1) W_N^(n1 k2)
 * sum_n2 x[n1 + N1 n2] W_N2^(n2 k2).  Steps (blocks of M1*M2 points):
 *   1 pack      S[q][i][j] = A[i][q*M1 + j]        (column blocks)
 *   2 alltoall  S -> B: B = [n2][j], n1 = r*M1 + j (N2 x M1)
 *   3 FFT       M1 transforms of length N2 along n2: B (stride M1) ->
 *               S[j][k2] (contiguous rows; FFTW reads the strided input,
 *               which is much faster than transforming in place with a
 *               power-of-two stride)
 *   4 twiddle   B[q][j][i2] = S[j][q*M2 + i2] * W_N^(n1 k2)
 *   5 alltoall  B -> A: A = [n1][i2], k2 = r*M2 + i2 (N1 x M2)
 *   6 FFT       M2 transforms of length N1 along n1: A (stride M2) ->
 *               S[i2][k1]
 *   7 pack      A[q][i2][j1] = S[i2][q*M1 + j1]
 *   8 alltoall  A -> B: B = [k2][j1], k1 = r*M1 + j1 (N2 x M1)
 *   9 transpose A[j1][k2] = B[k2][j1]: X[r*N/P ..] in natural order, in A
 * Steps 1, 3+4, 6+7 and 9 are the compute phases.  A and B are the two
 * arrays other ranks put into, and the all-to-alls write them in turn
 * (B, A, B); S is local scratch.  The order makes the one-sided all-to-all
 * safe without a barrier before its puts: the array an all-to-all writes is
 * never one the compute phase before it uses, so a rank that is ahead
 * cannot overwrite data a slower rank still reads (each transform starts
 * after a barrier).
 */
typedef struct {
    int log2n;
    uint64_t n, n1, n2, m1, m2, nloc, blk_pts;
    cplx *a, *b, *s;
    fftw_plan p1, p2;
    twiddle_t tw;
} fft_t;

typedef struct {
    double total, a2a;
    long long papi[FFT_PAPI_NSLOTS];
} sample_t;

static void die(const char *what)
{
    fprintf(stderr, FFT_PROG ": rank %d: %s; ending the job\n", g_me, what);
    fflush(NULL);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void step1_pack(const fft_t *f)
{
    for (uint64_t i = 0; i < f->m2; i++)
        for (int q = 0; q < g_np; q++)
            memcpy(f->s + ((uint64_t)q * f->m2 + i) * f->m1,
                   f->a + i * f->n1 + (uint64_t)q * f->m1,
                   f->m1 * sizeof(cplx));
}

static void step4_twiddle(const fft_t *f)
{
    for (uint64_t j = 0; j < f->m1; j++) {
        uint64_t n1 = (uint64_t)g_me * f->m1 + j, e = 0; /* e = n1*k2 < N */
        const cplx *src = f->s + j * f->n2;
        for (int q = 0; q < g_np; q++) {
            cplx *dst = f->b + ((uint64_t)q * f->m1 + j) * f->m2;
            for (uint64_t i2 = 0; i2 < f->m2; i2++, e += n1)
                dst[i2] = cmul(*src++, twiddle(&f->tw, e));
        }
    }
}

static void step7_pack(const fft_t *f)
{
    for (int q = 0; q < g_np; q++)
        for (uint64_t i2 = 0; i2 < f->m2; i2++)
            memcpy(f->a + ((uint64_t)q * f->m2 + i2) * f->m1,
                   f->s + i2 * f->n1 + (uint64_t)q * f->m1,
                   f->m1 * sizeof(cplx));
}

#define TILE 16
static void step9_transpose(const fft_t *f)
{
    const uint64_t rows = f->n2, cols = f->m1; /* B is rows x cols */
    for (uint64_t ib = 0; ib < rows; ib += TILE)
        for (uint64_t jb = 0; jb < cols; jb += TILE) {
            uint64_t ie = ib + TILE < rows ? ib + TILE : rows;
            uint64_t je = jb + TILE < cols ? jb + TILE : cols;
            for (uint64_t j = jb; j < je; j++)
                for (uint64_t i = ib; i < ie; i++)
                    f->a[j * rows + i] = f->b[i * cols + j];
        }
}

static void alltoall(const fft_t *f, const cplx *snd, cplx *rcv, sample_t *s)
{
    double t = MPI_Wtime();
    if (opt.a2a->alltoall(snd, rcv, f->blk_pts * sizeof(cplx)) != 0)
        die("the all-to-all failed");
    s->a2a += MPI_Wtime() - t;
}

/* The forward transform of A into A (natural order).  Times it into *s
 * and counts the compute phases into s->papi. */
static void forward(const fft_t *f, sample_t *s)
{
    memset(s, 0, sizeof *s);
    double t0 = MPI_Wtime();
    fft_papi_resume();
    step1_pack(f);
    fft_papi_pause(s->papi);
    alltoall(f, f->s, f->b, s);
    fft_papi_resume();
    fftw_execute(f->p1);
    step4_twiddle(f);
    fft_papi_pause(s->papi);
    alltoall(f, f->b, f->a, s);
    fft_papi_resume();
    fftw_execute(f->p2);
    step7_pack(f);
    fft_papi_pause(s->papi);
    alltoall(f, f->a, f->b, s);
    fft_papi_resume();
    step9_transpose(f);
    fft_papi_pause(s->papi);
    s->total = MPI_Wtime() - t0;
}

static void fill_input(const fft_t *f)
{
    uint64_t base = (uint64_t)g_me * f->nloc;
    for (uint64_t l = 0; l < f->nloc; l++)
        f->a[l] = input_at(base + l);
}

static int fft_setup(fft_t *f, int log2n)
{
    memset(f, 0, sizeof *f);
    f->log2n = log2n;
    f->n = 1ULL << log2n;
    f->n1 = 1ULL << ((log2n + 1) / 2);
    f->n2 = 1ULL << (log2n / 2);
    f->m1 = f->n1 / (uint64_t)g_np;
    f->m2 = f->n2 / (uint64_t)g_np;
    f->nloc = f->n / (uint64_t)g_np;
    f->blk_pts = f->m1 * f->m2;
    size_t bytes = f->nloc * sizeof(cplx);
    if (opt.a2a->alloc(bytes, (void **)&f->a) != 0 ||
        opt.a2a->alloc(bytes, (void **)&f->b) != 0)
        die("allocating the arrays failed");
    f->s = fftw_malloc(bytes);
    if (!f->s)
        die("out of memory for the scratch array");
    /* Touch every page now, not in the first timed transform. */
    memset(f->a, 0, bytes);
    memset(f->b, 0, bytes);
    memset(f->s, 0, bytes);
    if (twiddle_init(&f->tw, log2n) != 0)
        die("out of memory for the twiddle tables");
    /* Planning with MEASURE overwrites the arrays: done before the input. */
    unsigned flags = opt.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    fftw_set_timelimit(opt.plan_time);
    int len2 = (int)f->n2, len1 = (int)f->n1;
    f->p1 = fftw_plan_many_dft(1, &len2, (int)f->m1, f->b, NULL, (int)f->m1, 1,
                               f->s, NULL, 1, len2, FFTW_FORWARD, flags);
    f->p2 = fftw_plan_many_dft(1, &len1, (int)f->m2, f->a, NULL, (int)f->m2, 1,
                               f->s, NULL, 1, len1, FFTW_FORWARD, flags);
    if (!f->p1 || !f->p2)
        die("FFTW could not plan the local transforms");
    return 0;
}

static void fft_teardown(fft_t *f)
{
    fftw_destroy_plan(f->p1);
    fftw_destroy_plan(f->p2);
    twiddle_free(&f->tw);
    fftw_free(f->s);
    if (opt.a2a->free_array(f->b) != 0 || opt.a2a->free_array(f->a) != 0)
        die("freeing the arrays failed");
}

/* ---- checks ----------------------------------------------------------- */

/* One output point per rank against the directly summed DFT, in long
 * double; the error is relative to ||x||_2 (|X[k]| <= sqrt(N) ||x||_2).
 * Returns the largest error over ranks. */
static double check_dft(const fft_t *f)
{
    uint64_t kl = (uint64_t)(g_me * 7919 + 13) % f->nloc;
    uint64_t k = (uint64_t)g_me * f->nloc + kl;
    long double sr = 0, si = 0, nrm = 0;
    uint64_t e = 0; /* n*k mod N, kept incrementally */
    for (uint64_t n = 0; n < f->n; n++) {
        cplx x = input_at(n), w = twiddle(&f->tw, e);
        sr +=
            (long double)creal(x) * creal(w) - (long double)cimag(x) * cimag(w);
        si +=
            (long double)creal(x) * cimag(w) + (long double)cimag(x) * creal(w);
        nrm +=
            (long double)creal(x) * creal(x) + (long double)cimag(x) * cimag(x);
        e = (e + k) & (f->n - 1);
    }
    double dr = creal(f->a[kl]) - (double)sr, di = cimag(f->a[kl]) - (double)si;
    double err = sqrt(dr * dr + di * di) / sqrt((double)nrm);
    double max = 0;
    MPI_Allreduce(&err, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

/* The inverse of A (the forward transform of x) by conj(F(conj(X)))/N,
 * compared with x: ||x' - x||_2 / ||x||_2 over all ranks. */
static double check_inverse(const fft_t *f)
{
    for (uint64_t l = 0; l < f->nloc; l++)
        f->a[l] = conj(f->a[l]);
    sample_t s;
    MPI_Barrier(MPI_COMM_WORLD); /* see the comment on the steps */
    forward(f, &s);
    double inv = 1.0 / (double)f->n, loc[2] = {0, 0}, sum[2];
    uint64_t base = (uint64_t)g_me * f->nloc;
    for (uint64_t l = 0; l < f->nloc; l++) {
        cplx x = input_at(base + l), y = conj(f->a[l]) * inv;
        double dr = creal(y) - creal(x), di = cimag(y) - cimag(x);
        loc[0] += dr * dr + di * di;
        loc[1] += creal(x) * creal(x) + cimag(x) * cimag(x);
    }
    MPI_Allreduce(loc, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(sum[0] / sum[1]);
}

/* ---- output ----------------------------------------------------------- */

static FILE *g_csv;

/* Print @p text with "# " before each line to stdout and the CSV file. */
static void header_lines(const char *key, const char *text)
{
    const char *p = text;
    int first = 1;
    while (*p || first) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        FILE *outs[2] = {stdout, g_csv};
        for (int i = 0; i < 2; i++)
            if (outs[i] && first)
                fprintf(outs[i], "# %s = %.*s\n", key, len, p);
            else if (outs[i])
                fprintf(outs[i], "#   %.*s\n", len, p);
        first = 0;
        if (!nl)
            break;
        p = nl + 1;
    }
}

static void print_header(const char *papi_reason)
{
    char buf[1024];
    header_lines("program", FFT_PROG " (bench/fft, docs/fft.md)");
    snprintf(buf, sizeof buf, "%s, git %s", FFT_VERSION, FFT_GIT_HASH);
    header_lines("version", buf);
    header_lines("alltoall", opt.a2a->name);
    header_lines("library", opt.a2a->describe());
    snprintf(buf, sizeof buf, "%d", g_np);
    header_lines("ranks", buf);
    snprintf(buf, sizeof buf, "%s, planner %s, time limit %g s", fftw_version,
             opt.measure ? "FFTW_MEASURE" : "FFTW_ESTIMATE", opt.plan_time);
    header_lines("fftw", buf);
    snprintf(buf, sizeof buf,
             "2^%d .. 2^%d points, >= %d timed transforms (>= %g s, <= %d) "
             "after %d warm-up, tolerance %g",
             opt.min_log2, opt.max_log2, opt.reps, opt.min_time,
             opt.max_samples, opt.warmup, opt.tol);
    header_lines("sizes", buf);
    if (papi_reason) {
        snprintf(buf, sizeof buf, "counters not available: %s", papi_reason);
    } else {
        int len = snprintf(buf, sizeof buf, "counting");
        for (int s = 0; s < FFT_PAPI_NSLOTS; s++) {
            const char *ev = NULL;
            if (fft_papi_slot(s, &ev))
                len += snprintf(buf + len, sizeof buf - (size_t)len, " %s=%s",
                                fft_papi_columns[s], ev);
            else
                len += snprintf(buf + len, sizeof buf - (size_t)len, " %s=n/a",
                                fft_papi_columns[s]);
        }
    }
    header_lines("papi", buf);
    if (g_csv) {
        fprintf(g_csv,
                "impl,alltoall,ranks,n,log2n,n1,n2,bytes_per_rank,"
                "samples,gflops,total_s,alltoall_s,compute_s,alltoall_share,"
                "alltoall_per_compute,total_min_s,relerr,dfterr");
        for (int s = 0; s < FFT_PAPI_NSLOTS; s++)
            fprintf(g_csv, ",%s", fft_papi_columns[s]);
        fprintf(g_csv, "\n");
        fflush(g_csv);
    }
    if (!opt.quiet) {
        printf("%5s %10s %5s %8s %11s %11s %11s %6s %9s %9s %11s %11s %11s\n",
               "log2n", "n", "smpl", "Gflop/s", "total ms", "a2a ms",
               "compute ms", "a2a%", "relerr", "dfterr", "L1 miss", "L2 miss",
               "L3 miss");
        fflush(stdout);
    }
}

static void fmt_count(char *buf, size_t len, int slot, long long v)
{
    if (fft_papi_slot(slot, NULL))
        snprintf(buf, len, "%lld", v);
    else
        snprintf(buf, len, "%s", "");
}

/* ---- driver ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One size: returns 0 if the checks passed. */
static int run_size(int log2n)
{
    fft_t f;
    fft_setup(&f, log2n);
    fft_papi_start();
    sample_t s;
    for (int w = 0; w < opt.warmup; w++) {
        fill_input(&f);
        MPI_Barrier(MPI_COMM_WORLD);
        forward(&f, &s);
    }
    /* Per sample: this rank's total, alltoall, counters. */
    const int cap = opt.max_samples > opt.reps ? opt.max_samples : opt.reps;
    double *tot = calloc((size_t)cap, sizeof *tot);
    double *a2a = calloc((size_t)cap, sizeof *a2a);
    long long *pc = calloc((size_t)cap * FFT_PAPI_NSLOTS, sizeof *pc);
    double *tmax = calloc((size_t)cap, sizeof *tmax);
    double *tsum = calloc((size_t)cap, sizeof *tsum);
    double *asum = calloc((size_t)cap, sizeof *asum);
    long long *psum = calloc((size_t)cap * FFT_PAPI_NSLOTS, sizeof *psum);
    double *sorted = calloc((size_t)cap, sizeof *sorted);
    if (!tot || !a2a || !pc || !tmax || !tsum || !asum || !psum || !sorted)
        die("out of memory");
    /* At least --reps transforms, more until they add up to --min-time
     * (decided by the slowest rank, so that all ranks agree). */
    int nsamp = 0;
    double spent = 0;
    while (nsamp < cap && (nsamp < opt.reps || spent < opt.min_time)) {
        fill_input(&f);
        MPI_Barrier(MPI_COMM_WORLD);
        forward(&f, &s);
        tot[nsamp] = s.total;
        a2a[nsamp] = s.a2a;
        memcpy(pc + (size_t)nsamp * FFT_PAPI_NSLOTS, s.papi, sizeof s.papi);
        nsamp++;
        double mine = s.total, slowest;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        spent += slowest;
    }
    fft_papi_stop();
    /* A now holds F(x) from the last sample: check it. */
    if (opt.corrupt && g_me == 0)
        f.a[(uint64_t)13 % f.nloc] += 1e-6;
    double dfterr = check_dft(&f);
    double relerr = check_inverse(&f);

    MPI_Allreduce(tot, tmax, nsamp, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(tot, tsum, nsamp, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(a2a, asum, nsamp, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(pc, psum, nsamp * FFT_PAPI_NSLOTS, MPI_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    int ok = relerr <= opt.tol && dfterr <= opt.tol;
    if (g_me == 0) {
        memcpy(sorted, tmax, (size_t)nsamp * sizeof *sorted);
        qsort(sorted, (size_t)nsamp, sizeof *sorted, cmp_double);
        double med = sorted[(nsamp - 1) / 2];
        int mi = 0;
        while (mi < nsamp - 1 && tmax[mi] != med)
            mi++;
        double total = tsum[mi] / g_np, at = asum[mi] / g_np;
        double compute = total - at;
        double flops = 5.0 * (double)f.n * (double)log2n;
        double gflops = flops / tmax[mi] / 1e9;
        const long long *pp = psum + (size_t)mi * FFT_PAPI_NSLOTS;
        char cnt[FFT_PAPI_NSLOTS][32];
        for (int k = 0; k < FFT_PAPI_NSLOTS; k++)
            fmt_count(cnt[k], sizeof cnt[k], k, pp[k]);
        if (g_csv) {
            fprintf(g_csv,
                    "%s,%s,%d,%llu,%d,%llu,%llu,%llu,%d,%.6g,%.6e,"
                    "%.6e,%.6e,%.6g,%.6g,%.6e,%.3e,%.3e",
                    FFT_PROG, opt.a2a->name, g_np, (unsigned long long)f.n,
                    log2n, (unsigned long long)f.n1, (unsigned long long)f.n2,
                    (unsigned long long)(3 * f.nloc * sizeof(cplx)), nsamp,
                    gflops, total, at, compute, total > 0 ? at / total : 0,
                    compute > 0 ? at / compute : 0, sorted[0], relerr, dfterr);
            for (int k = 0; k < FFT_PAPI_NSLOTS; k++)
                fprintf(g_csv, ",%s", cnt[k]);
            fprintf(g_csv, "\n");
            fflush(g_csv);
        }
        if (!opt.quiet) {
            printf("%5d %10llu %5d %8.3f %11.4f %11.4f %11.4f %5.1f%% "
                   "%9.2e %9.2e %11s %11s %11s\n",
                   log2n, (unsigned long long)f.n, nsamp, gflops, total * 1e3,
                   at * 1e3, compute * 1e3, total > 0 ? 100 * at / total : 0,
                   relerr, dfterr, cnt[0][0] ? cnt[0] : "-",
                   cnt[1][0] ? cnt[1] : "-", cnt[2][0] ? cnt[2] : "-");
            fflush(stdout);
        }
        if (!ok)
            fprintf(stderr,
                    FFT_PROG
                    ": FAILED at 2^%d points (alltoall %s, "
                    "%d ranks): inverse relative error %.3e, DFT point "
                    "error %.3e, allowed %.1e\n",
                    log2n, opt.a2a->name, g_np, relerr, dfterr, opt.tol);
    }
    free(tot);
    free(a2a);
    free(pc);
    free(tmax);
    free(tsum);
    free(asum);
    free(psum);
    free(sorted);
    fft_teardown(&f);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, FFT_PROG ": MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_me);
    MPI_Comm_size(MPI_COMM_WORLD, &g_np);
    if (g_np & (g_np - 1) ||
        (uint64_t)g_np * (uint64_t)g_np > (1ULL << opt.min_log2)) {
        if (g_me == 0)
            fprintf(stderr,
                    FFT_PROG
                    ": %d ranks: the rank count must be a "
                    "power of two whose square is at most 2^--min-log2 "
                    "(2^%d)\n",
                    g_np, opt.min_log2);
        MPI_Finalize();
        return 2;
    }
    if (opt.a2a->init(&argc, &argv) != 0)
        die("starting the all-to-all library failed");
    const char *papi_reason = NULL;
    fft_papi_init(&papi_reason);
    if (g_me == 0) {
        if (opt.csv && !(g_csv = fopen(opt.csv, "w"))) {
            fprintf(stderr, FFT_PROG ": %s: %s\n", opt.csv, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (papi_reason)
            fprintf(stderr,
                    FFT_PROG ": PAPI: counters not available: %s; "
                             "the PAPI columns stay empty\n",
                    papi_reason);
        print_header(papi_reason);
    }
    int failed = 0;
    for (int k = opt.min_log2; k <= opt.max_log2; k++)
        failed |= run_size(k);
    if (opt.a2a->fini() != 0)
        die("stopping the all-to-all library failed");
    fftw_cleanup();
    if (g_csv)
        fclose(g_csv);
    MPI_Finalize();
    if (failed && g_me == 0)
        fprintf(stderr, FFT_PROG ": the correctness check failed (see "
                                 "above)\n");
    return failed ? 1 : 0;
}

/* ---- symmetric arrays of the put-based all-to-alls ------------------------ */

fft_sym_t *fft_sym_new(fft_sym_t *tab, int np, const char *lib)
{
    int slot = 0;
    while (slot < FFT_SYM_MAX && tab[slot].bases)
        slot++;
    if (slot == FFT_SYM_MAX) {
        fprintf(stderr, "fft: more than %d %s arrays\n", FFT_SYM_MAX, lib);
        return NULL;
    }
    tab[slot].local = NULL;
    tab[slot].bases = calloc((size_t)np, sizeof *tab[slot].bases);
    if (!tab[slot].bases) {
        fprintf(stderr, "fft: out of memory\n");
        return NULL;
    }
    return &tab[slot];
}

fft_sym_t *fft_sym_find(fft_sym_t *tab, const void *local, const char *what)
{
    for (int i = 0; i < FFT_SYM_MAX; i++)
        if (tab[i].bases && tab[i].local == local)
            return &tab[i];
    fprintf(stderr, "fft: %s memory not from alloc\n", what);
    return NULL;
}

void fft_sym_drop(fft_sym_t *e)
{
    free(e->bases);
    e->bases = NULL;
    e->local = NULL;
}

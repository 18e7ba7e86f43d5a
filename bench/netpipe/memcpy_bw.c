/* memcpy_bw.c - telemem-memcpy-bw: single-process copy bandwidth at the
 * netpipe sizes and at chosen source/destination offsets, the reference
 * ceiling for put bandwidth on one node (docs/benchmarks.md).
 *
 * docs/architecture.md notes that glibc's memcpy on this EPYC uses `rep movsb` for
 * mid-size copies and runs ~20x slower when the source is page-aligned and
 * the destination is not.  Message slots are page-aligned, so every copy
 * path is measured here at odd offsets too, with glibc's memcpy ("memcpy")
 * and with a plain vectorisable loop ("loop") that never uses rep movsb.
 * Output: '#' header lines, then the CSV layout of telemem-netpipe with
 * mode = <method>_s<src offset>_d<dst offset> and touch = 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench_common.h"

#define PROG "telemem-memcpy-bw"
#define PAGE 4096
#define MAX_SIZES 4096
#define MAX_PAIRS 32
#define MAX_SAMPLES 1000

/* A copy the compiler vectorises (no rep movsb): 32-byte blocks, then the
 * tail.  noinline so the per-call cost is comparable to memcpy's. */
__attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
static void loop_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t a, b, c, e;
        memcpy(&a, s + i, 8);
        memcpy(&b, s + i + 8, 8);
        memcpy(&c, s + i + 16, 8);
        memcpy(&e, s + i + 24, 8);
        memcpy(d + i, &a, 8);
        memcpy(d + i + 8, &b, 8);
        memcpy(d + i + 16, &c, 8);
        memcpy(d + i + 24, &e, 8);
    }
    for (; i < n; i++)
        d[i] = s[i];
}

/* glibc's memcpy behind the same signature (a tail call, no overhead). */
static void glibc_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

typedef void (*copy_fn)(void *, const void *, size_t);

static double time_copies(copy_fn fn, unsigned char *dst,
                          const unsigned char *src, size_t n, uint64_t reps)
{
    double t0 = bench_now();
    for (uint64_t r = 0; r < reps; r++) {
        fn(dst, src, n);
        /* The copies must happen: dst escapes on every round. */
        __asm__ __volatile__("" : : "r"(dst) : "memory");
    }
    return (bench_now() - t0) / (double)reps;
}

static void usage(FILE *f)
{
    fprintf(f,
"Usage: " PROG " [options]\n"
"\n"
"Copy bandwidth of glibc memcpy and of a plain loop, in one process, at\n"
"NetPIPE's sizes and at several source/destination offsets from a page\n"
"boundary.  Prints '#' header lines and then CSV:\n"
"  mode,touch,bytes,reps,usec_median,usec_min,mbps_median,mbps_max\n"
"with mode = <memcpy|loop>_s<src offset>_d<dst offset>, usec per copy and\n"
"mbps = MB/s (1e6 bytes/s) of bytes copied.\n"
"\n"
"Options:\n"
"  --min SIZE          smallest copy (default 1; sizes take k/m/g)\n"
"  --max SIZE          largest copy (default 8m)\n"
"  --sizes LIST        exact sizes instead of the schedule (e.g. 8,64k,1m)\n"
"  --perturbation N    +-N byte neighbours as NetPIPE (default 0)\n"
"  --offsets LIST      S:D pairs (default 0:0,0:1,1:0,1:1,0:63)\n"
"  --methods LIST      memcpy,loop (default both)\n"
"  --samples N         timed samples per size (default 9)\n"
"  --time SEC          seconds per size and pair (default 0.05)\n"
"  --output FILE       write to FILE instead of stdout\n"
"  -h, --help          this text\n"
"Exit status: 0 done, 1 failure, 2 bad arguments.\n");
}

static int fail_args(const char *msg, const char *val)
{
    fprintf(stderr, PROG ": %s '%s'\nTry '" PROG " --help'.\n", msg, val);
    return 2;
}

int main(int argc, char **argv)
{
    enum { O_MIN = 256, O_MAX, O_SIZES, O_PERT, O_OFFSETS, O_METHODS,
           O_SAMPLES, O_TIME, O_OUTPUT };
    static const struct option lo[] = {
        {"min", required_argument, NULL, O_MIN},
        {"max", required_argument, NULL, O_MAX},
        {"sizes", required_argument, NULL, O_SIZES},
        {"perturbation", required_argument, NULL, O_PERT},
        {"offsets", required_argument, NULL, O_OFFSETS},
        {"methods", required_argument, NULL, O_METHODS},
        {"samples", required_argument, NULL, O_SAMPLES},
        {"time", required_argument, NULL, O_TIME},
        {"output", required_argument, NULL, O_OUTPUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    static uint64_t sizes[MAX_SIZES];
    uint64_t min = 1, max = 8u << 20, v;
    uint32_t pert = 0, samples = 9;
    double tsize = 0.05;
    unsigned offs[MAX_PAIRS][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 63}};
    size_t npairs = 5, nsizes = 0;
    int use_memcpy = 1, use_loop = 1, explicit_sizes = 0, c;
    const char *output = NULL;
    char buf[1024];
    FILE *out = stdout;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case O_MIN:
        case O_MAX:
            if (bench_parse_u64(optarg, &v, 1) || v < 1 || v > (1ull << 30))
                return fail_args("bad size", optarg);
            *(c == O_MIN ? &min : &max) = v;
            break;
        case O_SIZES:
            if (strlen(optarg) >= sizeof buf)
                return fail_args("bad --sizes", optarg);
            strcpy(buf, optarg);
            nsizes = 0;
            for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t;
                 t = strtok_r(NULL, ",", &sv)) {
                if (bench_parse_u64(t, &v, 1) || v < 1 || v > (1ull << 30) ||
                    nsizes == MAX_SIZES)
                    return fail_args("bad --sizes", optarg);
                sizes[nsizes++] = v;
            }
            if (!nsizes)
                return fail_args("bad --sizes", optarg);
            explicit_sizes = 1;
            break;
        case O_PERT:
            if (bench_parse_u64(optarg, &v, 0) || v > 1000000)
                return fail_args("bad --perturbation", optarg);
            pert = (uint32_t)v;
            break;
        case O_OFFSETS:
            if (strlen(optarg) >= sizeof buf)
                return fail_args("bad --offsets", optarg);
            strcpy(buf, optarg);
            npairs = 0;
            for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t;
                 t = strtok_r(NULL, ",", &sv)) {
                char *colon = strchr(t, ':');
                uint64_t s, d;
                if (!colon || npairs == MAX_PAIRS)
                    return fail_args("bad --offsets", optarg);
                *colon = '\0';
                if (bench_parse_u64(t, &s, 0) || bench_parse_u64(colon + 1, &d, 0) ||
                    s >= PAGE || d >= PAGE)
                    return fail_args("bad --offsets (S:D, 0..4095)", optarg);
                offs[npairs][0] = (unsigned)s;
                offs[npairs][1] = (unsigned)d;
                npairs++;
            }
            if (!npairs)
                return fail_args("bad --offsets", optarg);
            break;
        case O_METHODS:
            use_memcpy = strstr(optarg, "memcpy") != NULL;
            use_loop = strstr(optarg, "loop") != NULL;
            if (!use_memcpy && !use_loop)
                return fail_args("bad --methods (memcpy, loop)", optarg);
            break;
        case O_SAMPLES:
            if (bench_parse_u64(optarg, &v, 0) || v < 1 || v > MAX_SAMPLES)
                return fail_args("bad --samples", optarg);
            samples = (uint32_t)v;
            break;
        case O_TIME: {
            char *end;
            tsize = strtod(optarg, &end);
            if (end == optarg || *end || !(tsize > 0))
                return fail_args("bad --time", optarg);
            break;
        }
        case O_OUTPUT:
            output = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            return fail_args("option needs a value:", argv[optind - 1]);
        default:
            return fail_args("unknown option", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fail_args("unexpected argument", argv[optind]);
    if (min > max)
        return fail_args("--min is larger than --max", "");
    if (!explicit_sizes)
        nsizes = bench_netpipe_sizes(min, max, pert, sizes, MAX_SIZES);
    uint64_t biggest = 0;
    for (size_t i = 0; i < nsizes; i++)
        biggest = sizes[i] > biggest ? sizes[i] : biggest;

    size_t bytes = (size_t)biggest + 2 * PAGE;
    unsigned char *src = NULL, *dst = NULL;
    double *t = calloc(samples, sizeof *t);
    if (posix_memalign((void **)&src, PAGE, bytes) ||
        posix_memalign((void **)&dst, PAGE, bytes) || !t) {
        fprintf(stderr, PROG ": out of memory (%zu bytes)\n", bytes);
        return 1;
    }
    for (size_t i = 0; i < bytes; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    memset(dst, 0, bytes);

    if (output && !(out = fopen(output, "w"))) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", output,
                strerror(errno));
        return 2;
    }
    {
        char date[64] = "unknown";
        time_t tt = time(NULL);
        struct tm tm;
        struct utsname un;
        if (gmtime_r(&tt, &tm))
            strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(out, "# " PROG "\n# buffers page-aligned + offset; hot "
                "cache (same buffers every copy)\n");
        fprintf(out, "# samples = %u, %.3g s per size\n", samples, tsize);
        const char *tun = getenv("GLIBC_TUNABLES");
        fprintf(out, "# GLIBC_TUNABLES = %s\n", tun ? tun : "(unset)");
        fprintf(out, "# date = %s\n# host = %s\n", date,
                uname(&un) == 0 ? un.nodename : "unknown");
        fprintf(out, "mode,touch,bytes,reps,usec_median,usec_min,"
                "mbps_median,mbps_max\n");
    }

    for (int m = 0; m < 2; m++) {
        if ((m == 0 && !use_memcpy) || (m == 1 && !use_loop))
            continue;
        copy_fn fn = m == 0 ? glibc_copy : loop_copy;
        for (size_t p = 0; p < npairs; p++) {
            unsigned char *s = src + offs[p][0], *d = dst + offs[p][1];
            for (size_t i = 0; i < nsizes; i++) {
                size_t n = (size_t)sizes[i];
                /* Calibrate on a short run, then time the samples. */
                uint64_t reps = 1;
                double one;
                while ((one = time_copies(fn, d, s, n, reps)) * reps < 1e-3 &&
                       reps < (1ull << 30))
                    reps *= 4;
                double r = tsize / samples / (one > 0 ? one : 1e-9);
                reps = r < 1 ? 1 : (uint64_t)r;
                double mn = 1e30;
                for (uint32_t k = 0; k < samples; k++) {
                    t[k] = time_copies(fn, d, s, n, reps);
                    mn = t[k] < mn ? t[k] : mn;
                }
                if (memcmp(d, s, n) != 0) {
                    fprintf(stderr, PROG ": copy of %zu bytes is wrong\n", n);
                    return 1;
                }
                qsort(t, samples, sizeof *t, bench_cmp_double);
                double md = samples % 2 ? t[samples / 2]
                                        : 0.5 * (t[samples / 2 - 1] +
                                                 t[samples / 2]);
                fprintf(out, "%s_s%u_d%u,0,%zu,%" PRIu64 ",%.4f,%.4f,%.2f,"
                        "%.2f\n", m == 0 ? "memcpy" : "loop", offs[p][0],
                        offs[p][1], n, reps, md * 1e6, mn * 1e6,
                        n / (md * 1e6), n / (mn * 1e6));
            }
        }
    }
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, PROG ": writing %s failed\n", output);
        return 1;
    }
    free(src);
    free(dst);
    free(t);
    return 0;
}

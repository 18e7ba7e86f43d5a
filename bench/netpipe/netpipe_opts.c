/* netpipe_opts.c - the NetPIPE benchmark's command line: --help text,
 * parsing and checking of every option into struct opts (netpipe_opts.h);
 * no library calls. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "netpipe_backend.h"
#include "netpipe_opts.h"

void np_usage(FILE *f)
{
    const struct nb_info *in = nb_info();
    fprintf(f,
"Usage: %s %s [options]\n"
"\n"
"NetPIPE-style benchmark of %s puts between two ranks (impl '%s').\n"
"Rank 0 prints a '#' header (version, git hash, library, configuration)\n"
"and then CSV:\n"
"  mode,touch,bytes,reps,usec_median,usec_min,mbps_median,mbps_max,impl,path\n"
"usec is the one-way time per message (half a round trip in latency mode,\n"
"time per put in burst and stream mode); mbps is MB/s (1e6 bytes/s) =\n"
"bytes/usec; median and min/max are over --samples timed samples.  impl\n"
"names the build (telemem, armci-telemem, armci-mpi, mpi) and path how\n"
"puts travel, so CSVs of all builds can be concatenated.\n"
"\n"
"With 2P ranks (P > 1), P pairs measure at once: rank r (role 0, the\n"
"rank 0 below) with rank r+P (role 1); each time is that of the slowest\n"
"pair.  Two hosts of P ranks each: P pairs across the network.\n"
"\n"
"Modes (--mode, a comma list; default all):\n"
"  latency  ping-pong: rank 0 puts N bytes into rank 1's block; rank 1\n"
"           waits until the message is there, then answers the same way.\n"
"  burst    rank 0 issues reps puts of N bytes back to back, then waits\n"
"           until all are complete at rank 1 (quiet / ARMCI_AllFence; MPI:\n"
"           rank 1's answer after the last receive); time per put measured\n"
"           by rank 0.\n"
"  stream   as burst, but no completion wait: rank 0 puts a flag after the\n"
"           data and rank 1 times from its go signal until it sees the flag.\n"
"  all      latency,burst,stream\n"
"With MPI (mpi-netpipe) every put is an MPI_Send matched by an MPI_Recv\n"
"the receiver posts into its message area, as NetPIPE's MPI module does.\n"
"\n"
"Options:\n"
"  --mode LIST          modes to run (latency, burst (alias bw), stream, all)\n"
"  --min SIZE           smallest message (default 1); sizes take k/m/g\n"
"  --max SIZE           largest message (default 8m)\n"
"  --perturbation N     also run N bytes below and above each size, as\n"
"                       NetPIPE's -p (default 3; 0 = none)\n"
"  --reps N             iterations per sample (default: automatic, so that\n"
"                       each size takes about --time seconds)\n"
"  --samples N          timed samples per size (default 9)\n"
"  --time SEC           seconds per size and mode with automatic reps\n"
"                       (default 0.25)\n"
"  --touch              read (sum) the whole message area before each send\n"
"                       and after each receive (the paper's Telemem* curve);\n"
"                       the checksum is printed at the end\n"
"  --check              verify a data pattern and guard bytes at the\n"
"                       receiver for a few untimed messages of each size\n"
"  --offset S[,D]       byte offset (0..%d) of rank 0's (S) and rank 1's (D)\n"
"                       buffers from a page boundary (default 0,0; one\n"
"                       value sets both)\n"
"  --window K           burst/stream: rotate over K target slots (default 1)\n"
"  --flag last|separate  latency: the receiver polls the last bytes of the\n"
"                       data (one put per message, as NetPIPE's one-sided\n"
"                       modules) or a flag sent as a second put (after a\n"
"                       fence where puts may land out of order); default:\n"
"                       %s\n"
"  --path am|direct|auto  Telemem builds: the path for puts: am sets\n"
"                       TELEMEM_DIRECT=never, direct =always, auto =auto\n"
"                       before the library starts (default: leave it\n"
"                       alone); the CSV's path column shows the path in effect\n"
"  --poll yes|no        call the library's progress call (telemem_poll,\n"
"                       ARMCIX_Progress) while waiting for a message\n"
"                       (default: %s)\n"
"  --max-seconds SEC    per mode: when behind schedule run only the powers\n"
"                       of two, and start no new size after SEC seconds\n"
"                       ('#' lines say what was left out; default: no\n"
"                       limit)\n"
"  --spin-timeout SEC   give up a flag wait after SEC seconds (default 120)\n"
"  --no-bind            do not pin the ranks (default: rank r runs on the\n"
"                       r-th CPU it may use, as mpirun --bind-to core;\n"
"                       pair p's ranks on the (2p)-th and (2p+1)-th)\n"
"  --quick              smoke test: --time 0.002 --samples 3 --check\n"
"  --output FILE        write the header and CSV to FILE (default stdout)\n"
"  -v, --verbose        progress lines on stderr (with Gbit/s)\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 done, 1 a library call or a data check failed, 2 bad\n"
"arguments or an odd number of ranks.\n", in->launch, in->prog,
            in->impl[0] == 'm' ? "MPI two-sided" :
            in->impl[0] == 'a' ? "ARMCI" : "Telemem",
            in->impl, MAX_OFFSET,
            in->ordered ? "last"
                        : "separate (this library's puts may land out of "
                          "order)",
            in->poll_default ? "yes" : "no (plain loads, as NetPIPE's "
                                       "ARMCI module)");
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

static int parse_modes(const char *s, uint32_t *out)
{
    uint32_t m = 0;
    char buf[128];
    if (!s || strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "latency") || !strcmp(t, "lat"))
            m |= MODE_LATENCY;
        else if (!strcmp(t, "burst") || !strcmp(t, "bw") ||
                 !strcmp(t, "bandwidth"))
            m |= MODE_BURST;
        else if (!strcmp(t, "stream"))
            m |= MODE_STREAM;
        else if (!strcmp(t, "all"))
            m |= MODE_ALL;
        else
            return -1;
    }
    if (!m)
        return -1;
    *out = m;
    return 0;
}

void np_parse_args(int argc, char **argv, struct opts *o)
{
    enum { O_MIN = 256, O_MAX, O_PERT, O_REPS, O_SAMPLES, O_TIME, O_TOUCH,
           O_CHECK, O_OFFSET, O_WINDOW, O_FLAG, O_SPIN, O_QUICK, O_OUTPUT,
           O_MODE, O_NOBIND, O_PATH, O_POLL, O_MAXSEC };
    static const struct option lo[] = {
        {"mode", required_argument, NULL, O_MODE},
        {"min", required_argument, NULL, O_MIN},
        {"max", required_argument, NULL, O_MAX},
        {"perturbation", required_argument, NULL, O_PERT},
        {"reps", required_argument, NULL, O_REPS},
        {"samples", required_argument, NULL, O_SAMPLES},
        {"time", required_argument, NULL, O_TIME},
        {"touch", no_argument, NULL, O_TOUCH},
        {"check", no_argument, NULL, O_CHECK},
        {"offset", required_argument, NULL, O_OFFSET},
        {"window", required_argument, NULL, O_WINDOW},
        {"flag", required_argument, NULL, O_FLAG},
        {"spin-timeout", required_argument, NULL, O_SPIN},
        {"quick", no_argument, NULL, O_QUICK},
        {"no-bind", no_argument, NULL, O_NOBIND},
        {"path", required_argument, NULL, O_PATH},
        {"max-seconds", required_argument, NULL, O_MAXSEC},
        {"poll", required_argument, NULL, O_POLL},
        {"output", required_argument, NULL, O_OUTPUT},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct knobs *k = &o->k;
    int have_time = 0, have_samples = 0, quick = 0, c;
    uint64_t v;

    memset(o, 0, sizeof *o);
    k->min = 1;
    k->max = 8u << 20;
    k->pert = 3;
    k->samples = 9;
    k->time = 0.25;
    k->spin_timeout = 120;
    k->window = 1;
    /* --flag last where the library makes it safe (netpipe_backend.h) */
    k->inline_flag = nb_info()->ordered;
    k->modes = MODE_ALL;
    k->bind = 1;
    k->poll = nb_info()->poll_default;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":vh", lo, NULL)) != -1) {
        switch (c) {
        case O_MODE:
            if (parse_modes(optarg, &k->modes))
                bad(o, "bad --mode '%s' (expected a comma list of latency, "
                    "burst, stream, all)", optarg);
            break;
        case O_MIN:
        case O_MAX:
            if (bench_parse_u64(optarg, &v, 1) || v < 1 || v > MAX_SIZE)
                bad(o, "bad --%s '%s' (expected a size from 1 to 1g, e.g. "
                    "4096, 64k, 8m)", c == O_MIN ? "min" : "max", optarg);
            else if (c == O_MIN)
                k->min = v;
            else
                k->max = v;
            break;
        case O_PERT:
            if (bench_parse_u64(optarg, &v, 0) || v > 1000000)
                bad(o, "bad --perturbation '%s' (expected 0..1000000)",
                    optarg);
            else
                k->pert = (uint32_t)v;
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
        case O_MAXSEC:
            if (parse_seconds(optarg, &k->max_seconds))
                bad(o, "bad --max-seconds '%s' (expected seconds > 0)",
                    optarg);
            break;
        case O_SPIN:
            if (parse_seconds(optarg, &k->spin_timeout))
                bad(o, "bad --spin-timeout '%s' (expected seconds > 0)",
                    optarg);
            break;
        case O_TOUCH:
            k->touch = 1;
            break;
        case O_CHECK:
            k->check = 1;
            break;
        case O_OFFSET: {
            uint64_t s, d;
            char buf[64], *comma;
            if (strlen(optarg) >= sizeof buf) {
                bad(o, "bad --offset '%s'", optarg);
                break;
            }
            strcpy(buf, optarg);
            comma = strchr(buf, ',');
            if (comma)
                *comma = '\0';
            if (bench_parse_u64(buf, &s, 0) || s > MAX_OFFSET ||
                (comma && (bench_parse_u64(comma + 1, &d, 0) || d > MAX_OFFSET)))
                bad(o, "bad --offset '%s' (expected S or S,D with values "
                    "0..%d)", optarg, MAX_OFFSET);
            else {
                k->off[0] = (uint32_t)s;
                k->off[1] = (uint32_t)(comma ? d : s);
            }
            break;
        }
        case O_WINDOW:
            if (bench_parse_u64(optarg, &v, 0) || v < 1 || v > MAX_WINDOW)
                bad(o, "bad --window '%s' (expected 1..%d)", optarg,
                    MAX_WINDOW);
            else
                k->window = (uint32_t)v;
            break;
        case O_FLAG:
            if (!strcmp(optarg, "separate"))
                k->inline_flag = 0;
            else if (!strcmp(optarg, "last"))
                k->inline_flag = 1;
            else
                bad(o, "bad --flag '%s' (expected last or separate)",
                    optarg);
            break;
        case O_QUICK:
            quick = 1;
            break;
        case O_NOBIND:
            k->bind = 0;
            break;
        case O_PATH:
            if (strcmp(optarg, "am") && strcmp(optarg, "direct") &&
                strcmp(optarg, "auto"))
                bad(o, "bad --path '%s' (expected am, direct or auto)",
                    optarg);
            else if (!nb_info()->has_path)
                bad(o, "--path applies to the Telemem builds only "
                    "(telemem-netpipe, armci-netpipe)");
            else /* the path, as TELEMEM_DIRECT says it */
                o->path = !strcmp(optarg, "am")       ? "never"
                          : !strcmp(optarg, "direct") ? "always"
                                                      : "auto";
            break;
        case O_POLL:
            if (!strcmp(optarg, "yes") || !strcmp(optarg, "y") ||
                !strcmp(optarg, "1"))
                k->poll = 1;
            else if (!strcmp(optarg, "no") || !strcmp(optarg, "n") ||
                     !strcmp(optarg, "0"))
                k->poll = 0;
            else
                bad(o, "bad --poll '%s' (expected yes or no)", optarg);
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
            k->time = 0.002;
        if (!have_samples)
            k->samples = 3;
        k->check = 1;
    }
    if (k->min > k->max)
        bad(o, "--min %" PRIu64 " is larger than --max %" PRIu64, k->min,
            k->max);
}

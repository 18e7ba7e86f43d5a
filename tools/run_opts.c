/* run_opts.c - telemem-run's command line: the help text, the options
 * into J (run.h), a usage error, and the program to run found as execvp
 * would. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

enum {
    OPT_TIMEOUT = 256,
    OPT_KEEP,
    OPT_TAG,
    OPT_BIND,
    OPT_VERSION,
    OPT_RSH,
    OPT_KVS_ADDR,
    OPT_CALIBRATE,
    OPT_QUICK
};

/* --calibrate and its options, run once the whole line is read. */
static int calibrate;
static run_cal_t cal;

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "Usage: telemem-run -n N [options] [--] prog [args...]\n"
        "       telemem-run -H host:slots,... [-n N] [--rsh CMD] [options] "
        "prog ...\n"
        "Start N ranks of prog on this host (or on the hosts of -H) with a\n"
        "built-in key-value store.\n"
        "\n"
        "Options:\n"
        "  -n, --np N         number of ranks, 1..%d (required without -H; "
        "with -H\n"
        "                     at most the slots, default all slots)\n"
        "  -H, --hosts LIST   hosts and their slots, e.g. node1:2,node2:2; "
        "ranks fill\n"
        "                     the slots in order.  localhost (or this host's "
        "name)\n"
        "                     is started directly, the others through --rsh\n"
        "      --rsh CMD      remote shell (default \"ssh %%h\"): %%h becomes "
        "the\n"
        "                     host (else it is appended); the rank's command "
        "follows\n"
        "                     as one shell-quoted word, e.g. --rsh \"ip netns "
        "exec\n"
        "                     %%h sh -c\" for network namespaces.  TELEMEM_*, "
        "UCX_*,\n"
        "                     FI_*, *SAN_OPTIONS, PATH and LD_LIBRARY_PATH "
        "are\n"
        "                     forwarded\n"
        "      --kvs-addr IP  the store listens on TCP at exactly this "
        "address\n"
        "                     (default: with remote hosts in -H, the first\n"
        "                     non-loopback IPv4 address; else a Unix socket in "
        "a\n"
        "                     directory only this user can enter)\n"
        "      --timeout SEC  kill the whole job after SEC seconds (exit "
        "status 124)\n"
        "      --keep-going   when a rank fails, let the others run to their "
        "end\n"
        "      --tag-output   prefix every output line of rank r with \"[r] "
        "\"\n"
        "      --bind core|none  core: pin rank r to the r-th CPU the launcher "
        "may\n"
        "                     use; none: never pin.  Default: one rank per CPU "
        "on\n"
        "                     CPUs found idle at start when all ranks fit "
        "there,\n"
        "                     else no pinning (-v says which)\n"
        "  -v, --verbose      report job start, ranks, store activity and "
        "exits\n"
        "      --calibrate[=PROFILE]  measure the AM and direct paths between "
        "2\n"
        "                     ranks on this node (over TELEMEM_TRANSPORT if "
        "set) and\n"
        "                     write the crossover sizes TELEMEM_DIRECT=auto "
        "reads\n"
        "                     (default PROFILE: TELEMEM_DIRECT_PROFILE, else\n"
        "                     $XDG_CACHE_HOME or ~/.cache "
        "/telemem/direct.profile;\n"
        "                     docs/direct.md), then exit.  With -H: between "
        "one\n"
        "                     rank on each of its first two hosts (--rsh,\n"
        "                     --kvs-addr, --timeout apply), the network "
        "transport's\n"
        "                     driver, its line keyed by the provider opened\n"
        "                     (ofi-rma@tcp;ofi_rxm, ucx-rma@tcp); the profile "
        "is\n"
        "                     written on the first host\n"
        "      --quick        with --calibrate: a few sizes and samples, for "
        "tests\n"
        "  -h, --help         print this help and exit\n"
        "      --version      print the version and exit\n"
        "\n"
        "Each rank gets TELEMEM_RANK, TELEMEM_NRANKS, TELEMEM_KVS (the store:\n"
        "unix:PATH or host:port), TELEMEM_JOBID and TELEMEM_KVS_SECRET (the "
        "job's\n"
        "random secret, which a rank proves to join the store; ranks on other\n"
        "hosts read it from the remote shell's stdin, never from a command "
        "line),\n"
        "runs in its own process group, and reads stdin only if it is rank 0 "
        "(the\n"
        "others read /dev/null).\n"
        "\n"
        "Exit status: 0 if every rank exited 0; otherwise that of the first "
        "rank\n"
        "that failed (128+N if killed by signal N), or the status a rank "
        "passed\n"
        "when it aborted the job.  Without --keep-going the first failure ends "
        "the\n"
        "job: SIGTERM to every rank, SIGKILL %g s later.  124: --timeout "
        "expired;\n"
        "125: launcher error; 127: prog not found; 2: bad usage; 128+N: the\n"
        "launcher got signal N (SIGINT, SIGTERM, SIGHUP) and ended the job.\n",
        MAX_RANKS, KILL_GRACE);
}

void run_bad_usage(const char *fmt, ...)
{
    va_list ap;
    fputs("telemem-run: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'telemem-run --help' for more information.\n", stderr);
    exit(EXIT_USAGE);
}

/* One option of run_parse_args: c as getopt_long returned it; *slots
 * becomes the slots of -H. */
static void parse_opt(int c, char **argv, int *slots)
{
    char *end;
    switch (c) {
    case 'n': {
        errno = 0;
        long v = strtol(optarg, &end, 10);
        if (errno || end == optarg || *end || v < 1 || v > MAX_RANKS)
            run_bad_usage("-n: '%s' is not a rank count in 1..%d", optarg,
                          MAX_RANKS);
        J.n = (int)v;
        break;
    }
    case OPT_TIMEOUT:
        errno = 0;
        J.timeout = strtod(optarg, &end);
        if (errno || end == optarg || *end || !(J.timeout > 0) ||
            J.timeout > 1e9)
            run_bad_usage("--timeout: '%s' is not a positive number of "
                          "seconds", optarg);
        break;
    case 'H':
        if (!J.hosts)
            J.hosts = run_xrealloc(NULL, MAX_HOSTS * sizeof(*J.hosts));
        J.nhosts = 0;
        cal.hosts = optarg;
        *slots = run_hosts_parse(optarg);
        if (*slots < 0)
            run_bad_usage("-H: '%s' is not a list of host[:slots] (slots "
                          "1..%d, at most %d hosts)", optarg, MAX_RANKS,
                          MAX_HOSTS);
        break;
    case OPT_RSH:
        if (!*optarg)
            run_bad_usage("--rsh: empty command");
        J.rsh = optarg;
        break;
    case OPT_KVS_ADDR: {
        struct in_addr ia;
        if (inet_pton(AF_INET, optarg, &ia) != 1)
            run_bad_usage("--kvs-addr: '%s' is not an IPv4 address", optarg);
        J.kvs_host = optarg;
        break;
    }
    case OPT_KEEP:
        J.keep_going = 1;
        break;
    case OPT_TAG:
        J.tag_output = 1;
        break;
    case OPT_BIND:
        if (strcmp(optarg, "core") == 0)
            J.bind = 1;
        else if (strcmp(optarg, "none") == 0)
            J.bind = 0;
        else
            run_bad_usage("--bind: '%s' is not core or none", optarg);
        break;
    case 'v':
        J.verbose = 1;
        break;
    case 'h':
        usage(stdout);
        exit(0);
    case OPT_VERSION:
        printf("telemem-run " RUN_VERSION "\n");
        exit(0);
    case OPT_CALIBRATE:
        calibrate = 1;
        cal.profile = optarg;
        break;
    case OPT_QUICK:
        cal.quick = 1;
        break;
    case ':':
        run_bad_usage("option '%s' needs an argument", argv[optind - 1]);
        break;
    default:
        if (optopt && optopt < 256)
            run_bad_usage("unknown option '-%c'", optopt);
        run_bad_usage("unknown option '%s'", argv[optind - 1]);
    }
}

void run_parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"np", required_argument, NULL, 'n'},
        {"hosts", required_argument, NULL, 'H'},
        {"rsh", required_argument, NULL, OPT_RSH},
        {"kvs-addr", required_argument, NULL, OPT_KVS_ADDR},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"keep-going", no_argument, NULL, OPT_KEEP},
        {"tag-output", no_argument, NULL, OPT_TAG},
        {"bind", required_argument, NULL, OPT_BIND},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"calibrate", optional_argument, NULL, OPT_CALIBRATE},
        {"quick", no_argument, NULL, OPT_QUICK},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    J.n = -1;
    J.rsh = "ssh %h";
    int slots = -1;
    J.bind = -1; /* decided below from the rank and CPU counts */
    for (;;) {
        int c = getopt_long(argc, argv, "+:n:H:vh", longopts, NULL);
        if (c == -1)
            break;
        parse_opt(c, argv, &slots);
    }
    if (cal.quick && !calibrate)
        run_bad_usage("--quick needs --calibrate");
    if (calibrate) {
        if (cal.hosts && J.nhosts < 2)
            run_bad_usage("--calibrate with -H needs two hosts");
        cal.rsh = J.rsh;
        cal.kvs_addr = J.kvs_host;
        cal.timeout = J.timeout;
        run_calibrate(&cal);
    }
    if (J.nhosts) {
        if (J.n < 0)
            J.n = slots;
        else if (J.n > slots)
            run_bad_usage("-n %d: the hosts of -H have only %d slots", J.n,
                          slots);
    }
    if (J.n < 0)
        run_bad_usage("the number of ranks is missing (-n N)");
    if (sched_getaffinity(0, sizeof(J.cpus), &J.cpus) != 0)
        CPU_ZERO(&J.cpus);
    J.ncpus = CPU_COUNT(&J.cpus);
    if (optind >= argc)
        run_bad_usage("the program to run is missing");
    J.argv = argv + optind;
}

/* Find prog as execvp would; exit 127 naming it when that fails. */
void run_resolve_prog(const char *prog)
{
    struct stat st;
    if (prog[0] == '\0') {
        run_say("the program name is empty");
        exit(EXIT_NOTFOUND);
    }
    if (strchr(prog, '/')) {
        if (stat(prog, &st) < 0) {
            run_say("%s: %s", prog, strerror(errno));
            exit(EXIT_NOTFOUND);
        }
        if (!S_ISREG(st.st_mode) || access(prog, X_OK) < 0) {
            run_say("%s: %s", prog,
                    S_ISDIR(st.st_mode) ? "is a directory" : "not executable");
            exit(EXIT_NOTFOUND);
        }
        J.path = strdup(prog);
        return;
    }
    const char *pathvar = getenv("PATH");
    if (pathvar == NULL || !*pathvar)
        pathvar = "/usr/local/bin:/usr/bin:/bin";
    int found_noexec = 0;
    for (const char *p = pathvar;;) {
        const char *e = strchr(p, ':');
        size_t dl = e ? (size_t)(e - p) : strlen(p);
        char *cand = run_xrealloc(NULL, dl + strlen(prog) + 3);
        if (dl == 0)
            sprintf(cand, "./%s", prog);
        else
            sprintf(cand, "%.*s/%s", (int)dl, p, prog);
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(cand, X_OK) == 0) {
                J.path = cand;
                return;
            }
            found_noexec = 1;
        }
        free(cand);
        if (!e)
            break;
        p = e + 1;
    }
    run_say("%s: %s", prog,
            found_noexec ? "not executable" : "command not found");
    exit(EXIT_NOTFOUND);
}

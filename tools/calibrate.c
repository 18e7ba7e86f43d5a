/* calibrate.c - telemem-calibrate: one phase of `telemem-run --calibrate`.
 * Rank 0 times contiguous puts and strided puts (rows of several lengths)
 * into rank 1's telemem_malloc_all block.  Phase "am" (run with
 * TELEMEM_DIRECT=never) writes its times to a file; phase "direct" (run
 * with TELEMEM_DIRECT=always) reads them, finds the crossover sizes and
 * writes the profile line of the driver in use (docs/direct.md).  Before
 * them, phases "copy" (TELEMEM_SHM_CMA=n) and "pull" (every size pulled)
 * time contiguous puts on the polling path and write the shared-memory
 * pull threshold, "shm-pull <bytes> 0"; phase "map" times, alternating in
 * one job, puts from private memory (copied twice) and from rank 0's own
 * block (pulled with memcpy by rank 1, which maps it) and writes
 * "shm-map <bytes> 0" (docs/shm.md).  Phases "coll-one" and "coll-split"
 * run with many ranks and write the collectives' "coll-reduce-split"
 * line (docs/coll.md).  --quick times a few sizes; --net (ranks on two
 * hosts) keys the line by the network's driver and its provider. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "telemem.h"


static const size_t contig[] = {8, 64, 512, 1024, 2048, 4096, 8192, 16384,
                                32768, 65536, 131072, 262144, 524288,
                                1048576, 4194304};
static const size_t rows[] = {8, 16, 32, 64, 256, 1024, 4096, 16384, 65536};
#define NC (sizeof(contig) / sizeof(contig[0]))
#define NR (sizeof(rows) / sizeof(rows[0]))
#define STRIDED_TOTAL (512 * 1024)
#define PULL_MIN 4096

/* --quick: a few sizes, 3 samples of shorter bursts (a test's run: the
 * lines it writes are not worth keeping). */
static bool quick;
/* --net: the phases between two hosts, the network's driver (the first
 * with a provider in the configuration text). */
static bool net;
static const size_t quick_sizes[] = {8, 4096, 65536, 1048576};

/* Whether size is timed (every size, or --quick's few). */
static bool timed(size_t size)
{
    for (size_t i = 0; quick && i < sizeof(quick_sizes) / sizeof(size_t); i++)
        if (quick_sizes[i] == size)
            return true;
    return !quick;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: telemem-calibrate [--quick] [--net] am FILE | direct FILE "
        "PROFILE |\n"
        "       copy FILE | pull FILE PROFILE | map PROFILE | coll-one FILE |\n"
        "       coll-split FILE PROFILE\n"
        "One phase of `telemem-run --calibrate` (run that instead): with 2 "
        "ranks,\n"
        "rank 0 times puts into rank 1's memory.  am: write the times (run "
        "with\n"
        "TELEMEM_DIRECT=never) to FILE.  direct: compare with FILE (run with\n"
        "TELEMEM_DIRECT=always) and write the crossover sizes of the driver in "
        "use\n"
        "to PROFILE, keeping the other drivers' lines.  copy, pull: the same "
        "for\n"
        "contiguous puts over shared memory with two copies "
        "(TELEMEM_SHM_CMA=n) and\n"
        "pulled (TELEMEM_SHM_CMA_THRESHOLD=1); pull writes the \"shm-pull\" "
        "line.\n"
        "map: copied twice from private memory against pulled from a block "
        "the\n"
        "target maps, alternating in one job (TELEMEM_SHM_MAP_THRESHOLD=1,\n"
        "TELEMEM_SHM_CMA_THRESHOLD=1t); writes the \"shm-map\" line.\n"
        "coll-one, coll-split: with many ranks on this node, allreduces of "
        "one\n"
        "node piece reduced by one rank "
        "(TELEMEM_COLL_THRESHOLD=reduce-split:1t)\n"
        "and by every rank (reduce-split:1); coll-split writes the\n"
        "\"coll-reduce-split\" line.\n"
        "The direct phase's line is keyed by the driver and, for a network "
        "driver,\n"
        "the provider it opened: \"ofi-rma@tcp;ofi_rxm\", \"ucx-rma@tcp\" (a "
        "driver\n"
        "that declines rank 1 gets thresholds that no size reaches).\n"
        "--quick: sizes 8 B, 4 KiB, 64 KiB, 1 MiB (rows 8 B, 4 KiB, 64 KiB), "
        "3\n"
        "samples of shorter bursts: for tests, not for a profile to keep.\n"
        "--net: rank 1 is on another host: the line of the network's driver "
        "(the\n"
        "first with a provider) rather than the first driver's.\n");
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One sample: seconds per put, a burst of puts (8 MiB, --quick 1 MiB, and
 * at least 2; cut short after BURST_MAX s, --quick QUICK_BURST_MAX s: a
 * network driver's 8-byte puts took 110 us each, 2026-11-29) then
 * quiet. */
#define BURST_MAX 0.25
#define QUICK_BURST_MAX 0.02
static double sample_puts(int peer, char *remote, char *local, size_t row,
                          size_t total)
{
    size_t count[2] = {row, total / row};
    size_t lstr[1] = {row + 64}, rstr[1] = {row + 128};
    int reps = (int)((quick ? 1048576 : 8 * 1048576) / total) + 2, i;
    double t0 = now(), limit = quick ? QUICK_BURST_MAX : BURST_MAX;
    for (i = 0; i < reps; i++) {
        int rc = row == total ? telemem_put(peer, remote, local, total)
                              : telemem_put_strided(peer, remote, rstr, local,
                                                    lstr, count, 1);
        if (rc != TELEMEM_OK) {
            fprintf(stderr, "telemem-calibrate: put: %s\n",
                    telemem_strerror(rc));
            exit(1);
        }
        /* the clock read now and then only: a put here can take 0.1 us */
        if (i >= 1 && ((i & 63) == 63 || total >= 4096) && now() - t0 > limit) {
            i++;
            break;
        }
    }
    telemem_quiet();
    return (now() - t0) / i;
}

/* Median of 7 samples from local (and, when b is not NULL, of 7 from b
 * taken in turn with them, to *tb: both under the same load). */
static double time_puts2(int peer, char *remote, char *local, char *b,
                         size_t row, size_t total, double *tb)
{
    double t[7], u[7];
    int n = quick ? 3 : 7;
    for (int s = 0; s < n; s++) {
        t[s] = sample_puts(peer, remote, local, row, total);
        if (b)
            u[s] = sample_puts(peer, remote, b, row, total);
    }
    qsort(t, (size_t)n, sizeof(t[0]), cmp_d);
    if (b) {
        qsort(u, (size_t)n, sizeof(u[0]), cmp_d);
        *tb = u[n / 2];
    }
    return t[n / 2];
}

static double time_puts(int peer, char *remote, char *local, size_t row,
                        size_t total)
{
    return time_puts2(peer, remote, local, NULL, row, total, NULL);
}

static double lesser(double a, double b)
{
    return a < b ? a : b;
}

/* The threshold (a size measured: from it on the second path, dr; below
 * it the first, am) that costs least over the sizes measured, each size
 * counting its chosen time over the faster one's: one noisy size moves
 * it little (the rule "never slower from here up" let one size decide:
 * a direct put 4x faster at 4-16 KiB lost its path to 8% at 1 MiB).
 * 1: every size (the smallest measured first); SIZE_MAX: none.  Ties
 * keep the first path. */
static size_t crossover(const size_t *sz, const double *am, const double *dr,
                        size_t n)
{
    size_t best = SIZE_MAX;
    double cost = 0, least;
    for (size_t i = 0; i < n; i++)
        cost += am[i] > 0 && dr[i] > 0 ? am[i] / lesser(am[i], dr[i]) : 1;
    least = cost;
    for (size_t j = n; j-- > 0;) {
        if (am[j] > 0 && dr[j] > 0)
            cost += (dr[j] - am[j]) / lesser(am[j], dr[j]);
        if (cost < least - 1e-9) {
            least = cost;
            best = j == 0 ? 1 : sz[j];
        }
    }
    return best;
}

static int write_profile(const char *path, const char *driver, size_t thr,
                         size_t row)
{
    char *keep = NULL;
    size_t klen = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        while ((len = getline(&line, &cap, f)) > 0) {
            /* Drop comments and this driver's old lines: their first word
             * after blanks, as the library reads it (util_profile.c; it
             * takes the first line of a name, so an old one kept would
             * win over the new one written last). */
            const char *n = line + strspn(line, " \t");
            size_t w = strcspn(n, " \t\r\n");
            if (line[0] == '#' ||
                (w == strlen(driver) && !strncmp(n, driver, w)))
                continue;
            bool nl = line[len - 1] == '\n'; /* the last may lack one */
            char *k = realloc(keep, klen + (size_t)len + 2);
            if (!k) {
                fprintf(stderr, "telemem-calibrate: out of memory\n");
                free(line);
                free(keep);
                fclose(f);
                return 1;
            }
            keep = k;
            memcpy(keep + klen, line, (size_t)len);
            klen += (size_t)len;
            if (!nl)
                keep[klen++] = '\n';
            keep[klen] = '\0';
        }
        free(line);
        fclose(f);
    }
    /* Written beside it and renamed over it (below): a job starting
     * meanwhile reads the old profile or the new one, never half of one. */
    char tmp[4096], dir[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >=
        (int)sizeof(tmp)) {
        fprintf(stderr, "telemem-calibrate: %s: path too long\n", path);
        free(keep);
        return 1;
    }
    /* mkdir -p of the profile's directory. */
    snprintf(dir, sizeof(dir), "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "telemem-calibrate: mkdir %s: %s\n", dir,
                    strerror(errno));
            free(keep);
            return 1;
        }
        *p = '/';
    }
    f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "telemem-calibrate: %s: %s\n", tmp, strerror(errno));
        free(keep);
        return 1;
    }
    fprintf(f, "# telemem direct-path profile, written by telemem-run "
               "--calibrate (docs/direct.md)\n"
               "# driver  threshold-bytes  strided-row-threshold-bytes\n");
    if (keep)
        fputs(keep, f);
    fprintf(f, "%s %zu %zu\n", driver, thr, row);
    free(keep);
    errno = 0;
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        fprintf(stderr, "telemem-calibrate: writing %s: %s\n", path,
                strerror(errno ? errno : EIO));
        unlink(tmp);
        return 1;
    }
    return 0;
}

/* The crossover of pulled times tc against copied ones ac to the profile
 * as "<key> <bytes> 0". */
static int pull_line(const char *profile, const char *key, const double *ac,
                     const double *tc)
{
    printf("# shm: bytes, usec per put copied twice, pulled\n");
    for (size_t i = 0; i < NC; i++)
        if (contig[i] >= PULL_MIN)
            printf("contig %8zu %10.3f %10.3f\n", contig[i], ac[i] * 1e6,
                   tc[i] * 1e6);
    /* Only the sizes timed: below PULL_MIN neither side was measured,
     * so a pull that wins at PULL_MIN says nothing about 8-byte puts. */
    size_t k = 0;
    while (k < NC && contig[k] < PULL_MIN)
        k++;
    size_t thr = crossover(contig + k, ac + k, tc + k, NC - k);
    if (thr == 1)
        thr = contig[k];
    printf("%s: threshold %zu -> %s\n", key, thr, profile);
    return write_profile(profile, key, thr, 0);
}

/* Phase pull: the copy phase's times from file against these (tc). */
static int pull_phase(const char *file, const char *profile, const double *tc)
{
    double ac[NC] = {0};
    FILE *f = fopen(file, "r");
    char kind[16];
    size_t sz;
    double t;
    while (f && fscanf(f, "%15s %zu %lf", kind, &sz, &t) == 3)
        for (size_t i = 0; i < NC; i++)
            if (!strcmp(kind, "contig") && contig[i] == sz)
                ac[i] = t;
    if (!f) {
        fprintf(stderr, "telemem-calibrate: the copy phase left no times\n");
        return 1;
    }
    fclose(f);
    return pull_line(profile, "shm-pull", ac, tc);
}

/* The profile key of the driver the puts took, from the configuration
 * text: "direct path window (shm): ..." gives "window", "direct path
 * ofi-rma (ofi, provider tcp;ofi_rxm): ..." "ofi-rma@tcp;ofi_rxm" (the
 * first line, or with --net the first with a provider: the network's
 * driver beside shm's).  *declined: the library said the driver declines
 * rank 1 (its times are the AM path's).  0, or -1 when there is none. */
static int driver_key(char *out, size_t n, bool *declined)
{
    const char *c = telemem_config_string();
    while ((c = strstr(c, "direct path ")) != NULL) {
        char name[64], tp[64] = "", prov[64] = "";
        c += strlen("direct path ");
        if (sscanf(c, "%63s (%63[^,)], provider %63[^)])", name, tp, prov) < 2)
            continue;
        if (net && !prov[0])
            continue;
        snprintf(out, n, prov[0] ? "%s@%s" : "%s", name, prov);
        char said[96];
        snprintf(said, sizeof(said), "direct path %s: declines", name);
        *declined = strstr(telemem_config_string(), said) != NULL;
        return 0;
    }
    return -1;
}

/* Phase am (and copy, without the rows): this phase's times tc (contiguous)
 * and tr (strided rows) to file, for the direct (or pull) phase. */
static int am_phase(const char *file, const double *tc, const double *tr,
                    int copy)
{
    FILE *f = fopen(file, "w");
    if (!f) {
        fprintf(stderr, "telemem-calibrate: %s: %s\n", file,
                strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < NC; i++)
        fprintf(f, "contig %zu %.9g\n", contig[i], tc[i]);
    for (size_t i = 0; i < NR && !copy; i++)
        fprintf(f, "row %zu %.9g\n", rows[i], tr[i]);
    fclose(f);
    return 0;
}

/* Phase direct: the am phase's times from file against these (tc, tr);
 * the crossovers go to the profile as the driver's line. */
static int direct_phase(const char *file, const char *profile,
                        const double *tc, const double *tr)
{
    double ac[NC] = {0}, ar[NR] = {0};
    FILE *f = fopen(file, "r");
    char kind[16];
    size_t sz;
    double t;
    while (f && fscanf(f, "%15s %zu %lf", kind, &sz, &t) == 3) {
        for (size_t i = 0; i < NC; i++)
            if (!strcmp(kind, "contig") && contig[i] == sz)
                ac[i] = t;
        for (size_t i = 0; i < NR; i++)
            if (!strcmp(kind, "row") && rows[i] == sz)
                ar[i] = t;
    }
    if (f)
        fclose(f);
    char drv[160];
    bool declined = false;
    if (!f || driver_key(drv, sizeof(drv), &declined) != 0) {
        fprintf(stderr, "telemem-calibrate: %s\n", !f
                ? "the am phase left no times"
                : "no direct-path driver reaches rank 1");
        return 1;
    }
    printf("# %s: bytes, usec per put over AM, direct\n", drv);
    for (size_t i = 0; i < NC; i++)
        printf("contig %8zu %10.3f %10.3f\n", contig[i],
               ac[i] * 1e6, tc[i] * 1e6);
    for (size_t i = 0; i < NR; i++)
        printf("row    %8zu %10.3f %10.3f (%d KiB strided)\n",
               rows[i], ar[i] * 1e6, tr[i] * 1e6,
               STRIDED_TOTAL / 1024);
    size_t thr = crossover(contig, ac, tc, NC);
    size_t row = crossover(rows, ar, tr, NR);
    if (declined) {
        /* Both columns timed the AM path: the driver takes none. */
        printf("%s declines rank 1: every transfer takes the AM path\n", drv);
        thr = row = SIZE_MAX;
    }
    printf("%s: threshold %zu, strided row threshold %zu -> %s\n",
           drv, thr, row, profile);
    return write_profile(profile, drv, thr, row);
}

/* ---- phases coll-one, coll-split: the node's allreduce pieces --------
 * With n ranks on this node, allreduces of one piece each (docs/coll.md:
 * pieces of up to 1 MiB, TELEMEM_COLL_NODE_MEM over 2 (n + 1) slots), the
 * last rank to arrive reducing it (coll-one, reduce-split set out of
 * reach) or every rank a stripe (coll-split, reduce-split:1).  The
 * crossover over ranks x piece bytes is the profile's line
 * "coll-reduce-split <bytes>". */
static const size_t coll_piece[] = {16384, 65536, 262144, 983040};
#define NCP (sizeof(coll_piece) / sizeof(coll_piece[0]))

/* Rank 0's median time of an allreduce of bytes (doubles), each call
 * between barriers. */
static double time_allreduce(double *buf, size_t bytes)
{
    double t[9];
    for (int i = 0; i < 9; i++) {
        telemem_barrier();
        double t0 = now();
        int rc = telemem_allreduce(buf, bytes / 8, TELEMEM_DOUBLE,
                                   TELEMEM_SUM);
        t[i] = now() - t0;
        if (rc != TELEMEM_OK) {
            fprintf(stderr, "telemem-calibrate: allreduce: %s\n",
                    telemem_strerror(rc));
            exit(1);
        }
    }
    qsort(t, 9, sizeof(t[0]), cmp_d);
    return t[4];
}

static int coll_main(int argc, char **argv)
{
    bool split = !strcmp(argv[1], "coll-split");
    int rc = telemem_initialize(&argc, &argv);
    if (rc != TELEMEM_OK)
        return 1;
    int me = telemem_rank(), n = telemem_nranks(), status = 0;
    double *buf = calloc(coll_piece[NCP - 1] / 8, sizeof(double));
    size_t x[NCP];
    double one[NCP] = {0}, t[NCP];
    for (size_t i = 0; buf && i < NCP; i++) {
        x[i] = coll_piece[i] * (size_t)n;
        t[i] = time_allreduce(buf, coll_piece[i]);
    }
    FILE *f = me == 0 && buf ? fopen(argv[2], split ? "r" : "w") : NULL;
    if (me == 0 && !f) {
        fprintf(stderr, "telemem-calibrate: %s\n", buf ? argv[2]
                                                       : "no memory");
        status = 1;
    }
    for (size_t i = 0; f && i < NCP; i++) {
        if (!split)
            fprintf(f, "%zu %.9g\n", x[i], t[i]);
        else if (fscanf(f, "%*u %lf", &one[i]) != 1)
            one[i] = 0;
    }
    if (f)
        fclose(f);
    if (f && split) {
        printf("# coll, %d ranks: ranks x piece bytes, usec per allreduce "
               "(one reducer, split)\n", n);
        for (size_t i = 0; i < NCP; i++)
            printf("coll %10zu %10.1f %10.1f\n", x[i], one[i] * 1e6,
                   t[i] * 1e6);
        size_t thr = crossover(x, one, t, NCP);
        if (thr == SIZE_MAX)
            thr = (size_t)1 << 60; /* never */
        printf("coll-reduce-split: %zu -> %s\n", thr, argv[3]);
        status = write_profile(argv[3], "coll-reduce-split", thr, 0);
    }
    free(buf);
    telemem_finalize();
    return status;
}

int main(int argc, char **argv)
{
    /* --quick and --net before the phase */
    while (argc > 1 &&
           (!strcmp(argv[1], "--quick") || !strcmp(argv[1], "--net"))) {
        *(strcmp(argv[1], "--quick") ? &net : &quick) = true;
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    if ((argc == 3 && !strcmp(argv[1], "coll-one")) ||
        (argc == 4 && !strcmp(argv[1], "coll-split")))
        return coll_main(argc, argv);
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    int copy = argc == 3 && !strcmp(argv[1], "copy");
    int map = argc == 3 && !strcmp(argv[1], "map");
    int pull = argc == 4 && !strcmp(argv[1], "pull");
    int am = (argc == 3 && !strcmp(argv[1], "am")) || copy;
    int direct = (argc == 4 && !strcmp(argv[1], "direct")) || pull;
    if (!am && !direct && !map) {
        usage(stderr);
        return 2;
    }
    int rc = telemem_initialize(&argc, &argv);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "telemem-calibrate: initialize: %s\n",
                telemem_strerror(rc));
        return 1;
    }
    int me = telemem_rank(), n = telemem_nranks();
    if (n != 2) {
        if (me == 0)
            fprintf(stderr, "telemem-calibrate: needs 2 ranks\n");
        telemem_finalize();
        return 2;
    }
    /* Room for the largest contiguous put and for every strided patch
     * (rows row + 128 bytes apart at the target, row + 64 here), past the
     * 64-byte offset the puts start at. */
    size_t span = 2 * (4194304 + 65536);
    for (size_t i = 0; i < NR; i++)
        if ((STRIDED_TOTAL / rows[i]) * (rows[i] + 128) + 128 > span)
            span = (STRIDED_TOTAL / rows[i]) * (rows[i] + 128) + 128;
    void *bases[2];
    rc = telemem_malloc_all(span, bases);
    char *local = malloc(span);
    if (rc != TELEMEM_OK || !local) {
        fprintf(stderr, "telemem-calibrate: no memory\n");
        return 1;
    }
    memset(local, 1, span);
    double tc[NC], tr[NR];
    int status = 0;
    if (me == 0) {
        char *remote = (char *)bases[1] + 64;
        /* map: a source in this rank's own block too, past what the puts
         * reach at the target's */
        char *blk = (char *)bases[0] + span / 2 + 1;
        double tb[NC];
        /* Pulled, each put waits for the target: not below a page (a
         * round trip per put would only lose there, and slowly). */
        for (size_t i = 0; i < NC; i++) {
            tb[i] = timed(contig[i]) ? 1e30 : 0;
            tc[i] = !timed(contig[i]) ? 0
                    : (pull || map) && contig[i] < PULL_MIN
                        ? 1e30
                        : time_puts2(1, remote, local + 1, map ? blk : NULL,
                                     contig[i], contig[i], &tb[i]);
        }
        for (size_t i = 0; i < NR && !copy && !pull && !map; i++)
            tr[i] = timed(rows[i]) ? time_puts(1, remote, local + 1, rows[i],
                                               STRIDED_TOTAL)
                                   : 0;
        if (map)
            status = pull_line(argv[2], "shm-map", tc, tb);
        else if (pull)
            status = pull_phase(argv[2], argv[3], tc);
        else if (am)
            status = am_phase(argv[2], tc, tr, copy);
        else
            status = direct_phase(argv[2], argv[3], tc, tr);
    }
    telemem_barrier();
    telemem_free_all(bases[me]);
    free(local);
    telemem_finalize();
    return status;
}

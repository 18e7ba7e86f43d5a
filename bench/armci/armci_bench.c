/* armci_bench.c - ARMCI benchmark on two ranks, one source built twice:
 * telemem-armci-bench (libarmci over Telemem, run with telemem-run -n 2)
 * and armci-mpi-bench (Debian's ARMCI-MPI, -DAB_MPI=1, run with mpirun
 * -n 2).  Rank 0 measures, rank P = nproc/2 is the passive target (rank 1
 * of 2; with two hosts of P ranks each, the first rank of the other host)
 * and any other rank waits in ARMCI_Barrier.  The target waits in
 * ARMCI_Barrier, or with --target spin on a plain load of its own memory,
 * as ARMCI programs do.  ARMCI-MPI's asynchronous progress thread
 * (ARMCI_PROGRESS_THREAD=1) needs MPI_THREAD_MULTIPLE, which the MPI build
 * then asks for:
 *   put, get      contiguous ARMCI_Put / ARMCI_Get, 8 B .. --max (8 MiB);
 *                 bandwidth of back-to-back operations (puts then fenced)
 *   putfence      ARMCI_Put + ARMCI_Fence, latency per pair (8 B .. 64 KiB)
 *   puts, gets    strided patches of --patch bytes (64 KiB) with rows of
 *                 8 B .. 64 KiB, remote rows twice the row length apart
 *   rmw           ARMCI_Rmw(ARMCI_FETCH_AND_ADD) on the target, per op
 * Output: '#' header lines (implementation, settings), then CSV:
 *   impl,test,bytes,row,iters,usec,MBps,ops_per_s */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <armci.h>
#include <message.h>

#ifndef AB_MPI
#define AB_MPI 0
#endif

static int me, nproc, peer; /* peer: the passive target, nproc / 2 */
static double tmin = 0.2;       /* seconds per point */
static size_t max_bytes = 8u << 20;
static size_t patch_bytes = 64u << 10;
static int spin_target;
static const char *impl;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end || v == 0) {
        fprintf(stderr, "armci-bench: bad size \"%s\"\n", s);
        exit(2);
    }
    return (size_t)v;
}

static void die(const char *what)
{
    fprintf(stderr, "armci-bench: rank %d: %s failed\n", me, what);
    armci_msg_abort(1);
}

static void row(const char *test, size_t bytes, size_t rowlen, long iters,
                double secs, size_t moved_per_iter)
{
    double usec = secs / (double)iters * 1e6;
    double mbps = (double)moved_per_iter * (double)iters / secs / 1e6;
    printf("%s,%s,%zu,%zu,%ld,%.4f,%.2f,%.0f\n", impl, test, bytes, rowlen,
           iters, usec, mbps, (double)iters / secs);
    fflush(stdout);
}

/* Target side of one measurement: wait until rank 0 is done. */
static void target_wait(volatile int *done, int round)
{
    if (spin_target) {
        while (*done != round)
            ; /* a plain load: needs the progress thread (or direct RMA) */
    }
    ARMCI_Barrier();
}

/* Rank 0 side: tell the spinning target this point is over. */
static void initiator_done(void **base, size_t flag_off, int round)
{
    if (spin_target)
        if (ARMCI_PutValueInt(round, (char *)base[peer] + flag_off, peer))
            die("ARMCI_PutValueInt");
    ARMCI_Barrier();
}

typedef enum { T_PUT, T_GET, T_PUTFENCE, T_PUTS, T_GETS, T_RMW, T_N } test_t;
static const char *test_names[T_N] = {"put",  "get",  "putfence",
                                      "puts", "gets", "rmw"};
static int want[T_N] = {1, 1, 1, 1, 1, 1};

/* --only put,rmw: run just those. */
static void parse_only(const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    memset(want, 0, sizeof want);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int t = 0; t < T_N; t++)
            if (!strcmp(tok, test_names[t]))
                want[t] = found = 1;
        if (!found) {
            fprintf(stderr, "armci-bench: unknown test \"%s\"\n", tok);
            exit(2);
        }
    }
}

/* Run op until tmin has passed (at least 3 times), return iterations and
 * seconds.  Only rank 0 calls it. */
static long measure(test_t t, void **base, char *local, size_t bytes,
                    size_t rowlen, double *secs_out)
{
    int count[2] = {0, 0}, ls[1] = {0}, rs[1] = {0};
    if (t == T_PUTS || t == T_GETS) {
        count[0] = (int)rowlen;
        count[1] = (int)(bytes / rowlen);
        ls[0] = (int)rowlen;
        rs[0] = (int)(2 * rowlen);
    }
    void *remote = base[peer];
    long iters = 0, batch = 1;
    double t0 = now(), el = 0;
    while (el < tmin || iters < 3) {
        for (long i = 0; i < batch; i++) {
            int rc = 0, old;
            switch (t) {
            case T_PUT:
                rc = ARMCI_Put(local, remote, (int)bytes, peer);
                break;
            case T_GET:
                rc = ARMCI_Get(remote, local, (int)bytes, peer);
                break;
            case T_PUTFENCE:
                rc = ARMCI_Put(local, remote, (int)bytes, peer);
                ARMCI_Fence(peer);
                break;
            case T_PUTS:
                rc = ARMCI_PutS(local, ls, remote, rs, count, 1, peer);
                break;
            case T_GETS:
                rc = ARMCI_GetS(remote, rs, local, ls, count, 1, peer);
                break;
            default: /* T_RMW */
                rc = ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &old, remote, 1, peer);
                break;
            }
            if (rc)
                die("an ARMCI call");
        }
        iters += batch;
        if (t == T_PUT || t == T_PUTS)
            ARMCI_Fence(peer); /* the data is at the target in the time */
        el = now() - t0;
        if (batch < 1 << 20 && el < tmin / 4)
            batch *= 2;
    }
    *secs_out = el;
    return iters;
}

static void point(test_t t, const char *name, void **base, char *local,
                  size_t bytes, size_t rowlen, size_t flag_off, int *round)
{
    ++*round;
    ARMCI_Barrier();
    if (me == 0) {
        double secs;
        /* warm up: first-touch, registrations, connections */
        double keep = tmin;
        tmin = 0;
        measure(t, base, local, bytes, rowlen, &secs);
        tmin = keep;
        long iters = measure(t, base, local, bytes, rowlen, &secs);
        row(name, bytes, rowlen, iters, secs, t == T_RMW ? sizeof(int)
                                                         : bytes);
        initiator_done(base, flag_off, *round);
    } else if (me == peer) {
        target_wait((volatile int *)((char *)base[peer] + flag_off), *round);
    } else {
        ARMCI_Barrier();
    }
}

static void usage(void)
{
    printf("usage: armci-bench [--quick] [--max SIZE] [--patch SIZE] "
           "[--time SEC] [--target barrier|spin] [--only TESTS]\n"
           "  TESTS: comma list of put,get,putfence,puts,gets,rmw\n");
}

/* Is the environment variable set to something other than off? */
static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") && strcmp(v, "n") && strcmp(v, "no") &&
           strcmp(v, "off") && strcmp(v, "false");
}

int main(int argc, char **argv)
{
#if AB_MPI
    /* ARMCI-MPI starts its progress thread only under THREAD_MULTIPLE. */
    int provided;
    MPI_Init_thread(&argc, &argv,
                    env_on("ARMCI_PROGRESS_THREAD") ? MPI_THREAD_MULTIPLE
                                                    : MPI_THREAD_SINGLE,
                    &provided);
#endif
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            tmin = 0.005;
            max_bytes = 64u << 10;
            patch_bytes = 16u << 10;
        } else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            max_bytes = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--patch") && i + 1 < argc) {
            patch_bytes = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
            tmin = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
            spin_target = !strcmp(argv[++i], "spin");
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            parse_only(argv[++i]);
        } else {
            usage();
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (ARMCI_Init())
        die("ARMCI_Init");
    me = armci_msg_me();
    nproc = armci_msg_nproc();
#ifdef TELEMEM_ARMCI
    impl = getenv("ARMCI_PROGRESS_THREAD") && !env_on("ARMCI_PROGRESS_THREAD")
               ? "libarmci-noprogress"
               : "libarmci";
#else
    const char *m = getenv("ARMCI_STRIDED_METHOD");
    impl = m && !strcmp(m, "DIRECT") ? "armci-mpi-direct" : "armci-mpi";
#endif
    peer = nproc / 2;
    if (nproc < 2) {
        if (me == 0)
            printf("# armci-bench needs 2 ranks (has %d)\n", nproc);
        ARMCI_Finalize();
#if AB_MPI
        MPI_Finalize();
#endif
        return 2;
    }
    size_t region = 2 * (max_bytes > patch_bytes ? max_bytes : patch_bytes);
    size_t flag_off = region;
    void **base = calloc((size_t)nproc, sizeof *base);
    if (!base || ARMCI_Malloc(base, (armci_size_t)(region + 64)))
        die("ARMCI_Malloc");
    memset(base[me], 0, region + 64);
    char *local = ARMCI_Malloc_local((armci_size_t)region);
    if (!local)
        die("ARMCI_Malloc_local");
    memset(local, 1, region);
    if (me == 0) {
        printf("# armci-bench: impl %s, %d ranks, target rank %d (%s), "
               "time %.3f s per point, max %zu, patch %zu\n",
               impl, nproc, peer, spin_target ? "spin" : "barrier", tmin,
               max_bytes, patch_bytes);
        printf("# ARMCI_PROGRESS_THREAD = %s\n",
               getenv("ARMCI_PROGRESS_THREAD") ? getenv("ARMCI_PROGRESS_THREAD")
                                               : "(unset)");
        printf("impl,test,bytes,row,iters,usec,MBps,ops_per_s\n");
        fflush(stdout);
    }
    int round = 0;
    for (size_t b = 8; b <= max_bytes; b *= 2) {
        if (want[T_PUT])
            point(T_PUT, "put", base, local, b, b, flag_off, &round);
        if (want[T_GET])
            point(T_GET, "get", base, local, b, b, flag_off, &round);
    }
    if (want[T_PUTFENCE])
        for (size_t b = 8; b <= 65536 && b <= max_bytes; b *= 8)
            point(T_PUTFENCE, "putfence", base, local, b, b, flag_off,
                  &round);
    for (size_t r = 8; r <= patch_bytes && r <= 65536; r *= 2) {
        if (want[T_PUTS])
            point(T_PUTS, "puts", base, local, patch_bytes, r, flag_off,
                  &round);
        if (want[T_GETS])
            point(T_GETS, "gets", base, local, patch_bytes, r, flag_off,
                  &round);
    }
    if (want[T_RMW])
        point(T_RMW, "rmw", base, local, sizeof(int), sizeof(int), flag_off,
              &round);
    ARMCI_Barrier();
    ARMCI_Free_local(local);
    ARMCI_Free(base[me]);
    free(base);
    ARMCI_Finalize();
#if AB_MPI
    MPI_Finalize();
#endif
    return 0;
}

/* direct_bw.c - driver-level write bandwidth of the network direct path
 * (telemem-direct-bw, white box): the ofi-rma or ucx-rma driver of the
 * transport Telemem runs on (TELEMEM_TRANSPORT=ofi or ucx) against
 * telemem_put (the active-message path) over the same transport, same
 * run, rounds alternating which path goes first.
 *
 * Run with two ranks:  telemem-run -n 2 telemem-direct-bw [options]
 *
 * One sample: rank 0 writes --bytes worth of messages of one size into
 * rank 1's telemem_malloc_all block, then waits for remote completion
 * (telemem_quiet for the AM path, the driver's flush for the direct path);
 * bandwidth = bytes / time.  Rank 1 only polls (it waits in a barrier).
 * Now that core chooses paths itself, run with TELEMEM_DIRECT=never
 * so that the "am" rows stay the active-message path.
 * Output: a header (transport, driver, provider), then CSV
 *   size,path,median_MBps,min_MBps,max_MBps,rounds
 * with MB = 10^6 bytes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/am.h"
#include "backends/direct.h"
#include "telemem.h"

#define MAXSIZES 16
#define MAXROUNDS 64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define CHECK(call)                                                          \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != TELEMEM_OK) {                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
                    telemem_strerror(rc_));                                  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return (size_t)v;
}

static void usage(void)
{
    printf("usage: telemem-run -n 2 telemem-direct-bw [--sizes=64k,1m,8m] "
           "[--rounds=5] [--bytes=64m]\n"
           "  Write bandwidth of the direct-path driver of the transport in\n"
           "  use (TELEMEM_TRANSPORT=ofi or ucx) against telemem_put over\n"
           "  the same transport; rounds alternate which path goes first.\n");
}

/* One sample of the AM path: MB/s. */
static double sample_am(void *dst, const void *src, size_t size, int reps)
{
    double t0 = now();
    for (int i = 0; i < reps; i++)
        CHECK(telemem_put(1, dst, src, size));
    CHECK(telemem_quiet());
    return (double)size * reps / (now() - t0) / 1e6;
}

/* One sample of the direct path: MB/s. */
static double sample_direct(tlm_direct_t *d, tlm_direct_rkey_t *rk,
                            void *dst, const void *src, size_t size, int reps)
{
    tlm_direct_seg_t g = {.local = (uintptr_t)src, .remote = (uintptr_t)dst,
                          .block = size, .count = 1};
    double t0 = now();
    for (int i = 0; i < reps; i++) {
        int rc;
        while ((rc = d->ops->write(d, 1, rk, &g, 1)) == TELEMEM_ERR_AGAIN)
            telemem_poll();
        CHECK(rc);
    }
    int rc;
    while (d->ops->flush && (rc = d->ops->flush(d, 1)) == TELEMEM_ERR_AGAIN) {
        telemem_poll();
        if (d->ops->progress)
            d->ops->progress(d);
    }
    CHECK(d->ops->flush ? rc : TELEMEM_OK);
    return (double)size * reps / (now() - t0) / 1e6;
}

int main(int argc, char **argv)
{
    size_t sizes[MAXSIZES] = {64u << 10, 1u << 20, 8u << 20};
    int nsizes = 3, rounds = 5;
    size_t bytes = 64u << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 0;
        } else if (strncmp(argv[i], "--sizes=", 8) == 0) {
            nsizes = 0;
            for (char *s = strtok(argv[i] + 8, ","); s && nsizes < MAXSIZES;
                 s = strtok(NULL, ","))
                sizes[nsizes++] = parse_size(s);
        } else if (strncmp(argv[i], "--rounds=", 9) == 0) {
            rounds = atoi(argv[i] + 9);
        } else if (strncmp(argv[i], "--bytes=", 8) == 0) {
            bytes = parse_size(argv[i] + 8);
        } else {
            fprintf(stderr, "telemem-direct-bw: unknown option %s\n",
                    argv[i]);
            usage();
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAXROUNDS || nsizes < 1 || bytes == 0) {
        fprintf(stderr, "telemem-direct-bw: bad --rounds/--sizes/--bytes\n");
        return 2;
    }
    CHECK(telemem_initialize(&argc, &argv));
    int me = telemem_rank(), n = telemem_nranks();
    if (n != 2) {
        if (me == 0)
            fprintf(stderr, "telemem-direct-bw: run with 2 ranks\n");
        telemem_finalize();
        return 2;
    }
    size_t maxsize = 0;
    for (int i = 0; i < nsizes; i++)
        maxsize = sizes[i] > maxsize ? sizes[i] : maxsize;
    /* White box: the driver of the transport that reaches the peer. */
    tlm_transport_t *tp = tlm_am.peers[1 - me].tp;
    tlm_direct_t *d = tp ? tp->direct : NULL;
    if (!d) {
        if (me == 0)
            printf("# transport %s has no direct-path driver: nothing to "
                   "compare (TELEMEM_LOG_LEVEL=debug says why)\n",
                   tp ? tp->name : "(none)");
        telemem_finalize();
        return 77;
    }
    void *bases[2];
    CHECK(telemem_malloc_all(maxsize, bases));
    uint8_t *src = aligned_alloc(4096, maxsize);
    if (!src)
        return 1;
    memset(src, 0x5a, maxsize);
    memset(bases[me], 0, maxsize);
    tlm_direct_mr_t *mr;
    struct {
        uint64_t len;
        uint8_t b[TLM_DIRECT_KEY_MAX];
    } key, keys[2];
    memset(&key, 0, sizeof key);
    size_t klen = 0;
    CHECK(d->ops->expose(d, bases[me], maxsize, &mr, key.b, &klen));
    key.len = klen;
    CHECK(telemem_allgather(&key, keys, sizeof key));
    tlm_direct_rkey_t *rk = NULL;
    if (me == 0)
        CHECK(d->ops->import(d, 1, (uintptr_t)bases[1], maxsize,
                             keys[1].b, keys[1].len, &rk));
    if (me == 0) {
        const char *prov = getenv("TELEMEM_OFI_PROVIDER");
        const char *tls = getenv("UCX_TLS");
        printf("# telemem-direct-bw: transport %s, driver %s, "
               "TELEMEM_OFI_PROVIDER=%s, UCX_TLS=%s, %d rounds, %zu bytes "
               "per sample, A/B alternating\n", tp->name, d->name,
               prov ? prov : "", tls ? tls : "", rounds, bytes);
        printf("size,path,median_MBps,min_MBps,max_MBps,rounds\n");
    }
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int reps = (int)(bytes / size) ? (int)(bytes / size) : 1;
        double am[MAXROUNDS], dr[MAXROUNDS];
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < 2; k++) {
                bool direct_now = (k == 0) == (r % 2 == 1);
                CHECK(telemem_barrier());
                if (me == 0) {
                    if (direct_now)
                        dr[r] = sample_direct(d, rk, bases[1], src, size,
                                              reps);
                    else
                        am[r] = sample_am(bases[1], src, size, reps);
                }
            }
        }
        CHECK(telemem_barrier());
        if (me == 0) {
            qsort(am, (size_t)rounds, sizeof(double), cmp);
            qsort(dr, (size_t)rounds, sizeof(double), cmp);
            printf("%zu,am,%.0f,%.0f,%.0f,%d\n", size, am[rounds / 2], am[0],
                   am[rounds - 1], rounds);
            printf("%zu,%s,%.0f,%.0f,%.0f,%d\n", size, d->name,
                   dr[rounds / 2], dr[0], dr[rounds - 1], rounds);
            fflush(stdout);
        }
    }
    if (rk)
        d->ops->release(d, rk);
    CHECK(telemem_barrier());
    d->ops->unexpose(d, mr);
    CHECK(telemem_free_all(bases[me]));
    free(src);
    CHECK(telemem_finalize());
    return 0;
}

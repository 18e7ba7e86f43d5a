/* conf_flood.c - conformance: back-pressure.  Every rank floods the others
 * with far more puts (blocking, nbi and nb) than all message buffers hold,
 * while being flooded itself; then all ranks do large gets and many get_nbi
 * from each other at the same time; then an active-message flood whose
 * handler replies to each request.  Everything must complete (no deadlock)
 * and land bit for bit.  Run it with small TELEMEM_SHM_BUF_COUNT/_SIZE/_RING
 * too.  Options: --puts=N per rank (20000), --size=B per put (8192),
 * --getsize=B large get (8 MiB), --ams=N requests per rank (5000). */
#include "tt.h"

#define SLOTS 64
#define NSRC 512
#define NBMAX 64

static int me, n;
static uint64_t seed;
static long replies;

static int target_of(int r, long k)
{
    int o = (int)(k % (n - 1));
    return (r + 1 + o) % n; /* every rank but r */
}

static size_t slot_of(long k)
{
    return (size_t)((k / (n - 1)) % SLOTS);
}

static void am_req(telemem_am_token_t token, void *payload, size_t bytes,
                   const uint32_t *args, unsigned nargs, void *ctx)
{
    uint64_t v = bytes;
    int rc = telemem_am_reply(token, *(int *)ctx, &v, 8, args, nargs);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "[tt r%d] am_reply: %s\n", me, telemem_strerror(rc));
        exit(1);
    }
}

static void am_rep(telemem_am_token_t token, void *payload, size_t bytes,
                   const uint32_t *args, unsigned nargs, void *ctx)
{
    replies++;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_flood");
    me = tt_me;
    n = tt_n;
    seed = tt_seed();
    if (n < 2) {
        tt_finalize();
        tt_skip("flooding needs at least 2 ranks");
    }
    long nputs = tt_arg_long(argc, argv, "--puts", 20000);
    size_t psize = (size_t)tt_arg_long(argc, argv, "--size", 8192);
    size_t gsize = (size_t)tt_arg_long(argc, argv, "--getsize", 8 << 20);
    long nams = tt_arg_long(argc, argv, "--ams", 5000);
    if (me == 0)
        tt_log("%ld puts of %zu bytes per rank, gets of %zu bytes, %ld AMs",
               nputs, psize, gsize, nams);

    size_t area = (size_t)n * SLOTS * psize;
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(area + gsize, bases));
    uint8_t *mine = bases[me];
    memset(mine, 0, area);
    tt_pat_fill(mine + area, gsize, tt_key(seed, 710, me, 0), 0);
    uint8_t *src = malloc(NSRC * psize);
    for (int j = 0; j < NSRC; j++)
        tt_pat_fill(src + (size_t)j * psize, psize, tt_key(seed, 700, me, j),
                    0);
    TT_CHECK(telemem_barrier());

    /* 1. put flood. */
    telemem_handle_t hs[NBMAX];
    int nh = 0;
    for (long k = 0; k < nputs; k++) {
        int t = target_of(me, k);
        uint8_t *dst = (uint8_t *)bases[t] +
                       ((size_t)me * SLOTS + slot_of(k)) * psize;
        const uint8_t *s = src + (size_t)(k % NSRC) * psize;
        switch (k % 4) {
        case 0:
            TT_CHECK(telemem_put_nbi(t, dst, s, psize));
            break;
        case 1:
            if (nh == NBMAX) {
                TT_CHECK(telemem_wait(&hs[0]));
                memmove(hs, hs + 1, (NBMAX - 1) * sizeof hs[0]);
                nh--;
            }
            TT_CHECK(telemem_put_nb(t, dst, s, psize, &hs[nh]));
            nh++;
            break;
        default:
            TT_CHECK(telemem_put(t, dst, s, psize));
        }
    }
    for (int i = 0; i < nh; i++)
        TT_CHECK(telemem_wait(&hs[i]));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    /* The last put of each initiator to each of my slots wins. */
    long *last = malloc(SLOTS * sizeof *last);
    int errors = 0;
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        for (int s = 0; s < SLOTS; s++)
            last[s] = -1;
        for (long k = 0; k < nputs; k++)
            if (target_of(r, k) == me)
                last[slot_of(k)] = k;
        for (int s = 0; s < SLOTS; s++) {
            uint8_t *p = mine + ((size_t)r * SLOTS + (size_t)s) * psize;
            char lab[80];
            snprintf(lab, sizeof lab, "flooded slot %d of rank %d", s, r);
            if (last[s] < 0)
                errors |= tt_cmp(p, (uint8_t[8]){0}, psize < 8 ? psize : 8,
                                 lab);
            else
                errors |= tt_pat_verify(p, psize,
                                        tt_key(seed, 700, r, last[s] % NSRC),
                                        0, lab);
        }
    }
    TT_ASSERT(!errors, "put flood data wrong");
    if (me == 0)
        tt_log("put flood done");

    /* 2. mutual large gets and many get_nbi at once. */
    int right = (me + 1) % n;
    uint8_t *big = malloc(gsize);
    TT_CHECK(telemem_get(right, big, (uint8_t *)bases[right] + area, gsize));
    TT_ASSERT(!tt_pat_verify(big, gsize, tt_key(seed, 710, right, 0), 0,
                             "large get"), "large get wrong");
    long ngets = nputs / 10;
    size_t gchunk = psize;
    size_t gslots = gsize / gchunk;
    uint8_t *gb = malloc((size_t)ngets * gchunk);
    for (long k = 0; k < ngets; k++) {
        int t = target_of(me, k);
        size_t off = (size_t)(k % (long)gslots) * gchunk;
        TT_CHECK(telemem_get_nbi(t, gb + (size_t)k * gchunk,
                                 (uint8_t *)bases[t] + area + off, gchunk));
    }
    TT_CHECK(telemem_quiet());
    for (long k = 0; k < ngets; k++) {
        int t = target_of(me, k);
        size_t off = (size_t)(k % (long)gslots) * gchunk;
        errors |= tt_pat_verify(gb + (size_t)k * gchunk, gchunk,
                                tt_key(seed, 710, t, 0), off, "get_nbi flood");
        if (errors)
            break;
    }
    TT_ASSERT(!errors, "get_nbi flood data wrong");
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("get flood done");

    /* 3. AM flood: each request answered by one reply. */
    int id_req = -1, id_rep = -1;
    TT_CHECK(telemem_am_register_any(am_rep, NULL, &id_rep));
    TT_CHECK(telemem_am_register_any(am_req, &id_rep, &id_req));
    TT_CHECK(telemem_barrier());
    uint8_t payload[1024];
    memset(payload, 0x3c, sizeof payload);
    for (long k = 0; k < nams; k++) {
        uint32_t a[3] = {(uint32_t)k, 1, 2};
        TT_CHECK(telemem_am_request(target_of(me, k), id_req, payload,
                                    sizeof payload, a, 3));
    }
    double t0 = tt_now();
    while (replies < nams) {
        TT_POLL();
        TT_ASSERT(tt_now() - t0 < 60, "only %ld of %ld replies after 60 s",
                  replies, nams);
    }
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("AM flood done");

    TT_CHECK(telemem_free_all(mine));
    free(src);
    free(big);
    free(gb);
    free(last);
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

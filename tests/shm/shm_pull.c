/* shm_pull.c - the shared-memory pull path (docs/shm.md, "The pull path"):
 * every size from 1 B to 64 MiB (powers of two and one either side), put
 * and get, contiguous or strided, each rank to its right neighbour, every
 * byte verified; the same program runs with the pull on and with
 * TELEMEM_SHM_CMA=n (meson.build).  Modes (first argument):
 *   contig   telemem_put / _nbi / _nb and telemem_get / _nb by turns
 *   strided  telemem_put_strided / telemem_get_strided, 4 rows per size
 *   reuse    rank 0 frees or refills its source as soon as a blocking put
 *            returns; rank 1 must see what was there at the call
 *   order    rank 0 gets a range of rank 1's block and puts to it right
 *            after (both _nbi): the get sees the data before the put,
 *            though rank 1 applies the put before rank 0 pulls the reply
 *   kill     rank 1 SIGKILLs itself (a thread of its own) while it pulls
 *            rank 0's 64 MiB puts: rank 0's put returns PEER_DEAD, no
 *            hang (telemem-run --keep-going; exit status 137).
 * --local-block=1: the local buffers (sources of puts, the refilled source
 * of reuse, the later put of order) lie in a telemem_malloc_all block,
 * which the target maps and pulls from with memcpy. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "tt.h"

#define MAXSZ ((size_t)64 << 20)
#define OFF 24 /* not 8-aligned at either end for odd sizes */
#define RSTR 40 /* extra stride bytes per row at the target */
#define LSTR 16 /* and here */

static size_t sizes[96];
static void **bases; /* bases[r]: rank r's block, at rank r */
static int nsizes;
static char *g_lblock; /* --local-block: this rank's second block */

static void make_sizes(size_t max)
{
    for (size_t p = 1; p <= max; p *= 2) {
        if (p > 2)
            sizes[nsizes++] = p - 1;
        sizes[nsizes++] = p;
        if (p > 1 && p < max)
            sizes[nsizes++] = p + 1;
    }
}

/* Rows of a strided transfer of about n bytes: 4 rows (fewer for tiny n). */
static void rows_of(size_t n, size_t *row, size_t *nrows)
{
    *nrows = n >= 4 ? 4 : 1;
    *row = n / *nrows;
}

static void put_one(int t, char *remote, char *local, size_t n, int i,
                    int strided)
{
    if (strided) {
        size_t row, nrows;
        rows_of(n, &row, &nrows);
        size_t rs[1] = {row + RSTR}, ls[1] = {row + LSTR};
        size_t cnt[2] = {row, nrows};
        TT_CHECK(telemem_put_strided(t, remote, rs, local, ls, cnt, 1));
        return;
    }
    telemem_handle_t h;
    switch (i % 3) {
    case 0:
        TT_CHECK(telemem_put(t, remote, local, n));
        break;
    case 1:
        TT_CHECK(telemem_put_nbi(t, remote, local, n));
        break;
    default:
        TT_CHECK(telemem_put_nb(t, remote, local, n, &h));
        TT_CHECK(telemem_wait(&h));
        break;
    }
}

static void get_one(int t, char *local, char *remote, size_t n, int i,
                    int strided)
{
    if (strided) {
        size_t row, nrows;
        rows_of(n, &row, &nrows);
        size_t rs[1] = {row + RSTR}, ls[1] = {row + LSTR};
        size_t cnt[2] = {row, nrows};
        TT_CHECK(telemem_get_strided(t, local, ls, remote, rs, cnt, 1));
        return;
    }
    telemem_handle_t h;
    if (i % 2) {
        TT_CHECK(telemem_get(t, local, remote, n));
    } else {
        TT_CHECK(telemem_get_nb(t, local, remote, n, &h));
        TT_CHECK(telemem_wait(&h));
    }
}

/* Fill or verify the rows of a (maybe strided) area of n bytes at base. */
static int rows_pat(char *base, size_t n, size_t extra, int strided,
                    uint64_t key, int verify, const char *what)
{
    size_t row = n, nrows = 1;
    if (strided)
        rows_of(n, &row, &nrows);
    int bad = 0;
    for (size_t r = 0; r < nrows; r++) {
        char *p = base + r * (row + (strided ? extra : 0));
        if (verify)
            bad |= tt_pat_verify(p, row, key, r * row, what);
        else
            tt_pat_fill(p, row, key, r * row);
    }
    return bad;
}

static void sizes_run(int strided, void *block, char *local)
{
    int me = tt_me, n = tt_n, right = (me + 1) % n, left = (me + n - 1) % n;
    char *mine = (char *)block + OFF;
    for (int i = 0; i < nsizes; i++) {
        size_t sz = sizes[i];
        /* put: each rank into its right neighbour's block */
        rows_pat(local, sz, LSTR, strided, tt_key(1, me, sz, strided), 0, "");
        put_one(right, (char *)bases[right] + OFF, local, sz, i,
                strided);
        TT_CHECK(telemem_quiet());
        TT_CHECK(telemem_barrier());
        char what[96];
        snprintf(what, sizeof(what), "put of %zu bytes%s from rank %d", sz,
                 strided ? " (strided)" : "", left);
        TT_ASSERT(rows_pat(mine, sz, RSTR, strided,
                           tt_key(1, left, sz, strided), 1, what) == 0,
                  "%s: wrong bytes", what);
        /* get: each rank from its right neighbour's block */
        rows_pat(mine, sz, RSTR, strided, tt_key(2, me, sz, strided), 0, "");
        TT_CHECK(telemem_barrier());
        memset(local, 0xa5, sz + 4 * LSTR);
        get_one(right, local, (char *)bases[right] + OFF, sz, i,
                strided);
        snprintf(what, sizeof(what), "get of %zu bytes%s from rank %d", sz,
                 strided ? " (strided)" : "", right);
        TT_ASSERT(rows_pat(local, sz, LSTR, strided,
                           tt_key(2, right, sz, strided), 1, what) == 0,
                  "%s: wrong bytes", what);
        TT_CHECK(telemem_barrier());
    }
}

/* Rank 0's sources change or go as soon as each blocking put returns. */
static void reuse_run(void *block)
{
    static const size_t rs[] = {64 << 10, 100 << 10, 1 << 20, 3 << 20,
                                16 << 20};
    const int nr = (int)(sizeof(rs) / sizeof(rs[0]));
    char *mine = (char *)block;
    size_t off[8] = {0};
    for (int k = 1; k <= nr; k++)
        off[k] = off[k - 1] + rs[k - 1] + 64;
    if (tt_me == 0) {
        char *keep = g_lblock ? g_lblock : malloc(16 << 20);
        TT_ASSERT(keep, "no memory");
        for (int k = 0; k < nr; k++) {
            char *dst = (char *)bases[1] + off[k];
            char *tmp = malloc(rs[k]);
            TT_ASSERT(tmp, "no memory");
            tt_pat_fill(tmp, rs[k], tt_key(3, k, 0, 0), 0);
            TT_CHECK(telemem_put(1, dst, tmp, rs[k]));
            memset(tmp, 0xee, rs[k]); /* too late to be seen */
            free(tmp);
            /* one buffer, refilled at once for the next put */
            tt_pat_fill(keep, rs[k], tt_key(4, k, 0, 0), 0);
            TT_CHECK(telemem_put(1, dst + (32 << 20), keep, rs[k]));
            memset(keep, 0xdd, rs[k]);
        }
        if (!g_lblock)
            free(keep);
        TT_CHECK(telemem_quiet());
    }
    TT_CHECK(telemem_barrier());
    if (tt_me == 1)
        for (int k = 0; k < nr; k++) {
            TT_ASSERT(tt_pat_verify(mine + off[k], rs[k], tt_key(3, k, 0, 0),
                                    0, "freed source") == 0,
                      "put of %zu bytes from a freed source", rs[k]);
            TT_ASSERT(tt_pat_verify(mine + off[k] + (32 << 20), rs[k],
                                    tt_key(4, k, 0, 0), 0,
                                    "refilled source") == 0,
                      "put of %zu bytes from a refilled source", rs[k]);
        }
    TT_CHECK(telemem_barrier());
}

/* get_nbi then put_nbi to the same range: issue order per peer. */
static void order_run(void *block, char *local)
{
    static const size_t os[] = {64 << 10, 1 << 20, 4 << 20, (4 << 20) + 3};
    char *mine = (char *)block + OFF;
    size_t maxs = (4 << 20) + 3;
    char *src = g_lblock ? g_lblock + (8 << 20) : malloc(maxs);
    TT_ASSERT(src, "no memory");
    for (int rep = 0; rep < 8; rep++)
        for (int k = 0; k < 4; k++) {
            size_t n = os[k];
            if (tt_me == 1)
                tt_pat_fill(mine, n, tt_key(5, rep, k, 0), 0);
            TT_CHECK(telemem_barrier());
            if (tt_me == 0) {
                char *r = (char *)bases[1] + OFF;
                tt_pat_fill(src, n, tt_key(6, rep, k, 0), 0);
                memset(local, 0, n);
                TT_CHECK(telemem_get_nbi(1, local, r, n));
                TT_CHECK(telemem_put_nbi(1, r, src, n));
                TT_CHECK(telemem_quiet());
                TT_ASSERT(tt_pat_verify(local, n, tt_key(5, rep, k, 0), 0,
                                        "get before put") == 0,
                          "get of %zu bytes saw the later put", n);
            }
            TT_CHECK(telemem_barrier());
            if (tt_me == 1)
                TT_ASSERT(tt_pat_verify(mine, n, tt_key(6, rep, k, 0), 0,
                                        "put after get") == 0,
                          "put of %zu bytes after a get is wrong", n);
        }
    if (!g_lblock)
        free(src);
}

static void *killer(void *arg)
{
    usleep(30000);
    tt_log("rank 1: SIGKILL to myself now (pulls under way)");
    raise(SIGKILL);
    return arg;
}

/* Rank 1 dies while it pulls; rank 0's blocking put must say so. */
static int kill_run(void *block, char *local)
{
    if (tt_me == 1) {
        pthread_t th;
        TT_ASSERT(pthread_create(&th, NULL, killer, NULL) == 0, "thread");
        for (;;) /* polls (pulls) until killed; the barrier never ends */
            telemem_barrier();
    }
    memset(local, 3, MAXSZ);
    char *dst = (char *)bases[1];
    (void)block;
    double t0 = tt_now();
    int rc = TELEMEM_OK;
    for (int i = 0; rc == TELEMEM_OK; i++) {
        TT_ASSERT(tt_now() - t0 < 60, "no error after %d puts", i);
        rc = telemem_put(1, dst, local, MAXSZ);
    }
    tt_log("put returned %s after %.2f s", telemem_status_name(rc),
           tt_now() - t0);
    TT_ASSERT(rc == TELEMEM_ERR_PEER_DEAD, "put returned %s, want "
              "TELEMEM_ERR_PEER_DEAD", telemem_status_name(rc));
    rc = telemem_finalize();
    TT_ASSERT(rc == TELEMEM_OK || rc == TELEMEM_ERR_PEER_DEAD,
              "finalize returned %s", telemem_status_name(rc));
    if (!g_lblock)
        free(local);
    free(bases);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "contig";
    tt_init(&argc, &argv, "shm_pull");
    if (tt_n < 2) {
        tt_finalize();
        tt_skip("needs at least 2 ranks");
    }
    size_t max = (size_t)tt_arg_long(argc, argv, "--max", (long)MAXSZ);
    make_sizes(max);
    size_t span = max + 8 * (size_t)RSTR + OFF + 64;
    if (!strcmp(mode, "reuse"))
        span = 64 << 20;
    bases = calloc((size_t)tt_n, sizeof(*bases));
    void **lbases = calloc((size_t)tt_n, sizeof(*lbases));
    TT_ASSERT(bases && lbases, "no memory");
    TT_CHECK(telemem_malloc_all(span, bases));
    if (tt_arg_long(argc, argv, "--local-block", 0)) {
        TT_CHECK(telemem_malloc_all(span, lbases));
        g_lblock = lbases[tt_me];
    }
    char *local = g_lblock ? g_lblock : malloc(span);
    TT_ASSERT(local, "no memory");
    TT_CHECK(telemem_barrier());
    if (!strcmp(mode, "kill"))
        return kill_run(bases[tt_me], local);
    if (!strcmp(mode, "reuse"))
        reuse_run(bases[tt_me]);
    else if (!strcmp(mode, "order"))
        order_run(bases[tt_me], local);
    else
        sizes_run(!strcmp(mode, "strided"), bases[tt_me], local);
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(bases[tt_me]));
    if (g_lblock)
        TT_CHECK(telemem_free_all(g_lblock));
    else
        free(local);
    free(bases);
    free(lbases);
    if (tt_me == 0)
        tt_log("shm_pull %s: OK", mode);
    tt_finalize();
    return 0;
}

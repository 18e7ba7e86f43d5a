/* gt_parcoll.c - GASNET_PAR collectives with several images per node: 4
 * threads per node, each an image (gasnet_coll_init with an images
 * array), run broadcast, scatter, gather, gather_all, exchange (LOCAL
 * addresses, blocking and _nb), reduce and scan, and named team barriers
 * with GASNET_BARRIERFLAG_IMAGES; every result is checked.  Argument:
 * the number of rounds (default 5); many rounds under TELEMEM_WAIT=block
 * check that an image handing data to another thread of its node wakes
 * it (each hand-off otherwise waited out a sleep). */
#include <pthread.h>

#include <gasnet_coll.h>

#include "gt.h"

#define T 4
static int rounds = 5;
/* The threads of a node meet here outside GASNet, as GASNet's own testcoll
 * does between its tests: a thread that handed data to another image and
 * then waits here makes no call that would wake that image. */
static pthread_barrier_t node_bar;

static int images;
static int failed;

static void sum_fn(void *res, size_t rc, const void *left, size_t lc,
                   const void *right, size_t esz, int flags, int arg)
{
    (void)lc;
    (void)esz;
    (void)flags;
    (void)arg;
    int64_t *r = res;
    const int64_t *a = left, *b = right;
    for (size_t i = 0; i < rc; i++)
        r[i] = a[i] + b[i];
}

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "[gt r%d] FAIL %s:%d: ", gt_me, __FILE__,       \
                    __LINE__);                                              \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
            __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);                 \
        }                                                                   \
    } while (0)

static void *image_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    gasnet_image_t *counts = malloc(sizeof *counts * (size_t)gt_n);
    for (int i = 0; i < gt_n; i++)
        counts[i] = T;
    gasnet_coll_fn_entry_t fns[1] = {{sum_fn, 0}};
    gasnet_coll_init(counts, (gasnet_image_t)me, fns, 1, 0);
    free(counts);
    CHECK((int)gasnet_coll_team_size(GASNET_TEAM_ALL) == images, "size");
    CHECK((int)gasnet_coll_team_myrank(GASNET_TEAM_ALL) == me, "myrank");
    int flags = GASNET_COLL_LOCAL | GASNET_COLL_IN_MYSYNC |
                GASNET_COLL_OUT_MYSYNC;
    int64_t *buf = calloc((size_t)images, sizeof(int64_t));
    int64_t *out = calloc((size_t)images, sizeof(int64_t));
    for (int round = 0; round < rounds; round++) {
        int root = (round * 3 + 1) % images;
        int64_t v = me * 1000 + round, got = -1;
        gasnet_coll_broadcast(GASNET_TEAM_ALL, &got, (gasnet_image_t)root,
                              &v, sizeof v, flags);
        CHECK(got == root * 1000 + round, "broadcast: %lld", (long long)got);
        pthread_barrier_wait(&node_bar);
        for (int i = 0; i < images; i++)
            buf[i] = me * 100000 + i;
        gasnet_coll_wait_sync(gasnet_coll_scatter_nb(
            GASNET_TEAM_ALL, &got, (gasnet_image_t)root, buf, sizeof got,
            flags));
        CHECK(got == root * 100000 + me, "scatter");
        memset(out, 0, sizeof(int64_t) * (size_t)images);
        gasnet_coll_gather(GASNET_TEAM_ALL, (gasnet_image_t)root, out, &v,
                           sizeof v, flags);
        if (me == root)
            for (int i = 0; i < images; i++)
                CHECK(out[i] == i * 1000 + round, "gather");
        gasnet_coll_gather_all(GASNET_TEAM_ALL, out, &v, sizeof v,
                               (flags & ~GASNET_COLL_OUT_MYSYNC) |
                                   GASNET_COLL_OUT_ALLSYNC);
        for (int i = 0; i < images; i++)
            CHECK(out[i] == i * 1000 + round, "gather_all");
        gasnet_coll_exchange(GASNET_TEAM_ALL, out, buf, sizeof(int64_t),
                             flags);
        for (int i = 0; i < images; i++)
            CHECK(out[i] == i * 100000 + me, "exchange");
        int64_t red = -1, one = me + round;
        gasnet_coll_reduce(GASNET_TEAM_ALL, (gasnet_image_t)root, &red, &one,
                           0, 0, sizeof one, 1, 0, 0, flags);
        if (me == root)
            CHECK(red == (int64_t)images * (images - 1) / 2 +
                  (int64_t)images * round, "reduce: %lld", (long long)red);
        gasnet_coll_scan(GASNET_TEAM_ALL, &red, 0, 0, &one, 0, 0, sizeof one,
                         1, 0, 0, flags);
        CHECK(red == (int64_t)me * (me + 1) / 2 + (int64_t)(me + 1) * round,
              "scan");
        gasnet_coll_barrier_notify(GASNET_TEAM_ALL, round,
                                   GASNET_BARRIERFLAG_IMAGES);
        CHECK(gasnet_coll_barrier_wait(GASNET_TEAM_ALL, round,
                                       GASNET_BARRIERFLAG_IMAGES) ==
              GASNET_OK, "barrier");
    }
    free(buf);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    gt_start(&argc, &argv, "gt_parcoll", NULL, 0, GASNET_PAGESIZE);
    if (argc > 1)
        rounds = atoi(argv[1]);
    GT_ASSERT(rounds > 0, "usage: gt_parcoll [ROUNDS > 0]");
    images = gt_n * T;
    GT_ASSERT(pthread_barrier_init(&node_bar, NULL, T) == 0, "barrier");
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        GT_ASSERT(pthread_create(&th[t], NULL, image_main,
                                 (void *)(intptr_t)(gt_me * T + t)) == 0,
                  "create");
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    GT_ASSERT(!failed, "a check failed (see above)");
    gt_finish("gt_parcoll");
    return 0;
}

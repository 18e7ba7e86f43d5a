/* gt_par.c - GASNET_PAR: 4 threads per node hammer active messages
 * (Short requests answered by replies, Medium payloads of up to 4 KiB and
 * every fourth one of 16-64 KiB, which travels through the target's
 * slots when its segment is mapped here, checked), puts and
 * gets to every node (blocking, nb, nbi, each checked), handler-safe locks
 * taken both by the threads and by handlers (a counter that must add up),
 * and gasnet_barrier by one thread between phases. */
#include <pthread.h>

#include "gt.h"

#define THREADS 4
#define ITERS 300
#define SLOT 4096 /* bytes per (sender node, thread) in each segment */

#define H_INC 201
#define H_ACK 202
#define H_MED 203

static gasnet_hsl_t lock = GASNET_HSL_INITIALIZER;
static int64_t counter;    /* under lock: AM increments */
static int64_t tadds;      /* under lock: the threads' own additions */
static int acks[THREADS];  /* replies received, per thread (atomic) */
static int bad;

static void h_inc(gasnet_token_t tok, gasnet_handlerarg_t t)
{
    gasnet_hsl_lock(&lock);
    counter += 1;
    gasnet_hsl_unlock(&lock);
    gasnet_AMReplyShort1(tok, H_ACK, t);
}

static void h_ack(gasnet_token_t tok, gasnet_handlerarg_t t)
{
    (void)tok;
    __atomic_fetch_add(&acks[t], 1, __ATOMIC_RELEASE);
}

static void h_med(gasnet_token_t tok, void *buf, size_t n,
                  gasnet_handlerarg_t t, gasnet_handlerarg_t it)
{
    gasnet_node_t src;
    gasnet_AMGetMsgSource(tok, &src);
    if (gt_pat_check(buf, n, gt_key(src, (uint64_t)t, (uint64_t)it, 3),
                     "medium") != 0)
        __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    gasnet_AMReplyShort1(tok, H_ACK, t);
}

static gasnet_handlerentry_t table[] = {
    {H_INC, h_inc},
    {H_ACK, h_ack},
    {H_MED, h_med},
};

static void wait_acks(int t, int want)
{
    double t0 = gt_now();
    while (__atomic_load_n(&acks[t], __ATOMIC_ACQUIRE) < want) {
        GT_SAFE(gasnet_AMPoll());
        if (gt_now() - t0 > 120)
            GT_FAIL("thread %d waited for replies (%d of %d)", t,
                    __atomic_load_n(&acks[t], __ATOMIC_ACQUIRE), want);
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint8_t out[SLOT], in[SLOT];
    uint8_t *big = malloc(65536);
    GT_ASSERT(big, "malloc");
    int sent = 0;
    for (int it = 0; it < ITERS; it++) {
        gasnet_node_t d = (gasnet_node_t)((gt_me + it + t) % gt_n);
        char *slot = (char *)gt_seg((int)d).addr +
                     ((size_t)gt_me * THREADS + (size_t)t) * SLOT;
        size_t len = 1 + (size_t)(gt_mix((uint64_t)it * 7 + (uint64_t)t) %
                                  (SLOT - 1));
        uint64_t key = gt_key((uint64_t)gt_me, (uint64_t)t, (uint64_t)it, 3);
        gt_pat_fill(out, len, key);
        switch (it % 3) {
        case 0:
            gasnet_put(d, slot, out, len);
            break;
        case 1:
            gasnet_wait_syncnb(gasnet_put_nb(d, slot, out, len));
            break;
        default:
            gasnet_put_nbi(d, slot, out, len);
            gasnet_wait_syncnbi_puts();
            break;
        }
        memset(in, 0, len);
        if (it % 2)
            gasnet_get(in, d, slot, len);
        else
            gasnet_wait_syncnb(gasnet_get_nb(in, d, slot, len));
        if (memcmp(in, out, len) != 0)
            GT_FAIL("thread %d: get after put of %zu bytes to node %u", t,
                    len, (unsigned)d);
        GT_SAFE(gasnet_AMRequestShort1(d, H_INC, t));
        uint8_t *med = out;
        size_t mlen = len;
        if (it % 4 == 3) {
            mlen = 16384 + (size_t)(gt_mix((uint64_t)it * 13 + (uint64_t)t) %
                                    (65536 - 16384 + 1));
            gt_pat_fill(big, mlen, key);
            med = big;
        }
        GT_SAFE(gasnet_AMRequestMedium2(d, H_MED, med, mlen, t, it));
        sent += 2;
        if (it % 16 == 15)
            wait_acks(t, sent);
        gasnet_hsl_lock(&lock);
        tadds += 1;
        gasnet_hsl_unlock(&lock);
    }
    wait_acks(t, sent);
    free(big);
    return NULL;
}

int main(int argc, char **argv)
{
    gt_start(&argc, &argv, "gt_par", table, 3,
             (uintptr_t)SLOT * THREADS * 64);
    GT_ASSERT(strstr(GASNET_CONFIG_STRING, "THREADMODEL=PAR") != NULL,
              "built without GASNET_PAR: %s", GASNET_CONFIG_STRING);
    for (int round = 0; round < 2; round++) {
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++) /* every earlier reply is in */
            __atomic_store_n(&acks[t], 0, __ATOMIC_RELAXED);
        for (int t = 0; t < THREADS; t++)
            GT_ASSERT(pthread_create(&th[t], NULL, worker,
                                     (void *)(intptr_t)t) == 0, "create");
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        gt_barrier();
    }
    gt_barrier();
    /* Every node sent 2 * THREADS * ITERS increments spread over the
     * nodes; the sum over nodes is checked through a gather to node 0. */
    gasnet_hsl_lock(&lock);
    int64_t local = counter, adds = tadds;
    gasnet_hsl_unlock(&lock);
    GT_ASSERT(adds == 2 * THREADS * ITERS, "%" PRId64 " local adds", adds);
    int64_t *all = malloc(sizeof(int64_t) * (size_t)gt_n);
    gasnet_coll_init(NULL, 0, NULL, 0, 0);
    gasnet_coll_gather_all(GASNET_TEAM_ALL, all, &local, sizeof local,
                           GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC |
                           GASNET_COLL_LOCAL);
    int64_t sum = 0;
    for (int i = 0; i < gt_n; i++)
        sum += all[i];
    GT_ASSERT(sum == (int64_t)gt_n * THREADS * ITERS * 2,
              "%" PRId64 " increments", sum);
    GT_ASSERT(__atomic_load_n(&bad, __ATOMIC_RELAXED) == 0,
              "bad medium payloads");
    free(all);
    gt_finish("gt_par");
    return 0;
}

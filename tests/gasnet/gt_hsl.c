/* gt_hsl.c - handler-safe locks under active-message load (main code and
 * handlers updating one structure under an HSL, invariant checked by
 * both), trylock, statically and dynamically initialised locks, and a
 * remote fetch-and-add counter built the way OpenSHMEM-on-GASNet libraries
 * build atomics: an AM Medium request applied under an HSL at the target,
 * the old value returned by an AM Medium reply. */
#include "gt.h"

#define H_INC 200
#define H_ACK 201
#define H_FADD 202
#define H_FADD_REP 203

#define ROUNDS 2000
#define FADDS 500

static gasnet_hsl_t lock_static = GASNET_HSL_INITIALIZER;
static gasnet_hsl_t lock_dyn;
static struct {
    int64_t a, b;
} shared;
static volatile int acks, fadd_done;
static int errors;
static int64_t *olds; /* fetch-add results, by request index */
static char *myseg;   /* handlers may not query the segments */

static void h_inc(gasnet_token_t t, gasnet_handlerarg_t d)
{
    gasnet_hsl_lock(&lock_static);
    if (shared.a != shared.b)
        errors++;
    shared.a += d;
    shared.b += d;
    gasnet_hsl_unlock(&lock_static);
    if (gasnet_AMReplyShort0(t, H_ACK) != GASNET_OK)
        errors++;
}

static void h_ack(gasnet_token_t t)
{
    acks++;
}

typedef struct {
    uint64_t offset; /* of the counter in the target's segment */
    int64_t add;
} fadd_req_t;

static void h_fadd(gasnet_token_t t, void *buf, size_t n,
                   gasnet_handlerarg_t index)
{
    fadd_req_t q;
    if (n != sizeof q) {
        errors++;
        return;
    }
    memcpy(&q, buf, sizeof q);
    int64_t *ctr = (int64_t *)(myseg + q.offset);
    gasnet_hsl_lock(&lock_dyn);
    int64_t old = *ctr;
    *ctr = old + q.add;
    gasnet_hsl_unlock(&lock_dyn);
    if (gasnet_AMReplyMedium1(t, H_FADD_REP, &old, sizeof old, index) !=
        GASNET_OK)
        errors++;
}

static void h_fadd_rep(gasnet_token_t t, void *buf, size_t n,
                       gasnet_handlerarg_t index)
{
    if (n != sizeof(int64_t) || index < 0 || index >= FADDS) {
        errors++;
        return;
    }
    memcpy(&olds[index], buf, sizeof(int64_t));
    fadd_done++;
}

int main(int argc, char **argv)
{
    gasnet_handlerentry_t table[] = {{H_INC, h_inc},
                                     {H_ACK, h_ack},
                                     {H_FADD, h_fadd},
                                     {H_FADD_REP, h_fadd_rep}};
    int nodes_guess = atoi(getenv("TELEMEM_NRANKS") ? getenv("TELEMEM_NRANKS")
                                                    : "1");
    gt_start(&argc, &argv, "gt_hsl", table, 4,
             64 + (uintptr_t)(nodes_guess > 0 ? nodes_guess : 1) * FADDS *
                      sizeof(int64_t));
    gasnet_hsl_init(&lock_dyn);
    olds = calloc(FADDS, sizeof *olds);
    GT_ASSERT(olds, "calloc");
    gasnet_seginfo_t s0 = gt_seg(0);
    myseg = gt_seg(gt_me).addr;
    if (gt_me == 0)
        *(int64_t *)s0.addr = 0;

    /* trylock semantics. */
    gasnet_hsl_lock(&lock_static);
    GT_EXPECT(gasnet_hsl_trylock(&lock_static), GASNET_ERR_NOT_READY);
    gasnet_hsl_unlock(&lock_static);
    GT_SAFE(gasnet_hsl_trylock(&lock_static));
    gasnet_hsl_unlock(&lock_static);
    gt_barrier();

    /* Main code and handlers (requests from every node) update 'shared'
     * under the same lock. */
    int sent = 0;
    for (int r = 0; r < ROUNDS; r++) {
        gasnet_hsl_lock(&lock_static);
        GT_ASSERT(shared.a == shared.b, "invariant broken: %" PRId64
                  " != %" PRId64, shared.a, shared.b);
        shared.a += 1000;
        shared.b += 1000;
        gasnet_hsl_unlock(&lock_static);
        gasnet_node_t dest = (gasnet_node_t)((gt_me + r) % gt_n);
        GT_SAFE(gasnet_AMRequestShort1(dest, H_INC, 1));
        sent++;
        if (r % 16 == 0)
            GT_SAFE(gasnet_AMPoll());
    }
    gt_wait_ge(&acks, sent, 120, "increment acks");
    gt_barrier();
    /* Node k received ROUNDS/n (+1) increments from each node. */
    int64_t incoming = 0;
    for (int src = 0; src < gt_n; src++)
        for (int r = 0; r < ROUNDS; r++)
            incoming += (src + r) % gt_n == gt_me;
    GT_ASSERT(errors == 0, "%d handler errors", errors);
    GT_ASSERT(shared.a == shared.b &&
              shared.a == 1000 * (int64_t)ROUNDS + incoming,
              "shared %" PRId64 "/%" PRId64 ", expected %" PRId64, shared.a,
              shared.b, 1000 * (int64_t)ROUNDS + incoming);

    /* Remote fetch-and-add on node 0's counter: FADDS each, all in
     * flight together. */
    for (int i = 0; i < FADDS; i++) {
        fadd_req_t q = {0, 1};
        GT_SAFE(gasnet_AMRequestMedium1(0, H_FADD, &q, sizeof q, i));
        if (i % 32 == 0)
            GT_SAFE(gasnet_AMPoll());
    }
    gt_wait_ge(&fadd_done, FADDS, 120, "fetch-add replies");
    GT_ASSERT(errors == 0, "%d handler errors", errors);
    /* Every old value was handed out exactly once: node 0 collects them. */
    int64_t *slot = (int64_t *)((char *)s0.addr + 64) +
                    (size_t)gt_me * FADDS;
    gasnet_put_bulk(0, slot, olds, FADDS * sizeof(int64_t));
    gt_barrier();
    if (gt_me == 0) {
        int64_t total = (int64_t)gt_n * FADDS;
        GT_ASSERT(*(int64_t *)s0.addr == total, "counter %" PRId64
                  ", expected %" PRId64, *(int64_t *)s0.addr, total);
        uint8_t *seen = calloc((size_t)total, 1);
        GT_ASSERT(seen, "calloc");
        const int64_t *all = (const int64_t *)((char *)s0.addr + 64);
        for (int64_t i = 0; i < total; i++) {
            GT_ASSERT(all[i] >= 0 && all[i] < total && !seen[all[i]],
                      "fetch-add result %" PRId64 " out of range or twice",
                      all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
        gt_log("%" PRId64 " remote fetch-adds: every old value once", total);
    }
    gasnet_hsl_destroy(&lock_dyn);
    free(olds);
    gt_finish("gt_hsl");
    return 0;
}

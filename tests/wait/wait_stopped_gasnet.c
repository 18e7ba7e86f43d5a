/* wait_stopped_gasnet.c - libgasnet's waits give the CPU back: node 0
 * waits while the other nodes are stopped (SIGSTOP) for --stop-ms
 * (default 1000) in gasnet_barrier_wait, in GASNET_BLOCKUNTIL for a reply
 * to its request and for a request a stopped node sends once resumed,
 * using less than 10% of a core (TELEMEM_WAIT=spin/yield only report),
 * and each continues correctly after SIGCONT. */
#include <stdbool.h>

#include "gt.h"
#include "proc_wait.h"
#include "stop_common.h"

#define H_PING 200
#define H_PONG 201
#define H_KNOCK 202

enum { K_BARRIER, K_REPLY, K_REQUEST, K_COUNT };
static const char *const names[K_COUNT] = {
    "gasnet_barrier_wait", "BLOCKUNTIL (reply)", "BLOCKUNTIL (request)"};
static volatile int pongs, knocks;

static void ping(gasnet_token_t t)
{
    gasnet_AMReplyShort0(t, H_PONG);
}

static void pong(gasnet_token_t t)
{
    (void)t;
    pongs++;
}

static void knock(gasnet_token_t t)
{
    (void)t;
    knocks++;
}

int main(int argc, char **argv)
{
    gasnet_handlerentry_t table[] = {{H_PING, (gasnetc_handler_fn_t)ping},
                                     {H_PONG, (gasnetc_handler_fn_t)pong},
                                     {H_KNOCK, (gasnetc_handler_fn_t)knock}};
    gt_start(&argc, &argv, "wait_stopped_gasnet", table, 3,
             GASNET_PAGESIZE);
    if (gt_n < 2) {
        gt_log("SKIP: needs 2 nodes or more");
        gasnet_exit(77);
    }
    long stop_ms = 1000;
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--stop-ms=", 10))
            stop_ms = atol(argv[i] + 10);
    const char *mode = getenv("TELEMEM_WAIT");
    bool check = !mode || !strcmp(mode, "auto") || !strcmp(mode, "block");
    int *pids = calloc((size_t)gt_n, sizeof *pids);
    int *mine = gt_seg(gt_me).addr;
    *mine = (int)getpid();
    gt_barrier();
    for (int r = 0; r < gt_n; r++)
        gasnet_get(&pids[r], r, gt_seg(r).addr, sizeof(int));
    gt_barrier();
    for (int k = 0; k < K_COUNT; k++) {
        gt_barrier();
        if (gt_me != 0) {
            raise(SIGSTOP);
            if (k == K_BARRIER)
                gt_barrier();
            if (k == K_REQUEST && gt_me == 1)
                GT_SAFE(gasnet_AMRequestShort0(0, H_KNOCK));
            gt_barrier();
            continue;
        }
        char err[128];
        for (int r = 1; r < gt_n; r++)
            GT_ASSERT(tt_proc_wait_stopped(pids[r], err, sizeof err) == 0,
                      "%s", err);
        sc_resumer_t res = {.pids = pids, .n = gt_n,
                            .seconds = (double)stop_ms / 1e3};
        GT_ASSERT(sc_resume_later(&res) == 0, "pthread_create");
        double c0 = sc_cpu_now();
        switch (k) {
        case K_BARRIER:
            gt_barrier();
            break;
        case K_REPLY:
            GT_SAFE(gasnet_AMRequestShort0(1, H_PING));
            GASNET_BLOCKUNTIL(pongs == 1);
            break;
        case K_REQUEST:
            GASNET_BLOCKUNTIL(knocks == 1);
            break;
        }
        double cpu = sc_cpu_now() - c0;
        sc_resume_join(&res);
        gt_log("%-21s CPU %.4f s while the peers were stopped %.1f s",
               names[k], cpu, (double)stop_ms / 1e3);
        if (check)
            GT_ASSERT(cpu < 0.1 * (double)stop_ms / 1e3,
                      "%s: CPU %.3f s (more than 10%%)", names[k], cpu);
        gt_barrier();
    }
    free(pids);
    gt_finish("wait_stopped_gasnet");
    return 0;
}

/* gt_exit.c - how GASNet jobs end: collective gasnet_exit(0), one node's
 * gasnet_exit(0) joined by nodes busy in AMPoll, a barrier, BLOCKUNTIL or
 * gets, return from main, a non-zero exit code, and the fatal errors
 * (address outside a segment, handler rule violations, unregistered
 * handler, barrier misuse).  The mode is --mode=NAME; meson checks the
 * job's exit status and output. */
#include "gt.h"

static volatile int replies;
static volatile int never;

static void h_request_in_handler(gasnet_token_t t)
{
    gasnet_AMRequestShort0(gasnet_mynode(), 201); /* fatal */
}
static void h_reply_twice(gasnet_token_t t)
{
    GT_SAFE(gasnet_AMReplyShort0(t, 203));
    gasnet_AMReplyShort0(t, 203); /* fatal */
}
static void h_reply_to_reply(gasnet_token_t t)
{
    gasnet_AMReplyShort0(t, 203); /* fatal: a reply handler */
}
static void h_request_for_reply(gasnet_token_t t)
{
    GT_SAFE(gasnet_AMReplyShort0(t, 204));
}
static void h_count(gasnet_token_t t)
{
    replies++;
}
static void h_nothing(gasnet_token_t t)
{
}

/* Poll until the launcher ends the job (fatal cases). */
static void park(void)
{
    GASNET_BLOCKUNTIL(never);
    GT_FAIL("never became true");
}

int main(int argc, char **argv)
{
    const char *mode = "collective";
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--mode=", 7) == 0)
            mode = argv[i] + 7;
    gasnet_handlerentry_t table[] = {
        {201, h_nothing},          {202, h_request_in_handler},
        {203, h_count},            {204, h_reply_to_reply},
        {205, h_reply_twice},      {206, h_request_for_reply},
    };
    gt_start(&argc, &argv, "gt_exit", table, 6, 64 * 1024);
    int last = gt_n - 1;
    gt_barrier();

    if (strcmp(mode, "collective") == 0) {
        if (gt_me == 0)
            gt_log("collective exit");
        gasnet_exit(0);
    } else if (strcmp(mode, "one") == 0) {
        /* Node 3 tells node 0 (a flag put into its segment) once its loop
         * of gets is past the first ones, which poll: node 0's notice then
         * arrives while node 3 only makes gets. */
        volatile uint64_t *flag =
            (volatile uint64_t *)((char *)gt_seg(0).addr + 64);
        if (gt_me == 0) {
            if (gt_n > 3)
                GASNET_BLOCKUNTIL(*flag != 0);
            gt_log("node 0 leaves alone");
            gasnet_exit(0);
        }
        /* The others are busy in different ways; each joins the exit. */
        switch (gt_me % 4) {
        case 1:
            gasnet_barrier_notify(1, 0);
            gasnet_barrier_wait(1, 0);
            break;
        case 2:
            GASNET_BLOCKUNTIL(never);
            break;
        case 3: {
            gasnet_seginfo_t s = gt_seg(0);
            for (long i = 0;; i++) {
                uint64_t v;
                gasnet_get(&v, 0, s.addr, sizeof v);
                if (i == 100) {
                    uint64_t one = 1;
                    gasnet_put(0, (void *)(uintptr_t)flag, &one, sizeof one);
                }
            }
        }
        default:
            for (;;)
                GT_SAFE(gasnet_AMPoll());
        }
        GT_FAIL("node %d was not ended by node 0's gasnet_exit(0)", gt_me);
    } else if (strcmp(mode, "return") == 0) {
        if (gt_me == 0)
            gt_log("returning from main");
        return 0;
    } else if (strcmp(mode, "return-code") == 0) {
        /* As gasnet_exit(9): the others spin without calling GASNet. */
        if (gt_me == last) {
            gt_log("node %d returns 9 from main", gt_me);
            return 9;
        }
        for (volatile int spin = 1; spin;)
            ;
    } else if (strcmp(mode, "code") == 0) {
        if (gt_me == last) {
            gt_log("node %d exits with 7", gt_me);
            gasnet_exit(7);
        }
        park();
    } else if (strcmp(mode, "fatal") == 0) {
        if (gt_me == last) {
            gasnet_seginfo_t s = gt_seg(0);
            uint64_t v = 1;
            gasnet_put(0, (char *)s.addr + s.size, &v, sizeof v);
        }
        park();
    } else if (strcmp(mode, "request-in-handler") == 0) {
        if (gt_me == last)
            GT_SAFE(gasnet_AMRequestShort0(0, 202));
        park();
    } else if (strcmp(mode, "reply-twice") == 0) {
        if (gt_me == last)
            GT_SAFE(gasnet_AMRequestShort0(0, 205));
        park();
    } else if (strcmp(mode, "reply-to-reply") == 0) {
        if (gt_me == last)
            GT_SAFE(gasnet_AMRequestShort0(0, 206));
        park();
    } else if (strcmp(mode, "unregistered") == 0) {
        if (gt_me == last)
            GT_SAFE(gasnet_AMRequestShort0(0, 200));
        park();
    } else if (strcmp(mode, "barrier-order") == 0) {
        if (gt_me == last)
            gasnet_barrier_wait(0, 0);
        park();
    }
    GT_FAIL("unknown mode %s", mode);
}

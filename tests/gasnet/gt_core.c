/* gt_core.c - GASNet job control and queries: constants and error codes,
 * calls before init/attach, gasnet_attach's argument checks and handler
 * index assignment, per-node segment sizes seen identically by every node,
 * node info, getenv, wait modes and the threadinfo macros. */
#include "gt.h"

#if !defined(GASNET_SEGMENT_FAST) || GASNET_ALIGNED_SEGMENTS != 0
#error "expected GASNET_SEGMENT_FAST with unaligned segments"
#endif
#if GASNET_PAGESIZE < 4096 || (GASNET_PAGESIZE & (GASNET_PAGESIZE - 1))
#error "GASNET_PAGESIZE must be a power of two literal"
#endif
#if GASNET_SPEC_VERSION_MAJOR != 1 || GASNET_SPEC_VERSION_MINOR != 8
#error "expected spec 1.8"
#endif
#if GASNET_RELEASE_VERSION_MAJOR < 1
#error "release version"
#endif

static volatile int pings;

static void ping_handler(gasnet_token_t token, gasnet_handlerarg_t a)
{
    pings += a;
}
static void other_handler(gasnet_token_t token)
{
}

#define SEG_UNIT (64 * 1024)

int main(int argc, char **argv)
{
    gt_proc_line();
    /* Before gasnet_init(). */
    GT_ASSERT(GASNET_OK == 0 && GASNET_ERR_NOT_INIT == 10001 &&
              GASNET_ERR_RESOURCE == 10002 && GASNET_ERR_BAD_ARG == 10003 &&
              GASNET_ERR_NOT_READY == 10004 &&
              GASNET_ERR_BARRIER_MISMATCH == 10005, "error code values");
    GT_ASSERT(strcmp(gasnet_ErrorName(GASNET_ERR_BAD_ARG),
                     "GASNET_ERR_BAD_ARG") == 0, "ErrorName");
    GT_ASSERT(strcmp(gasnet_ErrorName(12345), "*unknown*") == 0,
              "ErrorName of an unknown code");
    GT_ASSERT(gasnet_ErrorDesc(GASNET_ERR_NOT_READY)[0] != '\0', "ErrorDesc");
    GT_ASSERT(gasnet_mynode() == 0 && gasnet_nodes() == 0,
              "queries before init");
    GT_EXPECT(gasnet_AMPoll(), GASNET_ERR_NOT_INIT);
    GT_EXPECT(gasnet_attach(NULL, 0, 0, 0), GASNET_ERR_NOT_INIT);
    gasnet_seginfo_t si[2];
    GT_EXPECT(gasnet_getSegmentInfo(si, 2), GASNET_ERR_NOT_INIT);
    GT_ASSERT(strlen(GASNET_CONFIG_STRING) > 10, "GASNET_CONFIG_STRING");
    GT_ASSERT(SIZEOF_GASNET_REGISTER_VALUE_T ==
              sizeof(gasnet_register_value_t), "register value size");
    GT_ASSERT(gasnet_AMMaxArgs() == 16 && gasnet_AMMaxMedium() >= 512 &&
              gasnet_AMMaxLongRequest() >= 512 &&
              gasnet_AMMaxLongReply() >= 512, "AM limits");
    GT_ASSERT(sizeof(gasnet_handlerarg_t) == 4, "handler arguments are 32 "
              "bits");

    GT_SAFE(gasnet_init(&argc, &argv));
    GT_EXPECT(gasnet_init(&argc, &argv), GASNET_ERR_NOT_INIT);
    gt_me = (int)gasnet_mynode();
    gt_n = (int)gasnet_nodes();
    GT_ASSERT(gt_n >= 1 && gt_me < gt_n && (unsigned)gt_n <= GASNET_MAXNODES,
              "node %d of %d", gt_me, gt_n);

    /* Between init and attach. */
    uintptr_t maxl = gasnet_getMaxLocalSegmentSize();
    uintptr_t maxg = gasnet_getMaxGlobalSegmentSize();
    GT_ASSERT(maxl % GASNET_PAGESIZE == 0 && maxg % GASNET_PAGESIZE == 0 &&
              maxg <= maxl && maxg >= (uintptr_t)SEG_UNIT * (uintptr_t)gt_n,
              "segment limits %ju / %ju", (uintmax_t)maxl, (uintmax_t)maxg);
    gasnet_nodeinfo_t *ni = calloc((size_t)gt_n + 1, sizeof *ni);
    GT_ASSERT(ni, "calloc");
    ni[gt_n].host = 777;
    GT_SAFE(gasnet_getNodeInfo(ni, gt_n + 1));
    GT_ASSERT(ni[gt_n].host == 777, "entry past the nodes was written");
    for (int i = 0; i < gt_n; i++)
        GT_ASSERT(ni[i].host == 0 && ni[i].supernode == 0 &&
                  ni[i].offset == 0, "node %d: host %u (one machine)", i,
                  (unsigned)ni[i].host);
    GT_EXPECT(gasnet_getNodeInfo(NULL, 3), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_getNodeInfo(ni, -1), GASNET_ERR_BAD_ARG);
    free(ni);
    GT_ASSERT(gasnet_getenv("PATH") != NULL, "gasnet_getenv(PATH)");
    GT_ASSERT(gasnet_getenv("GT_SURELY_NOT_SET_XYZ") == NULL, "getenv");
    GT_ASSERT(gasnet_getenv(NULL) == NULL, "getenv(NULL)");

    /* gasnet_attach's checks happen before any communication. */
    gasnet_handlerentry_t bad_low[] = {{5, other_handler}};
    gasnet_handlerentry_t bad_dup[] = {{200, other_handler},
                                       {200, other_handler}};
    gasnet_handlerentry_t bad_null[] = {{201, NULL}};
    GT_EXPECT(gasnet_attach(bad_low, 1, 0, 0), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_attach(bad_dup, 2, 0, 0), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_attach(bad_null, 1, 0, 0), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_attach(NULL, 1, 0, 0), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_attach(NULL, -1, 0, 0), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_attach(NULL, 0, GASNET_PAGESIZE + 1, 0),
              GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_attach(NULL, 0, maxl + GASNET_PAGESIZE, 0),
              GASNET_ERR_BAD_ARG);

    /* Index 0 = any: lowest free index in table order. */
    gasnet_handlerentry_t table[] = {{0, ping_handler},
                                     {128, other_handler},
                                     {0, other_handler},
                                     {255, other_handler}};
    uintptr_t mine = (uintptr_t)SEG_UNIT * (uintptr_t)(gt_me + 1);
    GT_SAFE(gasnet_attach(table, 4, mine, 0));
    GT_ASSERT(table[0].index == 129 && table[1].index == 128 &&
              table[2].index == 130 && table[3].index == 255,
              "assigned indices %u %u %u %u", table[0].index, table[1].index,
              table[2].index, table[3].index);
    GT_EXPECT(gasnet_attach(table, 4, mine, 0), GASNET_ERR_NOT_INIT);
    if (gt_me == 0)
        gt_log("gt_core: %d nodes, max segment %ju (global %ju)", gt_n,
               (uintmax_t)maxl, (uintmax_t)maxg);

    /* Segments: sizes as asked, page aligned, extra entries untouched. */
    gasnet_seginfo_t *seg = calloc((size_t)gt_n + 1, sizeof *seg);
    GT_ASSERT(seg, "calloc");
    seg[gt_n].size = 4242;
    GT_SAFE(gasnet_getSegmentInfo(seg, gt_n + 1));
    GT_ASSERT(seg[gt_n].size == 4242, "entry past the nodes was written");
    GT_EXPECT(gasnet_getSegmentInfo(NULL, 2), GASNET_ERR_BAD_ARG);
    GT_EXPECT(gasnet_getSegmentInfo(seg, -3), GASNET_ERR_BAD_ARG);
    GT_SAFE(gasnet_getSegmentInfo(seg, 0));
    for (int i = 0; i < gt_n; i++) {
        GT_ASSERT(seg[i].size == (uintptr_t)SEG_UNIT * (uintptr_t)(i + 1),
                  "node %d segment size %ju", i, (uintmax_t)seg[i].size);
        GT_ASSERT((uintptr_t)seg[i].addr % GASNET_PAGESIZE == 0,
                  "node %d segment %p not page aligned", i, seg[i].addr);
    }
    /* Every node writes its number at both ends of its segment; every node
     * reads them back through the addresses it was told. */
    uint64_t *own = seg[gt_me].addr;
    own[0] = 0x1000u + (uint64_t)gt_me;
    own[seg[gt_me].size / 8 - 1] = 0x2000u + (uint64_t)gt_me;
    gt_barrier();
    for (int i = 0; i < gt_n; i++) {
        uint64_t first = 0, last = 0;
        gasnet_get(&first, (gasnet_node_t)i, seg[i].addr, 8);
        gasnet_get(&last, (gasnet_node_t)i,
                   (char *)seg[i].addr + seg[i].size - 8, 8);
        GT_ASSERT(first == 0x1000u + (uint64_t)i &&
                  last == 0x2000u + (uint64_t)i,
                  "node %d segment ends hold %#" PRIx64 " %#" PRIx64, i,
                  first, last);
    }

    /* The assigned index works: one ping from every node to every node. */
    for (int i = 0; i < gt_n; i++)
        GT_SAFE(gasnet_AMRequestShort1((gasnet_node_t)i, table[0].index, 1));
    gt_wait_ge(&pings, gt_n, 60, "pings");

    /* Wait modes and threadinfo. */
    {
        GASNET_BEGIN_FUNCTION();
        gasnet_threadinfo_t ti = GASNET_GET_THREADINFO();
        GASNET_POST_THREADINFO(ti);
        GT_SAFE(gasnet_set_waitmode(GASNET_WAIT_SPIN));
        GT_SAFE(gasnet_set_waitmode(GASNET_WAIT_BLOCK));
        GT_SAFE(gasnet_set_waitmode(GASNET_WAIT_SPINBLOCK));
        GT_EXPECT(gasnet_set_waitmode(99), GASNET_ERR_BAD_ARG);
    }
    gasnet_hold_interrupts();
    gasnet_resume_interrupts();
    free(seg);
    gt_finish("gt_core");
    return 0;
}

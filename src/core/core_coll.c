/* core_coll.c - the public collectives (barrier, broadcast, allreduce,
 * allgather) and the path each of their steps takes: with a node area
 * (coll_node.c), the ranks of a node meet through shared memory and one
 * leader per node (its lowest rank) carries the node's part over
 * messages to the other nodes' leaders (coll_msg.c), then shares the
 * result; without one (TELEMEM_COLL=flat, or a transport without node
 * area) every rank takes part in the message algorithms.  docs/coll.md. */
#define TLM_LOG_SUBSYS "coll"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/coll_int.h"

/* The nodes: leaders[k] is node k's lowest rank (ascending). */
static struct {
    int nnodes, node;   /* nodes of the job, this rank's */
    int *leaders;
    int *reps;          /* scratch: a broadcast's node representatives */
    tlm_core_coll_grp_t world, lead;
} C;

static bool hier(void)
{
    return tlm_core_node_on();
}

static bool multi(void)
{
    return C.nnodes > 1;
}

static bool is_leader(void)
{
    return tlm_core_node.me == 0;
}

/* The node index of rank r (its leader's place in leaders[]). */
static int node_of(int r)
{
    int lead = tlm_core.node_leader[r], lo = 0, hi = C.nnodes - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (C.leaders[mid] < lead)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int tlm_core_coll_init(void)
{
    memset(&C, 0, sizeof(C));
    tlm_core_coll_thresholds_init();
    tlm_core_coll_msg_init();
    int rc = tlm_core_node_init();
    int n = tlm_core.nranks;
    C.leaders = malloc((size_t)n * sizeof(int));
    C.reps = malloc((size_t)n * sizeof(int));
    if (rc != TELEMEM_OK || !C.leaders || !C.reps)
        return rc != TELEMEM_OK ? rc : TELEMEM_ERR_NO_MEMORY;
    for (int r = 0; r < n; r++)
        if (tlm_core.node_leader[r] == r)
            C.leaders[C.nnodes++] = r;
    C.node = node_of(tlm_core.rank);
    C.world = (tlm_core_coll_grp_t){n, tlm_core.rank, NULL};
    C.lead = (tlm_core_coll_grp_t){C.nnodes, C.node, C.leaders};
    tlm_debug("collectives: %s, %d ranks on this node, %d nodes%s",
              hier() ? "node-aware (shared memory in a node, leaders "
                       "across nodes)"
                     : "flat (messages among all ranks)",
              tlm_core_node.nlocal, C.nnodes,
              !hier() ? strcmp(tlm_core.cfg.COLL, "flat") == 0
                            ? ": TELEMEM_COLL=flat"
                            : ": no node area (transport)"
              : C.nnodes == 1 && !tlm_core.locking &&
                      !tlm_core.cfg.PROGRESS_THREAD
                  ? "; a node step's waits sleep on the node word"
                  : "; a node step's waits sleep on their doorbells");
    return TELEMEM_OK;
}

void tlm_core_coll_fini(void)
{
    tlm_core_node_fini();
    tlm_core_coll_msg_fini();
    free(C.leaders);
    free(C.reps);
    memset(&C, 0, sizeof(C));
}

/* ---- barrier ------------------------------------------------------------- */

static int hier_barrier(uint32_t seq)
{
    int nl = tlm_core_node.nlocal;
    if (nl == 1)
        return multi() ? tlm_core_coll_msg_barrier(&C.lead, seq, 0)
                       : TELEMEM_OK;
    uint64_t s;
    (void)tlm_core_node_begin(false, &s);
    bool last = tlm_core_node_arrive(s);
    if (!multi()) {
        if (!last)
            return tlm_core_node_wait_release(s);
        tlm_core_node_release(s, TELEMEM_OK);
        return TELEMEM_OK;
    }
    if (!is_leader())
        return tlm_core_node_wait_release(s);
    int rc = tlm_core_node_wait_all(s);
    if (rc == TELEMEM_OK)
        rc = tlm_core_coll_msg_barrier(&C.lead, seq, 0);
    tlm_core_node_release(s, rc);
    return rc;
}

int telemem_barrier(void)
{
    TLM_API_GUARD();
    int rc = tlm_core_coll_enter("barrier", 0);
    if (rc != TELEMEM_OK)
        return rc;
    uint32_t seq = tlm_core.coll_seq;
    tlm_debug("barrier %u: %s", seq,
              !hier() ? "flat (dissemination)"
              : multi() ? "node step, leaders' dissemination"
                        : "node step");
    rc = hier() ? hier_barrier(seq) : tlm_core_coll_msg_barrier(&C.world,
                                                                seq, 0);
    return tlm_core_coll_leave(rc);
}

/* ---- broadcast ------------------------------------------------------------- */

/* Where a broadcast's data is, as its readers find it in the root's
 * small slot of the first step: the root's buffer (cma), or that step's
 * set. */
typedef struct {
    uint64_t addr, bytes, piece;
    int32_t pid;
    int32_t cma;
} bcast_desc_t;

/* The readers' side of a broadcast from the root's buffer (d): a set's
 * size at a time (a piece's source and destination stay in the caches),
 * then the arrival at the step whose arrivals the root waits for. */
static int read_root(uint8_t *buf, size_t bytes, const bcast_desc_t *d,
                     int rootl)
{
    int rc = TELEMEM_OK;
    if (d->bytes != bytes) {
        tlm_error("broadcast: %zu bytes here, %llu at the root (local rank "
                  "%d)", bytes, (unsigned long long)d->bytes, rootl);
        rc = TELEMEM_ERR_INVALID_ARG;
    }
    for (size_t off = 0; rc == TELEMEM_OK && off < bytes;) {
        size_t c = TLM_MIN(bytes - off, tlm_core_node.set_bytes);
        rc = tlm_core_node_cma_read(d->pid, buf + off,
                                    (uintptr_t)d->addr + off, c);
        off += c;
    }
    uint64_t s2;
    (void)tlm_core_node_begin(false, &s2);
    tlm_core_node_arrive(s2);
    return rc;
}

/* bytes of buf from local rank rootl to the node's other ranks; rootl
 * releases the first step with status (an error it met before, which
 * every rank then returns).  What the root finds when it comes decides
 * the way, which it tells the readers in its small slot of the first
 * step:
 * - From the root's buffer (node.cma, from the bcast-cma size, no reader
 *   yielding or sleeping): the root says where buf lies and releases;
 *   each reader copies from there (process_vm_readv) and arrives at a
 *   second step, whose arrivals the root waits for before buf may
 *   change.  One copy, by each reader.  (A reader that sleeps would make
 *   the root wait for its wake-up.)
 * - Else through the node area, a piece per step: bcast_piece bytes when
 *   no reader yields or sleeps (a reader arrives at the next step only
 *   after it copied this one's piece out, and the root writes the set of
 *   step s + 2 only after every rank arrived at s + 1, so the root copies
 *   piece s + 1 in while the readers copy piece s out), a whole set
 *   otherwise (each step's release would wake them again). */
static int node_bcast(void *buf, size_t bytes, int rootl, int status)
{
    tlm_core_node_t *N = &tlm_core_node;
    bool may_cma = N->cma && bytes >= tlm_core_coll_thr[TLM_COLL_BCAST_CMA];
    bool choice = may_cma || bytes > N->bcast_piece;
    uint8_t *b = buf;
    size_t off = 0, piece = N->set_bytes;
    int rc = TELEMEM_OK;
    do {
        uint64_t s;
        bcast_desc_t d = {0};
        if (N->me == rootl) {
            rc = tlm_core_node_begin(true, &s);
            if (off == 0 && choice) {
                bool awake = !tlm_core_node_asleep(rootl);
                piece = awake ? N->bcast_piece : N->set_bytes;
                d = (bcast_desc_t){(uintptr_t)buf, bytes, piece,
                                   (int32_t)getpid(), may_cma && awake};
                memcpy(tlm_core_node_small(s, rootl), &d, sizeof(d));
            }
            size_t c = TLM_MIN(bytes - off, piece);
            if (rc == TELEMEM_OK && status == TELEMEM_OK && c && !d.cma)
                memcpy(tlm_core_node_set(s), b + off, c);
            tlm_core_node_arrive(s);
            tlm_core_node_release(s, rc != TELEMEM_OK ? rc : status);
            if (d.cma && rc == TELEMEM_OK && status == TELEMEM_OK) {
                uint64_t s2;
                (void)tlm_core_node_begin(false, &s2);
                tlm_core_node_arrive(s2);
                return tlm_core_node_wait_all(s2);
            }
            off += c;
        } else {
            (void)tlm_core_node_begin(false, &s);
            tlm_core_node_arrive(s);
            rc = tlm_core_node_wait_release(s);
            if (rc == TELEMEM_OK && off == 0 && choice) {
                memcpy(&d, tlm_core_node_small(s, rootl), sizeof(d));
                if (d.cma)
                    return read_root(b, bytes, &d, rootl);
                piece = d.piece ? (size_t)d.piece : N->set_bytes;
            }
            size_t c = TLM_MIN(bytes - off, piece);
            if (rc == TELEMEM_OK && c)
                memcpy(b + off, tlm_core_node_set(s), c);
            off += c;
        }
    } while (rc == TELEMEM_OK && status == TELEMEM_OK && off < bytes);
    return rc != TELEMEM_OK ? rc : status;
}

/* Node representatives of a broadcast from root: every node's leader,
 * root for its own node. */
static int hier_bcast(void *buf, size_t bytes, int root, uint32_t seq)
{
    int rnode = node_of(root);
    int rep = rnode == C.node ? root : C.leaders[C.node];
    int rc = TELEMEM_OK;
    if (multi() && rep == tlm_core.rank) {
        memcpy(C.reps, C.leaders, (size_t)C.nnodes * sizeof(int));
        C.reps[rnode] = root;
        tlm_core_coll_grp_t g = {C.nnodes, C.node, C.reps};
        rc = tlm_core_coll_msg_bcast(&g, buf, bytes, rnode, seq, 0);
    }
    if (tlm_core_node.nlocal == 1 || !bytes)
        return rc;
    int rootl = 0;
    while (tlm_core_node.rank[rootl] != rep)
        rootl++;
    return node_bcast(buf, bytes, rootl, rc);
}

int telemem_broadcast(void *buf, size_t bytes, int root)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (root < 0 || root >= tlm_core.nranks || (!buf && bytes)) {
        tlm_error("broadcast: %s", !buf && bytes ? "buffer is NULL"
                                                 : "root out of range");
        return TELEMEM_ERR_INVALID_ARG;
    }
    rc = tlm_core_coll_enter("broadcast", bytes);
    if (rc != TELEMEM_OK)
        return rc;
    uint32_t seq = tlm_core.coll_seq;
    tlm_debug("broadcast %u: %zu bytes from rank %d: %s", seq, bytes, root,
              !hier() ? "flat (binomial)"
              : multi() ? "leaders' binomial tree, node steps"
                        : "node steps");
    rc = hier() ? hier_bcast(buf, bytes, root, seq)
                : tlm_core_coll_msg_bcast(&C.world, buf, bytes, root, seq, 0);
    return tlm_core_coll_leave(rc);
}

/* ---- allreduce ------------------------------------------------------------- */

typedef struct {
    telemem_type_t type;
    telemem_op_t op;
    size_t es;
} red_t;

/* Local rank l's c bytes into dst: the first (l == 0) copied, the others
 * combined, so that every reduction folds in local-rank order (the same
 * bits whoever reduces). */
static void fold(const red_t *rd, uint8_t *dst, const uint8_t *src,
                 size_t c, int l)
{
    if (l == 0)
        memcpy(dst, src, c);
    else
        tlm_core_coll_combine(dst, src, c / rd->es, rd->type, rd->op);
}

/* dst = slot 0 op slot 1 op ... of step s, the first c bytes of each. */
static void reduce_slots(const red_t *rd, uint8_t *dst, uint64_t s,
                         bool small, size_t c)
{
    for (int l = 0; l < tlm_core_node.nlocal; l++)
        fold(rd, dst, small ? tlm_core_node_small(s, l)
                            : tlm_core_node_slot(s, l), c, l);
}

/* Do the pieces of an allreduce of bytes in large slots take the split
 * reduction?  When the node reduces at least the threshold per piece
 * (ranks x piece; a lower one where the ranks fit the CPUs): one reducer
 * then reads that much (time, and pages it maps), where the split makes
 * every rank read a stripe of each slot at the cost of one more node
 * step.  Decided for the whole allreduce: a
 * short last piece of a long one is split too (one rank would otherwise
 * map that piece of every slot: 8 MiB of 64 ranks' 128 KiB tails). */
static bool split(size_t bytes)
{
    return (uint64_t)TLM_MIN(bytes, tlm_core_node.slot) *
               (uint64_t)tlm_core_node.nlocal >=
           tlm_core_node.split_at;
}

/* Rank k's stripe of a piece of c bytes in the split reduction: whole
 * cache lines, [*lo, *hi). */
static void stripe(size_t c, int k, size_t *lo, size_t *hi)
{
    size_t lines = (c + 63) / 64, nl = (size_t)tlm_core_node.nlocal;
    *lo = TLM_MIN(lines * (size_t)k / nl * 64, c);
    *hi = TLM_MIN(lines * (size_t)(k + 1) / nl * 64, c);
}

/* The split layout of step s's slots: stripe k of every rank side by side
 * (region k: L times its length, from L times its start; all regions fit
 * in the L slots), rank j's part j-th, so that stripe k's reducer reads
 * one contiguous range.  A process that reads a page of shared memory
 * maps the pages around it that are in memory (the kernel's fault-around,
 * 64 KiB): reading a stripe of every rank's own slot mapped 64 KiB or more
 * per slot, 16 MiB per set at 256 ranks, counted in every rank's RSS;
 * writes map only their pages. */
static uint8_t *region_part(uint64_t s, size_t c, int k, int j)
{
    size_t lo, hi;
    stripe(c, k, &lo, &hi);
    return tlm_core_node_set(s) + (size_t)tlm_core_node.nlocal * lo +
           (size_t)j * (hi - lo);
}

/* This rank's piece of c bytes into step s's slots: its own small or
 * large slot, or with the split reduction (sp) its part of every
 * stripe's region. */
static void piece_in(uint64_t s, const uint8_t *src, size_t c, bool small,
                     bool sp)
{
    tlm_core_node_t *N = &tlm_core_node;
    if (!sp) {
        memcpy(small ? tlm_core_node_small(s, N->me)
                     : tlm_core_node_slot(s, N->me), src, c);
        return;
    }
    for (int k = 0; k < N->nlocal; k++) {
        size_t lo, hi;
        stripe(c, k, &lo, &hi);
        if (hi > lo)
            memcpy(region_part(s, c, k, N->me), src + lo, hi - lo);
    }
}

/* The split reduction of step s's piece (c bytes in the split layout,
 * every rank arrived or arriving): when all have arrived, each rank
 * combines its stripe's region, in local-rank order, into the result slot
 * of the next step's set (data is read before a rank arrives at the step
 * after the one whose set holds it), then arrives at that step; with
 * wait, it returns once all have, and *res holds the whole result. */
static int split_piece(const red_t *rd, uint64_t s, size_t c, bool wait,
                       uint8_t **res)
{
    tlm_core_node_t *N = &tlm_core_node;
    int rc = tlm_core_node_wait_all(s);
    if (rc != TELEMEM_OK)
        return rc;
    uint64_t s2;
    (void)tlm_core_node_begin(false, &s2); /* the set of s2: free since s */
    *res = tlm_core_node_result(s2);
    size_t lo, hi;
    stripe(c, N->me, &lo, &hi);
    for (int l = 0; hi > lo && l < N->nlocal; l++)
        fold(rd, *res + lo, region_part(s, c, N->me, l), hi - lo, l);
    tlm_core_node_arrive(s2);
    return wait ? tlm_core_node_wait_all(s2) : TELEMEM_OK;
}

/* One node: per piece, each rank writes its slot; the last to arrive
 * reduces every slot into the result and releases, or (split) every rank
 * reduces a stripe; then each copies the result out. */
static int node_allreduce(const red_t *rd, uint8_t *buf, size_t bytes)
{
    tlm_core_node_t *N = &tlm_core_node;
    bool small = bytes <= N->small, sp = !small && split(bytes);
    size_t piece = small ? N->small : N->slot;
    int rc = TELEMEM_OK;
    for (size_t off = 0; rc == TELEMEM_OK && off < bytes; off += piece) {
        size_t c = TLM_MIN(piece, bytes - off);
        uint64_t s;
        rc = tlm_core_node_begin(true, &s);
        if (rc != TELEMEM_OK)
            break;
        uint8_t *res = small ? tlm_core_node_small(s, N->nlocal)
                             : tlm_core_node_result(s);
        piece_in(s, buf + off, c, small, sp);
        bool last = tlm_core_node_arrive(s);
        if (sp) {
            rc = split_piece(rd, s, c, true, &res);
        } else if (last) {
            reduce_slots(rd, res, s, small, c);
            tlm_core_node_release(s, TELEMEM_OK);
        } else {
            rc = tlm_core_node_wait_release(s);
        }
        if (rc == TELEMEM_OK)
            memcpy(buf + off, res, c);
    }
    return rc;
}

/* Several nodes, the node's part of a piece of step s in the large slots
 * (each rank wrote its slot and arrived): the leader gets the node's
 * reduction in dst, from the split reduction (sp) or its own. */
static int multi_piece(const red_t *rd, uint8_t *dst, uint64_t s, size_t c,
                       bool sp)
{
    if (sp) {
        uint8_t *res;
        int rc = split_piece(rd, s, c, is_leader(), &res);
        if (rc == TELEMEM_OK && is_leader())
            memcpy(dst, res, c);
        return rc;
    }
    if (!is_leader()) /* the leader reads the set until it releases */
        return tlm_core_node_wait_release(s);
    int rc = tlm_core_node_wait_all(s);
    if (rc == TELEMEM_OK)
        reduce_slots(rd, dst, s, false, c);
    tlm_core_node_release(s, rc);
    return rc;
}

/* Several nodes: per piece, the node's reduction reaches the leader; the
 * leaders' allreduce; the leader's broadcast to its node.  A small one is
 * a single node step (the leader reduces and releases the result). */
static int multi_allreduce(const red_t *rd, uint8_t *buf, size_t count,
                           uint32_t seq)
{
    tlm_core_node_t *N = &tlm_core_node;
    size_t bytes = count * rd->es;
    bool small = bytes <= N->small, sp = !small && split(bytes);
    size_t piece = small ? N->small : N->slot;
    int rc = TELEMEM_OK;
    uint64_t s = 0;
    for (size_t off = 0; rc == TELEMEM_OK && off < bytes; off += piece) {
        size_t c = TLM_MIN(piece, bytes - off);
        rc = tlm_core_node_begin(true, &s);
        if (rc != TELEMEM_OK)
            break;
        piece_in(s, buf + off, c, small, sp);
        tlm_core_node_arrive(s);
        if (!small)
            rc = multi_piece(rd, buf + off, s, c, sp);
        else if (is_leader())
            rc = tlm_core_node_wait_all(s);
        if (small && is_leader() && rc == TELEMEM_OK)
            reduce_slots(rd, buf, s, true, c);
    }
    if (is_leader() && rc == TELEMEM_OK)
        rc = tlm_core_coll_msg_allreduce(&C.lead, buf, count, rd->type,
                                         rd->op, seq, 0);
    if (small) { /* the same step: the leader releases the result */
        uint8_t *res = tlm_core_node_small(s, N->nlocal);
        if (is_leader()) {
            if (rc == TELEMEM_OK)
                memcpy(res, buf, bytes);
            tlm_core_node_release(s, rc);
            return rc;
        }
        if (rc == TELEMEM_OK)
            rc = tlm_core_node_wait_release(s);
        if (rc == TELEMEM_OK)
            memcpy(buf, res, bytes);
        return rc;
    }
    return node_bcast(buf, bytes, 0, is_leader() ? rc : TELEMEM_OK);
}

static int hier_allreduce(const red_t *rd, void *buf, size_t count,
                          uint32_t seq)
{
    if (!count) /* on every node alike (a node of one rank too) */
        return TELEMEM_OK;
    if (tlm_core_node.nlocal == 1)
        return multi() ? tlm_core_coll_msg_allreduce(&C.lead, buf, count,
                                                     rd->type, rd->op, seq, 0)
                       : TELEMEM_OK;
    if (!multi())
        return node_allreduce(rd, buf, count * rd->es);
    return multi_allreduce(rd, buf, count, seq);
}

int telemem_allreduce(void *buf, size_t count, telemem_type_t type,
                      telemem_op_t op)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    size_t es = tlm_core_coll_type_size(type);
    bool bad_op = op != TELEMEM_SUM && op != TELEMEM_MIN && op != TELEMEM_MAX;
    if (!es || bad_op || (!buf && count) || (count && es > SIZE_MAX / count)) {
        tlm_error("allreduce: %s", !es ? "unknown type"
                  : bad_op ? "unknown operator"
                  : (!buf && count) ? "buffer is NULL" : "count too large");
        return TELEMEM_ERR_INVALID_ARG;
    }
    rc = tlm_core_coll_enter("allreduce", count * es);
    if (rc != TELEMEM_OK)
        return rc;
    uint32_t seq = tlm_core.coll_seq;
    red_t rd = {type, op, es};
    size_t bytes = count * es;
    bool sm = hier() && bytes <= tlm_core_node.small;
    tlm_debug("allreduce %u: %zu bytes: %s%s%s", seq, bytes,
              !hier() ? "flat (binomial reduction, broadcast)"
              : sm ? "node step (small slots, "
                   : "node steps (large slots, ",
              !hier() ? ""
              : sm ? (multi() ? "the leader reduces" : "last arrival reduces")
              : split(bytes) ? "every rank reduces a stripe"
              : multi() ? "the leader reduces" : "last arrival reduces",
              !hier() ? ""
              : multi() ? sm ? "), leaders' binomial reduction and broadcast"
                             : "), leaders' binomial reduction and "
                               "broadcast, node broadcast"
                        : ")");
    rc = hier() ? hier_allreduce(&rd, buf, count, seq)
                : tlm_core_coll_msg_allreduce(&C.world, buf, count, type, op,
                                              seq, 0);
    return tlm_core_coll_leave(rc);
}

/* ---- allgather ------------------------------------------------------------- */

/* Every local rank's b bytes from in into out (at its rank's place), a
 * piece per step; gather_only: only the leader needs them (it reads a
 * step's set before it arrives at the next, which the others wait for
 * before they write the set again). */
static int node_allgather(const uint8_t *in, uint8_t *out, size_t b,
                          bool gather_only)
{
    tlm_core_node_t *N = &tlm_core_node;
    bool small = b <= N->small;
    size_t piece = small ? N->small : N->slot;
    int rc = TELEMEM_OK;
    for (size_t off = 0; rc == TELEMEM_OK && off < b; off += piece) {
        size_t c = TLM_MIN(piece, b - off);
        uint64_t s;
        rc = tlm_core_node_begin(true, &s);
        if (rc != TELEMEM_OK)
            break;
        memcpy(small ? tlm_core_node_small(s, N->me)
                     : tlm_core_node_slot(s, N->me), in + off, c);
        bool last = tlm_core_node_arrive(s);
        if (gather_only && !is_leader())
            continue;
        if (gather_only)
            rc = tlm_core_node_wait_all(s);
        else if (last)
            tlm_core_node_release(s, TELEMEM_OK);
        else
            rc = tlm_core_node_wait_release(s);
        for (int l = 0; rc == TELEMEM_OK && l < N->nlocal; l++)
            memcpy(out + (size_t)N->rank[l] * b + off,
                   small ? tlm_core_node_small(s, l)
                         : tlm_core_node_slot(s, l), c);
    }
    return rc;
}

/* The leaders swap their nodes' blocks (each node's ranks' contributions
 * in rank order) and lay them out in out. */
static int leaders_allgather(uint8_t *out, size_t b, uint32_t seq)
{
    int n = tlm_core.nranks, nn = C.nnodes;
    size_t *len = calloc((size_t)nn, sizeof(size_t));
    void **blk = calloc((size_t)nn, sizeof(void *));
    int rc = len && blk ? TELEMEM_OK : TELEMEM_ERR_NO_MEMORY;
    for (int r = 0; rc == TELEMEM_OK && r < n; r++)
        len[node_of(r)] += b;
    for (int k = 0; rc == TELEMEM_OK && k < nn; k++)
        if (len[k] && !(blk[k] = malloc(len[k])))
            rc = TELEMEM_ERR_NO_MEMORY;
    size_t *at = rc == TELEMEM_OK ? calloc((size_t)nn, sizeof(size_t)) : NULL;
    if (rc == TELEMEM_OK && !at)
        rc = TELEMEM_ERR_NO_MEMORY;
    for (int r = 0; rc == TELEMEM_OK && r < n; r++)
        if (node_of(r) == C.node) {
            memcpy((uint8_t *)blk[C.node] + at[C.node], out + (size_t)r * b,
                   b);
            at[C.node] += b;
        }
    if (rc == TELEMEM_OK)
        rc = tlm_core_coll_msg_exchange(&C.lead, blk, len, seq, 0);
    if (at)
        memset(at, 0, (size_t)nn * sizeof(size_t));
    for (int r = 0; rc == TELEMEM_OK && r < n; r++) {
        int k = node_of(r);
        memcpy(out + (size_t)r * b, (uint8_t *)blk[k] + at[k], b);
        at[k] += b;
    }
    if (!len || !blk || !at)
        tlm_error("allgather: no memory for the nodes' blocks");
    for (int k = 0; blk && k < nn; k++)
        free(blk[k]);
    free(blk);
    free(len);
    free(at);
    return rc;
}

static int hier_allgather(const void *in, void *out, size_t b, uint32_t seq)
{
    int nl = tlm_core_node.nlocal;
    uint8_t *o = out;
    if (nl > 1 && !multi())
        return node_allgather(in, o, b, false);
    int rc = TELEMEM_OK;
    if (nl == 1)
        memmove(o + (size_t)tlm_core.rank * b, in, b);
    else
        rc = node_allgather(in, o, b, true);
    if (is_leader() && rc == TELEMEM_OK && multi())
        rc = leaders_allgather(o, b, seq);
    if (nl == 1)
        return rc;
    return node_bcast(o, (size_t)tlm_core.nranks * b, 0,
                      is_leader() ? rc : TELEMEM_OK);
}

int telemem_allgather(const void *in, void *out, size_t bytes_per_rank)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    int n = tlm_core.nranks, me = tlm_core.rank;
    size_t b = bytes_per_rank;
    if (b && (!in || !out || b > SIZE_MAX / (size_t)n)) {
        tlm_error("allgather: %s", !in || !out ? "buffer is NULL"
                                               : "size too large");
        return TELEMEM_ERR_INVALID_ARG;
    }
    rc = tlm_core_coll_enter("allgather", hier() && multi() ? b * (size_t)n
                                                            : b);
    if (rc != TELEMEM_OK)
        return rc;
    uint32_t seq = tlm_core.coll_seq;
    tlm_debug("allgather %u: %zu bytes per rank: %s", seq, b,
              !hier() ? "flat (direct exchange)"
              : multi() ? "node steps to the leader, leaders' exchange, "
                          "node broadcast"
                        : "node steps");
    if (hier() && b) {
        rc = hier_allgather(in, out, b, seq);
    } else if (!hier()) {
        uint8_t *o = out;
        if (b)
            memmove(o + (size_t)me * b, in, b);
        void **blk = malloc((size_t)n * sizeof(void *));
        size_t *len = malloc((size_t)n * sizeof(size_t));
        rc = blk && len ? TELEMEM_OK : TELEMEM_ERR_NO_MEMORY;
        for (int r = 0; rc == TELEMEM_OK && r < n; r++) {
            blk[r] = o + (size_t)r * b;
            len[r] = b;
        }
        if (rc == TELEMEM_OK)
            rc = tlm_core_coll_msg_exchange(&C.world, blk, len, seq, 0);
        free(blk);
        free(len);
    }
    return tlm_core_coll_leave(rc);
}

/* core_engine.c - how an operation completes, shared by every operation
 * file: op wire ids and op waits, the send-stream slow path and waiting
 * until a stream is sent, flush (quiet and fence), the ACK, NACK, FLUSH,
 * FLUSH_ACK and LEAVE handlers, refusals and protocol errors.  The wait
 * loop itself is core_wait.c's.  The flush also waits for the direct
 * path's drivers (core_direct.c), which in turn flush the AM path before
 * a direct write (tlm_core_flush_am): the two paths keep issue order
 * together, so they call each other. */
#include <stdlib.h>
#include <string.h>

#include "core/core_engine.h"
#include "core/core_direct.h"

/* Wire ids of ops carry 12 bits of generation so that a late reply for an
 * abandoned op never lands in a newer op that reuses its slot. */
#define OP_ID_BITS TLM_OP_ID_BITS
#define OP_ID_MASK ((1u << OP_ID_BITS) - 1)

/* ---- op wire ids ---------------------------------------------------------- */

uint32_t tlm_core_wire_id(uint32_t idx)
{
    return idx | ((tlm_core_op(idx)->gen & 0xfffu) << OP_ID_BITS);
}

tlm_op_t *tlm_core_op_from_wire(uint32_t id, int kind, uint32_t *idx_p)
{
    uint32_t idx = id & OP_ID_MASK;
    tlm_op_t *op = NULL;
    if (kind) {
        op = tlm_core_op_lookup(idx, kind);
    } else {
        op = tlm_core_op_lookup(idx, TLM_OP_PUT);
        if (!op)
            op = tlm_core_op_lookup(idx, TLM_OP_GET);
    }
    if (!op || (op->gen & 0xfffu) != id >> OP_ID_BITS)
        return NULL;
    *idx_p = idx;
    return op;
}


/* ---- handles and op waits ------------------------------------------------- */

int tlm_core_get_alloc(int rank, bool nbi, tlm_op_t **op_p, uint32_t *idx_p)
{
    uint32_t idx;
    /* An async driver's operations to rank complete before this AM read
     * (issue order across the two paths). */
    int rc = tlm_core.peers[rank].direct_busy ? tlm_core_direct_settle(rank)
                                              : TELEMEM_OK;
    if (rc == TELEMEM_OK)
        rc = tlm_core_op_alloc(&idx);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_op_t *op = tlm_core_op(idx);
    op->kind = TLM_OP_GET;
    op->rank = rank;
    op->nbi = nbi;
    op->unpack = TLM_UNPACK_COPY;
    op->src.owned = NULL;
    TLM_RLX_SET(tlm_core.peers[rank].am_reads, true);
    *op_p = op;
    *idx_p = idx;
    return TELEMEM_OK;
}

void tlm_core_get_started(tlm_op_t *op)
{
    if (op->nbi)
        TLM_RLX_SET(tlm_core.peers[op->rank].nbi_gets,
                    tlm_core.peers[op->rank].nbi_gets + 1);
}

int tlm_core_op_wait(uint32_t idx)
{
    return tlm_core_op_wait_peer(idx, tlm_core_op(idx)->rank);
}

int tlm_core_op_wait_peer(uint32_t idx, int peer)
{
    tlm_op_t *op = tlm_core_op(idx);
    tlm_wait_t w;
    tlm_core_wait_init(&w, peer);
    while (op->state != TLM_OP_DONE) {
        int rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK) {
            free(op->src.owned);
            op->src.owned = NULL;
            tlm_core_op_free(idx); /* a late reply finds no op: dropped */
            return rc;
        }
    }
    int rc = op->status;
    tlm_core_op_free(idx);
    return rc;
}


/* ---- send streams --------------------------------------------------------- */

static void free_abandoned(tlm_am_sendop_t *op, int status)
{
    free(op);
}

int tlm_core_wait_sent(int rank, tlm_am_sendop_t *op)
{
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    while (!op->sent) {
        int rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK) {
            if (!tlm_am_cancel(rank, op))
                op->done = free_abandoned; /* zc ops are on the heap */
            return rc;
        }
    }
    return op->status;
}

int tlm_core_send_stream_slow(int rank, const void *hdr, size_t hdr_len,
                              const void *data, size_t len)
{
    const tlm_am_peer_t *ap = &tlm_am.peers[rank];
    if (tlm_am_zc_pays(ap, data, len) && len <= ap->zc_local_max) {
        /* The transport reads data in place until the op is sent (this
         * call returns only then: so only sizes it sends without waiting
         * for the target); on the heap, so that a wait ended by an error
         * can leave it to the transport. */
        tlm_am_sendop_t *op = malloc(sizeof(*op));
        if (op) {
            tlm_am_sendop_init(op, hdr, hdr_len, true, data, len);
            op->zc = true;
            tlm_am_post(rank, op);
            int rc = tlm_core_wait_sent(rank, op);
            if (op->done != free_abandoned)
                free(op);
            return rc;
        }
    }
    tlm_am_sendop_t op;
    tlm_am_sendop_init(&op, hdr, hdr_len, true, data, len);
    tlm_am_post(rank, &op);
    return tlm_core_wait_sent(rank, &op);
}

int tlm_core_new_handle(uint32_t idx, telemem_handle_t *h)
{
    h->index_ = idx;
    h->generation_ = tlm_core_op(idx)->gen;
    return TELEMEM_OK;
}


/* ---- refusals ------------------------------------------------------------- */

int tlm_core_refused(int rank, bool write, int mode, telemem_handle_t *h,
                     int status)
{
    if (mode == TLM_MODE_NB) {
        uint32_t idx;
        if (tlm_core_op_alloc(&idx) != TELEMEM_OK)
            return status;
        tlm_op_t *op = tlm_core_op(idx);
        op->kind = write ? TLM_OP_PUT : TLM_OP_GET;
        op->rank = rank;
        tlm_core_op_complete(idx, status);
        return tlm_core_new_handle(idx, h);
    }
    if (mode == TLM_MODE_BLOCK && !write)
        return status;
    if (tlm_core.peers[rank].error == TELEMEM_OK)
        tlm_core.peers[rank].error = status;
    return TELEMEM_OK;
}


/* ---- quiet and fence ------------------------------------------------------ */

static bool peer_complete(const tlm_core_peer_t *p)
{
    return (int32_t)(p->flush_acked - p->flush_sent) >= 0 && p->nbi_gets == 0;
}

int tlm_core_flush_am(int rank)
{
    tlm_core_peer_t *p = &tlm_core.peers[rank];
    int rc = TELEMEM_OK;
    if (p->unflushed || p->am_reads) {
        /* Gets: their replies come before the FLUSH_ACK (one ordered
         * channel), so the round trip covers them too. */
        TLM_RLX_SET(p->unflushed, 0);
        TLM_RLX_SET(p->am_reads, false);
        TLM_RLX_SET(p->flush_sent, p->flush_sent + 1);
        tlm_am_hdr_t f = {TLM_AM_FLUSH, 0, 0, p->flush_sent};
        rc = tlm_am_send_ctrl(rank, &f, sizeof(f), NULL, 0);
    }
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    while (rc == TELEMEM_OK && !peer_complete(p))
        rc = tlm_core_wait_step(&w);
    return rc;
}

/* Ask every target in [lo, hi) with un-flushed requests; they answer in
 * order after applying everything before the FLUSH. */
static int send_flushes(int lo, int hi)
{
    int rc = TELEMEM_OK;
    for (int r = lo; r < hi; r++) {
        tlm_core_peer_t *p = &tlm_core.peers[r];
        if (r == tlm_core.rank || p->unflushed == 0)
            continue;
        TLM_RLX_SET(p->unflushed, 0);
        TLM_RLX_SET(p->am_reads, false);
        TLM_RLX_SET(p->flush_sent, p->flush_sent + 1);
        tlm_am_hdr_t f = {TLM_AM_FLUSH, 0, 0, p->flush_sent};
        int src = tlm_am_send_ctrl(r, &f, sizeof(f), NULL, 0);
        if (src != TELEMEM_OK && rc == TELEMEM_OK)
            rc = src;
    }
    return rc;
}

/* The first refusal reported by a target in [lo, hi) since the last
 * quiet/fence (each is reported once). */
static int take_refusals(int lo, int hi)
{
    int rc = TELEMEM_OK;
    for (int r = lo; r < hi; r++) {
        tlm_core_peer_t *p = &tlm_core.peers[r];
        if (p->error != TELEMEM_OK && rc == TELEMEM_OK)
            rc = p->error;
        p->error = TELEMEM_OK;
    }
    return rc;
}

int tlm_core_flush(int rank)
{
    if (rank >= 0 && rank != tlm_core.rank) {
        /* Nothing outstanding to rank (the direct path's stores are done,
         * ARMCI put + fence): nothing to poll for. */
        const tlm_core_peer_t *p = &tlm_core.peers[rank];
        if (TLM_LIKELY(!p->unflushed && !p->direct_busy &&
                       p->error == TELEMEM_OK && peer_complete(p)))
            return TELEMEM_OK;
    }
    int lo = rank < 0 ? 0 : rank, hi = rank < 0 ? tlm_core.nranks : rank + 1;
    int rc = tlm_core_direct_flush(rank);
    if (rank < 0 || rank == tlm_core.rank) {
        int src = tlm_am_drain_self(); /* requests to self are handled now */
        if (rc == TELEMEM_OK)
            rc = src;
    }
    int src = send_flushes(lo, hi);
    if (rc == TELEMEM_OK)
        rc = src;
    for (int r = lo; r < hi && rc == TELEMEM_OK; r++) {
        tlm_core_peer_t *p = &tlm_core.peers[r];
        tlm_wait_t w;
        tlm_core_wait_init(&w, r);
        while (!peer_complete(p) && rc == TELEMEM_OK)
            rc = tlm_core_wait_step(&w);
    }
    src = take_refusals(lo, hi);
    return rc == TELEMEM_OK ? src : rc;
}

/* Next time a test that is still waiting looks at the peers' liveness
 * (a system call per peer on shm, so not at every call). */
static double test_next_alive;

/* The non-blocking flush of quiet_test / fence_test (rank < 0: all).  A
 * FLUSH goes out only to targets with requests since the last one, so
 * repeated tests send nothing new and only look for the acks. */
static int flush_test(int rank, int *done)
{
    int lo = rank < 0 ? 0 : rank, hi = rank < 0 ? tlm_core.nranks : rank + 1;
    /* Async direct drivers complete without the target's CPU: this waits
     * for the local driver only (none on one node, where direct writes
     * are synchronous). */
    int rc = tlm_core_direct_flush(rank);
    if (rc == TELEMEM_OK && (rank < 0 || rank == tlm_core.rank))
        rc = tlm_am_drain_self(); /* requests to self are handled now */
    int src = send_flushes(lo, hi);
    if (rc == TELEMEM_OK)
        rc = src;
    if (rc == TELEMEM_OK) {
        src = tlm_core_progress();
        if (src < 0)
            rc = src;
    }
    if (rc != TELEMEM_OK)
        return rc;
    bool complete = true;
    for (int r = lo; r < hi && complete; r++)
        complete = peer_complete(&tlm_core.peers[r]);
    if (complete) {
        *done = 1;
        return take_refusals(lo, hi);
    }
    double now = tlm_util_now();
    if (now >= test_next_alive) {
        test_next_alive = now + tlm_core.cfg.LIVENESS_INTERVAL;
        for (int r = lo; r < hi; r++) {
            if (r == tlm_core.rank || peer_complete(&tlm_core.peers[r]))
                continue;
            if (tlm_core_check_alive(r) != TELEMEM_OK)
                return TELEMEM_ERR_PEER_DEAD; /* logged */
        }
    }
    *done = 0;
    return TELEMEM_OK;
}

int telemem_quiet(void)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    return rc == TELEMEM_OK ? tlm_core_flush(-1) : rc;
}

int telemem_fence(int rank)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if ((rc = tlm_core_check_rank("fence", rank)) != TELEMEM_OK)
        return rc;
    return tlm_core_flush(rank);
}

int telemem_quiet_test(int *done)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!done) {
        tlm_error("quiet_test: done is NULL");
        return TELEMEM_ERR_INVALID_ARG;
    }
    return flush_test(-1, done);
}

int telemem_fence_test(int rank, int *done)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!done) {
        tlm_error("fence_test: done is NULL");
        return TELEMEM_ERR_INVALID_ARG;
    }
    if ((rc = tlm_core_check_rank("fence_test", rank)) != TELEMEM_OK)
        return rc;
    return flush_test(rank, done);
}


/* ---- target side: acks, refusals, flushes, leave -------------------------- */

void tlm_core_protocol_error(int src, const char *what, size_t len)
{
    tlm_am.protocol_errors++;
    tlm_warn("dropped a malformed %s message from rank %d (%zu bytes)", what,
             src, len);
}

void tlm_core_send_ack(int src, uint32_t id, int status)
{
    tlm_am_hdr_t a = {TLM_AM_ACK, 0, (uint16_t)(int16_t)status, id};
    tlm_am_send_ctrl(src, &a, sizeof(a), NULL, 0);
}

void tlm_core_refuse(int src, const tlm_am_frag_hdr_t *h, bool last,
                     int status)
{
    if (h->offset == 0)
        tlm_debug("refused a request (type %u) from rank %d for "
                  "[0x%llx, +%llu)", h->h.type, src,
                  (unsigned long long)h->addr, (unsigned long long)h->total);
    if (h->h.flags & TLM_AM_F_ACK) {
        if (last)
            tlm_core_send_ack(src, h->h.id, status);
    } else if (h->offset == 0) {
        tlm_am_nack_t n = {{TLM_AM_NACK, 0, (uint16_t)(int16_t)status, 0},
                           h->addr, h->total};
        tlm_am_send_ctrl(src, &n, sizeof(n), NULL, 0);
    }
}

static void on_ack(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    uint32_t idx;
    if (len != sizeof(*h))
        return tlm_core_protocol_error(src, "ack", len);
    tlm_op_t *op = tlm_core_op_from_wire(h->id, 0, &idx);
    if (!op || op->rank != src)
        return;
    int status = (int16_t)h->aux;
    if (status != TELEMEM_OK)
        tlm_warn("rank %d refused a %s of %zu bytes: %s", src,
                 op->kind == TLM_OP_GET ? "get" : "put", op->len,
                 telemem_strerror(status));
    tlm_core_op_complete(idx, status);
}

static void on_nack(int src, const void *msg, size_t len)
{
    const tlm_am_nack_t *n = msg;
    if (len != sizeof(*n))
        return tlm_core_protocol_error(src, "nack", len);
    int status = (int16_t)n->h.aux;
    tlm_warn("rank %d refused a request for [0x%llx, +%llu): %s", src,
             (unsigned long long)n->addr, (unsigned long long)n->len,
             telemem_strerror(status));
    if (tlm_core.peers[src].error == TELEMEM_OK)
        tlm_core.peers[src].error = status;
}

static void on_flush(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    if (len != sizeof(*h))
        return tlm_core_protocol_error(src, "flush", len);
    tlm_am_hdr_t a = {TLM_AM_FLUSH_ACK, 0, 0, h->id};
    tlm_am_send_ctrl(src, &a, sizeof(a), NULL, 0);
}

static void on_flush_ack(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    if (len != sizeof(*h))
        return tlm_core_protocol_error(src, "flush ack", len);
    tlm_core_peer_t *p = &tlm_core.peers[src];
    if ((int32_t)(h->id - p->flush_acked) > 0)
        TLM_RLX_SET(p->flush_acked, h->id);
}


static void on_leave(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    if (len != sizeof(*h))
        return tlm_core_protocol_error(src, "leave", len);
    /* info: the rank that gave up has logged why */
    tlm_info("rank %d left the job: %s", src,
             telemem_strerror((int16_t)h->aux));
    tlm_core.peers[src].left = true;
}


void tlm_core_engine_init(void)
{
    tlm_am_set_handler(TLM_AM_ACK, on_ack);
    tlm_am_set_handler(TLM_AM_NACK, on_nack);
    tlm_am_set_handler(TLM_AM_FLUSH, on_flush);
    tlm_am_set_handler(TLM_AM_FLUSH_ACK, on_flush_ack);
    tlm_am_set_handler(TLM_AM_LEAVE, on_leave);
}

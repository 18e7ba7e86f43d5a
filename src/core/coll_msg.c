/* coll_msg.c - the collectives' messages and the algorithms over them
 * among a group of ranks (all, or the node leaders): barrier
 * (dissemination), broadcast (binomial tree), allreduce (binomial
 * reduction to member 0 in a fixed order, then broadcast) and a direct
 * exchange of blocks (allgather).  Early messages wait in an inbox keyed
 * by (source, collective sequence, round). */
#include <stdlib.h>
#include <string.h>

#include "core/coll_int.h"
#include "core/core_am_api.h"

typedef struct tlm_coll_msg {
    struct tlm_coll_msg *next;
    int src;
    uint32_t seq;
    uint16_t round;
    size_t total, got;
    uint8_t *buf;
} tlm_coll_msg_t;

static tlm_coll_msg_t *inbox_find(int src, uint32_t seq, uint16_t round,
                                  tlm_coll_msg_t ***link_p)
{
    tlm_coll_msg_t **pp = &tlm_core.coll_inbox;
    for (; *pp; pp = &(*pp)->next) {
        tlm_coll_msg_t *m = *pp;
        if (m->src == src && m->seq == seq && m->round == round) {
            if (link_p)
                *link_p = pp;
            return m;
        }
    }
    return NULL;
}

/* Collective sequence numbers wrap: compare them modulo 2^32. */
static bool seq_after(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

/* Last collective this rank left (successfully or not): messages of it or
 * of an earlier one are stale.  A rank leaves a collective only after it
 * took every message addressed to it, so a stale message is garbage or a
 * late one from a collective that failed here. */
static uint32_t coll_done;
/* By source: a message of collective `seq` from it was refused
 * (reassembly cap, no memory), so that collective cannot complete here: it
 * fails with `status` instead of waiting, and the source's other messages
 * for it are dropped.  Cleared when this rank leaves that collective;
 * later collectives are unaffected. */
typedef struct coll_hole {
    int status;
    uint32_t seq;
} coll_hole_t;
static coll_hole_t *coll_err;
static int coll_nholes;

static void inbox_free(tlm_coll_msg_t *m)
{
    tlm_core_reasm_release(m->src, m->total);
    free(m->buf);
    free(m);
}

/* Free what collectives this rank has left still hold (failed ones). */
static void inbox_sweep(void)
{
    tlm_coll_msg_t **pp = &tlm_core.coll_inbox;
    while (*pp) {
        tlm_coll_msg_t *m = *pp;
        if (!seq_after(m->seq, coll_done)) {
            *pp = m->next;
            inbox_free(m);
        } else {
            pp = &m->next;
        }
    }
}

/* A new inbox entry for the message whose first fragment is h, charged
 * to src before anything is allocated (F1). */
static int inbox_new(int src, const tlm_am_frag_hdr_t *h,
                     tlm_coll_msg_t **m_p)
{
    int rc = tlm_core_reasm_reserve(src, h->total, "collective message");
    if (rc != TELEMEM_OK)
        return rc;
    tlm_coll_msg_t *m = calloc(1, sizeof(*m));
    uint8_t *buf = h->total ? malloc(h->total) : NULL;
    if (!m || (h->total && !buf)) {
        tlm_error("no memory for a %llu-byte collective message from rank "
                  "%d", (unsigned long long)h->total, src);
        free(m);
        free(buf);
        tlm_core_reasm_release(src, h->total);
        return TELEMEM_ERR_NO_MEMORY;
    }
    m->buf = buf;
    m->src = src;
    m->seq = h->h.id;
    m->round = h->h.aux;
    m->total = h->total;
    m->next = tlm_core.coll_inbox;
    tlm_core.coll_inbox = m;
    *m_p = m;
    return TELEMEM_OK;
}

static void on_coll(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    if (len < sizeof(*h))
        return tlm_core_protocol_error(src, "collective", len);
    if (!seq_after(h->h.id, coll_done)) {
        /* info, not warn: after a failed collective, live ranks' messages
         * for it may still come in */
        tlm_info("dropped a collective message from rank %d for collective "
                 "%u, which this rank has left (%u)", src, h->h.id,
                 coll_done);
        return;
    }
    if (coll_err && coll_err[src].status != TELEMEM_OK &&
        coll_err[src].seq == h->h.id)
        return; /* that collective already failed here */
    size_t plen = len - sizeof(*h);
    tlm_coll_msg_t *m = inbox_find(src, h->h.id, h->h.aux, NULL);
    if (!m) {
        if (h->offset != 0 || plen > h->total)
            return tlm_core_protocol_error(src, "collective", len);
        int rc = inbox_new(src, h, &m);
        if (rc != TELEMEM_OK) {
            if (coll_err && coll_err[src].status == TELEMEM_OK) {
                coll_err[src] = (coll_hole_t){rc, h->h.id};
                coll_nholes++;
            }
            return;
        }
    }
    /* Fragments come in order (F2): anything else is refused. */
    if (h->total != m->total || h->offset != m->got ||
        plen > m->total - m->got)
        return tlm_core_protocol_error(src, "collective", len);
    if (plen)
        memcpy(m->buf + h->offset, h + 1, plen);
    m->got += plen;
}

int tlm_core_coll_send(int dst, uint32_t seq, uint16_t round,
                       const void *data, size_t len)
{
    tlm_am_frag_hdr_t h = {{TLM_AM_COLL, 0, round, seq}, 0, len, 0};
    return tlm_core_send_stream(dst, &h, sizeof(h), data, len);
}

int tlm_core_coll_recv(int src, uint32_t seq, uint16_t round, void *dst,
                       size_t len)
{
    tlm_coll_msg_t *m, **link = NULL;
    tlm_wait_t w;
    /* Every rank takes part, so any death dooms the collective: watch them
     * all (src may itself wait for the dead one).  Not in finalize's
     * barrier: ranks that left it may be gone, and network transports
     * cannot tell a rank that exited after finalize from a dead one. */
    tlm_core_wait_init(&w, tlm_core.finalizing ? src : -1);
    for (;;) {
        m = inbox_find(src, seq, round, &link);
        if (m && m->got == m->total)
            break;
        if (coll_err && coll_err[src].status != TELEMEM_OK &&
            coll_err[src].seq == seq) {
            tlm_error("collective %u: a message from rank %d was refused "
                      "(see above); this collective cannot complete", seq,
                      src);
            return coll_err[src].status;
        }
        if (tlm_core_peer_left(src)) { /* what it sent came before LEAVE */
            tlm_error("collective %u: rank %d has left the job", seq, src);
            tlm_core.peer_gone = true;
            return TELEMEM_ERR_PEER_DEAD;
        }
        int rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK)
            return rc;
    }
    *link = m->next;
    int rc = TELEMEM_OK;
    if (m->total != len) {
        tlm_error("collective mismatch: rank %d sent %zu bytes, expected %zu "
                  "(ranks called different collectives or sizes?)", src,
                  m->total, len);
        rc = TELEMEM_ERR_PROTOCOL;
    } else if (len) {
        memcpy(dst, m->buf, len);
    }
    inbox_free(m);
    return rc;
}

/* bytes: the largest message it sends, refused on every rank (they all
 * pass the same size) when a receiver's reassembly cap could not take it
 * as an early arrival. */
int tlm_core_coll_enter(const char *what, size_t bytes)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (bytes > tlm_core_reasm_max()) {
        tlm_error("%s: %zu bytes per message is more than a rank buffers "
                  "per source (%zu bytes)", what, bytes,
                  tlm_core_reasm_max());
        return TELEMEM_ERR_INVALID_ARG;
    }
    tlm_core.coll_seq++;
    return TELEMEM_OK;
}

int tlm_core_coll_leave(int rc)
{
    coll_done = tlm_core.coll_seq;
    inbox_sweep();
    for (int r = 0; coll_nholes && r < tlm_core.nranks; r++) {
        if (coll_err[r].status != TELEMEM_OK &&
            !seq_after(coll_err[r].seq, coll_done)) {
            coll_err[r].status = TELEMEM_OK;
            coll_nholes--;
        }
    }
    return rc;
}

int tlm_core_coll_msg_barrier(const tlm_core_coll_grp_t *g, uint32_t seq,
                              uint16_t round)
{
    int n = g->n, me = g->me, rc = TELEMEM_OK;
    for (int k = 1; k < n && rc == TELEMEM_OK; k <<= 1, round++) {
        rc = tlm_core_coll_send(tlm_core_coll_grp_rank(g, (me + k) % n), seq,
                                round, NULL, 0);
        if (rc == TELEMEM_OK)
            rc = tlm_core_coll_recv(
                tlm_core_coll_grp_rank(g, (me - k + n) % n), seq, round,
                NULL, 0);
    }
    return rc;
}

int tlm_core_coll_msg_bcast(const tlm_core_coll_grp_t *g, void *buf,
                            size_t bytes, int root, uint32_t seq,
                            uint16_t round)
{
    int n = g->n;
    int vr = (g->me - root + n) % n;
    int rc = TELEMEM_OK;
    int mask = 1;
    /* Receive from the parent: the member that differs in our lowest set
     * bit. */
    while (mask < n) {
        if (vr & mask) {
            int parent = (vr - mask + root) % n;
            rc = tlm_core_coll_recv(tlm_core_coll_grp_rank(g, parent), seq,
                                    round, buf, bytes);
            break;
        }
        mask <<= 1;
    }
    /* Send to children below that bit. */
    mask >>= 1;
    while (mask > 0 && rc == TELEMEM_OK) {
        if (vr + mask < n)
            rc = tlm_core_coll_send(
                tlm_core_coll_grp_rank(g, (vr + mask + root) % n), seq, round,
                buf, bytes);
        mask >>= 1;
    }
    return rc;
}

size_t tlm_core_coll_type_size(telemem_type_t t)
{
    switch (t) {
    case TELEMEM_INT32: case TELEMEM_FLOAT: return 4;
    case TELEMEM_INT64: case TELEMEM_UINT64: case TELEMEM_DOUBLE: return 8;
    case TELEMEM_COMPLEX_FLOAT: case TELEMEM_COMPLEX_DOUBLE: break;
    }
    return 0; /* complex types: no ordering, not reducible here */
}

/* NOLINTBEGIN(bugprone-macro-parentheses): T is a type name, which cannot
 * be parenthesised in a declaration. */
#define COMBINE(T)                                                          \
    do {                                                                    \
        T *a = acc;                                                         \
        const T *b = in;                                                    \
        if (op == TELEMEM_SUM)                                              \
            for (size_t i = 0; i < count; i++)                              \
                a[i] = (T)(a[i] + b[i]);                                    \
        else if (op == TELEMEM_MIN)                                         \
            for (size_t i = 0; i < count; i++)                              \
                a[i] = b[i] < a[i] ? b[i] : a[i];                           \
        else                                                                \
            for (size_t i = 0; i < count; i++)                              \
                a[i] = b[i] > a[i] ? b[i] : a[i];                           \
    } while (0)
/* NOLINTEND(bugprone-macro-parentheses) */

void tlm_core_coll_combine(void *acc, const void *in, size_t count,
                           telemem_type_t type, telemem_op_t op)
{
    switch (type) {
    case TELEMEM_INT32: COMBINE(int32_t); break;
    case TELEMEM_INT64: COMBINE(int64_t); break;
    case TELEMEM_UINT64: COMBINE(uint64_t); break;
    case TELEMEM_FLOAT: COMBINE(float); break;
    case TELEMEM_DOUBLE: COMBINE(double); break;
    case TELEMEM_COMPLEX_FLOAT: case TELEMEM_COMPLEX_DOUBLE: break;
    }
}

/* Elements [*lo, *hi) of count: member k's block of a scattered
 * allreduce. */
static void block_of(size_t count, int n, int k, size_t *lo, size_t *hi)
{
    *lo = count * (size_t)k / (size_t)n;
    *hi = count * (size_t)(k + 1) / (size_t)n;
}

/* A large allreduce: every member sends block k of its buffer to member
 * k, which folds the n contributions in the binomial tree's order (the
 * bits the small path gives), then every member sends its reduced block
 * to every other.  Each member moves 2 (n - 1) / n of the data each way,
 * all members at once, where the tree moves all of it up to member 0 and
 * down again, one level after another. */
static int allreduce_scattered(const tlm_core_coll_grp_t *g, uint8_t *buf,
                               size_t count, telemem_type_t type,
                               telemem_op_t op, uint32_t seq, uint16_t round)
{
    int n = g->n, me = g->me, rc = TELEMEM_OK;
    size_t es = tlm_core_coll_type_size(type), lo, hi;
    block_of(count, n, me, &lo, &hi);
    size_t mine = (hi - lo) * es;
    uint8_t *in = malloc(TLM_MAX((size_t)n * mine, (size_t)1));
    void **blk = malloc((size_t)n * sizeof(void *));
    size_t *len = malloc((size_t)n * sizeof(size_t));
    if (!in || !blk || !len) {
        tlm_error("allreduce: no memory for %zu bytes", (size_t)n * mine);
        rc = TELEMEM_ERR_NO_MEMORY;
    }
    for (int k = 1; k < n && rc == TELEMEM_OK; k++) {
        int dst = (me + k) % n;
        size_t dlo, dhi;
        block_of(count, n, dst, &dlo, &dhi);
        rc = tlm_core_coll_send(tlm_core_coll_grp_rank(g, dst), seq,
                                (uint16_t)(round + 1), buf + dlo * es,
                                (dhi - dlo) * es);
    }
    if (rc == TELEMEM_OK)
        memcpy(in + (size_t)me * mine, buf + lo * es, mine);
    for (int k = 1; k < n && rc == TELEMEM_OK; k++) {
        int src = (me - k + n) % n;
        rc = tlm_core_coll_recv(tlm_core_coll_grp_rank(g, src), seq,
                                (uint16_t)(round + 1), in + (size_t)src * mine,
                                mine);
    }
    /* Member i folds member i + mask's subtree at step mask, as the tree
     * does: the same association, so the same bits. */
    for (int mask = 1; mask < n && rc == TELEMEM_OK; mask <<= 1)
        for (int i = 0; i + mask < n; i += 2 * mask)
            tlm_core_coll_combine(in + (size_t)i * mine,
                                  in + (size_t)(i + mask) * mine, hi - lo,
                                  type, op);
    if (rc == TELEMEM_OK) {
        memcpy(buf + lo * es, in, mine);
        for (int k = 0; k < n; k++) {
            size_t klo, khi;
            block_of(count, n, k, &klo, &khi);
            blk[k] = buf + klo * es;
            len[k] = (khi - klo) * es;
        }
        rc = tlm_core_coll_msg_exchange(g, blk, len, seq,
                                        (uint16_t)(round + 2));
    }
    free(in);
    free(blk);
    free(len);
    return rc;
}

int tlm_core_coll_msg_allreduce(const tlm_core_coll_grp_t *g, void *buf,
                                size_t count, telemem_type_t type,
                                telemem_op_t op, uint32_t seq,
                                uint16_t round)
{
    int n = g->n, me = g->me, rc = TELEMEM_OK;
    size_t bytes = count * tlm_core_coll_type_size(type);
    if (n > 1 && count >= (size_t)n &&
        bytes >= tlm_core_coll_thr[TLM_COLL_REDUCE_SCATTER])
        return allreduce_scattered(g, buf, count, type, op, seq, round);
    void *tmp = bytes && n > 1 ? malloc(bytes) : NULL;
    if (bytes && n > 1 && !tmp) {
        tlm_error("allreduce: no memory for %zu bytes", bytes);
        return TELEMEM_ERR_NO_MEMORY;
    }
    /* Binomial reduction towards member 0; each member combines its
     * children in increasing distance, so the order is the same on every
     * run. */
    for (int mask = 1; mask < n && rc == TELEMEM_OK; mask <<= 1) {
        if (me & mask) {
            rc = tlm_core_coll_send(tlm_core_coll_grp_rank(g, me - mask), seq,
                                    (uint16_t)(round + 1), buf, bytes);
            break;
        }
        if (me + mask < n) {
            rc = tlm_core_coll_recv(tlm_core_coll_grp_rank(g, me + mask), seq,
                                    (uint16_t)(round + 1), tmp, bytes);
            if (rc == TELEMEM_OK && count)
                tlm_core_coll_combine(buf, tmp, count, type, op);
        }
    }
    free(tmp);
    if (rc == TELEMEM_OK)
        rc = tlm_core_coll_msg_bcast(g, buf, bytes, 0, seq, round);
    return rc;
}

int tlm_core_coll_msg_exchange(const tlm_core_coll_grp_t *g, void **blocks,
                               const size_t *bytes, uint32_t seq,
                               uint16_t round)
{
    int n = g->n, me = g->me, rc = TELEMEM_OK;
    for (int k = 1; k < n && rc == TELEMEM_OK; k++)
        rc = tlm_core_coll_send(tlm_core_coll_grp_rank(g, (me + k) % n), seq,
                                round, blocks[me], bytes[me]);
    for (int k = 1; k < n && rc == TELEMEM_OK; k++) {
        int src = (me - k + n) % n;
        rc = tlm_core_coll_recv(tlm_core_coll_grp_rank(g, src), seq, round,
                                blocks[src], bytes[src]);
    }
    return rc;
}

void tlm_core_coll_msg_init(void)
{
    coll_done = tlm_core.coll_seq;
    /* Without it a refused message is still logged, but a collective that
     * needed it waits until TELEMEM_TIMEOUT instead of failing at once. */
    coll_err = calloc((size_t)tlm_core.nranks, sizeof(*coll_err));
    tlm_am_set_handler(TLM_AM_COLL, on_coll);
}

void tlm_core_coll_msg_fini(void)
{
    while (tlm_core.coll_inbox) {
        tlm_coll_msg_t *m = tlm_core.coll_inbox;
        tlm_core.coll_inbox = m->next;
        inbox_free(m);
    }
    free(coll_err);
    coll_err = NULL;
    coll_nholes = 0;
}

/* core_coll.c - collectives over active messages: barrier (dissemination),
 * broadcast (binomial tree), allreduce (binomial reduce to rank 0 in a fixed
 * order, then broadcast) and allgather (direct exchange).  Early messages
 * wait in an inbox keyed by (source, collective sequence, round). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

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

static void on_coll(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    if (len < sizeof(*h)) {
        tlm_warn("dropped a malformed collective message from rank %d", src);
        return;
    }
    size_t plen = len - sizeof(*h);
    tlm_coll_msg_t *m = inbox_find(src, h->h.id, h->h.aux, NULL);
    if (!m) {
        m = calloc(1, sizeof(*m));
        if (m && h->total)
            m->buf = malloc(h->total);
        if (!m || (h->total && !m->buf)) {
            tlm_error("no memory for a %llu-byte collective message from "
                      "rank %d", (unsigned long long)h->total, src);
            if (m)
                free(m);
            return;
        }
        m->src = src;
        m->seq = h->h.id;
        m->round = h->h.aux;
        m->total = h->total;
        m->next = tlm_core.coll_inbox;
        tlm_core.coll_inbox = m;
    }
    if (h->total != m->total || h->offset > m->total ||
        plen > m->total - h->offset) {
        tlm_warn("dropped an inconsistent collective message from rank %d",
                 src);
        return;
    }
    if (plen)
        memcpy(m->buf + h->offset, h + 1, plen);
    m->got += plen;
}

static int coll_send(int dst, uint32_t seq, uint16_t round, const void *data,
                     size_t len)
{
    tlm_am_frag_hdr_t h = {{TLM_AM_COLL, 0, round, seq}, 0, len, 0};
    return tlm_core_send_stream(dst, &h, sizeof(h), data, len);
}

/* Wait for the whole message (src, seq, round) and hand its bytes over. */
static int coll_recv(int src, uint32_t seq, uint16_t round, void *dst,
                     size_t len)
{
    tlm_coll_msg_t *m, **link = NULL;
    tlm_wait_t w;
    tlm_core_wait_init(&w, src);
    for (;;) {
        m = inbox_find(src, seq, round, &link);
        if (m && m->got == m->total)
            break;
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
    free(m->buf);
    free(m);
    return rc;
}

static int coll_enter(const char *what)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    tlm_core.coll_seq++;
    return TELEMEM_OK;
}

int telemem_barrier(void)
{
    TLM_API_GUARD();
    int rc = coll_enter("barrier");
    if (rc != TELEMEM_OK)
        return rc;
    int n = tlm_core.nranks, me = tlm_core.rank;
    uint32_t seq = tlm_core.coll_seq;
    uint16_t round = 0;
    for (int k = 1; k < n && rc == TELEMEM_OK; k <<= 1, round++) {
        rc = coll_send((me + k) % n, seq, round, NULL, 0);
        if (rc == TELEMEM_OK)
            rc = coll_recv((me - k + n) % n, seq, round, NULL, 0);
    }
    return rc;
}

static int bcast(void *buf, size_t bytes, int root, uint32_t seq)
{
    int n = tlm_core.nranks;
    int vr = (tlm_core.rank - root + n) % n;
    int rc = TELEMEM_OK;
    int mask = 1;
    /* Receive from the parent: the rank that differs in our lowest set bit. */
    while (mask < n) {
        if (vr & mask) {
            int parent = (vr - mask + root) % n;
            rc = coll_recv(parent, seq, 0, buf, bytes);
            break;
        }
        mask <<= 1;
    }
    /* Send to children below that bit. */
    mask >>= 1;
    while (mask > 0 && rc == TELEMEM_OK) {
        if (vr + mask < n)
            rc = coll_send((vr + mask + root) % n, seq, 0, buf, bytes);
        mask >>= 1;
    }
    return rc;
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
    coll_enter("broadcast");
    return bcast(buf, bytes, root, tlm_core.coll_seq);
}

static size_t type_size(telemem_type_t t)
{
    switch (t) {
    case TELEMEM_INT32: case TELEMEM_FLOAT: return 4;
    case TELEMEM_INT64: case TELEMEM_UINT64: case TELEMEM_DOUBLE: return 8;
    case TELEMEM_COMPLEX_FLOAT: case TELEMEM_COMPLEX_DOUBLE: break;
    }
    return 0; /* complex types: no ordering, not reducible here */
}

#define COMBINE(T)                                                          \
    do {                                                                    \
        T *a = acc;                                                         \
        const T *b = in;                                                    \
        for (size_t i = 0; i < count; i++) {                                \
            if (op == TELEMEM_SUM) a[i] = (T)(a[i] + b[i]);                 \
            else if (op == TELEMEM_MIN) a[i] = b[i] < a[i] ? b[i] : a[i];   \
            else a[i] = b[i] > a[i] ? b[i] : a[i];                          \
        }                                                                   \
    } while (0)

static void combine(void *acc, const void *in, size_t count,
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

int telemem_allreduce(void *buf, size_t count, telemem_type_t type,
                      telemem_op_t op)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    size_t es = type_size(type);
    if (!es || (op != TELEMEM_SUM && op != TELEMEM_MIN && op != TELEMEM_MAX) ||
        (!buf && count) || (count && es > SIZE_MAX / count)) {
        tlm_error("allreduce: %s", !es ? "unknown type"
                  : (op != TELEMEM_SUM && op != TELEMEM_MIN &&
                     op != TELEMEM_MAX) ? "unknown operator"
                  : (!buf && count) ? "buffer is NULL" : "count too large");
        return TELEMEM_ERR_INVALID_ARG;
    }
    coll_enter("allreduce");
    uint32_t seq = tlm_core.coll_seq;
    size_t bytes = count * es;
    int n = tlm_core.nranks, me = tlm_core.rank;
    void *tmp = bytes ? malloc(bytes) : NULL;
    if (bytes && !tmp)
        return TELEMEM_ERR_NO_MEMORY;
    /* Binomial reduction towards rank 0; each rank combines its children in
     * increasing distance, so the order is the same on every run. */
    for (int mask = 1; mask < n && rc == TELEMEM_OK; mask <<= 1) {
        if (me & mask) {
            rc = coll_send(me - mask, seq, 1, buf, bytes);
            break;
        }
        if (me + mask < n) {
            rc = coll_recv(me + mask, seq, 1, tmp, bytes);
            if (rc == TELEMEM_OK)
                combine(buf, tmp, count, type, op);
        }
    }
    free(tmp);
    if (rc == TELEMEM_OK)
        rc = bcast(buf, bytes, 0, seq);
    return rc;
}

int telemem_allgather(const void *in, void *out, size_t bytes_per_rank)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    int n = tlm_core.nranks, me = tlm_core.rank;
    if (bytes_per_rank && (!in || !out || bytes_per_rank > SIZE_MAX / (size_t)n)) {
        tlm_error("allgather: %s", !in || !out ? "buffer is NULL"
                                               : "size too large");
        return TELEMEM_ERR_INVALID_ARG;
    }
    coll_enter("allgather");
    uint32_t seq = tlm_core.coll_seq;
    uint8_t *o = out;
    if (bytes_per_rank)
        memmove(o + (size_t)me * bytes_per_rank, in, bytes_per_rank);
    for (int k = 1; k < n && rc == TELEMEM_OK; k++)
        rc = coll_send((me + k) % n, seq, 0, in, bytes_per_rank);
    for (int k = 1; k < n && rc == TELEMEM_OK; k++) {
        int src = (me - k + n) % n;
        rc = coll_recv(src, seq, 0, o + (size_t)src * bytes_per_rank,
                       bytes_per_rank);
    }
    return rc;
}

void tlm_core_coll_init(void)
{
    tlm_am_set_handler(TLM_AM_COLL, on_coll);
}

void tlm_core_coll_fini(void)
{
    while (tlm_core.coll_inbox) {
        tlm_coll_msg_t *m = tlm_core.coll_inbox;
        tlm_core.coll_inbox = m->next;
        free(m->buf);
        free(m);
    }
}

/* loop_transport.c - the in-process transport: messages a rank sends to
 * itself (active messages, collectives of a singleton job) wait in a FIFO of
 * fixed buffers and are delivered by the next progress call. */
#define TLM_LOG_SUBSYS "loop"
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "backends/transport.h"
#include "util/log.h"
#include "util/util.h"

#define LOOP_SLOTS 64u
#define LOOP_MSG 16384u

typedef struct loop_transport {
    tlm_transport_t super;
    tlm_deliver_fn_t deliver;
    void *deliver_arg;
    int rank;
    uint64_t head, tail; /* FIFO positions */
    uint32_t len[LOOP_SLOTS];
    uint8_t *bufs;       /* LOOP_SLOTS * LOOP_MSG, 8-byte aligned */
} loop_transport_t;

/* The next slot for a message of len bytes, or NULL with *rc set. */
static uint8_t *loop_reserve(loop_transport_t *lt, int peer, size_t len,
                             int *rc)
{
    *rc = peer != lt->rank ? TELEMEM_ERR_UNREACHABLE
          : lt->tail - lt->head >= LOOP_SLOTS ? TELEMEM_ERR_AGAIN
          : len > LOOP_MSG ? TELEMEM_ERR_INVALID_ARG : TELEMEM_OK;
    if (*rc != TELEMEM_OK)
        return NULL;
    uint32_t s = (uint32_t)(lt->tail % LOOP_SLOTS);
    lt->len[s] = (uint32_t)len;
    return lt->bufs + (size_t)s * LOOP_MSG;
}

static int loop_send(tlm_transport_t *tp, int peer, const void *hdr,
                     size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    loop_transport_t *lt = tlm_container_of(tp, loop_transport_t, super);
    size_t len = hdr_len;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    int rc;
    uint8_t *d = loop_reserve(lt, peer, len, &rc);
    if (!d)
        return rc;
    memcpy(d, hdr, hdr_len);
    d += hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d, iov[i].iov_base, iov[i].iov_len);
        d += iov[i].iov_len;
    }
    lt->tail++;
    return TELEMEM_OK;
}

static int loop_send_fill(tlm_transport_t *tp, int peer, const void *hdr,
                          size_t hdr_len, size_t len, tlm_fill_fn_t fill,
                          void *arg)
{
    loop_transport_t *lt = tlm_container_of(tp, loop_transport_t, super);
    int rc;
    uint8_t *d = loop_reserve(lt, peer, hdr_len + len, &rc);
    if (!d)
        return rc;
    memcpy(d, hdr, hdr_len);
    if (len)
        fill(d + hdr_len, len, arg);
    lt->tail++;
    return TELEMEM_OK;
}

static int loop_progress(tlm_transport_t *tp, int max)
{
    loop_transport_t *lt = tlm_container_of(tp, loop_transport_t, super);
    int n = 0;
    /* Only what was queued before this call: a handler that sends to self
     * is delivered by the next progress, so progress always returns. */
    uint64_t end = lt->tail;
    while (lt->head < end && n < max) {
        uint32_t s = (uint32_t)(lt->head % LOOP_SLOTS);
        if (lt->deliver(lt->deliver_arg, lt->rank,
                        lt->bufs + (size_t)s * LOOP_MSG, lt->len[s]) != 0)
            break; /* deferred */
        lt->head++;
        n++;
    }
    return n;
}

/* Only this process puts messages here, so a sleep never needs waking;
 * but a message already queued must be delivered first. */
static int loop_wait_arm(tlm_transport_t *tp, int *fd_p)
{
    loop_transport_t *lt = tlm_container_of(tp, loop_transport_t, super);
    *fd_p = -1;
    return lt->head != lt->tail ? TELEMEM_ERR_AGAIN : TELEMEM_OK;
}

static void loop_close(tlm_transport_t *tp)
{
    loop_transport_t *lt = tlm_container_of(tp, loop_transport_t, super);
    free(lt->bufs);
    free(lt);
}

static const tlm_transport_ops_t loop_ops = {
    .connect = tlm_backend_stub_connect,
    .send = loop_send,
    .send_fill = loop_send_fill,
    .progress = loop_progress,
    .wait_arm = loop_wait_arm,
    .wait_disarm = tlm_backend_stub_wait_disarm,
    .peer_alive = tlm_backend_stub_peer_alive,
    .close = loop_close,
};

static int loop_query(const tlm_transport_params_t *p, bool *reach)
{
    for (int r = 0; r < p->size; r++)
        reach[r] = r == p->rank;
    return TELEMEM_OK;
}

static int loop_open(const tlm_transport_params_t *p, tlm_transport_t **tp_p)
{
    loop_transport_t *lt = calloc(1, sizeof(*lt));
    if (!lt)
        return TELEMEM_ERR_NO_MEMORY;
    lt->bufs = aligned_alloc(64, (size_t)LOOP_SLOTS * LOOP_MSG);
    if (!lt->bufs) {
        free(lt);
        return TELEMEM_ERR_NO_MEMORY;
    }
    lt->super.ops = &loop_ops;
    lt->super.name = "loop";
    lt->super.max_msg = LOOP_MSG;
    lt->super.same_node_only = true;
    lt->deliver = p->deliver;
    lt->deliver_arg = p->deliver_arg;
    lt->rank = p->rank;
    *tp_p = &lt->super;
    return TELEMEM_OK;
}

const tlm_backend_t tlm_loop_backend = {
    .name = "loop",
    .abi = TLM_BACKEND_ABI,
    .check = tlm_backend_stub_check,
    .query = loop_query,
    .open = loop_open,
};

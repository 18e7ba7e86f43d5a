/* ucx_transport.c - the UCX transport: one UCP worker per process, UCP
 * active messages (one handler id) carrying Telemem's messages, the
 * sender's rank in the AM header, endpoints created on first send from the
 * worker addresses exchanged through the bootstrap store (kept per rank at
 * their exact length), capped by TELEMEM_NET_MAX_PEERS first come first
 * served.  Messages up to 16 KiB go eagerly from one pool of send buffers
 * shared by all peers; longer ones (up to 1 MiB of payload) go from a few
 * big buffers, made at the first such send, by whatever protocol UCX picks
 * (rendezvous: the receiver pulls the data).  A big message carries its
 * Telemem header in the UCX header, so the receiver can ask the AM layer
 * where the payload goes (a put's target memory) and pull it straight
 * there; otherwise into a receive node of its own.
 * UCX_TLS selects the wires as usual (tcp, sysv/posix/cma, rc/ud on
 * InfiniBand). */
#define TLM_LOG_SUBSYS "ucx"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#include "telemem.h"
#include "backends/transport.h"
#include "backends/ucx/ucx_direct.h"
#include "util/log.h"
#include "util/util.h"

#define UCX_PAYLOAD (16u * 1024u)
#define UCX_HDR_ROOM 256u
#define UCX_MSG (UCX_PAYLOAD + UCX_HDR_ROOM)
#define UCX_TX_COUNT 256
/* Big messages: one message of a 1 MiB put, header included.  UCX sends
 * them by rendezvous, several MB/s more than 16 KiB eager fragments over
 * tcp (zero-copy on the wire, one round trip per MiB). */
#define UCX_BIG_MSG ((1u << 20) + UCX_HDR_ROOM)
#define UCX_BIG_COUNT 4     /* big send buffers, made at first use */
#define UCX_BIG_SPARE 8     /* big receive nodes kept */
#define UCX_NBUF (UCX_TX_COUNT + UCX_BIG_COUNT)
/* A big buffer: 8-byte prefix (our rank, 0), then the message, so prefix
 * and header are one UCX header and the payload follows. */
#define UCX_PREFIX 8u
#define UCX_BIG_BUF (UCX_PREFIX + UCX_BIG_MSG)
/* Zero-copy sends (send_zc: the engine's data, read in place) in flight,
 * each with its UCX header (prefix + message header) kept here. */
#define UCX_ZC_COUNT 16
#define UCX_ZC_MIN (UCX_PAYLOAD + 1u) /* the eager pool's copies are as fast */
/* Up to this many bytes a message goes eagerly, longer ones by whatever
 * UCX picks (rendezvous); per peer, by its wires (eager_max_for).  With
 * peer-failure detection on, UCX 1.13 over tcp switches to rendezvous at
 * about 20 KiB, and the rendezvous runs on active messages (no RMA lane):
 * 1.3-3.2 GB/s for 32-256 KiB bursts against 3.6-3.9 GB/s eagerly; from
 * 512 KiB rendezvous is faster.  Over shared memory eager wins at every
 * size (1 MiB: ping-pong 7.8 against 4.3 GB/s by CMA rendezvous, bursts
 * 11 against 6.8).  Also the longest send_zc that completes without the
 * peer's help (zc_local_max). */
#define UCX_EAGER_MAX ((size_t)256 * 1024)

typedef struct ucx_zc {
    struct ucx_transport *ut;
    tlm_sent_fn_t done;
    void *arg;
    uint64_t hdr[(UCX_PREFIX + UCX_HDR_ROOM) / 8];
} ucx_zc_t;
#define UCX_AM_ID 7
#define UCX_ADDR_MAX 4096
#define UCX_RX_SPARE 64     /* spare receive nodes kept (about 1 MiB) */

/* A received message kept until the progress call delivers it (handlers
 * may send; UCX callbacks should not).  When UCX lets us keep its receive
 * buffer (UCP_AM_RECV_ATTR_FLAG_DATA) and it is 8-byte aligned, msg points
 * into it and it is released after delivery; otherwise the message is
 * copied behind the node. */
typedef struct ucx_transport ucx_transport_t;

typedef struct ucx_rx {
    struct ucx_rx *next;
    ucx_transport_t *ut; /* for on_received */
    int src;         /* -1: dropped (its receive failed) */
    size_t len;
    const void *msg;
    void *ucx_data;  /* UCX's buffer to release, or NULL */
    bool big;        /* room for UCX_BIG_MSG, else UCX_MSG */
    bool ready;      /* false while a rendezvous receive fills data */
    bool placed;     /* data holds only the header (hdr_len bytes); the
                      * len payload bytes went where place() said */
    int status;      /* placed: how the payload receive ended */
    size_t hdr_len;
    uint64_t data[]; /* the copy, 8-byte aligned */
} ucx_rx_t;

struct ucx_transport {
    tlm_transport_t super;
    tlm_deliver_fn_t deliver;
    void *deliver_arg;
    tlm_place_fn_t place;   /* NULL: never place */
    tlm_placed_fn_t placed;
    bool may_place;         /* inside ucx_progress's own progress call */
    size_t max_am_header;   /* UCX's limit on an AM header */
    int rank, size;
    ucp_context_h ctx;
    ucp_worker_h worker;
    int efd;                /* ucp_worker_get_efd, or -1 (no wake-up) */
    ucp_ep_h *eps;          /* by rank, created on first send */
    uint8_t **addrs;        /* peers' worker addresses */
    size_t *addr_lens;
    bool *dead;
    bool *heard;            /* by rank: it sent us a message */
    size_t *eager_max;      /* by rank: see UCX_EAGER_MAX */
    int npeers;             /* endpoints created */
    int max_peers;          /* TELEMEM_NET_MAX_PEERS, 0 = no limit */
    bool closing;           /* peers leaving now is expected */
    uint8_t *tx_pool;
    uint8_t *big_pool;      /* UCX_BIG_COUNT big buffers, or NULL */
    uint32_t tx_hdr[UCX_NBUF]; /* the AM header (our rank) per send:
                                * UCX may read it until completion */
    int tx_free[UCX_TX_COUNT];
    int ntx_free;
    int big_free[UCX_BIG_COUNT];
    int nbig_free;
    ucx_zc_t zc[UCX_ZC_COUNT];
    ucx_zc_t *zc_free[UCX_ZC_COUNT];
    int nzc_free;
    int rx_pending;         /* rendezvous receives not finished */
    ucx_rx_t *rx_head, *rx_tail;
    ucx_rx_t *node_free;    /* spare receive nodes (UCX_MSG) */
    int nnode_free;
    ucx_rx_t *big_node_free; /* spare big receive nodes */
    int nbig_node_free;
    bool kept_any;          /* logged that messages are kept in place */
    bool placed_any;        /* logged that payloads are placed */
};

typedef struct ucx_tx_ref {
    ucx_transport_t *ut;
    int index;
} ucx_tx_ref_t;

static ucx_tx_ref_t tx_refs[UCX_NBUF];

/* Receive nodes have room for a whole message and are recycled: a
 * malloc and free per message made glibc grow and trim its heap, a page
 * fault per message (perf, ucx over tcp). */
static ucx_rx_t *take_rx(ucx_transport_t *ut, size_t len)
{
    bool big = len > UCX_MSG;
    ucx_rx_t **list = big ? &ut->big_node_free : &ut->node_free;
    ucx_rx_t *m = *list;
    if (m) {
        *list = m->next;
        if (big)
            ut->nbig_node_free--;
        else
            ut->nnode_free--;
        return m;
    }
    m = malloc(sizeof(*m) + (big ? UCX_BIG_MSG : UCX_MSG));
    if (m)
        m->big = big;
    return m;
}

static void free_rx(ucx_transport_t *ut, ucx_rx_t *m)
{
    if (m->ucx_data)
        ucp_am_data_release(ut->worker, m->ucx_data);
    if (!m->big && ut->nnode_free < UCX_RX_SPARE) {
        m->next = ut->node_free;
        ut->node_free = m;
        ut->nnode_free++;
    } else if (m->big && ut->nbig_node_free < UCX_BIG_SPARE) {
        m->next = ut->big_node_free;
        ut->big_node_free = m;
        ut->nbig_node_free++;
    } else {
        free(m);
    }
}

static void free_list(ucx_rx_t *m)
{
    while (m) {
        ucx_rx_t *next = m->next;
        free(m);
        m = next;
    }
}

/* A rendezvous receive finished: the node may be delivered. */
static void on_received(void *request, ucs_status_t status, size_t length,
                        void *user)
{
    ucx_rx_t *m = user;
    ucx_transport_t *ut = m->ut;
    size_t want = m->placed ? m->len : m->len - m->hdr_len; /* payload */
    if (status != UCS_OK || length != want) {
        tlm_error("receiving a %zu-byte message from rank %d: %s", m->len,
                  m->src, ucs_status_string(status));
        if (m->placed) /* placed() must still hear of it */
            m->status = status == UCS_OK ? TELEMEM_ERR_TRANSPORT
                                         : TELEMEM_ERR_PEER_DEAD;
        else
            m->src = -1;
    }
    m->ready = true;
    ut->rx_pending--;
    ucp_request_free(request);
}

/* UCX's header is our rank (4 bytes: the message is the data) or, for big
 * messages, an 8-byte prefix and the message's header (the data is the
 * payload).  The payload goes to the target memory place() names (pulled
 * there by rendezvous, or copied from UCX's eager buffer), else into a
 * node behind the header. */
static ucs_status_t on_am(void *arg, const void *header, size_t header_len,
                          void *data, size_t len,
                          const ucp_am_recv_param_t *param)
{
    ucx_transport_t *ut = arg;
    uint32_t src;
    if (header_len != sizeof(src) && header_len <= UCX_PREFIX) {
        tlm_warn("dropped an unexpected UCX active message (%zu bytes)", len);
        return UCS_OK;
    }
    memcpy(&src, header, sizeof(src));
    size_t hl = header_len > UCX_PREFIX ? header_len - UCX_PREFIX : 0;
    uint64_t hbuf[UCX_HDR_ROOM / 8]; /* UCX's header is not aligned */
    if (hl > sizeof(hbuf)) {
        tlm_warn("dropped a UCX active message with a %zu-byte header", hl);
        return UCS_OK;
    }
    memcpy(hbuf, (const uint8_t *)header + UCX_PREFIX, hl);
    const void *hdr = hbuf;
    bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    bool keep = !hl && (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) &&
                ((uintptr_t)data & 7u) == 0;
    void *dst = NULL;
    if (hl && ut->may_place && !ut->rx_head) {
        dst = ut->place(ut->deliver_arg, (int)src, hdr, hl, len);
        if (dst && !ut->placed_any) {
            ut->placed_any = true;
            tlm_debug("payloads are written in place (first: %zu bytes "
                      "from rank %u)", len, src);
        }
    }
    ucx_rx_t *m = hl + len <= UCX_BIG_MSG ? take_rx(ut, dst ? hl : hl + len)
                                          : NULL;
    if (!m) {
        tlm_error("cannot keep a %zu-byte message from rank %u (out of "
                  "memory, or over %u bytes)", hl + len, src, UCX_BIG_MSG);
        if (dst) /* placed() is owed for every place() */
            ut->placed(ut->deliver_arg, (int)src, hdr, hl, len,
                       TELEMEM_ERR_NO_MEMORY);
        return UCS_OK;
    }
    m->next = NULL;
    m->src = (int)src;
    m->len = dst ? len : hl + len;
    m->msg = m->data;
    m->ucx_data = NULL;
    m->ready = true;
    m->placed = dst != NULL;
    m->status = TELEMEM_OK;
    m->hdr_len = hl;
    memcpy(m->data, hdr, hl);
    uint8_t *to = dst ? dst : (uint8_t *)m->data + hl;
    if (rndv) {
        /* The data follows; the node waits in line (order per sender)
         * until on_received marks it ready. */
        m->ut = ut;
        ucp_request_param_t prm = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                            UCP_OP_ATTR_FIELD_USER_DATA,
            .cb = {.recv_am = on_received},
            .user_data = m,
        };
        ucs_status_ptr_t r = ucp_am_recv_data_nbx(ut->worker, data, to, len,
                                                  &prm);
        if (UCS_PTR_IS_ERR(r)) {
            tlm_error("receiving a %zu-byte message from rank %u: %s", len,
                      src, ucs_status_string(UCS_PTR_STATUS(r)));
            if (dst)
                m->status = TELEMEM_ERR_TRANSPORT;
            else
                m->src = -1;
        } else if (r != NULL) {
            m->ready = false;
            ut->rx_pending++;
        }
    } else if (keep) {
        if (!ut->kept_any) {
            ut->kept_any = true;
            tlm_debug("messages are delivered from UCX's receive buffers");
        }
        m->msg = data;
        m->ucx_data = data;
    } else {
        memcpy(to, data, len);
    }
    if (ut->rx_tail)
        ut->rx_tail->next = m;
    else
        ut->rx_head = m;
    ut->rx_tail = m;
    return keep ? UCS_INPROGRESS : UCS_OK;
}

static int deliver_ready(ucx_transport_t *ut, int max)
{
    int n = 0;
    while (ut->rx_head && ut->rx_head->ready && n < max) {
        ucx_rx_t *m = ut->rx_head;
        ut->rx_head = m->next;
        if (!ut->rx_head)
            ut->rx_tail = NULL;
        if (m->placed) {
            ut->heard[m->src] = true;
            ut->placed(ut->deliver_arg, m->src, m->data, m->hdr_len, m->len,
                       m->status);
        } else if (m->src >= 0 && m->src < ut->size) {
            ut->heard[m->src] = true;
            ut->deliver(ut->deliver_arg, m->src, m->msg, m->len);
        }
        free_rx(ut, m);
        n++;
    }
    return n;
}

static int ucx_progress(tlm_transport_t *tp, int max)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    int n = 0;
    /* Deliver between UCX's progress calls (draining UCX first made a
     * burst of big messages wait in freshly allocated nodes), and return
     * once something was delivered: one more ucp_worker_progress is an
     * epoll_wait between the message and the caller waiting for it (about
     * 1.6 us of an 8-byte one-way time over tcp).  Payloads may be placed
     * only from here (handlers' sends poll UCX too). */
    for (;;) {
        ut->may_place = ut->place != NULL;
        unsigned events = ucp_worker_progress(ut->worker);
        ut->may_place = false;
        n += deliver_ready(ut, max - n);
        if (!events || n > 0)
            break;
    }
    return n;
}

/* A wait is about to sleep: arm the worker's event fd (UCX signals it
 * on the next event); busy when events are pending or a message received
 * in an earlier progress call waits for its turn in rx_head. */
static int ucx_wait_arm(tlm_transport_t *tp, int *fd_p)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    *fd_p = -1;
    if (ut->efd < 0)
        return TELEMEM_ERR_UNSUPPORTED;
    if (ut->rx_head && ut->rx_head->ready)
        return TELEMEM_ERR_AGAIN;
    ucs_status_t st = ucp_worker_arm(ut->worker);
    if (st == UCS_ERR_BUSY)
        return TELEMEM_ERR_AGAIN;
    if (st != UCS_OK)
        return TELEMEM_ERR_UNSUPPORTED;
    *fd_p = ut->efd;
    return TELEMEM_OK;
}

static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    ucx_transport_t *ut = arg;
    for (int r = 0; r < ut->size; r++) {
        if (ut->eps[r] == ep && !ut->dead[r]) {
            /* Also what a peer that finished and exited looks like: the
             * core reports a death only if it waits for that peer. */
            tlm_debug("connection to rank %d lost: %s", r,
                      ucs_status_string(status));
            ut->dead[r] = true;
        }
    }
}

/* Shared-memory wires only (sysv, posix; no tcp, no InfiniBand): eager at
 * every size, else up to UCX_EAGER_MAX (InfiniBand untested). */
static size_t eager_max_for(ucp_ep_h ep)
{
    char *text = tlm_ucx_ep_dump(ep);
    size_t m = UCX_EAGER_MAX;
    if (text && (strstr(text, "sysv/") || strstr(text, "posix/")) &&
        !strstr(text, "tcp/") && !strstr(text, "rc_") &&
        !strstr(text, "ud_") && !strstr(text, "dc_"))
        m = SIZE_MAX;
    free(text);
    return m;
}

static int ucx_connect(tlm_transport_t *tp, int peer)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    if (ut->eps[peer])
        return TELEMEM_OK;
    /* First come, first served; a peer that contacted us is answered (its
     * connection exists on our worker already). */
    if (ut->max_peers && ut->npeers >= ut->max_peers && !ut->heard[peer]) {
        tlm_error("rank %d would be peer %d of this process over ucx: over "
                  "TELEMEM_NET_MAX_PEERS=%d (first come, first served)",
                  peer, ut->npeers + 1, ut->max_peers);
        return TELEMEM_ERR_UNREACHABLE;
    }
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)ut->addrs[peer],
        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = on_ep_error, .arg = ut},
    };
    ucs_status_t st = ucp_ep_create(ut->worker, &ep, &ut->eps[peer]);
    if (st == UCS_ERR_UNREACHABLE) {
        /* Shared-memory wires (sysv, posix) cannot report a dead peer:
         * connect without that; the launcher still notices deaths. */
        ep.field_mask &= ~(uint64_t)(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                     UCP_EP_PARAM_FIELD_ERR_HANDLER);
        st = ucp_ep_create(ut->worker, &ep, &ut->eps[peer]);
        if (st == UCS_OK)
            tlm_debug("rank %d: connected without peer-failure detection",
                      peer);
    }
    if (st != UCS_OK) {
        tlm_error("ucp_ep_create to rank %d: %s", peer,
                  ucs_status_string(st));
        ut->eps[peer] = NULL;
        return TELEMEM_ERR_TRANSPORT;
    }
    ut->npeers++;
    ut->eager_max[peer] = eager_max_for(ut->eps[peer]);
    tlm_debug("first contact with rank %d (%d peers; eager up to %s)", peer,
              ut->npeers, ut->eager_max[peer] == SIZE_MAX ? "any size"
                                                          : "256 KiB");
    return TELEMEM_OK;
}

static void put_back(ucx_transport_t *ut, int i)
{
    if (i < UCX_TX_COUNT)
        ut->tx_free[ut->ntx_free++] = i;
    else
        ut->big_free[ut->nbig_free++] = i;
}

/* A live peer with an endpoint (made now at first contact), or why not. */
static int reach(ucx_transport_t *ut, int peer)
{
    if (ut->dead[peer])
        return TELEMEM_ERR_PEER_DEAD;
    if (TLM_UNLIKELY(!ut->eps[peer]))
        return ucx_connect(&ut->super, peer);
    return TELEMEM_OK;
}

static void on_sent(void *request, ucs_status_t status, void *user)
{
    ucx_tx_ref_t *ref = user;
    put_back(ref->ut, ref->index);
    if (status != UCS_OK)
        tlm_debug("a send completed with %s", ucs_status_string(status));
    ucp_request_free(request);
}

static uint8_t *tx_buf(ucx_transport_t *ut, int i)
{
    return i < UCX_TX_COUNT
        ? ut->tx_pool + (size_t)i * UCX_MSG
        : ut->big_pool + (size_t)(i - UCX_TX_COUNT) * UCX_BIG_BUF +
              UCX_PREFIX;
}

/* A free send buffer for a len-byte message: its index, -1 if none is free
 * now (TELEMEM_ERR_AGAIN), -2 if the big buffers cannot be made. */
static int take_tx(ucx_transport_t *ut, size_t len)
{
    if (len <= UCX_MSG) {
        if (ut->ntx_free == 0)
            ucp_worker_progress(ut->worker);
        return ut->ntx_free ? ut->tx_free[--ut->ntx_free] : -1;
    }
    if (TLM_UNLIKELY(!ut->big_pool)) {
        ut->big_pool = malloc((size_t)UCX_BIG_COUNT * UCX_BIG_BUF);
        if (!ut->big_pool) {
            tlm_error("no memory for %u send buffers of %u bytes",
                      UCX_BIG_COUNT, UCX_BIG_MSG);
            return -2;
        }
        for (int k = 0; k < UCX_BIG_COUNT; k++)
            ut->big_free[k] = UCX_NBUF - 1 - k;
        ut->nbig_free = UCX_BIG_COUNT;
    }
    if (ut->nbig_free == 0)
        ucp_worker_progress(ut->worker);
    return ut->nbig_free ? ut->big_free[--ut->nbig_free] : -1;
}

static uint32_t proto_flags(const ucx_transport_t *ut, int peer, size_t len)
{
    return len <= ut->eager_max[peer] ? UCP_AM_SEND_FLAG_EAGER : 0;
}

/* The 8-byte prefix of a big message's UCX header: our rank, 0. */
static void put_prefix(ucx_transport_t *ut, void *dst)
{
    uint32_t prefix[2] = {(uint32_t)ut->rank, 0};
    memcpy(dst, prefix, UCX_PREFIX);
}

/* One ucp_am_send_nbx; cb(user) runs when UCX is done with it.  1: done at
 * once (cb will not run), 0: in flight, TELEMEM_ERR_PEER_DEAD (logged; the
 * peer counts as dead from now on, cb will not run). */
static int am_send(ucx_transport_t *ut, int peer, const void *uh,
                   size_t uh_len, const void *data, size_t len,
                   ucp_send_nbx_callback_t cb, void *user)
{
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                        UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_FLAGS,
        .cb = {.send = cb},
        .user_data = user,
        .flags = proto_flags(ut, peer, len),
    };
    ucs_status_ptr_t r = ucp_am_send_nbx(ut->eps[peer], UCX_AM_ID, uh, uh_len,
                                         data, len, &prm);
    if (r == NULL)
        return 1;
    if (UCS_PTR_IS_ERR(r)) {
        tlm_error("ucp_am_send_nbx to rank %d: %s", peer,
                  ucs_status_string(UCS_PTR_STATUS(r)));
        ut->dead[peer] = true;
        return TELEMEM_ERR_PEER_DEAD;
    }
    return 0;
}

/* Send buffer i (len bytes, the first hdr_len of them the header). */
static int post(ucx_transport_t *ut, int peer, int i, size_t hdr_len,
                size_t len)
{
    ut->tx_hdr[i] = (uint32_t)ut->rank;
    const void *uh = &ut->tx_hdr[i];
    size_t uh_len = sizeof(uint32_t);
    uint8_t *data = tx_buf(ut, i);
    if (i >= UCX_TX_COUNT && UCX_PREFIX + hdr_len <= ut->max_am_header) {
        /* Big: the header rides in UCX's header (see on_am). */
        put_prefix(ut, data - UCX_PREFIX);
        uh = data - UCX_PREFIX;
        uh_len = UCX_PREFIX + hdr_len;
        data += hdr_len;
        len -= hdr_len;
    }
    tx_refs[i] = (ucx_tx_ref_t){ut, i};
    int rc = am_send(ut, peer, uh, uh_len, data, len, on_sent, &tx_refs[i]);
    if (rc != 0) /* done at once, or failed: on_sent will not run */
        put_back(ut, i);
    return rc < 0 ? rc : TELEMEM_OK;
}

static int ucx_send(tlm_transport_t *tp, int peer, const void *hdr,
                    size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    size_t len = hdr_len;
    for (int k = 0; k < iovcnt; k++)
        len += iov[k].iov_len;
    if (len > UCX_BIG_MSG)
        return TELEMEM_ERR_INVALID_ARG;
    int rc = reach(ut, peer);
    if (TLM_UNLIKELY(rc != TELEMEM_OK))
        return rc;
    int i = take_tx(ut, len);
    if (i < 0)
        return i == -1 ? TELEMEM_ERR_AGAIN : TELEMEM_ERR_NO_MEMORY;
    uint8_t *d = tx_buf(ut, i);
    memcpy(d, hdr, hdr_len);
    d += hdr_len;
    for (int k = 0; k < iovcnt; k++) {
        memcpy(d, iov[k].iov_base, iov[k].iov_len);
        d += iov[k].iov_len;
    }
    return post(ut, peer, i, hdr_len, len);
}

static int ucx_send_fill(tlm_transport_t *tp, int peer, const void *hdr,
                         size_t hdr_len, size_t len, tlm_fill_fn_t fill,
                         void *arg)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    if (hdr_len + len > UCX_BIG_MSG)
        return TELEMEM_ERR_INVALID_ARG;
    int rc = reach(ut, peer);
    if (TLM_UNLIKELY(rc != TELEMEM_OK))
        return rc;
    int i = take_tx(ut, hdr_len + len);
    if (i < 0)
        return i == -1 ? TELEMEM_ERR_AGAIN : TELEMEM_ERR_NO_MEMORY;
    uint8_t *d = tx_buf(ut, i);
    memcpy(d, hdr, hdr_len);
    if (len)
        fill(d + hdr_len, len, arg);
    return post(ut, peer, i, hdr_len, hdr_len + len);
}

static void on_sent_zc(void *request, ucs_status_t status, void *user)
{
    ucx_zc_t *z = user;
    ucx_transport_t *ut = z->ut;
    ut->zc_free[ut->nzc_free++] = z;
    if (status != UCS_OK)
        tlm_debug("a zero-copy send completed with %s",
                  ucs_status_string(status));
    ucp_request_free(request);
    z->done(z->arg, status == UCS_OK ? TELEMEM_OK : TELEMEM_ERR_PEER_DEAD);
}

/* The header rides in UCX's header as for big messages (see on_am), the
 * payload is read where it is (UCX's zero-copy or rendezvous protocols). */
static int ucx_send_zc(tlm_transport_t *tp, int peer, const void *hdr,
                       size_t hdr_len, const void *data, size_t len,
                       tlm_sent_fn_t done, void *arg)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    if (hdr_len + len > UCX_BIG_MSG || hdr_len > UCX_HDR_ROOM ||
        UCX_PREFIX + hdr_len > ut->max_am_header)
        return TELEMEM_ERR_INVALID_ARG;
    int rc = reach(ut, peer);
    if (TLM_UNLIKELY(rc != TELEMEM_OK))
        return rc;
    if (ut->nzc_free == 0)
        ucp_worker_progress(ut->worker);
    if (ut->nzc_free == 0)
        return TELEMEM_ERR_AGAIN;
    ucx_zc_t *z = ut->zc_free[--ut->nzc_free];
    z->done = done;
    z->arg = arg;
    put_prefix(ut, z->hdr);
    memcpy((uint8_t *)z->hdr + UCX_PREFIX, hdr, hdr_len);
    rc = am_send(ut, peer, z->hdr, UCX_PREFIX + hdr_len, data, len,
                 on_sent_zc, z);
    if (rc == 0)
        return TELEMEM_OK; /* on_sent_zc calls done */
    ut->zc_free[ut->nzc_free++] = z;
    if (rc < 0)
        return rc;
    done(arg, TELEMEM_OK); /* done at once */
    return TELEMEM_OK;
}

static int ucx_peer_alive(tlm_transport_t *tp, int peer)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    return ut->dead[peer] ? TELEMEM_ERR_PEER_DEAD : TELEMEM_OK;
}

static void ucx_close(tlm_transport_t *tp)
{
    ucx_transport_t *ut = tlm_container_of(tp, ucx_transport_t, super);
    ut->closing = true;
    if (tp->direct) /* before the endpoints, worker and context */
        tp->direct->ops->close(tp->direct);
    tp->direct = NULL;
    if (ut->worker) {
        double end = tlm_util_now() + 2.0;
        while ((ut->ntx_free < UCX_TX_COUNT || ut->nzc_free < UCX_ZC_COUNT ||
                (ut->big_pool && ut->nbig_free < UCX_BIG_COUNT)) &&
               tlm_util_now() < end)
            ucp_worker_progress(ut->worker);
        for (int r = 0; ut->eps && r < ut->size; r++) {
            if (!ut->eps[r])
                continue;
            /* Flush mode: what was sent reaches the peer first. */
            ucp_request_param_t prm = {.op_attr_mask = 0};
            ucs_status_ptr_t req = ucp_ep_close_nbx(ut->eps[r], &prm);
            double until = tlm_util_now() + 2.0;
            while (UCS_PTR_IS_PTR(req) &&
                   ucp_request_check_status(req) == UCS_INPROGRESS &&
                   tlm_util_now() < until)
                ucp_worker_progress(ut->worker);
            if (UCS_PTR_IS_PTR(req))
                ucp_request_free(req);
        }
        /* Rendezvous receives still running write into their nodes:
         * let them end first (or leak those nodes, after 2 s). */
        end = tlm_util_now() + 2.0;
        while (ut->rx_pending > 0 && tlm_util_now() < end)
            ucp_worker_progress(ut->worker);
        while (ut->rx_head && ut->rx_pending == 0) {
            ucx_rx_t *m = ut->rx_head;
            ut->rx_head = m->next;
            free_rx(ut, m);
        }
        free_list(ut->node_free);
        free_list(ut->big_node_free);
        ut->node_free = ut->big_node_free = NULL;
        ut->nnode_free = ut->nbig_node_free = 0;
        ucp_worker_destroy(ut->worker);
    }
    if (ut->ctx)
        ucp_cleanup(ut->ctx);
    for (int r = 0; ut->addrs && r < ut->size; r++)
        free(ut->addrs[r]);
    free(ut->addrs);
    free(ut->addr_lens);
    free(ut->eps);
    free(ut->dead);
    free(ut->heard);
    free(ut->eager_max);
    free(ut->tx_pool);
    free(ut->big_pool);
    free(ut);
}

static const tlm_transport_ops_t ucx_ops = {
    .connect = ucx_connect,
    .send = ucx_send,
    .send_fill = ucx_send_fill,
    .send_zc = ucx_send_zc,
    .progress = ucx_progress,
    .peer_alive = ucx_peer_alive,
    .wait_arm = ucx_wait_arm,
    .wait_disarm = tlm_backend_stub_wait_disarm, /* the next arm clears */
    .close = ucx_close,
};

static int ucx_check(const tlm_transport_params_t *p)
{
    if (p->net_max_peers < 0) {
        tlm_error("TELEMEM_NET_MAX_PEERS=%ld must be 0 (no limit) or a "
                  "number of peers", p->net_max_peers);
        return TELEMEM_ERR_CONFIG;
    }
    return TELEMEM_OK;
}

static int ucx_query(const tlm_transport_params_t *p, bool *reach)
{
    for (int r = 0; r < p->size; r++)
        reach[r] = r != p->rank;
    return TELEMEM_OK;
}

static int ucx_available(const tlm_transport_params_t *p)
{
    ucp_config_t *cfg;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
        return 0;
    ucp_config_release(cfg);
    return TLM_BACKEND_PREF_GENERIC;
}

/* Waits sleep on the worker's event fd (docs/wait.md); without it they
 * sleep for short times. */
static void get_efd(ucx_transport_t *ut)
{
    if (ucp_worker_get_efd(ut->worker, &ut->efd) != UCS_OK) {
        tlm_info("ucp_worker_get_efd failed: waits poll UCX every 1 ms");
        ut->efd = -1;
    }
}

/* The UCX context.  Beside shm, UCX reaches other nodes only: its
 * shared-memory wires are left out unless UCX_TLS chooses the wires. */
static ucs_status_t init_context(ucx_transport_t *ut,
                                 const tlm_transport_params_t *p)
{
    ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP |
                                   (p->direct ? UCP_FEATURE_RMA : 0)};
    ucp_config_t *ucfg = NULL;
    if (p->net_only && !p->config->UCX_TLS &&
        ucp_config_read(NULL, NULL, &ucfg) == UCS_OK &&
        ucp_config_modify(ucfg, "TLS", "^sm") != UCS_OK) {
        ucp_config_release(ucfg);
        ucfg = NULL;
    }
    ucs_status_t st = ucp_init(&up, ucfg, &ut->ctx);
    if (ucfg)
        ucp_config_release(ucfg);
    return st;
}

/* The per-rank tables, the send pool and the free lists of a new
 * transport. */
static int alloc_tables(ucx_transport_t *ut, int size)
{
    /* an array of ucp_ep_h handles: sizeof(*ut->eps) is meant
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    ut->eps = calloc((size_t)size, sizeof(*ut->eps));
    ut->addrs = calloc((size_t)size, sizeof(*ut->addrs));
    ut->addr_lens = calloc((size_t)size, sizeof(size_t));
    ut->dead = calloc((size_t)size, sizeof(bool));
    ut->heard = calloc((size_t)size, sizeof(bool));
    ut->eager_max = calloc((size_t)size, sizeof(size_t));
    ut->tx_pool = malloc((size_t)UCX_TX_COUNT * UCX_MSG);
    if (!ut->eps || !ut->addrs || !ut->addr_lens || !ut->dead ||
        !ut->heard || !ut->eager_max || !ut->tx_pool)
        return TELEMEM_ERR_NO_MEMORY;
    for (int i = 0; i < UCX_TX_COUNT; i++)
        ut->tx_free[i] = UCX_TX_COUNT - 1 - i;
    ut->ntx_free = UCX_TX_COUNT;
    for (int i = 0; i < UCX_ZC_COUNT; i++) {
        ut->zc[i].ut = ut;
        ut->zc_free[i] = &ut->zc[UCX_ZC_COUNT - 1 - i];
    }
    ut->nzc_free = UCX_ZC_COUNT;
    return TELEMEM_OK;
}

/* Publish this rank's worker address (alen bytes of addr, released here;
 * none when rc says the set-up failed) and fetch every rank's into
 * ut->addrs.  Collective: every rank takes part even after a local
 * failure.  Returns rc, or the exchange's own error. */
static int exchange(ucx_transport_t *ut, const tlm_transport_params_t *p,
                    ucp_address_t *addr, size_t alen, int rc)
{
    char key[64];
    snprintf(key, sizeof(key), "ucx.%d", p->rank);
    int brc = tlm_boot_put(p->boot, key, addr,
                                rc == TELEMEM_OK ? alen : 0);
    if (addr)
        ucp_worker_release_address(ut->worker, addr);
    int frc = tlm_boot_fence(p->boot);
    if (rc == TELEMEM_OK)
        rc = brc != TELEMEM_OK ? brc : frc;
    /* Each address at its own length (a few hundred bytes per rank with
     * tcp); endpoints are made from them at first contact. */
    uint8_t *tmp = rc == TELEMEM_OK ? malloc(UCX_ADDR_MAX) : NULL;
    if (rc == TELEMEM_OK && !tmp)
        rc = TELEMEM_ERR_NO_MEMORY;
    for (int r = 0; rc == TELEMEM_OK && r < p->size; r++) {
        size_t len = 0;
        snprintf(key, sizeof(key), "ucx.%d", r);
        rc = tlm_boot_get(p->boot, key, tmp, UCX_ADDR_MAX, &len);
        if (rc == TELEMEM_OK && len == 0) {
            tlm_error("rank %d could not open its UCX worker", r);
            rc = TELEMEM_ERR_TRANSPORT;
        }
        if (rc == TELEMEM_OK && !(ut->addrs[r] = malloc(len)))
            rc = TELEMEM_ERR_NO_MEMORY;
        if (rc == TELEMEM_OK)
            memcpy(ut->addrs[r], tmp, len);
        ut->addr_lens[r] = len;
    }
    free(tmp);
    return rc;
}

static int ucx_open(const tlm_transport_params_t *p, tlm_transport_t **tp_p)
{
    int rc = TELEMEM_OK;
    ucx_transport_t *ut = calloc(1, sizeof(*ut));
    if (!ut)
        return TELEMEM_ERR_NO_MEMORY;
    ut->super.ops = &ucx_ops;
    ut->super.name = "ucx";
    ut->super.max_msg = UCX_BIG_MSG;
    ut->super.zc_min = UCX_ZC_MIN;
    ut->super.zc_local_max = UCX_EAGER_MAX;
    ut->deliver = p->deliver;
    ut->deliver_arg = p->deliver_arg;
    ut->place = p->place && p->placed ? p->place : NULL;
    ut->placed = p->placed;
    ut->rank = p->rank;
    ut->size = p->size;
    ut->max_peers = p->net_max_peers > INT_MAX ? INT_MAX
                                                : (int)p->net_max_peers;
    ucp_address_t *addr = NULL;
    size_t alen = 0;
    if ((rc = alloc_tables(ut, p->size)) != TELEMEM_OK)
        goto out;
    ut->efd = -1;
    ucs_status_t st = init_context(ut, p);
    if (st != UCS_OK) {
        tlm_error("ucp_init: %s", ucs_status_string(st));
        ut->ctx = NULL;
        rc = TELEMEM_ERR_TRANSPORT;
        goto out;
    }
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    st = ucp_worker_create(ut->ctx, &wp, &ut->worker);
    if (st != UCS_OK) {
        tlm_error("ucp_worker_create: %s", ucs_status_string(st));
        ut->worker = NULL;
        rc = TELEMEM_ERR_TRANSPORT;
        goto out;
    }
    ucp_am_handler_param_t hp = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                      UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG,
        .id = UCX_AM_ID,
        .cb = on_am,
        .arg = ut,
    };
    st = ucp_worker_set_am_recv_handler(ut->worker, &hp);
    if (st == UCS_OK)
        get_efd(ut);
    ucp_worker_attr_t wa = {.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER};
    if (st == UCS_OK)
        st = ucp_worker_query(ut->worker, &wa);
    if (st == UCS_OK)
        ut->max_am_header = wa.max_am_header;
    /* send_zc and placement need room for any header in UCX's header */
    if (ut->max_am_header < UCX_PREFIX + UCX_HDR_ROOM)
        ut->super.zc_min = 0;
    if (st == UCS_OK)
        st = ucp_worker_get_address(ut->worker, &addr, &alen);
    if (st != UCS_OK || alen > UCX_ADDR_MAX) {
        tlm_error("UCX worker set-up: %s", st != UCS_OK
                  ? ucs_status_string(st) : "address too long");
        rc = TELEMEM_ERR_TRANSPORT;
    }
out:
    rc = exchange(ut, p, addr, alen, rc);
    if (rc != TELEMEM_OK) {
        ucx_close(&ut->super);
        return rc;
    }
    tlm_debug("ucx open");
    /* The direct path (ucx-rma) rides on this worker. */
    tlm_ucx_direct_env_t denv = {
        .ctx = ut->ctx, .worker = ut->worker, .eps = ut->eps,
        .tp = &ut->super, .rank = p->rank, .size = p->size,
        .reg_cache_max = p->reg_cache_max,
    };
    if (!p->direct || /* TELEMEM_DIRECT=never */
        tlm_ucx_direct_open(&denv, &ut->super.direct) != TELEMEM_OK)
        ut->super.direct = NULL;
    /* Its RMA puts land without a message: telemem_wait_poll sleeps are
     * kept short (transport.h). */
    ut->super.silent_writes = ut->super.direct != NULL;
    *tp_p = &ut->super;
    return TELEMEM_OK;
}

const tlm_backend_t tlm_ucx_backend = {
    .name = "ucx",
    .abi = TLM_BACKEND_ABI,
    .check = ucx_check,
    .query = ucx_query,
    .open = ucx_open,
    .available = ucx_available,
    .network = true,
    .direct_name = "ucx-rma",
};

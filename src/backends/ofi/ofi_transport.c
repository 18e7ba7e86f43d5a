/* ofi_transport.c - the libfabric transport: one reliable-datagram
 * endpoint (FI_EP_RDM) per process with send-after-send ordering, a pool of
 * pre-posted receive buffers and a pool of send buffers (registered when
 * the provider wants local registration) shared by all peers, addresses
 * exchanged through the bootstrap store and inserted into the address
 * vector on first contact only.  Connections are the provider's business:
 * tcp;ofi_rxm, verbs;ofi_rxm open them on first send, so a rank that talks
 * to 8 of 10,000 peers holds 8; TELEMEM_NET_MAX_PEERS caps the peers this
 * process contacts first-come-first-served (libfabric offers no call that
 * closes an rxm connection, so there is no eviction).  Every message
 * carries a per-destination sequence number and the receiver restores the
 * order if the provider did not keep it (libfabric's shm provider was seen
 * to reorder under load despite FI_ORDER_SAS). */
#define TLM_LOG_SUBSYS "ofi"
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "telemem.h"
#include "backends/ofi/ofi_direct.h"
#include "backends/transport.h"
#include "util/log.h"
#include "util/util.h"

/* Whole message as the provider sees it.  It stays within the eager size
 * of ofi_rxm (FI_OFI_RXM_BUFFER_SIZE, 16 KiB by default): larger messages
 * go by rxm's segmentation or rendezvous protocols, which a later small
 * message can overtake (measured: tests/conformance/conf_order fails). */
#define OFI_MSG ((size_t)16 * 1024)
#define OFI_PREFIX 8u             /* source rank + sequence, before each msg */
#define OFI_RX_COUNT 64
#define OFI_TX_COUNT 256
#define OFI_CQ_BATCH 16

/* Context of one posted operation; fi_context first (FI_CONTEXT mode). */
typedef struct ofi_ctx {
    struct fi_context fctx;
    int rx;       /* 1: a receive buffer, 0: a send buffer */
    int index;
    int peer;     /* send: destination */
} ofi_ctx_t;

/* A message that arrived ahead of its turn. */
typedef struct ofi_early {
    struct ofi_early *next;
    uint32_t seq;
    size_t len;
    uint64_t data[]; /* the message without the prefix, 8-byte aligned */
} ofi_early_t;

typedef struct ofi_transport {
    tlm_transport_t super;
    tlm_deliver_fn_t deliver;
    void *deliver_arg;
    int rank, size;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    int wait_fd;           /* the cq's FI_WAIT_FD object, or -1 */
    struct fid_av *av;
    struct fid_ep *ep;
    bool ep_enabled; /* fi_enable succeeded */
    struct fid_mr *mr;
    void *mr_desc;
    fi_addr_t *addrs;      /* by rank: FI_ADDR_NOTAVAIL until contact */
    uint8_t *book;         /* by rank: raw addresses, addrlen bytes each */
    size_t addrlen;
    int npeers;            /* ranks in the address vector (contacted) */
    int max_peers;         /* TELEMEM_NET_MAX_PEERS, 0 = no limit */
    uint8_t *pool;         /* rx buffers, then tx buffers */
    ofi_ctx_t rx_ctx[OFI_RX_COUNT];
    ofi_ctx_t tx_ctx[OFI_TX_COUNT];
    int tx_free[OFI_TX_COUNT];
    int ntx_free;
    bool *dead;            /* by rank: a send to it failed */
    uint32_t *tx_seq;      /* by rank: next sequence number to send */
    uint32_t *rx_seq;      /* by rank: next sequence number to deliver */
    ofi_early_t **early;   /* by rank: early messages, by sequence */
    char prov[64];
} ofi_transport_t;

static uint8_t *rx_buf(ofi_transport_t *ot, int i)
{
    return ot->pool + (size_t)i * OFI_MSG;
}

static uint8_t *tx_buf(ofi_transport_t *ot, int i)
{
    return ot->pool + (size_t)(OFI_RX_COUNT + i) * OFI_MSG;
}

static int post_rx(ofi_transport_t *ot, int i)
{
    ssize_t r;
    do {
        r = fi_recv(ot->ep, rx_buf(ot, i), OFI_MSG, ot->mr_desc,
                    FI_ADDR_UNSPEC, &ot->rx_ctx[i].fctx);
        if (r == -FI_EAGAIN)
            fi_cq_read(ot->cq, NULL, 0); /* let the provider progress */
    } while (r == -FI_EAGAIN);
    if (r) {
        tlm_error("fi_recv: %s", fi_strerror((int)-r));
        return TELEMEM_ERR_TRANSPORT;
    }
    return TELEMEM_OK;
}

/* Handle one completion; returns 1 if a message was delivered. */
static int complete(ofi_transport_t *ot, ofi_ctx_t *c, size_t len)
{
    if (!c->rx) {
        ot->tx_free[ot->ntx_free++] = c->index;
        return 0;
    }
    uint8_t *b = rx_buf(ot, c->index);
    uint32_t pre[2];
    memcpy(pre, b, sizeof(pre));
    uint32_t src = pre[0], seq = pre[1];
    int n = 0;
    if (len < OFI_PREFIX || src >= (uint32_t)ot->size) {
        tlm_warn("dropped a malformed message (%zu bytes)", len);
    } else if (seq == ot->rx_seq[src]) {
        ot->deliver(ot->deliver_arg, (int)src, b + OFI_PREFIX,
                    len - OFI_PREFIX);
        ot->rx_seq[src]++;
        n++;
        /* Messages that were waiting for this one. */
        ofi_early_t *e;
        while ((e = ot->early[src]) && e->seq == ot->rx_seq[src]) {
            ot->early[src] = e->next;
            ot->deliver(ot->deliver_arg, (int)src, e->data, e->len);
            ot->rx_seq[src]++;
            n++;
            free(e);
        }
    } else if ((int32_t)(seq - ot->rx_seq[src]) > 0) {
        size_t ml = len - OFI_PREFIX;
        ofi_early_t *e = malloc(sizeof(*e) + TLM_ALIGN_UP(ml, 8u));
        if (!e) {
            tlm_error("no memory to hold an early message from rank %u", src);
        } else {
            e->seq = seq;
            e->len = ml;
            memcpy(e->data, b + OFI_PREFIX, ml);
            ofi_early_t **pp = &ot->early[src];
            while (*pp && (int32_t)((*pp)->seq - seq) < 0)
                pp = &(*pp)->next;
            e->next = *pp;
            *pp = e;
        }
    } else {
        tlm_warn("dropped a duplicate message from rank %u", src);
    }
    post_rx(ot, c->index);
    return n;
}

static int ofi_progress(tlm_transport_t *tp, int max)
{
    ofi_transport_t *ot = tlm_container_of(tp, ofi_transport_t, super);
    struct fi_cq_msg_entry e[OFI_CQ_BATCH];
    int n = 0;
    while (n < max) {
        ssize_t k = fi_cq_read(ot->cq, e, OFI_CQ_BATCH);
        if (k == -FI_EAGAIN)
            break;
        if (k == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(ot->cq, &err, 0) != 1)
                break;
            ofi_ctx_t *c = err.op_context;
            if (tlm_ofi_direct_event(tp->direct, c, err.err))
                continue;
            if (c && !c->rx) {
                if (!ot->dead[c->peer])
                    tlm_error("send to rank %d failed (%s): the rank is "
                              "treated as dead from now on", c->peer,
                              fi_strerror(err.err));
                ot->dead[c->peer] = true;
                ot->tx_free[ot->ntx_free++] = c->index;
            } else if (c) {
                if (err.err != FI_ECANCELED)
                    tlm_error("receive failed: %s", fi_strerror(err.err));
                if (err.err != FI_ECANCELED)
                    post_rx(ot, c->index);
            }
            continue;
        }
        if (k < 0) {
            tlm_error("fi_cq_read: %s", fi_strerror((int)-k));
            return TELEMEM_ERR_TRANSPORT;
        }
        for (ssize_t i = 0; i < k; i++)
            if (!tlm_ofi_direct_event(tp->direct, e[i].op_context, 0))
                n += complete(ot, e[i].op_context, e[i].len);
        /* Return once something was delivered: another fi_cq_read would
         * first make the provider poll its sockets again, a system call
         * between the message and the caller who waits for it. */
        if (n > 0)
            break;
    }
    return n;
}

/* A free send buffer, or -1 (the caller reports back-pressure; progress
 * is never called from here, since a send may come from a handler that
 * runs inside progress). */
static int take_tx(ofi_transport_t *ot)
{
    return ot->ntx_free ? ot->tx_free[--ot->ntx_free] : -1;
}

/* First contact with peer: put its address into the address vector (the
 * provider connects on the first send).  The cap counts these entries,
 * first come first served; a peer that has already sent to us is always
 * answered (the provider holds its connection anyway).  Slow path. */
static int contact(ofi_transport_t *ot, int peer)
{
    if (ot->max_peers && ot->npeers >= ot->max_peers &&
        ot->rx_seq[peer] == 0 && !ot->early[peer]) {
        tlm_error("rank %d would be peer %d of this process over ofi: over "
                  "TELEMEM_NET_MAX_PEERS=%d (first come, first served)",
                  peer, ot->npeers + 1, ot->max_peers);
        return TELEMEM_ERR_UNREACHABLE;
    }
    if (fi_av_insert(ot->av, ot->book + (size_t)peer * ot->addrlen, 1,
                     &ot->addrs[peer], 0, NULL) != 1) {
        tlm_error("fi_av_insert of rank %d's address failed", peer);
        ot->addrs[peer] = FI_ADDR_NOTAVAIL;
        return TELEMEM_ERR_TRANSPORT;
    }
    ot->npeers++;
    tlm_debug("first contact with rank %d (%d peers)", peer, ot->npeers);
    return TELEMEM_OK;
}

static int post_send(ofi_transport_t *ot, int peer, int i, size_t len)
{
    ofi_ctx_t *c = &ot->tx_ctx[i];
    c->peer = peer;
    ssize_t r = fi_send(ot->ep, tx_buf(ot, i), len, ot->mr_desc,
                        ot->addrs[peer], &c->fctx);
    if (r == 0) {
        ot->tx_seq[peer]++;
        return TELEMEM_OK;
    }
    ot->tx_free[ot->ntx_free++] = i;
    if (r == -FI_EAGAIN) {
        fi_cq_read(ot->cq, NULL, 0);
        return TELEMEM_ERR_AGAIN;
    }
    tlm_error("fi_send to rank %d: %s", peer, fi_strerror((int)-r));
    return TELEMEM_ERR_TRANSPORT;
}

static int ofi_send(tlm_transport_t *tp, int peer, const void *hdr,
                    size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    ofi_transport_t *ot = tlm_container_of(tp, ofi_transport_t, super);
    size_t len = hdr_len;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > OFI_MSG - OFI_PREFIX)
        return TELEMEM_ERR_INVALID_ARG;
    if (ot->dead[peer])
        return TELEMEM_ERR_PEER_DEAD;
    if (TLM_UNLIKELY(ot->addrs[peer] == FI_ADDR_NOTAVAIL)) {
        int rc = contact(ot, peer);
        if (rc != TELEMEM_OK)
            return rc;
    }
    int i = take_tx(ot);
    if (i < 0)
        return TELEMEM_ERR_AGAIN;
    uint8_t *b = tx_buf(ot, i);
    uint32_t src[2] = {(uint32_t)ot->rank, ot->tx_seq[peer]};
    memcpy(b, src, OFI_PREFIX);
    uint8_t *d = b + OFI_PREFIX;
    memcpy(d, hdr, hdr_len);
    d += hdr_len;
    for (int k = 0; k < iovcnt; k++) {
        memcpy(d, iov[k].iov_base, iov[k].iov_len);
        d += iov[k].iov_len;
    }
    return post_send(ot, peer, i, OFI_PREFIX + len);
}

static int ofi_send_fill(tlm_transport_t *tp, int peer, const void *hdr,
                         size_t hdr_len, size_t len, tlm_fill_fn_t fill,
                         void *arg)
{
    ofi_transport_t *ot = tlm_container_of(tp, ofi_transport_t, super);
    if (hdr_len + len > OFI_MSG - OFI_PREFIX)
        return TELEMEM_ERR_INVALID_ARG;
    if (ot->dead[peer])
        return TELEMEM_ERR_PEER_DEAD;
    if (TLM_UNLIKELY(ot->addrs[peer] == FI_ADDR_NOTAVAIL)) {
        int rc = contact(ot, peer);
        if (rc != TELEMEM_OK)
            return rc;
    }
    int i = take_tx(ot);
    if (i < 0)
        return TELEMEM_ERR_AGAIN;
    uint8_t *b = tx_buf(ot, i);
    uint32_t src[2] = {(uint32_t)ot->rank, ot->tx_seq[peer]};
    memcpy(b, src, OFI_PREFIX);
    memcpy(b + OFI_PREFIX, hdr, hdr_len);
    if (len)
        fill(b + OFI_PREFIX + hdr_len, len, arg);
    return post_send(ot, peer, i, OFI_PREFIX + hdr_len + len);
}

static int ofi_peer_alive(tlm_transport_t *tp, int peer)
{
    ofi_transport_t *ot = tlm_container_of(tp, ofi_transport_t, super);
    return ot->dead[peer] ? TELEMEM_ERR_PEER_DEAD : TELEMEM_OK;
}

static void ofi_close(tlm_transport_t *tp)
{
    ofi_transport_t *ot = tlm_container_of(tp, ofi_transport_t, super);
    /* Let sends still in flight finish (peers are past the final barrier,
     * so they only need their last acknowledgements). */
    if (ot->cq && ot->ntx_free < OFI_TX_COUNT) {
        double end = tlm_util_now() + 2.0;
        while (ot->ntx_free < OFI_TX_COUNT && tlm_util_now() < end)
            ofi_progress(tp, 64);
    }
    /* libfabric 1.17's shm provider crashes closing an endpoint whose
     * fi_enable failed (its region was never mapped; seen with a stale
     * /dev/shm/<pid>:0:0 of a killed process: EBUSY).  The process is
     * failing anyway: leave it open. */
    if (ot->ep && ot->ep_enabled)
        fi_close(&ot->ep->fid);
    else if (ot->ep)
        tlm_debug("endpoint left open: fi_enable failed");
    if (tp->direct) /* after the endpoint, before the domain */
        tp->direct->ops->close(tp->direct);
    tp->direct = NULL;
    if (ot->mr)
        fi_close(&ot->mr->fid);
    if (ot->av)
        fi_close(&ot->av->fid);
    if (ot->cq)
        fi_close(&ot->cq->fid);
    if (ot->domain)
        fi_close(&ot->domain->fid);
    if (ot->fabric)
        fi_close(&ot->fabric->fid);
    if (ot->info)
        fi_freeinfo(ot->info);
    for (int r = 0; ot->early && r < ot->size; r++) {
        while (ot->early[r]) {
            ofi_early_t *e = ot->early[r];
            ot->early[r] = e->next;
            free(e);
        }
    }
    free(ot->early);
    free(ot->tx_seq);
    free(ot->rx_seq);
    free(ot->pool);
    free(ot->addrs);
    free(ot->book);
    free(ot->dead);
    free(ot);
}

static int ofi_connect(tlm_transport_t *tp, int peer)
{
    ofi_transport_t *ot = tlm_container_of(tp, ofi_transport_t, super);
    if (peer < 0 || peer >= ot->size)
        return TELEMEM_ERR_INVALID_ARG;
    return ot->addrs[peer] == FI_ADDR_NOTAVAIL ? contact(ot, peer)
                                               : TELEMEM_OK;
}

/* A wait is about to sleep: fi_trywait resets the cq's wait object and
 * says whether completions (or provider events) are pending. */
static int ofi_wait_arm(tlm_transport_t *tp, int *fd_p)
{
    ofi_transport_t *ot = tlm_container_of(tp, ofi_transport_t, super);
    *fd_p = -1;
    if (ot->wait_fd < 0)
        return TELEMEM_ERR_UNSUPPORTED;
    struct fid *f = &ot->cq->fid;
    int r = fi_trywait(ot->fabric, &f, 1);
    if (r == -FI_EAGAIN)
        return TELEMEM_ERR_AGAIN;
    if (r != FI_SUCCESS)
        return TELEMEM_ERR_UNSUPPORTED;
    *fd_p = ot->wait_fd;
    return TELEMEM_OK;
}

static const tlm_transport_ops_t ofi_ops = {
    .connect = ofi_connect,
    .send = ofi_send,
    .send_fill = ofi_send_fill,
    .progress = ofi_progress,
    .peer_alive = ofi_peer_alive,
    .wait_arm = ofi_wait_arm,
    .wait_disarm = tlm_backend_stub_wait_disarm, /* fi_trywait resets */
    .close = ofi_close,
};

/* ofi_rxm (tcp, verbs) pre-posts a shared receive pool of
 * FI_OFI_RXM_MSG_RX_SIZE bounce buffers of 16 KiB at endpoint open, 4096
 * by default: 70 MiB per process whatever the number of peers.  1024
 * buffers (TELEMEM_OFI_RXM_RX_SIZE's default, 16 MiB) keep a process that
 * talks to 8 of 1,024 peers at 44 MiB instead of 95 (docs/transports.md).
 * Core decides (the user's FI_ settings win); it must be set before
 * libfabric's first fi_getinfo in the process (rxm reads it once), which
 * is ours unless MPI started libfabric first. */
/* rxm's shared receive pool (TELEMEM_OFI_RXM_RX_SIZE): its depth goes to
 * libfabric as FI_OFI_RXM_MSG_RX_SIZE, unless the setting is 0, the user
 * set that variable, or rxm's shared receive pool is off
 * (FI_OFI_RXM_USE_SRX).  The config machinery read both variables
 * (ofi_config.h). */
static void rxm_defaults(const tlm_config_t *c)
{
    const char *srx = c->FI_OFI_RXM_USE_SRX;
    bool srx_off = srx && (!strcmp(srx, "0") || !strcasecmp(srx, "off") ||
                           !strcasecmp(srx, "false") ||
                           !strcasecmp(srx, "no"));
    char buf[24];
    if (c->OFI_RXM_RX_SIZE <= 0 || srx_off || c->FI_OFI_RXM_MSG_RX_SIZE)
        return;
    int k = snprintf(buf, sizeof(buf), "%ld", (long)c->OFI_RXM_RX_SIZE);
    if (k > 0 && (size_t)k < sizeof(buf))
        setenv("FI_OFI_RXM_MSG_RX_SIZE", buf, 0);
}

/* Ask libfabric for an RDM endpoint with ordered sends (and RMA for the
 * ofi-rma direct path when rma and the provider offers it). */
static struct fi_info *get_info_caps(const char *prov, bool rma)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    if (!hints)
        return NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | (rma ? FI_RMA : 0);
    hints->mode = FI_CONTEXT;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED |
                                  FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    if (prov && prov[0])
        hints->fabric_attr->prov_name = strdup(prov);
    int r = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info);
    fi_freeinfo(hints);
    if (r) {
        tlm_debug("fi_getinfo(%s%s): %s", prov && prov[0] ? prov : "any",
                  rma ? ", with RMA" : "", fi_strerror(-r));
        return NULL;
    }
    return info;
}

static struct fi_info *get_info(const tlm_transport_params_t *p)
{
    const char *prov = p->config->OFI_PROVIDER;
    bool rma = p->direct;
    rxm_defaults(p->config);
    struct fi_info *info = rma ? get_info_caps(prov, true) : NULL;
    return info ? info : get_info_caps(prov, false);
}

static int ofi_check(const tlm_transport_params_t *p)
{
    if (p->net_max_peers < 0) {
        tlm_error("TELEMEM_NET_MAX_PEERS=%ld must be 0 (no limit) or a "
                  "number of peers", p->net_max_peers);
        return TELEMEM_ERR_CONFIG;
    }
    return TELEMEM_OK;
}

static int ofi_query(const tlm_transport_params_t *p, bool *reach)
{
    for (int r = 0; r < p->size; r++)
        reach[r] = r != p->rank;
    return TELEMEM_OK;
}

/* Usable, and how much auto prefers it: a provider the user named, or a
 * fabric's (verbs, efa, cxi, psm3, ...), before UCX; libfabric's own
 * socket providers after it (the core provider before ";ofi_rxm").  Over
 * tcp;ofi_rxm, libfabric 1.17 signals its completion queue with a write
 * and a read of one byte per received message (docs/transports.md). */
static int ofi_available(const tlm_transport_params_t *p)
{
    static const char *const sockets[] = {"tcp", "sockets", "udp", "net"};
    struct fi_info *info = get_info(p);
    if (!info)
        return 0;
    const char *prov = info->fabric_attr && info->fabric_attr->prov_name
                           ? info->fabric_attr->prov_name : "";
    size_t core = strcspn(prov, ";");
    int pref = TLM_BACKEND_PREF_FABRIC;
    const char *named = p->config->OFI_PROVIDER;
    if (!(named && named[0]))
        for (size_t i = 0; i < TLM_ARRAY_SIZE(sockets); i++)
            if (strlen(sockets[i]) == core &&
                strncmp(prov, sockets[i], core) == 0)
                pref = TLM_BACKEND_PREF_SOCKETS;
    tlm_debug("libfabric's provider: %s", prov);
    fi_freeinfo(info);
    return pref;
}

/* The completion queue, with a file descriptor for waits that sleep
 * (docs/wait.md) when the provider has one (else waits sleep for short
 * times).  0 or a negative libfabric error. */
static int open_cq(ofi_transport_t *ot)
{
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_MSG,
                             .size = (size_t)2 * (OFI_RX_COUNT + OFI_TX_COUNT),
                             .wait_obj = FI_WAIT_FD};
    if (fi_cq_open(ot->domain, &cqa, &ot->cq, NULL) == 0 &&
        fi_control(&ot->cq->fid, FI_GETWAIT, &ot->wait_fd) == 0)
        return 0;
    if (ot->cq)
        fi_close(&ot->cq->fid);
    ot->cq = NULL;
    ot->wait_fd = -1;
    tlm_info("provider %s has no FI_WAIT_FD completion queue: waits poll "
             "it every 1 ms", ot->prov);
    cqa.wait_obj = FI_WAIT_NONE;
    return fi_cq_open(ot->domain, &cqa, &ot->cq, NULL);
}

#define OFI_TRY(call, what)                                                 \
    do {                                                                    \
        int r_ = (call);                                                    \
        if (r_) {                                                           \
            tlm_error("%s: %s", what, fi_strerror(-r_));                    \
            rc = TELEMEM_ERR_TRANSPORT;                                     \
            goto out;                                                       \
        }                                                                   \
    } while (0)

/* The per-rank tables and the message pool of a new transport. */
static int alloc_tables(ofi_transport_t *ot, int size)
{
    ot->addrs = malloc((size_t)size * sizeof(fi_addr_t));
    ot->dead = calloc((size_t)size, sizeof(bool));
    ot->tx_seq = calloc((size_t)size, sizeof(uint32_t));
    ot->rx_seq = calloc((size_t)size, sizeof(uint32_t));
    ot->early = calloc((size_t)size, sizeof(ofi_early_t *));
    ot->pool = aligned_alloc(4096, (size_t)(OFI_RX_COUNT + OFI_TX_COUNT) *
                                       OFI_MSG);
    if (!ot->addrs || !ot->dead || !ot->pool || !ot->tx_seq || !ot->rx_seq ||
        !ot->early)
        return TELEMEM_ERR_NO_MEMORY;
    for (int r = 0; r < size; r++)
        ot->addrs[r] = FI_ADDR_NOTAVAIL;
    return TELEMEM_OK;
}

/* Publish this rank's address (alen bytes of addr; none when rc says the
 * endpoint failed) and fetch every rank's into ot->book.  Collective:
 * every rank takes part even after a local failure (an empty address
 * tells the others).  Returns rc, or the exchange's own error. */
static int exchange(ofi_transport_t *ot, const tlm_transport_params_t *p,
                    const char *addr, size_t alen, int rc)
{
    char key[64];
    snprintf(key, sizeof(key), "ofi.%d", p->rank);
    int brc = tlm_boot_put(p->boot, key, addr, rc == TELEMEM_OK ? alen
                                                                : 0);
    int frc = tlm_boot_fence(p->boot);
    if (rc == TELEMEM_OK)
        rc = brc != TELEMEM_OK ? brc : frc;
    /* Every address is kept, raw (a few bytes per rank); the address
     * vector gets an entry only at first contact (see contact()). */
    ot->addrlen = alen;
    if (rc == TELEMEM_OK &&
        !(ot->book = malloc((size_t)p->size * alen)))
        rc = TELEMEM_ERR_NO_MEMORY;
    for (int r = 0; rc == TELEMEM_OK && r < p->size; r++) {
        size_t olen = 0;
        snprintf(key, sizeof(key), "ofi.%d", r);
        rc = tlm_boot_get(p->boot, key, ot->book + (size_t)r * alen,
                          alen, &olen);
        if (rc == TELEMEM_ERR_INVALID_ARG || (rc == TELEMEM_OK &&
                                              olen != alen)) {
            tlm_error("rank %d %s", r, olen == 0
                      ? "could not open its libfabric endpoint"
                      : "published an address of another size (another "
                        "provider?)");
            rc = TELEMEM_ERR_TRANSPORT;
        }
    }
    return rc;
}

static int ofi_open(const tlm_transport_params_t *p, tlm_transport_t **tp_p)
{
    int rc = TELEMEM_OK;
    ofi_transport_t *ot = calloc(1, sizeof(*ot));
    if (!ot)
        return TELEMEM_ERR_NO_MEMORY;
    ot->super.ops = &ofi_ops;
    ot->super.name = "ofi";
    ot->super.max_msg = OFI_MSG - OFI_PREFIX;
    ot->deliver = p->deliver;
    ot->deliver_arg = p->deliver_arg;
    ot->rank = p->rank;
    ot->size = p->size;
    ot->max_peers = p->net_max_peers > INT_MAX ? INT_MAX
                                                : (int)p->net_max_peers;
    char addr[256];
    size_t alen = sizeof(addr);
    if ((rc = alloc_tables(ot, p->size)) != TELEMEM_OK)
        goto out;
    ot->info = get_info(p);
    if (!ot->info) {
        tlm_error("libfabric has no reliable-datagram provider with ordered "
                  "sends%s%s (fi_info -t FI_EP_RDM lists them; "
                  "TELEMEM_OFI_PROVIDER picks one)",
                  p->config->OFI_PROVIDER[0] ? " named " : "",
                  p->config->OFI_PROVIDER);
        rc = TELEMEM_ERR_TRANSPORT;
        goto out;
    }
    snprintf(ot->prov, sizeof(ot->prov), "%s",
             ot->info->fabric_attr->prov_name);
    OFI_TRY(fi_fabric(ot->info->fabric_attr, &ot->fabric, NULL), "fi_fabric");
    OFI_TRY(fi_domain(ot->fabric, ot->info, &ot->domain, NULL), "fi_domain");
    OFI_TRY(open_cq(ot), "fi_cq_open");
    /* Entries are made at first contact: with a cap, that many. */
    struct fi_av_attr ava = {.type = FI_AV_TABLE,
                             .count = (size_t)(ot->max_peers &&
                                               ot->max_peers < p->size
                                                   ? ot->max_peers
                                                   : p->size)};
    int avr = fi_av_open(ot->domain, &ava, &ot->av, NULL);
    if (avr) {
        /* libfabric 1.17's shm provider takes at most 256 peers. */
        tlm_error("fi_av_open for %zu peers (provider %s): %s; a provider "
                  "may limit its peers: TELEMEM_NET_MAX_PEERS lowers the "
                  "count asked for", ava.count, ot->prov, fi_strerror(-avr));
        ot->av = NULL;
        rc = TELEMEM_ERR_TRANSPORT;
        goto out;
    }
    OFI_TRY(fi_endpoint(ot->domain, ot->info, &ot->ep, NULL), "fi_endpoint");
    OFI_TRY(fi_ep_bind(ot->ep, &ot->cq->fid, FI_TRANSMIT | FI_RECV),
            "fi_ep_bind(cq)");
    OFI_TRY(fi_ep_bind(ot->ep, &ot->av->fid, 0), "fi_ep_bind(av)");
    OFI_TRY(fi_enable(ot->ep), "fi_enable");
    ot->ep_enabled = true;
    if (ot->info->domain_attr->mr_mode & FI_MR_LOCAL) {
        OFI_TRY(fi_mr_reg(ot->domain, ot->pool,
                          (size_t)(OFI_RX_COUNT + OFI_TX_COUNT) * OFI_MSG,
                          FI_SEND | FI_RECV, 0, 0, 0, &ot->mr, NULL),
                "fi_mr_reg");
        ot->mr_desc = fi_mr_desc(ot->mr);
    }
    for (int i = 0; i < OFI_RX_COUNT; i++) {
        ot->rx_ctx[i] = (ofi_ctx_t){.rx = 1, .index = i};
        if ((rc = post_rx(ot, i)) != TELEMEM_OK)
            goto out;
    }
    for (int i = 0; i < OFI_TX_COUNT; i++) {
        ot->tx_ctx[i] = (ofi_ctx_t){.rx = 0, .index = i};
        ot->tx_free[i] = OFI_TX_COUNT - 1 - i;
    }
    ot->ntx_free = OFI_TX_COUNT;
    OFI_TRY(fi_getname(&ot->ep->fid, addr, &alen), "fi_getname");
out:
    rc = exchange(ot, p, addr, alen, rc);
    if (rc != TELEMEM_OK) {
        ofi_close(&ot->super);
        return rc;
    }
    tlm_debug("ofi open: provider %s, domain %s", ot->prov,
              ot->info->domain_attr->name);
    /* The direct path (ofi-rma) rides on this endpoint, if it can. */
    tlm_ofi_direct_env_t denv = {
        .info = ot->info, .domain = ot->domain, .ep = ot->ep, .cq = ot->cq,
        .addrs = ot->addrs, .rank = p->rank, .size = p->size,
        .reg_cache_max = p->reg_cache_max,
    };
    if (!p->direct || /* TELEMEM_DIRECT=never */
        tlm_ofi_direct_open(&denv, &ot->super.direct) != TELEMEM_OK)
        ot->super.direct = NULL;
    /* Its RMA puts land without a message: telemem_wait_poll sleeps are
     * kept short (transport.h). */
    ot->super.silent_writes = ot->super.direct != NULL;
    *tp_p = &ot->super;
    return TELEMEM_OK;
}

const tlm_backend_t tlm_ofi_backend = {
    .name = "ofi",
    .abi = TLM_BACKEND_ABI,
    .check = ofi_check,
    .query = ofi_query,
    .open = ofi_open,
    .available = ofi_available,
    .network = true,
    .direct_name = "ofi-rma",
};

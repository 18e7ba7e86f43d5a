/* am_engine.c - the active-message engine: transport per peer, ordered
 * per-peer send queues, fragmentation of streams into transport-sized
 * messages, and dispatch of received messages to the handler of their type. */
#define TLM_LOG_SUBSYS "am"
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "am/am.h"
#include "util/log.h"
#include "util/util.h"

tlm_am_t tlm_am;

int tlm_am_init(int rank, int nranks)
{
    memset(&tlm_am, 0, sizeof(tlm_am));
    tlm_am.peers = calloc((size_t)nranks, sizeof(tlm_am_peer_t));
    if (!tlm_am.peers)
        return TELEMEM_ERR_NO_MEMORY;
    tlm_am.rank = rank;
    tlm_am.nranks = nranks;
    for (int r = 0; r < nranks; r++)
        tlm_am.peers[r].rank = r;
    return TELEMEM_OK;
}

int tlm_am_add_transport(tlm_transport_t *tp, const bool *reach)
{
    int rc = tlm_backend_check(tp);
    if (rc != TELEMEM_OK)
        return rc;
    if (tlm_am.ntps == (int)TLM_ARRAY_SIZE(tlm_am.tps))
        return TELEMEM_ERR_TRANSPORT;
    tlm_am.tps[tlm_am.ntps++] = tp;
    tlm_am.silent_writes |= tp->silent_writes;
    for (int r = 0; r < tlm_am.nranks; r++) {
        if (reach[r] && !tlm_am.peers[r].tp) {
            tlm_am.peers[r].tp = tp;
            tlm_am.network |= !tp->same_node_only;
            tlm_am.peers[r].max_msg = tp->max_msg;
            tlm_am.peers[r].zc_min =
                tp->ops->send_zc && tp->zc_min ? tp->zc_min : SIZE_MAX;
            tlm_am.peers[r].zc_any_min = tlm_am.peers[r].zc_min;
            if (tp->ops->send_zc && tp->ops->zc_mapped && tp->zc_mapped_min)
                tlm_am.peers[r].zc_any_min =
                    TLM_MIN(tp->zc_mapped_min, tlm_am.peers[r].zc_min);
            tlm_am.peers[r].zc_local_max = tp->zc_local_max;
            tlm_am.peers[r].zc_max = tp->zc_max_msg;
        }
    }
    return TELEMEM_OK;
}

int tlm_am_check_reach(void)
{
    for (int r = 0; r < tlm_am.nranks; r++) {
        if (!tlm_am.peers[r].tp) {
            tlm_error("no transport reaches rank %d (ranks on other hosts "
                      "need a network transport)", r);
            return TELEMEM_ERR_UNREACHABLE;
        }
    }
    return TELEMEM_OK;
}

static void finish(tlm_am_peer_t *p, tlm_am_sendop_t *op, int status)
{
    if (op->live) {
        tlm_am.peers[op->peer].live--;
        op->live = false;
    }
    op->sent = true;
    if (op->status == TELEMEM_OK)
        op->status = status;
    if (op->done)
        op->done(op, op->status);
}

void tlm_am_fini(void)
{
    /* Ops still queued get an error so their owners can free them. */
    for (int r = 0; tlm_am.peers && r < tlm_am.nranks; r++) {
        tlm_am_peer_t *p = &tlm_am.peers[r];
        while (p->qhead) {
            tlm_am_sendop_t *op = p->qhead;
            p->qhead = op->next;
            if (op->zc_out) { /* closing the transport ends its sends */
                op->status = TELEMEM_ERR_NOT_INITIALIZED;
                op->posted = true;
            } else {
                finish(p, op, TELEMEM_ERR_NOT_INITIALIZED);
            }
        }
    }
    for (int i = tlm_am.ntps - 1; i >= 0; i--)
        tlm_transport_close(tlm_am.tps[i]);
    free(tlm_am.peers);
    memset(&tlm_am, 0, sizeof(tlm_am));
}

void tlm_am_set_handler(int type, tlm_am_dispatch_fn_t fn)
{
    tlm_am.handlers[type] = fn;
}

void tlm_am_set_placer(int type, tlm_am_place_fn_t place,
                       tlm_am_placed_fn_t placed)
{
    tlm_am.placers[type] = place;
    tlm_am.placed[type] = placed;
}

void *tlm_am_place(void *arg, int src, const void *hdr, size_t hdr_len,
                   size_t plen)
{
    const tlm_am_hdr_t *h = hdr;
    if (hdr_len < sizeof(*h) || h->type == 0 || h->type >= TLM_AM_NTYPES ||
        !tlm_am.placers[h->type] || src < 0 || src >= tlm_am.nranks)
        return NULL; /* delivered whole; tlm_am_deliver judges it */
    void *dst = tlm_am.placers[h->type](src, hdr, hdr_len, plen);
    if (dst)
        tlm_am.placing++;
    return dst;
}

void tlm_am_placed(void *arg, int src, const void *hdr, size_t hdr_len,
                   size_t plen, int status)
{
    const tlm_am_hdr_t *h = hdr;
    tlm_am.placing--;
    tlm_am.placed[h->type](src, hdr, hdr_len, plen, status);
}

int tlm_am_deliver(void *arg, int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *h = msg;
    if (TLM_UNLIKELY(len < sizeof(*h) || h->type == 0 ||
                     h->type >= TLM_AM_NTYPES || !tlm_am.handlers[h->type] ||
                     src < 0 || src >= tlm_am.nranks)) {
        tlm_am.protocol_errors++;
        tlm_warn("dropped a malformed message from rank %d (%zu bytes, type "
                 "%u)", src, len, len ? ((const uint8_t *)msg)[0] : 0u);
        return TELEMEM_OK;
    }
    tlm_am.handlers[h->type](src, msg, len);
    return TELEMEM_OK;
}

void tlm_am_sendop_init(tlm_am_sendop_t *op, const void *hdr, size_t hdr_len,
                        bool frag, const void *data, size_t total)
{
    op->next = NULL;
    memcpy(op->hdr, hdr, hdr_len);
    op->hdr_len = (uint32_t)hdr_len;
    op->frag = frag;
    op->sent = false;
    op->zc = false;
    op->posted = false;
    op->zc_out = 0;
    op->live = false;
    op->status = TELEMEM_OK;
    op->data = data;
    op->data_off = 0;
    op->pack = NULL;
    op->pack_arg = NULL;
    op->live_lo = 0;
    op->live_len = 0;
    op->align = 1;
    op->total = total;
    op->cursor = 0;
    op->owned = NULL;
    op->done = NULL;
    op->done_arg = NULL;
}

typedef struct fill_ctx {
    tlm_am_pack_fn_t pack;
    void *arg;
    size_t off;
} fill_ctx_t;

static void fill_trampoline(void *dst, size_t len, void *arg)
{
    fill_ctx_t *f = arg;
    f->pack(f->arg, dst, f->off, len);
}

int tlm_am_try_send_pack(int peer, const void *hdr, size_t hdr_len,
                         size_t len, tlm_am_pack_fn_t pack, void *arg)
{
    tlm_am_peer_t *p = &tlm_am.peers[peer];
    if (p->qhead != NULL)
        return TELEMEM_ERR_AGAIN;
    fill_ctx_t f = {pack, arg, 0};
    return tlm_transport_send_fill(p->tp, peer, hdr, hdr_len, len,
                                   fill_trampoline, &f);
}

/* A zero-copy fragment of op is no longer read by the transport. */
static void zc_done(void *arg, int status)
{
    tlm_am_sendop_t *op = arg;
    if (status != TELEMEM_OK && op->status == TELEMEM_OK)
        op->status = status;
    if (--op->zc_out == 0 && op->posted)
        finish(NULL, op, TELEMEM_OK);
}

/* Push the head op's messages until the transport pushes back.  Returns
 * messages sent, or TELEMEM_ERR_AGAIN when it had to stop. */
static int pump_op(tlm_am_peer_t *p, tlm_am_sendop_t *op)
{
    int n = 0;
    size_t room = p->max_msg - op->hdr_len;
    room -= room % op->align;
    do {
        size_t rest = op->total - op->cursor;
        size_t chunk = TLM_MIN(rest, room);
        const uint8_t *at =
            op->pack ? NULL : op->data + (op->cursor - op->data_off);
        bool zc = op->zc && !op->pack && tlm_am_zc_pays(p, at, rest);
        if (zc && p->zc_max > room) {
            chunk = TLM_MIN(rest, p->zc_max); /* pulled */
            /* With a threshold above zc_max a piece would not pay (and
             * go as a copy message longer than max_msg): pieces double
             * until they do; the rest does. */
            while (chunk < rest && !tlm_am_zc_pays(p, at, chunk))
                chunk = rest - chunk <= chunk ? rest : 2 * chunk;
        }
        zc = zc && tlm_am_zc_pays(p, at, chunk);
        if (op->frag)
            ((tlm_am_frag_hdr_t *)(void *)op->hdr)->offset = op->cursor;
        int rc;
        if (op->pack) {
            fill_ctx_t f = {op->pack, op->pack_arg, op->cursor};
            rc = tlm_transport_send_fill(p->tp, p->rank, op->hdr, op->hdr_len,
                                         chunk, fill_trampoline, &f);
        } else if (zc) {
            op->zc_out++; /* zc_done may run inside send_zc */
            rc = p->tp->ops->send_zc(p->tp, p->rank, op->hdr, op->hdr_len, at,
                                     chunk, zc_done, op);
            if (rc != TELEMEM_OK)
                op->zc_out--;
        } else {
            struct iovec iov = {(void *)(uintptr_t)at, chunk};
            rc = tlm_transport_send(p->tp, p->rank, op->hdr, op->hdr_len,
                                    &iov, chunk ? 1 : 0);
        }
        if (rc == TELEMEM_ERR_AGAIN)
            return TELEMEM_ERR_AGAIN;
        if (rc != TELEMEM_OK) {
            op->status = rc;
            return n;
        }
        op->cursor += chunk;
        n++;
    } while (op->cursor < op->total);
    return n;
}

static int pump_peer(tlm_am_peer_t *p)
{
    int n = 0;
    while (p->qhead) {
        tlm_am_sendop_t *op = p->qhead;
        int rc = pump_op(p, op);
        if (rc == TELEMEM_ERR_AGAIN)
            break;
        n += rc;
        p->qhead = op->next;
        if (!p->qhead)
            p->qtail = NULL;
        if (op->zc_out)
            op->posted = true; /* zc_done finishes it */
        else
            finish(p, op, TELEMEM_OK);
    }
    return n;
}

static void enqueue(tlm_am_peer_t *p, tlm_am_sendop_t *op)
{
    op->next = NULL;
    op->peer = p->rank;
    if (op->live)
        p->live++;
    if (p->qtail)
        p->qtail->next = op;
    else
        p->qhead = op;
    p->qtail = op;
    if (!p->pending) {
        p->pending = true;
        p->pending_next = tlm_am.pending;
        tlm_am.pending = p;
    }
}

static void free_owned(tlm_am_sendop_t *op, int status)
{
    free(op->owned);
    free(op);
}

int tlm_am_post_copy(int peer, const void *hdr, size_t hdr_len, bool frag,
                     const void *data, size_t len)
{
    tlm_am_sendop_t *op = malloc(sizeof(*op));
    void *copy = len ? malloc(len) : NULL;
    if (!op || (len && !copy)) {
        free(op);
        free(copy);
        tlm_error("no memory to queue a %zu-byte message to rank %d", len,
                  peer);
        return TELEMEM_ERR_NO_MEMORY;
    }
    if (len)
        memcpy(copy, data, len);
    tlm_am_sendop_init(op, hdr, hdr_len, frag, copy, len);
    op->owned = copy;
    op->done = free_owned;
    return tlm_am_post(peer, op);
}

int tlm_am_send_ctrl(int peer, const void *hdr, size_t hdr_len,
                     const void *data, size_t len)
{
    int rc = tlm_am_try_send(peer, hdr, hdr_len, data, len);
    if (rc != TELEMEM_ERR_AGAIN)
        return rc;
    return tlm_am_post_copy(peer, hdr, hdr_len, false, data, len);
}

int tlm_am_post(int peer, tlm_am_sendop_t *op)
{
    tlm_am_peer_t *p = &tlm_am.peers[peer];
    enqueue(p, op);
    if (p->qhead == op)
        pump_peer(p);
    return TELEMEM_OK;
}

bool tlm_am_cancel(int peer, tlm_am_sendop_t *op)
{
    tlm_am_peer_t *p = &tlm_am.peers[peer];
    tlm_am_sendop_t **pp = &p->qhead, *prev = NULL;
    while (*pp && *pp != op) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = op->next;
        if (p->qtail == op)
            p->qtail = prev;
        if (op->live && !op->zc_out) {
            p->live--;
            op->live = false;
        }
    }
    if (op->zc_out && !op->sent) {
        op->posted = true; /* zc_done finishes it */
        return false;
    }
    return true;
}

static int pump_all(void)
{
    int n = 0;
    tlm_am_peer_t **pp = &tlm_am.pending;
    while (*pp) {
        tlm_am_peer_t *p = *pp;
        n += pump_peer(p);
        if (!p->qhead) {
            p->pending = false;
            *pp = p->pending_next;
        } else {
            pp = &p->pending_next;
        }
    }
    return n;
}

int tlm_am_progress(void)
{
    int n = 0;
    for (int i = 0; i < tlm_am.ntps; i++) {
        int rc = tlm_transport_progress(tlm_am.tps[i], 64);
        if (TLM_UNLIKELY(rc < 0))
            return rc;
        n += rc;
    }
    if (tlm_am.pending)
        n += pump_all();
    return n;
}

void tlm_am_protect(int peer, uintptr_t addr, size_t len)
{
    tlm_am_peer_t *p = &tlm_am.peers[peer];
    for (tlm_am_sendop_t *op = p->qhead; op && p->live; op = op->next) {
        if (!op->live)
            continue;
        uintptr_t lo;
        size_t span, rest = op->total - op->cursor;
        if (op->pack) {
            lo = op->live_lo; /* the whole region the stream reads */
            span = op->live_len;
        } else {
            lo = (uintptr_t)op->data + (op->cursor - op->data_off);
            span = rest;
        }
        if (!tlm_util_ranges_overlap(addr, len, lo, span))
            continue;
        /* Take the unsent rest now, before the request changes it. */
        void *copy = malloc(rest ? rest : 1);
        if (!copy) {
            tlm_error("no memory to keep %zu bytes of a get reply to rank %d "
                      "in order; it may see a later put", rest, peer);
            continue;
        }
        if (op->pack) {
            if (rest)
                op->pack(op->pack_arg, copy, op->cursor, rest);
            op->pack = NULL;
        } else {
            memcpy(copy, (const void *)lo, rest);
        }
        op->data = copy;
        op->data_off = op->cursor;
        /* A snapshot taken earlier (owned) is not read any more. */
        free(op->owned);
        op->owned = copy;
        if (!op->zc_out) { /* else counted until its pulls are done */
            op->live = false;
            p->live--;
        }
    }
    /* Parts handed over without a copy that the peer has not read yet. */
    if (p->tp && p->tp->ops->protect)
        p->tp->ops->protect(p->tp, peer, addr, len);
}

int tlm_am_drain_self(void)
{
    tlm_am_peer_t *p = &tlm_am.peers[tlm_am.rank];
    int rc;
    do {
        if (p->qhead)
            pump_peer(p);
        rc = tlm_transport_progress(p->tp, 64);
    } while (rc > 0 || (rc == 0 && p->qhead));
    return rc < 0 ? rc : TELEMEM_OK;
}

int tlm_am_wait_arm(int *fds, int max, bool *bounded)
{
    int n = 0;
    *bounded = false;
    for (int i = 0; i < tlm_am.ntps; i++) {
        tlm_transport_t *tp = tlm_am.tps[i];
        int fd = -1;
        int rc = tp->ops->wait_arm(tp, &fd);
        if (rc == TELEMEM_ERR_AGAIN)
            return rc;
        if (rc != TELEMEM_OK || (fd >= 0 && n == max))
            *bounded = true;
        else if (fd >= 0)
            fds[n++] = fd;
    }
    return n;
}

void tlm_am_wait_want(void)
{
    for (int i = 0; i < tlm_am.ntps; i++)
        if (tlm_am.tps[i]->ops->wait_want)
            tlm_am.tps[i]->ops->wait_want(tlm_am.tps[i]);
}

bool tlm_am_kick(int peer)
{
    if (peer < 0 || peer >= tlm_am.nranks)
        return false;
    tlm_transport_t *tp = tlm_am.peers[peer].tp;
    return tp && tp->ops->kick && tp->ops->kick(tp, peer);
}

_Atomic uint32_t *tlm_am_kick_word(int *fd_p)
{
    *fd_p = -1;
    for (int i = 0; i < tlm_am.ntps; i++) {
        tlm_transport_t *tp = tlm_am.tps[i];
        if (tp->ops->kick_word && tp->ops->kick_fd) {
            *fd_p = tp->ops->kick_fd(tp);
            return tp->ops->kick_word(tp);
        }
    }
    return NULL;
}

int64_t tlm_am_wait_disarm(void)
{
    int64_t rung = 0;
    for (int i = 0; i < tlm_am.ntps; i++) {
        int64_t t = tlm_am.tps[i]->ops->wait_disarm(tlm_am.tps[i]);
        if (t > 0 && (rung == 0 || t < rung))
            rung = t;
    }
    return rung;
}

int tlm_am_peer_alive(int peer)
{
    tlm_am_peer_t *p = &tlm_am.peers[peer];
    return p->tp ? tlm_transport_peer_alive(p->tp, peer) : TELEMEM_OK;
}

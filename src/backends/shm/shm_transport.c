/* shm_transport.c - the built-in shared-memory transport's descriptor, ops
 * tables, open and close.  One segment per process holds its inbound
 * descriptor rings (one per local sender) and its own pool of message
 * buffers; polling, no system call on the message path; and a doorbell
 * for a process that sleeps in a wait: a word in its segment that senders
 * look at after each message, and a datagram socket they write to when it
 * says "asleep".  Long payloads go as a descriptor of the sender's memory
 * that the receiver pulls with process_vm_readv (one copy, by the
 * receiver).  Which file owns what: shm_int.h.  Protocol and memory
 * formula: docs/shm.md. */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "shm"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/shm/shm_int.h"
#include "backends/window/window.h"
#include "util/log.h"
#include "util/util.h"

static void shm_close(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    if (st->super.direct)
        st->super.direct->ops->close(st->super.direct);
    /* Closing ends the pulls nobody made (the engine frees their ops). */
    for (int l = 0; st->peers && st->maps && l < st->nlocal; l++)
        if (st->peers[l].zc)
            tlm_shm_finish_pulls(st, &st->peers[l], UINT64_MAX,
                                 TELEMEM_ERR_NOT_INITIALIZED);
    /* Before the lock goes (tlm_shm_seg_unmap_all closes the segment):
     * left, not died. */
    if (st->maps && st->my_local >= 0 && st->my_local < st->nlocal &&
        st->maps[st->my_local].hdr)
        __atomic_store_n(&st->maps[st->my_local].hdr->departed, 1u,
                         __ATOMIC_RELEASE);
    tlm_shm_seg_unmap_all(st);
    tlm_shm_node_unmap(&st->node);
    if (st->bell_fd >= 0)
        close(st->bell_fd);
    if (st->kick_fd >= 0)
        close(st->kick_fd);
    if (st->name[0])
        shm_unlink(st->name); /* normally gone already after open */
    for (int l = 0; st->peers && l < st->nlocal; l++) {
        free(st->peers[l].fifo);
        free(st->peers[l].zc);
    }
    free(st->maps);
    free(st->peers);
    free(st->bell_to);
    free(st->local_of_rank);
    free(st->free_q);
    free(st->seen);
    free(st);
}

static const tlm_transport_ops_t shm_ops = {
    .kick = tlm_shm_kick,
    .kick_word = tlm_shm_kick_word,
    .kick_fd = tlm_shm_kick_fd,
    .wake = tlm_shm_wake,
    .wait_arm = tlm_shm_wait_arm,
    .wait_disarm = tlm_shm_wait_disarm,
    .wait_want = tlm_shm_wait_want,
    .connect = tlm_shm_connect,
    .send = tlm_shm_send,
    .send_fill = tlm_shm_send_fill,
    .send_zc = tlm_shm_send_zc,
    .protect = tlm_shm_protect,
    .zc_mapped = tlm_shm_zc_mapped,
    .progress = tlm_shm_progress,
    .peer_alive = tlm_shm_peer_alive,
    .close = shm_close,
};

/* Where membarrier() cannot order the senders' stores (st->fence). */
static const tlm_transport_ops_t shm_ops_fenced = {
    .kick = tlm_shm_kick,
    .kick_word = tlm_shm_kick_word,
    .kick_fd = tlm_shm_kick_fd,
    .wake = tlm_shm_wake,
    .wait_arm = tlm_shm_wait_arm,
    .wait_disarm = tlm_shm_wait_disarm,
    .wait_want = tlm_shm_wait_want,
    .connect = tlm_shm_connect,
    .send = tlm_shm_send_fenced,
    .send_fill = tlm_shm_send_fill_fenced,
    .send_zc = tlm_shm_send_zc_fenced,
    .protect = tlm_shm_protect,
    .zc_mapped = tlm_shm_zc_mapped,
    .progress = tlm_shm_progress_fenced,
    .peer_alive = tlm_shm_peer_alive,
    .close = shm_close,
};

static int shm_query(const tlm_transport_params_t *p, bool *reach)
{
    for (int r = 0; r < p->size; r++)
        reach[r] = p->same_node[r] && r != p->rank;
    return TELEMEM_OK;
}

static int shm_check(const tlm_transport_params_t *p)
{
    long ring = p->config->SHM_RING, count = p->config->SHM_BUF_COUNT;
    size_t size = p->config->SHM_BUF_SIZE;
    if (ring < 2 || (ring & (ring - 1)) || ring > (1L << 24)) {
        tlm_error("TELEMEM_SHM_RING=%ld must be a power of two in [2, 2^24]",
                  ring);
        return TELEMEM_ERR_CONFIG;
    }
    if (count < 1 || count > (1L << 20) || size < TLM_TRANSPORT_MIN_MSG ||
        size > (64u << 20) || size % 64) {
        tlm_error("TELEMEM_SHM_BUF_COUNT=%ld / TELEMEM_SHM_BUF_SIZE=%zu out of "
                  "range (count 1..1048576, size 1k..64m and a multiple of 64)",
                  count, size);
        return TELEMEM_ERR_CONFIG;
    }
    return TELEMEM_OK;
}

static shm_ring_t *ring_of(const shm_map_t *m, int sender_local)
{
    return (shm_ring_t *)(void *)(m->rings +
                                  (size_t)sender_local * m->hdr->ring_stride);
}

/* Each peer's rings: mine in its segment (out), its in mine (in). */
static int link_rings(shm_transport_t *st)
{
    st->my_active = st->maps[st->my_local].active;
    st->nwords = (st->nlocal + 63) / 64;
    st->seen = calloc((size_t)st->nwords, sizeof(uint64_t));
    if (!st->seen)
        return TELEMEM_ERR_NO_MEMORY;
    for (int l = 0; l < st->nlocal; l++) {
        shm_peer_t *pe = &st->peers[l];
        pe->local = l;
        pe->rank = st->maps[l].rank;
        if (l == st->my_local)
            continue;
        pe->out = ring_of(&st->maps[l], st->my_local);
        pe->in = ring_of(&st->maps[st->my_local], l);
    }
    return TELEMEM_OK;
}

/* The per-rank and per-peer tables of an open transport, sized by the
 * job and the settings; the caller frees them (shm_close) on failure. */
static int alloc_tables(shm_transport_t *st, const tlm_transport_params_t *p)
{
    st->local_of_rank = malloc(sizeof(int) * (size_t)p->size);
    if (!st->local_of_rank)
        return TELEMEM_ERR_NO_MEMORY;
    /* Local ranks: those the core flagged as on this node, in rank order. */
    for (int r = 0; r < p->size; r++)
        st->local_of_rank[r] = -1;
    for (int r = 0; r < p->size; r++)
        if (p->same_node[r])
            st->local_of_rank[r] = st->nlocal++;
    st->my_local = st->local_of_rank[p->rank];
    /* nlocal >= 1: open_transports sets same_node[rank] (own host id).
     * NOLINTNEXTLINE(clang-analyzer-optin.portability.UnixAPI) */
    st->maps = calloc((size_t)st->nlocal, sizeof(*st->maps));
    st->peers = aligned_alloc(64, (size_t)st->nlocal * sizeof(*st->peers));
    if (st->peers)
        memset(st->peers, 0, (size_t)st->nlocal * sizeof(*st->peers));
    st->bell_to = calloc((size_t)st->nlocal, sizeof(*st->bell_to));
    st->free_q = malloc(sizeof(uint32_t) * st->buf_count);
    if (!st->maps || !st->peers || !st->free_q || !st->bell_to)
        return TELEMEM_ERR_NO_MEMORY;
    for (int l = 0; l < st->nlocal; l++) /* before any failure: shm_close */
        st->maps[l].fd = -1;
    for (uint32_t s = 0; s < st->buf_count; s++)
        st->free_q[s] = s;
    st->free_tail = (uint32_t)st->buf_count;
    return TELEMEM_OK;
}

/* Every local rank creates its segment, then maps the others' (two
 * fences of the whole job), and the node area (shm_node.c) is created by
 * the node's lowest rank and mapped by the others alike; no name is left
 * in /dev/shm after. */
static int join_node(shm_transport_t *st, const tlm_transport_params_t *p)
{
    bool node = p->node_bytes > 0 && st->nlocal > 1;
    int rc = TELEMEM_OK;
    if (p->node_bytes > 0 && st->nlocal == 1)
        rc = tlm_shm_node_private(p, &st->node);
    int leader = 0;
    while (leader < p->size && !p->same_node[leader])
        leader++;
    if (rc == TELEMEM_OK)
        rc = tlm_shm_bell_open(st, p);
    if (rc == TELEMEM_OK)
        rc = tlm_shm_seg_create(st, p);
    if (rc == TELEMEM_OK && node && leader == p->rank)
        rc = tlm_shm_node_create(p, &st->node);
    int frc = tlm_boot_fence(p->boot); /* everyone has created */
    if (rc == TELEMEM_OK)
        rc = frc;
    for (int r = 0; rc == TELEMEM_OK && r < p->size; r++) {
        int l = st->local_of_rank[r];
        if (l >= 0 && r != p->rank)
            rc = tlm_shm_seg_map(st, p, l, r);
    }
    if (rc == TELEMEM_OK && node && leader != p->rank)
        rc = tlm_shm_node_map(p, leader, &st->node);
    frc = tlm_boot_fence(p->boot); /* everyone has mapped */
    if (rc == TELEMEM_OK)
        rc = frc;
    if (rc == TELEMEM_OK)
        rc = tlm_shm_pull_setup(st, p);
    /* Nothing is left in /dev/shm once every rank holds its mappings. */
    if (st->name[0]) {
        shm_unlink(st->name);
        st->name[0] = '\0';
    }
    tlm_shm_node_unlink(&st->node);
    st->super.node_base = st->node.base;
    st->super.node_len = st->node.len;
    return rc;
}

static int shm_open_tp(const tlm_transport_params_t *p, tlm_transport_t **tp_p)
{
    shm_transport_t *st = calloc(1, sizeof(*st));
    if (!st)
        return TELEMEM_ERR_NO_MEMORY;
    st->bell_fd = st->kick_fd = -1;
    st->super.ops = &shm_ops;
    st->super.name = "shm";
    st->super.max_msg = p->config->SHM_BUF_SIZE + SHM_HDR_ROOM;
    st->super.same_node_only = true;
    st->deliver = p->deliver;
    st->deliver_arg = p->deliver_arg;
    st->place = p->place;
    st->placed = p->placed;
    st->rank = p->rank;
    st->nranks = p->size;
    st->ring_mask = (uint64_t)p->config->SHM_RING - 1;
    st->buf_size = p->config->SHM_BUF_SIZE + SHM_HDR_ROOM; /* buffer stride */
    st->buf_count = (uint64_t)p->config->SHM_BUF_COUNT;
    int rc = alloc_tables(st, p);
    if (rc != TELEMEM_OK)
        goto err;

    rc = join_node(st, p);
    if (rc != TELEMEM_OK)
        goto err;
    st->fence = !st->mb;
    if (st->fence)
        st->super.ops = &shm_ops_fenced;
    rc = link_rings(st);
    if (rc != TELEMEM_OK)
        goto err;
    /* The same-node direct path (docs/direct.md); without it every
     * transfer takes the message path.  With TELEMEM_DIRECT=never it is
     * still opened while pulls are on, for its shared blocks only: a pull
     * from one of them is a memcpy (pull_payload); core routes nothing to
     * it then. */
    if ((p->direct || st->cma) && st->nlocal > 1) {
        rc = tlm_window_open(p, st->local_of_rank, tlm_shm_wake_rank, st,
                             &st->super.direct);
        if (rc != TELEMEM_OK)
            goto err;
    }
    tlm_debug("shm open: %d local ranks, %llu buffers of %llu bytes, ring "
              "%ld, pull %s from %zu bytes (from %zu in mapped blocks)",
              st->nlocal, (unsigned long long)st->buf_count,
              (unsigned long long)st->buf_size, p->config->SHM_RING,
              st->cma ? "on" : "off", st->super.zc_min,
              st->super.zc_mapped_min);
    *tp_p = &st->super;
    return TELEMEM_OK;
err:
    shm_close(&st->super);
    return rc;
}

const tlm_backend_t tlm_shm_backend = {
    .name = "shm",
    .abi = TLM_BACKEND_ABI,
    .check = shm_check,
    .query = shm_query,
    .open = shm_open_tp,
    .direct_name = "window",
};

/* shm_ring.c - the shm transport's message path: a message to a local peer
 * goes as a cell of this process's ring in the peer's segment (inline, or
 * in one of this process's buffers: shm_inl.h), and progress drains the
 * rings of the senders that contacted this process, in order per sender
 * (docs/shm.md). */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "shm"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "telemem.h"
#include "backends/shm/shm_inl.h"
#include "util/log.h"
#include "util/util.h"

int tlm_shm_connect(tlm_transport_t *tp, int peer_rank)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int l = peer_rank >= 0 && peer_rank < st->nranks
                ? st->local_of_rank[peer_rank] : -1;
    if (l < 0 || l == st->my_local)
        return TELEMEM_ERR_UNREACHABLE;
    shm_peer_t *p = &st->peers[l];
    if (!p->contacted) {
        /* First contact: the receiver starts polling our ring.  Its pages
         * are touched only from now on, and this process's bookkeeping
         * of sends to it is made now (lazy per-peer memory). */
        if (!p->fifo)
            p->fifo = malloc(sizeof(uint32_t) * st->buf_count);
        if (st->cma && !p->zc)
            p->zc = calloc(st->ring_mask + 1, sizeof(shm_zc_t));
        if (!p->fifo || (st->cma && !p->zc)) {
            tlm_error("no memory for the sends to rank %d", peer_rank);
            return TELEMEM_ERR_NO_MEMORY;
        }
        atomic_fetch_or_explicit(&st->maps[l].active[st->my_local / 64],
                                 1ull << (st->my_local % 64),
                                 memory_order_release);
        p->contacted = true;
    }
    return TELEMEM_OK;
}

static void gather(uint8_t *dst, const void *hdr, size_t hdr_len,
                   const struct iovec *iov, int iovcnt)
{
    memcpy(dst, hdr, hdr_len);
    dst += hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        tlm_util_copy(dst, iov[i].iov_base, iov[i].iov_len);
        dst += iov[i].iov_len;
    }
}

static inline int send_impl(tlm_transport_t *tp, int peer_rank,
                            const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, bool fenced)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    size_t len = hdr_len;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    shm_peer_t *p;
    uint8_t *dst;
    int rc = shm_reserve(st, peer_rank, len, &p, &dst);
    if (TLM_UNLIKELY(rc != TELEMEM_OK))
        return rc;
    gather(dst, hdr, hdr_len, iov, iovcnt);
    shm_commit(st, p, len, CELL_MSG, fenced);
    return TELEMEM_OK;
}

static inline int send_fill_impl(tlm_transport_t *tp, int peer_rank,
                                 const void *hdr, size_t hdr_len, size_t len,
                                 tlm_fill_fn_t fill, void *arg, bool fenced)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    shm_peer_t *p;
    uint8_t *dst;
    int rc = shm_reserve(st, peer_rank, hdr_len + len, &p, &dst);
    if (TLM_UNLIKELY(rc != TELEMEM_OK))
        return rc;
    memcpy(dst, hdr, hdr_len);
    if (len)
        fill(dst + hdr_len, len, arg);
    shm_commit(st, p, hdr_len + len, CELL_MSG, fenced);
    return TELEMEM_OK;
}

int tlm_shm_send(tlm_transport_t *tp, int peer_rank, const void *hdr,
                 size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    return send_impl(tp, peer_rank, hdr, hdr_len, iov, iovcnt, false);
}

int tlm_shm_send_fenced(tlm_transport_t *tp, int peer_rank, const void *hdr,
                        size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    return send_impl(tp, peer_rank, hdr, hdr_len, iov, iovcnt, true);
}

int tlm_shm_send_fill(tlm_transport_t *tp, int peer_rank, const void *hdr,
                      size_t hdr_len, size_t len, tlm_fill_fn_t fill, void *arg)
{
    return send_fill_impl(tp, peer_rank, hdr, hdr_len, len, fill, arg, false);
}

int tlm_shm_send_fill_fenced(tlm_transport_t *tp, int peer_rank,
                             const void *hdr, size_t hdr_len, size_t len,
                             tlm_fill_fn_t fill, void *arg)
{
    return send_fill_impl(tp, peer_rank, hdr, hdr_len, len, fill, arg, true);
}

/* One message from p (inline or in the sender's buffer), pulled or not. */
static inline int deliver_one(shm_transport_t *st, shm_peer_t *p,
                              const shm_cell_t *c, const uint8_t *msg,
                              uint32_t len, bool fenced)
{
    if (TLM_LIKELY(c->kind != CELL_PULL))
        return st->deliver(st->deliver_arg, p->rank, msg, len) != 0
                   ? TELEMEM_ERR_AGAIN : TELEMEM_OK;
    int rc = tlm_shm_pull_in(st, p, msg, len);
    if (rc == TELEMEM_OK) {
        /* The source is free again: tell its sender (it may sleep). */
        atomic_store_explicit(
            &p->in->pulled,
            atomic_load_explicit(&p->in->pulled, memory_order_relaxed) + 1,
            memory_order_release);
        wake_check(st, p, fenced);
    }
    return rc;
}

/* Drain one sender's ring, at most max messages. */
static inline int drain(shm_transport_t *st, int l, int max, bool fenced)
{
    shm_peer_t *p = &st->peers[l];
    shm_ring_t *in = p->in;
    const shm_map_t *sender = &st->maps[l];
    int n = 0;
    while (n < max) {
        shm_cell_t *c = &in->cells[p->in_pos & st->ring_mask];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) !=
            (uint32_t)(p->in_pos + 1))
            break;
        uint32_t len = c->len, slot = c->slot;
        if (slot == SLOT_INLINE) {
            if (TLM_UNLIKELY(len > CELL_INLINE))
                len = 0; /* corrupt cell: deliver nothing rather than overrun */
            if (deliver_one(st, p, c, c->data, len, fenced) != TELEMEM_OK)
                break; /* deferred: stays in the ring */
        } else {
            if (TLM_UNLIKELY(slot >= sender->hdr->buf_count ||
                             len > sender->hdr->buf_size)) {
                tlm_error("peer %d sent a bad descriptor (buffer %u, length %u)",
                          p->rank, slot, len);
            } else {
                if (deliver_one(st, p, c,
                                (const uint8_t *)sender->bufs +
                                    (size_t)slot * sender->hdr->buf_size,
                                len, fenced) != TELEMEM_OK)
                    break; /* deferred: stays in the ring */
                atomic_store_explicit(&sender->slot_state[slot], 0,
                                      memory_order_release);
            }
        }
        p->in_pos++;
        n++;
    }
    if (n) {
        atomic_store_explicit(&in->head, p->in_pos, memory_order_release);
        /* As in wake_check: the sender's arm is the other half. */
        order_before_load(fenced);
        if (TLM_UNLIKELY(atomic_load_explicit(&in->want_space,
                                              memory_order_relaxed)))
            tlm_shm_space_slow(st, p);
    }
    return n;
}

/* Senders that contacted this process since the last poll: their buffer
 * pools go into its page tables now, while the peers' pools mapped so
 * far total at most POPULATE_PEERS_MAX (tlm_shm_populate), so that a pool
 * page does not fault on both sides at first use; a sender that never
 * contacts this process costs it no page (before 2026-11-28 every peer's
 * pool was mapped at start: 28 MiB per rank at 8 ranks). */
static void first_senders(shm_transport_t *st, int w, uint64_t bits)
{
    uint64_t fresh = bits & ~st->seen[w];
    st->seen[w] |= fresh;
    while (fresh) {
        int l = w * 64 + __builtin_ctzll(fresh);
        fresh &= fresh - 1;
        const shm_map_t *m = &st->maps[l];
        uint64_t len = m->hdr->seg_size - m->hdr->off_bufs;
        if (st->populated + len <= POPULATE_PEERS_MAX) {
            st->populated += len;
            tlm_shm_populate(m, MADV_POPULATE_READ, len);
        }
    }
}

static inline int progress_impl(tlm_transport_t *tp, int max, bool fenced)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int total = 0;
    for (int w = 0; w < st->nwords; w++) {
        uint64_t bits = atomic_load_explicit(&st->my_active[w],
                                             memory_order_acquire);
        if (TLM_UNLIKELY(bits & ~st->seen[w]))
            first_senders(st, w, bits);
        while (bits && total < max) {
            int b = __builtin_ctzll(bits);
            bits &= bits - 1;
            total += drain(st, w * 64 + b, max - total, fenced);
        }
    }
    if (TLM_UNLIKELY(st->zc_peers))
        tlm_shm_reap_pulls(st);
    return total;
}

int tlm_shm_progress(tlm_transport_t *tp, int max)
{
    return progress_impl(tp, max, false);
}

int tlm_shm_progress_fenced(tlm_transport_t *tp, int max)
{
    return progress_impl(tp, max, true);
}

/* shm_inl.h - the sender's half of the shm message path, inline where the
 * files that send (shm_ring.c, shm_pull.c) use it: reserve a cell and a
 * buffer, publish the cell, and look at the receiver's doorbell after. */
#ifndef TLM_SHM_INL_H
#define TLM_SHM_INL_H

#include "telemem.h"
#include "backends/shm/shm_int.h"
#include "util/util.h"

/* Take back the buffers peer p has released (oldest first). */
static inline void reclaim_peer(shm_transport_t *st, shm_peer_t *p)
{
    _Atomic uint32_t *state = st->maps[st->my_local].slot_state;
    while (p->fhead != p->ftail) {
        uint32_t s = p->fifo[p->fhead % st->buf_count];
        if (atomic_load_explicit(&state[s], memory_order_acquire) != 0)
            break;
        st->free_q[st->free_tail++ % st->buf_count] = s;
        p->fhead++;
    }
}

static inline void reclaim_all(shm_transport_t *st)
{
    for (int l = 0; l < st->nlocal; l++)
        if (l != st->my_local)
            reclaim_peer(st, &st->peers[l]);
}

/* Reserve the next cell (and a buffer when len > CELL_INLINE) for a
 * message of len bytes to peer; *dst is where it goes.  TELEMEM_ERR_AGAIN
 * when the ring or the buffer pool is full. */
static inline int shm_reserve(shm_transport_t *st, int peer_rank, size_t len,
                              shm_peer_t **p_out, uint8_t **dst)
{
    int l = st->local_of_rank[peer_rank];
    shm_peer_t *p = &st->peers[l];
    if (TLM_UNLIKELY(!p->contacted)) {
        int rc = tlm_shm_connect(&st->super, peer_rank);
        if (rc != TELEMEM_OK)
            return rc;
    }
    if (TLM_UNLIKELY(len > st->buf_size))
        return TELEMEM_ERR_INVALID_ARG;
    shm_ring_t *r = p->out;
    if (p->tail - p->cached_head > st->ring_mask) {
        p->cached_head = atomic_load_explicit(&r->head, memory_order_acquire);
        p->blocked = p->tail - p->cached_head > st->ring_mask;
        if (p->blocked)
            return TELEMEM_ERR_AGAIN;
    }
    shm_cell_t *c = &r->cells[p->tail & st->ring_mask];
    if (len <= CELL_INLINE) {
        *dst = c->data;
        c->slot = SLOT_INLINE;
    } else {
        if (st->free_head == st->free_tail) {
            reclaim_all(st);
            if (st->free_head == st->free_tail)
                tlm_shm_reclaim_from_dead(st);
            st->starved = st->free_head == st->free_tail;
            if (st->starved)
                return TELEMEM_ERR_AGAIN;
        }
        uint32_t s = st->free_q[st->free_head++ % st->buf_count];
        p->fifo[p->ftail++ % st->buf_count] = s;
        atomic_store_explicit(&st->maps[st->my_local].slot_state[s], 1,
                              memory_order_relaxed);
        *dst = (uint8_t *)st->maps[st->my_local].bufs + (size_t)s * st->buf_size;
        c->slot = s;
    }
    *p_out = p;
    return TELEMEM_OK;
}

/* After a store the peer may wait for (a message, room, a direct write):
 * wake it if it sleeps.  The load of its bell must not pass that store: a
 * compiler barrier suffices where the sleeper issues membarrier() between
 * announcing its sleep and its last look (tlm_shm_wait_arm), else a fence. */
static inline void order_before_load(bool fenced)
{
    if (fenced)
        atomic_thread_fence(memory_order_seq_cst);
    else
        atomic_signal_fence(memory_order_seq_cst);
}

/* fenced: a constant in each caller (two ops tables, shm_ops and
 * shm_ops_fenced), so the message path tests nothing for it. */
static inline void wake_check(shm_transport_t *st, shm_peer_t *p,
                              bool fenced)
{
    order_before_load(fenced);
    if (TLM_UNLIKELY(atomic_load_explicit(p->bell, memory_order_relaxed) ==
                     BELL_SLEEPING))
        tlm_shm_ring_slow(st, p);
}

/* Publish the reserved cell to the receiver. */
static inline void shm_commit(shm_transport_t *st, shm_peer_t *p, size_t len,
                              uint32_t kind, bool fenced)
{
    shm_cell_t *c = &p->out->cells[p->tail & st->ring_mask];
    c->len = (uint32_t)len;
    c->kind = kind;
    atomic_store_explicit(&c->seq, (uint32_t)(p->tail + 1),
                          memory_order_release);
    p->tail++;
    wake_check(st, p, fenced);
}

#endif

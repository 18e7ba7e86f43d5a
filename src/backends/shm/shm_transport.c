/* shm_transport.c - the built-in shared-memory transport: one segment per
 * process holding its inbound descriptor rings (one per local sender) and
 * its own pool of message buffers; polling, no system call on the message
 * path; and a doorbell for a process that sleeps in a wait: a word in its
 * segment that senders look at after each message, and a datagram socket
 * they write to when it says "asleep".  Long payloads go as a descriptor
 * of the sender's memory that the receiver pulls with process_vm_readv
 * (one copy, by the receiver).  Protocol and memory formula: docs/shm.md. */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "shm"
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <linux/membarrier.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sched.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/transport.h"
#include "backends/shm/shm_node.h"
#include "backends/window/window.h"
#include "util/log.h"
#include "util/util.h"

#define SHM_MAGIC 0x544c4d53u /* "TLMS" */
#define SHM_VERSION 5u
#define CELL_SIZE 64u
#define CELL_INLINE 48u
#define SLOT_INLINE UINT32_MAX
/* A buffer holds SHM_BUF_SIZE bytes of payload plus the largest AM header,
 * so that a full-size fragment is one message. */
#define SHM_HDR_ROOM 128u
/* Payloads from these sizes are pulled unless the profile or the settings
 * say otherwise (docs/shm.md, "The pull path"): with process_vm_readv, and
 * from a telemem_malloc_all block the receiver maps. */
#define SHM_PULL_DEFAULT (4u << 20)
#define SHM_MAP_DEFAULT (64u << 10)
/* cell kinds */
enum { CELL_MSG = 0, CELL_PULL = 1 };

/* One descriptor: written by the sender, seq last (release). */
typedef struct shm_cell {
    _Atomic uint32_t seq; /* position + 1 when valid for that lap */
    uint32_t len;         /* message length */
    uint32_t slot;        /* sender's buffer index, or SLOT_INLINE */
    uint32_t kind;        /* CELL_MSG, or CELL_PULL: a shm_pull_t + header */
    uint8_t data[CELL_INLINE];
} shm_cell_t;
_Static_assert(sizeof(shm_cell_t) == CELL_SIZE, "cell is one cache line");

/* Ring from one sender to the segment's owner. */
typedef struct shm_ring {
    _Atomic uint64_t head; /* consumer position, written by the receiver */
    /* Set by a sender that sleeps until the receiver makes room in this
     * ring or releases its buffers; the receiver clears it and rings. */
    _Atomic uint32_t want_space;
    uint32_t pad0;
    /* Pull descriptors of this ring the receiver has finished with (their
     * data copied, or given up): the sender's buffers are free again. */
    _Atomic uint64_t pulled;
    uint8_t pad[CELL_SIZE - 3 * sizeof(uint64_t)];
    shm_cell_t cells[];
} shm_ring_t;

/* A pull message: the sender's range, then the message header (hdr_len
 * bytes; the payload would follow it in a copied message). */
typedef struct shm_pull {
    uint64_t addr;   /* in the sender's address space */
    uint64_t len;
    uint32_t hdr_len;
    /* PULL_READY; the receiver takes it (PULL_TAKEN) before it reads, or
     * the sender, about to change the source, moves it first to a copy
     * at `moved` (PULL_MOVED): shm_protect. */
    _Atomic uint32_t state;
    _Atomic uint64_t moved;
} shm_pull_t;
enum { PULL_READY = 0, PULL_TAKEN = 1, PULL_MOVED = 2 };

/* A sender's pull not yet finished by its receiver. */
typedef struct shm_zc {
    tlm_sent_fn_t done;
    void *arg;
    shm_pull_t *desc;  /* the message, while not finished */
    uintptr_t src;
    size_t len;
    void *snap;        /* the copy it was moved to, or NULL */
    double taken_at;   /* when a wait first saw its receiver read it */
} shm_zc_t;

typedef struct shm_seg_hdr {
    uint32_t magic, version;
    int32_t rank, nlocal;
    uint64_t seg_size, buf_size, buf_count, ring_cells;
    uint64_t off_doorbell, off_kick, off_active, off_rings, ring_stride;
    uint64_t off_slot_state;
    uint64_t off_bufs;
    uint32_t mb_ok;      /* registered for membarrier's global expedited
                          * barrier (the doorbell protocol, docs/shm.md) */
    uint32_t departed;   /* set at close: a peer whose lock is free left
                          * cleanly (finalize), it did not die */
    int32_t pid;         /* the owner, for process_vm_readv */
    uint32_t cma_ok;     /* the owner can pull from every local peer */
    uint64_t base;       /* where the owner mapped this segment (probe) */
} shm_seg_hdr_t;

/* Doorbell states (a word in its own cache line of the owner's segment:
 * written by the owner when it sleeps and wakes, by senders that ring). */
enum { BELL_AWAKE = 0, BELL_SLEEPING = 1, BELL_RUNG = 2 };

/* A mapped segment (ours or a peer's). */
typedef struct shm_map {
    shm_seg_hdr_t *hdr;
    _Atomic uint32_t *doorbell;   /* see BELL_* */
    _Atomic uint32_t *kick;       /* the kick words (transport.h), own line */
    _Atomic uint64_t *active;     /* bitmap of local senders with traffic */
    char *rings;                  /* ring of local index i at i*stride */
    _Atomic uint32_t *slot_state; /* 1 = in flight, 0 = free */
    char *bufs;
    int fd;
    int rank;
} shm_map_t;

/* Per local peer, as a sender to it and a receiver from it. */
/* The first cache line holds what a message to the peer and one from it
 * touch (sending: out .. local; receiving: in .. rank). */
typedef struct shm_peer {
    _Alignas(64) shm_ring_t *out; /* my ring inside the peer's segment */
    uint64_t tail;         /* next position to write in out */
    uint64_t cached_head;  /* last head read from out */
    _Atomic uint32_t *bell; /* the peer's doorbell */
    bool contacted;        /* active bit set in the peer's segment */
    bool blocked;          /* its ring was full at the last send */
    int local;
    shm_ring_t *in;        /* the peer's ring inside my segment */
    uint64_t in_pos;       /* next position to read from in */
    int rank;
    /* My buffers in flight to this peer, in send order: the peer releases
     * them in the same order, so reclaiming looks at the oldest only. */
    uint32_t *fifo;        /* buf_count entries, from the first contact */
    uint32_t fhead, ftail;
    /* My pulls to this peer not yet finished, in send order (at most a
     * ring's worth: a cell is freed only after its pull). */
    shm_zc_t *zc;          /* ring_cells entries, from the first contact */
    uint64_t zc_sent, zc_done;
    pid_t pid;             /* the peer's process */
} shm_peer_t;
_Static_assert(offsetof(shm_peer_t, rank) + sizeof(int) <= 64,
               "a message to or from a peer touches one line of shm_peer_t");

/* A peer's doorbell socket (cold: used when it sleeps). */
typedef struct shm_bell_addr {
    struct sockaddr_un addr;
    socklen_t len;
} shm_bell_addr_t;

typedef struct shm_transport {
    tlm_transport_t super;
    tlm_deliver_fn_t deliver;
    void *deliver_arg;
    int rank, nranks, my_local, nlocal;
    uint64_t ring_mask, buf_size, buf_count;
    shm_map_t *maps;          /* by local index */
    shm_peer_t *peers;        /* by local index */
    shm_bell_addr_t *bell_to; /* by local index */
    int *local_of_rank;       /* global rank -> local index or -1 */
    /* Free buffers, oldest release first.  Reusing the buffer a receiver
     * released last would be slower: its lines are still in the receiver's
     * cache and every store must invalidate them there (measured: half the
     * bandwidth); cycling through the pool writes lines long evicted. */
    uint32_t *free_q;
    uint32_t free_head, free_tail; /* free count = tail - head */
    uint32_t next_sender;     /* round-robin start for progress */
    /* This process's "has sent to me" bits (its own segment), nwords
     * words: what progress reads first on every poll. */
    _Atomic uint64_t *my_active;
    int nwords;
    /* Senders seen in my_active (their pools are mapped here then:
     * first_senders) and the bytes of peer pools mapped so far. */
    uint64_t *seen;
    uint64_t populated;
    bool starved;             /* no free buffer at the last send */
    /* Doorbell: this process's socket (bound to an abstract name), whether
     * a sleeper's membarrier() orders every local process's stores (else
     * senders fence before they look at a bell). */
    int bell_fd;
    int kick_fd;              /* kicks for this process's progress thread */
    bool mb;
    bool fence;
    double next_dead_check;   /* see reclaim_from_dead() */
    bool cma;                 /* pulls on (every local rank can pull) */
    int zc_peers;             /* peers with pulls outstanding */
    tlm_place_fn_t place;
    tlm_placed_fn_t placed;
    tlm_shm_node_t node;      /* the node area (shm_node.c), or none */
    char name[128];
} shm_transport_t;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* The segment's name: the job id and the rank (the launcher's clean-up
 * and the tests find a job's objects by them) and 16 random hex digits,
 * so nobody can take the name first; peers learn it from the store. */
static int seg_name(char *buf, size_t n, const char *jobid, int rank)
{
    char rnd[17];
    if (tlm_util_random_hex(rnd, 16) != 0)
        return -1;
    snprintf(buf, n, "/telemem-%s-%d-%s", jobid, rank, rnd);
    return 0;
}

static void seg_key(char *buf, size_t n, int rank)
{
    snprintf(buf, n, "shm.seg.%d", rank);
}

static void layout(shm_seg_hdr_t *h, int nlocal, size_t buf_size,
                   size_t buf_count, size_t cells)
{
    size_t pg = page_size();
    size_t nwords = ((size_t)nlocal + 63) / 64;
    h->nlocal = nlocal;
    h->buf_size = buf_size;
    h->buf_count = buf_count;
    h->ring_cells = cells;
    h->off_doorbell = TLM_ALIGN_UP(sizeof(*h), CELL_SIZE);
    h->off_kick = h->off_doorbell + CELL_SIZE;
    h->off_active = h->off_kick + CELL_SIZE;
    h->off_rings = TLM_ALIGN_UP(h->off_active + nwords * 8, pg);
    h->ring_stride = TLM_ALIGN_UP(sizeof(shm_ring_t) + cells * CELL_SIZE, pg);
    h->off_slot_state = h->off_rings + (size_t)nlocal * h->ring_stride;
    h->off_bufs = TLM_ALIGN_UP(h->off_slot_state + buf_count * 4, pg);
    h->seg_size = h->off_bufs + buf_count * buf_size;
}

static void map_fill(shm_map_t *m, void *base)
{
    shm_seg_hdr_t *h = base;
    m->hdr = h;
    m->doorbell = (_Atomic uint32_t *)(void *)((char *)base + h->off_doorbell);
    m->kick = (_Atomic uint32_t *)(void *)((char *)base + h->off_kick);
    m->active = (_Atomic uint64_t *)(void *)((char *)base + h->off_active);
    m->rings = (char *)base + h->off_rings;
    m->slot_state =
        (_Atomic uint32_t *)(void *)((char *)base + h->off_slot_state);
    m->bufs = (char *)base + h->off_bufs;
}

/* Map the buffer pool of segment m into this process's page tables now
 * (allocating its pages on the owner's first call): a page first touched
 * by a transfer costs a fault on each side, and a pool cycled through
 * for the first time made a 256 KiB put exchange 8x slower than later
 * ones (0.38 ms against 0.048 ms, 2026-11-26).  Only a pool of at most
 * max bytes: the owner passes POPULATE_OWN_MAX (its pool is allocated at
 * start; a larger one, set by TELEMEM_SHM_BUF_*, stays sparse until
 * used), a peer's pool when the peer first sends here while the peers'
 * pools mapped so far total at most POPULATE_PEERS_MAX (first_senders):
 * mapping every peer's at start cost start-up (n = 64, 4 MiB pools: 1.7 s
 * more) and memory for peers never heard from.  Best effort: a kernel
 * without MADV_POPULATE_* (before 5.14) faults them in as before. */
#define POPULATE_OWN_MAX (256ull << 20)
#define POPULATE_PEERS_MAX (64ull << 20)
static void populate_bufs(const shm_map_t *m, int advice, uint64_t max)
{
    size_t len = (size_t)(m->hdr->seg_size - m->hdr->off_bufs);
    if (len && len <= max && madvise(m->bufs, len, advice) != 0)
        tlm_debug("madvise(%s) of a buffer pool: %s",
                  advice == MADV_POPULATE_WRITE ? "POPULATE_WRITE"
                                                : "POPULATE_READ",
                  strerror(errno));
}

static shm_ring_t *ring_of(const shm_map_t *m, int sender_local)
{
    return (shm_ring_t *)(void *)(m->rings +
                                  (size_t)sender_local * m->hdr->ring_stride);
}

/* ---- message path ------------------------------------------------------ */

static int shm_connect(tlm_transport_t *tp, int peer_rank)
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

/* Take back the buffers peer p has released (oldest first). */
static void reclaim_peer(shm_transport_t *st, shm_peer_t *p)
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

static void reclaim_all(shm_transport_t *st)
{
    for (int l = 0; l < st->nlocal; l++)
        if (l != st->my_local)
            reclaim_peer(st, &st->peers[l]);
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

static void reclaim_from_dead(shm_transport_t *st);

/* Reserve the next cell (and a buffer when len > CELL_INLINE) for a
 * message of len bytes to peer; *dst is where it goes.  TELEMEM_ERR_AGAIN
 * when the ring or the buffer pool is full. */
static inline int shm_reserve(shm_transport_t *st, int peer_rank, size_t len,
                              shm_peer_t **p_out, uint8_t **dst)
{
    int l = st->local_of_rank[peer_rank];
    shm_peer_t *p = &st->peers[l];
    if (TLM_UNLIKELY(!p->contacted)) {
        int rc = shm_connect(&st->super, peer_rank);
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
                reclaim_from_dead(st);
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

/* ---- doorbell (docs/shm.md, "Sleeping") --------------------------------- */

static bool lock_free(const shm_transport_t *st, int l);

/* The peer's bell said asleep: the first to ring it writes one datagram
 * to its socket (a sleeper polls it); later senders see RUNG.  The
 * datagram is the time of the ring (CLOCK_MONOTONIC, ns): the woken
 * process learns what its wake-up cost (shm_wait_disarm). */
static void ring_slow(shm_transport_t *st, shm_peer_t *p)
{
    uint32_t want = BELL_SLEEPING;
    if (atomic_compare_exchange_strong(p->bell, &want, BELL_RUNG)) {
        int64_t t = tlm_util_now_ns();
        (void)sendto(st->bell_fd, &t, sizeof(t), MSG_DONTWAIT | MSG_NOSIGNAL,
                     (const struct sockaddr *)&st->bell_to[p->local].addr,
                     st->bell_to[p->local].len);
    }
}

/* After a store the peer may wait for (a message, room, a direct write):
 * wake it if it sleeps.  The load of its bell must not pass that store: a
 * compiler barrier suffices where the sleeper issues membarrier() between
 * announcing its sleep and its last look (shm_wait_arm), else a fence. */
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
        ring_slow(st, p);
}

/* A sender sleeps until this receiver makes room: it has made some. */
static void space_slow(shm_transport_t *st, shm_peer_t *p)
{
    atomic_store_explicit(&p->in->want_space, 0, memory_order_relaxed);
    ring_slow(st, p);
}

/* A wait of this process needs rank's CPU: wake its progress thread if
 * it listens and its application is outside the library (transport.h).
 * A datagram to its kick socket, not a futex: the socket's wake-up tells
 * the scheduler that the waker is about to wait (a sync wake-up), which
 * places the thread on this CPU, free in a moment, rather than behind its
 * own application's spin (measured 2026-11-28: a futex kick left the
 * thread queued behind its rank in MPI_Barrier for 2-4 ms while the
 * kicker's CPU went idle). */
static bool shm_kick(tlm_transport_t *tp, int rank)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int l = rank >= 0 && rank < st->nranks ? st->local_of_rank[rank] : -1;
    if (l < 0 || l == st->my_local || !st->maps[l].kick)
        return false;
    _Atomic uint32_t *w = st->maps[l].kick;
    if (!atomic_load_explicit(&w[TLM_KICK_LISTEN], memory_order_relaxed) ||
        (atomic_load_explicit(&w[TLM_KICK_INSIDE], memory_order_relaxed) & 1))
        return false;
    struct sockaddr_un a = st->bell_to[l].addr;
    socklen_t len = st->bell_to[l].len;
    size_t n = len - offsetof(struct sockaddr_un, sun_path);
    if (n < 5 || memcmp(a.sun_path + n - 4, "bell", 4) != 0)
        return false; /* a cut name */
    memcpy(a.sun_path + n - 4, "kick", 4);
    char one = 1;
    return sendto(st->kick_fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
                  (const struct sockaddr *)&a, len) == 1;
}

static _Atomic uint32_t *shm_kick_word(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    return st->maps[st->my_local].kick;
}

static int shm_kick_fd(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    return st->kick_fd;
}

/* The window driver wrote into rank's memory. */
static void wake_rank(void *arg, int rank)
{
    shm_transport_t *st = arg;
    int l = st->local_of_rank[rank];
    if (l >= 0 && l != st->my_local)
        wake_check(st, &st->peers[l], st->fence);
}

/* Core stored into the node area what rank may wait for. */
static void shm_wake(tlm_transport_t *tp, int rank)
{
    wake_rank(tlm_container_of(tp, shm_transport_t, super), rank);
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

static int shm_send(tlm_transport_t *tp, int peer_rank, const void *hdr,
                    size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    return send_impl(tp, peer_rank, hdr, hdr_len, iov, iovcnt, false);
}

static int shm_send_fenced(tlm_transport_t *tp, int peer_rank,
                           const void *hdr, size_t hdr_len,
                           const struct iovec *iov, int iovcnt)
{
    return send_impl(tp, peer_rank, hdr, hdr_len, iov, iovcnt, true);
}

static int shm_send_fill(tlm_transport_t *tp, int peer_rank, const void *hdr,
                         size_t hdr_len, size_t len, tlm_fill_fn_t fill,
                         void *arg)
{
    return send_fill_impl(tp, peer_rank, hdr, hdr_len, len, fill, arg, false);
}

static int shm_send_fill_fenced(tlm_transport_t *tp, int peer_rank,
                                const void *hdr, size_t hdr_len, size_t len,
                                tlm_fill_fn_t fill, void *arg)
{
    return send_fill_impl(tp, peer_rank, hdr, hdr_len, len, fill, arg, true);
}

/* ---- the pull path (docs/shm.md, "The pull path") ----------------------- */

/* Wait until p has finished pull i (it is reading it now: a system call
 * away), or is gone. */
static void wait_pulled(shm_transport_t *st, shm_peer_t *p, uint64_t i)
{
    for (unsigned k = 1; atomic_load_explicit(&p->out->pulled,
                                              memory_order_acquire) <= i;
         k++) {
        if (k % 1024 == 0 && lock_free(st, p->local))
            return;
        sched_yield();
    }
}

/* [addr, addr+len) is about to change: pulls to peer from it that the
 * peer has not begun are moved to a copy taken now (transport.h). */
static void shm_protect(tlm_transport_t *tp, int peer_rank, uintptr_t addr,
                        size_t len)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int l = peer_rank >= 0 && peer_rank < st->nranks
                ? st->local_of_rank[peer_rank] : -1;
    if (l < 0 || l == st->my_local || !st->peers[l].zc)
        return;
    shm_peer_t *p = &st->peers[l];
    uint64_t i = TLM_MAX(p->zc_done, atomic_load_explicit(
                                         &p->out->pulled,
                                         memory_order_acquire));
    for (; i < p->zc_sent; i++) {
        shm_zc_t *z = &p->zc[i & st->ring_mask];
        if (z->snap || !tlm_util_ranges_overlap(z->src, z->len, addr, len))
            continue;
        void *snap = malloc(z->len ? z->len : 1);
        uint32_t want = PULL_READY;
        if (snap) {
            memcpy(snap, (const void *)z->src, z->len);
            atomic_store_explicit(&z->desc->moved, (uintptr_t)snap,
                                  memory_order_relaxed);
            if (atomic_compare_exchange_strong_explicit(
                    &z->desc->state, &want, PULL_MOVED, memory_order_acq_rel,
                    memory_order_acquire)) {
                z->snap = snap;
                continue;
            }
            free(snap);
        }
        wait_pulled(st, p, i); /* taken already (or no memory) */
    }
}

/* Finish the sender's pulls up to n (n = UINT64_MAX: all) with status. */
static void finish_pulls(shm_transport_t *st, shm_peer_t *p, uint64_t n,
                         int status)
{
    while (p->zc_done < n && p->zc_done < p->zc_sent) {
        shm_zc_t z = p->zc[p->zc_done++ & st->ring_mask];
        if (p->zc_done == p->zc_sent)
            st->zc_peers--;
        free(z.snap);
        z.done(z.arg, status);
    }
}

/* A long payload as a descriptor of the caller's memory, which the
 * receiver pulls; done runs once it has (reap_pulls). */
static inline int send_zc_impl(tlm_transport_t *tp, int peer_rank,
                               const void *hdr, size_t hdr_len,
                               const void *data, size_t len,
                               tlm_sent_fn_t done, void *arg, bool fenced)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    shm_pull_t d = {(uintptr_t)data, len, (uint32_t)hdr_len, PULL_READY, 0};
    shm_peer_t *p;
    uint8_t *dst;
    int rc = shm_reserve(st, peer_rank, sizeof(d) + hdr_len, &p, &dst);
    if (TLM_UNLIKELY(rc != TELEMEM_OK))
        return rc;
    memcpy(dst, &d, sizeof(d));
    memcpy(dst + sizeof(d), hdr, hdr_len);
    if (TLM_UNLIKELY(p->zc_sent - p->zc_done > st->ring_mask))
        /* The ring had room, so its older pulls are done: reap them
         * before their entries are reused. */
        finish_pulls(st, p, atomic_load_explicit(&p->out->pulled,
                                                 memory_order_acquire),
                     TELEMEM_OK);
    shm_zc_t *z = &p->zc[p->zc_sent++ & st->ring_mask];
    z->done = done;
    z->arg = arg;
    z->desc = (shm_pull_t *)(void *)dst;
    z->src = (uintptr_t)data;
    z->len = len;
    z->snap = NULL;
    z->taken_at = 0;
    if (p->zc_sent - p->zc_done == 1)
        st->zc_peers++;
    shm_commit(st, p, sizeof(d) + hdr_len, CELL_PULL, fenced);
    return TELEMEM_OK;
}

static int shm_send_zc(tlm_transport_t *tp, int peer_rank, const void *hdr,
                       size_t hdr_len, const void *data, size_t len,
                       tlm_sent_fn_t done, void *arg)
{
    return send_zc_impl(tp, peer_rank, hdr, hdr_len, data, len, done, arg,
                        false);
}

static int shm_send_zc_fenced(tlm_transport_t *tp, int peer_rank,
                              const void *hdr, size_t hdr_len,
                              const void *data, size_t len,
                              tlm_sent_fn_t done, void *arg)
{
    return send_zc_impl(tp, peer_rank, hdr, hdr_len, data, len, done, arg,
                        true);
}

/* Does peer map [data, data+len)?  Every local peer imports this
 * process's telemem_malloc_all blocks (a peer that could not pulls with
 * process_vm_readv instead: pull_payload). */
static bool shm_zc_mapped(tlm_transport_t *tp, int peer, const void *data,
                          size_t len)
{
    (void)peer; /* only ever asked for local peers */
    return tp->direct && tlm_window_mine(tp->direct, (uintptr_t)data, len);
}

/* The receivers' finished pulls: their sources may change again.  After
 * the drain, so that an ack delivered there (a put_nb's) never overtakes
 * the release of its source. */
static void reap_pulls(shm_transport_t *st)
{
    for (int l = 0; l < st->nlocal && st->zc_peers; l++) {
        shm_peer_t *p = &st->peers[l];
        if (l != st->my_local && p->zc_done != p->zc_sent)
            finish_pulls(st, p, atomic_load_explicit(&p->out->pulled,
                                                     memory_order_acquire),
                         TELEMEM_OK);
    }
}

/* Copy n bytes at addr in p's memory to dst, the last tlm_util_tail_len(n)
 * of them last and in one store (a put's last word, telemem.h). */
static int cma_pull(shm_peer_t *p, void *dst, uint64_t addr, size_t n)
{
    size_t tail = tlm_util_tail_len(n);
    uint64_t last = 0;
    struct iovec l[2] = {{dst, n - tail}, {&last, tail}};
    struct iovec r = {(void *)(uintptr_t)addr, n};
    int li = n > tail ? 0 : 1;
    while (r.iov_len) {
        ssize_t k = process_vm_readv(p->pid, l + li, (unsigned long)(2 - li),
                                     &r, 1, 0);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            int err = k < 0 ? errno : EFAULT;
            if (err != ESRCH)
                tlm_error("pulling %zu bytes from rank %d (pid %d): %s", n,
                          p->rank, (int)p->pid, strerror(err));
            return err == ESRCH ? TELEMEM_ERR_PEER_DEAD : TELEMEM_ERR_TRANSPORT;
        }
        r.iov_base = (char *)r.iov_base + k;
        r.iov_len -= (size_t)k;
        for (size_t left = (size_t)k; left && li < 2;) {
            size_t t = TLM_MIN(left, l[li].iov_len);
            l[li].iov_base = (char *)l[li].iov_base + t;
            l[li].iov_len -= t;
            left -= t;
            if (l[li].iov_len == 0)
                li++;
        }
    }
    atomic_thread_fence(memory_order_release);
    tlm_util_store_once((char *)dst + n - tail, &last, tail);
    return TELEMEM_OK;
}

/* Copy n bytes at addr in p's memory to dst as cma_pull does: with
 * memcpy when they lie in one of p's telemem_malloc_all blocks mapped here
 * (the window driver's shared memory: no system call, and process_vm_readv
 * copies several times slower than memcpy on some machines,
 * docs/shm.md), else with process_vm_readv. */
static int pull_payload(shm_transport_t *st, shm_peer_t *p, void *dst,
                        uint64_t addr, size_t n)
{
    const char *src = st->super.direct && addr == (uintptr_t)addr
                          ? tlm_window_map(st->super.direct, p->rank,
                                           (uintptr_t)addr, n)
                          : NULL;
    if (!src)
        return cma_pull(p, dst, addr, n);
    tlm_util_copy_last(dst, src, n);
    return TELEMEM_OK;
}

/* A pull message from p: the payload straight to where the AM layer
 * places it, else pulled behind a copy of the header and delivered whole.
 * TELEMEM_OK (consumed) or TELEMEM_ERR_AGAIN (deferred: stays in the
 * ring). */
static int pull_in(shm_transport_t *st, shm_peer_t *p, const uint8_t *msg,
                   size_t len)
{
    shm_pull_t *dp = (shm_pull_t *)(uintptr_t)msg, d;
    if (len < sizeof(d) || dp->hdr_len != len - sizeof(d) ||
        dp->len > (64ull << 30)) {
        tlm_error("peer %d sent a bad pull descriptor (%zu bytes)", p->rank,
                  len);
        return TELEMEM_OK;
    }
    d.addr = dp->addr;
    d.len = dp->len;
    d.hdr_len = dp->hdr_len;
    uint32_t want = PULL_READY;
    if (!atomic_compare_exchange_strong_explicit(&dp->state, &want,
                                                 PULL_TAKEN,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire) &&
        want == PULL_MOVED) /* the sender copied it away: read the copy */
        d.addr = atomic_load_explicit(&dp->moved, memory_order_relaxed);
    const uint8_t *hdr = msg + sizeof(d);
    size_t plen = (size_t)d.len;
    void *dst = st->place ? st->place(st->deliver_arg, p->rank, hdr,
                                      d.hdr_len, plen) : NULL;
    if (dst) {
        int rc = pull_payload(st, p, dst, d.addr, plen);
        st->placed(st->deliver_arg, p->rank, hdr, d.hdr_len, plen, rc);
        return TELEMEM_OK;
    }
    uint8_t *whole = malloc(d.hdr_len + plen);
    if (!whole) {
        tlm_error("no memory to receive a message of %zu bytes from rank %d",
                  d.hdr_len + plen, p->rank);
        return TELEMEM_OK;
    }
    memcpy(whole, hdr, d.hdr_len);
    int rc = pull_payload(st, p, whole + d.hdr_len, d.addr, plen);
    if (rc == TELEMEM_OK &&
        st->deliver(st->deliver_arg, p->rank, whole, d.hdr_len + plen) != 0)
        rc = TELEMEM_ERR_AGAIN;
    free(whole);
    return rc == TELEMEM_ERR_AGAIN ? rc : TELEMEM_OK;
}

/* One message from p (inline or in the sender's buffer), pulled or not. */
static inline int deliver_one(shm_transport_t *st, shm_peer_t *p,
                              const shm_cell_t *c, const uint8_t *msg,
                              uint32_t len, bool fenced)
{
    if (TLM_LIKELY(c->kind != CELL_PULL))
        return st->deliver(st->deliver_arg, p->rank, msg, len) != 0
                   ? TELEMEM_ERR_AGAIN : TELEMEM_OK;
    int rc = pull_in(st, p, msg, len);
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
            space_slow(st, p);
    }
    return n;
}

/* Senders that contacted this process since the last poll: their buffer
 * pools go into its page tables now, while the peers' pools mapped so
 * far total at most POPULATE_PEERS_MAX (populate_bufs), so that a pool
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
            populate_bufs(m, MADV_POPULATE_READ, len);
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
        reap_pulls(st);
    return total;
}

static int shm_progress(tlm_transport_t *tp, int max)
{
    return progress_impl(tp, max, false);
}

static int shm_progress_fenced(tlm_transport_t *tp, int max)
{
    return progress_impl(tp, max, true);
}

/* Is local peer l dead?  Each process holds an exclusive flock on its
 * segment for its whole life; the kernel drops it when the process dies
 * (even as a zombie).  A dead peer will never release the buffers still in
 * flight to it: they are taken back here, or the survivors run out of
 * buffers for each other. */
static bool lock_free(const shm_transport_t *st, int l)
{
    int fd = st->maps[l].fd;
    if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) != 0)
        return false;
    flock(fd, LOCK_UN);
    return true;
}

static bool local_dead(shm_transport_t *st, int l)
{
    if (!lock_free(st, l))
        return false;
    shm_peer_t *p = &st->peers[l];
    while (p->fhead != p->ftail) {
        uint32_t sl = p->fifo[p->fhead++ % st->buf_count];
        atomic_store_explicit(&st->maps[st->my_local].slot_state[sl], 0,
                              memory_order_relaxed);
        st->free_q[st->free_tail++ % st->buf_count] = sl;
    }
    /* What it pulled is done; what it did not pull never will be. */
    finish_pulls(st, p, atomic_load_explicit(&p->out->pulled,
                                             memory_order_acquire),
                 TELEMEM_OK);
    finish_pulls(st, p, UINT64_MAX, TELEMEM_ERR_PEER_DEAD);
    return true;
}

/* Out of buffers: maybe some are held by a dead peer (checked at most
 * every 50 ms, since it costs a system call per peer). */
static void reclaim_from_dead(shm_transport_t *st)
{
    double now = tlm_util_now();
    if (now < st->next_dead_check)
        return;
    st->next_dead_check = now + 0.05;
    for (int l = 0; l < st->nlocal; l++)
        if (l != st->my_local && st->peers[l].fhead != st->peers[l].ftail)
            local_dead(st, l);
}

/* A peer that finalized and closed its transport is gone, not dead: in
 * the finalize barrier the ranks that leave first must not turn the others'
 * last waits into TELEMEM_ERR_PEER_DEAD (everything they owe was sent
 * before they left the barrier). */
static int shm_peer_alive(tlm_transport_t *tp, int peer_rank)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int l = st->local_of_rank[peer_rank];
    if (l < 0 || l == st->my_local)
        return TELEMEM_OK;
    if (!local_dead(st, l))
        return TELEMEM_OK;
    return st->maps[l].hdr &&
                   __atomic_load_n(&st->maps[l].hdr->departed, __ATOMIC_ACQUIRE)
               ? TELEMEM_OK
               : TELEMEM_ERR_PEER_DEAD;
}

/* ---- set-up and tear-down ---------------------------------------------- */

static void unmap_all(shm_transport_t *st)
{
    for (int l = 0; st->maps && l < st->nlocal; l++) {
        if (st->maps[l].hdr)
            munmap(st->maps[l].hdr, st->maps[l].hdr->seg_size);
        if (st->maps[l].fd >= 0)
            close(st->maps[l].fd);
    }
}

static void shm_close(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    if (st->super.direct)
        st->super.direct->ops->close(st->super.direct);
    /* Closing ends the pulls nobody made (the engine frees their ops). */
    for (int l = 0; st->peers && st->maps && l < st->nlocal; l++)
        if (st->peers[l].zc)
            finish_pulls(st, &st->peers[l], UINT64_MAX,
                         TELEMEM_ERR_NOT_INITIALIZED);
    /* Before the lock goes (unmap_all closes the segment): left, not died. */
    if (st->maps && st->my_local >= 0 && st->my_local < st->nlocal &&
        st->maps[st->my_local].hdr)
        __atomic_store_n(&st->maps[st->my_local].hdr->departed, 1u,
                         __ATOMIC_RELEASE);
    unmap_all(st);
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

/* Is a receiver reading one of this process's pulls right now?  It
 * finishes within about the time of its copy, sooner than a sleep and a
 * wake-up would take in a VM (20-30 us measured here, 2026-11-26: a 256 KiB
 * ping-pong took 29 us per message where waits slept, 7.7 us where they
 * did not), so a wait polls on instead of sleeping - for at most
 * PULL_SPIN_S plus the copy at PULL_SPIN_BW from when a wait first saw it
 * taken, in case the receiver lost its CPU in the middle. */
#define PULL_SPIN_S 50e-6
#define PULL_SPIN_BW 1e9
static bool pull_under_way(shm_transport_t *st)
{
    double now = 0;
    for (int l = 0; l < st->nlocal && st->zc_peers; l++) {
        shm_peer_t *p = &st->peers[l];
        if (l == st->my_local || p->zc_done == p->zc_sent)
            continue;
        uint64_t i = TLM_MAX(p->zc_done, atomic_load_explicit(
                                             &p->out->pulled,
                                             memory_order_acquire));
        if (i >= p->zc_sent)
            continue;
        shm_zc_t *z = &p->zc[i & st->ring_mask];
        if (atomic_load_explicit(&z->desc->state, memory_order_acquire) !=
            PULL_TAKEN)
            continue;
        if (now == 0)
            now = tlm_util_now();
        if (z->taken_at == 0)
            z->taken_at = now;
        if (now - z->taken_at < PULL_SPIN_S + (double)z->len / PULL_SPIN_BW)
            return true;
    }
    return false;
}

/* Ask the receivers this process waits on for room (its ring to them was
 * full, or its buffers are all with them) to ring when they make some,
 * then make every local process's earlier stores visible to the caller's
 * last look (membarrier: senders only need a compiler barrier), or fence
 * where that is not available.  A thread that sleeps while another sleeps
 * on the doorbell calls this alone: the room it waits for rings that
 * sleeper, which wakes it. */
static void shm_wait_want(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    for (int l = 0; l < st->nlocal; l++) {
        shm_peer_t *p = &st->peers[l];
        if (l != st->my_local &&
            (p->blocked || (st->starved && p->fhead != p->ftail)))
            atomic_store_explicit(&p->out->want_space, 1,
                                  memory_order_relaxed);
    }
    if (!st->mb ||
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}

/* A wait is about to sleep: announce it (senders look at the bell after
 * each message), then shm_wait_want. */
static int shm_wait_arm(tlm_transport_t *tp, int *fd_p)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    if (TLM_UNLIKELY(st->zc_peers) && pull_under_way(st))
        return TELEMEM_ERR_AGAIN;
    atomic_store_explicit(st->maps[st->my_local].doorbell, BELL_SLEEPING,
                          memory_order_relaxed);
    shm_wait_want(&st->super);
    *fd_p = st->bell_fd;
    return TELEMEM_OK;
}

/* The sleep is over: the bell says awake, and the datagrams go.  Returns
 * the time of the earliest ring (0 if none), from which the waits learn
 * what this wake-up cost.  A datagram from outside the job (the socket's
 * name is not secret) can only skew that figure, which the waits bound. */
static int64_t shm_wait_disarm(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    atomic_store(st->maps[st->my_local].doorbell, BELL_AWAKE);
    int64_t first = 0, t;
    ssize_t r;
    while ((r = recv(st->bell_fd, &t, sizeof(t), MSG_DONTWAIT)) >= 0)
        if (r == (ssize_t)sizeof(t) && t > 0 && (first == 0 || t < first))
            first = t;
    return first;
}

static const tlm_transport_ops_t shm_ops = {
    .kick = shm_kick,
    .kick_word = shm_kick_word,
    .kick_fd = shm_kick_fd,
    .wake = shm_wake,
    .wait_arm = shm_wait_arm,
    .wait_disarm = shm_wait_disarm,
    .wait_want = shm_wait_want,
    .connect = shm_connect,
    .send = shm_send,
    .send_fill = shm_send_fill,
    .send_zc = shm_send_zc,
    .protect = shm_protect,
    .zc_mapped = shm_zc_mapped,
    .progress = shm_progress,
    .peer_alive = shm_peer_alive,
    .close = shm_close,
};

/* Where membarrier() cannot order the senders' stores (st->fence). */
static const tlm_transport_ops_t shm_ops_fenced = {
    .kick = shm_kick,
    .kick_word = shm_kick_word,
    .kick_fd = shm_kick_fd,
    .wake = shm_wake,
    .wait_arm = shm_wait_arm,
    .wait_disarm = shm_wait_disarm,
    .wait_want = shm_wait_want,
    .connect = shm_connect,
    .send = shm_send_fenced,
    .send_fill = shm_send_fill_fenced,
    .send_zc = shm_send_zc_fenced,
    .protect = shm_protect,
    .zc_mapped = shm_zc_mapped,
    .progress = shm_progress_fenced,
    .peer_alive = shm_peer_alive,
    .close = shm_close,
};

/* The abstract socket name of rank's doorbell, or with kind "kick" of its
 * kick socket (no file, gone with the process; ranks of one node share a
 * network namespace). */
static socklen_t sock_name(struct sockaddr_un *a, const char *jobid, int rank,
                           const char *kind)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    int k = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
                     "telemem-%s-%d-%s", jobid, rank, kind);
    if (k < 0 || (size_t)k >= sizeof(a->sun_path) - 1)
        k = (int)sizeof(a->sun_path) - 2; /* cut: still unique enough */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
}

static socklen_t bell_name(struct sockaddr_un *a, const char *jobid, int rank)
{
    return sock_name(a, jobid, rank, "bell");
}

/* A datagram socket of this process bound to its name of kind. */
static int bound_socket(const tlm_transport_params_t *p, const char *kind)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tlm_error("socket(AF_UNIX): %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un a;
    socklen_t len = sock_name(&a, p->jobid, p->rank, kind);
    if (bind(fd, (const struct sockaddr *)&a, len) != 0) {
        tlm_error("bind(@%s): %s", a.sun_path + 1, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* This process's doorbell and kick sockets, and its registration for
 * membarrier. */
static int open_bell(shm_transport_t *st, const tlm_transport_params_t *p)
{
    st->bell_fd = bound_socket(p, "bell");
    st->kick_fd = st->bell_fd >= 0 ? bound_socket(p, "kick") : -1;
    if (st->kick_fd < 0)
        return TELEMEM_ERR_TRANSPORT;
    st->mb = syscall(SYS_membarrier,
                     MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    if (!st->mb)
        tlm_debug("membarrier: %s; senders fence before the doorbell",
                  strerror(errno));
    return TELEMEM_OK;
}

static int create_own(shm_transport_t *st, const tlm_transport_params_t *p)
{
    shm_seg_hdr_t h = {0};
    layout(&h, st->nlocal, st->buf_size, (size_t)p->config->SHM_BUF_COUNT,
           (size_t)p->config->SHM_RING);
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
        if (seg_name(st->name, sizeof(st->name), p->jobid, p->rank) != 0) {
            tlm_error("getrandom: %s", strerror(errno));
            st->name[0] = '\0';
            return TELEMEM_ERR_TRANSPORT;
        }
        fd = shm_open(st->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno == EEXIST) /* not ours: another name */
            tlm_warn("/dev/shm%s exists already (not created by this job): "
                     "taking another name", st->name);
        else if (fd < 0)
            break;
    }
    if (fd < 0) {
        tlm_error("shm_open(%s): %s", st->name, strerror(errno));
        st->name[0] = '\0';
        return TELEMEM_ERR_TRANSPORT;
    }
    char key[32];
    seg_key(key, sizeof(key), p->rank);
    int rc = tlm_boot_put(p->boot, key, st->name, strlen(st->name) + 1);
    if (rc != TELEMEM_OK) {
        close(fd);
        return rc;
    }
    shm_map_t *m = &st->maps[st->my_local];
    m->fd = fd;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        tlm_error("flock(%s): %s", st->name, strerror(errno));
        return TELEMEM_ERR_TRANSPORT;
    }
    if (ftruncate(fd, (off_t)h.seg_size) != 0) {
        tlm_error("ftruncate(%s, %llu): %s", st->name,
                  (unsigned long long)h.seg_size, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    void *base = mmap(NULL, h.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                      fd, 0);
    if (base == MAP_FAILED) {
        tlm_error("mmap(%s, %llu): %s", st->name,
                  (unsigned long long)h.seg_size, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    h.magic = SHM_MAGIC;
    h.version = SHM_VERSION;
    h.rank = p->rank;
    h.mb_ok = st->mb;
    h.pid = (int32_t)getpid();
    h.base = (uintptr_t)base;
    memcpy(base, &h, sizeof(h));
    map_fill(m, base);
    m->rank = p->rank;
    populate_bufs(m, MADV_POPULATE_WRITE, POPULATE_OWN_MAX);
    return TELEMEM_OK;
}

static int map_peer(shm_transport_t *st, const tlm_transport_params_t *p,
                    int l, int rank)
{
    char name[128], key[32];
    size_t len;
    shm_map_t *m = &st->maps[l];
    seg_key(key, sizeof(key), rank);
    int rc = tlm_boot_get(p->boot, key, name, sizeof(name), &len);
    if (rc != TELEMEM_OK || len < 2 || name[len - 1] != '\0' ||
        name[0] != '/' || strchr(name + 1, '/')) {
        tlm_error("rank %d published no usable segment name (%s)", rank,
                  telemem_strerror(rc));
        return rc != TELEMEM_OK ? rc : TELEMEM_ERR_TRANSPORT;
    }
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
    if (fd < 0) {
        tlm_error("shm_open(%s) of rank %d: %s", name, rank, strerror(errno));
        return TELEMEM_ERR_TRANSPORT;
    }
    m->fd = fd;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof(shm_seg_hdr_t)) {
        tlm_error("segment %s of rank %d is too small", name, rank);
        return TELEMEM_ERR_TRANSPORT;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        /* only this user's own, private object is a rank's segment */
        tlm_error("segment %s of rank %d belongs to uid %ld with mode %o, "
                  "not to this user with mode 600: refused", name, rank,
                  (long)sb.st_uid, (unsigned)(sb.st_mode & 0777));
        return TELEMEM_ERR_TRANSPORT;
    }
    void *base = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE,
                      MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        tlm_error("mmap(%s): %s", name, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    shm_seg_hdr_t *h = base;
    if (h->magic != SHM_MAGIC || h->version != SHM_VERSION ||
        h->rank != rank || h->nlocal != st->nlocal ||
        h->seg_size != (uint64_t)sb.st_size) {
        tlm_error("segment %s of rank %d has a different layout (version "
                  "%u, %d local ranks): mixed Telemem versions or settings?",
                  name, rank, h->version, h->nlocal);
        munmap(base, (size_t)sb.st_size);
        return TELEMEM_ERR_TRANSPORT;
    }
    map_fill(m, base);
    m->rank = rank;
    st->mb = st->mb && h->mb_ok; /* every rank computes the same */
    shm_peer_t *pe = &st->peers[l];
    pe->bell = m->doorbell;
    pe->local = l;
    pe->pid = (pid_t)h->pid;
    st->bell_to[l].len = bell_name(&st->bell_to[l].addr, p->jobid, rank);
    return TELEMEM_OK;
}

/* Can this process pull from every local peer?  A read of each peer's
 * segment header where the peer mapped it: Yama's ptrace_scope (1 allows
 * it only towards descendants, 2 and 3 only with CAP_SYS_PTRACE), other
 * users, a container's filter all show here.  The first refusal is logged
 * (info: the job runs on, with two copies). */
static bool cma_probe(shm_transport_t *st)
{
    for (int l = 0; l < st->nlocal; l++) {
        if (l == st->my_local)
            continue;
        const shm_seg_hdr_t *h = st->maps[l].hdr;
        uint32_t magic = 0;
        struct iovec lo = {&magic, sizeof(magic)};
        struct iovec ro = {(void *)(uintptr_t)h->base, sizeof(magic)};
        if (process_vm_readv(st->peers[l].pid, &lo, 1, &ro, 1, 0) !=
                (ssize_t)sizeof(magic) || magic != SHM_MAGIC) {
            tlm_info("process_vm_readv from rank %d (pid %d): %s; shared "
                     "memory copies long payloads twice (no CMA pull)",
                     st->maps[l].rank, (int)st->peers[l].pid,
                     magic != SHM_MAGIC && errno == 0 ? "wrong data"
                                                      : strerror(errno));
            return false;
        }
    }
    return true;
}

/* A pull threshold: the setting (nonzero), else the profile's last
 * "<key> <bytes> ..." line that holds a size (telemem-run --calibrate),
 * else dflt.  what names it in the debug log. */
static size_t pull_threshold(const tlm_transport_params_t *p, size_t setting,
                             const char *key, const char *what, size_t dflt)
{
    if (setting)
        return setting;
    size_t thr = dflt;
    size_t pos = 0;
    const tlm_profile_entry_t *e;
    while ((e = tlm_util_profile_next(p->profile, key, &pos))) {
        unsigned long long v = e->value[0];
        if (v == 0)
            continue;
        thr = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
        tlm_debug("profile %s: %s from %zu bytes", p->profile->path, what,
                  thr);
    }
    return TLM_MAX(thr, 1);
}

/* After every rank has mapped the others: pulls only if every local rank
 * can pull from every other (all decide alike, from the headers). */
static int setup_pulls(shm_transport_t *st, const tlm_transport_params_t *p)
{
    shm_seg_hdr_t *me = st->maps[st->my_local].hdr;
    me->cma_ok = p->config->SHM_CMA && st->nlocal > 1 && cma_probe(st);
    int rc = tlm_boot_fence(p->boot); /* everyone has probed */
    if (rc != TELEMEM_OK)
        return rc;
    st->cma = p->config->SHM_CMA && st->nlocal > 1;
    for (int l = 0; l < st->nlocal; l++)
        st->cma = st->cma && st->maps[l].hdr->cma_ok;
    if (p->config->SHM_CMA && st->nlocal > 1 && me->cma_ok && !st->cma)
        tlm_debug("a local rank cannot pull: no CMA pull");
    if (!st->cma)
        return TELEMEM_OK;
    st->super.zc_min = pull_threshold(p, p->config->SHM_CMA_THRESHOLD,
                                      "shm-pull", "pull", SHM_PULL_DEFAULT);
    st->super.zc_mapped_min =
        pull_threshold(p, p->config->SHM_MAP_THRESHOLD, "shm-map",
                       "mapped pull", SHM_MAP_DEFAULT);
    st->super.zc_local_max = SIZE_MAX;
    st->super.zc_max_msg = 4u << 20;
    return TELEMEM_OK;
}

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
        rc = open_bell(st, p);
    if (rc == TELEMEM_OK)
        rc = create_own(st, p);
    if (rc == TELEMEM_OK && node && leader == p->rank)
        rc = tlm_shm_node_create(p, &st->node);
    int frc = tlm_boot_fence(p->boot); /* everyone has created */
    if (rc == TELEMEM_OK)
        rc = frc;
    for (int r = 0; rc == TELEMEM_OK && r < p->size; r++) {
        int l = st->local_of_rank[r];
        if (l >= 0 && r != p->rank)
            rc = map_peer(st, p, l, r);
    }
    if (rc == TELEMEM_OK && node && leader != p->rank)
        rc = tlm_shm_node_map(p, leader, &st->node);
    frc = tlm_boot_fence(p->boot); /* everyone has mapped */
    if (rc == TELEMEM_OK)
        rc = frc;
    if (rc == TELEMEM_OK)
        rc = setup_pulls(st, p);
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
        rc = tlm_window_open(p, st->local_of_rank, wake_rank, st,
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

/* shm_int.h - what the files of the shm transport share, and no other file
 * includes: the segment's layout (descriptor cells, rings, pull
 * descriptors, the header), the transport's object and the functions one
 * of its files calls in another.  shm_transport.c: the ops tables, open
 * and close; shm_seg.c: the segments (create, map, populate) and their
 * owners' death; shm_ring.c: the message path (send, drain, progress);
 * shm_inl.h: the sender's inline half of it; shm_pull.c: the pull path;
 * shm_bell.c: the doorbell, the kicks and the sleeping waits.  Protocol
 * and memory formula: docs/shm.md. */
#ifndef TLM_SHM_INT_H
#define TLM_SHM_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "backends/transport.h"
#include "backends/shm/shm_node.h"

#define SHM_MAGIC 0x544c4d53u /* "TLMS" */
#define SHM_VERSION 5u
#define CELL_SIZE 64u
#define CELL_INLINE 48u
#define SLOT_INLINE UINT32_MAX
/* A buffer holds SHM_BUF_SIZE bytes of payload plus the largest AM header,
 * so that a full-size fragment is one message. */
#define SHM_HDR_ROOM 128u
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
     * at `moved` (PULL_MOVED): tlm_shm_protect. */
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
    double next_dead_check;   /* see tlm_shm_reclaim_from_dead() */
    bool cma;                 /* pulls on (every local rank can pull) */
    int zc_peers;             /* peers with pulls outstanding */
    tlm_place_fn_t place;
    tlm_placed_fn_t placed;
    tlm_shm_node_t node;      /* the node area (shm_node.c), or none */
    char name[128];
} shm_transport_t;

/* ---- shm_seg.c: segments ------------------------------------------------ */

/* This process's segment: create it under a fresh name, publish the name,
 * lock it for life (tlm_shm_lock_free), size and map it. */
int tlm_shm_seg_create(shm_transport_t *st, const tlm_transport_params_t *p);
/* Map local index l's segment (rank's), checked: this user's, private,
 * of the same layout. */
int tlm_shm_seg_map(shm_transport_t *st, const tlm_transport_params_t *p, int l,
                    int rank);
void tlm_shm_seg_unmap_all(shm_transport_t *st);
/* Map the buffer pool of segment m into this process's page tables now
 * (allocating its pages on the owner's first call): a page first touched
 * by a transfer costs a fault on each side, and a pool cycled through
 * for the first time made a 256 KiB put exchange 8x slower than later
 * ones (0.38 ms against 0.048 ms, 2026-11-26).  Only a pool of at most
 * max bytes: the owner passes POPULATE_OWN_MAX (its pool is allocated at
 * start; a larger one, set by TELEMEM_SHM_BUF_*, stays sparse until
 * used), a peer's pool when the peer first sends here while the peers'
 * pools mapped so far total at most POPULATE_PEERS_MAX (first_senders,
 * shm_ring.c): mapping every peer's at start cost start-up (n = 64,
 * 4 MiB pools: 1.7 s more) and memory for peers never heard from.  Best
 * effort: a kernel without MADV_POPULATE_* (before 5.14) faults them in
 * as before. */
#define POPULATE_OWN_MAX (256ull << 20)
#define POPULATE_PEERS_MAX (64ull << 20)
void tlm_shm_populate(const shm_map_t *m, int advice, uint64_t max);
/* Has local peer l's owner gone (its lock is free)? */
bool tlm_shm_lock_free(const shm_transport_t *st, int l);
void tlm_shm_reclaim_from_dead(shm_transport_t *st);
int tlm_shm_peer_alive(tlm_transport_t *tp, int peer_rank);

/* ---- shm_ring.c: the message path --------------------------------------- */

int tlm_shm_connect(tlm_transport_t *tp, int peer_rank);
int tlm_shm_send(tlm_transport_t *tp, int peer_rank, const void *hdr,
                 size_t hdr_len, const struct iovec *iov, int iovcnt);
int tlm_shm_send_fenced(tlm_transport_t *tp, int peer_rank, const void *hdr,
                        size_t hdr_len, const struct iovec *iov, int iovcnt);
int tlm_shm_send_fill(tlm_transport_t *tp, int peer_rank, const void *hdr,
                      size_t hdr_len, size_t len, tlm_fill_fn_t fill,
                      void *arg);
int tlm_shm_send_fill_fenced(tlm_transport_t *tp, int peer_rank,
                             const void *hdr, size_t hdr_len, size_t len,
                             tlm_fill_fn_t fill, void *arg);
int tlm_shm_progress(tlm_transport_t *tp, int max);
int tlm_shm_progress_fenced(tlm_transport_t *tp, int max);

/* ---- shm_pull.c: the pull path ------------------------------------------ */

int tlm_shm_send_zc(tlm_transport_t *tp, int peer_rank, const void *hdr,
                    size_t hdr_len, const void *data, size_t len,
                    tlm_sent_fn_t done, void *arg);
int tlm_shm_send_zc_fenced(tlm_transport_t *tp, int peer_rank, const void *hdr,
                           size_t hdr_len, const void *data, size_t len,
                           tlm_sent_fn_t done, void *arg);
void tlm_shm_protect(tlm_transport_t *tp, int peer_rank, uintptr_t addr,
                     size_t len);
bool tlm_shm_zc_mapped(tlm_transport_t *tp, int peer, const void *data,
                       size_t len);
void tlm_shm_finish_pulls(shm_transport_t *st, shm_peer_t *p, uint64_t n,
                          int status);
void tlm_shm_reap_pulls(shm_transport_t *st);
int tlm_shm_pull_in(shm_transport_t *st, shm_peer_t *p, const uint8_t *msg,
                    size_t len);
bool tlm_shm_pull_under_way(shm_transport_t *st);
int tlm_shm_pull_setup(shm_transport_t *st, const tlm_transport_params_t *p);

/* ---- shm_bell.c: the doorbell, kicks and sleeping ----------------------- */

void tlm_shm_ring_slow(shm_transport_t *st, shm_peer_t *p);
void tlm_shm_space_slow(shm_transport_t *st, shm_peer_t *p);
bool tlm_shm_kick(tlm_transport_t *tp, int rank);
_Atomic uint32_t *tlm_shm_kick_word(tlm_transport_t *tp);
int tlm_shm_kick_fd(tlm_transport_t *tp);
void tlm_shm_wake_rank(void *arg, int rank);
void tlm_shm_wake(tlm_transport_t *tp, int rank);
void tlm_shm_wait_want(tlm_transport_t *tp);
int tlm_shm_wait_arm(tlm_transport_t *tp, int *fd_p);
int64_t tlm_shm_wait_disarm(tlm_transport_t *tp);
socklen_t tlm_shm_bell_name(struct sockaddr_un *a, const char *jobid, int rank);
int tlm_shm_bell_open(shm_transport_t *st, const tlm_transport_params_t *p);

#endif

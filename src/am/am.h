/* am.h - the active-message engine's interface to core: peers and their
 * transports, ordered per-peer send queues with transparent fragmentation,
 * and dispatch of received messages by type. */
#ifndef TLM_AM_H
#define TLM_AM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "am/am_wire.h"
#include "backends/transport.h"
#include "util/util.h"

/* Handler of one internal message type: src rank, whole message. */
typedef void (*tlm_am_dispatch_fn_t)(int src, const void *msg, size_t len);
/* Placement of one type's long payloads (transport.h, tlm_place_fn_t):
 * where the plen payload bytes after header hdr may be written before the
 * message is delivered, or NULL; then, in order, the message without its
 * payload once that is in place (status TELEMEM_OK) or lost. */
typedef void *(*tlm_am_place_fn_t)(int src, const void *hdr, size_t hdr_len,
                                   size_t plen);
typedef void (*tlm_am_placed_fn_t)(int src, const void *hdr, size_t hdr_len,
                                   size_t plen, int status);

typedef struct tlm_am_sendop tlm_am_sendop_t;
typedef void (*tlm_am_done_fn_t)(tlm_am_sendop_t *op, int status);
/* Produces bytes [off, off + len) of a stream into dst (pack engine). */
typedef void (*tlm_am_pack_fn_t)(void *arg, void *dst, size_t off,
                                 size_t len);

/* A queued outgoing message or fragmented stream.  The header template is
 * copied for each fragment; for fragmentable types its `offset` field is
 * set per fragment and `data`+offset follows it. */
struct tlm_am_sendop {
    tlm_am_sendop_t *next;
    uint64_t hdr[TLM_AM_MAX_HDR / 8];
    uint32_t hdr_len;
    bool frag;          /* header is a tlm_am_frag_hdr_t: stream data */
    bool sent;          /* every fragment handed to the transport (and,
                         * for zc, no longer read by it) */
    bool zc;            /* the data stays unchanged until `sent`: the
                         * transport may send it without a copy */
    bool posted;        /* zc: out of the queue, waiting for zc_out */
    uint32_t zc_out;    /* zero-copy fragments the transport still reads */
    bool live;          /* streams live memory that later requests from the
                         * same peer may change (get replies): see
                         * tlm_am_protect(); counted in its peer's `live`
                         * until it is finished (zc: read) */
    int peer;           /* set when posted */
    int status;         /* first send error, else TELEMEM_OK */
    const uint8_t *data;
    size_t data_off;    /* offset in the stream that data points at */
    tlm_am_pack_fn_t pack; /* non-NULL: data comes from pack(pack_arg..) */
    void *pack_arg;
    uintptr_t live_lo;  /* pack mode + live: memory the stream reads */
    size_t live_len;
    uint32_t align;     /* fragment payloads are multiples of it */
    size_t total;       /* bytes of data (frag) or payload (single) */
    size_t cursor;      /* next offset to send */
    void *owned;        /* freed when done (engine copies) */
    tlm_am_done_fn_t done; /* NULL: caller watches `sent` */
    void *done_arg;
};

typedef struct tlm_am_peer {
    tlm_transport_t *tp;
    size_t max_msg;
    size_t zc_min;      /* payloads this long go by send_zc (zc ops) */
    size_t zc_any_min;  /* the least of zc_min and the transport's
                         * zc_mapped_min: shorter ones never go by send_zc */
    size_t zc_local_max; /* see tlm_transport_t */
    size_t zc_max;      /* the piece of a zc payload (pump_op) */
    tlm_am_sendop_t *qhead, *qtail;
    struct tlm_am_peer *pending_next;
    bool pending;
    int rank;
    uint32_t live;      /* queued live ops (see tlm_am_sendop_t.live) */
} tlm_am_peer_t;

typedef struct tlm_am {
    tlm_am_peer_t *peers;      /* by rank */
    int nranks, rank;
    tlm_transport_t *tps[4];   /* open transports, progressed in order */
    int ntps;
    tlm_am_peer_t *pending;    /* peers with queued sends */
    tlm_am_dispatch_fn_t handlers[TLM_AM_NTYPES];
    tlm_am_place_fn_t placers[TLM_AM_NTYPES];
    tlm_am_placed_fn_t placed[TLM_AM_NTYPES];
    unsigned placing;          /* payloads being written in place */
    bool silent_writes;        /* some transport's direct driver writes
                                * without waking a sleeper (transport.h) */
    bool network;              /* some peer is reached by a transport that
                                * is not same_node_only (another node) */
    unsigned long protocol_errors;
} tlm_am_t;

extern tlm_am_t tlm_am;

/* Does a payload of len bytes at data go to peer p by send_zc (zc ops)?
 * From zc_min bytes, or from the transport's zc_mapped_min when it says
 * the peer maps that memory (transport.h, zc_mapped).  One comparison for
 * short payloads. */
static inline bool tlm_am_zc_pays(const tlm_am_peer_t *p, const void *data,
                                  size_t len)
{
    if (TLM_LIKELY(len < p->zc_any_min))
        return false;
    return len >= p->zc_min ||
           p->tp->ops->zc_mapped(p->tp, p->rank, data, len);
}

int tlm_am_init(int rank, int nranks);
/* Add an opened transport; it carries traffic to ranks with reach[r]. */
int tlm_am_add_transport(tlm_transport_t *tp, const bool *reach);
/* Ranks no transport reaches: TELEMEM_ERR_UNREACHABLE with a message. */
int tlm_am_check_reach(void);
void tlm_am_fini(void);
void tlm_am_set_handler(int type, tlm_am_dispatch_fn_t fn);
void tlm_am_set_placer(int type, tlm_am_place_fn_t place,
                       tlm_am_placed_fn_t placed);
/* The transports' deliver, place and placed upcalls. */
int tlm_am_deliver(void *arg, int src, const void *msg, size_t len);
void *tlm_am_place(void *arg, int src, const void *hdr, size_t hdr_len,
                   size_t plen);
void tlm_am_placed(void *arg, int src, const void *hdr, size_t hdr_len,
                   size_t plen, int status);

/* Send one message (hdr + len bytes of data, hdr+len <= max_msg).  Never
 * blocks; on back-pressure the message is copied and queued in order.
 * TELEMEM_OK or an error (TELEMEM_ERR_NO_MEMORY, _PEER_DEAD, ...). */
int tlm_am_send_ctrl(int peer, const void *hdr, size_t hdr_len,
                     const void *data, size_t len);
/* Copy data and queue it as one message (frag false, len must fit) or a
 * fragmented stream (frag true); the copy is freed once sent. */
int tlm_am_post_copy(int peer, const void *hdr, size_t hdr_len, bool frag,
                     const void *data, size_t len);
/* Queue a stream (in order behind earlier sends) and push what fits now.
 * op->sent becomes true (and op->done runs) once every fragment is out. */
int tlm_am_post(int peer, tlm_am_sendop_t *op);
/* Take a not-yet-sent op out of its queue (caller gives up waiting).
 * Returns true when the op is the caller's again; false when the transport
 * still reads zero-copy fragments of it: it is then finished (op->done
 * runs: set it to free a heap op) once the transport lets go. */
bool tlm_am_cancel(int peer, tlm_am_sendop_t *op);
/* Progress every transport, then push queued sends.  Events or error. */
int tlm_am_progress(void);
int tlm_am_peer_alive(int peer);
/* Blocking waits: arm every transport for a sleep (transport.h,
 * wait_arm).  The file descriptors to poll go to fds[] (at most max);
 * *bounded is set when some transport cannot wake a sleeper.  Returns how
 * many fds, or TELEMEM_ERR_AGAIN when a transport has events pending (then
 * poll instead of sleeping).  tlm_am_wait_disarm() after the sleep: when
 * a peer first woke this process (CLOCK_MONOTONIC ns), where a transport
 * knows, else 0. */
int tlm_am_wait_arm(int *fds, int max, bool *bounded);
int64_t tlm_am_wait_disarm(void);
/* A thread that sleeps beside the armed one: every transport's wait_want. */
void tlm_am_wait_want(void);
/* A wait needs peer's CPU: its transport's kick (wakes peer's sleeping
 * progress thread, where the transport can); true if it woke one. */
bool tlm_am_kick(int peer);
/* This process's kick words and the fd its progress thread sleeps on to
 * be kicked (the first transport that has them: transport.h), or NULL
 * and *fd_p = -1. */
_Atomic uint32_t *tlm_am_kick_word(int *fd_p);
/* Deliver every message this rank has sent to itself (requests to self run
 * their handlers now), so a local operation that follows keeps issue
 * order.  TELEMEM_OK or a transport error. */
int tlm_am_drain_self(void);
/* Before applying a request from peer that writes [addr, addr+len): any
 * queued live stream to that peer overlapping it is copied first, so it
 * carries the data as of its own request (issue order per peer). */
void tlm_am_protect(int peer, uintptr_t addr, size_t len);

/* Fill a sendop for a fragmentable stream with header template. */
void tlm_am_sendop_init(tlm_am_sendop_t *op, const void *hdr, size_t hdr_len,
                        bool frag, const void *data, size_t total);
/* Make it a packed stream: fragments are written by pack(arg, ...) straight
 * into transport buffers; each fragment's payload a multiple of align. */
static inline void tlm_am_sendop_set_pack(tlm_am_sendop_t *op,
                                          tlm_am_pack_fn_t pack, void *arg,
                                          uint32_t align)
{
    op->pack = pack;
    op->pack_arg = arg;
    op->align = align ? align : 1;
}
/* Send one packed message (hdr + len bytes from pack(arg, dst, 0, len)) if
 * nothing is queued for peer: TELEMEM_OK, TELEMEM_ERR_AGAIN or an error. */
int tlm_am_try_send_pack(int peer, const void *hdr, size_t hdr_len,
                         size_t len, tlm_am_pack_fn_t pack, void *arg);

#include "am/am_inl.h"

#endif

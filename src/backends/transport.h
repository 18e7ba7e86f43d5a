/* transport.h - the whole contract between the AM layer and a transport:
 * an ops table that moves opaque messages to peers, never names put or get. */
#ifndef TLM_TRANSPORT_H
#define TLM_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backends/direct.h"
#include "boot/boot.h"
#include "config/config.h"
#include "util/profile.h"

typedef struct tlm_transport tlm_transport_t;

/* The kick words of a process (ops->kick_word). */
enum { TLM_KICK_LISTEN = 0, TLM_KICK_INSIDE = 1, TLM_KICK_WORDS = 2 };

/* Upcall for each received message, in order per sender.  msg is 8-byte
 * aligned and valid only during the call.  Returns TELEMEM_OK when the
 * message was consumed, or TELEMEM_ERR_AGAIN to leave it (and everything
 * after it from that sender) in place for a later progress call. */
typedef int (*tlm_deliver_fn_t)(void *arg, int src_rank, const void *msg,
                                size_t len);

/* Optional upcalls for a transport that receives a long message's payload
 * apart from its header (UCX rendezvous).  place() gets the header (the
 * first hdr_len bytes of the message, as given to send()) and the payload
 * length and returns where the payload may be written directly, or NULL:
 * then the message is received and delivered as usual.  A transport may
 * ask only from its progress call (not while a send of its own is
 * polling) and only when every message it received earlier, from any
 * sender, has been delivered: so the write keeps order per sender.  For a
 * placed message, once the payload is in (or its receive failed: status),
 * placed() takes the place of deliver(), in order with other deliveries;
 * it is called exactly once for every non-NULL place(). */
typedef void *(*tlm_place_fn_t)(void *arg, int src_rank, const void *hdr,
                                size_t hdr_len, size_t plen);
typedef void (*tlm_placed_fn_t)(void *arg, int src_rank, const void *hdr,
                                size_t hdr_len, size_t plen, int status);

/* What a transport needs at open time (filled by core). */
typedef struct tlm_transport_params {
    int rank, size;
    tlm_boot_t *boot;        /* key-value store: publish/lookup addresses */
    const char *jobid;
    const bool *same_node;   /* same_node[r]: rank r runs on this node */
    /* Every setting, the backends' own rows among them (each backend
     * declares its rows in src/backends/<name>/<name>_config.h and reads
     * them here: config->SHM_RING); valid during check, query and open
     * (a backend copies what it keeps). */
    const tlm_config_t *config;
    /* The calibration profile, read once by core: a backend looks up its
     * own lines by name (tlm_util_profile_next); NULL = none. */
    const tlm_profile_t *profile;
    bool direct;             /* TELEMEM_DIRECT is not never: open a driver */
    bool direct_cma;         /* TELEMEM_DIRECT_CMA: window may use CMA */
    size_t reg_cache_max;     /* TELEMEM_REG_CACHE_MAX: direct-path pinning */
    long net_max_peers;      /* TELEMEM_NET_MAX_PEERS, 0 = no limit */
    /* Set by backend.c for a network backend opened beside shm (auto,
     * shm+NET): it carries messages to other nodes only, so its own
     * shared-memory wires are of no use (UCX's, between containers or
     * network namespaces of one machine, fail: "Shared memory error"). */
    bool net_only;
    /* The node area core wants (bytes; 0: none): see node_base below. */
    size_t node_bytes;
    tlm_deliver_fn_t deliver;
    void *deliver_arg;       /* also the first argument of place, placed */
    tlm_place_fn_t place;    /* NULL: never place */
    tlm_placed_fn_t placed;
} tlm_transport_params_t;

/* Writes the len payload bytes of a message straight into the transport's
 * buffer (the pack engine's callback: no intermediate copy). */
typedef void (*tlm_fill_fn_t)(void *dst, size_t len, void *arg);
/* A send_zc is over: its data may change again (status TELEMEM_OK, or the
 * error that ended it). */
typedef void (*tlm_sent_fn_t)(void *arg, int status);

typedef struct tlm_transport_ops {
    /* Reach peer (first contact); cheap if already connected. */
    int (*connect)(tlm_transport_t *tp, int peer);
    /* Copy hdr + iov into one message to peer.  Never blocks or allocates:
     * TELEMEM_OK (buffers reusable), TELEMEM_ERR_AGAIN (nothing sent: poll
     * and retry) or an error (TELEMEM_ERR_PEER_DEAD, _TRANSPORT). */
    int (*send)(tlm_transport_t *tp, int peer, const void *hdr,
                size_t hdr_len, const struct iovec *iov, int iovcnt);
    /* As send, but the len payload bytes after the header are written by
     * fill(dst, len, arg), called at most once and only when the message
     * will be sent (not on TELEMEM_ERR_AGAIN). */
    int (*send_fill)(tlm_transport_t *tp, int peer, const void *hdr,
                     size_t hdr_len, size_t len, tlm_fill_fn_t fill,
                     void *arg);
    /* Optional (NULL: not offered; see zc_min).  As send with one data
     * buffer, but without copying it: data must stay unchanged until
     * done(arg, status) runs, exactly once, when the transport no longer
     * reads it (maybe before send_zc returns, else from a later call into
     * the transport).  TELEMEM_OK (done runs), TELEMEM_ERR_AGAIN or an
     * error (done does not run). */
    int (*send_zc)(tlm_transport_t *tp, int peer, const void *hdr,
                   size_t hdr_len, const void *data, size_t len,
                   tlm_sent_fn_t done, void *arg);
    /* Optional, with send_zc: [addr, addr+len) of this process is about to
     * change (a request from peer writes it); send_zc data to peer that
     * overlaps it and is not read yet must be read as it is now (a copy
     * taken before return).  For get replies streamed from live memory. */
    void (*protect)(tlm_transport_t *tp, int peer, uintptr_t addr,
                    size_t len);
    /* Optional, with send_zc: does peer read [data, data+len) of this
     * process through a mapping of its own (shm: a telemem_malloc_all
     * block in shared memory), so that send_zc pays for it from
     * zc_mapped_min bytes rather than zc_min? */
    bool (*zc_mapped)(tlm_transport_t *tp, int peer, const void *data,
                      size_t len);
    /* Blocking waits (docs/transports.md, "Sleeping").  wait_arm: this
     * process is about to sleep; from the return on, anything its progress
     * call would act on - a message, room for a send that answered
     * TELEMEM_ERR_AGAIN, a completion of its own operations, a write of the
     * transport's direct driver into this process's memory - makes *fd_p
     * readable (poll(2)), or, with *fd_p = -1, cannot happen without this
     * process's own calls.  TELEMEM_OK (armed: the caller polls once more
     * and sleeps only if that found nothing), TELEMEM_ERR_AGAIN (events
     * are pending: poll instead) or TELEMEM_ERR_UNSUPPORTED (it cannot wake
     * a sleeper: the caller sleeps for short times only;
     * tlm_backend_stub_wait_arm).  wait_disarm: the sleep is over (or was
     * not taken); stop waking, empty the fd.  It returns when a peer woke
     * this process through the fd (CLOCK_MONOTONIC ns, the earliest ring)
     * where the transport knows (shm: the doorbell's datagram carries the
     * time of the ring), else 0: the waits' spin budget follows these
     * wake-up costs (docs/wait.md).
     * Both are called by one thread at a time, as progress is. */
    int (*wait_arm)(tlm_transport_t *tp, int *fd_p);
    int64_t (*wait_disarm)(tlm_transport_t *tp);
    /* Optional: another thread of this process is about to sleep while
     * the thread that armed sleeps on or will arm the wait object
     * (docs/wait.md, "Threads"): make the peers say when they make the room
     * a send of this process waits for, as wait_arm does, without touching
     * the wait object; ordered before the caller's last look. */
    void (*wait_want)(tlm_transport_t *tp);
    /* Optional (docs/wait.md, "The progress thread"): a wait of this
     * process needs peer's CPU (a reply, an ack, room) and has waited as
     * long as a wake-up costs: wake peer's progress thread if it listens
     * and its application is outside the library; true if it did (the
     * caller then stops spinning: the woken thread may need its core).
     * kick_word: this process's TLM_KICK_WORDS words, in a cache line of
     * their own that its peers on this transport read: the application
     * keeps [TLM_KICK_INSIDE] odd while inside the library, the progress
     * thread [TLM_KICK_LISTEN] at 1 while it sleeps on kick_fd, which a
     * kick makes readable (the thread drains it: recv until EAGAIN). */
    bool (*kick)(tlm_transport_t *tp, int peer);
    _Atomic uint32_t *(*kick_word)(tlm_transport_t *tp);
    int (*kick_fd)(tlm_transport_t *tp);
    /* Optional, with node_base (NULL otherwise): peer, a rank of this
     * node, may sleep in a wait whose condition this process has just made
     * true by a store into the node area: wake it if it sleeps, as a
     * direct driver's write into its memory does.  The peer's look at its
     * condition after it announced its sleep (wait_arm) sees the store. */
    void (*wake)(tlm_transport_t *tp, int peer);
    /* Deliver up to max received messages; returns how many, or an error. */
    int (*progress)(tlm_transport_t *tp, int max);
    /* TELEMEM_OK if peer's process is alive, TELEMEM_ERR_PEER_DEAD if not.
     * Slow path (may make a system call). */
    int (*peer_alive)(tlm_transport_t *tp, int peer);
    /* Tear down; frees tp. */
    void (*close)(tlm_transport_t *tp);
} tlm_transport_ops_t;

/* Smallest max_msg a transport may offer: the largest header (fragment,
 * accumulate scale, 8-level strided descriptor) plus room for data. */
#define TLM_TRANSPORT_MIN_MSG 1024u

/* Base object: every transport embeds it first. */
struct tlm_transport {
    const tlm_transport_ops_t *ops;
    const char *name;
    size_t max_msg;      /* largest hdr + payload of one message */
    size_t zc_min;       /* payload bytes from which send_zc pays */
    size_t zc_local_max; /* longest send_zc payload that completes without
                          * the peer's help (eager; longer ones wait for
                          * the peer to poll: rendezvous); SIZE_MAX where
                          * the receiver pulls every send_zc (shm): a
                          * blocking put then returns once it is pulled */
    size_t zc_mapped_min; /* with zc_mapped: send_zc pays from this size
                           * for data the peer maps (0: never) */
    size_t zc_max_msg;   /* the piece a long send_zc payload is cut into,
                          * may exceed max_msg; 0 = as other messages.
                          * Pieces too short to pay (thresholds above it)
                          * double until they do (am's pump_op) */
    bool same_node_only; /* reaches only ranks on this node */
    bool silent_writes;  /* its direct driver writes into a peer's memory
                          * without waking the peer's sleeping waits
                          * (network RDMA): waits on a condition in the
                          * program's memory then sleep for short times */
    tlm_direct_t *direct; /* its direct-path driver (direct.h), or NULL */
    /* The node area (optional; NULL: none): params->node_bytes of memory,
     * zeroed at open, that every rank of this node the transport reaches
     * maps (each at its own address) for as long as the transport is
     * open.  Core lays it out (the collectives' flags and buffers,
     * docs/coll.md); a store into it that a sleeping peer waits for is
     * followed by ops->wake.  Offered only where params->node_bytes > 0
     * and the transport reaches another rank of this node. */
    void *node_base;
    size_t node_len;
    /* With node_base: every rank of this node can read every other's
     * memory with process_vm_readv (shm: its CMA probe passed on every
     * rank, TELEMEM_SHM_CMA=y), so a collective may copy from a local
     * rank's own buffer (docs/coll.md). */
    bool node_cma;
};

/* A backend descriptor: one per backend, listed in backend.c. */
typedef struct tlm_backend {
    const char *name;
    unsigned abi;
    /* Check the backend's settings in p (no I/O, before the job starts):
     * TELEMEM_OK or TELEMEM_ERR_CONFIG with a message naming the variable. */
    int (*check)(const tlm_transport_params_t *p);
    /* Which ranks this backend can reach: sets reach[r] for each. */
    int (*query)(const tlm_transport_params_t *p, bool *reach);
    int (*open)(const tlm_transport_params_t *p, tlm_transport_t **tp_p);
    /* Network backends: can this machine use it, and how much is it
     * preferred under TELEMEM_TRANSPORT=auto (a library probe, no
     * communication)?  0: not usable, else a TLM_BACKEND_PREF_*; the
     * highest wins, the first in backend order among equals.  NULL:
     * always, TLM_BACKEND_PREF_GENERIC. */
    int (*available)(const tlm_transport_params_t *p);
    bool network;  /* reaches other nodes */
    const char *direct_name; /* its direct driver's super.name, or NULL */
} tlm_backend_t;

#define TLM_BACKEND_ABI 1

/* Preferences of network backends under auto (docs/transports.md,
 * "Choice per peer"): a library that can only reach the network through
 * sockets (libfabric's tcp, sockets, udp and net providers), a library
 * that picks its own wires (UCX: over TCP it makes fewer system calls per
 * message than libfabric's socket providers), a fabric provider or one
 * the user named (TELEMEM_OFI_PROVIDER). */
enum { TLM_BACKEND_PREF_SOCKETS = 1, TLM_BACKEND_PREF_GENERIC = 2,
       TLM_BACKEND_PREF_FABRIC = 3 };

/* backend.c */
typedef int (*tlm_backend_add_fn_t)(tlm_transport_t *tp, const bool *reach);
/* Validate TELEMEM_TRANSPORT and every backend's settings before the job is
 * joined, so a configuration error leaves nothing behind to undo. */
int tlm_backend_check_config(const char *want, const tlm_transport_params_t *p);
/* Open every transport `want` (TELEMEM_TRANSPORT) selects, handing each to
 * add() with the ranks it reaches.  Collective. */
int tlm_backend_open_all(const char *want, const tlm_transport_params_t *p,
                         tlm_backend_add_fn_t add);
int tlm_backend_check(const tlm_transport_t *tp);
/* Is [s, s+len) the name of one of this build's transports or of its
 * direct driver (what TELEMEM_DIRECT_THRESHOLD's lists may name)?  all
 * gets every such name, "shm, window, ...", for a message. */
bool tlm_backend_known_name(const char *s, size_t len, char *all, size_t n);
int tlm_backend_stub_connect(tlm_transport_t *tp, int peer);
int tlm_backend_stub_peer_alive(tlm_transport_t *tp, int peer);
int tlm_backend_stub_check(const tlm_transport_params_t *p);
int tlm_backend_stub_wait_arm(tlm_transport_t *tp, int *fd_p);
int64_t tlm_backend_stub_wait_disarm(tlm_transport_t *tp);

static inline int tlm_transport_send(tlm_transport_t *tp, int peer,
                                     const void *hdr, size_t hdr_len,
                                     const struct iovec *iov, int iovcnt)
{
    return tp->ops->send(tp, peer, hdr, hdr_len, iov, iovcnt);
}

static inline int tlm_transport_send_fill(tlm_transport_t *tp, int peer,
                                          const void *hdr, size_t hdr_len,
                                          size_t len, tlm_fill_fn_t fill,
                                          void *arg)
{
    return tp->ops->send_fill(tp, peer, hdr, hdr_len, len, fill, arg);
}

static inline int tlm_transport_progress(tlm_transport_t *tp, int max)
{
    return tp->ops->progress(tp, max);
}

static inline int tlm_transport_connect(tlm_transport_t *tp, int peer)
{
    return tp->ops->connect(tp, peer);
}

static inline int tlm_transport_peer_alive(tlm_transport_t *tp, int peer)
{
    return tp->ops->peer_alive(tp, peer);
}

static inline void tlm_transport_close(tlm_transport_t *tp)
{
    tp->ops->close(tp);
}

#endif

/* core.h - state shared by the core's files: the runtime singleton, per-peer
 * completion state, the op table, regions, waits and entry checks. */
#ifndef TLM_CORE_H
#define TLM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemem.h"
#include "am/am.h"
#include "pack/pack.h"
#include "boot/boot.h"
#include "core/core_config.h"
#include "core/core_direct.h"
#include "util/log.h"
#include "util/util.h"

/* Completion state of this rank towards one target. */
typedef struct tlm_core_peer {
    uint32_t unflushed;   /* requests sent since the last flush */
    uint32_t flush_sent;  /* last FLUSH sequence sent */
    uint32_t flush_acked; /* last FLUSH_ACK received */
    uint32_t nbi_gets;    /* get_nbi not yet complete */
    int error;            /* first refusal since the last quiet/fence */
    /* direct path (core_direct.c): smallest contiguous transfer that takes
     * it (SIZE_MAX: never), outstanding driver operations, and AM reads
     * (gets) since the last flush, which a direct write must follow */
    size_t direct_min;
    bool direct_busy;
    bool am_reads;
    bool left;            /* it sent LEAVE: gone for every wait */
} tlm_core_peer_t;

/* unflushed, flush_sent, flush_acked, nbi_gets and am_reads are written
 * under the lock with relaxed atomic stores (plain moves on x86) because
 * the lock-free express path (tlm_core_direct_atomic_express) reads them
 * without it. */
#define TLM_RLX_GET(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define TLM_RLX_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Nothing sent to the peer by the AM path can still be applied or
 * answered there: no request since the last flush, every flush acked, no
 * get or atomic in flight.  A direct transfer may go without waiting. */
static inline bool tlm_core_peer_am_idle(const tlm_core_peer_t *p)
{
    return !TLM_RLX_GET(p->unflushed) && !TLM_RLX_GET(p->am_reads) &&
           !TLM_RLX_GET(p->nbi_gets) &&
           TLM_RLX_GET(p->flush_acked) == TLM_RLX_GET(p->flush_sent);
}

/* A non-blocking operation (handle) or a blocking get in flight. */
enum { TLM_OP_FREE = 0, TLM_OP_ACTIVE, TLM_OP_DONE };
enum { TLM_OP_GET = 1, TLM_OP_PUT, TLM_OP_RMW, TLM_OP_MUTEX };
/* How a get's reply data is laid down locally. */
enum { TLM_UNPACK_COPY = 0, TLM_UNPACK_STRIDED, TLM_UNPACK_VECTOR };

/* Source of a packed stream: a strided patch, or a vector list with its
 * cursor (fragments are produced in stream order). */
typedef struct tlm_pack_src {
    tlm_pack_desc_t d;
    int side;
    const uint8_t *base;
    tlm_vec_t v;
    tlm_vec_cursor_t c;
    size_t list_bytes; /* vector put: the record list precedes the data */
    void *owned;       /* a copy of the user's list (nb/nbi), freed at end */
} tlm_pack_src_t;

typedef struct tlm_op {
    uint32_t gen;
    uint8_t state, kind;
    bool nbi;           /* no handle: completion counted in the peer */
    int status;
    int rank;
    uint8_t unpack;     /* get: TLM_UNPACK_* */
    uint8_t width;      /* atomics: 4 or 8 */
    uint8_t *dst;       /* get destination, atomic's old value */
    size_t len, got;
    uint32_t next_free;
    int *result;        /* mutex trylock: acquired */
    tlm_am_sendop_t sendop; /* put_nb data stream */
    tlm_pack_src_t src; /* strided / vector: pack source or unpack layout */
} tlm_op_t;

typedef struct tlm_region {
    uintptr_t base, end;
    bool from_malloc_all;
    struct tlm_region_dx *dx; /* direct-path exposure (core_direct.c) */
} tlm_region_t;

typedef struct tlm_core {
    bool initialized;
    bool finalizing; /* in telemem_finalize's barrier */
    bool peer_gone;  /* a wait found a rank dead or gone: finalize does not
                      * wait for the others (the job cannot complete) */
    bool in_handler;
    bool locking;       /* threads: every entry point takes the big lock */
    int thread_level;   /* TELEMEM_THREAD_* */
    int rank, nranks;
    tlm_config_t cfg;
    tlm_boot_t *boot;
    tlm_core_peer_t *peers;
    /* regions (sorted by base, never overlapping) */
    tlm_region_t *regions;
    size_t nregions, cap_regions;
    size_t last_region;
    /* op table: chunks that never move */
    tlm_op_t **op_chunks;
    uint32_t nop_chunks;
    uint32_t op_free;   /* head of the free list, 0 = none */
    /* collectives */
    uint32_t coll_seq;
    struct tlm_coll_msg *coll_inbox;
    /* user active messages */
    struct tlm_core_am *am;
    /* ORed into accumulate types applied here: TLM_ACC_ATOMIC when local
     * peers may update this rank's memory with direct (hardware) atomics
     * (core_direct.c), else 0. */
    int acc_flags;
} tlm_core_t;

extern tlm_core_t tlm_core;

#define TLM_OP_CHUNK 1024u
/* Slot bits of an op's wire id (the rest is its generation), hence the
 * most ops in flight: slot 0 is never used (core_rma.c builds wire ids
 * from it). */
#define TLM_OP_ID_BITS 20u
#define TLM_OP_MAX ((1u << TLM_OP_ID_BITS) - 1u)
_Static_assert((TLM_OP_MAX + 1u) % TLM_OP_CHUNK == 0,
               "the op table ends on a chunk boundary");

static inline tlm_op_t *tlm_core_op(uint32_t idx)
{
    return &tlm_core.op_chunks[idx / TLM_OP_CHUNK][idx % TLM_OP_CHUNK];
}

/* ---- threads (core_thread.c) ----------------------------------------------
 * With TELEMEM_THREAD_MULTIPLE or a progress thread, every public entry
 * point holds one recursive process-wide lock (TLM_API_GUARD, released by
 * the compiler's cleanup at every return); waits drop it between polls.
 * Otherwise the guard is one predictable branch. */
void tlm_core_lock_slow(void);
void tlm_core_unlock_slow(void);
/* Whether the calling thread holds the lock (inside the library, or in a
 * handler the progress thread runs). */
bool tlm_core_lock_mine(void);
/* Release the lock completely (returns the depth) / take it back. */
int tlm_core_lock_release_all(void);
void tlm_core_lock_reacquire(int depth);
int tlm_core_thread_start(void);
void tlm_core_thread_stop(void);

typedef struct tlm_guard {
    bool held;
} tlm_guard_t;

static inline tlm_guard_t tlm_guard_enter(void)
{
    tlm_guard_t g = {false};
    if (TLM_UNLIKELY(tlm_core.locking)) {
        tlm_core_lock_slow();
        g.held = true;
    }
    return g;
}

static inline void tlm_guard_leave(tlm_guard_t *g)
{
    if (TLM_UNLIKELY(g->held))
        tlm_core_unlock_slow();
}

/* First line of every public function that touches library state. */
#define TLM_API_GUARD()                                                     \
    tlm_guard_t tlm_guard_ __attribute__((cleanup(tlm_guard_leave))) =     \
        tlm_guard_enter()

/* Entry checks of public calls. */
static inline int tlm_core_check_comm(void)
{
    if (TLM_UNLIKELY(!tlm_core.initialized))
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (TLM_UNLIKELY(tlm_core.in_handler))
        return TELEMEM_ERR_IN_HANDLER;
    return TELEMEM_OK;
}

int tlm_core_check_rma_args(const char *what, int rank, const void *remote,
                            const void *local, size_t bytes);

/* core_region.c */
int tlm_core_region_add(void *addr, size_t len, bool from_malloc_all);
int tlm_core_region_remove(void *addr, bool from_malloc_all);
bool tlm_core_region_contains(uintptr_t addr, size_t len);
/* The region holding all of [addr, addr+len), or NULL. */
tlm_region_t *tlm_core_region_find(uintptr_t addr, size_t len);
void tlm_core_region_fini(void);

/* core_ops.c */
int tlm_core_op_alloc(uint32_t *idx_p);
void tlm_core_op_free(uint32_t idx);
/* The op named by a wire id, if it is active and of that kind. */
tlm_op_t *tlm_core_op_lookup(uint32_t idx, int kind);
void tlm_core_op_complete(uint32_t idx, int status);
void tlm_core_ops_fini(void);

/* core_rma.c */
void tlm_core_rma_init(void);
/* Send hdr + data as one message or a fragmented stream, in order behind
 * earlier sends to rank; returns when data may be reused.  The fast half
 * (one message straight to the transport) is inline; the rest posts the
 * stream and waits. */
int tlm_core_send_stream_slow(int rank, const void *hdr, size_t hdr_len,
                              const void *data, size_t len);
static inline int tlm_core_send_stream(int rank, const void *hdr,
                                       size_t hdr_len, const void *data,
                                       size_t len)
{
    if (TLM_LIKELY(len <= tlm_am_max_payload(rank, hdr_len) &&
                   len < tlm_am.peers[rank].zc_min)) {
        int rc = tlm_am_try_send(rank, hdr, hdr_len, data, len);
        if (TLM_LIKELY(rc != TELEMEM_ERR_AGAIN))
            return rc;
    }
    return tlm_core_send_stream_slow(rank, hdr, hdr_len, data, len);
}
/* A transfer refused by this rank (TLM_DIRECT_REFUSED) reported as the
 * target's refusal would be: a blocking get returns status; a put or an
 * _nbi operation returns OK and the next quiet / fence returns status; an
 * _nb operation gets a handle whose wait returns it. */
int tlm_core_refused(int rank, bool write, int mode, telemem_handle_t *h,
                     int status);
/* Wait (polling) until a posted op is handed over; cancels it on error
 * (a zc op the transport still reads is then left to free itself). */
int tlm_core_wait_sent(int rank, tlm_am_sendop_t *op);
/* Wait until every request to rank (or to all when rank < 0) is complete. */
int tlm_core_flush(int rank);
/* Wait until the AM requests already sent to rank are applied and its gets
 * answered, keeping refusals for the next quiet (direct-path ordering). */
int tlm_core_flush_am(int rank);

/* Has rank left the job (its finalize failed, it sent LEAVE)?  Then it
 * answers nothing more: a wait on it ends with TELEMEM_ERR_PEER_DEAD. */
static inline bool tlm_core_peer_left(int rank)
{
    return tlm_core.peers[rank].left;
}

/* Target side of refused put-like requests (h = the fragment header):
 * ACK with status after the last fragment when the request wants one,
 * else one NACK for the first fragment. */
void tlm_core_refuse(int src, const tlm_am_frag_hdr_t *h, bool last,
                     int status);
void tlm_core_send_ack(int src, uint32_t id, int status);
/* Wire ids of ops (slot + generation) and back. */
uint32_t tlm_core_wire_id(uint32_t idx);
tlm_op_t *tlm_core_op_from_wire(uint32_t id, int kind, uint32_t *idx_p);
void tlm_core_protocol_error(int src, const char *what, size_t len);
/* Handle for a new op. */
int tlm_core_new_handle(uint32_t idx, telemem_handle_t *h);
/* Wait for an op to be done (blocking forms); frees it; its status. */
int tlm_core_op_wait(uint32_t idx);
/* The same, watching the liveness of peer instead (all ranks when < 0). */
int tlm_core_op_wait_peer(uint32_t idx, int peer);
/* Start a get-like op: a request (hdr + data) whose answer is GET_REP
 * stream(s) or ACK; the caller set op fields first via *op_p. */
int tlm_core_get_alloc(int rank, bool nbi, tlm_op_t **op_p, uint32_t *idx_p);
void tlm_core_get_started(tlm_op_t *op);
/* The pack callback of tlm_pack_src_t streams (am engine signature). */
void tlm_core_pack_strided(void *arg, void *dst, size_t off, size_t len);
void tlm_core_pack_vector(void *arg, void *dst, size_t off, size_t len);
/* Modes of the put-like and get-like front ends. */
enum { TLM_MODE_BLOCK = 0, TLM_MODE_NB, TLM_MODE_NBI };
/* Send a packed put-like stream (hdr + total bytes from src) in mode:
 * blocking (src may be on the stack), nb (src inside the op, handle set),
 * nbi (src copied).  TELEMEM_OK or an error. */
int tlm_core_put_packed(int rank, int mode, void *hdr, size_t hdr_len,
                        size_t total, uint32_t align, tlm_am_pack_fn_t pack,
                        tlm_pack_src_t *src, telemem_handle_t *h);

/* Accumulate header part (core_packed.c), shared by strided and vector
 * accumulates: after the fragment header, the scale in 16 bytes. */
#define TLM_ACC_SCALE_BYTES 16u
/* An accumulate's element type as the internal argument, where -1 means a
 * plain put: a negative user value must not turn into one. */
int tlm_core_acc_arg(telemem_type_t t);
/* Known type, non-NULL scale, len a multiple of the element size. */
int tlm_core_check_acc(const char *what, int type, const void *scale,
                       size_t len);
/* Initiator: append the scale of acc (>= 0) at hdr + *hl, advance *hl and
 * return the fragment alignment (element size); 1 for a plain put. */
uint32_t tlm_core_acc_hdr_put(void *hdr, size_t *hl, int acc,
                              const void *scale);
/* Target: the scale of acc (>= 0) after *hl bytes of msg, advancing *hl
 * and setting *es; NULL (protocol error) for an unknown type or a short
 * message.  For acc < 0 returns NULL with *es = 1 and *hl unchanged. */
const void *tlm_core_acc_hdr_get(int acc, const void *msg, size_t len,
                                 size_t *hl, size_t *es);

/* core_strided.c, core_vector.c, core_atomic.c, core_mutex.c */
void tlm_core_strided_init(void);
void tlm_core_vector_init(void);
void tlm_core_vector_fini(void);
void tlm_core_atomic_init(void);
void tlm_core_mutex_init(void);
void tlm_core_mutex_fini(void);

/* core_coll.c */
void tlm_core_coll_init(void);
void tlm_core_coll_fini(void);

/* core_mem.c */
void tlm_core_mem_fini(void);

/* core_am_api.c */
int tlm_core_am_init(void);
void tlm_core_am_fini(void);
/* Reassembly memory per source (docs/hardening.md, F1): every buffer a
 * receiver allocates because a header announced a total (fragmented AM,
 * early collective message, vector list) is charged to its source first.
 * A source may hold at most TLM_CORE_REASM_MAX bytes in
 * TLM_CORE_REASM_MAX_ENTRIES buffers; reserve logs and returns
 * TELEMEM_ERR_PROTOCOL beyond that (nothing charged).  Senders refuse
 * payloads that could never fit (TELEMEM_ERR_INVALID_ARG). */
#define TLM_CORE_REASM_MAX ((size_t)1 << 30)
#define TLM_CORE_REASM_MAX_ENTRIES 65536u
int tlm_core_reasm_reserve(int src, uint64_t bytes, const char *what);
void tlm_core_reasm_release(int src, size_t bytes);
size_t tlm_core_reasm_held(int src);
size_t tlm_core_reasm_max(void);
/* Tests only (fuzz harness): a smaller cap for this process. */
void tlm_core_reasm_set_max(size_t bytes);

#include "core/core_wait.h"

#endif

/* core.h - the state every file of core shares: the runtime singleton,
 * per-peer completion state, ops and regions (their types), the big lock
 * and the entry checks.  The files' functions are declared in their own
 * headers, which include this one: core_engine.h (how operations
 * complete), core_ops.h, core_region.h, core_packed.h, core_am_api.h,
 * core_direct.h, core_wait.h (docs/architecture.md, "Inside core").  The
 * settings struct comes from the settings service, config/config.h. */
#ifndef TLM_CORE_H
#define TLM_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemem.h"
#include "am/am.h"
#include "pack/pack.h"
#include "boot/boot.h"
#include "config/config.h"
#include "util/log.h"
#include "util/profile.h"
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
    bool dead;            /* dead or gone, as a liveness check found
                           * (tlm_core_check_alive), a direct driver's
                           * failure or the launcher's list (tlm_boot_dead,
                           * which a transport may not see: ofi); every
                           * later call addressed to it fails */
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
    bool biased;        /* a progress thread beside one application thread
                         * at a time: entry points announce themselves
                         * instead (core_thread.c, "Biased") */
    unsigned char guard; /* TLM_GUARD_*: what TLM_API_GUARD does, from
                          * locking and biased (one load on every call) */
    int thread_level;   /* TELEMEM_THREAD_* */
    int rank, nranks;
    tlm_config_t cfg;
    /* The calibration profile, read once at initialize: the direct path's
     * thresholds and the backends' own lines (transport params). */
    tlm_profile_t profile;
    tlm_boot_t *boot;
    tlm_core_peer_t *peers;
    /* By rank: the lowest rank of its node (same host id as find_same_node
     * in core_init.c compares): the node's leader in the collectives. */
    int *node_leader;
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
    /* Some rank of the job runs with TELEMEM_DIRECT other than never
     * (this one's setting alone does not decide acc_flags). */
    bool job_direct;
} tlm_core_t;

extern tlm_core_t tlm_core;

#define TLM_OP_CHUNK 1024u
/* Slot bits of an op's wire id (the rest is its generation), hence the
 * most ops in flight: slot 0 is never used (core_engine.c builds wire ids
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
 * With TELEMEM_THREAD_MULTIPLE (or a progress thread where membarrier()
 * is missing), every public entry point holds one recursive process-wide
 * lock (TLM_API_GUARD, released by the compiler's cleanup at every
 * return); waits drop it between polls.  With a progress thread beside
 * one application thread at a time the guard is biased (below).
 * Otherwise the guard is one predictable branch. */
void tlm_core_lock_slow(void);
void tlm_core_unlock_slow(void);
/* Whether the calling thread holds the lock (inside the library, or in a
 * handler the progress thread runs). */
bool tlm_core_lock_mine(void);
/* Release the lock completely (returns the depth) / take it back. */
int tlm_core_lock_release_all(void);
void tlm_core_lock_reacquire(int depth);
/* TELEMEM_PROGRESS_CPU names a CPU of this machine (checked before the
 * job is joined): TELEMEM_OK or TELEMEM_ERR_CONFIG (logged). */
int tlm_core_thread_check_config(const tlm_config_t *c);
/* Can the progress thread run biased (membarrier's private expedited
 * barrier registered)?  Then set tlm_core.biased before starting it. */
bool tlm_core_bias_setup(void);
int tlm_core_thread_start(void);
void tlm_core_thread_stop(void);
/* An application thread's wait goes to sleep: it no longer counts as
 * inside the library, and a napping progress thread takes over (returns
 * whether it counted); _wake(counted) when the sleep ends. */
bool tlm_core_thread_app_sleep(void);
void tlm_core_thread_app_wake(bool counted);

/* Biased (a progress thread, thread level below MULTIPLE): the
 * application thread inside the library says so in *tlm_core_bias_in, a
 * sequence it alone writes (odd: inside; a plain store, no atomic
 * instruction; the transport's kick word TLM_KICK_INSIDE, where peers see
 * it, else a word of this process), and the progress thread serves only
 * while it is outside: it sets tlm_core_bias_pt, then makes every thread
 * of the process issue a memory barrier (membarrier), then looks at
 * *tlm_core_bias_in; an entry that finds tlm_core_bias_pt set waits until
 * it is clear (tlm_core_bias_wait).  A changed sequence tells the thread
 * that the application called the library since it last looked.  Depth
 * counts nested entries per thread; the progress thread's starts at
 * TLM_BIAS_THREAD_DEPTH so that its calls never announce. */
extern _Atomic uint32_t *tlm_core_bias_in;
extern _Atomic uint32_t tlm_core_bias_pt;
extern uint32_t tlm_core_bias_seq; /* the application's copy of the word */
extern _Thread_local unsigned tlm_core_bias_depth
    __attribute__((tls_model("initial-exec")));
#define TLM_BIAS_THREAD_DEPTH (1u << 30)
void tlm_core_bias_wait(void);

static inline void tlm_core_bias_enter(void)
{
    if (tlm_core_bias_depth++ != 0)
        return;
    atomic_store_explicit(tlm_core_bias_in, ++tlm_core_bias_seq,
                          memory_order_relaxed);
    /* The progress thread's membarrier() orders this store before the
     * load below where it matters: a compiler barrier suffices here. */
    atomic_signal_fence(memory_order_seq_cst);
    if (TLM_UNLIKELY(atomic_load_explicit(&tlm_core_bias_pt,
                                          memory_order_acquire)))
        tlm_core_bias_wait();
}

static inline void tlm_core_bias_leave(void)
{
    if (--tlm_core_bias_depth == 0)
        atomic_store_explicit(tlm_core_bias_in, ++tlm_core_bias_seq,
                              memory_order_release);
}

enum { TLM_GUARD_NONE = 0, TLM_GUARD_LOCK, TLM_GUARD_BIAS };
typedef struct tlm_guard {
    unsigned char held; /* TLM_GUARD_* */
} tlm_guard_t;

static inline tlm_guard_t tlm_guard_enter(void)
{
    tlm_guard_t g = {tlm_core.guard};
    if (TLM_UNLIKELY(g.held != TLM_GUARD_NONE)) {
        if (g.held == TLM_GUARD_LOCK)
            tlm_core_lock_slow();
        else
            tlm_core_bias_enter();
    }
    return g;
}

static inline void tlm_guard_leave(tlm_guard_t *g)
{
    if (TLM_UNLIKELY(g->held != TLM_GUARD_NONE)) {
        if (g->held == TLM_GUARD_LOCK)
            tlm_core_unlock_slow();
        else
            tlm_core_bias_leave();
    }
}

/* First line of every public function that touches library state. */
#define TLM_API_GUARD()                                                     \
    tlm_guard_t tlm_guard_ __attribute__((cleanup(tlm_guard_leave))) =     \
        tlm_guard_enter()

/* Has rank left the job (its finalize failed, it sent LEAVE)?  Then it
 * answers nothing more: a wait on it ends with TELEMEM_ERR_PEER_DEAD. */
static inline bool tlm_core_peer_left(int rank)
{
    return tlm_core.peers[rank].left;
}

/* Entry checks of public calls. */
static inline int tlm_core_check_comm(void)
{
    if (TLM_UNLIKELY(!tlm_core.initialized))
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (TLM_UNLIKELY(tlm_core.in_handler))
        return TELEMEM_ERR_IN_HANDLER;
    return TELEMEM_OK;
}

/* The rank argument of a public call: in [0, nranks), else logged as
 * "<what>: rank R out of range [0, N)" and TELEMEM_ERR_INVALID_ARG; a rank
 * known to be dead (tlm_core_peer_t.dead): TELEMEM_ERR_PEER_DEAD.  The
 * one rank check of core's entry points. */
int tlm_core_check_rank_slow(const char *what, int rank);
static inline int tlm_core_check_rank(const char *what, int rank)
{
    if (TLM_LIKELY(rank >= 0 && rank < tlm_core.nranks &&
                   !tlm_core.peer_gone))
        return TELEMEM_OK;
    return tlm_core_check_rank_slow(what, rank);
}

int tlm_core_check_rma_args(const char *what, int rank, const void *remote,
                            const void *local, size_t bytes);

/* ---- set-up and tear-down of each file, called by core_init.c ---------- */
/* core_engine.c, core_rma.c */
void tlm_core_engine_init(void);
void tlm_core_rma_init(void);
/* core_strided.c, core_vector.c, core_atomic.c, core_mutex.c */
void tlm_core_strided_init(void);
void tlm_core_vector_init(void);
void tlm_core_vector_fini(void);
void tlm_core_atomic_init(void);
void tlm_core_mutex_init(void);
void tlm_core_mutex_fini(void);

/* core_coll.c */
int tlm_core_coll_init(void);
void tlm_core_coll_fini(void);
/* coll_thresholds.c: TELEMEM_COLL_THRESHOLD is well formed (before the
 * job is joined), and the choices' text for TELEMEM_PRINT_CONFIG. */
int tlm_core_coll_check_config(const tlm_config_t *c);
const char *tlm_core_coll_string(void);
/* coll_node.c: bytes of the node area for nlocal ranks of a node (0:
 * none), which core_init.c asks the transports for. */
size_t tlm_core_coll_node_bytes(int nlocal);

/* core_mem.c */
void tlm_core_mem_fini(void);

/* core_am_api.c */
int tlm_core_am_init(void);
void tlm_core_am_fini(void);

#endif

/* gasnet_internal.h - state and helpers shared by libgasnet's source files
 * (not installed): the job state, the internal active-message ids, the
 * handler-context bookkeeping, fatal errors, the wait policy, and the
 * wake-ups owed after stores into segments mapped here (gasnet_local.c). */
#ifndef TLM_GASNET_INTERNAL_H
#define TLM_GASNET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gasnet.h"
#include "telemem.h"

#if defined(__GNUC__)
#define TLM_GASNET_LIKELY(x) __builtin_expect(!!(x), 1)
#define TLM_GASNET_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLM_GASNET_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TLM_GASNET_LIKELY(x) (x)
#define TLM_GASNET_UNLIKELY(x) (x)
#define TLM_GASNET_PRINTF(a, b)
#endif

/* Telemem AM ids.  GASNet handler indices 128..255 are Telemem ids
 * 128..255 one to one; GASNet's own handlers use ids below 128. */
enum {
    TLM_GASNET_AM_ZERO = 1,       /* Medium/Long with 0 payload bytes */
    TLM_GASNET_AM_EXIT = 2,       /* a node called gasnet_exit(0) */
    TLM_GASNET_AM_BARRIER = 3,    /* barrier notify */
    TLM_GASNET_AM_MEMSET = 4,     /* remote memset request */
    TLM_GASNET_AM_MEMSET_ACK = 5, /* its completion */
    TLM_GASNET_AM_COLL = 6,       /* a collective's point-to-point data */
    TLM_GASNET_AM_FIRST_CLIENT = 128
};

/* The innermost running handler (handlers do not nest today, but a stack
 * costs nothing). */
typedef struct tlm_gasnet_frame {
    telemem_am_token_t tok;
    int replied;
    int hsl_at_entry;
    struct tlm_gasnet_frame *prev;
} tlm_gasnet_frame_t;

typedef struct tlm_gasnet {
    bool inited, attached, finalized;
    int mynode, nodes;
    /* segments: seg[i] is node i's (after attach) */
    gasnet_seginfo_t *seg;
    void *seg_block; /* this node's telemem_malloc_all() block */
    uintptr_t max_local, max_global;
    gasnet_nodeinfo_t *nodeinfo;
    /* client handlers by GASNet index */
    gasnetc_handler_fn_t handlers[256];
    /* thread model of gasnet_init: 0 SEQ, 1 PARSYNC, 2 PAR */
    int threadmodel;
    /* waiting */
    unsigned spin_limit;
    /* exit */
    int exit_pending; /* another node called gasnet_exit(0) (atomic) */
    double exit_pending_since;
    int exit_code;
    bool exiting;            /* atomic (a handler may read it) */
    int exit_joined;         /* other nodes known to be exiting */
    unsigned char *exit_seen; /* by node */
} tlm_gasnet_t;

extern tlm_gasnet_t tlm_gasnet;

/* Per-thread state (GASNET_PAR: every client thread has its own): the
 * running handler's frame, the HSLs held, and the count of calls for
 * tlm_gasnet_check_exit. */
#define TLM_GASNET_TLS __thread __attribute__((tls_model("initial-exec")))
extern TLM_GASNET_TLS tlm_gasnet_frame_t *tlm_gasnet_frame;
extern TLM_GASNET_TLS int tlm_gasnet_hsl_held;
extern TLM_GASNET_TLS unsigned tlm_gasnet_calls;

/* Print "*** GASNet FATAL ERROR (node N): <what>: <message>" and end the
 * job with status 1 (the launcher ends the other nodes). */
void tlm_gasnet_fatal(const char *what, const char *fmt, ...)
    TLM_GASNET_PRINTF(2, 3) GASNETC_NORETURN;
/* A non-fatal error about to be returned: "*** GASNet ERROR (node N):
 * <what>: <message>" on stderr; returns code. */
int tlm_gasnet_error(int code, const char *what, const char *fmt, ...)
    TLM_GASNET_PRINTF(3, 4);
/* Telemem status -> GASNet error code. */
int tlm_gasnet_from_telemem(int rc);

/* Calls that communicate: fatal inside a handler or while holding an
 * HSL. */
void tlm_gasnet_context_fatal(const char *what) GASNETC_NORETURN;
static inline void tlm_gasnet_check_context(const char *what)
{
    if (TLM_GASNET_UNLIKELY(tlm_gasnet_frame || tlm_gasnet_hsl_held))
        tlm_gasnet_context_fatal(what);
}

/* Another node's gasnet_exit(0) is joined by the GASNet calls of this
 * node that come a grace period (1 s) after its notice arrived, so that a
 * node still finishing the barrier before everyone's gasnet_exit() is not
 * cut short. */
void tlm_gasnet_maybe_join_exit(void);
static inline void tlm_gasnet_check_exit(void)
{
    /* GASNet's blocking calls poll.  Telemem's window path (puts and gets
     * within a node) does not, so a node looping on them never heard of
     * another node's gasnet_exit: every 64th call polls (not inside a
     * handler or under an HSL). */
    if (TLM_GASNET_UNLIKELY((++tlm_gasnet_calls & 63u) == 0) &&
        !tlm_gasnet_frame && !tlm_gasnet_hsl_held)
        (void)telemem_poll();
    if (TLM_GASNET_UNLIKELY(__atomic_load_n(&tlm_gasnet.exit_pending,
                                            __ATOMIC_RELAXED) &&
                            !__atomic_load_n(&tlm_gasnet.exiting,
                                             __ATOMIC_ACQUIRE)))
        tlm_gasnet_maybe_join_exit();
}

/* One step of a GASNet-side wait: poll, join a pending exit, yield after
 * spin_limit empty polls.  Fatal when Telemem fails (what names the
 * call). */
void tlm_gasnet_wait_step(const char *what, unsigned *idle);

/* Is [addr, addr+n) inside node's segment? */
static inline bool tlm_gasnet_in_segment(int node, const void *addr,
                                         size_t n)
{
    const gasnet_seginfo_t *s = &tlm_gasnet.seg[node];
    uintptr_t a = (uintptr_t)addr, b = (uintptr_t)s->addr;
    return a >= b && n <= s->size && a - b <= s->size - n;
}

/* Shared by the extended, VIS and collective files
 * (gasnet_extended.c): fatal unless the call may communicate with node;
 * fatal unless [remote, +nbytes) is inside node's segment; fatal naming
 * the Telemem error unless rc is TELEMEM_OK; a handle for a Telemem
 * handle; the open access region of this thread, adding a handle to it;
 * noting an implicit-handle operation for the next implicit sync. */
void tlm_gasnet_check_rma_call(const char *what, gasnet_node_t node);
void tlm_gasnet_check_remote(const char *what, gasnet_node_t node,
                             const void *remote, size_t nbytes);
void tlm_gasnet_check_tlm(const char *what, int rc, gasnet_node_t node,
                          const void *remote, size_t nbytes);
gasnet_handle_t tlm_gasnet_wrap(const char *what, int node,
                                telemem_handle_t th);
bool tlm_gasnet_in_region(void);
void tlm_gasnet_region_add(const char *what, gasnet_handle_t h);
void tlm_gasnet_nbi_started(void);

/* ---- segments mapped here (gasnet_local.c) ------------------------------ */

/* The map of segments (gasnetc_segmap) and the inline stores and loads
 * are in the installed gasnet_extended_help_extra.h: libgasnet's own puts
 * and gets use them too.  A node's threads waiting in GASNET_BLOCKUNTIL
 * are counted in its control line, and all of this host's in the host's
 * first node's: after stores into mapped segments those nodes are woken
 * (telemem_ptr_wake) at this process's next synchronisation, wait, poll,
 * barrier or exit (tlm_gasnet_local_flush).
 *
 * A node's telemem_malloc_all block: up to a page before the segment (so
 * that it starts on a page), the segment, the control line, then its
 * Medium slots (TLM_GASNET_SEG_EXTRA(slots) bytes besides the segment). */
#define TLM_GASNET_MEDIUM_SLOT ((size_t)65536) /* gasnet_AMMaxMedium() */
#define TLM_GASNET_SEG_EXTRA(slots)                                            \
    ((size_t)GASNET_PAGESIZE + 128 + (size_t)(slots)*TLM_GASNET_MEDIUM_SLOT)
extern uint32_t *tlm_gasnet_hostwait; /* NULL: nothing mapped */
void tlm_gasnet_local_wake_all(void);
static inline void tlm_gasnet_local_flush(void)
{
    if (TLM_GASNET_UNLIKELY(tlm_gasnet_hostwait &&
                            __atomic_load_n(tlm_gasnet_hostwait,
                                            __ATOMIC_RELAXED)))
        tlm_gasnet_local_wake_all();
}
/* GASNET_BLOCKUNTIL's waits (counted); another node's exit notice (the
 * inline operations of the nodes of this host then poll), a request to
 * this node (its inline operations poll once). */
void tlm_gasnet_local_block_begin(void);
void tlm_gasnet_local_block_end(void);
void tlm_gasnet_local_attention(void);
void tlm_gasnet_local_poll_soon(void);
/* A Long copied by its sender into a segment mapped here (gasnet_am.c):
 * begin/end bracket the copy and the header's send, counted in the
 * target's control line, so that a wait there polls through the copy
 * instead of going to sleep (tlm_gasnet_local_incoming) and paying a
 * wake-up when the header comes. */
void tlm_gasnet_local_copy_begin(int node);
void tlm_gasnet_local_copy_end(int node);
extern uint32_t *tlm_gasnet_incoming; /* NULL: nothing mapped */
static inline bool tlm_gasnet_local_incoming(void)
{
    return tlm_gasnet_incoming &&
           __atomic_load_n(tlm_gasnet_incoming, __ATOMIC_ACQUIRE) != 0;
}
/* Medium slots: a Medium of at least tlm_gasnet_medium_min bytes to
 * another node whose block is mapped here is copied by its sender into one
 * of the target's free slots (claimed in the line after its control line),
 * and only a header goes (gasnet_am.c): one copy, where Telemem's message
 * of more than one shm buffer makes three.  GASNET_TELEMEM_MEDIUM_SLOTS
 * (0-32, default 8) says how many each node has; 0 turns them off. */
extern size_t tlm_gasnet_medium_min;
unsigned tlm_gasnet_medium_slots_setting(void);
char *tlm_gasnet_local_slot_claim(int node, unsigned *slot);
void tlm_gasnet_local_slot_filled(int node, unsigned slot);
void tlm_gasnet_local_slot_release(int node, unsigned slot);
char *tlm_gasnet_local_slot_mine(unsigned slot, size_t nbytes);
void tlm_gasnet_local_slot_done(unsigned slot);
void tlm_gasnet_local_attach(void *const *bases, const uint64_t *sizes,
                             const uint64_t *slots);
void tlm_gasnet_local_fini(void);

/* Per-file set-up and tear-down (gasnet_init/attach, gasnet_exit). */
int tlm_gasnet_am_init(void);
int tlm_gasnet_am_attach(gasnet_handlerentry_t *table, int numentries);
int tlm_gasnet_barrier_init(void);
void tlm_gasnet_barrier_fini(void);
int tlm_gasnet_extended_init(void);
void tlm_gasnet_extended_fini(void);
int tlm_gasnet_coll_init(void);
void tlm_gasnet_coll_fini(void);

#endif

/* armci_internal.h - state and helpers shared by libarmci's source files
 * (not installed): the job state, argument checks and fatal errors, the
 * weak-alias macro, the internal active-message protocol, groups and the
 * inbox of messages waiting to be received. */
#ifndef TLM_ARMCI_INTERNAL_H
#define TLM_ARMCI_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every ARMCI declaration gets default visibility (the library is built
 * with -fvisibility=hidden); the headers themselves stay ARMCI-MPI's. */
#pragma GCC visibility push(default)
#include "armci.h"
#include "armcix.h"
#include "message.h"
#pragma GCC visibility pop

#include "telemem.h"

#define TLM_ARMCI_LIKELY(x) __builtin_expect(!!(x), 1)
#define TLM_ARMCI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLM_ARMCI_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ARMCI_X is a weak alias of PARMCI_X (a profiling layer may define
 * ARMCI_X and call PARMCI_X). */
#define TLM_ARMCI_ALIAS(name)                                               \
    extern __typeof(PARMCI_##name) ARMCI_##name                             \
        __attribute__((weak, alias("PARMCI_" #name)))

/* ------------------------------------------------------------------------
 * Job state */

typedef struct tlm_armci_grp tlm_armci_grp_t;

typedef struct tlm_armci_state {
    atomic_int ready;    /* ARMCI usable: Telemem up, world group built */
    int armci_inits;     /* ARMCI_Init* calls not yet finalized (counted) */
    int msg_inits;       /* armci_msg_init calls not yet finalized */
    bool own_telemem;    /* we initialized Telemem (and finalize it) */
    bool ended_telemem;  /* ... and finalized it: it cannot start again */
    bool own_mpi;        /* armci_msg_init initialized MPI */
    bool mpi_mode;       /* MPI runs over the same ranks: groups get comms */
    bool progress;       /* the progress thread was asked for */
    int me, n;
    int am_id;           /* our Telemem active-message handler id */
    pthread_mutex_t lock; /* inbox, waits, registries (never held while
                           * calling Telemem) */
    tlm_armci_grp_t *world; /* the world group's info */
    ARMCI_Group world_grp;  /* ... as an ARMCI_Group */
    ARMCI_Group default_grp;
    uint32_t next_ctx;   /* lowest group context id this rank may use */
    int mutex_set;       /* Telemem mutex set of ARMCI_Create_mutexes, -1 */
    /* armci_notify counters, one per rank */
    int *notify_sent;
    atomic_int *notify_received;
    int *notify_waited;
} tlm_armci_state_t;

extern tlm_armci_state_t tlm_armci;

/* ------------------------------------------------------------------------
 * Errors.  ARMCI's convention: a bad argument or a failed operation
 * prints one line naming the call and the value, then ends the job. */

/** Print "[armci rR] call: message" and end the job with status 1. */
void tlm_armci_fail(const char *call, const char *fmt, ...)
    TLM_ARMCI_PRINTF(2, 3) __attribute__((noreturn));
/** End the job with @p code: MPI_Abort when MPI runs over the job, else
 *  exit (telemem-run and mpirun then end the other ranks). */
void tlm_armci_abort(int code) __attribute__((noreturn));
/** Fail unless ARMCI is initialized. */
void tlm_armci_not_ready(const char *call) __attribute__((noreturn));

static inline void tlm_armci_check_ready(const char *call)
{
    if (TLM_ARMCI_UNLIKELY(
            !atomic_load_explicit(&tlm_armci.ready, memory_order_acquire)))
        tlm_armci_not_ready(call);
}

static inline void tlm_armci_check_proc(const char *call, int proc)
{
    tlm_armci_check_ready(call);
    if (TLM_ARMCI_UNLIKELY(proc < 0 || proc >= tlm_armci.n))
        tlm_armci_fail(call, "proc %d out of range [0, %d)", proc,
                       tlm_armci.n);
}

static inline void tlm_armci_check_bytes(const char *call, const char *what,
                                         long bytes)
{
    if (TLM_ARMCI_UNLIKELY(bytes < 0))
        tlm_armci_fail(call, "%s %ld is negative", what, bytes);
}

/** Fail with Telemem's message when @p rc is not TELEMEM_OK; the rest
 *  says what was being done ("proc 3, 64 bytes"). */
void tlm_armci_rc_slow(const char *call, int rc, const char *fmt, ...)
    TLM_ARMCI_PRINTF(3, 4) __attribute__((noreturn));
#define tlm_armci_rc(call, rc, ...)                                         \
    do {                                                                    \
        int tlm_armci_rc_ = (rc);                                           \
        if (TLM_ARMCI_UNLIKELY(tlm_armci_rc_ != TELEMEM_OK))                \
            tlm_armci_rc_slow(call, tlm_armci_rc_, __VA_ARGS__);            \
    } while (0)

/** Telemem element type of an ARMCI_ACC_* code (fails on others). */
telemem_type_t tlm_armci_acc_type(const char *call, int datatype);
/** Size of one element of an ARMCI_ACC_* code. */
size_t tlm_armci_acc_size(int datatype);
/** Fail on a NULL scale or a run that is not whole elements. */
void tlm_armci_check_acc(const char *call, int datatype, const void *scale,
                         long run_bytes);
/** Put value into *flag at proc, after the data already issued to it. */
void tlm_armci_put_flag(const char *call, int *flag, int value, int proc);

/** Convert ARMCI's int strides / counts (levels checked) to size_t. */
void tlm_armci_strides(const char *call, int levels, const int *src_stride,
                       const int *dst_stride, const int *count,
                       size_t *src_s, size_t *dst_s, size_t *cnt);

/** Record the target of a non-blocking operation in its handle. */
void tlm_armci_hdl_add(armci_hdl_t *hdl, int proc);

/** Poll Telemem once (fails on a transport error). */
void tlm_armci_poll(const char *call);

/** A wait in libarmci's own loop (a flag an active message sets), with
 *  Telemem's rules for giving up (telemem_wait_poll(): the rank it waits
 *  for, every rank when peer < 0, dead, or TELEMEM_TIMEOUT passed): the
 *  call fails naming the dead rank instead of hanging. */
typedef struct tlm_armci_wait {
    const char *call;
    telemem_wait_t w;
} tlm_armci_wait_t;
void tlm_armci_wait_init(tlm_armci_wait_t *w, const char *call, int peer);
void tlm_armci_wait_poll(tlm_armci_wait_t *w);

/* ------------------------------------------------------------------------
 * Internal active messages.  One Telemem handler (tlm_armci.am_id) takes
 * every request and reply; args[0] is the kind. */
enum tlm_armci_am_kind {
    TLM_ARMCI_AM_MSG = 1,       /* armci_msg_snd: [kind, tag] + data */
    TLM_ARMCI_AM_COLL = 2,      /* group collective: [kind, ctx, seq, src] */
    TLM_ARMCI_AM_NOTIFY = 3,    /* armci_notify: [kind] */
    TLM_ARMCI_AM_LOCK = 4,      /* [kind, id, mutex]: queue for the mutex */
    TLM_ARMCI_AM_TRYLOCK = 5,   /* [kind, id, mutex]: take it if free */
    TLM_ARMCI_AM_UNLOCK = 6,    /* [kind, id, mutex] */
    TLM_ARMCI_AM_GRANT = 7,     /* request or reply [kind, id, mutex, owner] */
    TLM_ARMCI_AM_TRYRES = 8,    /* reply [kind, id, mutex, owner, got] */
    TLM_ARMCI_AM_UNLOCKED = 9,  /* reply [kind, id, mutex, owner, next] */
    TLM_ARMCI_AM_LOCKERR = 10   /* reply [kind, id, mutex, owner, why] */
};

/** Register the handler (collective: ids must agree on every rank). */
void tlm_armci_am_init(void);
void tlm_armci_am_fini(void);

/** A message kept until a receive takes it (armci_msg_snd, collectives). */
typedef struct tlm_armci_msg {
    struct tlm_armci_msg *next;
    uint32_t kind, a, b; /* MSG: a = tag; COLL: a = ctx, b = seq */
    int src;             /* absolute rank (COLL: group rank) */
    size_t bytes;
    unsigned char data[];
} tlm_armci_msg_t;

/** Wait for (and unlink) the first message matching kind, a, b and src
 *  (src < 0: any).  The caller frees it. */
tlm_armci_msg_t *tlm_armci_inbox_wait(const char *call, uint32_t kind,
                                      uint32_t a, uint32_t b, int src);

/** Mutex handlers (armci_mutex_hdl.c), called from the AM handler. */
void tlm_armci_mutex_am(telemem_am_token_t tok, const uint32_t *args,
                        unsigned nargs, int src);

/* ------------------------------------------------------------------------
 * Groups.  ARMCI_Group.grp_to_abs points into the group's info block,
 * which holds what the fixed ARMCI-MPI layout has no room for. */
struct tlm_armci_grp {
    uint64_t magic;
    uint32_t ctx;      /* context id of the group's collectives (0 world) */
    uint32_t coll_seq; /* collectives started on it */
    uint64_t alloc_seq; /* ARMCI_Malloc_group calls on it */
    int size, rank;
    int *abs_to_grp;   /* tlm_armci.n entries, -1 for non-members
                        * (points after grp_to_abs) */
    int grp_to_abs[];  /* size entries, then abs_to_grp's */
};

#define TLM_ARMCI_GRP_MAGIC 0x54656c41524d4349ull /* "TelARMCI" */

/** The info of a group; fails (naming the call) for a struct that is not
 *  an ARMCI group or when this rank is not a member. */
tlm_armci_grp_t *tlm_armci_grp_get(const char *call, const ARMCI_Group *g);
/** Build the world group (init) and tear groups down (finalize). */
void tlm_armci_grp_init(void);
void tlm_armci_grp_fini(void);

/* Group collectives (members only, same order on every member). */
void tlm_armci_grp_barrier(const char *call, tlm_armci_grp_t *g);
void tlm_armci_grp_bcast(const char *call, tlm_armci_grp_t *g, void *buf,
                         size_t bytes, int root_grank);
void tlm_armci_grp_allgather(const char *call, tlm_armci_grp_t *g,
                             const void *in, void *out, size_t bytes);
/** A context id fresh on every member (collective over @p g). */
uint32_t tlm_armci_grp_new_ctx(const char *call, tlm_armci_grp_t *g);

/** Reduce n elements of x (ARMCI_INT..ARMCI_DOUBLE) with op over g. */
void tlm_armci_gop(const char *call, tlm_armci_grp_t *g, void *x, int n,
                   const char *op, int type);

/* ------------------------------------------------------------------------
 * Memory (armci_mem.c) */

/** Free every allocation left at finalize. */
void tlm_armci_mem_fini(void);

/* ------------------------------------------------------------------------
 * MPI glue (armci_mpi.c; no-ops in a build without MPI). */

/** Collective at init: decide tlm_armci.mpi_mode (MPI initialized by the
 *  program over exactly the Telemem ranks, rank for rank). */
void tlm_armci_mpi_detect(void);
/** Set g->comm / noncoll_pgroup_comm of the world group. */
void tlm_armci_mpi_world(ARMCI_Group *g);
/** Collective over @p parent: child->comm from MPI_Comm_split (color < 0:
 *  not a member).  MPI_COMM_NULL when not in MPI mode. */
void tlm_armci_mpi_child(const ARMCI_Group *parent, ARMCI_Group *child,
                         int color, int key);
/** Free a group's communicators (if MPI is still running). */
void tlm_armci_mpi_free(ARMCI_Group *g);
/** MPI_Abort when MPI runs over the job; returns otherwise. */
void tlm_armci_mpi_abort(int code);
/** armci_msg_init: MPI_Init when started by an MPI launcher and MPI is not
 *  initialized yet. */
void tlm_armci_mpi_init_if_launched(int *argc, char ***argv);
/** armci_msg_finalize's MPI_Finalize: at once for MPI that armci_msg_init
 *  started, at exit (if still running) for MPI the program started. */
void tlm_armci_mpi_finalize_msg(void);
/** If MPI is running: call @p end at the start of MPI_Finalize (once per
 *  process; later calls do nothing). */
void tlm_armci_mpi_on_finalize(void (*end)(void));

#endif /* TLM_ARMCI_INTERNAL_H */

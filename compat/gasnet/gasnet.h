/* gasnet.h - the GASNet-1 API (specification v1.8 plus the later GASNet-1
 * additions clients use) implemented over Telemem: the public declarations
 * of libgasnet, the header a GASNet-1 client includes (it brings
 * gasnet_basic.h, gasnet_vis.h and gasnet_coll.h; gasnet_tools.h beside
 * it). */
#ifndef GASNET_H
#define GASNET_H
#define _INCLUDED_GASNET_H

/**
 * @file gasnet.h
 * @brief GASNet-1 core and extended API over Telemem.
 *
 * Model.  A job has gasnet_nodes() nodes (one Telemem rank each).  Every
 * node calls gasnet_init() first, then gasnet_attach(), which registers
 * the client's active-message handlers and allocates this node's
 * remote-access segment (GASNET_SEGMENT_FAST).  Puts, gets, memsets and
 * Long active messages may only address memory inside the target node's
 * segment; gasnet_getSegmentInfo() tells where every segment is.
 *
 * Progress.  Telemem is polling-based: a node runs active-message handlers
 * and serves other nodes' puts and gets only while it is inside a GASNet
 * call.  A node that computes for a long time should call gasnet_AMPoll()
 * now and then.
 *
 * Threads.  GASNET_SEQ (the default), GASNET_PAR and GASNET_PARSYNC, chosen
 * by the client's -D flag (gasnet-seq.pc, gasnet-par.pc, telemem-<model>.mak);
 * one library serves all three: gasnet_init names the model.  Under SEQ and
 * PARSYNC handlers run in the calling thread inside GASNet calls (Telemem's
 * progress thread is refused); under PAR any thread may call anything and
 * handlers run on whichever thread polls, one at a time.
 *
 * Errors.  Core API functions return GASNET_OK or a GASNET_ERR_* code and
 * print the cause on stderr.  As the specification says, errors in the
 * extended API (bad node, address outside the segment, transport failure)
 * and violations of the handler rules are fatal: the call prints a
 * message naming itself and ends the whole job with exit status 1.
 *
 * How each call maps onto Telemem, the limits and the benchmark figures:
 * docs/gasnet.md.
 */

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "gasnet_basic.h"

/* ------------------------------------------------------------------------ */
/* Threading configuration */

#if (defined(GASNET_SEQ) + defined(GASNET_PAR) + defined(GASNET_PARSYNC)) > 1
#error "define at most one of GASNET_SEQ, GASNET_PAR and GASNET_PARSYNC"
#endif
#if !defined(GASNET_PAR) && !defined(GASNET_PARSYNC) && !defined(GASNET_SEQ)
#define GASNET_SEQ 1
#endif
/* The thread model as a number (0 SEQ, 1 PARSYNC, 2 PAR) and a word. */
#if defined(GASNET_PAR)
#define GASNETC_THREADMODEL 2
#define GASNETC_THREADMODEL_STR "PAR"
#elif defined(GASNET_PARSYNC)
#define GASNETC_THREADMODEL 1
#define GASNETC_THREADMODEL_STR "PARSYNC"
#else
#define GASNETC_THREADMODEL 0
#define GASNETC_THREADMODEL_STR "SEQ"
#endif

#if defined(__GNUC__)
#define GASNETC_API __attribute__((visibility("default")))
#define GASNETC_NORETURN __attribute__((noreturn))
#else
#define GASNETC_API
#define GASNETC_NORETURN
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** @name Compile-time constants */
/**@{*/

/** Version of the GASNet specification this header follows. */
#define GASNET_SPEC_VERSION_MAJOR 1
#define GASNET_SPEC_VERSION_MINOR 8
/** Deprecated alias of GASNET_SPEC_VERSION_MAJOR. */
#define GASNET_VERSION GASNET_SPEC_VERSION_MAJOR

/** Release of this implementation.  It carries the number of the last
 *  GASNet-1 release whose additions (blocking gasnet_barrier(),
 *  gasnet_barrier_result(), mixed named/anonymous barriers) it provides,
 *  so that clients' feature tests pass; GASNET_CONDUIT_TELEMEM tells it
 *  apart from Berkeley's GASNet. */
#define GASNET_RELEASE_VERSION_MAJOR GASNETI_RELEASE_VERSION_MAJOR
#define GASNET_RELEASE_VERSION_MINOR GASNETI_RELEASE_VERSION_MINOR
#define GASNET_RELEASE_VERSION_PATCH GASNETI_RELEASE_VERSION_PATCH

/** This GASNet runs over Telemem (the "conduit"). */
#define GASNET_CONDUIT_TELEMEM 1
#define GASNET_CONDUIT_NAME TELEMEM
#define GASNET_CONDUIT_NAME_STR "TELEMEM"
/** Names and versions of the core and extended API implementations. */
#define GASNET_CORE_NAME TELEMEM
#define GASNET_CORE_NAME_STR "TELEMEM"
#define GASNET_CORE_VERSION 1.0
#define GASNET_CORE_VERSION_STR "1.0"
#define GASNET_EXTENDED_NAME TELEMEM
#define GASNET_EXTENDED_NAME_STR "TELEMEM"
#define GASNET_EXTENDED_VERSION 1.0
#define GASNET_EXTENDED_VERSION_STR "1.0"

/** Segment configuration: segments are allocated by gasnet_attach() with
 *  telemem_malloc_all() (ordinary memory, registered with Telemem, never
 *  pinned). */
#define GASNET_SEGMENT_FAST 1

/** Segment bases differ between nodes. */
#define GASNET_ALIGNED_SEGMENTS 0

/** Granularity of segment sizes and bases (the system page size). */
#define GASNET_PAGESIZE GASNETI_PAGESIZE

/** Most nodes in one job (Telemem ranks are C ints). */
#define GASNET_MAXNODES 0x7FFFFFFFu

/** No shared-memory cross-mapping of segments (gasnet_nodeinfo_t.offset is
 *  always 0). */
#define GASNET_PSHM 0

#define GASNETC_STR2_(x) #x
#define GASNETC_STR_(x) GASNETC_STR2_(x)

/** The compile-time configuration, compared by string equality to check
 *  that a client and the library agree.  The same text is embedded in the
 *  library ("$GASNetConfig: ...$"). */
#define GASNET_CONFIG_STRING                                                \
    "RELEASE=" GASNETC_STR_(GASNET_RELEASE_VERSION_MAJOR) "."               \
    GASNETC_STR_(GASNET_RELEASE_VERSION_MINOR) "."                          \
    GASNETC_STR_(GASNET_RELEASE_VERSION_PATCH) ",SPEC=1.8,"                 \
    "CONDUIT=TELEMEM(TELEMEM-1.0/TELEMEM-1.0),THREADMODEL="        \
    GASNETC_THREADMODEL_STR ","                                             \
    "SEGMENT=FAST,PTR=" GASNETC_STR_(SIZEOF_VOID_P) "byte,noalign,nopshm"

/** Size of gasnet_register_value_t in bytes (a preprocessor literal). */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define SIZEOF_GASNET_REGISTER_VALUE_T 8
#else
#define SIZEOF_GASNET_REGISTER_VALUE_T 4
#endif
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Errors */
/**@{*/

/** Success; every GASNET_ERR_* is non-zero (the specification's values). */
#define GASNET_OK 0
#define _GASNET_ERR_BASE 10000
/** gasnet_init()/gasnet_attach() not called (or called twice). */
#define GASNET_ERR_NOT_INIT (_GASNET_ERR_BASE + 1)
/** The communication system or memory failed. */
#define GASNET_ERR_RESOURCE (_GASNET_ERR_BASE + 2)
/** An argument is invalid (the message on stderr says which). */
#define GASNET_ERR_BAD_ARG (_GASNET_ERR_BASE + 3)
/** A try_* call: the operation is not complete yet. */
#define GASNET_ERR_NOT_READY (_GASNET_ERR_BASE + 4)
/** A barrier's names or flags did not match. */
#define GASNET_ERR_BARRIER_MISMATCH (_GASNET_ERR_BASE + 5)

/** Symbolic name of an error code ("GASNET_ERR_BAD_ARG"); "*unknown*" for
 *  other values.  Never NULL; callable at any time. */
GASNETC_API const char *gasnet_ErrorName(int errval);
/** One-line description of an error code.  Never NULL. */
GASNETC_API const char *gasnet_ErrorDesc(int errval);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Types */
/**@{*/

/** 0-based node index. */
typedef uint32_t gasnet_node_t;
/** Index into the active-message handler table (0..255). */
typedef uint8_t gasnet_handler_t;
/** A 32-bit handler argument. */
typedef int32_t gasnet_handlerarg_t;
/** The message being handled; valid only inside its handler. */
typedef struct gasnetc_token *gasnet_token_t;
/** The largest unsigned integer held in one register. */
#if SIZEOF_GASNET_REGISTER_VALUE_T == 8
typedef uint64_t gasnet_register_value_t;
#else
typedef uint32_t gasnet_register_value_t;
#endif
/** A non-blocking explicit-handle operation; all-zero is
 *  GASNET_INVALID_HANDLE (an operation already complete). */
typedef struct gasnete_op *gasnet_handle_t;
#define GASNET_INVALID_HANDLE ((gasnet_handle_t)0)
/** A non-blocking value get (gasnet_get_nb_val()); not interchangeable with
 *  gasnet_handle_t. */
typedef struct gasnete_valget_op *gasnet_valget_handle_t;

/* Handlers have one of the prototypes of the active-message section and
 * are stored unprototyped, as GASNet-1 declares them, so that a table can
 * be initialised with plain function names. */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
typedef void (*gasnetc_handler_fn_t)();
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic pop
#endif

/** One client handler for gasnet_attach(): @c index 128..255, or 0 to let
 *  gasnet_attach() choose one (it writes the choice back). */
typedef struct {
    gasnet_handler_t index;
    gasnetc_handler_fn_t fnptr;
} gasnet_handlerentry_t;

/** A node's remote-access segment. */
typedef struct {
    void *addr;
    uintptr_t size;
} gasnet_seginfo_t;

/** Where a node runs: @c host numbers the machines of the job (0-based,
 *  in order of their lowest node), @c supernode the groups of nodes that
 *  share memory (here the same as host), @c offset is always 0 (segments
 *  are not cross-mapped). */
typedef struct {
    gasnet_node_t host;
    gasnet_node_t supernode;
    intptr_t offset;
} gasnet_nodeinfo_t;

/** Handler-safe lock (see gasnet_hsl_lock()). */
typedef struct {
    pthread_mutex_t lock_;
    void *owner_; /* the holding thread's mark, NULL when free */
} gasnet_hsl_t;
#define GASNET_HSL_INITIALIZER {PTHREAD_MUTEX_INITIALIZER, 0}

/** Per-thread metadata handle of the threadinfo optimisation (unused in
 *  GASNET_SEQ: always NULL). */
typedef void *gasnet_threadinfo_t;
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Job control and queries */
/**@{*/

/**
 * Start the job: initialises Telemem (telemem_initialize()), learns this
 * node's index and the job size, the hosts (gasnet_getNodeInfo()) and the
 * segment limits, and installs GASNet's internal handlers.  Collective.
 * Call it first in main().  @p argc and @p argv may be NULL; they are not
 * modified.
 *
 * Between gasnet_init() and gasnet_attach() only gasnet_mynode(),
 * gasnet_nodes(), gasnet_getMaxLocalSegmentSize(),
 * gasnet_getMaxGlobalSegmentSize(), gasnet_getenv(), gasnet_getNodeInfo()
 * and gasnet_exit() may be called.
 *
 * If the program returns from main() without gasnet_exit(), an exit hook
 * finishes the job as gasnet_exit(0) would (without changing the exit
 * status).
 *
 * @retval GASNET_OK
 * @retval GASNET_ERR_NOT_INIT  called a second time
 * @retval GASNET_ERR_RESOURCE  Telemem could not start (its message says
 *                              why: bad TELEMEM_* setting, no launcher),
 *                              or TELEMEM_PROGRESS_THREAD is on in a SEQ
 *                              or PARSYNC client (handlers would run on a
 *                              second thread)
 */
GASNETC_API int gasnet_init(int *argc, char ***argv);
/* gasnet_init() as the client's thread model asks (the name carries it,
 * so GASNET_PAR clients get Telemem's TELEMEM_THREAD_MULTIPLE). */
GASNETC_API int gasnetc_init_seq(int *argc, char ***argv);
GASNETC_API int gasnetc_init_parsync(int *argc, char ***argv);
GASNETC_API int gasnetc_init_par(int *argc, char ***argv);
#ifndef GASNETC_BUILDING_LIBGASNET
#if GASNETC_THREADMODEL == 2
#define gasnet_init gasnetc_init_par
#elif GASNETC_THREADMODEL == 1
#define gasnet_init gasnetc_init_parsync
#else
#define gasnet_init gasnetc_init_seq
#endif
#endif

/**
 * Register the client's handlers, allocate this node's segment and
 * synchronise all nodes (a successful call is a barrier).  Collective.
 *
 * @param table       @p numentries handlers; indices 128..255, or 0 for
 *                    "assign one": gasnet_attach() writes the chosen index
 *                    back (lowest free index, in table order, so equal
 *                    tables get equal assignments).  May be NULL when
 *                    @p numentries is 0.
 * @param segsize     segment size, a multiple of GASNET_PAGESIZE and at
 *                    most gasnet_getMaxLocalSegmentSize(); 0 = no segment
 *                    (puts, gets and Long messages to this node are then
 *                    refused).  Sizes may differ between nodes.
 * @param minheapoffset  ignored (segments come from the heap allocator).
 *
 * The segment is GASNET_PAGESIZE-aligned, not initialised, and valid until
 * gasnet_exit().
 *
 * @retval GASNET_OK
 * @retval GASNET_ERR_NOT_INIT  before gasnet_init(), or called twice
 * @retval GASNET_ERR_BAD_ARG   table NULL with entries, numentries < 0, an
 *                              index in 1..127, a duplicate index, a NULL
 *                              handler, more handlers than free indices, a
 *                              segsize that is not a page multiple or
 *                              exceeds the maximum (all checked before any
 *                              communication)
 * @retval GASNET_ERR_RESOURCE  a node could not allocate its segment (all
 *                              nodes return it)
 */
GASNETC_API int gasnet_attach(gasnet_handlerentry_t *table, int numentries,
                              uintptr_t segsize, uintptr_t minheapoffset);

/**
 * Largest segsize gasnet_attach() accepts on this node: the physical
 * memory divided by the number of nodes on this host, rounded down to a
 * page, or the GASNET_MAX_SEGSIZE environment variable (a size such as
 * "512M") when it is set and smaller.  0 before gasnet_init().
 */
GASNETC_API uintptr_t gasnet_getMaxLocalSegmentSize(void);

/** The smallest gasnet_getMaxLocalSegmentSize() of all nodes. */
GASNETC_API uintptr_t gasnet_getMaxGlobalSegmentSize(void);

/**
 * End the job with @p exitcode; never returns.  Not collective: any node
 * may call it at any time after gasnet_init(), also from a handler.
 *
 * - @p exitcode != 0: flushes stdout/stderr and ends this process with
 *   that status; the launcher (telemem-run) then ends every other node and
 *   reports the status.
 * - @p exitcode == 0: tells every other node.  A node that calls
 *   gasnet_exit() itself joins at once; any other node joins from the
 *   first GASNet call it makes one second or more after the notice arrived
 *   (the grace lets a node finish the barrier that usually precedes
 *   everyone's gasnet_exit(); a node that never calls GASNet again cannot
 *   be stopped by a status-0 exit).  Once every node has joined, the nodes
 *   finish Telemem together (telemem_finalize()) and exit with 0.  If some
 *   node has not joined within GASNET_EXITTIMEOUT seconds (default 60),
 *   the caller prints which and ends the job with status 1.
 * - From inside a handler or while holding an HSL the process ends at
 *   once with @p exitcode (no coordination is possible there).
 */
GASNETC_API void gasnet_exit(int exitcode) GASNETC_NORETURN;

/** This node's index (0 before gasnet_init()). */
GASNETC_API gasnet_node_t gasnet_mynode(void);
/** Number of nodes (0 before gasnet_init()). */
GASNETC_API gasnet_node_t gasnet_nodes(void);

/**
 * Fill seginfo_table[i] with node i's segment, for i < min(@p numentries,
 * gasnet_nodes()); further entries are left untouched.  Not collective.
 * A node that attached with segsize 0 reports {NULL, 0}.
 * @retval GASNET_OK
 * @retval GASNET_ERR_NOT_INIT  before gasnet_attach()
 * @retval GASNET_ERR_BAD_ARG   numentries < 0, or table NULL with entries
 */
GASNETC_API int gasnet_getSegmentInfo(gasnet_seginfo_t *seginfo_table,
                                      int numentries);

/**
 * Fill nodeinfo_table[i] with node i's host and supernode (see
 * gasnet_nodeinfo_t) for i < min(@p numentries, gasnet_nodes()).
 * Allowed after gasnet_init().
 * @retval GASNET_OK, GASNET_ERR_NOT_INIT, GASNET_ERR_BAD_ARG (as above)
 */
GASNETC_API int gasnet_getNodeInfo(gasnet_nodeinfo_t *nodeinfo_table,
                                   int numentries);

/** The environment the job was started with (getenv(): telemem-run
 *  passes the launching environment to every node).  NULL when unset or
 *  @p name is NULL. */
GASNETC_API char *gasnet_getenv(const char *name);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Active messages
 *
 * Handler prototypes (M = number of arguments, 0..16):
 * @code
 * void short_handler(gasnet_token_t token, gasnet_handlerarg_t a0, ...);
 * void medlong_handler(gasnet_token_t token, void *buf, size_t nbytes,
 *                      gasnet_handlerarg_t a0, ...);
 * @endcode
 * Short carries arguments only; Medium also a payload of up to
 * gasnet_AMMaxMedium() bytes delivered in a temporary buffer (8-byte
 * aligned, valid during the handler); Long a payload of up to
 * gasnet_AMMaxLong{Request,Reply}() bytes written at @c dest_addr in the
 * target's segment before the handler runs with buf == dest_addr.
 *
 * Requests return when the payload may be reused (LongAsync too).
 * Handlers run inside the target's GASNet calls, in issue order per
 * sender, interleaved with that sender's puts and gets.
 *
 * Handler rules, checked always (a violation is fatal and names the call):
 * a request handler may call gasnet_AMReply*() at most once, with its own
 * token; a reply handler may not reply; no handler may send requests,
 * poll, or use the extended API; a handler must release the HSLs it took.
 *
 * Each of the function families below exists for M = 0..16 arguments:
 * gasnet_AMRequestShortM, gasnet_AMRequestMediumM, gasnet_AMRequestLongM,
 * gasnet_AMRequestLongAsyncM, gasnet_AMReplyShortM, gasnet_AMReplyMediumM,
 * gasnet_AMReplyLongM (static inline functions over the gasnetc_* entry
 * points declared here).
 *
 * @retval GASNET_OK
 * @retval GASNET_ERR_BAD_ARG  dest >= gasnet_nodes(), handler index below
 *         128, nbytes above the limit, NULL source with nbytes > 0, Long
 *         destination not inside the target's segment
 * @retval GASNET_ERR_NOT_INIT before gasnet_attach()
 * @retval GASNET_ERR_RESOURCE Telemem failed (dead peer, timeout)
 */
/**@{*/

/** Arguments per message. */
#define gasnet_AMMaxArgs() ((size_t)16)
/** Largest Medium payload (64 KiB; Telemem fragments it as needed). */
#define gasnet_AMMaxMedium() ((size_t)65536)
/** Largest Long request payload (4 MiB). */
#define gasnet_AMMaxLongRequest() ((size_t)4194304)
/** Largest Long reply payload (4 MiB). */
#define gasnet_AMMaxLongReply() ((size_t)4194304)

/* The entry points behind the M-argument families. */
GASNETC_API int gasnetc_AMRequestShortM(gasnet_node_t dest,
                                        gasnet_handler_t handler, int numargs,
                                        const gasnet_handlerarg_t *args);
GASNETC_API int gasnetc_AMRequestMediumM(gasnet_node_t dest,
                                         gasnet_handler_t handler,
                                         void *source_addr, size_t nbytes,
                                         int numargs,
                                         const gasnet_handlerarg_t *args);
GASNETC_API int gasnetc_AMRequestLongM(gasnet_node_t dest,
                                       gasnet_handler_t handler,
                                       void *source_addr, size_t nbytes,
                                       void *dest_addr, int numargs,
                                       const gasnet_handlerarg_t *args);
GASNETC_API int gasnetc_AMRequestLongAsyncM(gasnet_node_t dest,
                                            gasnet_handler_t handler,
                                            void *source_addr, size_t nbytes,
                                            void *dest_addr, int numargs,
                                            const gasnet_handlerarg_t *args);
GASNETC_API int gasnetc_AMReplyShortM(gasnet_token_t token,
                                      gasnet_handler_t handler, int numargs,
                                      const gasnet_handlerarg_t *args);
GASNETC_API int gasnetc_AMReplyMediumM(gasnet_token_t token,
                                       gasnet_handler_t handler,
                                       void *source_addr, size_t nbytes,
                                       int numargs,
                                       const gasnet_handlerarg_t *args);
GASNETC_API int gasnetc_AMReplyLongM(gasnet_token_t token,
                                     gasnet_handler_t handler,
                                     void *source_addr, size_t nbytes,
                                     void *dest_addr, int numargs,
                                     const gasnet_handlerarg_t *args);

/* Parameter lists, argument lists and argument vectors for M = 0..16. */
#define GASNETC_P_0
#define GASNETC_P_1 , gasnet_handlerarg_t gasnetc_a0
#define GASNETC_P_2 GASNETC_P_1, gasnet_handlerarg_t gasnetc_a1
#define GASNETC_P_3 GASNETC_P_2, gasnet_handlerarg_t gasnetc_a2
#define GASNETC_P_4 GASNETC_P_3, gasnet_handlerarg_t gasnetc_a3
#define GASNETC_P_5 GASNETC_P_4, gasnet_handlerarg_t gasnetc_a4
#define GASNETC_P_6 GASNETC_P_5, gasnet_handlerarg_t gasnetc_a5
#define GASNETC_P_7 GASNETC_P_6, gasnet_handlerarg_t gasnetc_a6
#define GASNETC_P_8 GASNETC_P_7, gasnet_handlerarg_t gasnetc_a7
#define GASNETC_P_9 GASNETC_P_8, gasnet_handlerarg_t gasnetc_a8
#define GASNETC_P_10 GASNETC_P_9, gasnet_handlerarg_t gasnetc_a9
#define GASNETC_P_11 GASNETC_P_10, gasnet_handlerarg_t gasnetc_a10
#define GASNETC_P_12 GASNETC_P_11, gasnet_handlerarg_t gasnetc_a11
#define GASNETC_P_13 GASNETC_P_12, gasnet_handlerarg_t gasnetc_a12
#define GASNETC_P_14 GASNETC_P_13, gasnet_handlerarg_t gasnetc_a13
#define GASNETC_P_15 GASNETC_P_14, gasnet_handlerarg_t gasnetc_a14
#define GASNETC_P_16 GASNETC_P_15, gasnet_handlerarg_t gasnetc_a15
#define GASNETC_V_1 gasnetc_a0
#define GASNETC_V_2 GASNETC_V_1, gasnetc_a1
#define GASNETC_V_3 GASNETC_V_2, gasnetc_a2
#define GASNETC_V_4 GASNETC_V_3, gasnetc_a3
#define GASNETC_V_5 GASNETC_V_4, gasnetc_a4
#define GASNETC_V_6 GASNETC_V_5, gasnetc_a5
#define GASNETC_V_7 GASNETC_V_6, gasnetc_a6
#define GASNETC_V_8 GASNETC_V_7, gasnetc_a7
#define GASNETC_V_9 GASNETC_V_8, gasnetc_a8
#define GASNETC_V_10 GASNETC_V_9, gasnetc_a9
#define GASNETC_V_11 GASNETC_V_10, gasnetc_a10
#define GASNETC_V_12 GASNETC_V_11, gasnetc_a11
#define GASNETC_V_13 GASNETC_V_12, gasnetc_a12
#define GASNETC_V_14 GASNETC_V_13, gasnetc_a13
#define GASNETC_V_15 GASNETC_V_14, gasnetc_a14
#define GASNETC_V_16 GASNETC_V_15, gasnetc_a15
#define GASNETC_DECL_N_(M)                                                  \
    const gasnet_handlerarg_t gasnetc_v_[M] = {GASNETC_V_##M};
#define GASNETC_DECL_0
#define GASNETC_DECL_1 GASNETC_DECL_N_(1)
#define GASNETC_DECL_2 GASNETC_DECL_N_(2)
#define GASNETC_DECL_3 GASNETC_DECL_N_(3)
#define GASNETC_DECL_4 GASNETC_DECL_N_(4)
#define GASNETC_DECL_5 GASNETC_DECL_N_(5)
#define GASNETC_DECL_6 GASNETC_DECL_N_(6)
#define GASNETC_DECL_7 GASNETC_DECL_N_(7)
#define GASNETC_DECL_8 GASNETC_DECL_N_(8)
#define GASNETC_DECL_9 GASNETC_DECL_N_(9)
#define GASNETC_DECL_10 GASNETC_DECL_N_(10)
#define GASNETC_DECL_11 GASNETC_DECL_N_(11)
#define GASNETC_DECL_12 GASNETC_DECL_N_(12)
#define GASNETC_DECL_13 GASNETC_DECL_N_(13)
#define GASNETC_DECL_14 GASNETC_DECL_N_(14)
#define GASNETC_DECL_15 GASNETC_DECL_N_(15)
#define GASNETC_DECL_16 GASNETC_DECL_N_(16)
#define GASNETC_ARGV_0 ((const gasnet_handlerarg_t *)0)
#define GASNETC_ARGV_1 gasnetc_v_
#define GASNETC_ARGV_2 gasnetc_v_
#define GASNETC_ARGV_3 gasnetc_v_
#define GASNETC_ARGV_4 gasnetc_v_
#define GASNETC_ARGV_5 gasnetc_v_
#define GASNETC_ARGV_6 gasnetc_v_
#define GASNETC_ARGV_7 gasnetc_v_
#define GASNETC_ARGV_8 gasnetc_v_
#define GASNETC_ARGV_9 gasnetc_v_
#define GASNETC_ARGV_10 gasnetc_v_
#define GASNETC_ARGV_11 gasnetc_v_
#define GASNETC_ARGV_12 gasnetc_v_
#define GASNETC_ARGV_13 gasnetc_v_
#define GASNETC_ARGV_14 gasnetc_v_
#define GASNETC_ARGV_15 gasnetc_v_
#define GASNETC_ARGV_16 gasnetc_v_

/* One family member of each kind for M arguments. */
#define GASNETC_AM_FAMILY_(M)                                               \
    static inline int gasnet_AMRequestShort##M(                             \
        gasnet_node_t dest, gasnet_handler_t handler GASNETC_P_##M)         \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestShortM(dest, handler, M, GASNETC_ARGV_##M); \
    }                                                                       \
    static inline int gasnet_AMRequestMedium##M(                            \
        gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,    \
        size_t nbytes GASNETC_P_##M)                                        \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestMediumM(dest, handler, source_addr, nbytes, \
                                        M, GASNETC_ARGV_##M);               \
    }                                                                       \
    static inline int gasnet_AMRequestLong##M(                              \
        gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,    \
        size_t nbytes, void *dest_addr GASNETC_P_##M)                       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestLongM(dest, handler, source_addr, nbytes,   \
                                      dest_addr, M, GASNETC_ARGV_##M);      \
    }                                                                       \
    static inline int gasnet_AMRequestLongAsync##M(                         \
        gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,    \
        size_t nbytes, void *dest_addr GASNETC_P_##M)                       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestLongAsyncM(dest, handler, source_addr,      \
                                           nbytes, dest_addr, M,            \
                                           GASNETC_ARGV_##M);               \
    }                                                                       \
    static inline int gasnet_AMReplyShort##M(                               \
        gasnet_token_t token, gasnet_handler_t handler GASNETC_P_##M)       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMReplyShortM(token, handler, M, GASNETC_ARGV_##M);  \
    }                                                                       \
    static inline int gasnet_AMReplyMedium##M(                              \
        gasnet_token_t token, gasnet_handler_t handler, void *source_addr,  \
        size_t nbytes GASNETC_P_##M)                                        \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMReplyMediumM(token, handler, source_addr, nbytes,  \
                                      M, GASNETC_ARGV_##M);                 \
    }                                                                       \
    static inline int gasnet_AMReplyLong##M(                                \
        gasnet_token_t token, gasnet_handler_t handler, void *source_addr,  \
        size_t nbytes, void *dest_addr GASNETC_P_##M)                       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMReplyLongM(token, handler, source_addr, nbytes,    \
                                    dest_addr, M, GASNETC_ARGV_##M);        \
    }

GASNETC_AM_FAMILY_(0)
GASNETC_AM_FAMILY_(1)
GASNETC_AM_FAMILY_(2)
GASNETC_AM_FAMILY_(3)
GASNETC_AM_FAMILY_(4)
GASNETC_AM_FAMILY_(5)
GASNETC_AM_FAMILY_(6)
GASNETC_AM_FAMILY_(7)
GASNETC_AM_FAMILY_(8)
GASNETC_AM_FAMILY_(9)
GASNETC_AM_FAMILY_(10)
GASNETC_AM_FAMILY_(11)
GASNETC_AM_FAMILY_(12)
GASNETC_AM_FAMILY_(13)
GASNETC_AM_FAMILY_(14)
GASNETC_AM_FAMILY_(15)
GASNETC_AM_FAMILY_(16)

/* The variadic forms (gasnet_AMRequestShort(dest, handler, numargs, ...)
 * and friends): numargs 32-bit arguments follow. */
GASNETC_API int gasnetc_AMRequestShortV(gasnet_node_t dest,
                                        gasnet_handler_t handler,
                                        int numargs, ...);
GASNETC_API int gasnetc_AMRequestMediumV(gasnet_node_t dest,
                                         gasnet_handler_t handler,
                                         void *source_addr, size_t nbytes,
                                         int numargs, ...);
GASNETC_API int gasnetc_AMRequestLongV(gasnet_node_t dest,
                                       gasnet_handler_t handler,
                                       void *source_addr, size_t nbytes,
                                       void *dest_addr, int numargs, ...);
GASNETC_API int gasnetc_AMRequestLongAsyncV(gasnet_node_t dest,
                                            gasnet_handler_t handler,
                                            void *source_addr, size_t nbytes,
                                            void *dest_addr, int numargs, ...);
GASNETC_API int gasnetc_AMReplyShortV(gasnet_token_t token,
                                      gasnet_handler_t handler,
                                      int numargs, ...);
GASNETC_API int gasnetc_AMReplyMediumV(gasnet_token_t token,
                                       gasnet_handler_t handler,
                                       void *source_addr, size_t nbytes,
                                       int numargs, ...);
GASNETC_API int gasnetc_AMReplyLongV(gasnet_token_t token,
                                     gasnet_handler_t handler,
                                     void *source_addr, size_t nbytes,
                                     void *dest_addr, int numargs, ...);
#define gasnet_AMRequestShort gasnetc_AMRequestShortV
#define gasnet_AMRequestMedium gasnetc_AMRequestMediumV
#define gasnet_AMRequestLong gasnetc_AMRequestLongV
#define gasnet_AMRequestLongAsync gasnetc_AMRequestLongAsyncV
#define gasnet_AMReplyShort gasnetc_AMReplyShortV
#define gasnet_AMReplyMedium gasnetc_AMReplyMediumV
#define gasnet_AMReplyLong gasnetc_AMReplyLongV

/**
 * Run the handlers of arrived messages and serve other nodes' puts and
 * gets (telemem_poll()); never blocks.  Not allowed in a handler or while
 * holding an HSL (fatal).
 * @retval GASNET_OK
 * @retval GASNET_ERR_NOT_INIT   before gasnet_init()
 * @retval GASNET_ERR_RESOURCE   the transport failed
 */
GASNETC_API int gasnet_AMPoll(void);

/* One step of GASNET_BLOCKUNTIL: polls until Telemem handled something,
 * or until a run of empty polls ends with the processor yielded (see
 * gasnet_set_waitmode()). */
GASNETC_API void gasnetc_block_poll(unsigned *idle);

/**
 * Poll until @p cond is true.  @p cond is evaluated first and again each
 * time a poll handled messages (and after every yield of the processor):
 * as the specification allows, it must depend only on state that handlers
 * change.  Not allowed in a handler or while holding an HSL (fatal).
 */
#define GASNET_BLOCKUNTIL(cond)                                             \
    do {                                                                    \
        unsigned gasnetc_idle_ = 0;                                         \
        while (!(cond))                                                     \
            gasnetc_block_poll(&gasnetc_idle_);                             \
    } while (0)

/**
 * The node that sent the message being handled.
 * @retval GASNET_OK
 * @retval GASNET_ERR_BAD_ARG  token or srcindex NULL, or @p token is not
 *                             the running handler's token
 */
GASNETC_API int gasnet_AMGetMsgSource(gasnet_token_t token,
                                      gasnet_node_t *srcindex);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Atomicity control
 *
 * Handlers run only inside GASNet calls of the one client thread, so
 * no-interrupt sections need no work: gasnet_hold_interrupts() and
 * gasnet_resume_interrupts() do nothing.
 *
 * Handler-safe locks are POSIX mutexes with a "held" flag.  The rules of
 * the specification are checked (fatal when broken): no recursive
 * locking, no unlocking of a lock not held, no destroying a held lock, no
 * polling or requests while holding one, a handler releases what it
 * took before it replies or returns.
 */
/**@{*/
#define gasnet_hold_interrupts() ((void)0)
#define gasnet_resume_interrupts() ((void)0)

/** Initialise a lock not statically initialised with
 *  GASNET_HSL_INITIALIZER. */
GASNETC_API void gasnet_hsl_init(gasnet_hsl_t *hsl);
/** Release a lock's resources; it must not be held. */
GASNETC_API void gasnet_hsl_destroy(gasnet_hsl_t *hsl);
/** Acquire @p hsl (also allowed inside handlers). */
GASNETC_API void gasnet_hsl_lock(gasnet_hsl_t *hsl);
/** Release @p hsl. */
GASNETC_API void gasnet_hsl_unlock(gasnet_hsl_t *hsl);
/** Acquire @p hsl if it is free: GASNET_OK, else GASNET_ERR_NOT_READY. */
GASNETC_API int gasnet_hsl_trylock(gasnet_hsl_t *hsl);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Extended API: memory-to-memory transfers
 *
 * Remote addresses must lie in the node's segment (checked: fatal
 * otherwise).  @p node may be this node.  nbytes 0 is allowed and does
 * nothing.
 *
 * Blocking put/get/memset return when the operation is complete at the
 * target.  Non-bulk puts (put, put_nb, put_nbi and the _val forms) let the
 * source be reused at once; bulk puts need it unchanged until the
 * operation is synchronised.
 *
 * Explicit-handle operations return a gasnet_handle_t to complete with
 * one of the gasnet_*_syncnb* calls (exactly once), or
 * GASNET_INVALID_HANDLE when already complete.  Implicit-handle (nbi)
 * operations are completed by gasnet_wait_syncnbi_*() (which complete all
 * of this node's operations, as telemem_quiet() does) or, when started in
 * an access region, by the region's handle.
 */
/**@{*/
GASNETC_API void gasnet_get(void *dest, gasnet_node_t node, void *src,
                            size_t nbytes);
GASNETC_API void gasnet_put(gasnet_node_t node, void *dest, void *src,
                            size_t nbytes);
GASNETC_API void gasnet_get_bulk(void *dest, gasnet_node_t node, void *src,
                                 size_t nbytes);
GASNETC_API void gasnet_put_bulk(gasnet_node_t node, void *dest, void *src,
                                 size_t nbytes);
/** As if @p node ran memset(dest, val, nbytes) (done there by an active
 *  message). */
GASNETC_API void gasnet_memset(gasnet_node_t node, void *dest, int val,
                               size_t nbytes);

GASNETC_API gasnet_handle_t gasnet_get_nb(void *dest, gasnet_node_t node,
                                          void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_put_nb(gasnet_node_t node, void *dest,
                                          void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_get_nb_bulk(void *dest, gasnet_node_t node,
                                               void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_put_nb_bulk(gasnet_node_t node, void *dest,
                                               void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_memset_nb(gasnet_node_t node, void *dest,
                                             int val, size_t nbytes);

/** Wait for one operation (GASNET_INVALID_HANDLE: returns at once).  The
 *  handle is dead afterwards. */
GASNETC_API void gasnet_wait_syncnb(gasnet_handle_t handle);
/** GASNET_OK (handle now dead) or GASNET_ERR_NOT_READY; polls once. */
GASNETC_API int gasnet_try_syncnb(gasnet_handle_t handle);
/** Wait for all; completed entries become GASNET_INVALID_HANDLE. */
GASNETC_API void gasnet_wait_syncnb_all(gasnet_handle_t *handles,
                                        size_t numhandles);
/** GASNET_OK if all are complete, else GASNET_ERR_NOT_READY; completed
 *  entries become GASNET_INVALID_HANDLE either way. */
GASNETC_API int gasnet_try_syncnb_all(gasnet_handle_t *handles,
                                      size_t numhandles);
/** Wait until at least one valid handle completes (returns at once when
 *  none is valid); completed entries become GASNET_INVALID_HANDLE. */
GASNETC_API void gasnet_wait_syncnb_some(gasnet_handle_t *handles,
                                         size_t numhandles);
/** GASNET_OK if at least one valid handle completed (or none is valid),
 *  else GASNET_ERR_NOT_READY. */
GASNETC_API int gasnet_try_syncnb_some(gasnet_handle_t *handles,
                                       size_t numhandles);

GASNETC_API void gasnet_get_nbi(void *dest, gasnet_node_t node, void *src,
                                size_t nbytes);
GASNETC_API void gasnet_put_nbi(gasnet_node_t node, void *dest, void *src,
                                size_t nbytes);
GASNETC_API void gasnet_get_nbi_bulk(void *dest, gasnet_node_t node,
                                     void *src, size_t nbytes);
GASNETC_API void gasnet_put_nbi_bulk(gasnet_node_t node, void *dest,
                                     void *src, size_t nbytes);
GASNETC_API void gasnet_memset_nbi(gasnet_node_t node, void *dest, int val,
                                   size_t nbytes);

/**
 * Complete the implicit-handle operations outside access regions.  Each
 * completes every outstanding operation of this node (telemem_quiet()).
 * The try_ forms poll once without waiting (telemem_quiet_test()):
 * GASNET_OK when every such operation is complete (as after the wait_
 * form), else GASNET_ERR_NOT_READY.  Not allowed inside an access region
 * (fatal).
 */
GASNETC_API void gasnet_wait_syncnbi_gets(void);
GASNETC_API void gasnet_wait_syncnbi_puts(void);
GASNETC_API void gasnet_wait_syncnbi_all(void);
GASNETC_API int gasnet_try_syncnbi_gets(void);
GASNETC_API int gasnet_try_syncnbi_puts(void);
GASNETC_API int gasnet_try_syncnbi_all(void);

/** The _nopoll tries of later GASNet-1 releases: as the try forms (which
 *  poll once; completing sooner is allowed). */
#define gasnet_try_syncnb_nopoll(h) gasnet_try_syncnb(h)
#define gasnet_try_syncnb_some_nopoll(ph, n) gasnet_try_syncnb_some((ph), (n))
#define gasnet_try_syncnb_all_nopoll(ph, n) gasnet_try_syncnb_all((ph), (n))

/** Start an access region: until gasnet_end_nbi_accessregion(), nbi
 *  operations are tracked individually.  Regions do not nest (fatal). */
GASNETC_API void gasnet_begin_nbi_accessregion(void);
/** End the region; the handle completes when all its nbi operations have
 *  (GASNET_INVALID_HANDLE if it had none). */
GASNETC_API gasnet_handle_t gasnet_end_nbi_accessregion(void);
/**@}*/

/** @name Extended API: register-memory operations
 * @p nbytes is 1..SIZEOF_GASNET_REGISTER_VALUE_T; the value is the
 * native-endian integer of that size (low-order bytes of @p value; gets
 * zero-extend). */
/**@{*/
GASNETC_API void gasnet_put_val(gasnet_node_t node, void *dest,
                                gasnet_register_value_t value, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_put_nb_val(gasnet_node_t node, void *dest,
                                              gasnet_register_value_t value,
                                              size_t nbytes);
GASNETC_API void gasnet_put_nbi_val(gasnet_node_t node, void *dest,
                                    gasnet_register_value_t value,
                                    size_t nbytes);
GASNETC_API gasnet_register_value_t gasnet_get_val(gasnet_node_t node,
                                                   void *src, size_t nbytes);
GASNETC_API gasnet_valget_handle_t gasnet_get_nb_val(gasnet_node_t node,
                                                     void *src, size_t nbytes);
/** Complete a gasnet_get_nb_val() and return its value (exactly once). */
GASNETC_API gasnet_register_value_t
gasnet_wait_syncnb_valget(gasnet_valget_handle_t handle);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Barriers
 *
 * Split-phase barrier over all nodes, carried by active messages (every
 * node tells every other node its value: one message latency).  Each node
 * calls gasnet_barrier_notify() then gasnet_barrier_wait() (or
 * gasnet_barrier_try() until it returns GASNET_OK or a mismatch).  They do
 * not complete outstanding puts or gets.
 *
 * Matching (as GASNet-1 1.20 and later define it): notifies with flags 0
 * are named and contribute @p id; GASNET_BARRIERFLAG_ANONYMOUS notifies
 * match anything.  The result is GASNET_ERR_BARRIER_MISMATCH when a node
 * notified with GASNET_BARRIERFLAG_MISMATCH, when two named notifies
 * differ, when the wait's flags include GASNET_BARRIERFLAG_MISMATCH, or
 * when the wait is named (flags 0), the barrier had a named value, and
 * the wait's @p id differs from it.  The flags of wait may differ from
 * those of notify.
 *
 * Order errors are fatal: notify twice without wait, wait or try without
 * notify, calls from a handler.  Unknown flag bits are fatal.
 */
/**@{*/
#define GASNET_BARRIERFLAG_ANONYMOUS 1
#define GASNET_BARRIERFLAG_MISMATCH 2
/** One image per node: accepted and ignored. */
#define GASNET_BARRIERFLAG_IMAGES 4
/** An anonymous barrier that is known to match only anonymous ones:
 *  treated as ANONYMOUS. */
#define GASNETC_BARRIERFLAG_UNNAMED_ 8
#define GASNET_BARRIERFLAG_UNNAMED                                          \
    (GASNET_BARRIERFLAG_ANONYMOUS | GASNETC_BARRIERFLAG_UNNAMED_)

GASNETC_API void gasnet_barrier_notify(int id, int flags);
/** @retval GASNET_OK, GASNET_ERR_BARRIER_MISMATCH */
GASNETC_API int gasnet_barrier_wait(int id, int flags);
/** @retval GASNET_OK, GASNET_ERR_BARRIER_MISMATCH, GASNET_ERR_NOT_READY
 *  (not every node has notified; the barrier stays open) */
GASNETC_API int gasnet_barrier_try(int id, int flags);
/** notify + wait. */
GASNETC_API int gasnet_barrier(int id, int flags);
/** After the last completed barrier: non-zero if it was anonymous (every
 *  notify anonymous); otherwise 0 and *id = its named value.  Fatal
 *  between notify and wait, or with @p id NULL. */
GASNETC_API int gasnet_barrier_result(int *id);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Threads and waiting */
/**@{*/
/* GASNET_SEQ has no per-thread state: the macros cost nothing.  In
 * GASNET_PAR and GASNET_PARSYNC each thread gets its own non-NULL handle
 * (nothing needs it here; clients compare them). */
GASNETC_API gasnet_threadinfo_t gasnetc_threadinfo(void);
#if GASNETC_THREADMODEL == 0
#define GASNET_GET_THREADINFO() ((gasnet_threadinfo_t)0)
#else
#define GASNET_GET_THREADINFO() gasnetc_threadinfo()
#endif
#define GASNET_POST_THREADINFO(info) ((void)sizeof(info))
#define GASNET_BEGIN_FUNCTION() GASNET_POST_THREADINFO(GASNET_GET_THREADINFO())

#define GASNET_WAIT_SPIN 0      /**< poll without yielding */
#define GASNET_WAIT_BLOCK 1     /**< as SPINBLOCK (TELEMEM_WAIT decides) */
#define GASNET_WAIT_SPINBLOCK 2 /**< wait as Telemem's waits do: spin,
                                     yield, then sleep until something
                                     arrives (TELEMEM_WAIT; the default) */
/**
 * How GASNET_BLOCKUNTIL and GASNet's own waits (barriers, memsets, exit)
 * share the processor: GASNET_WAIT_SPIN polls without pause, the others
 * follow TELEMEM_WAIT, as Telemem's internal waits do.
 * @retval GASNET_OK, GASNET_ERR_BAD_ARG (unknown mode)
 */
GASNETC_API int gasnet_set_waitmode(int wait_mode);
/**@}*/

#ifdef __cplusplus
}
#endif

/* As in GASNet-1, gasnet.h brings the VIS and collectives interfaces. */
#include "gasnet_vis.h"
#include "gasnet_coll.h"

#endif /* GASNET_H */

/* gasnet_core.h - the core API of GASNet-1 over Telemem: job control and
 * queries, active messages (the M-argument and variadic families, polling,
 * GASNET_BLOCKUNTIL) and atomicity control (handler-safe locks); the
 * header by which GASNet clients' build systems recognise a configured
 * conduit (include/telemem-conduit/gasnet_core.h).  gasnet.h includes
 * it. */
#ifndef GASNET_CORE_H
#define GASNET_CORE_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_core.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

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
/** Largest Long request payload (2 GiB - 1, as GASNet-1's smp-conduit:
 * in practice the target's segment is the limit). */
#define gasnet_AMMaxLongRequest() ((size_t)0x7fffffff)
/** Largest Long reply payload (2 GiB - 1, as for requests). */
#define gasnet_AMMaxLongReply() ((size_t)0x7fffffff)

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
 * gasnet_set_waitmode()).  Begin and end bracket a wait that found its
 * condition false: meanwhile nodes that store into this node's segment
 * (on this host) wake it should it sleep. */
GASNETC_API void gasnetc_block_poll(unsigned *idle);
GASNETC_API void gasnetc_block_begin(void);
GASNETC_API void gasnetc_block_end(void);

/**
 * Poll until @p cond is true.  @p cond is evaluated first and again each
 * time a poll handled messages (and after every yield of the processor,
 * or a wake-up).  The specification allows it to depend only on state
 * that handlers change; here it may also wait for another node's put into
 * this node's segment, as GASNet's own conduits allow in practice: a
 * node on this host stores there itself and wakes this one (at its next
 * synchronisation, wait, poll or barrier at the latest), one elsewhere
 * sends a message.  Not allowed in a handler or while holding an HSL
 * (fatal).
 */
#define GASNET_BLOCKUNTIL(cond)                                             \
    do {                                                                    \
        if (!(cond)) {                                                      \
            unsigned gasnetc_idle_ = 0;                                     \
            gasnetc_block_begin();                                          \
            while (!(cond))                                                 \
                gasnetc_block_poll(&gasnetc_idle_);                         \
            gasnetc_block_end();                                            \
        }                                                                   \
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

#ifdef __cplusplus
}
#endif

#endif /* GASNET_CORE_H */

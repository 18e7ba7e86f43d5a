/* telemem.h - the public C API of Telemem, the only header a user includes. */
#ifndef TELEMEM_H
#define TELEMEM_H

/**
 * @file telemem.h
 * @brief Telemem: one-sided communication (put, get, quiet, barrier,
 *        collectives, active messages) carried out by polling over
 *        two-sided active messages.
 *
 * Model.  A job has telemem_nranks() ranks.  Each rank exposes memory as a
 * *target*: blocks from telemem_malloc_all() and ranges given to
 * telemem_register().  Any other rank (the *initiator*) may put data into
 * that memory or get data from it.  The target's CPU applies each request
 * inside its poll loop: whenever the target calls any Telemem function that
 * waits, or telemem_poll().  A rank that computes for a long time without
 * calling Telemem delays the requests sent to it (it never loses them).
 * Exception, the direct path (TELEMEM_DIRECT, docs/direct.md): puts, gets
 * and atomics that a driver can carry (by default on one node every one to
 * a telemem_malloc_all block; over a network, large ones) are done by the
 * initiator without the target's CPU, with the same range checks, ordering
 * and completion rules.
 *
 * Status.  Every function returning int returns TELEMEM_OK (0) on success or
 * a negative TELEMEM_ERR_* code; telemem_strerror() turns it into text.
 * telemem_rank() and telemem_nranks() are the exceptions (they return the
 * value, or a negative code before initialization).
 *
 * Ordering.  Operations issued by one rank to one target are applied at the
 * target in issue order (puts, gets, active messages alike).  Nothing is
 * promised about operations from different initiators.
 *
 * Polling the last word.  A put is applied at the target in increasing
 * address order, each message of it wholly inside one Telemem call.  So a
 * target that calls Telemem (telemem_poll()) and then reads the last bytes
 * of a put's range sees the whole put once those bytes hold their new value
 * (as NetPIPE and many ARMCI codes expect), and the put stores nothing
 * there after that (its last 8 bytes, or fewer for a shorter put, are one
 * store), so the target may write there at once.  The last bytes must
 * change from one put to the next for this to be a reliable signal.
 *
 * Threads.  telemem_initialize() gives TELEMEM_THREAD_SINGLE: call Telemem
 * from one thread per process.  telemem_initialize_thread() offers MPI's
 * other levels; under TELEMEM_THREAD_MULTIPLE any thread may call any
 * function at any time (one process-wide lock serialises the calls; a
 * waiting call lets others in between polls).
 *
 * Progress.  Requests to a rank are applied when it calls Telemem.  With
 * TELEMEM_PROGRESS_THREAD=on (or TELEMEM_INIT_PROGRESS_THREAD) a thread per
 * process applies them while the application computes or spins on a plain
 * load of its own memory; it sleeps when idle and senders wake it, so an
 * idle job costs next to no CPU.  Active-message handlers may then run on
 * that thread (never concurrently with a Telemem call of the process).
 *
 * Errors at the target.  A put or get whose remote range is not entirely
 * inside one region the target knows (telemem_malloc_all() or
 * telemem_register()) is refused by the target: nothing is written, and the
 * initiator gets TELEMEM_ERR_OUT_OF_RANGE from the call itself (blocking
 * get, telemem_wait()) or, at the latest, from the next telemem_quiet() or
 * telemem_fence() covering that target.  The job carries on normally.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TELEMEM_API __attribute__((visibility("default")))
#else
#define TELEMEM_API
#endif

#define TELEMEM_VERSION_MAJOR 0
#define TELEMEM_VERSION_MINOR 1
#define TELEMEM_VERSION_PATCH 0

/* ------------------------------------------------------------------------ */
/** @name Status codes */
/**@{*/

/**
 * Return codes.  TELEMEM_OK is 0, TELEMEM_INPROGRESS is 1, every error is
 * negative.  The list is generated from src/util/status_list.h, which also
 * produces telemem_strerror(); a test keeps the two equal.
 */
typedef enum telemem_status {
    TELEMEM_OK = 0,                  /**< success */
    TELEMEM_INPROGRESS = 1,          /**< started, not finished (internal) */
    TELEMEM_ERR_INVALID_ARG = -1,    /**< bad argument: NULL, rank, size */
    TELEMEM_ERR_NOT_INITIALIZED = -2, /**< before initialize / after finalize */
    TELEMEM_ERR_ALREADY_INITIALIZED = -3, /**< initialize called twice */
    TELEMEM_ERR_OUT_OF_RANGE = -4,   /**< target refused: outside its regions */
    TELEMEM_ERR_NO_MEMORY = -5,      /**< allocation failed */
    TELEMEM_ERR_TIMED_OUT = -6,      /**< a wait exceeded TELEMEM_TIMEOUT */
    TELEMEM_ERR_PEER_DEAD = -7,      /**< a peer process has died */
    TELEMEM_ERR_TRANSPORT = -8,      /**< the transport failed */
    TELEMEM_ERR_UNSUPPORTED = -9,    /**< not supported by this build/transport */
    TELEMEM_ERR_BOOTSTRAP = -10,     /**< launcher / key-value store failure */
    TELEMEM_ERR_CONFIG = -11,        /**< bad TELEMEM_* setting */
    TELEMEM_ERR_IN_HANDLER = -12,    /**< call not allowed inside an AM handler */
    TELEMEM_ERR_AGAIN = -13,         /**< internal back-pressure; never returned */
    TELEMEM_ERR_PROTOCOL = -14,      /**< malformed or unexpected message */
    TELEMEM_ERR_UNREACHABLE = -15,   /**< no transport reaches that rank */
    TELEMEM_ERR_NOT_FOUND = -16,     /**< no such region / handle / block */
    TELEMEM_ERR_STATE = -17          /**< not possible in this process's
                                      *   state (initialize after a
                                      *   launched job's finalize) */
} telemem_status_t;

/**
 * Text for a status code.
 * @return a static string, never NULL (unknown codes give "unknown status").
 * Callable at any time, before initialization too, from any thread.
 */
TELEMEM_API const char *telemem_strerror(int status);

/**
 * Symbolic name of a status code ("TELEMEM_ERR_OUT_OF_RANGE").
 * @return a static string, never NULL.
 */
TELEMEM_API const char *telemem_status_name(int status);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Job control */
/**@{*/

/**
 * Start Telemem in this process.  Collective over all ranks of the job.
 *
 * Reads the TELEMEM_* environment once (see the README table), joins the
 * job started by telemem-run, by mpirun or srun (PMIx, PMI-2) or by MPICH's
 * mpiexec (PMI-1) -- or runs as a single rank when started without a
 * launcher -- and opens the transports.  Under a PMI-1 or PMI-2 launcher
 * (srun --mpi=pmi2, MPICH's mpiexec) it may run once per process: the
 * launcher closes its socket at finalize.
 *
 * @param argc, argv  the program's arguments; may be NULL.  They are not
 *                    modified in this release.
 * @retval TELEMEM_OK                      initialized
 * @retval TELEMEM_ERR_ALREADY_INITIALIZED called twice without finalize
 * @retval TELEMEM_ERR_CONFIG              a TELEMEM_* variable is invalid
 *                                         (the message names it)
 * @retval TELEMEM_ERR_BOOTSTRAP           the launcher could not be
 *                                         reached, or it started several
 *                                         ranks that this build cannot join
 *                                         (srun --mpi=none, a PMIx launcher
 *                                         and no PMIx built in, ...: the
 *                                         message names the launcher and the
 *                                         fix), never N one-rank jobs
 * @retval TELEMEM_ERR_TRANSPORT, TELEMEM_ERR_NO_MEMORY  set-up failed
 * @retval TELEMEM_ERR_STATE               this process already joined its
 *                                         job through a launcher and left it
 *                                         (see below)
 * After a failure the library is not initialized.  After
 * TELEMEM_ERR_CONFIG (every setting is checked before the job is joined) it
 * may be initialized again with corrected settings; after a failure while
 * joining the job (bootstrap, transport) the job should end.
 *
 * Initializing again after telemem_finalize(): a process started without
 * a launcher (a singleton) may, as often as it likes.  A process of a
 * launched job (telemem-run, or mpirun/srun through PMIx) joins its job
 * once: the launcher takes each rank once and the other ranks have left
 * too, so once it has joined (telemem_finalize(), or an initialize that
 * failed after joining) every later initialize returns TELEMEM_ERR_STATE
 * and changes nothing.
 */
TELEMEM_API int telemem_initialize(int *argc, char ***argv);

/** Thread levels of telemem_initialize_thread(), with MPI's meanings. */
enum telemem_thread_level {
    TELEMEM_THREAD_SINGLE = 0,     /**< one thread calls Telemem */
    TELEMEM_THREAD_FUNNELED = 1,   /**< only the initializing thread calls */
    TELEMEM_THREAD_SERIALIZED = 2, /**< any thread, never two at once */
    TELEMEM_THREAD_MULTIPLE = 3    /**< any thread, concurrently */
};
/** OR into @p required of telemem_initialize_thread(): start the progress
 *  thread (as TELEMEM_PROGRESS_THREAD=on). */
#define TELEMEM_INIT_PROGRESS_THREAD 0x100

/**
 * telemem_initialize() with a thread level.  @p required is one of
 * TELEMEM_THREAD_*, optionally ORed with TELEMEM_INIT_PROGRESS_THREAD.
 * Every level is supported: *@p provided is set to the level asked for.
 * SINGLE, FUNNELED and SERIALIZED cost nothing over telemem_initialize();
 * MULTIPLE (and a progress thread) make every call take a process-wide
 * lock.
 * @retval as telemem_initialize(); TELEMEM_ERR_INVALID_ARG for an unknown
 *         level or a NULL @p provided
 */
TELEMEM_API int telemem_initialize_thread(int *argc, char ***argv,
                                          int required, int *provided);

/**
 * Stop Telemem.  Collective: completes this rank's operations (as
 * telemem_quiet()), synchronises with all ranks (so that no rank leaves
 * while others may still address it), frees every block of
 * telemem_malloc_all(), and closes the transports.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 * @retval any error of telemem_quiet() / telemem_barrier(); the library is
 *         shut down in every case.
 */
TELEMEM_API int telemem_finalize(void);

/** This process's rank in [0, telemem_nranks()), or
 *  TELEMEM_ERR_NOT_INITIALIZED. */
TELEMEM_API int telemem_rank(void);

/** Number of ranks in the job, or TELEMEM_ERR_NOT_INITIALIZED. */
TELEMEM_API int telemem_nranks(void);

/** Library version, "major.minor.patch". Never NULL. */
TELEMEM_API const char *telemem_version(void);

/**
 * Name of the transport that carries traffic to @p rank ("shm", "loop").
 * @return a static string; "none" if @p rank is out of range or the
 *         library is not initialized.
 */
TELEMEM_API const char *telemem_transport_name(int rank);

/**
 * Every configuration value in effect, one "NAME = value (default|set)"
 * line each, as TELEMEM_PRINT_CONFIG=1 prints it.  Benchmarks print it in
 * their header.
 * @return a string owned by the library, valid until telemem_finalize();
 *         "" before initialization.
 */
TELEMEM_API const char *telemem_config_string(void);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Memory */
/**@{*/

/**
 * Collectively allocate one block per rank and learn every rank's address.
 *
 * Every rank calls it (in the same order as other collectives) with its own
 * size; sizes may differ and 0 is allowed (the block then has a unique
 * address and accepts only 0-byte operations).  On return, bases[i] is rank
 * i's block, and every block is a valid target.  Blocks are aligned to 64
 * bytes and are not initialised.
 *
 * Memory beyond what the machine has: the library promises a clean
 * TELEMEM_ERR_NO_MEMORY on every rank (and nothing kept) whenever the
 * system refuses the allocation on any rank: sizes past the address space
 * always, sizes past RAM + swap under Linux's default heuristic overcommit
 * (vm.overcommit_memory 0) and in strict mode (2).  It does not touch or
 * pre-fault the block, so where the kernel grants more than it can back
 * (mode 1, or several blocks that together exceed memory) the block is
 * returned and a process touching too much of it is killed by the kernel's
 * OOM killer, as with malloc().  (tests/limits, case hugealloc)
 *
 * @param bytes  this rank's size
 * @param bases  array of telemem_nranks() pointers, filled on success
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  bases is NULL
 * @retval TELEMEM_ERR_NO_MEMORY    this rank could not allocate (the other
 *                                  ranks get TELEMEM_ERR_NO_MEMORY too)
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER
 * @retval a collective's errors (TELEMEM_ERR_PEER_DEAD, _TIMED_OUT)
 */
TELEMEM_API int telemem_malloc_all(size_t bytes, void **bases);

/**
 * Collectively free blocks of telemem_malloc_all().  Each rank passes its
 * own block from the same call.  Completes this rank's operations
 * (telemem_quiet()) and synchronises all ranks before freeing, so no rank
 * still writes into a freed block.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_NOT_FOUND     @p mine is not a block of this rank
 * @retval TELEMEM_ERR_INVALID_ARG   @p mine is NULL
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER, and the
 *         errors of telemem_quiet()/telemem_barrier()
 */
TELEMEM_API int telemem_free_all(void *mine);

/**
 * Make local memory [addr, addr+bytes) a valid target for other ranks'
 * puts and gets.  Bookkeeping only: nothing is pinned or copied, and the
 * memory stays the caller's.  Not collective: peers must learn the address
 * by other means (telemem_allgather(), an active message).
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  addr NULL, bytes 0, the range wraps, or
 *                                  it overlaps a region already known
 * @retval TELEMEM_ERR_NO_MEMORY, TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_register(void *addr, size_t bytes);

/**
 * Forget a region given to telemem_register() (by its start address).
 * Later requests into it are refused.  Requests already applied are not
 * undone; call it only when peers have stopped addressing the region.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_NOT_FOUND    no registered region starts at @p addr
 *                                  (blocks of telemem_malloc_all() are
 *                                  released only by telemem_free_all())
 * @retval TELEMEM_ERR_INVALID_ARG, TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_deregister(void *addr);

/**
 * Where this process may load and store another rank's memory itself, as
 * OpenSHMEM's shmem_ptr() tells.
 *
 * Sets *@p local_p to the address in this process at which [@p remote,
 * @p remote + @p bytes) of @p rank is mapped, when the range lies in one
 * telemem_malloc_all() block of @p rank that this process maps: a rank on
 * this node whose blocks the same-node direct path (the window driver)
 * reaches, TELEMEM_DIRECT not never, whatever the thresholds.  For the
 * caller's own rank, *@p local_p is @p remote when the range lies in one
 * of its blocks or registered regions.  The address is valid until the
 * block is freed (telemem_free_all()) or telemem_finalize(); call once
 * per block and add offsets.
 *
 * Loads and stores through it are plain memory accesses.  Nothing orders
 * them with this rank's Telemem operations to @p rank still in flight
 * (telemem_quiet() first), nor tells @p rank: after stores, call
 * telemem_ptr_wake(), then signal as with any shared memory (a flag the
 * target polls, a message, a barrier).  Telemem's atomics on such a
 * block are hardware atomic instructions on the same memory, so the
 * caller's own (C11 atomics on naturally aligned words) are atomic with
 * respect to them.
 *
 * Thread safety: any thread (it takes Telemem's lock, as other calls do).
 * @param bytes  0 is taken as 1 (the byte at @p remote)
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_UNSUPPORTED  the range is not mapped here: another
 *         node, not (wholly) in one block of @p rank, TELEMEM_DIRECT=never
 *         (use puts and gets)
 * @retval TELEMEM_ERR_INVALID_ARG  rank out of range, @p remote or
 *         @p local_p NULL, the range wraps (*@p local_p untouched)
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_ptr(int rank, void *remote, size_t bytes,
                            void **local_p);

/**
 * After stores through telemem_ptr() addresses of @p rank: orders them
 * before what this thread does next (a release fence) and wakes @p rank
 * if it sleeps in a Telemem wait (TELEMEM_WAIT, docs/wait.md), so that a
 * wait there for the stored values ends as after a put.  Without it a
 * sleeping rank would see the stores only when something else wakes it.
 * Loads need nothing.  Lock-free, any thread; when @p rank does not sleep
 * it costs one load of a word of shared memory.  For the caller's own
 * rank and ranks telemem_ptr() maps nothing of, only the fence.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  rank out of range
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_ptr_wake(int rank);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Blocking one-sided operations */
/**@{*/

/**
 * Copy @p bytes from local @p local_src into rank @p rank's memory at
 * @p remote_dst.  Any size_t size: large puts travel as fragments of the
 * transport's buffer size (a 4 GiB put is tested, tests/limits bigput).
 *
 * Returns when @p local_src may be reused (the data has been copied into
 * message buffers or handed to the target).  The data is *complete at the
 * target* only after telemem_quiet() or telemem_fence(rank).  A put to the
 * calling rank itself is a local copy (still checked against its regions).
 *
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG   rank out of range, NULL pointer with
 *                                   bytes > 0, address range that wraps
 * @retval TELEMEM_ERR_OUT_OF_RANGE  (self put only) outside own regions;
 *                                   for remote targets this is reported by
 *                                   the next quiet/fence
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TIMED_OUT
 */
TELEMEM_API int telemem_put(int rank, void *remote_dst, const void *local_src,
                            size_t bytes);

/**
 * Copy @p bytes from rank @p rank's memory at @p remote_src into local
 * @p local_dst.  Returns when @p local_dst holds the data.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_OUT_OF_RANGE  the target refused the range; nothing
 *                                   was written to @p local_dst
 * @retval TELEMEM_ERR_INVALID_ARG, TELEMEM_ERR_NOT_INITIALIZED,
 *         TELEMEM_ERR_IN_HANDLER, TELEMEM_ERR_PEER_DEAD,
 *         TELEMEM_ERR_TIMED_OUT
 */
TELEMEM_API int telemem_get(int rank, void *local_dst, const void *remote_src,
                            size_t bytes);

/**
 * Wait until every put, put_nbi, get_nbi and active-message request this
 * rank issued before the call is complete at its target (applied, or
 * refused).  Keeps serving incoming requests while it waits.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_OUT_OF_RANGE  a target refused one of those
 *                                   operations since the previous
 *                                   quiet/fence (the others are complete)
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TIMED_OUT
 */
TELEMEM_API int telemem_quiet(void);

/**
 * telemem_quiet() for one target: every earlier operation of this rank to
 * @p rank is complete at @p rank.  Same return values, plus
 * TELEMEM_ERR_INVALID_ARG for a rank out of range.
 */
TELEMEM_API int telemem_fence(int rank);

/**
 * Non-blocking telemem_quiet(): serve incoming requests once and report
 * whether every put, put_nbi, get_nbi and active-message request this rank
 * issued before the call is complete at its target.  Never waits for a
 * target.  *@p done = 1 means exactly what the return of telemem_quiet()
 * means (data applied, get_nbi buffers filled, refusals reported);
 * *@p done = 0 means some are still in flight: call it again (or
 * telemem_quiet()) later.
 *
 * Learning completion takes one round trip per target: the first test after
 * new operations sends each such target one flush request; later tests only
 * look for the answers, so a loop of tests sends nothing more.  A target
 * answers when it polls, so a test keeps reporting 0 while a target
 * computes without calling Telemem (unless it runs a progress thread).
 * Operations issued between two tests are covered by the later test.
 * Operations on an asynchronous network direct path (TELEMEM_DIRECT with
 * ofi / ucx RMA) are completed by the local driver in the call, as by
 * quiet; they need no action of the target.
 *
 * A dead target is noticed as by quiet, at most once every
 * TELEMEM_LIVENESS_INTERVAL over repeated tests.  Thread safety as quiet.
 *
 * @param done  set to 1 (complete) or 0 (not yet) on TELEMEM_OK; set to 1
 *              with TELEMEM_ERR_OUT_OF_RANGE; left unchanged on other
 *              errors
 * @retval TELEMEM_OK               *done says whether all is complete
 * @retval TELEMEM_ERR_OUT_OF_RANGE everything is complete, and a target
 *                                  refused one of those operations since
 *                                  the previous quiet/fence or completed
 *                                  test (reported once, as by quiet)
 * @retval TELEMEM_ERR_INVALID_ARG  @p done is NULL
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TRANSPORT
 */
TELEMEM_API int telemem_quiet_test(int *done);

/**
 * Non-blocking telemem_fence(): telemem_quiet_test() for one target.
 * *@p done = 1 when every earlier operation of this rank to @p rank is
 * complete at @p rank.  Same return values, plus TELEMEM_ERR_INVALID_ARG
 * for a rank out of range.
 */
TELEMEM_API int telemem_fence_test(int rank, int *done);

/**
 * Synchronise all ranks: returns when every rank has entered the barrier.
 * Does NOT imply quiet: call telemem_quiet() first to make this rank's
 * puts visible to ranks leaving the barrier (the paper's alltoall does
 * both).
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TIMED_OUT
 */
TELEMEM_API int telemem_barrier(void);

/**
 * Serve incoming requests (apply puts, answer gets, run active-message
 * handlers) and push queued outgoing data.  Never blocks.
 * @return the number of events handled (>= 0), or
 *         TELEMEM_ERR_NOT_INITIALIZED / TELEMEM_ERR_IN_HANDLER /
 *         TELEMEM_ERR_TRANSPORT.
 */
TELEMEM_API int telemem_poll(void);

/**
 * State of a wait in the caller's own loop (telemem_wait_poll()).  Set it
 * with TELEMEM_WAIT_INIT(rank) before the loop: @p rank is the rank whose
 * death ends the wait, or -1 for any rank.  The fields are private.
 */
typedef struct telemem_wait {
    double start, next_check;
    int idle, rank;
} telemem_wait_t;
#define TELEMEM_WAIT_INIT(rank) {0.0, 0.0, 0, (rank)}

/**
 * One turn of a wait in the caller's own loop, for a condition a put or an
 * active-message handler will make true (a flag in registered memory;
 * one that another thread makes true by itself needs telemem_wait_wake()):
 *
 *     telemem_wait_t w = TELEMEM_WAIT_INIT(peer);
 *     while (!*flag)
 *         if ((rc = telemem_wait_poll(&w)) != TELEMEM_OK)
 *             break;
 *
 * Each call polls as telemem_poll() does; when the polls find nothing it
 * spins, yields the core or sleeps until something arrives for this rank
 * (a message, or on one node a direct-path write into its memory), as
 * Telemem's own waits do (TELEMEM_WAIT), and returns after each turn so
 * that the caller looks at its condition again.  It ends the wait by the
 * same rules as Telemem's blocking calls: when w's rank (any rank for -1)
 * has died (checked every TELEMEM_LIVENESS_INTERVAL seconds) or when the
 * wait has lasted TELEMEM_TIMEOUT seconds (if set).  Both are logged.
 * @retval TELEMEM_OK                keep waiting
 * @retval TELEMEM_ERR_PEER_DEAD     a rank the wait depends on died
 * @retval TELEMEM_ERR_TIMED_OUT     TELEMEM_TIMEOUT passed
 * @retval TELEMEM_ERR_INVALID_ARG   w is NULL or its rank out of range
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_TRANSPORT
 */
TELEMEM_API int telemem_wait_poll(telemem_wait_t *w);

/**
 * Wake every thread of this process that waits in Telemem (in
 * telemem_wait_poll() or a blocking call), so that it returns to look at
 * its condition again.  A sleeping wait ends when something arrives for
 * this rank; a condition that another thread of this process makes true
 * without Telemem (a flag in its own memory, an entry in a queue under a
 * mutex) arrives from nowhere, so the thread that made it true calls this
 * afterwards, or the waiter may sleep until its next liveness check
 * (TELEMEM_LIVENESS_INTERVAL).  Cheap where no thread sleeps (an atomic
 * add); callable from any thread, also inside an active-message handler.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_wait_wake(void);

/**
 * Whether rank @p rank is still running, for programs that wait in their
 * own loops (spinning on a flag an active message sets, as libarmci's
 * notify and mutex waits do) and must not hang when a peer dies.  Telemem's
 * own waits check this themselves (every TELEMEM_LIVENESS_INTERVAL).
 * Neither polls nor blocks, but may cost a system call per call (shm):
 * call it every few hundred milliseconds from a loop, not on every turn.
 * A rank that left through telemem_finalize() counts as alive (it owes
 * nothing); this rank is always alive.  May be called from handlers.
 * @retval TELEMEM_OK                rank is alive (or finalized)
 * @retval TELEMEM_ERR_PEER_DEAD     rank died (or its transport failed)
 * @retval TELEMEM_ERR_INVALID_ARG   rank out of range
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_rank_alive(int rank);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Non-blocking one-sided operations */
/**@{*/

/**
 * Handle of a non-blocking operation.  Opaque; copy it by value.  Every
 * handle must be completed once with telemem_wait() or telemem_test()
 * (until it reports done); after that it is spent, and waiting on it again
 * returns TELEMEM_OK at once.  TELEMEM_HANDLE_NULL is an always-complete
 * handle.
 *
 * At most 1,048,575 operations can be in flight on a rank at once: handles
 * not yet completed by telemem_wait()/telemem_test() (even if the operation
 * itself is done), get_nbi and blocking gets in progress.  The call that
 * would start one more returns TELEMEM_ERR_NO_MEMORY (logged); complete
 * some handles and retry.  (tests/limits, case handles)
 *
 * 0-byte operations of every kind (contiguous, strided with a zero count,
 * vector / list with no segments or only empty ones, accumulate, and their
 * _nb/_nbi forms) are valid to any rank, write nothing and complete with
 * TELEMEM_OK; a 0-byte put or get checks no address (NULL, the end of a
 * block and a 0-byte block are all fine).  (case zero)
 */
typedef struct telemem_handle {
    uint32_t index_;      /* private */
    uint32_t generation_; /* private */
} telemem_handle_t;

/** A handle that is always complete. */
#define TELEMEM_HANDLE_NULL ((telemem_handle_t){0u, 0u})

/**
 * Start a put.  @p local_src must not be modified until the handle
 * completes.  telemem_wait() returns when the data is complete *at the
 * target* (stronger than telemem_put()), with the target's verdict.
 * @p h is set only on success.
 * @retval TELEMEM_OK  started (or already finished)
 * @retval the argument errors of telemem_put(); TELEMEM_ERR_NO_MEMORY
 */
TELEMEM_API int telemem_put_nb(int rank, void *remote_dst,
                               const void *local_src, size_t bytes,
                               telemem_handle_t *h);

/**
 * Start a get.  @p local_dst holds the data when the handle completes;
 * until then it must not be read or written.
 * @retval as telemem_put_nb()
 */
TELEMEM_API int telemem_get_nb(int rank, void *local_dst,
                               const void *remote_src, size_t bytes,
                               telemem_handle_t *h);

/**
 * Wait for a handle to complete (serving requests meanwhile).  The handle
 * is spent afterwards.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_OUT_OF_RANGE  the target refused the operation
 * @retval TELEMEM_ERR_INVALID_ARG   @p h is NULL
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TIMED_OUT
 */
TELEMEM_API int telemem_wait(telemem_handle_t *h);

/**
 * Poll once and report whether the handle is complete.  When *done is set
 * to 1, the handle is spent and the return value is the operation's
 * verdict (as telemem_wait()).  *done is 0 while it runs (return
 * TELEMEM_OK).
 * @retval as telemem_wait(); TELEMEM_ERR_INVALID_ARG if h or done is NULL
 */
TELEMEM_API int telemem_test(telemem_handle_t *h, int *done);

/**
 * Start a put completed by telemem_quiet() / telemem_fence(): no handle.
 * @p local_src must not be modified until that quiet or fence returns.
 * @retval as telemem_put()
 */
TELEMEM_API int telemem_put_nbi(int rank, void *remote_dst,
                                const void *local_src, size_t bytes);

/**
 * Start a get completed by telemem_quiet() / telemem_fence(rank):
 * @p local_dst holds the data when it returns.  A refused get makes that
 * quiet return TELEMEM_ERR_OUT_OF_RANGE.
 * @retval as telemem_get()
 */
TELEMEM_API int telemem_get_nbi(int rank, void *local_dst,
                                const void *remote_src, size_t bytes);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Collectives
 * Every rank calls the same collectives in the same order.  They are
 * carried out with active messages and keep serving requests while they
 * wait.  None of them implies quiet.
 *
 * A message may reach a rank before that rank enters the collective; it is
 * then buffered, which the reassembly cap bounds (see Active messages:
 * 1 GiB per sender).  So one collective message carries at most 1 GiB
 * (broadcast bytes, allreduce count x element size, allgather
 * bytes_per_rank): larger sizes return TELEMEM_ERR_INVALID_ARG on every
 * rank.  If a rank had to refuse a message (the cap, or no memory), the
 * collective that needed it fails there with TELEMEM_ERR_PROTOCOL (or
 * _NO_MEMORY) instead of waiting; later collectives are not affected.
 * 0 bytes (or count 0) is valid and moves nothing.
 */
/**@{*/

/** Element types of telemem_allreduce() (INT32..DOUBLE), accumulate (all)
 *  and atomics (INT32, INT64, UINT64).  Complex types are (real, imaginary)
 *  pairs of float or double, as C99 float/double _Complex. */
typedef enum telemem_type {
    TELEMEM_INT32 = 0,
    TELEMEM_INT64 = 1,
    TELEMEM_UINT64 = 2,
    TELEMEM_FLOAT = 3,
    TELEMEM_DOUBLE = 4,
    TELEMEM_COMPLEX_FLOAT = 5,
    TELEMEM_COMPLEX_DOUBLE = 6
} telemem_type_t;

/** Reduction operators of telemem_allreduce(). */
typedef enum telemem_op {
    TELEMEM_SUM = 0,
    TELEMEM_MIN = 1,
    TELEMEM_MAX = 2
} telemem_op_t;

/**
 * Copy @p bytes of @p buf on rank @p root into @p buf on every rank.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  root out of range, buf NULL with bytes>0
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TIMED_OUT, _NO_MEMORY
 */
TELEMEM_API int telemem_broadcast(void *buf, size_t bytes, int root);

/**
 * Combine @p count elements of @p buf over all ranks with @p op; every
 * rank receives the result in @p buf.  Results are identical on every rank
 * (a fixed combination order, so floating-point sums agree bit for bit).
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  unknown type/op, buf NULL with count>0,
 *                                  count*size overflows
 * @retval the errors of telemem_broadcast()
 */
TELEMEM_API int telemem_allreduce(void *buf, size_t count, telemem_type_t type,
                                  telemem_op_t op);

/**
 * Every rank contributes @p bytes_per_rank bytes from @p in; on return
 * @p out holds all contributions in rank order (nranks * bytes_per_rank
 * bytes).  @p in and @p out must not overlap.
 * @retval as telemem_broadcast()
 */
TELEMEM_API int telemem_allgather(const void *in, void *out,
                                  size_t bytes_per_rank);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Non-contiguous transfers
 *
 * Strided transfers use ARMCI's convention.  A patch is @p count[0]
 * contiguous bytes (a *run*), repeated @p count[1] times at a distance of
 * strides[0] bytes, that repeated @p count[2] times at strides[1] bytes,
 * and so on up to @p stride_levels (0..TELEMEM_MAX_STRIDE_LEVELS) levels.
 * The local and remote sides have their own stride arrays (stride_levels
 * entries each, may be NULL when stride_levels is 0) and share the counts
 * (stride_levels + 1 entries).  A zero count makes the operation empty.
 *
 * The data travels packed: the initiator's CPU gathers the runs into
 * message buffers and the target's CPU scatters them on arrival, fragment
 * by fragment, so a patch of tiny rows costs one message per buffer, not
 * one per row.  The target checks the patch's whole extent against its
 * regions before writing anything; a patch outside them is refused as a
 * put or get is (nothing written, TELEMEM_ERR_OUT_OF_RANGE reported the
 * same way).
 *
 * Vector transfers take a list of segments: either two arrays of addresses
 * sharing one length (ARMCI's giov), or an array of telemem_seg_t triples.
 * The target receives the whole remote address list and checks every
 * segment before writing anything.  The arrays may be reused as soon as the
 * call returns (the list is copied or sent by then).
 *
 * Each operation has the blocking, _nb and _nbi forms of put and get, with
 * the same completion rules: a blocking put-like call returns when the
 * local data may be reused (complete at the target after quiet/fence); a
 * blocking get-like call returns with the data; _nb handles complete at the
 * target; _nbi operations complete at telemem_quiet() / telemem_fence().
 *
 * Errors (besides those of telemem_put()/telemem_get()):
 * TELEMEM_ERR_INVALID_ARG for stride_levels out of range, a NULL count or
 * stride array that is needed, a NULL address array or segment address,
 * extents that wrap around the address space.
 */
/**@{*/

#define TELEMEM_MAX_STRIDE_LEVELS 8 /**< stride levels of strided calls */

/** One segment of a list transfer. */
typedef struct telemem_seg {
    void *remote; /**< address at the target */
    void *local;  /**< address at the initiator */
    size_t bytes; /**< length */
} telemem_seg_t;

/** Strided put: the local patch at @p local_src (@p local_strides) into
 *  rank @p rank's memory at @p remote_dst (@p remote_strides). */
TELEMEM_API int telemem_put_strided(int rank, void *remote_dst,
                                    const size_t *remote_strides,
                                    const void *local_src,
                                    const size_t *local_strides,
                                    const size_t *count, int stride_levels);
/** Strided get: rank @p rank's patch at @p remote_src into the local patch
 *  at @p local_dst. */
TELEMEM_API int telemem_get_strided(int rank, void *local_dst,
                                    const size_t *local_strides,
                                    const void *remote_src,
                                    const size_t *remote_strides,
                                    const size_t *count, int stride_levels);
/** Non-blocking telemem_put_strided() (see telemem_put_nb()). */
TELEMEM_API int telemem_put_strided_nb(int rank, void *remote_dst,
                                       const size_t *remote_strides,
                                       const void *local_src,
                                       const size_t *local_strides,
                                       const size_t *count, int stride_levels,
                                       telemem_handle_t *h);
/** Non-blocking telemem_get_strided() (see telemem_get_nb()). */
TELEMEM_API int telemem_get_strided_nb(int rank, void *local_dst,
                                       const size_t *local_strides,
                                       const void *remote_src,
                                       const size_t *remote_strides,
                                       const size_t *count, int stride_levels,
                                       telemem_handle_t *h);
/** Implicit-handle telemem_put_strided() (see telemem_put_nbi()). */
TELEMEM_API int telemem_put_strided_nbi(int rank, void *remote_dst,
                                        const size_t *remote_strides,
                                        const void *local_src,
                                        const size_t *local_strides,
                                        const size_t *count,
                                        int stride_levels);
/** Implicit-handle telemem_get_strided() (see telemem_get_nbi()). */
TELEMEM_API int telemem_get_strided_nbi(int rank, void *local_dst,
                                        const size_t *local_strides,
                                        const void *remote_src,
                                        const size_t *remote_strides,
                                        const size_t *count,
                                        int stride_levels);

/** Vector put (ARMCI giov): for i < @p count, @p bytes from
 *  local_srcs[i] to remote_dsts[i] on @p rank. */
TELEMEM_API int telemem_put_vector(int rank, void *const *remote_dsts,
                                   const void *const *local_srcs,
                                   size_t count, size_t bytes);
/** Vector get: for i < @p count, @p bytes from remote_srcs[i] on @p rank
 *  to local_dsts[i]. */
TELEMEM_API int telemem_get_vector(int rank, void *const *local_dsts,
                                   const void *const *remote_srcs,
                                   size_t count, size_t bytes);
TELEMEM_API int telemem_put_vector_nb(int rank, void *const *remote_dsts,
                                      const void *const *local_srcs,
                                      size_t count, size_t bytes,
                                      telemem_handle_t *h);
TELEMEM_API int telemem_get_vector_nb(int rank, void *const *local_dsts,
                                      const void *const *remote_srcs,
                                      size_t count, size_t bytes,
                                      telemem_handle_t *h);
TELEMEM_API int telemem_put_vector_nbi(int rank, void *const *remote_dsts,
                                       const void *const *local_srcs,
                                       size_t count, size_t bytes);
TELEMEM_API int telemem_get_vector_nbi(int rank, void *const *local_dsts,
                                       const void *const *remote_srcs,
                                       size_t count, size_t bytes);

/** List put: for each of the @p count segments, segs[i].bytes from
 *  segs[i].local to segs[i].remote on @p rank. */
TELEMEM_API int telemem_put_list(int rank, const telemem_seg_t *segs,
                                 size_t count);
/** List get: segs[i].bytes from segs[i].remote on @p rank to
 *  segs[i].local. */
TELEMEM_API int telemem_get_list(int rank, const telemem_seg_t *segs,
                                 size_t count);
TELEMEM_API int telemem_put_list_nb(int rank, const telemem_seg_t *segs,
                                    size_t count, telemem_handle_t *h);
TELEMEM_API int telemem_get_list_nb(int rank, const telemem_seg_t *segs,
                                    size_t count, telemem_handle_t *h);
TELEMEM_API int telemem_put_list_nbi(int rank, const telemem_seg_t *segs,
                                     size_t count);
TELEMEM_API int telemem_get_list_nbi(int rank, const telemem_seg_t *segs,
                                     size_t count);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Accumulate
 *
 * remote[i] += scale * local[i], element by element, for any
 * telemem_type_t (complex types use the complex product).  @p scale points
 * at one value of @p type.  Lengths (and a strided patch's run, count[0])
 * must be multiples of the element size.  Shapes, forms and completion are
 * those of put: contiguous, strided, vector and list, each blocking, _nb
 * and _nbi.
 *
 * Atomicity: accumulates and atomics on the same location are atomic with
 * respect to each other, element by element, whatever mix of ranks issues
 * them.  The target applies accumulates inside its own poll loop, except
 * contiguous and strided accumulates to a telemem_malloc_all block of a
 * peer on the same node with naturally aligned elements: the initiator
 * applies those itself (the direct path, docs/direct.md) and they are
 * complete on return.  Where that can happen, both sides add every element
 * with atomic instructions.  They are not atomic with respect to plain
 * puts or to the target's own loads and stores.
 *
 * Errors: those of the matching put form, plus TELEMEM_ERR_INVALID_ARG for
 * an unknown type, a NULL scale, or a length that is not a multiple of the
 * element size.
 */
/**@{*/
TELEMEM_API int telemem_acc(int rank, telemem_type_t type, const void *scale,
                            void *remote_dst, const void *local_src,
                            size_t bytes);
TELEMEM_API int telemem_acc_nb(int rank, telemem_type_t type,
                               const void *scale, void *remote_dst,
                               const void *local_src, size_t bytes,
                               telemem_handle_t *h);
TELEMEM_API int telemem_acc_nbi(int rank, telemem_type_t type,
                                const void *scale, void *remote_dst,
                                const void *local_src, size_t bytes);
TELEMEM_API int telemem_acc_strided(int rank, telemem_type_t type,
                                    const void *scale, void *remote_dst,
                                    const size_t *remote_strides,
                                    const void *local_src,
                                    const size_t *local_strides,
                                    const size_t *count, int stride_levels);
TELEMEM_API int telemem_acc_strided_nb(int rank, telemem_type_t type,
                                       const void *scale, void *remote_dst,
                                       const size_t *remote_strides,
                                       const void *local_src,
                                       const size_t *local_strides,
                                       const size_t *count, int stride_levels,
                                       telemem_handle_t *h);
TELEMEM_API int telemem_acc_strided_nbi(int rank, telemem_type_t type,
                                        const void *scale, void *remote_dst,
                                        const size_t *remote_strides,
                                        const void *local_src,
                                        const size_t *local_strides,
                                        const size_t *count,
                                        int stride_levels);
TELEMEM_API int telemem_acc_vector(int rank, telemem_type_t type,
                                   const void *scale,
                                   void *const *remote_dsts,
                                   const void *const *local_srcs,
                                   size_t count, size_t bytes);
TELEMEM_API int telemem_acc_vector_nb(int rank, telemem_type_t type,
                                      const void *scale,
                                      void *const *remote_dsts,
                                      const void *const *local_srcs,
                                      size_t count, size_t bytes,
                                      telemem_handle_t *h);
TELEMEM_API int telemem_acc_vector_nbi(int rank, telemem_type_t type,
                                       const void *scale,
                                       void *const *remote_dsts,
                                       const void *const *local_srcs,
                                       size_t count, size_t bytes);
TELEMEM_API int telemem_acc_list(int rank, telemem_type_t type,
                                 const void *scale, const telemem_seg_t *segs,
                                 size_t count);
TELEMEM_API int telemem_acc_list_nb(int rank, telemem_type_t type,
                                    const void *scale,
                                    const telemem_seg_t *segs, size_t count,
                                    telemem_handle_t *h);
TELEMEM_API int telemem_acc_list_nbi(int rank, telemem_type_t type,
                                     const void *scale,
                                     const telemem_seg_t *segs, size_t count);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Atomics
 *
 * Read-modify-write of one naturally aligned 32- or 64-bit integer
 * (@p type TELEMEM_INT32, TELEMEM_INT64 or TELEMEM_UINT64) at @p remote on
 * @p rank, returning the old value in *@p old (which may be NULL when the
 * old value is not wanted).  @p value, @p compare and @p old point at
 * values of @p type.  Atomic with respect to every other atomic and
 * accumulate on that location.  To a telemem_malloc_all block of a rank
 * on the same node (the window driver, TELEMEM_DIRECT not never) the
 * initiator applies it with one hardware atomic instruction on the shared
 * mapping, complete on return (an _nb form then returns
 * TELEMEM_HANDLE_NULL); otherwise the target applies it in its poll loop.
 * Arithmetic wraps (two's complement).
 *
 * Blocking forms return with *old set.  _nb forms set *old when the handle
 * completes; _nbi forms by the next telemem_quiet()/telemem_fence(rank).
 *
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  type not an integer type, @p remote
 *         NULL or misaligned, @p value / @p compare NULL, rank out of range
 * @retval TELEMEM_ERR_OUT_OF_RANGE the target refused the address
 * @retval TELEMEM_ERR_NOT_INITIALIZED, _IN_HANDLER, _PEER_DEAD, _TIMED_OUT
 */
/**@{*/
/** *old = *remote; *remote += *value. */
TELEMEM_API int telemem_atomic_fetch_add(int rank, void *remote,
                                         telemem_type_t type,
                                         const void *value, void *old);
/** *old = *remote; *remote = *value. */
TELEMEM_API int telemem_atomic_swap(int rank, void *remote,
                                    telemem_type_t type, const void *value,
                                    void *old);
/** *old = *remote; if (*old == *compare) *remote = *value. */
TELEMEM_API int telemem_atomic_cswap(int rank, void *remote,
                                     telemem_type_t type, const void *compare,
                                     const void *value, void *old);
TELEMEM_API int telemem_atomic_fetch_add_nb(int rank, void *remote,
                                            telemem_type_t type,
                                            const void *value, void *old,
                                            telemem_handle_t *h);
TELEMEM_API int telemem_atomic_swap_nb(int rank, void *remote,
                                       telemem_type_t type, const void *value,
                                       void *old, telemem_handle_t *h);
TELEMEM_API int telemem_atomic_cswap_nb(int rank, void *remote,
                                        telemem_type_t type,
                                        const void *compare,
                                        const void *value, void *old,
                                        telemem_handle_t *h);
TELEMEM_API int telemem_atomic_fetch_add_nbi(int rank, void *remote,
                                             telemem_type_t type,
                                             const void *value, void *old);
TELEMEM_API int telemem_atomic_swap_nbi(int rank, void *remote,
                                        telemem_type_t type,
                                        const void *value, void *old);
TELEMEM_API int telemem_atomic_cswap_nbi(int rank, void *remote,
                                         telemem_type_t type,
                                         const void *compare,
                                         const void *value, void *old);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Mutexes
 *
 * A set of mutexes is created collectively: every rank gets @p count
 * mutexes, numbered 0..count-1, that any rank can lock.  Mutex (m, r) is
 * owned by rank r: lock requests go to r as messages and r grants them
 * first come, first served from its poll loop; a waiting rank only polls
 * its own queues (nobody spins over the network).
 *
 * telemem_mutex_unlock() first completes the caller's operations (as
 * telemem_quiet()), so data written in the critical section is visible to
 * the next holder.
 */
/**@{*/
/**
 * Collectively create a set of mutexes: this rank owns @p count (>= 0;
 * counts may differ between ranks, as with ARMCI_Create_mutexes()).  Sets
 * are numbered in creation order, the same on every rank; *@p set_p names
 * the new one in the calls below.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  count < 0 or set_p NULL
 * @retval TELEMEM_ERR_NO_MEMORY, and a collective's errors
 */
TELEMEM_API int telemem_mutexes_create(int count, int *set_p);
/**
 * Collectively destroy a set.  No mutex of it may be held or awaited.
 * @retval TELEMEM_OK, TELEMEM_ERR_NOT_FOUND (no such set),
 *         TELEMEM_ERR_INVALID_ARG (a mutex of this rank is still held),
 *         and a collective's errors
 */
TELEMEM_API int telemem_mutexes_destroy(int set);
/**
 * Acquire mutex @p mutex of rank @p rank in @p set, waiting (and serving
 * requests) until it is granted.  Since any rank may hold the mutex, the
 * wait ends with TELEMEM_ERR_PEER_DEAD when any rank of the job dies.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  rank, mutex or set unknown, or the
 *         caller already holds it (mutexes are not recursive)
 * @retval TELEMEM_ERR_NOT_INITIALIZED, _IN_HANDLER, _PEER_DEAD, _TIMED_OUT
 */
TELEMEM_API int telemem_mutex_lock(int set, int mutex, int rank);
/**
 * Acquire the mutex if it is free now (one round trip); on success
 * *@p acquired is 1 if this rank now holds it, 0 if it is held by another
 * (on failure it is left unchanged, like every output of a failing call).
 * @retval as telemem_mutex_lock(), plus _INVALID_ARG for acquired NULL
 */
TELEMEM_API int telemem_mutex_trylock(int set, int mutex, int rank,
                                      int *acquired);
/**
 * Release a mutex this rank holds; the owner hands it to the longest
 * waiter.  Completes this rank's operations first (telemem_quiet()).
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  not held by the caller, or unknown
 * @retval the errors of telemem_quiet()
 */
TELEMEM_API int telemem_mutex_unlock(int set, int mutex, int rank);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Active messages
 *
 * A request names a handler registered on the target rank, carries up to
 * TELEMEM_AM_MAX_ARGS 32-bit arguments and a payload of up to 1 GiB (large
 * payloads are fragmented and reassembled transparently), and runs the
 * handler inside the target's poll loop.  A handler may send one reply to
 * the requester with telemem_am_reply() or telemem_am_reply_long(), of any
 * size (a reply that does not fit the transport's buffers now is copied
 * and queued: the handler never blocks), also to its own rank.  It must
 * not block or call other Telemem communication functions: requests, puts,
 * gets, quiet, fence, barrier, collectives, telemem_poll() and
 * telemem_malloc_all() return TELEMEM_ERR_IN_HANDLER; a second reply, or a
 * reply from a reply's handler, returns TELEMEM_ERR_INVALID_ARG.
 * (tests/limits, case handler)
 *
 * Reassembly cap: a target buffers the fragments of a short-form message
 * (and collective messages that arrive early, and vector transfers'
 * address lists) before it can use them, and holds at most 1 GiB in at
 * most 65536 such buffers per sender at a time.  The sender refuses a
 * short-form payload above 1 GiB (TELEMEM_ERR_INVALID_ARG: use the _long
 * forms, which write in place and have no such limit); a message that
 * would go past the cap at the target (several large messages in flight
 * from one sender, or a corrupt header) is refused there with a logged
 * error, nothing is kept, and the sender's next quiet/fence returns
 * TELEMEM_ERR_PROTOCOL.  A 0-byte payload is valid (the handler gets
 * payload NULL, bytes 0).
 *
 * Handlers run in issue order per sender, interleaved with that sender's
 * puts and gets.  telemem_quiet() also waits until earlier requests have
 * been handled.
 */
/**@{*/

#define TELEMEM_AM_MAX_ARGS 16     /**< 32-bit arguments per message */
#define TELEMEM_AM_MAX_HANDLERS 256 /**< handler ids are 0..255 */

/** Identifies the message being handled; valid only inside the handler. */
typedef struct telemem_am_token *telemem_am_token_t;

/**
 * An active-message handler.
 * @param token    the message (for telemem_am_reply(), _source())
 * @param payload  the payload, 8-byte aligned, valid only during the call
 *                 (NULL when @p bytes is 0)
 * @param bytes    payload size
 * @param args     the arguments (valid during the call)
 * @param nargs    number of arguments, 0..TELEMEM_AM_MAX_ARGS
 * @param ctx      the pointer given at registration
 */
typedef void (*telemem_am_handler_t)(telemem_am_token_t token, void *payload,
                                     size_t bytes, const uint32_t *args,
                                     unsigned nargs, void *ctx);

/**
 * Install @p fn as handler @p id (0..TELEMEM_AM_MAX_HANDLERS-1) on this
 * rank, replacing any earlier one.  Not collective, but a request must not
 * reach a rank before that rank has registered the handler (register, then
 * telemem_barrier()).  A request for an unregistered id is dropped and
 * logged at the target, and the sender's next quiet returns
 * TELEMEM_ERR_NOT_FOUND.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  id out of range or fn NULL
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_am_register(int id, telemem_am_handler_t fn,
                                    void *ctx);

/**
 * Install @p fn under the lowest free handler id, set in *id_p.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG   fn or id_p NULL
 * @retval TELEMEM_ERR_NO_MEMORY     all ids are taken
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_am_register_any(telemem_am_handler_t fn, void *ctx,
                                        int *id_p);

/**
 * Send a request to handler @p id on @p rank (the calling rank included).
 * Returns when @p payload and @p args may be reused.  The handler runs
 * when the target polls.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  rank/id out of range, nargs too large,
 *                                  NULL payload with bytes > 0, a payload
 *                                  that wraps around the address space,
 *                                  NULL args with nargs > 0
 * @retval TELEMEM_ERR_NOT_INITIALIZED, TELEMEM_ERR_IN_HANDLER,
 *         TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TIMED_OUT, _NO_MEMORY
 */
TELEMEM_API int telemem_am_request(int rank, int id, const void *payload,
                                   size_t bytes, const uint32_t *args,
                                   unsigned nargs);

/**
 * From inside a request handler, send one reply to the requester's handler
 * @p id.  Never blocks: when buffers are short the reply is copied and
 * queued.  Replies cannot be replied to.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  token NULL, not a request's token or
 *                                  not the token of the handler running
 *                                  now (a kept or forged one), second
 *                                  reply, bad id/args/payload
 * @retval TELEMEM_ERR_NO_MEMORY, TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_am_reply(telemem_am_token_t token, int id,
                                 const void *payload, size_t bytes,
                                 const uint32_t *args, unsigned nargs);

/**
 * A "long" request (GASNet's AMRequestLong): the payload is written into
 * the target's memory at [@p remote_dst, +@p bytes) before the handler
 * runs, and the handler's @p payload argument is @p remote_dst (no
 * reassembly copy, no alignment promise beyond the caller's).  The range
 * must lie inside one region the target knows (telemem_malloc_all(),
 * telemem_register()); otherwise the target writes nothing, does not run
 * the handler, logs a warning, and the requester's next quiet/fence covering
 * it returns TELEMEM_ERR_OUT_OF_RANGE.  Ordered with the sender's puts and
 * other requests like every request.
 * @retval as telemem_am_request(); TELEMEM_ERR_INVALID_ARG also for a NULL
 *         @p remote_dst or a destination range that wraps
 */
TELEMEM_API int telemem_am_request_long(int rank, int id, const void *payload,
                                        size_t bytes, void *remote_dst,
                                        const uint32_t *args, unsigned nargs);

/**
 * The long form of telemem_am_reply(): the payload is written at
 * [@p remote_dst, +@p bytes) in the requester's memory (which must be a
 * region it knows) before the reply handler runs with @p payload ==
 * @p remote_dst.  A reply outside the requester's regions is dropped there
 * with a warning.
 * @retval as telemem_am_reply(); TELEMEM_ERR_INVALID_ARG also for a NULL
 *         @p remote_dst or a range that wraps
 */
TELEMEM_API int telemem_am_reply_long(telemem_am_token_t token, int id,
                                      const void *payload, size_t bytes,
                                      void *remote_dst, const uint32_t *args,
                                      unsigned nargs);

/**
 * The rank that sent the message being handled.
 * @retval TELEMEM_OK
 * @retval TELEMEM_ERR_INVALID_ARG  NULL token or rank_p, or a token that
 *                                  is not the one of the handler running
 *                                  now (kept past its handler, or forged):
 *                                  it is not read
 * @retval TELEMEM_ERR_NOT_INITIALIZED
 */
TELEMEM_API int telemem_am_source(telemem_am_token_t token, int *rank_p);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* TELEMEM_H */

/* gasnet_coll.h - the GASNet-1 collectives extension over Telemem's
 * collectives: gasnet_coll_init, broadcast, scatter, gather, gather_all and
 * exchange (blocking and _nb) on GASNET_TEAM_ALL with the GASNET_COLL_*
 * synchronisation flags, the sync calls and the team barrier. */
#ifndef GASNET_COLL_H
#define GASNET_COLL_H

#include "gasnet.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @file gasnet_coll.h
 *
 * Every node calls the same collectives in the same order.  Addresses are
 * local buffers of any kind (they need not be in the segment).  The data
 * moves through Telemem's collectives (telemem_broadcast(),
 * telemem_allgather()), which write a node's destination only while that
 * node is inside the call, so the IN_NOSYNC/IN_MYSYNC and
 * OUT_NOSYNC/OUT_MYSYNC modes hold as they are; IN_ALLSYNC adds a barrier
 * before the data movement and OUT_ALLSYNC one after it.
 *
 * The _nb forms complete before they return and give
 * GASNET_COLL_INVALID_HANDLE (a complete operation).
 *
 * Flags: exactly one GASNET_COLL_IN_* and one GASNET_COLL_OUT_* mode, and
 * GASNET_COLL_SINGLE (every node passes the same addresses) or
 * GASNET_COLL_LOCAL (addresses are local: only the root's src matters);
 * both are treated alike since no node reads another's arguments.
 * Invalid flags, teams or images are fatal, as errors in the extended API
 * are.  Only GASNET_SEQ with one image per node: images are node numbers.
 * Not provided: the M (multi-image) variants, reductions and scans.
 */

/** Synchronisation modes: one IN_ and one OUT_ flag per call. */
#define GASNET_COLL_IN_NOSYNC (1 << 0)
#define GASNET_COLL_IN_MYSYNC (1 << 1)
#define GASNET_COLL_IN_ALLSYNC (1 << 2)
#define GASNET_COLL_OUT_NOSYNC (1 << 3)
#define GASNET_COLL_OUT_MYSYNC (1 << 4)
#define GASNET_COLL_OUT_ALLSYNC (1 << 5)
#define GASNET_COLL_SYNC_FLAG_MASK 0x3F
/** Address modes. */
#define GASNET_COLL_SINGLE (1 << 6)
#define GASNET_COLL_LOCAL (1 << 7)
/** Accepted and ignored (hints). */
#define GASNET_COLL_AGGREGATE (1 << 8)
#define GASNET_COLL_FIXED_THREADS_PER_NODE (1 << 9)
#define GASNET_COLL_DST_IN_SEGMENT (1 << 10)
#define GASNET_COLL_SRC_IN_SEGMENT (1 << 11)
#define GASNET_COLL_DISABLE_AUTOTUNE (1 << 18)
#define GASNET_COLL_NO_IMAGES (1 << 19)

/** An image (one per node here: image i is node i). */
typedef uint32_t gasnet_image_t;

/** A collective in flight; GASNET_COLL_INVALID_HANDLE is a complete one. */
typedef struct gasnete_coll_op *gasnet_coll_handle_t;
#define GASNET_COLL_INVALID_HANDLE ((gasnet_coll_handle_t)0)

/** A team; only GASNET_TEAM_ALL (every node) exists. */
typedef struct gasnete_coll_team *gasnet_team_handle_t;
GASNETC_API extern gasnet_team_handle_t gasnete_coll_team_all;
#define GASNET_TEAM_ALL gasnete_coll_team_all

/** Reduction callbacks (accepted by gasnet_coll_init(), not used: this
 *  library has no reductions). */
typedef gasnet_handlerarg_t gasnet_coll_fn_handle_t;
typedef void (*gasnet_coll_reduce_fn_t)(void *results, size_t result_count,
                                        const void *left_operands,
                                        size_t left_count,
                                        const void *right_operands,
                                        size_t elem_size, int flags, int arg);
typedef struct {
    gasnet_coll_reduce_fn_t fnptr;
    unsigned int flags;
} gasnet_coll_fn_entry_t;
#define GASNET_COLL_AMSAFE (1 << 0)
#define GASNET_COLL_NONCOMM (1 << 1)

/**
 * Initialise the collectives (after gasnet_attach(); collective).
 * @p images must be NULL and @p my_image is ignored (GASNET_SEQ, one image
 * per node); @p fn_tbl / @p fn_count are recorded only; @p init_flags
 * must be 0.  Calling it more than once is fatal.
 */
GASNETC_API void gasnet_coll_init(const gasnet_image_t images[],
                                  gasnet_image_t my_image,
                                  gasnet_coll_fn_entry_t fn_tbl[],
                                  size_t fn_count, int init_flags);

/** Nodes in @p team; rank <-> node (the identity for GASNET_TEAM_ALL). */
GASNETC_API gasnet_node_t gasnet_coll_team_size(gasnet_team_handle_t team);
GASNETC_API gasnet_node_t gasnet_coll_team_rank2node(gasnet_team_handle_t team,
                                                     int rank);
GASNETC_API gasnet_node_t gasnet_coll_team_node2rank(gasnet_team_handle_t team,
                                                     gasnet_node_t node);

/** The node @p srcimage's @p nbytes at @p src arrive at @p dst on every
 *  node (including the root; src and dst may be equal there). */
GASNETC_API void gasnet_coll_broadcast(gasnet_team_handle_t team, void *dst,
                                       gasnet_image_t srcimage, void *src,
                                       size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_broadcast_nb(gasnet_team_handle_t team, void *dst,
                         gasnet_image_t srcimage, void *src, size_t nbytes,
                         int flags);
/** Node i receives bytes [i*nbytes, (i+1)*nbytes) of the root's @p src. */
GASNETC_API void gasnet_coll_scatter(gasnet_team_handle_t team, void *dst,
                                     gasnet_image_t srcimage, void *src,
                                     size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_scatter_nb(gasnet_team_handle_t team, void *dst,
                       gasnet_image_t srcimage, void *src, size_t nbytes,
                       int flags);
/** The root's @p dst receives every node's @p nbytes in node order. */
GASNETC_API void gasnet_coll_gather(gasnet_team_handle_t team,
                                    gasnet_image_t dstimage, void *dst,
                                    void *src, size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_gather_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                      void *dst, void *src, size_t nbytes, int flags);
/** Every node's @p dst receives every node's @p nbytes in node order. */
GASNETC_API void gasnet_coll_gather_all(gasnet_team_handle_t team, void *dst,
                                        void *src, size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_gather_all_nb(gasnet_team_handle_t team, void *dst, void *src,
                          size_t nbytes, int flags);
/** All-to-all: block j of node i's @p src lands as block i of node j's
 *  @p dst (blocks of @p nbytes). */
GASNETC_API void gasnet_coll_exchange(gasnet_team_handle_t team, void *dst,
                                      void *src, size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_exchange_nb(gasnet_team_handle_t team, void *dst, void *src,
                        size_t nbytes, int flags);

/** Completion of _nb collectives (all complete at once here). */
GASNETC_API int gasnet_coll_try_sync(gasnet_coll_handle_t handle);
GASNETC_API void gasnet_coll_wait_sync(gasnet_coll_handle_t handle);
GASNETC_API int gasnet_coll_try_sync_some(gasnet_coll_handle_t *phandle,
                                          size_t numhandles);
GASNETC_API void gasnet_coll_wait_sync_some(gasnet_coll_handle_t *phandle,
                                            size_t numhandles);
GASNETC_API int gasnet_coll_try_sync_all(gasnet_coll_handle_t *phandle,
                                         size_t numhandles);
GASNETC_API void gasnet_coll_wait_sync_all(gasnet_coll_handle_t *phandle,
                                           size_t numhandles);

/** The split-phase barrier of gasnet.h on a team (GASNET_TEAM_ALL). */
GASNETC_API void gasnet_coll_barrier_notify(gasnet_team_handle_t team, int id,
                                            int flags);
GASNETC_API int gasnet_coll_barrier_try(gasnet_team_handle_t team, int id,
                                        int flags);
GASNETC_API int gasnet_coll_barrier_wait(gasnet_team_handle_t team, int id,
                                         int flags);

#ifdef __cplusplus
}
#endif

#endif /* GASNET_COLL_H */

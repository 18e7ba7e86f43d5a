/* gasnet_coll.h - the GASNet-1 collectives extension over Telemem's
 * active messages: gasnet_coll_init, broadcast, scatter, gather,
 * gather_all, exchange, reduce and scan (blocking, _nb and M forms) on
 * GASNET_TEAM_ALL and split teams, the sync calls and the team barriers
 * (flags and types in gasnet_coll_fwd.h).  gasnet.h includes it. */
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
 * moves as point-to-point active messages tagged (team, sequence number,
 * sender), which a node takes into its destination only while it is
 * inside the call (one that arrives early waits in a list), so the
 * IN_NOSYNC/IN_MYSYNC and OUT_NOSYNC/OUT_MYSYNC modes hold as they are;
 * IN_ALLSYNC adds a team barrier before the data movement and
 * OUT_ALLSYNC one after it.
 *
 * The _nb forms complete before they return and give
 * GASNET_COLL_INVALID_HANDLE (a complete operation).
 *
 * Flags: exactly one GASNET_COLL_IN_* and one GASNET_COLL_OUT_* mode, and
 * GASNET_COLL_SINGLE (every node passes the same addresses) or
 * GASNET_COLL_LOCAL (addresses are local: only the root's src matters);
 * both are treated alike since no node reads another's arguments.
 * Invalid flags, teams or images are fatal, as errors in the extended API
 * are.  Images are team ranks: one per node, or under GASNET_PAR several
 * per node (see gasnet_coll_init()).
 */

/**
 * Initialise the collectives (after gasnet_attach(); collective).
 * @p images NULL: one image per node (image i is node i).  Otherwise
 * images[i] images on node i, numbered node by node; every thread that
 * takes part calls gasnet_coll_init() with its own @p my_image (one of
 * this node's) and then calls each collective of GASNET_TEAM_ALL (a
 * GASNET_PAR client).  @p fn_tbl / @p fn_count are the reduction
 * functions; @p init_flags must be 0.  Later calls only record the
 * calling thread's image.
 */
GASNETC_API void gasnet_coll_init(const gasnet_image_t images[],
                                  gasnet_image_t my_image,
                                  gasnet_coll_fn_entry_t fn_tbl[],
                                  size_t fn_count, int init_flags);

/** Members of @p team; rank <-> node. */
GASNETC_API gasnet_node_t gasnet_coll_team_size(gasnet_team_handle_t team);
GASNETC_API gasnet_node_t gasnet_coll_team_rank2node(gasnet_team_handle_t team,
                                                     int rank);
GASNETC_API gasnet_node_t gasnet_coll_team_node2rank(gasnet_team_handle_t team,
                                                     gasnet_node_t node);
/** This node's rank in @p team. */
GASNETC_API gasnet_node_t gasnet_coll_team_myrank(gasnet_team_handle_t team);
/**
 * Split @p parent_team (collective over it): members with the same
 * @p color form a new team, ranked by @p relrank (then by parent rank).
 * @p clientdata is recorded only.  Returns the new team.
 */
GASNETC_API gasnet_team_handle_t
gasnet_coll_team_split(gasnet_team_handle_t parent_team, gasnet_node_t color,
                       gasnet_node_t relrank, void *clientdata);

/*
 * Data movement.  Images are team ranks (one per node).  Flags: exactly
 * one GASNET_COLL_IN_* and one GASNET_COLL_OUT_*, and one of
 * GASNET_COLL_SINGLE / GASNET_COLL_LOCAL.  The M ("multi-address") forms
 * take one address per image: all of the team's with GASNET_COLL_SINGLE
 * (this node's is used), this node's only with GASNET_COLL_LOCAL.  Every
 * collective is complete at its return on the calling node; the _nb forms
 * return GASNET_COLL_INVALID_HANDLE (already complete).
 */
/** The root's @p nbytes at @p src arrive at @p dst on every member. */
GASNETC_API void gasnet_coll_broadcast(gasnet_team_handle_t team, void *dst,
                                       gasnet_image_t srcimage, void *src,
                                       size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_broadcast_nb(gasnet_team_handle_t team, void *dst,
                         gasnet_image_t srcimage, void *src, size_t nbytes,
                         int flags);
GASNETC_API void gasnet_coll_broadcastM(gasnet_team_handle_t team,
                                        void *const dstlist[],
                                        gasnet_image_t srcimage, void *src,
                                        size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_broadcastM_nb(gasnet_team_handle_t team, void *const dstlist[],
                          gasnet_image_t srcimage, void *src, size_t nbytes,
                          int flags);
/** Member i receives bytes [i*nbytes, (i+1)*nbytes) of the root's @p src. */
GASNETC_API void gasnet_coll_scatter(gasnet_team_handle_t team, void *dst,
                                     gasnet_image_t srcimage, void *src,
                                     size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_scatter_nb(gasnet_team_handle_t team, void *dst,
                       gasnet_image_t srcimage, void *src, size_t nbytes,
                       int flags);
GASNETC_API void gasnet_coll_scatterM(gasnet_team_handle_t team,
                                      void *const dstlist[],
                                      gasnet_image_t srcimage, void *src,
                                      size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_scatterM_nb(gasnet_team_handle_t team, void *const dstlist[],
                        gasnet_image_t srcimage, void *src, size_t nbytes,
                        int flags);
/** The root's @p dst receives every member's @p nbytes in rank order. */
GASNETC_API void gasnet_coll_gather(gasnet_team_handle_t team,
                                    gasnet_image_t dstimage, void *dst,
                                    void *src, size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_gather_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                      void *dst, void *src, size_t nbytes, int flags);
GASNETC_API void gasnet_coll_gatherM(gasnet_team_handle_t team,
                                     gasnet_image_t dstimage, void *dst,
                                     void *const srclist[], size_t nbytes,
                                     int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_gatherM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                       void *dst, void *const srclist[], size_t nbytes,
                       int flags);
/** Every member's @p dst receives every member's @p nbytes in rank
 *  order. */
GASNETC_API void gasnet_coll_gather_all(gasnet_team_handle_t team, void *dst,
                                        void *src, size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_gather_all_nb(gasnet_team_handle_t team, void *dst, void *src,
                          size_t nbytes, int flags);
GASNETC_API void gasnet_coll_gather_allM(gasnet_team_handle_t team,
                                         void *const dstlist[],
                                         void *const srclist[],
                                         size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_gather_allM_nb(gasnet_team_handle_t team, void *const dstlist[],
                           void *const srclist[], size_t nbytes, int flags);
/** All-to-all: block j of member i's @p src lands as block i of member
 *  j's @p dst (blocks of @p nbytes). */
GASNETC_API void gasnet_coll_exchange(gasnet_team_handle_t team, void *dst,
                                      void *src, size_t nbytes, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_exchange_nb(gasnet_team_handle_t team, void *dst, void *src,
                        size_t nbytes, int flags);
GASNETC_API void gasnet_coll_exchangeM(gasnet_team_handle_t team,
                                       void *const dstlist[],
                                       void *const srclist[], size_t nbytes,
                                       int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_exchangeM_nb(gasnet_team_handle_t team, void *const dstlist[],
                         void *const srclist[], size_t nbytes, int flags);
/**
 * Reduction to @p dstimage: every member's @p elem_count elements of
 * @p elem_size bytes at src + src_offset are combined in rank order with
 * the function gasnet_coll_init() registered at index @p func:
 * dst = fn(...fn(fn(src_0, src_1), src_2)..., src_n-1), each call
 * fn(dst, elem_count, dst, elem_count, src_k, elem_size, fn flags,
 * func_arg).  @p src_blksz is not used (one block per image).
 */
GASNETC_API void gasnet_coll_reduce(gasnet_team_handle_t team,
                                    gasnet_image_t dstimage, void *dst,
                                    void *src, size_t src_blksz,
                                    size_t src_offset, size_t elem_size,
                                    size_t elem_count,
                                    gasnet_coll_fn_handle_t func,
                                    int func_arg, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_reduce_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                      void *dst, void *src, size_t src_blksz,
                      size_t src_offset, size_t elem_size, size_t elem_count,
                      gasnet_coll_fn_handle_t func, int func_arg, int flags);
GASNETC_API void gasnet_coll_reduceM(gasnet_team_handle_t team,
                                     gasnet_image_t dstimage, void *dst,
                                     void *const srclist[], size_t src_blksz,
                                     size_t src_offset, size_t elem_size,
                                     size_t elem_count,
                                     gasnet_coll_fn_handle_t func,
                                     int func_arg, int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_reduceM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                       void *dst, void *const srclist[], size_t src_blksz,
                       size_t src_offset, size_t elem_size,
                       size_t elem_count, gasnet_coll_fn_handle_t func,
                       int func_arg, int flags);

/**
 * Prefix reduction: member r's @p dst + @p dst_offset receives the
 * combination (as in gasnet_coll_reduce()) of members 0..r's elements at
 * src + src_offset (GASNET_COLL_EXCLUSIVE_SCAN: 0..r-1; member 0's dst is
 * then left alone).  The block sizes are not used.
 */
GASNETC_API void gasnet_coll_scan(gasnet_team_handle_t team, void *dst,
                                  size_t dst_blksz, size_t dst_offset,
                                  void *src, size_t src_blksz,
                                  size_t src_offset, size_t elem_size,
                                  size_t elem_count,
                                  gasnet_coll_fn_handle_t func, int func_arg,
                                  int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_scan_nb(gasnet_team_handle_t team, void *dst, size_t dst_blksz,
                    size_t dst_offset, void *src, size_t src_blksz,
                    size_t src_offset, size_t elem_size, size_t elem_count,
                    gasnet_coll_fn_handle_t func, int func_arg, int flags);
GASNETC_API void gasnet_coll_scanM(gasnet_team_handle_t team,
                                   void *const dstlist[], size_t dst_blksz,
                                   size_t dst_offset, void *const srclist[],
                                   size_t src_blksz, size_t src_offset,
                                   size_t elem_size, size_t elem_count,
                                   gasnet_coll_fn_handle_t func, int func_arg,
                                   int flags);
GASNETC_API gasnet_coll_handle_t
gasnet_coll_scanM_nb(gasnet_team_handle_t team, void *const dstlist[],
                     size_t dst_blksz, size_t dst_offset,
                     void *const srclist[], size_t src_blksz,
                     size_t src_offset, size_t elem_size, size_t elem_count,
                     gasnet_coll_fn_handle_t func, int func_arg, int flags);

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

/** The split-phase barrier of gasnet.h on a team (the same matching
 *  rules; GASNET_TEAM_ALL is gasnet_barrier_notify() and friends). */
GASNETC_API void gasnet_coll_barrier_notify(gasnet_team_handle_t team, int id,
                                            int flags);
GASNETC_API int gasnet_coll_barrier_try(gasnet_team_handle_t team, int id,
                                        int flags);
GASNETC_API int gasnet_coll_barrier_wait(gasnet_team_handle_t team, int id,
                                         int flags);
GASNETC_API int gasnet_coll_barrier(gasnet_team_handle_t team, int id,
                                    int flags);
/** As gasnet_barrier_result() for the team's last barrier. */
GASNETC_API int gasnet_coll_barrier_result(gasnet_team_handle_t team,
                                           int *id);

/** Autotuner and profile dumps of GASNet's reference collectives: there
 *  is no tuner here, so they write nothing (see docs/gasnet.md). */
GASNETC_API void gasnet_coll_dumpTuningState(char *filename,
                                             gasnet_team_handle_t team);
GASNETC_API void gasnet_coll_dumpProfile(char *filename,
                                         gasnet_team_handle_t team);
GASNETC_API void gasnet_coll_loadTuningState(char *filename,
                                             gasnet_team_handle_t team);

#ifdef __cplusplus
}
#endif

#endif /* GASNET_COLL_H */

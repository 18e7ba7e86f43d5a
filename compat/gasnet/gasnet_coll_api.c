/* gasnet_coll_api.c - the GASNet-1 collectives' entry points: each
 * checks its team, flags and images, then calls the data movement of
 * gasnet_coll.c (gasnet_coll_int.h); the M forms pick this image's
 * address, the _nb forms complete before returning, and the sync calls
 * check the handles they are given. */
#include "gasnet_coll_int.h"
#include "gasnet_internal.h"

/* The entry points: check, then one of gasnet_coll.c's data movement.
 * _nb forms complete before returning. */
#define ROOTED(name, rootarg)                                                  \
    struct gasnete_coll_team *t = tlm_gasnet_coll_check(name, team, flags);    \
    tlm_gasnet_coll_check_image(name, t, rootarg)

void gasnet_coll_broadcast(gasnet_team_handle_t team, void *dst,
                           gasnet_image_t srcimage, void *src, size_t nbytes,
                           int flags)
{
    ROOTED("gasnet_coll_broadcast", srcimage);
    tlm_gasnet_coll_broadcast("gasnet_coll_broadcast", t, dst, srcimage, src,
                              nbytes, flags);
}

gasnet_coll_handle_t gasnet_coll_broadcast_nb(gasnet_team_handle_t team,
                                              void *dst,
                                              gasnet_image_t srcimage,
                                              void *src, size_t nbytes,
                                              int flags)
{
    ROOTED("gasnet_coll_broadcast_nb", srcimage);
    tlm_gasnet_coll_broadcast("gasnet_coll_broadcast_nb", t, dst, srcimage, src,
                              nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_broadcastM(gasnet_team_handle_t team, void *const dstlist[],
                            gasnet_image_t srcimage, void *src, size_t nbytes,
                            int flags)
{
    static const char what[] = "gasnet_coll_broadcastM";
    ROOTED(what, srcimage);
    tlm_gasnet_coll_broadcast(what, t,
                              tlm_gasnet_coll_mine(what, t, dstlist, flags),
                              srcimage, src, nbytes, flags);
}

gasnet_coll_handle_t gasnet_coll_broadcastM_nb(gasnet_team_handle_t team,
                                               void *const dstlist[],
                                               gasnet_image_t srcimage,
                                               void *src, size_t nbytes,
                                               int flags)
{
    static const char what[] = "gasnet_coll_broadcastM_nb";
    ROOTED(what, srcimage);
    tlm_gasnet_coll_broadcast(what, t,
                              tlm_gasnet_coll_mine(what, t, dstlist, flags),
                              srcimage, src, nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_scatter(gasnet_team_handle_t team, void *dst,
                         gasnet_image_t srcimage, void *src, size_t nbytes,
                         int flags)
{
    ROOTED("gasnet_coll_scatter", srcimage);
    tlm_gasnet_coll_scatter("gasnet_coll_scatter", t, dst, srcimage, src,
                            nbytes, flags);
}

gasnet_coll_handle_t gasnet_coll_scatter_nb(gasnet_team_handle_t team,
                                            void *dst, gasnet_image_t srcimage,
                                            void *src, size_t nbytes, int flags)
{
    ROOTED("gasnet_coll_scatter_nb", srcimage);
    tlm_gasnet_coll_scatter("gasnet_coll_scatter_nb", t, dst, srcimage, src,
                            nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_scatterM(gasnet_team_handle_t team, void *const dstlist[],
                          gasnet_image_t srcimage, void *src, size_t nbytes,
                          int flags)
{
    static const char what[] = "gasnet_coll_scatterM";
    ROOTED(what, srcimage);
    tlm_gasnet_coll_scatter(what, t,
                            tlm_gasnet_coll_mine(what, t, dstlist, flags),
                            srcimage, src, nbytes, flags);
}

gasnet_coll_handle_t gasnet_coll_scatterM_nb(gasnet_team_handle_t team,
                                             void *const dstlist[],
                                             gasnet_image_t srcimage, void *src,
                                             size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_scatterM_nb";
    ROOTED(what, srcimage);
    tlm_gasnet_coll_scatter(what, t,
                            tlm_gasnet_coll_mine(what, t, dstlist, flags),
                            srcimage, src, nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_gather(gasnet_team_handle_t team, gasnet_image_t dstimage,
                        void *dst, void *src, size_t nbytes, int flags)
{
    ROOTED("gasnet_coll_gather", dstimage);
    tlm_gasnet_coll_gather("gasnet_coll_gather", t, dstimage, dst, src, nbytes,
                           flags);
}

gasnet_coll_handle_t gasnet_coll_gather_nb(gasnet_team_handle_t team,
                                           gasnet_image_t dstimage, void *dst,
                                           void *src, size_t nbytes, int flags)
{
    ROOTED("gasnet_coll_gather_nb", dstimage);
    tlm_gasnet_coll_gather("gasnet_coll_gather_nb", t, dstimage, dst, src,
                           nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_gatherM(gasnet_team_handle_t team, gasnet_image_t dstimage,
                         void *dst, void *const srclist[], size_t nbytes,
                         int flags)
{
    static const char what[] = "gasnet_coll_gatherM";
    ROOTED(what, dstimage);
    tlm_gasnet_coll_gather(what, t, dstimage, dst,
                           tlm_gasnet_coll_mine(what, t, srclist, flags),
                           nbytes, flags);
}

gasnet_coll_handle_t gasnet_coll_gatherM_nb(gasnet_team_handle_t team,
                                            gasnet_image_t dstimage, void *dst,
                                            void *const srclist[],
                                            size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_gatherM_nb";
    ROOTED(what, dstimage);
    tlm_gasnet_coll_gather(what, t, dstimage, dst,
                           tlm_gasnet_coll_mine(what, t, srclist, flags),
                           nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_gather_all(gasnet_team_handle_t team, void *dst, void *src,
                            size_t nbytes, int flags)
{
    struct gasnete_coll_team *t =
        tlm_gasnet_coll_check("gasnet_coll_gather_all", team, flags);
    tlm_gasnet_coll_gather_all("gasnet_coll_gather_all", t, dst, src, nbytes,
                               flags);
}

gasnet_coll_handle_t gasnet_coll_gather_all_nb(gasnet_team_handle_t team,
                                               void *dst, void *src,
                                               size_t nbytes, int flags)
{
    struct gasnete_coll_team *t =
        tlm_gasnet_coll_check("gasnet_coll_gather_all_nb", team, flags);
    tlm_gasnet_coll_gather_all("gasnet_coll_gather_all_nb", t, dst, src, nbytes,
                               flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_gather_allM(gasnet_team_handle_t team, void *const dstlist[],
                             void *const srclist[], size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_gather_allM";
    struct gasnete_coll_team *t = tlm_gasnet_coll_check(what, team, flags);
    tlm_gasnet_coll_gather_all(
        what, t, tlm_gasnet_coll_mine(what, t, dstlist, flags),
        tlm_gasnet_coll_mine(what, t, srclist, flags), nbytes, flags);
}

gasnet_coll_handle_t gasnet_coll_gather_allM_nb(gasnet_team_handle_t team,
                                                void *const dstlist[],
                                                void *const srclist[],
                                                size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_gather_allM_nb";
    struct gasnete_coll_team *t = tlm_gasnet_coll_check(what, team, flags);
    tlm_gasnet_coll_gather_all(
        what, t, tlm_gasnet_coll_mine(what, t, dstlist, flags),
        tlm_gasnet_coll_mine(what, t, srclist, flags), nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_exchange(gasnet_team_handle_t team, void *dst, void *src,
                          size_t nbytes, int flags)
{
    struct gasnete_coll_team *t =
        tlm_gasnet_coll_check("gasnet_coll_exchange", team, flags);
    tlm_gasnet_coll_exchange("gasnet_coll_exchange", t, dst, src, nbytes,
                             flags);
}

gasnet_coll_handle_t gasnet_coll_exchange_nb(gasnet_team_handle_t team,
                                             void *dst, void *src,
                                             size_t nbytes, int flags)
{
    struct gasnete_coll_team *t =
        tlm_gasnet_coll_check("gasnet_coll_exchange_nb", team, flags);
    tlm_gasnet_coll_exchange("gasnet_coll_exchange_nb", t, dst, src, nbytes,
                             flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_exchangeM(gasnet_team_handle_t team, void *const dstlist[],
                           void *const srclist[], size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_exchangeM";
    struct gasnete_coll_team *t = tlm_gasnet_coll_check(what, team, flags);
    tlm_gasnet_coll_exchange(
        what, t, tlm_gasnet_coll_mine(what, t, dstlist, flags),
        tlm_gasnet_coll_mine(what, t, srclist, flags), nbytes, flags);
}

gasnet_coll_handle_t gasnet_coll_exchangeM_nb(gasnet_team_handle_t team,
                                              void *const dstlist[],
                                              void *const srclist[],
                                              size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_exchangeM_nb";
    struct gasnete_coll_team *t = tlm_gasnet_coll_check(what, team, flags);
    tlm_gasnet_coll_exchange(
        what, t, tlm_gasnet_coll_mine(what, t, dstlist, flags),
        tlm_gasnet_coll_mine(what, t, srclist, flags), nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_reduce(gasnet_team_handle_t team, gasnet_image_t dstimage,
                        void *dst, void *src, size_t src_blksz,
                        size_t src_offset, size_t elem_size, size_t elem_count,
                        gasnet_coll_fn_handle_t func, int func_arg, int flags)
{
    (void)src_blksz;
    ROOTED("gasnet_coll_reduce", dstimage);
    tlm_gasnet_coll_reduce("gasnet_coll_reduce", t, dstimage, dst,
                           (char *)src + src_offset, elem_size, elem_count,
                           func, func_arg, flags);
}

gasnet_coll_handle_t
gasnet_coll_reduce_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                      void *dst, void *src, size_t src_blksz, size_t src_offset,
                      size_t elem_size, size_t elem_count,
                      gasnet_coll_fn_handle_t func, int func_arg, int flags)
{
    (void)src_blksz;
    ROOTED("gasnet_coll_reduce_nb", dstimage);
    tlm_gasnet_coll_reduce("gasnet_coll_reduce_nb", t, dstimage, dst,
                           (char *)src + src_offset, elem_size, elem_count,
                           func, func_arg, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_reduceM(gasnet_team_handle_t team, gasnet_image_t dstimage,
                         void *dst, void *const srclist[], size_t src_blksz,
                         size_t src_offset, size_t elem_size, size_t elem_count,
                         gasnet_coll_fn_handle_t func, int func_arg, int flags)
{
    static const char what[] = "gasnet_coll_reduceM";
    (void)src_blksz;
    ROOTED(what, dstimage);
    tlm_gasnet_coll_reduce(
        what, t, dstimage, dst,
        (char *)tlm_gasnet_coll_mine(what, t, srclist, flags) + src_offset,
        elem_size, elem_count, func, func_arg, flags);
}

gasnet_coll_handle_t
gasnet_coll_reduceM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                       void *dst, void *const srclist[], size_t src_blksz,
                       size_t src_offset, size_t elem_size, size_t elem_count,
                       gasnet_coll_fn_handle_t func, int func_arg, int flags)
{
    static const char what[] = "gasnet_coll_reduceM_nb";
    (void)src_blksz;
    ROOTED(what, dstimage);
    tlm_gasnet_coll_reduce(
        what, t, dstimage, dst,
        (char *)tlm_gasnet_coll_mine(what, t, srclist, flags) + src_offset,
        elem_size, elem_count, func, func_arg, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_scan(gasnet_team_handle_t team, void *dst, size_t dst_blksz,
                      size_t dst_offset, void *src, size_t src_blksz,
                      size_t src_offset, size_t elem_size, size_t elem_count,
                      gasnet_coll_fn_handle_t func, int func_arg, int flags)
{
    (void)dst_blksz;
    (void)src_blksz;
    struct gasnete_coll_team *t =
        tlm_gasnet_coll_check("gasnet_coll_scan", team, flags);
    tlm_gasnet_coll_scan("gasnet_coll_scan", t, (char *)dst + dst_offset,
                         (char *)src + src_offset, elem_size, elem_count, func,
                         func_arg, flags);
}

gasnet_coll_handle_t
gasnet_coll_scan_nb(gasnet_team_handle_t team, void *dst, size_t dst_blksz,
                    size_t dst_offset, void *src, size_t src_blksz,
                    size_t src_offset, size_t elem_size, size_t elem_count,
                    gasnet_coll_fn_handle_t func, int func_arg, int flags)
{
    gasnet_coll_scan(team, dst, dst_blksz, dst_offset, src, src_blksz,
                     src_offset, elem_size, elem_count, func, func_arg, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_scanM(gasnet_team_handle_t team, void *const dstlist[],
                       size_t dst_blksz, size_t dst_offset,
                       void *const srclist[], size_t src_blksz,
                       size_t src_offset, size_t elem_size, size_t elem_count,
                       gasnet_coll_fn_handle_t func, int func_arg, int flags)
{
    static const char what[] = "gasnet_coll_scanM";
    (void)dst_blksz;
    (void)src_blksz;
    struct gasnete_coll_team *t = tlm_gasnet_coll_check(what, team, flags);
    tlm_gasnet_coll_scan(
        what, t,
        (char *)tlm_gasnet_coll_mine(what, t, dstlist, flags) + dst_offset,
        (char *)tlm_gasnet_coll_mine(what, t, srclist, flags) + src_offset,
        elem_size, elem_count, func, func_arg, flags);
}

gasnet_coll_handle_t
gasnet_coll_scanM_nb(gasnet_team_handle_t team, void *const dstlist[],
                     size_t dst_blksz, size_t dst_offset, void *const srclist[],
                     size_t src_blksz, size_t src_offset, size_t elem_size,
                     size_t elem_count, gasnet_coll_fn_handle_t func,
                     int func_arg, int flags)
{
    gasnet_coll_scanM(team, dstlist, dst_blksz, dst_offset, srclist, src_blksz,
                      src_offset, elem_size, elem_count, func, func_arg, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

void gasnet_coll_loadTuningState(char *filename, gasnet_team_handle_t team)
{
    (void)filename;
    (void)team;
}

/* ---- completion and diagnostics ------------------------------------------ */

static void check_handles(const char *what, gasnet_coll_handle_t *ph, size_t n)
{
    if (n && !ph)
        tlm_gasnet_fatal(what, "handle array is NULL");
    for (size_t i = 0; i < n; i++)
        if (ph[i] != GASNET_COLL_INVALID_HANDLE)
            tlm_gasnet_fatal(what,
                             "handle %zu is not one this library "
                             "returned",
                             i);
}

int gasnet_coll_try_sync(gasnet_coll_handle_t handle)
{
    check_handles("gasnet_coll_try_sync", &handle, 1);
    return GASNET_OK;
}

void gasnet_coll_wait_sync(gasnet_coll_handle_t handle)
{
    check_handles("gasnet_coll_wait_sync", &handle, 1);
}

int gasnet_coll_try_sync_some(gasnet_coll_handle_t *phandle, size_t numhandles)
{
    check_handles("gasnet_coll_try_sync_some", phandle, numhandles);
    return GASNET_OK;
}

void gasnet_coll_wait_sync_some(gasnet_coll_handle_t *phandle,
                                size_t numhandles)
{
    check_handles("gasnet_coll_wait_sync_some", phandle, numhandles);
}

int gasnet_coll_try_sync_all(gasnet_coll_handle_t *phandle, size_t numhandles)
{
    check_handles("gasnet_coll_try_sync_all", phandle, numhandles);
    return GASNET_OK;
}

void gasnet_coll_wait_sync_all(gasnet_coll_handle_t *phandle, size_t numhandles)
{
    check_handles("gasnet_coll_wait_sync_all", phandle, numhandles);
}

void gasnet_coll_dumpTuningState(char *filename, gasnet_team_handle_t team)
{
    (void)filename;
    (void)team;
}

void gasnet_coll_dumpProfile(char *filename, gasnet_team_handle_t team)
{
    (void)filename;
    (void)team;
}

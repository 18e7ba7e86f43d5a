/* gasnet_coll.c - the GASNet-1 collectives on GASNET_TEAM_ALL over
 * telemem_broadcast() and telemem_allgather(), with the IN/OUT ALLSYNC
 * modes as Telemem barriers; _nb forms complete before returning. */
#include <stdlib.h>
#include <string.h>

#include "gasnet_coll.h"
#include "gasnet_internal.h"

struct gasnete_coll_team {
    int id;
};
static struct gasnete_coll_team team_all = {0};
gasnet_team_handle_t gasnete_coll_team_all = &team_all;

static struct {
    bool inited;
    gasnet_coll_fn_entry_t *fns;
    size_t nfns;
} C;

void tlm_gasnet_coll_fini(void)
{
    free(C.fns);
    C.fns = NULL;
    C.nfns = 0;
    C.inited = false;
}

#define KNOWN_COLL_FLAGS                                                    \
    (GASNET_COLL_SYNC_FLAG_MASK | GASNET_COLL_SINGLE | GASNET_COLL_LOCAL |  \
     GASNET_COLL_AGGREGATE | GASNET_COLL_FIXED_THREADS_PER_NODE |           \
     GASNET_COLL_DST_IN_SEGMENT | GASNET_COLL_SRC_IN_SEGMENT |              \
     GASNET_COLL_DISABLE_AUTOTUNE | GASNET_COLL_NO_IMAGES)

static int one_bit(int v)
{
    return v && !(v & (v - 1));
}

static void check_coll(const char *what, gasnet_team_handle_t team,
                       int flags, size_t nbytes, const void *a,
                       const void *b)
{
    if (!tlm_gasnet.attached)
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    tlm_gasnet_check_context(what);
    if (!C.inited)
        tlm_gasnet_fatal(what, "called before gasnet_coll_init()");
    if (team != GASNET_TEAM_ALL)
        tlm_gasnet_fatal(what, "unknown team %p (only GASNET_TEAM_ALL)",
                         (void *)team);
    if (flags & ~KNOWN_COLL_FLAGS)
        tlm_gasnet_fatal(what, "unknown flags 0x%x", (unsigned)flags);
    int in = flags & (GASNET_COLL_IN_NOSYNC | GASNET_COLL_IN_MYSYNC |
                      GASNET_COLL_IN_ALLSYNC);
    int out = flags & (GASNET_COLL_OUT_NOSYNC | GASNET_COLL_OUT_MYSYNC |
                       GASNET_COLL_OUT_ALLSYNC);
    if (!one_bit(in) || !one_bit(out))
        tlm_gasnet_fatal(what, "flags 0x%x must hold exactly one "
                         "GASNET_COLL_IN_* and one GASNET_COLL_OUT_* mode",
                         (unsigned)flags);
    int addr = flags & (GASNET_COLL_SINGLE | GASNET_COLL_LOCAL);
    if (!one_bit(addr))
        tlm_gasnet_fatal(what, "flags 0x%x must hold exactly one of "
                         "GASNET_COLL_SINGLE and GASNET_COLL_LOCAL",
                         (unsigned)flags);
    if (nbytes && (!a || !b))
        tlm_gasnet_fatal(what, "NULL buffer with %zu bytes", nbytes);
}

static void image_check(const char *what, gasnet_image_t image)
{
    if (image >= (gasnet_image_t)tlm_gasnet.nodes)
        tlm_gasnet_fatal(what, "image %u out of range [0, %d)",
                         (unsigned)image, tlm_gasnet.nodes);
}

static void tlm_check(const char *what, int rc)
{
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal(what, "%s", telemem_strerror(rc));
}

static void sync_in(const char *what, int flags)
{
    if (flags & GASNET_COLL_IN_ALLSYNC)
        tlm_check(what, telemem_barrier());
}

static void sync_out(const char *what, int flags)
{
    if (flags & GASNET_COLL_OUT_ALLSYNC)
        tlm_check(what, telemem_barrier());
    tlm_gasnet_check_exit();
}

static void *scratch(const char *what, size_t n, size_t m)
{
    if (m && n > SIZE_MAX / m)
        tlm_gasnet_fatal(what, "%zu x %zu bytes overflow", n, m);
    size_t bytes = n * m;
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p)
        tlm_gasnet_fatal(what, "out of memory for %zu bytes", n * m);
    return p;
}

void gasnet_coll_init(const gasnet_image_t images[], gasnet_image_t my_image,
                      gasnet_coll_fn_entry_t fn_tbl[], size_t fn_count,
                      int init_flags)
{
    static const char what[] = "gasnet_coll_init";
    if (!tlm_gasnet.attached)
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    tlm_gasnet_check_context(what);
    if (C.inited)
        tlm_gasnet_fatal(what, "called twice");
    if (images)
        tlm_gasnet_fatal(what, "images must be NULL in GASNET_SEQ (one "
                         "image per node)");
    if (init_flags != 0)
        tlm_gasnet_fatal(what, "init_flags must be 0");
    if (fn_count && !fn_tbl)
        tlm_gasnet_fatal(what, "fn_tbl is NULL with %zu entries", fn_count);
    if (fn_count) {
        C.fns = scratch(what, fn_count, sizeof *fn_tbl);
        memcpy(C.fns, fn_tbl, fn_count * sizeof *fn_tbl);
        C.nfns = fn_count;
    }
    tlm_check(what, telemem_barrier());
    C.inited = true;
}

gasnet_node_t gasnet_coll_team_size(gasnet_team_handle_t team)
{
    if (team != GASNET_TEAM_ALL)
        tlm_gasnet_fatal("gasnet_coll_team_size", "unknown team");
    return (gasnet_node_t)tlm_gasnet.nodes;
}

gasnet_node_t gasnet_coll_team_rank2node(gasnet_team_handle_t team, int rank)
{
    if (team != GASNET_TEAM_ALL || rank < 0 || rank >= tlm_gasnet.nodes)
        tlm_gasnet_fatal("gasnet_coll_team_rank2node", "unknown team or "
                         "rank %d", rank);
    return (gasnet_node_t)rank;
}

gasnet_node_t gasnet_coll_team_node2rank(gasnet_team_handle_t team,
                                         gasnet_node_t node)
{
    if (team != GASNET_TEAM_ALL || node >= (gasnet_node_t)tlm_gasnet.nodes)
        tlm_gasnet_fatal("gasnet_coll_team_node2rank", "unknown team or "
                         "node %u", (unsigned)node);
    return node;
}

/* ---- data movement ------------------------------------------------------- */

void gasnet_coll_broadcast(gasnet_team_handle_t team, void *dst,
                           gasnet_image_t srcimage, void *src, size_t nbytes,
                           int flags)
{
    static const char what[] = "gasnet_coll_broadcast";
    check_coll(what, team, flags, nbytes, dst, dst);
    image_check(what, srcimage);
    bool root = srcimage == (gasnet_image_t)tlm_gasnet.mynode;
    if (root && nbytes && !src)
        tlm_gasnet_fatal(what, "src is NULL on the root");
    sync_in(what, flags);
    if (root && nbytes && dst != src)
        memmove(dst, src, nbytes);
    tlm_check(what, telemem_broadcast(dst, nbytes, (int)srcimage));
    sync_out(what, flags);
}

void gasnet_coll_scatter(gasnet_team_handle_t team, void *dst,
                         gasnet_image_t srcimage, void *src, size_t nbytes,
                         int flags)
{
    static const char what[] = "gasnet_coll_scatter";
    check_coll(what, team, flags, nbytes, dst, dst);
    image_check(what, srcimage);
    bool root = srcimage == (gasnet_image_t)tlm_gasnet.mynode;
    if (root && nbytes && !src)
        tlm_gasnet_fatal(what, "src is NULL on the root");
    size_t n = (size_t)tlm_gasnet.nodes;
    uint8_t *all = scratch(what, nbytes, n);
    sync_in(what, flags);
    if (root && nbytes)
        memcpy(all, src, nbytes * n);
    tlm_check(what, telemem_broadcast(all, nbytes * n, (int)srcimage));
    if (nbytes)
        memcpy(dst, all + (size_t)tlm_gasnet.mynode * nbytes, nbytes);
    free(all);
    sync_out(what, flags);
}

void gasnet_coll_gather(gasnet_team_handle_t team, gasnet_image_t dstimage,
                        void *dst, void *src, size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_gather";
    check_coll(what, team, flags, nbytes, src, src);
    image_check(what, dstimage);
    bool root = dstimage == (gasnet_image_t)tlm_gasnet.mynode;
    if (root && nbytes && !dst)
        tlm_gasnet_fatal(what, "dst is NULL on the root");
    size_t n = (size_t)tlm_gasnet.nodes;
    uint8_t *all = scratch(what, nbytes, n);
    sync_in(what, flags);
    tlm_check(what, telemem_allgather(src, all, nbytes));
    if (root && nbytes)
        memcpy(dst, all, nbytes * n);
    free(all);
    sync_out(what, flags);
}

void gasnet_coll_gather_all(gasnet_team_handle_t team, void *dst, void *src,
                            size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_gather_all";
    check_coll(what, team, flags, nbytes, dst, src);
    size_t n = (size_t)tlm_gasnet.nodes;
    uint8_t *all = scratch(what, nbytes, n);
    sync_in(what, flags);
    tlm_check(what, telemem_allgather(src, all, nbytes));
    if (nbytes)
        memcpy(dst, all, nbytes * n);
    free(all);
    sync_out(what, flags);
}

void gasnet_coll_exchange(gasnet_team_handle_t team, void *dst, void *src,
                          size_t nbytes, int flags)
{
    static const char what[] = "gasnet_coll_exchange";
    check_coll(what, team, flags, nbytes, dst, src);
    size_t n = (size_t)tlm_gasnet.nodes, me = (size_t)tlm_gasnet.mynode;
    /* Every node gathers every node's whole source (n * n blocks), then
     * keeps the blocks addressed to it: simple, O(n^2) memory. */
    size_t row = nbytes * n;
    if (n && row / n != nbytes)
        tlm_gasnet_fatal(what, "%zu x %zu bytes overflow", nbytes, n);
    uint8_t *all = scratch(what, row, n);
    sync_in(what, flags);
    tlm_check(what, telemem_allgather(src, all, row));
    for (size_t i = 0; i < n && nbytes; i++)
        memcpy((uint8_t *)dst + i * nbytes, all + i * row + me * nbytes,
               nbytes);
    free(all);
    sync_out(what, flags);
}

gasnet_coll_handle_t gasnet_coll_broadcast_nb(gasnet_team_handle_t team,
                                              void *dst,
                                              gasnet_image_t srcimage,
                                              void *src, size_t nbytes,
                                              int flags)
{
    gasnet_coll_broadcast(team, dst, srcimage, src, nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

gasnet_coll_handle_t gasnet_coll_scatter_nb(gasnet_team_handle_t team,
                                            void *dst,
                                            gasnet_image_t srcimage,
                                            void *src, size_t nbytes,
                                            int flags)
{
    gasnet_coll_scatter(team, dst, srcimage, src, nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

gasnet_coll_handle_t gasnet_coll_gather_nb(gasnet_team_handle_t team,
                                           gasnet_image_t dstimage,
                                           void *dst, void *src,
                                           size_t nbytes, int flags)
{
    gasnet_coll_gather(team, dstimage, dst, src, nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

gasnet_coll_handle_t gasnet_coll_gather_all_nb(gasnet_team_handle_t team,
                                               void *dst, void *src,
                                               size_t nbytes, int flags)
{
    gasnet_coll_gather_all(team, dst, src, nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

gasnet_coll_handle_t gasnet_coll_exchange_nb(gasnet_team_handle_t team,
                                             void *dst, void *src,
                                             size_t nbytes, int flags)
{
    gasnet_coll_exchange(team, dst, src, nbytes, flags);
    return GASNET_COLL_INVALID_HANDLE;
}

/* ---- completion ---------------------------------------------------------- */

static void check_handle(const char *what, gasnet_coll_handle_t h)
{
    if (h != GASNET_COLL_INVALID_HANDLE)
        tlm_gasnet_fatal(what, "handle %p was not returned by a collective "
                         "of this library", (void *)h);
}

static void check_handles(const char *what, gasnet_coll_handle_t *ph,
                          size_t n)
{
    if (n && !ph)
        tlm_gasnet_fatal(what, "handle array is NULL with %zu entries", n);
    for (size_t i = 0; i < n; i++)
        check_handle(what, ph[i]);
}

int gasnet_coll_try_sync(gasnet_coll_handle_t handle)
{
    check_handle("gasnet_coll_try_sync", handle);
    return GASNET_OK;
}

void gasnet_coll_wait_sync(gasnet_coll_handle_t handle)
{
    check_handle("gasnet_coll_wait_sync", handle);
}

int gasnet_coll_try_sync_some(gasnet_coll_handle_t *phandle,
                              size_t numhandles)
{
    check_handles("gasnet_coll_try_sync_some", phandle, numhandles);
    return GASNET_OK;
}

void gasnet_coll_wait_sync_some(gasnet_coll_handle_t *phandle,
                                size_t numhandles)
{
    check_handles("gasnet_coll_wait_sync_some", phandle, numhandles);
}

int gasnet_coll_try_sync_all(gasnet_coll_handle_t *phandle,
                             size_t numhandles)
{
    check_handles("gasnet_coll_try_sync_all", phandle, numhandles);
    return GASNET_OK;
}

void gasnet_coll_wait_sync_all(gasnet_coll_handle_t *phandle,
                               size_t numhandles)
{
    check_handles("gasnet_coll_wait_sync_all", phandle, numhandles);
}

/* ---- team barrier -------------------------------------------------------- */

static void check_team(const char *what, gasnet_team_handle_t team)
{
    if (team != GASNET_TEAM_ALL)
        tlm_gasnet_fatal(what, "unknown team %p (only GASNET_TEAM_ALL)",
                         (void *)team);
}

void gasnet_coll_barrier_notify(gasnet_team_handle_t team, int id, int flags)
{
    check_team("gasnet_coll_barrier_notify", team);
    gasnet_barrier_notify(id, flags);
}

int gasnet_coll_barrier_try(gasnet_team_handle_t team, int id, int flags)
{
    check_team("gasnet_coll_barrier_try", team);
    return gasnet_barrier_try(id, flags);
}

int gasnet_coll_barrier_wait(gasnet_team_handle_t team, int id, int flags)
{
    check_team("gasnet_coll_barrier_wait", team);
    return gasnet_barrier_wait(id, flags);
}

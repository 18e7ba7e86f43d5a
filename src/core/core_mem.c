/* core_mem.c - collective allocation: telemem_malloc_all / telemem_free_all,
 * the list of this rank's blocks, their release at finalize, and the
 * caller's own loads and stores into blocks (telemem_ptr,
 * telemem_ptr_wake). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_direct.h"
#include "core/core_region.h"
#include "core/core_wait.h"

typedef struct block {
    struct block *next;
    void *base;
    size_t bytes;
    tlm_core_dblock_t *db; /* direct path: exposure and the peers' keys */
} block_t;

static block_t *blocks;

int telemem_malloc_all(size_t bytes, void **bases)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!bases) {
        tlm_error("malloc_all: bases is NULL");
        return TELEMEM_ERR_INVALID_ARG;
    }
    /* Every rank allocates (in memory its direct-path peers can reach),
     * then all agree whether everyone succeeded, then exchange bases and
     * direct-path keys. */
    size_t rs = tlm_core_direct_record_size();
    block_t *b = malloc(sizeof(*b));
    uint8_t *all = malloc(rs * (size_t)tlm_core.nranks);
    uint8_t *mine = malloc(rs);
    void *mem = NULL;
    tlm_core_dblock_t *db = NULL;
    if (b && all && mine &&
        tlm_core_direct_block_alloc(bytes, &mem, &db) != TELEMEM_OK)
        mem = NULL;
    int32_t ok = mem ? 1 : 0;
    if (ok && tlm_core_region_add(mem, bytes, true) != TELEMEM_OK)
        ok = 0;
    if (!ok)
        tlm_error("malloc_all: cannot allocate %zu bytes", bytes);
    rc = telemem_allreduce(&ok, 1, TELEMEM_INT32, TELEMEM_MIN);
    /* ok is already 0 here if b, all or mine failed; saying so explicitly
     * lets the analyzer see that the reduction cannot turn it back to 1.
     * Still after the allreduce: every rank must take part in it. */
    if (rc == TELEMEM_OK && (!ok || !b || !all || !mine))
        rc = TELEMEM_ERR_NO_MEMORY;
    if (rc == TELEMEM_OK) {
        tlm_core_direct_record(db, mem, mine);
        rc = telemem_allgather(mine, all, rs);
    }
    free(mine);
    if (rc != TELEMEM_OK) {
        if (mem) {
            tlm_core_region_remove(mem, true); /* NOT_FOUND if never added */
            tlm_core_direct_block_free(db, mem);
        }
        free(b);
        free(all);
        return rc;
    }
    tlm_core_direct_block_import(db, all, bytes);
    for (int r = 0; r < tlm_core.nranks; r++)
        bases[r] = (void *)(uintptr_t)tlm_core_direct_record_addr(
            all + (size_t)r * rs);
    free(all);
    b->base = mem;
    b->bytes = bytes;
    b->db = db;
    b->next = blocks;
    blocks = b;
    return TELEMEM_OK;
}

int telemem_free_all(void *mine)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!mine) {
        tlm_error("free_all: block is NULL");
        return TELEMEM_ERR_INVALID_ARG;
    }
    block_t **pp = &blocks;
    while (*pp && (*pp)->base != mine)
        pp = &(*pp)->next;
    if (!*pp) {
        tlm_error("free_all: %p is not a block of telemem_malloc_all", mine);
        return TELEMEM_ERR_NOT_FOUND;
    }
    /* Nobody may still write into the block: complete ours, drop our keys
     * of the peers' blocks, meet everyone. */
    block_t *b = *pp;
    rc = telemem_quiet();
    tlm_core_direct_block_release(b->db);
    int brc = telemem_barrier();
    if (rc == TELEMEM_OK)
        rc = brc;
    for (pp = &blocks; *pp != b; pp = &(*pp)->next)
        ; /* the list may have changed while we polled (threads) */
    *pp = b->next;
    tlm_core_region_remove(b->base, true);
    tlm_core_direct_block_free(b->db, b->base);
    free(b);
    return rc;
}

int telemem_ptr(int rank, void *remote, size_t bytes, void **local_p)
{
    TLM_API_GUARD();
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    int rc = tlm_core_check_rank("ptr", rank);
    if (rc != TELEMEM_OK)
        return rc;
    if (!remote || !local_p || tlm_util_range_wraps((uintptr_t)remote, bytes)) {
        tlm_error("ptr: %s", !remote    ? "remote address is NULL"
                             : !local_p ? "local_p is NULL"
                                        : "remote range wraps around");
        return TELEMEM_ERR_INVALID_ARG;
    }
    size_t len = bytes ? bytes : 1;
    if (rank == tlm_core.rank) {
        if (!tlm_core_region_contains((uintptr_t)remote, len))
            return TELEMEM_ERR_UNSUPPORTED;
        *local_p = remote;
        return TELEMEM_OK;
    }
    return tlm_core_direct_ptr(rank, (uintptr_t)remote, len, local_p);
}

int telemem_ptr_wake(int rank)
{
    if (TLM_UNLIKELY(!tlm_core.initialized))
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (TLM_UNLIKELY(rank < 0 || rank >= tlm_core.nranks)) {
        tlm_error("ptr_wake: rank %d out of range [0, %d)", rank,
                  tlm_core.nranks);
        return TELEMEM_ERR_INVALID_ARG;
    }
    /* The stores before this call are seen before whatever the caller
     * does next (a flag, a message); then the doorbell check. */
    atomic_thread_fence(memory_order_release);
    if (rank != tlm_core.rank)
        tlm_core_direct_ptr_wake(rank);
    return TELEMEM_OK;
}

void tlm_core_mem_fini(void)
{
    while (blocks) {
        block_t *b = blocks;
        blocks = b->next;
        tlm_core_direct_block_free(b->db, b->base);
        free(b);
    }
}

/* core_mem.c - collective allocation: telemem_malloc_all / telemem_free_all,
 * the list of this rank's blocks, and their release at finalize. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

typedef struct block {
    struct block *next;
    void *base;
    size_t bytes;
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
    /* Every rank allocates, then all agree whether everyone succeeded. */
    block_t *b = malloc(sizeof(*b));
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)tlm_core.nranks);
    void *mem = NULL;
    if (b && all && posix_memalign(&mem, 64, bytes ? bytes : 64) != 0)
        mem = NULL;
    int32_t ok = mem ? 1 : 0;
    if (ok && tlm_core_region_add(mem, bytes, true) != TELEMEM_OK)
        ok = 0;
    if (!ok)
        tlm_error("malloc_all: cannot allocate %zu bytes", bytes);
    rc = telemem_allreduce(&ok, 1, TELEMEM_INT32, TELEMEM_MIN);
    if (rc == TELEMEM_OK && !ok)
        rc = TELEMEM_ERR_NO_MEMORY;
    if (rc == TELEMEM_OK) {
        uint64_t addr = (uint64_t)(uintptr_t)mem;
        rc = telemem_allgather(&addr, all, sizeof(addr));
    }
    if (rc != TELEMEM_OK) {
        if (mem)
            tlm_core_region_remove(mem, true); /* NOT_FOUND if never added */
        free(mem);
        free(b);
        free(all);
        return rc;
    }
    for (int r = 0; r < tlm_core.nranks; r++)
        bases[r] = (void *)(uintptr_t)all[r];
    free(all);
    b->base = mem;
    b->bytes = bytes;
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
    /* Nobody may still write into the block: complete ours, meet everyone. */
    rc = telemem_quiet();
    int brc = telemem_barrier();
    if (rc == TELEMEM_OK)
        rc = brc;
    block_t *b = *pp;
    *pp = b->next;
    tlm_core_region_remove(b->base, true);
    free(b->base);
    free(b);
    return rc;
}

void tlm_core_mem_fini(void)
{
    while (blocks) {
        block_t *b = blocks;
        blocks = b->next;
        free(b->base);
        free(b);
    }
}

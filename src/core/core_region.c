/* core_region.c - the region table: memory a target accepts requests for
 * (blocks of telemem_malloc_all and telemem_register ranges), sorted and
 * non-overlapping, with a last-hit cache; and telemem_register/deregister.
 * It and direct_keys.c call each other: deregistering a range withdraws
 * the keys peers hold for it, and a key request looks its range up here. */
#include <stdlib.h>
#include <string.h>

#include "core/core_direct.h"
#include "core/core_region.h"
#include "core/core_wait.h"

/* Index of the last region with base <= addr, or -1. */
static long find_floor(uintptr_t addr)
{
    long lo = 0, hi = (long)tlm_core.nregions - 1, ans = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (tlm_core.regions[mid].base <= addr) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

/* The inline tlm_core_region_contains looked at the last-found region. */
bool tlm_core_region_contains_slow(uintptr_t addr, size_t len)
{
    if (tlm_util_range_wraps(addr, len))
        return false;
    long i = find_floor(addr);
    if (i < 0)
        return false;
    const tlm_region_t *r = &tlm_core.regions[i];
    if (!tlm_util_range_in(addr, len, r->base, r->end) ||
        (len == 0 && addr >= r->end && r->end > r->base))
        return false;
    tlm_core.last_region = (size_t)i;
    return true;
}

tlm_region_t *tlm_core_region_find(uintptr_t addr, size_t len)
{
    if (!tlm_core_region_contains(addr, len))
        return NULL;
    long i = find_floor(addr);
    return i < 0 ? NULL : &tlm_core.regions[i];
}

int tlm_core_region_add(void *addr, size_t len, bool from_malloc_all)
{
    uintptr_t base = (uintptr_t)addr;
    if (tlm_util_range_wraps(base, len))
        return TELEMEM_ERR_INVALID_ARG;
    uintptr_t end = base + len;
    long i = find_floor(base);
    /* Overlap with the region below or the one above?  Empty regions (0-byte
     * blocks) occupy their single address. */
    if (i >= 0) {
        const tlm_region_t *r = &tlm_core.regions[i];
        if (base < TLM_MAX(r->end, r->base + 1))
            return TELEMEM_ERR_INVALID_ARG;
    }
    if ((size_t)(i + 1) < tlm_core.nregions &&
        tlm_core.regions[i + 1].base < TLM_MAX(end, base + 1))
        return TELEMEM_ERR_INVALID_ARG;
    if (tlm_core.nregions == tlm_core.cap_regions) {
        size_t cap = tlm_core.cap_regions ? tlm_core.cap_regions * 2 : 16;
        tlm_region_t *nr = realloc(tlm_core.regions, cap * sizeof(*nr));
        if (!nr)
            return TELEMEM_ERR_NO_MEMORY;
        tlm_core.regions = nr;
        tlm_core.cap_regions = cap;
    }
    size_t at = (size_t)(i + 1);
    memmove(&tlm_core.regions[at + 1], &tlm_core.regions[at],
            (tlm_core.nregions - at) * sizeof(tlm_region_t));
    tlm_core.regions[at] = (tlm_region_t){base, end, from_malloc_all, NULL};
    tlm_core.nregions++;
    tlm_core.last_region = at;
    return TELEMEM_OK;
}

int tlm_core_region_remove(void *addr, bool from_malloc_all)
{
    if (TLM_UNLIKELY(tlm_am.placing)) {
        /* A transport is writing a put's payload straight into target
         * memory (tlm_am_place): let it land before the memory goes. */
        tlm_wait_t w;
        tlm_core_wait_init(&w, -1);
        int rc = TELEMEM_OK;
        while (tlm_am.placing && rc == TELEMEM_OK)
            rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK)
            tlm_warn("removing a region while %u put(s) may still write "
                     "into memory: %s", tlm_am.placing,
                     telemem_strerror(rc));
    }
    long i = find_floor((uintptr_t)addr);
    if (i < 0 || tlm_core.regions[i].base != (uintptr_t)addr ||
        tlm_core.regions[i].from_malloc_all != from_malloc_all)
        return TELEMEM_ERR_NOT_FOUND;
    memmove(&tlm_core.regions[i], &tlm_core.regions[i + 1],
            (tlm_core.nregions - (size_t)i - 1) * sizeof(tlm_region_t));
    tlm_core.nregions--;
    tlm_core.last_region = 0;
    return TELEMEM_OK;
}

void tlm_core_region_fini(void)
{
    free(tlm_core.regions);
    tlm_core.regions = NULL;
    tlm_core.nregions = tlm_core.cap_regions = 0;
}

int telemem_register(void *addr, size_t bytes)
{
    TLM_API_GUARD();
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (!addr || bytes == 0) {
        tlm_error("register: %s", !addr ? "address is NULL" : "0 bytes");
        return TELEMEM_ERR_INVALID_ARG;
    }
    int rc = tlm_core_region_add(addr, bytes, false);
    if (rc == TELEMEM_ERR_INVALID_ARG)
        tlm_error("register: [%p, +%zu) wraps or overlaps a known region",
                  addr, bytes);
    return rc;
}

int telemem_deregister(void *addr)
{
    TLM_API_GUARD();
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (!addr)
        return TELEMEM_ERR_INVALID_ARG;
    long i = find_floor((uintptr_t)addr);
    if (i < 0 || tlm_core.regions[i].base != (uintptr_t)addr ||
        tlm_core.regions[i].from_malloc_all)
        return TELEMEM_ERR_NOT_FOUND;
    /* Peers holding its direct-path key drop it first (docs/direct.md):
     * no direct write can land in the range once this returns. */
    int rc = tlm_core_direct_region_retire(&tlm_core.regions[i]);
    if (rc != TELEMEM_OK)
        return rc;
    i = find_floor((uintptr_t)addr); /* the table may have moved */
    if (i < 0 || tlm_core.regions[i].base != (uintptr_t)addr)
        return TELEMEM_ERR_NOT_FOUND;
    tlm_core_direct_region_free(&tlm_core.regions[i]);
    return tlm_core_region_remove(addr, false);
}

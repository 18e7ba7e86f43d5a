/* core_region.h - the region table (core_region.c): the
 * memory of this rank that peers may reach. */
#ifndef TLM_CORE_REGION_H
#define TLM_CORE_REGION_H

#include "core/core.h"

int tlm_core_region_add(void *addr, size_t len, bool from_malloc_all);
int tlm_core_region_remove(void *addr, bool from_malloc_all);
/* Is all of [addr, addr+len) inside one region?  The region found last
 * is looked at inline (every message to one block finds it there); the
 * table's search is core_region.c's. */
bool tlm_core_region_contains_slow(uintptr_t addr, size_t len);
static inline bool tlm_core_region_contains(uintptr_t addr, size_t len)
{
    size_t last = tlm_core.last_region;
    if (TLM_LIKELY(last < tlm_core.nregions &&
                   !tlm_util_range_wraps(addr, len) &&
                   tlm_util_range_in(addr, len, tlm_core.regions[last].base,
                                     tlm_core.regions[last].end)))
        return true;
    return tlm_core_region_contains_slow(addr, len);
}
/* The region holding all of [addr, addr+len), or NULL. */
tlm_region_t *tlm_core_region_find(uintptr_t addr, size_t len);
void tlm_core_region_fini(void);

#endif

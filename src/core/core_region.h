/* core_region.h - the region table (core_region.c): the
 * memory of this rank that peers may reach. */
#ifndef TLM_CORE_REGION_H
#define TLM_CORE_REGION_H

#include "core/core.h"

int tlm_core_region_add(void *addr, size_t len, bool from_malloc_all);
int tlm_core_region_remove(void *addr, bool from_malloc_all);
bool tlm_core_region_contains(uintptr_t addr, size_t len);
/* The region holding all of [addr, addr+len), or NULL. */
tlm_region_t *tlm_core_region_find(uintptr_t addr, size_t len);
void tlm_core_region_fini(void);

#endif

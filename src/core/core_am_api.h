/* core_am_api.h - reassembly memory per source
 * (core_am_api.c), charged by every receiver that allocates for a
 * fragmented message. */
#ifndef TLM_CORE_AM_API_H
#define TLM_CORE_AM_API_H

#include "core/core.h"

/* Reassembly memory per source (docs/hardening.md, F1): every buffer a
 * receiver allocates because a header announced a total (fragmented AM,
 * early collective message, vector list) is charged to its source first.
 * A source may hold at most TLM_CORE_REASM_MAX bytes in
 * TLM_CORE_REASM_MAX_ENTRIES buffers; reserve logs and returns
 * TELEMEM_ERR_PROTOCOL beyond that (nothing charged).  Senders refuse
 * payloads that could never fit (TELEMEM_ERR_INVALID_ARG). */
#define TLM_CORE_REASM_MAX ((size_t)1 << 30)
#define TLM_CORE_REASM_MAX_ENTRIES 65536u
int tlm_core_reasm_reserve(int src, uint64_t bytes, const char *what);
void tlm_core_reasm_release(int src, size_t bytes);
size_t tlm_core_reasm_held(int src);
size_t tlm_core_reasm_max(void);
/* Tests only (fuzz harness): a smaller cap for this process. */
void tlm_core_reasm_set_max(size_t bytes);

#endif

/* core_ops.h - the op table (core_ops.c): slots for
 * non-blocking operations and blocking gets, and their completion. */
#ifndef TLM_CORE_OPS_H
#define TLM_CORE_OPS_H

#include "core/core.h"

int tlm_core_op_alloc(uint32_t *idx_p);
void tlm_core_op_free(uint32_t idx);
/* The op named by a wire id, if it is active and of that kind. */
tlm_op_t *tlm_core_op_lookup(uint32_t idx, int kind);
void tlm_core_op_complete(uint32_t idx, int status);
void tlm_core_ops_fini(void);

#endif

/* core_packed.h - packed streams and accumulate headers
 * (core_packed.c), shared by the strided, vector and atomic operations. */
#ifndef TLM_CORE_PACKED_H
#define TLM_CORE_PACKED_H

#include "core/core.h"

/* Accumulate header part (core_packed.c), shared by strided and vector
 * accumulates: after the fragment header, the scale in 16 bytes. */
#define TLM_ACC_SCALE_BYTES 16u
/* An accumulate's element type as the internal argument, where -1 means a
 * plain put: a negative user value must not turn into one. */
int tlm_core_acc_arg(telemem_type_t t);
/* Known type, non-NULL scale, len a multiple of the element size. */
int tlm_core_check_acc(const char *what, int type, const void *scale,
                       size_t len);
/* Initiator: append the scale of acc (>= 0) at hdr + *hl, advance *hl and
 * return the fragment alignment (element size); 1 for a plain put. */
uint32_t tlm_core_acc_hdr_put(void *hdr, size_t *hl, int acc,
                              const void *scale);
/* Target: the scale of acc (>= 0) after *hl bytes of msg, advancing *hl
 * and setting *es; NULL (protocol error) for an unknown type or a short
 * message.  For acc < 0 returns NULL with *es = 1 and *hl unchanged. */
const void *tlm_core_acc_hdr_get(int acc, const void *msg, size_t len,
                                 size_t *hl, size_t *es);

#endif

/* caf_ref.c - placeholder */
#include "caf_internal.h"
void tlm_caf_ref_init(void);
void tlm_caf_ref_init(void) {}

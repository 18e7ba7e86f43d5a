/* core_boot_pmix.h - the PMIx bootstrap's interface to core_boot.c (the
 * same operations as core_boot.h, for a job started by mpirun or srun). */
#ifndef TLM_CORE_BOOT_PMIX_H
#define TLM_CORE_BOOT_PMIX_H

#include <stddef.h>

typedef struct tlm_boot_pmix tlm_boot_pmix_t;

int tlm_boot_pmix_open(tlm_boot_pmix_t **bp, int *rank, int *size,
                       char *jobid, size_t jobid_cap);
int tlm_boot_pmix_put(tlm_boot_pmix_t *b, const char *key, const void *val,
                      size_t len);
int tlm_boot_pmix_fence(tlm_boot_pmix_t *b);
/* Keys are published per rank: the value rank put under key. */
int tlm_boot_pmix_get(tlm_boot_pmix_t *b, int rank, const char *key,
                      void *buf, size_t cap, size_t *len_p);
void tlm_boot_pmix_abort(tlm_boot_pmix_t *b, int status, const char *why);
void tlm_boot_pmix_close(tlm_boot_pmix_t *b);

#endif

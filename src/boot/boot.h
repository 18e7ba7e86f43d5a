/* boot.h - bootstrap contract: rank, size and a key-value store
 * (put / fence / get) from the launcher (telemem-run, or an adapter for
 * another launcher's: PMIx, PMI-2, PMI-1), or a singleton job without one. */
#ifndef TLM_BOOT_H
#define TLM_BOOT_H

#include <stdbool.h>
#include <stddef.h>

#include "boot/boot_adapter.h"

/* What the core read from the configuration (never from getenv here). */
typedef struct tlm_boot_params {
    int rank;             /* TELEMEM_RANK, -1 when unset (singleton) */
    int size;             /* TELEMEM_NRANKS, -1 when unset */
    const char *kvs_addr; /* TELEMEM_KVS "host:port" or "unix:PATH", ""
                           * when unset */
    const char *jobid;    /* TELEMEM_JOBID, "" when unset */
    const char *secret;   /* TELEMEM_KVS_SECRET: proven to join the store */
    double timeout;       /* seconds a KVS call may block; 0 = forever */
    const char *mode;     /* TELEMEM_BOOTSTRAP: auto, telemem, pmix, pmi2,
                           * pmi1, singleton */
    tlm_boot_env_fn_t *env; /* the launcher's variables (PMIX_*, PMI_*,
                             * SLURM_*, ...); NULL = none */
} tlm_boot_params_t;

typedef struct tlm_boot tlm_boot_t;

/* Join the job.  Singleton (no kvs_addr, no launcher): rank 0 of 1, local
 * store.  Errors: TELEMEM_ERR_BOOTSTRAP (launcher unreachable, bad params,
 * or a launcher that started several ranks this build cannot join),
 * TELEMEM_ERR_CONFIG (unknown mode), TELEMEM_ERR_NO_MEMORY. */
int tlm_boot_open(const tlm_boot_params_t *p, tlm_boot_t **boot_p);
int tlm_boot_rank(const tlm_boot_t *b);
int tlm_boot_size(const tlm_boot_t *b);
/* Job id: unique per job on this host; used to name shared objects.
 * A singleton makes one up from its pid. */
const char *tlm_boot_jobid(const tlm_boot_t *b);

/* Was the job joined through a launcher (telemem-run, PMIx), not as a
 * singleton?  Such a process joins once. */
bool tlm_boot_launched(const tlm_boot_t *b);

/* Publish key -> value (binary, up to 64 KiB).  Visible to others after the
 * next fence.  Keys are NUL-terminated, < 256 bytes, and end in ".<rank>",
 * the rank that publishes them (PMIx stores values per rank).  Put a key
 * once: a PMI-1 or PMI-2 store may keep either value of a key put twice. */
int tlm_boot_put(tlm_boot_t *b, const char *key, const void *val,
                      size_t len);
/* Collective over all ranks: returns when every rank has called it.  Puts
 * made before it are visible to gets after it.  TELEMEM_ERR_PEER_DEAD if a
 * rank died before reaching it, TELEMEM_ERR_BOOTSTRAP on a lost launcher. */
int tlm_boot_fence(tlm_boot_t *b);
/* Fetch key's value into buf (capacity cap), its length in *len_p.
 * TELEMEM_ERR_NOT_FOUND if no such key, TELEMEM_ERR_INVALID_ARG if it does
 * not fit (then *len_p still tells the length). */
int tlm_boot_get(tlm_boot_t *b, const char *key, void *buf, size_t cap,
                      size_t *len_p);
/* The ranks telemem-run saw die (killed, or a non-zero exit), as text
 * "3,7" (valid until the next call), or NULL when none did or the store
 * cannot say (PMIx, PMI, a singleton; after a failed read it is not asked
 * again).  A round trip to the launcher: for liveness checks, not for
 * fast paths. */
const char *tlm_boot_dead(tlm_boot_t *b);
/* Ask the launcher to end the whole job with this exit status (a fatal
 * error in this rank).  Returns; the launcher then kills the job. */
void tlm_boot_abort(tlm_boot_t *b, int exit_status, const char *why);
/* Leave the job (after the last fence).  Frees b. */
void tlm_boot_close(tlm_boot_t *b);

#endif

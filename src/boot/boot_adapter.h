/* boot_adapter.h - the interface of a launcher adapter: how the
 * bootstrap (boot.c) joins a job that another launcher started --
 * PMIx (mpirun, srun --mpi=pmix), PMI-2 (srun --mpi=pmi2), PMI-1 (MPICH's
 * Hydra mpiexec) -- and uses that launcher's key-value store.  Each adapter
 * is one table of operations in its own file; boot_select.c picks one
 * (docs/bootstrap.md, "Launchers"). */
#ifndef TLM_BOOT_ADAPTER_H
#define TLM_BOOT_ADAPTER_H

#include <stddef.h>

/* A launcher variable of this process's environment, NULL when unset.  The
 * core passes tlm_config_launcher_env() (config/config.c reads the
 * environment); tests pass a table of their own. */
typedef const char *tlm_boot_env_fn_t(const char *name);

/* What an adapter learns when it joins the job. */
typedef struct tlm_boot_join {
    int rank;
    int size;
    char jobid[64]; /* 1..63 of [A-Za-z0-9], unique per job on a host: it
                     * names the job's shared-memory objects */
} tlm_boot_join_t;

/* The operations of one adapter; `a` is the adapter's own state, made by
 * open.  Keys and values arrive checked by boot.c (keys 1..255 bytes
 * ending in ".<rank>", values 0..64 KiB of binary data); statuses are those
 * of boot.h, and every error is logged where it is first seen. */
typedef struct tlm_boot_adapter_ops {
    const char *name; /* its TELEMEM_BOOTSTRAP value: "pmix", "pmi2", ... */
    /* Join the job.  timeout: seconds a call may block, 0 = no bound (an
     * adapter over a library that blocks says so in its file). */
    int (*open)(tlm_boot_env_fn_t *env, double timeout, void **a_p,
                tlm_boot_join_t *join);
    int (*put)(void *a, const char *key, const void *val, size_t len);
    int (*fence)(void *a);
    /* The value `owner` (the key's ".<rank>") put under key. */
    int (*get)(void *a, int owner, const char *key, void *buf, size_t cap,
               size_t *len_p);
    /* Ask the launcher to end the job; may not return (PMI-2). */
    void (*abort_job)(void *a, int status, const char *why);
    /* Leave the job and free a. */
    void (*close)(void *a);
} tlm_boot_adapter_ops_t;

/* The adapters (each defined only when it is built: see meson.build and
 * boot_select.c). */
extern const tlm_boot_adapter_ops_t tlm_boot_pmix_ops; /* libpmix */
extern const tlm_boot_adapter_ops_t tlm_boot_pmi2_ops; /* Slurm's libpmi2 */
extern const tlm_boot_adapter_ops_t tlm_boot_pmi1_ops; /* PMI-1 wire, ours */

#endif

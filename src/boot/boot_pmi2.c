/* boot_pmi2.c - the PMI-2 launcher adapter, for programs started by
 * Slurm's srun --mpi=pmi2, through Slurm's libpmi2 (Debian libpmi2-0-dev):
 * PMI2_Init, PMI2_Job_GetId, PMI2_KVS_Put / Fence / Get, PMI2_Abort.
 * Built only when the library is found; without it the same jobs are
 * joined over PMI-1 (boot_pmi1.c), which Slurm serves on the same
 * socket.  Why the library and what it costs: docs/bootstrap.md ("PMI-2"). */
#define TLM_LOG_SUBSYS "boot"

#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "boot/boot_adapter.h"
#include "boot/boot_text.h"
#include "util/log.h"
#include "util/util.h"

/* The launcher closes the PMI socket at finalize (and Hydra kills a rank
 * that exits without it): one join per process. */
static int finalized;

typedef struct boot_pmi2 {
    char kvsname[PMI2_MAX_VALLEN];
    tlm_boot_text_t text;
} boot_pmi2_t;

static int pmi2_put_str(void *ctx, const char *key, const char *val)
{
    int rc = PMI2_KVS_Put(key, val);
    if (rc != PMI2_SUCCESS) {
        tlm_error("PMI2_KVS_Put(%s): error %d", key, rc);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

/* libpmi2 answers PMI2_ERR_OTHER both for a key nobody put and for a lost
 * launcher: it is taken as "not found" (a lost launcher fails the next
 * fence, and the text layer reports a value cut short). */
static int pmi2_get_str(void *ctx, int owner, const char *key, char *val,
                        size_t cap)
{
    boot_pmi2_t *b = ctx;
    int len = 0;
    int rc = PMI2_KVS_Get(b->kvsname, owner, key, val, (int)cap, &len);
    if (rc != PMI2_SUCCESS)
        return TELEMEM_ERR_NOT_FOUND;
    if (len < 0) {
        tlm_error("PMI2_KVS_Get(%s): a value of %d characters (max %zu)",
                  key, -len, cap - 1);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

static int pmi2_open(tlm_boot_env_fn_t *env, double timeout, void **a_p,
                     tlm_boot_join_t *join)
{
    if (finalized) {
        tlm_error("pmi2: this process left its job already "
                  "(telemem_finalize): under a PMI launcher "
                  "telemem_initialize runs once per process");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int spawned = 0, size = 0, rank = -1, appnum = 0;
    int rc = PMI2_Init(&spawned, &size, &rank, &appnum);
    if (rc != PMI2_SUCCESS || size < 1 || rank < 0 || rank >= size) {
        tlm_error("PMI2_Init: error %d (rank %d of %d): started by srun "
                  "--mpi=pmi2? (TELEMEM_BOOTSTRAP=pmi1 speaks PMI-1 on the "
                  "same socket)", rc, rank, size);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    boot_pmi2_t *b = calloc(1, sizeof(*b));
    if (!b) {
        tlm_error("pmi2: out of memory");
        PMI2_Finalize();
        return TELEMEM_ERR_NO_MEMORY;
    }
    rc = PMI2_Job_GetId(b->kvsname, sizeof(b->kvsname));
    if (rc != PMI2_SUCCESS || !b->kvsname[0]) {
        tlm_error("PMI2_Job_GetId: error %d", rc);
        PMI2_Finalize();
        free(b);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    b->text = (tlm_boot_text_t){
        .ctx = b,
        .put_str = pmi2_put_str,
        .get_str = pmi2_get_str,
        .key_max = TLM_MIN(PMI2_MAX_KEYLEN - 1, TLM_BOOT_TEXT_KEY_MAX),
        .val_max = TLM_MIN(PMI2_MAX_VALLEN - 1, TLM_BOOT_TEXT_VAL_MAX),
    };
    join->rank = rank;
    join->size = size;
    tlm_boot_text_jobid("n", b->kvsname, join->jobid, sizeof(join->jobid));
    tlm_debug("rank %d of %d joined PMI-2 job %s", rank, size, b->kvsname);
    *a_p = b;
    return TELEMEM_OK;
}

static int pmi2_put(void *a, const char *key, const void *val, size_t len)
{
    boot_pmi2_t *b = a;
    return tlm_boot_text_put(&b->text, key, val, len);
}

static int pmi2_fence(void *a)
{
    int rc = PMI2_KVS_Fence();
    if (rc != PMI2_SUCCESS) {
        tlm_error("PMI2_KVS_Fence: error %d", rc);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

static int pmi2_get(void *a, int owner, const char *key, void *buf,
                    size_t cap, size_t *len_p)
{
    boot_pmi2_t *b = a;
    return tlm_boot_text_get(&b->text, owner, key, buf, cap, len_p);
}

/* PMI2_Abort tells srun to end the job, then exits the process with
 * status 1: it does not return. */
static void pmi2_abort(void *a, int status, const char *why)
{
    tlm_error("abort with status %d: %s", status, why);
    PMI2_Abort(1, why);
}

static void pmi2_close(void *a)
{
    int rc = PMI2_Finalize(); /* closes PMI_FD */
    if (rc != PMI2_SUCCESS)
        tlm_debug("PMI2_Finalize: error %d", rc);
    finalized = 1;
    free(a);
}

const tlm_boot_adapter_ops_t tlm_boot_pmi2_ops = {
    .name = "pmi2",
    .open = pmi2_open,
    .put = pmi2_put,
    .fence = pmi2_fence,
    .get = pmi2_get,
    .abort_job = pmi2_abort,
    .close = pmi2_close,
};

/* boot_pmix.c - the PMIx launcher adapter, for programs started by
 * Open MPI's mpirun or Slurm's srun --mpi=pmix: rank, size and the
 * key-value store (PMIx_Put / Commit / Fence with data collection / Get).
 * Built only when libpmix is found (boot_select.c makes the choice). */
#define TLM_LOG_SUBSYS "boot"
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "boot/boot_adapter.h"
#include "util/log.h"

typedef struct boot_pmix {
    pmix_proc_t me;
    int size;
} boot_pmix_t;

static int pmix_open(tlm_boot_env_fn_t *env, double timeout, void **a_p,
                     tlm_boot_join_t *join)
{
    boot_pmix_t *b = calloc(1, sizeof(*b));
    if (!b)
        return TELEMEM_ERR_NO_MEMORY;
    pmix_status_t st = PMIx_Init(&b->me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        tlm_error("PMIx_Init failed: %s (started by a launcher that speaks "
                  "PMIx? set TELEMEM_BOOTSTRAP to choose)",
                  PMIx_Error_string(st));
        free(b);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    pmix_proc_t wild;
    PMIX_PROC_CONSTRUCT(&wild);
    memcpy(wild.nspace, b->me.nspace, PMIX_MAX_NSLEN);
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *val = NULL;
    st = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (st != PMIX_SUCCESS || !val) {
        tlm_error("PMIx_Get(PMIX_JOB_SIZE): %s", PMIx_Error_string(st));
        PMIx_Finalize(NULL, 0);
        free(b);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    b->size = (int)val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    /* A job id usable in shared-object names: a hash of the namespace. */
    unsigned long long h = 1469598103934665603ull;
    for (const char *c = b->me.nspace; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    snprintf(join->jobid, sizeof(join->jobid), "p%llx", h);
    join->rank = (int)b->me.rank;
    join->size = b->size;
    *a_p = b;
    tlm_debug("rank %d of %d joined PMIx namespace %s", join->rank,
              join->size, b->me.nspace);
    return TELEMEM_OK;
}

static int pmix_put(void *a, const char *key, const void *val, size_t len)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)(uintptr_t)val;
    v.data.bo.size = len;
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (st != PMIX_SUCCESS) {
        tlm_error("PMIx_Put(%s): %s", key, PMIx_Error_string(st));
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

static int pmix_fence(void *a)
{
    pmix_status_t st = PMIx_Commit();
    if (st != PMIX_SUCCESS) {
        tlm_error("PMIx_Commit: %s", PMIx_Error_string(st));
        return TELEMEM_ERR_BOOTSTRAP;
    }
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (st != PMIX_SUCCESS) {
        tlm_error("PMIx_Fence: %s", PMIx_Error_string(st));
        return st == PMIX_ERR_PROC_ABORTED || st == PMIX_ERR_LOST_CONNECTION
                   ? TELEMEM_ERR_PEER_DEAD : TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

static int pmix_get(void *a, int rank, const char *key, void *buf,
                    size_t cap, size_t *len_p)
{
    const boot_pmix_t *b = a;
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    memcpy(p.nspace, b->me.nspace, PMIX_MAX_NSLEN);
    p.rank = (pmix_rank_t)rank;
    pmix_value_t *val = NULL;
    /* Fences collect every rank's data: what is not here was not put (a
     * PMIx server would otherwise wait for the key, then time out). */
    pmix_info_t info;
    bool optional = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_status_t st = PMIx_Get(&p, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (st == PMIX_ERR_NOT_FOUND || (st == PMIX_SUCCESS && !val))
        return TELEMEM_ERR_NOT_FOUND;
    if (st != PMIX_SUCCESS) {
        tlm_error("PMIx_Get(%s of rank %d): %s", key, rank,
                  PMIx_Error_string(st));
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int rc = TELEMEM_OK;
    if (val->type != PMIX_BYTE_OBJECT) {
        rc = TELEMEM_ERR_BOOTSTRAP;
    } else {
        *len_p = val->data.bo.size;
        if (val->data.bo.size > cap)
            rc = TELEMEM_ERR_INVALID_ARG;
        else if (val->data.bo.size)
            memcpy(buf, val->data.bo.bytes, val->data.bo.size);
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static void pmix_abort(void *a, int status, const char *why)
{
    PMIx_Abort(status, why, NULL, 0);
}

static void pmix_close(void *a)
{
    PMIx_Finalize(NULL, 0);
    free(a);
}

const tlm_boot_adapter_ops_t tlm_boot_pmix_ops = {
    .name = "pmix",
    .open = pmix_open,
    .put = pmix_put,
    .fence = pmix_fence,
    .get = pmix_get,
    .abort_job = pmix_abort,
    .close = pmix_close,
};

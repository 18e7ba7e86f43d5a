/* boot_select.c - how a process joins its job: telemem-run's store
 * (TELEMEM_KVS), PMIx (PMIX_NAMESPACE), PMI-2 or PMI-1 (PMI_FD, PMI_PORT),
 * or a singleton -- and the refusal when a launcher's variables say it
 * started several ranks that this Telemem cannot join, which would
 * otherwise run as that many independent one-rank jobs.  The table of
 * launchers is in docs/bootstrap.md ("Launchers"). */
#define TLM_LOG_SUBSYS "boot"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "boot/boot_select.h"
#include "tlm_build_config.h"
#include "util/log.h"

static const char *var(tlm_boot_env_fn_t *env, const char *name)
{
    const char *v = env ? env(name) : NULL;
    return v && v[0] ? v : NULL;
}

/* A positive count from a launcher variable, 0 when unset or not one. */
static long count(tlm_boot_env_fn_t *env, const char *name)
{
    const char *v = var(env, name);
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && *end == '\0' && n > 0 ? n : 0;
}

static const tlm_boot_adapter_ops_t *pmix_ops(void)
{
#if TLM_HAVE_PMIX
    return &tlm_boot_pmix_ops;
#else
    return NULL;
#endif
}

static const tlm_boot_adapter_ops_t *pmi2_ops(void)
{
#if TLM_HAVE_PMI2
    return &tlm_boot_pmi2_ops;
#else
    return NULL;
#endif
}

/* The launcher that started this process, for the messages, and the
 * number of ranks its variables say it started (0: they do not say). */
typedef struct launcher {
    const char *who;
    long n;
    int slurm;
} launcher_t;

static launcher_t which_launcher(tlm_boot_env_fn_t *env)
{
    /* a Slurm step (srun); SLURM_NTASKS alone is also set in a batch
     * script or an salloc shell, which are one process */
    if (var(env, "SLURM_STEP_ID") || var(env, "SLURM_STEP_NUM_TASKS")) {
        long n = count(env, "SLURM_STEP_NUM_TASKS");
        return (launcher_t){"Slurm srun",
                            n ? n : count(env, "SLURM_NTASKS"), 1};
    }
    if (var(env, "OMPI_COMM_WORLD_SIZE"))
        return (launcher_t){"Open MPI mpirun",
                            count(env, "OMPI_COMM_WORLD_SIZE"), 0};
    if (var(env, "MPI_LOCALNRANKS") || var(env, "PMI_PORT"))
        return (launcher_t){"MPICH mpiexec (Hydra)",
                            count(env, "PMI_SIZE")
                                ? count(env, "PMI_SIZE")
                                : count(env, "MPI_LOCALNRANKS"), 0};
    if (var(env, "PMIX_NAMESPACE") || var(env, "PMIX_RANK"))
        return (launcher_t){"a PMIx launcher", 0, 0};
    if (var(env, "PMI_SIZE"))
        return (launcher_t){"a PMI launcher", count(env, "PMI_SIZE"), 0};
    if (var(env, "MV2_COMM_WORLD_SIZE"))
        return (launcher_t){"MVAPICH mpirun_rsh",
                            count(env, "MV2_COMM_WORLD_SIZE"), 0};
    return (launcher_t){NULL, 0, 0};
}

/* Started through PMIx, and this Telemem has no PMIx adapter. */
static int refuse_pmix(launcher_t l)
{
    if (l.n == 1) { /* one rank: a singleton is that job */
        tlm_debug("started by %s with 1 rank; built without PMIx: singleton",
                  l.who);
        return TELEMEM_OK;
    }
    char n[32] = "";
    if (l.n > 1)
        snprintf(n, sizeof(n), " with %ld %s", l.n,
                 l.slurm ? "tasks" : "ranks");
    tlm_error("launched by %s%s through PMIx, but this Telemem was built "
              "without PMIx (libpmix-dev): rebuild it with PMIx, %sor start "
              "the job with telemem-run", l.who, n,
              l.slurm ? "use srun --mpi=pmi2, " : "");
    return TELEMEM_ERR_BOOTSTRAP;
}

/* Several ranks and no way in: never run them as N singletons. */
static int refuse(tlm_boot_env_fn_t *env, launcher_t l)
{
    if (l.slurm) {
        /* srun sets SLURM_MPI_TYPE for a plugin other than none */
        const char *type = var(env, "SLURM_MPI_TYPE");
        tlm_error("launched by Slurm srun with %ld tasks but no PMI "
                  "(--mpi=%s): use srun %s (or TELEMEM_BOOTSTRAP=singleton "
                  "to run each task as a job of its own)", l.n,
                  type ? type : "none",
                  pmix_ops() ? "--mpi=pmix or --mpi=pmi2" : "--mpi=pmi2");
    } else if (var(env, "OMPI_COMM_WORLD_SIZE")) {
        tlm_error("launched by Open MPI mpirun with %ld ranks but without "
                  "PMIx (no PMIX_NAMESPACE): use an mpirun that serves PMIx "
                  "(Open MPI 4 or later), or telemem-run -n %ld", l.n, l.n);
    } else {
        tlm_error("launched by %s with %ld ranks, which Telemem cannot join "
                  "(no PMIx, PMI_FD or PMI_PORT): start the job with "
                  "telemem-run, mpirun (PMIx), srun --mpi=pmix|pmi2 or "
                  "MPICH's mpiexec", l.who, l.n);
    }
    return TELEMEM_ERR_BOOTSTRAP;
}

/* TELEMEM_BOOTSTRAP=auto without TELEMEM_KVS. */
static int select_auto(tlm_boot_env_fn_t *env,
                       const tlm_boot_adapter_ops_t **ops_p)
{
    launcher_t l = which_launcher(env);
    if (var(env, "PMIX_NAMESPACE") || var(env, "PMIX_RANK")) {
        *ops_p = pmix_ops();
        return *ops_p ? TELEMEM_OK : refuse_pmix(l);
    }
    if (var(env, "PMI_FD") || var(env, "PMI_PORT")) {
        /* Slurm's pmi2 plugin (it sets PMI_JOBID) serves PMI-2 and PMI-1
         * on one socket; Hydra (MPI_LOCALNRANKS), also when its proxies
         * run in a Slurm step, gets PMI-1 */
        bool slurm_pmi2 = var(env, "PMI_JOBID") && var(env, "PMI_FD") &&
                          !var(env, "MPI_LOCALNRANKS");
        *ops_p = slurm_pmi2 && pmi2_ops() ? pmi2_ops() : &tlm_boot_pmi1_ops;
        return TELEMEM_OK;
    }
    if (l.n > 1)
        return refuse(env, l);
    return TELEMEM_OK; /* a singleton */
}

int tlm_boot_select(const char *mode, const char *kvs_addr,
                         tlm_boot_env_fn_t *env,
                         const tlm_boot_adapter_ops_t **ops_p)
{
    *ops_p = NULL;
    if (mode == NULL || mode[0] == '\0' || strcmp(mode, "auto") == 0)
        return kvs_addr && kvs_addr[0] ? TELEMEM_OK
                                       : select_auto(env, ops_p);
    if (strcmp(mode, "telemem") == 0 || strcmp(mode, "singleton") == 0)
        return TELEMEM_OK;
    if (strcmp(mode, "pmi1") == 0) {
        *ops_p = &tlm_boot_pmi1_ops;
        return TELEMEM_OK;
    }
    if (strcmp(mode, "pmix") == 0) {
        if ((*ops_p = pmix_ops()) == NULL) {
            tlm_error("TELEMEM_BOOTSTRAP=pmix, but this Telemem was built "
                      "without PMIx (libpmix-dev)");
            return TELEMEM_ERR_BOOTSTRAP;
        }
        return TELEMEM_OK;
    }
    if (strcmp(mode, "pmi2") == 0) {
        if ((*ops_p = pmi2_ops()) == NULL) {
            tlm_error("TELEMEM_BOOTSTRAP=pmi2, but this Telemem was built "
                      "without Slurm's libpmi2 (libpmi2-0-dev): "
                      "TELEMEM_BOOTSTRAP=pmi1 joins srun --mpi=pmi2 jobs "
                      "over PMI-1");
            return TELEMEM_ERR_BOOTSTRAP;
        }
        return TELEMEM_OK;
    }
    tlm_error("TELEMEM_BOOTSTRAP=\"%s\" is invalid: expected auto, telemem, "
              "pmix, pmi2, pmi1 or singleton", mode);
    return TELEMEM_ERR_CONFIG;
}

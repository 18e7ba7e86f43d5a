/* config.h - the settings service, a floor that core, am and the
 * backends may all include: the parsed configuration struct generated from
 * config_table.h, and the functions of config.c, the one reader of the
 * environment. */
#ifndef TLM_CONFIG_H
#define TLM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define TLM_CFG_T_SIZE size_t
#define TLM_CFG_T_INT long
#define TLM_CFG_T_BOOL bool
#define TLM_CFG_T_SECONDS double
#define TLM_CFG_T_STRING const char *
#define TLM_CFG_T_LOGLEVEL int
#define TLM_CFG_T_SECRET const char *

/* Every layer's settings (the backends' rows included: config_table.h
 * collects them), and the other libraries' variables a layer consults
 * (TLM_CONFIG_ENV: NULL when unset).  Core holds the parsed struct and
 * hands it to the backends as tlm_transport_params_t.config. */
typedef struct tlm_config {
#define TLM_CONFIG(name, type, ...) TLM_CFG_T_##type name;
#define TLM_CONFIG_ENV(name) const char *name;
#include "config/config_table.h"
#undef TLM_CONFIG_ENV
#undef TLM_CONFIG
} tlm_config_t;

/* Fill cfg from the defaults and the TELEMEM_* environment.  Logs the
 * offending variable and returns TELEMEM_ERR_CONFIG on a bad value; warns
 * about unknown TELEMEM_* variables. */
int tlm_config_init(tlm_config_t *cfg);
/* Text block "NAME = value (default|set)" per line; owned by the module. */
const char *tlm_config_string(void);
void tlm_config_fini(void);
/* Append lines (e.g. the direct-path thresholds in effect) to the text. */
void tlm_config_append(const char *text);
/* Where the direct-path calibration profile is: TELEMEM_DIRECT_PROFILE,
 * else $XDG_CACHE_HOME/telemem/direct.profile, else
 * $HOME/.cache/telemem/direct.profile.  False when none can be named. */
bool tlm_config_profile_path(const tlm_config_t *cfg, char *buf, size_t n);
/* A launcher variable (PMIX_NAMESPACE, PMI_FD, SLURM_STEP_NUM_TASKS, ...:
 * the list is in config.c) from the environment, NULL when unset or
 * not in the list: the bootstrap's view of its launcher, read here, the one
 * reader of the environment.  A tlm_boot_env_fn_t. */
const char *tlm_config_launcher_env(const char *name);

#endif

/* boot_select.h - which way a process joins its job: telemem-run's
 * store, a launcher adapter (PMIx, PMI-2, PMI-1), a singleton -- or a
 * refusal, when a launcher started several ranks that this Telemem cannot
 * join (docs/bootstrap.md, "Launchers"). */
#ifndef TLM_BOOT_SELECT_H
#define TLM_BOOT_SELECT_H

#include "boot/boot_adapter.h"

/* mode: TELEMEM_BOOTSTRAP (auto, telemem, pmix, pmi2, pmi1, singleton; ""
 * or NULL = auto); kvs_addr: TELEMEM_KVS ("" when unset); env: the
 * launcher's variables (NULL: none).  On TELEMEM_OK *ops_p is the adapter
 * to open, or NULL for telemem-run's store or a singleton (boot.c
 * tells them apart by kvs_addr and mode).  TELEMEM_ERR_CONFIG for an
 * unknown mode; TELEMEM_ERR_BOOTSTRAP when the launcher cannot be joined
 * (one message names the launcher and the fix). */
int tlm_boot_select(const char *mode, const char *kvs_addr,
                         tlm_boot_env_fn_t *env,
                         const tlm_boot_adapter_ops_t **ops_p);

#endif

/* coll_thresholds.c - the collectives' choices by size: each comes from
 * TELEMEM_COLL_THRESHOLD ("name:size" list), else the calibration
 * profile's "coll-<name> <bytes>" line (telemem-run --calibrate), else
 * the default measured on the development machine; their text for
 * TELEMEM_PRINT_CONFIG (docs/coll.md, "Choices by size"). */
#define TLM_LOG_SUBSYS "coll"
#include <stdio.h>
#include <string.h>

#include "core/coll_int.h"

static const struct {
    const char *name;
    size_t dflt;
    const char *what;
} T[TLM_COLL_NT] = {
    /* docs/coll.md, "Choices by size": 2026-11-28 on this 2-core VM */
    [TLM_COLL_SPLIT] = {"reduce-split", 16u << 20,
                        "a node's ranks reduce an allreduce piece together "
                        "when ranks x piece reach"},
    /* 2026-11-29, 2 ranks on the 2 CPUs: 256 KiB 59 us split against
     * 94 us, 1 MiB 280 against 400; 128 KiB 29 against 33 */
    [TLM_COLL_SPLIT_FIT] = {"reduce-split-fit", 256u << 10,
                            "on a node whose ranks fit its CPUs, they "
                            "reduce an allreduce piece together when "
                            "ranks x piece reach"},
    [TLM_COLL_BCAST_PIECE] = {"bcast-piece", 256u << 10,
                              "a broadcast on a node whose ranks fit its "
                              "CPUs goes through the node area in pieces "
                              "of"},
    [TLM_COLL_BCAST_CMA] = {"bcast-cma", 64u << 10,
                            "a broadcast is read by each rank of a node "
                            "from the root's buffer (process_vm_readv) "
                            "from"},
    [TLM_COLL_REDUCE_SCATTER] = {"reduce-scatter", 256u << 10,
                                 "an allreduce over messages (between "
                                 "nodes) reduces a block on each member "
                                 "instead of a tree from"},
};

size_t tlm_core_coll_thr[TLM_COLL_NT];
static char text[1024];

int tlm_core_coll_check_config(const tlm_config_t *c)
{
    const char *s = c->COLL_THRESHOLD, *key;
    size_t kl, v;
    int rc;
    while ((rc = tlm_util_spec_next(&s, &key, &kl, &v)) > 0) {
        bool known = false;
        for (int i = 0; i < TLM_COLL_NT; i++)
            known |= strlen(T[i].name) == kl && !strncmp(key, T[i].name, kl);
        if (!known) {
            tlm_error("TELEMEM_COLL_THRESHOLD names \"%.*s\": expected "
                      "reduce-split, reduce-split-fit, bcast-piece, "
                      "bcast-cma or reduce-scatter", (int)kl, key);
            return TELEMEM_ERR_CONFIG;
        }
    }
    if (rc < 0) {
        tlm_error("TELEMEM_COLL_THRESHOLD=\"%s\" is invalid: expected a "
                  "comma list name:size (reduce-split:64k)",
                  c->COLL_THRESHOLD);
        return TELEMEM_ERR_CONFIG;
    }
    return TELEMEM_OK;
}

/* Threshold i: the setting, else the profile, else the default; *from
 * says which. */
static size_t lookup(int i, const char **from)
{
    const char *s = tlm_core.cfg.COLL_THRESHOLD, *key;
    size_t kl, v, out = T[i].dflt;
    *from = "default";
    while (tlm_util_spec_next(&s, &key, &kl, &v) > 0)
        if (strlen(T[i].name) == kl && !strncmp(key, T[i].name, kl)) {
            *from = "set";
            return v;
        }
    char pname[64];
    snprintf(pname, sizeof(pname), "coll-%s", T[i].name);
    size_t pos = 0;
    const tlm_profile_entry_t *e;
    while ((e = tlm_util_profile_next(&tlm_core.profile, pname, &pos))) {
        out = (size_t)e->value[0];
        *from = "profile";
    }
    return out;
}

void tlm_core_coll_thresholds_init(void)
{
    size_t k = 0;
    text[0] = '\0';
    for (int i = 0; i < TLM_COLL_NT; i++) {
        const char *from;
        tlm_core_coll_thr[i] = lookup(i, &from);
        int w = snprintf(text + k, sizeof(text) - k,
                         "collectives: %s %zu bytes (%s: %s)\n", T[i].what,
                         tlm_core_coll_thr[i], T[i].name, from);
        if (w > 0 && (size_t)w < sizeof(text) - k)
            k += (size_t)w;
    }
    tlm_debug("%.*s", (int)(k ? k - 1 : 0), text); /* without its '\n' */
}

const char *tlm_core_coll_string(void)
{
    return text;
}

/* backend.c - the list of built-in backends, the choice of which to open
 * (TELEMEM_TRANSPORT: shm on this node, the available network backend
 * auto prefers, or the one named after "shm+", to other nodes), the check that
 * no ops slot is NULL, and the stubs that fill optional slots.  The only
 * file that knows which backends this build has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "backends/transport.h"
#include "util/log.h"
#include "util/util.h"

#include "tlm_build_config.h"

extern const tlm_backend_t tlm_shm_backend;
extern const tlm_backend_t tlm_loop_backend;
#if TLM_HAVE_OFI
extern const tlm_backend_t tlm_ofi_backend;
#endif
#if TLM_HAVE_UCX
extern const tlm_backend_t tlm_ucx_backend;
#endif

/* In order of preference: a rank is reached by the first that can, and
 * transports are progressed in this order (shm first: loop carries only a
 * rank's messages to itself). */
static const tlm_backend_t *const backends[] = {
    &tlm_shm_backend,
#if TLM_HAVE_OFI
    &tlm_ofi_backend,
#endif
#if TLM_HAVE_UCX
    &tlm_ucx_backend,
#endif
    &tlm_loop_backend,
};

/* "shm, ofi, ucx": what TELEMEM_TRANSPORT may name in this build; with
 * drivers, each followed by its direct driver's name ("shm, window, ..."). */
static void names(char *buf, size_t n, bool drivers)
{
    buf[0] = '\0';
    for (size_t i = 0; i < TLM_ARRAY_SIZE(backends); i++) {
        if (backends[i] == &tlm_loop_backend)
            continue;
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", l ? ", " : "", backends[i]->name);
        l = strlen(buf);
        if (drivers && backends[i]->direct_name)
            snprintf(buf + l, n - l, ", %s", backends[i]->direct_name);
    }
}

static bool name_is(const char *name, const char *s, size_t len)
{
    return name && strlen(name) == len && !strncmp(s, name, len);
}

bool tlm_backend_known_name(const char *s, size_t len, char *all, size_t n)
{
    names(all, n, true);
    for (size_t i = 0; i < TLM_ARRAY_SIZE(backends); i++)
        if (backends[i] != &tlm_loop_backend &&
            (name_is(backends[i]->name, s, len) ||
             name_is(backends[i]->direct_name, s, len)))
            return true;
    return false;
}

static const tlm_backend_t *by_name(const char *name)
{
    for (size_t i = 0; i < TLM_ARRAY_SIZE(backends); i++)
        if (backends[i] != &tlm_loop_backend &&
            strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

int tlm_backend_check(const tlm_transport_t *tp)
{
    const tlm_transport_ops_t *o = tp->ops;
    if (!o || !o->connect || !o->send || !o->send_fill || !o->progress ||
        !o->peer_alive || !o->close || !o->wait_arm || !o->wait_disarm ||
        tp->max_msg < TLM_TRANSPORT_MIN_MSG) {
        tlm_error("transport %s has an incomplete ops table", tp->name);
        return TELEMEM_ERR_TRANSPORT;
    }
    return TELEMEM_OK;
}

/* "shm+ofi" -> "ofi": the network backend named after "shm+", else NULL. */
static const char *shm_plus(const char *want)
{
    return strncmp(want, "shm+", 4) == 0 ? want + 4 : NULL;
}

int tlm_backend_check_config(const char *want, const tlm_transport_params_t *p)
{
    const char *net = shm_plus(want);
    const tlm_backend_t *b = by_name(net ? net : want);
    if (strcmp(want, "auto") != 0 && (!b || (net && !b->network))) {
        char have[128];
        names(have, sizeof(have), false);
        const char *n = net ? net : want;
        bool known = !strcmp(n, "ofi") || !strcmp(n, "ucx");
        tlm_error("TELEMEM_TRANSPORT=\"%s\" is %s: expected auto, one of "
                  "this build's transports (%s) or shm+ and a network one",
                  want,
                  known ? "not built in (its -dev package was missing at "
                          "build time)" : "invalid", have);
        return TELEMEM_ERR_CONFIG;
    }
    for (size_t i = 0; i < TLM_ARRAY_SIZE(backends); i++) {
        int rc = backends[i]->check(p);
        if (rc != TELEMEM_OK)
            return rc;
    }
    return TELEMEM_OK;
}

/* The network backend for ranks on other nodes: the one named (alone or
 * after "shm+"), or under auto the one this machine can use that it
 * prefers most (transport.h, TLM_BACKEND_PREF_*), the first among
 * equals. */
static const tlm_backend_t *network_choice(const char *want,
                                          const tlm_transport_params_t *p)
{
    if (strcmp(want, "auto") != 0) {
        const tlm_backend_t *b = by_name(shm_plus(want) ? shm_plus(want)
                                                        : want);
        return b && b->network ? b : NULL;
    }
    const tlm_backend_t *best = NULL;
    int best_pref = 0;
    for (size_t i = 0; i < TLM_ARRAY_SIZE(backends); i++) {
        const tlm_backend_t *b = backends[i];
        if (!b->network)
            continue;
        int pref = b->available ? b->available(p) : TLM_BACKEND_PREF_GENERIC;
        tlm_debug("network transport %s: preference %d", b->name, pref);
        if (pref > best_pref) {
            best = b;
            best_pref = pref;
        }
    }
    if (best)
        tlm_info("network transport under auto: %s", best->name);
    return best;
}

int tlm_backend_open_all(const char *want, const tlm_transport_params_t *p,
                         tlm_backend_add_fn_t add)
{
    bool *reach = calloc((size_t)p->size, sizeof(bool));
    if (!reach)
        return TELEMEM_ERR_NO_MEMORY;
    /* Every rank makes the same choices (the set-ups are collective): shm
     * when several ranks share a node and shm is allowed (auto, shm,
     * shm+NET); a network backend when it is named alone, or under auto
     * and shm+NET when the job spans nodes. */
    bool multi_node = false, use_shm, split = strcmp(want, "auto") == 0 ||
                                              shm_plus(want) != NULL;
    for (int r = 0; r < p->size; r++)
        multi_node |= !p->same_node[r];
    use_shm = p->size > 1 && (split || strcmp(want, "shm") == 0);
    const tlm_backend_t *net = NULL;
    if ((!split && strcmp(want, "shm") != 0) || (split && multi_node))
        net = network_choice(want, p);
    if (strcmp(want, "auto") == 0 && multi_node && !net)
        tlm_warn("the job spans several nodes but this build has no usable "
                 "network transport (libfabric / UCX)");
    int rc = TELEMEM_OK;
    for (size_t i = 0; rc == TELEMEM_OK && i < TLM_ARRAY_SIZE(backends); i++) {
        const tlm_backend_t *b = backends[i];
        tlm_transport_t *tp = NULL;
        bool wanted = b == &tlm_shm_backend
                          ? use_shm
                          : b == &tlm_loop_backend || (net && b == net);
        if (!wanted)
            continue;
        tlm_transport_params_t bp = *p;
        bp.net_only = split && net && b == net;
        memset(reach, 0, (size_t)p->size * sizeof(bool));
        rc = b->query(&bp, reach);
        if (rc == TELEMEM_OK)
            rc = b->open(&bp, &tp);
        if (rc == TELEMEM_OK) {
            rc = add(tp, reach);
            if (rc != TELEMEM_OK)
                tlm_transport_close(tp);
        }
    }
    free(reach);
    return rc;
}

int tlm_backend_stub_connect(tlm_transport_t *tp, int peer)
{
    return TELEMEM_OK;
}

int tlm_backend_stub_peer_alive(tlm_transport_t *tp, int peer)
{
    return TELEMEM_OK;
}

int tlm_backend_stub_check(const tlm_transport_params_t *p)
{
    return TELEMEM_OK;
}

int tlm_backend_stub_wait_arm(tlm_transport_t *tp, int *fd_p)
{
    *fd_p = -1;
    return TELEMEM_ERR_UNSUPPORTED;
}

int64_t tlm_backend_stub_wait_disarm(tlm_transport_t *tp)
{
    (void)tp;
    return 0;
}

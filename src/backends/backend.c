/* backend.c - the list of built-in backends, lookup by name, the check that
 * no ops slot is NULL, and the stubs that fill optional slots. */
#include <string.h>

#include "telemem.h"
#include "backends/transport.h"
#include "util/log.h"
#include "util/util.h"

extern const tlm_backend_t tlm_shm_backend;
extern const tlm_backend_t tlm_loop_backend;

static const tlm_backend_t *const backends[] = {
    &tlm_shm_backend,
    &tlm_loop_backend,
};

const tlm_backend_t *tlm_backend_find(const char *name)
{
    for (size_t i = 0; i < TLM_ARRAY_SIZE(backends); i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i]->abi == TLM_BACKEND_ABI ? backends[i] : NULL;
    return NULL;
}

int tlm_backend_check(const tlm_transport_t *tp)
{
    const tlm_transport_ops_t *o = tp->ops;
    if (!o || !o->connect || !o->send || !o->progress || !o->peer_alive ||
        !o->close || tp->max_msg < 128) {
        tlm_error("transport %s has an incomplete ops table", tp->name);
        return TELEMEM_ERR_TRANSPORT;
    }
    return TELEMEM_OK;
}

int tlm_backend_stub_connect(tlm_transport_t *tp, int peer)
{
    return TELEMEM_OK;
}

int tlm_backend_stub_peer_alive(tlm_transport_t *tp, int peer)
{
    return TELEMEM_OK;
}

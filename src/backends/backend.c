/* backend.c - the list of built-in backends, the choice of which to open
 * (TELEMEM_TRANSPORT), the check that no ops slot is NULL, and the stubs
 * that fill optional slots. */
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "backends/transport.h"
#include "util/log.h"
#include "util/util.h"

extern const tlm_backend_t tlm_shm_backend;
extern const tlm_backend_t tlm_loop_backend;

/* In order of preference: a rank is reached by the first that can, and
 * transports are progressed in this order (shm first: loop carries only a
 * rank's messages to itself). */
static const tlm_backend_t *const backends[] = {
    &tlm_shm_backend,
    &tlm_loop_backend,
};

int tlm_backend_check(const tlm_transport_t *tp)
{
    const tlm_transport_ops_t *o = tp->ops;
    if (!o || !o->connect || !o->send || !o->send_fill || !o->progress ||
        !o->peer_alive || !o->close || tp->max_msg < TLM_TRANSPORT_MIN_MSG) {
        tlm_error("transport %s has an incomplete ops table", tp->name);
        return TELEMEM_ERR_TRANSPORT;
    }
    return TELEMEM_OK;
}

int tlm_backend_check_config(const char *want, const tlm_transport_params_t *p)
{
    if (strcmp(want, "auto") != 0 && strcmp(want, "shm") != 0) {
        tlm_error("TELEMEM_TRANSPORT=\"%s\" is invalid: expected auto or shm "
                  "(this build has: shm)", want);
        return TELEMEM_ERR_CONFIG;
    }
    for (size_t i = 0; i < TLM_ARRAY_SIZE(backends); i++) {
        int rc = backends[i]->check(p);
        if (rc != TELEMEM_OK)
            return rc;
    }
    return TELEMEM_OK;
}

int tlm_backend_open_all(const char *want, const tlm_transport_params_t *p,
                         tlm_backend_add_fn_t add)
{
    bool *reach = calloc((size_t)p->size, sizeof(bool));
    if (!reach)
        return TELEMEM_ERR_NO_MEMORY;
    int rc = TELEMEM_OK;
    /* loop carries messages to self.  Every rank opens shm when the job has
     * more than one rank, since its set-up is collective. */
    for (size_t i = 0; rc == TELEMEM_OK && i < TLM_ARRAY_SIZE(backends); i++) {
        const tlm_backend_t *b = backends[i];
        tlm_transport_t *tp = NULL;
        if (b == &tlm_shm_backend && p->size == 1)
            continue;
        rc = b->query(p, reach);
        if (rc == TELEMEM_OK)
            rc = b->open(p, &tp);
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

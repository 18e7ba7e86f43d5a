/* ucx_direct.h - the ucx-rma direct-path driver's interface to the UCX
 * transport that opens it (ucx_transport.c): the context, worker and
 * endpoints it borrows. */
#ifndef TLM_UCX_DIRECT_H
#define TLM_UCX_DIRECT_H

#include <ucp/api/ucp.h>

#include "backends/direct.h"
#include "backends/transport.h"

/* What the driver rides on; owned by the transport, which must keep them
 * until the driver is closed.  The context must have UCP_FEATURE_RMA. */
typedef struct tlm_ucx_direct_env {
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_ep_h *eps;           /* by rank; created by tlm_transport_connect */
    tlm_transport_t *tp;     /* the transport (its connect op) */
    int rank, size;
    size_t reg_cache_max;    /* TELEMEM_REG_CACHE_MAX */
} tlm_ucx_direct_env_t;

/* Open the ucx-rma driver.  TELEMEM_OK (*d_p set), TELEMEM_ERR_NO_MEMORY or
 * TELEMEM_ERR_INVALID_ARG.  The transport closes the driver
 * (d->ops->close, which waits a bounded time for operations in flight)
 * before it closes its endpoints, worker and context. */
int tlm_ucx_direct_open(const tlm_ucx_direct_env_t *env, tlm_direct_t **d_p);

/* UCX's description of an endpoint (ucp_ep_print_info): its lanes
 * ("lane[0]:  2:tcp/lo.0 ...", "rma_bw" for RMA lanes) and protocol
 * ranges ("put[" for native RMA).  UCX 1.13 has no query for these.
 * malloc'd text, or NULL when it cannot be read. */
char *tlm_ucx_ep_dump(ucp_ep_h ep);

/* The driver's registration cache, for tests and statistics (read only). */
struct tlm_regcache;
const struct tlm_regcache *tlm_ucx_direct_cache(const tlm_direct_t *d);

#endif

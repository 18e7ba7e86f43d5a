/* ofi_direct.h - the ofi-rma direct-path driver's interface to the ofi
 * transport that opens it (ofi_transport.c): what of the transport's
 * endpoint it borrows, and how the transport hands it the completions of
 * its operations, which arrive on the transport's completion queue. */
#ifndef TLM_OFI_DIRECT_H
#define TLM_OFI_DIRECT_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <stdbool.h>

#include "backends/direct.h"

/* What the driver rides on; all owned by the transport, which must keep
 * them open until the driver is closed (tlm_ofi_direct_open's comment). */
typedef struct tlm_ofi_direct_env {
    const struct fi_info *info;   /* the endpoint's info (caps, mr_mode) */
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_cq *cq;            /* the endpoint's transmit queue */
    const fi_addr_t *addrs;       /* by rank */
    int rank, size;
    size_t reg_cache_max;         /* TELEMEM_REG_CACHE_MAX */
} tlm_ofi_direct_env_t;

/* Open the ofi-rma driver on env's endpoint.  TELEMEM_OK (*d_p set),
 * TELEMEM_ERR_UNSUPPORTED when the endpoint lacks what RMA needs (the
 * reason is logged at debug level), TELEMEM_ERR_NO_MEMORY.  The transport
 * closes the driver (d->ops->close) after closing its endpoint (no
 * completion can then name the driver's contexts) and before closing the
 * domain (the driver's memory registrations belong to it). */
int tlm_ofi_direct_open(const tlm_ofi_direct_env_t *env, tlm_direct_t **d_p);

/* The transport's completion queue gave it op_context ctx: true if ctx is
 * an operation of driver d (which then accounts for it: err 0 = success,
 * else the provider's positive error code); false if it is the
 * transport's own.  d may be NULL (false). */
bool tlm_ofi_direct_event(tlm_direct_t *d, void *ctx, int err);

/* The driver's registration cache, for tests and statistics (read only). */
struct tlm_regcache;
const struct tlm_regcache *tlm_ofi_direct_cache(const tlm_direct_t *d);

#endif

/* window.h - the same-node direct-path driver ("window"): opened by the shm
 * backend, hung on its transport as tp->direct.  Protocol: docs/direct.md. */
#ifndef TLM_WINDOW_H
#define TLM_WINDOW_H

#include "backends/transport.h"

/* Called after each write or atomic into rank's memory, and by
 * telemem_ptr_wake without core's lock (it must not need it): the shm
 * transport wakes rank if it sleeps in a wait (its doorbell). */
typedef void (*tlm_window_wake_fn_t)(void *arg, int rank);

/* Open the window driver for the local ranks of p (local_of_rank[r] >= 0).
 * Never fails the transport: *d_p is NULL when the driver cannot work here
 * (then every transfer takes the AM path).  TELEMEM_OK or
 * TELEMEM_ERR_NO_MEMORY. */
int tlm_window_open(const tlm_transport_params_t *p, const int *local_of_rank,
                    tlm_window_wake_fn_t wake, void *wake_arg,
                    tlm_direct_t **d_p);

/* Does [addr, addr+len) lie in one of this process's telemem_malloc_all
 * blocks of shared memory (which every local peer maps)? */
bool tlm_window_mine(tlm_direct_t *d, uintptr_t addr, size_t len);
/* Where [addr, addr+len) of peer is mapped here, when it lies inside one
 * of the peer's telemem_malloc_all blocks this process has imported (a
 * block of shared memory), else NULL.  The shm transport's pull reads
 * there with memcpy instead of process_vm_readv (docs/shm.md). */
const void *tlm_window_map(tlm_direct_t *d, int peer, uintptr_t addr,
                           size_t len);

#endif

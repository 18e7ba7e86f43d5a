/* am_inl.h - the send fast path: one message straight to the transport when
 * nothing is queued for that peer (else the caller takes the slow path). */
#ifndef TLM_AM_INL_H
#define TLM_AM_INL_H

#include "telemem.h"

/* TELEMEM_OK, TELEMEM_ERR_AGAIN (nothing sent: queue or retry) or error. */
static inline int tlm_am_try_send(int peer, const void *hdr, size_t hdr_len,
                                  const void *data, size_t len)
{
    tlm_am_peer_t *p = &tlm_am.peers[peer];
    if (TLM_UNLIKELY(p->qhead != NULL))
        return TELEMEM_ERR_AGAIN;
    struct iovec iov = {(void *)(uintptr_t)data, len};
    return tlm_transport_send(p->tp, peer, hdr, hdr_len, &iov, len ? 1 : 0);
}

#endif

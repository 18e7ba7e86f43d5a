/* am_inl.h - the send fast path: one message straight to the transport when
 * nothing is queued for that peer (else the caller takes the slow path). */
#ifndef TLM_AM_INL_H
#define TLM_AM_INL_H

#include "telemem.h"

/* Payload bytes of one message to peer after a header of hdr_len. */
static inline size_t tlm_am_max_payload(int peer, size_t hdr_len)
{
    return tlm_am.peers[peer].max_msg - hdr_len;
}

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

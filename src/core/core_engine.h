/* core_engine.h - how an operation completes (core_engine.c),
 * the machinery every operation file shares: op wire ids and waits, send
 * streams, flush, acks, refusals and protocol errors.  With it come the
 * op table and the wait loop, which operations use together. */
#ifndef TLM_CORE_ENGINE_H
#define TLM_CORE_ENGINE_H

#include "core/core.h"
#include "core/core_ops.h"
#include "core/core_wait.h"

/* Send hdr + data as one message or a fragmented stream, in order behind
 * earlier sends to rank; returns when data may be reused.  The fast half
 * (one message straight to the transport) is inline; the rest posts the
 * stream and waits. */
int tlm_core_send_stream_slow(int rank, const void *hdr, size_t hdr_len,
                              const void *data, size_t len);
static inline int tlm_core_send_stream(int rank, const void *hdr,
                                       size_t hdr_len, const void *data,
                                       size_t len)
{
    if (TLM_LIKELY(len <= tlm_am_max_payload(rank, hdr_len) &&
                   !tlm_am_zc_pays(&tlm_am.peers[rank], data, len))) {
        int rc = tlm_am_try_send(rank, hdr, hdr_len, data, len);
        if (TLM_LIKELY(rc != TELEMEM_ERR_AGAIN))
            return rc;
    }
    return tlm_core_send_stream_slow(rank, hdr, hdr_len, data, len);
}
/* A transfer refused by this rank (TLM_DIRECT_REFUSED) reported as the
 * target's refusal would be: a blocking get returns status; a put or an
 * _nbi operation returns OK and the next quiet / fence returns status; an
 * _nb operation gets a handle whose wait returns it. */
int tlm_core_refused(int rank, bool write, int mode, telemem_handle_t *h,
                     int status);
/* Wait (polling) until a posted op is handed over; cancels it on error
 * (a zc op the transport still reads is then left to free itself). */
int tlm_core_wait_sent(int rank, tlm_am_sendop_t *op);
/* Wait until every request to rank (or to all when rank < 0) is complete. */
int tlm_core_flush(int rank);
/* Wait until the AM requests already sent to rank are applied and its gets
 * answered, keeping refusals for the next quiet (direct-path ordering). */
int tlm_core_flush_am(int rank);

/* Target side of refused put-like requests (h = the fragment header):
 * ACK with status after the last fragment when the request wants one,
 * else one NACK for the first fragment. */
void tlm_core_refuse(int src, const tlm_am_frag_hdr_t *h, bool last,
                     int status);
void tlm_core_send_ack(int src, uint32_t id, int status);
/* Wire ids of ops (slot + generation) and back. */
uint32_t tlm_core_wire_id(uint32_t idx);
tlm_op_t *tlm_core_op_from_wire(uint32_t id, int kind, uint32_t *idx_p);
void tlm_core_protocol_error(int src, const char *what, size_t len);
/* Handle for a new op. */
int tlm_core_new_handle(uint32_t idx, telemem_handle_t *h);
/* Wait for an op to be done (blocking forms); frees it; its status. */
int tlm_core_op_wait(uint32_t idx);
/* The same, watching the liveness of peer instead (all ranks when < 0). */
int tlm_core_op_wait_peer(uint32_t idx, int peer);
/* Start a get-like op: a request (hdr + data) whose answer is GET_REP
 * stream(s) or ACK; the caller set op fields first via *op_p. */
int tlm_core_get_alloc(int rank, bool nbi, tlm_op_t **op_p, uint32_t *idx_p);
void tlm_core_get_started(tlm_op_t *op);
/* The pack callback of tlm_pack_src_t streams (am engine signature). */
void tlm_core_pack_strided(void *arg, void *dst, size_t off, size_t len);
void tlm_core_pack_vector(void *arg, void *dst, size_t off, size_t len);
/* Modes of the put-like and get-like front ends. */
enum { TLM_MODE_BLOCK = 0, TLM_MODE_NB, TLM_MODE_NBI };
/* Send a packed put-like stream (hdr + total bytes from src) in mode:
 * blocking (src may be on the stack), nb (src inside the op, handle set),
 * nbi (src copied).  TELEMEM_OK or an error. */
int tlm_core_put_packed(int rank, int mode, void *hdr, size_t hdr_len,
                        size_t total, uint32_t align, tlm_am_pack_fn_t pack,
                        tlm_pack_src_t *src, telemem_handle_t *h);

#endif

/* boot_wire.h - the bootstrap wire protocol shared by the client
 * (src/boot/boot.c) and the launcher's server (tools/run_kvs.c):
 * version, limits, op and status numbers, big-endian helpers, and the
 * proofs of the job's secret exchanged at HELLO.  The specification is
 * docs/bootstrap.md.  Every frame is an 8-byte header -- u32 body length,
 * u8 op, u8 status, u16 zero, big-endian -- and a body. */
#ifndef TLM_BOOT_WIRE_H
#define TLM_BOOT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "util/sha256.h"

enum {
    WIRE_VERSION = 2,
    WIRE_HDR = 8,
    WIRE_MAX_KEY = 255,
    WIRE_MAX_VAL = 65536,
    WIRE_MAX_TEXT = 1024,
    WIRE_MAX_BODY = 2 + WIRE_MAX_KEY + WIRE_MAX_VAL, /* a full PUT */
    WIRE_MAX_JOBID = 63,
    WIRE_NONCE = 32,
    WIRE_MAC = TLM_SHA256_LEN,
    WIRE_CHALLENGE_BODY = 4 + WIRE_NONCE, /* u32 version, server nonce */
    /* u32 version, i32 rank, i32 nranks, client nonce, proof */
    WIRE_HELLO_BODY = 12 + WIRE_NONCE + WIRE_MAC,
    WIRE_SECRET_HEX = 64, /* TELEMEM_KVS_SECRET: 32 random bytes in hex */
};
enum { OP_HELLO = 1, OP_PUT, OP_FENCE, OP_GET, OP_ABORT, OP_BYE,
       OP_CHALLENGE };
enum { ST_OK = 0, ST_NOT_FOUND, ST_PEER_DEAD, ST_REFUSED, ST_BAD_REQUEST };

static inline void put_u16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static inline void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static inline uint32_t get_u32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | p[3];
}

/* The proofs of HELLO: HMAC-SHA-256 keyed with the job's secret over a
 * label, both nonces and the rank (and nranks for the rank's proof), so a
 * proof seen on one connection is worth nothing on another (fresh server
 * nonce) nor for another rank, and the rank's proof cannot be sent back to
 * it as the store's. */
static inline void wire_proof(const char *secret, int from_rank,
                              const unsigned char *snonce,
                              const unsigned char *cnonce, int rank,
                              int nranks, unsigned char *mac)
{
    static const char label_rank[] = "telemem-kvs rank hello";
    static const char label_store[] = "telemem-kvs store welcome";
    unsigned char ids[8];
    put_u32(ids, (uint32_t)rank);
    put_u32(ids + 4, (uint32_t)(from_rank ? nranks : 0));
    const void *part[4] = {from_rank ? label_rank : label_store, snonce,
                           cnonce, ids};
    size_t len[4] = {from_rank ? sizeof(label_rank) : sizeof(label_store),
                     WIRE_NONCE, WIRE_NONCE, sizeof(ids)};
    size_t klen = 0;
    while (secret[klen])
        klen++;
    tlm_util_hmac_sha256(secret, klen, part, len, 4, mac);
}

#endif

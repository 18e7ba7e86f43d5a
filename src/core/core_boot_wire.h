/* core_boot_wire.h - the bootstrap wire protocol shared by the client
 * (src/core/core_boot.c) and the launcher's server (tools/run_kvs.c):
 * version, limits, op and status numbers, big-endian helpers.  The
 * specification is docs/bootstrap.md.  Every frame is an 8-byte header --
 * u32 body length, u8 op, u8 status, u16 zero, big-endian -- and a body. */
#ifndef TLM_CORE_BOOT_WIRE_H
#define TLM_CORE_BOOT_WIRE_H

#include <stdint.h>

enum {
    WIRE_VERSION = 1,
    WIRE_HDR = 8,
    WIRE_MAX_KEY = 255,
    WIRE_MAX_VAL = 65536,
    WIRE_MAX_TEXT = 1024,
    WIRE_MAX_BODY = 2 + WIRE_MAX_KEY + WIRE_MAX_VAL, /* a full PUT */
    WIRE_MAX_JOBID = 63,
};
enum { OP_HELLO = 1, OP_PUT, OP_FENCE, OP_GET, OP_ABORT, OP_BYE };
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

#endif

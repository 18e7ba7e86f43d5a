/* am_wire.h - every message's header: fixed size, explicit layout, a version
 * in the type byte's range.  The protocol is written up in docs/protocol.md. */
#ifndef TLM_AM_WIRE_H
#define TLM_AM_WIRE_H

#include <stdint.h>

#define TLM_AM_WIRE_VERSION 1

/* Internal message types.  0 is never valid (zeroed memory is rejected). */
enum tlm_am_type {
    TLM_AM_PUT = 1,       /* frag: data for [addr, addr+total) at offset */
    TLM_AM_GET_REQ = 2,   /* get: id = op, addr, len */
    TLM_AM_GET_REP = 3,   /* frag: get data for op id at offset */
    TLM_AM_ACK = 4,       /* op id finished at the target with status */
    TLM_AM_NACK = 5,      /* an un-acked request was refused: status, range */
    TLM_AM_FLUSH = 6,     /* id = sequence; answered by FLUSH_ACK */
    TLM_AM_FLUSH_ACK = 7,
    TLM_AM_USER = 8,      /* frag: public active message (request/reply) */
    TLM_AM_COLL = 9,      /* frag: collective data, id = seq, aux = round */
    TLM_AM_PUTS = 10,     /* frag: strided put / accumulate (aux = type+1) */
    TLM_AM_GETS_REQ = 11, /* get request + strided descriptor */
    TLM_AM_PUTV = 12,     /* frag: vector put / accumulate: list, then data */
    TLM_AM_GETV_REQ = 13, /* frag: vector get request: the list */
    TLM_AM_RMW = 14,      /* atomic: aux = op | type << 4, id = op */
    TLM_AM_RMW_REP = 15,  /* atomic's old value, aux = status */
    TLM_AM_MUTEX = 16,    /* mutex lock / trylock / unlock, aux = command */
    TLM_AM_MUTEX_REP = 17, /* grant or refusal, aux = status / result */
    TLM_AM_KEY_REQ = 18,  /* direct path: key of the region at addr, len */
    TLM_AM_KEY_REP = 19,  /* aux = status, region base/len, key bytes */
    TLM_AM_KEY_INVAL = 20, /* the region at addr is being deregistered */
    TLM_AM_KEY_INVAL_ACK = 21, /* its key is dropped, writes complete */
    TLM_AM_LEAVE = 22,    /* the sender left (finalize failed): it will send
                           * nothing more; aux = its status */
    TLM_AM_NTYPES = 23
};

/* flags */
#define TLM_AM_F_ACK 0x01   /* PUT: answer with ACK after the last fragment */
#define TLM_AM_F_REPLY 0x02 /* USER: this is a reply */
#define TLM_AM_F_LONG 0x04  /* USER: payload goes to addr at the target */

/* Common prefix of every message: 8 bytes. */
typedef struct tlm_am_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t aux;  /* ACK/NACK: status (int16); COLL: round; USER: handler | nargs << 8 */
    uint32_t id;   /* op id, flush sequence, message id or collective seq */
} tlm_am_hdr_t;

/* Header of fragmentable messages (PUT, GET_REP, USER, COLL): the payload
 * of this fragment follows (after the USER arguments). */
typedef struct tlm_am_frag_hdr {
    tlm_am_hdr_t h;
    uint64_t addr;   /* PUT, long USER: target address of the whole payload */
    uint64_t total;  /* payload bytes of the whole operation */
    uint64_t offset; /* where this fragment's payload goes */
} tlm_am_frag_hdr_t;

typedef struct tlm_am_get_req {
    tlm_am_hdr_t h;
    uint64_t addr;
    uint64_t len;
} tlm_am_get_req_t;

typedef struct tlm_am_nack {
    tlm_am_hdr_t h;
    uint64_t addr;
    uint64_t len;
} tlm_am_nack_t;

typedef struct tlm_am_rmw {
    tlm_am_hdr_t h;
    uint64_t addr;
    uint64_t operand;
    uint64_t compare;
} tlm_am_rmw_t;

typedef struct tlm_am_rmw_rep {
    tlm_am_hdr_t h;
    uint64_t old;
} tlm_am_rmw_rep_t;

typedef struct tlm_am_mutex {
    tlm_am_hdr_t h;
    uint32_t set;
    uint32_t mutex;
} tlm_am_mutex_t;

/* KEY_REQ and KEY_INVAL: a tlm_am_get_req_t (addr, len).  KEY_REP: */
typedef struct tlm_am_key_rep {
    tlm_am_hdr_t h;
    uint64_t base;   /* the region the key covers */
    uint64_t len;
    uint64_t key_len; /* key bytes follow */
} tlm_am_key_rep_t;

_Static_assert(sizeof(tlm_am_key_rep_t) == 32, "wire: key reply");
_Static_assert(sizeof(tlm_am_rmw_t) == 32, "wire: atomic");
_Static_assert(sizeof(tlm_am_rmw_rep_t) == 16, "wire: atomic reply");
_Static_assert(sizeof(tlm_am_mutex_t) == 16, "wire: mutex");
_Static_assert(sizeof(tlm_am_hdr_t) == 8, "wire: common header");
_Static_assert(sizeof(tlm_am_frag_hdr_t) == 32, "wire: fragment header");
_Static_assert(sizeof(tlm_am_get_req_t) == 24, "wire: get request");
_Static_assert(sizeof(tlm_am_nack_t) == 24, "wire: nack");

/* Largest header: fragment header + 16 user arguments, or fragment header +
 * accumulate scale + an 8-level strided descriptor. */
#define TLM_AM_MAX_HDR 256

#endif

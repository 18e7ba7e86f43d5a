/* sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for the
 * launcher's key-value store to prove a job's secret without sending it
 * (docs/bootstrap.md).  Pure functions; util_sha256.c. */
#ifndef TLM_UTIL_SHA256_H
#define TLM_UTIL_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLM_SHA256_LEN 32u
#define TLM_SHA256_BLOCK 64u

typedef struct tlm_sha256 {
    uint32_t h[8];
    uint64_t bytes;               /* message length so far */
    uint8_t buf[TLM_SHA256_BLOCK]; /* a partial block */
    size_t fill;
} tlm_sha256_t;

void tlm_util_sha256_init(tlm_sha256_t *s);
void tlm_util_sha256_update(tlm_sha256_t *s, const void *data, size_t len);
void tlm_util_sha256_final(tlm_sha256_t *s, uint8_t out[TLM_SHA256_LEN]);
void tlm_util_sha256(const void *data, size_t len,
                     uint8_t out[TLM_SHA256_LEN]);

/* HMAC-SHA-256 of the concatenation of nparts parts (part[i], len[i]). */
void tlm_util_hmac_sha256(const void *key, size_t klen,
                          const void *const *part, const size_t *len,
                          int nparts, uint8_t out[TLM_SHA256_LEN]);

/* Compare n bytes in time that does not depend on where they differ. */
bool tlm_util_equal_ct(const void *a, const void *b, size_t n);

#endif

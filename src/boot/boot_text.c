/* boot_text.c - binary keys and values in a PMI key-value store of
 * short text: a key is mapped to a short name of safe characters, a value
 * is encoded in base64url (no padding) and cut into chunks that fit the
 * store's value length (docs/bootstrap.md, "Keys and values in a PMI
 * store"). */
#define TLM_LOG_SUBSYS "boot"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "boot/boot_text.h"
#include "boot/boot_wire.h"
#include "util/log.h"
#include "util/util.h"

/* Room for "~<chunk>" after a key: 65536 bytes in 6-byte chunks at most. */
#define SUFFIX_ROOM 6

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int safe_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/* The store's name of chunk `chunk` of key: "tlm.<key>" when the key is
 * short and of safe characters, else "tlm#<64-bit hash in hex>"; chunks
 * after the first add "~<chunk>". */
static void text_key(const tlm_boot_text_t *s, const char *key, int chunk,
                     char *out)
{
    size_t n = strlen(key), base_max = s->key_max - SUFFIX_ROOM;
    int safe = n + 4 <= base_max;
    for (size_t i = 0; safe && i < n; i++)
        safe = safe_char(key[i]);
    int k = safe ? snprintf(out, TLM_BOOT_TEXT_KEY_MAX + 1, "tlm.%s", key)
                 : snprintf(out, TLM_BOOT_TEXT_KEY_MAX + 1, "tlm#%016llx",
                            (unsigned long long)fnv1a(key));
    if (chunk > 0)
        snprintf(out + k, TLM_BOOT_TEXT_KEY_MAX + 1 - (size_t)k, "~%d",
                 chunk);
}

static size_t encode(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
                     in[i + 2];
        out[o++] = b64[v >> 18];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = b64[(v >> 6) & 63];
        out[o++] = b64[v & 63];
    }
    if (n - i == 1) {
        out[o++] = b64[in[i] >> 2];
        out[o++] = b64[(in[i] & 3) << 4];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 8 | in[i + 1];
        out[o++] = b64[v >> 10];
        out[o++] = b64[(v >> 4) & 63];
        out[o++] = b64[(v & 15) << 2];
    }
    out[o] = '\0';
    return o;
}

static int sextet(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

/* Decode text into out (room bytes).  The number of bytes, or -1 for text
 * that is not base64url or does not fit. */
static long decode(const char *text, unsigned char *out, size_t room)
{
    size_t n = strlen(text), o = 0;
    if (n % 4 == 1)
        return -1;
    size_t bytes = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    if (bytes > room)
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = sextet(text[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return (long)o;
}

int tlm_boot_text_put(const tlm_boot_text_t *s, const char *key,
                      const void *val, size_t len)
{
    char tkey[TLM_BOOT_TEXT_KEY_MAX + 1];
    char txt[TLM_BOOT_TEXT_VAL_MAX + 1];
    const unsigned char *v = val;
    size_t off = 0;
    int chunk = 0;
    do {
        int hdr = chunk ? 0 : snprintf(txt, sizeof(txt), "%zu,", len);
        size_t take = (s->val_max - (size_t)hdr) / 4 * 3;
        take = TLM_MIN(take, len - off);
        encode(v + off, take, txt + hdr);
        text_key(s, key, chunk, tkey);
        int rc = s->put_str(s->ctx, tkey, txt);
        if (rc != TELEMEM_OK)
            return rc;
        off += take;
        chunk++;
    } while (off < len);
    return TELEMEM_OK;
}

/* Chunk 0 is "<length>,<data>": the length, and where the data starts. */
static int parse_head(const char *txt, size_t *len_p, const char **data_p)
{
    char *end;
    unsigned long long n = strtoull(txt, &end, 10);
    if (end == txt || *end != ',' || n > WIRE_MAX_VAL)
        return -1;
    *len_p = (size_t)n;
    *data_p = end + 1;
    return 0;
}

int tlm_boot_text_get(const tlm_boot_text_t *s, int owner, const char *key,
                      void *buf, size_t cap, size_t *len_p)
{
    char tkey[TLM_BOOT_TEXT_KEY_MAX + 1];
    char txt[TLM_BOOT_TEXT_VAL_MAX + 1];
    text_key(s, key, 0, tkey);
    int rc = s->get_str(s->ctx, owner, tkey, txt, sizeof(txt));
    if (rc == TELEMEM_ERR_NOT_FOUND)
        tlm_debug("kvs get %s: not found", key);
    if (rc != TELEMEM_OK)
        return rc;
    size_t len;
    const char *data;
    if (parse_head(txt, &len, &data) < 0) {
        tlm_error("kvs get %s: the launcher's store holds \"%.40s\" under "
                  "%s, not a value of ours", key, txt, tkey);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    *len_p = len;
    if (len > cap) {
        /* the caller may be asking for the length: debug only */
        tlm_debug("kvs get %s: value of %zu bytes exceeds buffer of %zu",
                  key, len, cap);
        return TELEMEM_ERR_INVALID_ARG;
    }
    size_t off = 0;
    for (int chunk = 1;; chunk++) {
        long n = decode(data, (unsigned char *)buf + off, len - off);
        if (n < 0) {
            tlm_error("kvs get %s: chunk %d of the value is malformed or "
                      "too long", key, chunk - 1);
            return TELEMEM_ERR_BOOTSTRAP;
        }
        off += (size_t)n;
        if (off == len)
            return TELEMEM_OK;
        text_key(s, key, chunk, tkey);
        rc = s->get_str(s->ctx, owner, tkey, txt, sizeof(txt));
        if (rc == TELEMEM_ERR_NOT_FOUND) {
            tlm_error("kvs get %s: the value is cut short at %zu of %zu "
                      "bytes (no %s in the launcher's store)", key, off, len,
                      tkey);
            return TELEMEM_ERR_BOOTSTRAP;
        }
        if (rc != TELEMEM_OK)
            return rc;
        data = txt;
    }
}

void tlm_boot_text_jobid(const char *prefix, const char *name, char *out,
                         size_t cap)
{
    snprintf(out, cap, "%s%016llx", prefix,
             (unsigned long long)fnv1a(name));
}

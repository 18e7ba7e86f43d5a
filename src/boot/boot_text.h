/* boot_text.h - the bootstrap's binary keys and values in a PMI
 * key-value store, which holds short text (PMI-1 and PMI-2: keys up to 64
 * characters, values up to 1024, no spaces, '=' or ';'): used by the PMI-1
 * and PMI-2 adapters.  The format is in docs/bootstrap.md ("Keys and
 * values in a PMI store"). */
#ifndef TLM_BOOT_TEXT_H
#define TLM_BOOT_TEXT_H

#include <stddef.h>

enum {
    TLM_BOOT_TEXT_KEY_MAX = 64,  /* longest text key used, characters */
    TLM_BOOT_TEXT_VAL_MAX = 1024 /* longest text value used, characters */
};

/* One store: two calls to the launcher and its limits. */
typedef struct tlm_boot_text {
    void *ctx;
    /* Publish key = val (both NUL-terminated text). */
    int (*put_str)(void *ctx, const char *key, const char *val);
    /* Fetch the text owner published under key into val (cap bytes with
     * the NUL): TELEMEM_OK, TELEMEM_ERR_NOT_FOUND, or an error (logged). */
    int (*get_str)(void *ctx, int owner, const char *key, char *val,
                   size_t cap);
    size_t key_max; /* longest key the store takes, characters; >= 24 */
    size_t val_max; /* longest value, characters; >= 16 */
} tlm_boot_text_t;

/* put and get as boot.h describes them, over s. */
int tlm_boot_text_put(const tlm_boot_text_t *s, const char *key,
                      const void *val, size_t len);
int tlm_boot_text_get(const tlm_boot_text_t *s, int owner, const char *key,
                      void *buf, size_t cap, size_t *len_p);
/* A job id ([A-Za-z0-9]) made from the launcher's name of the job. */
void tlm_boot_text_jobid(const char *prefix, const char *name, char *out,
                         size_t cap);

#endif

/* util.h - small shared helpers: branch hints, container_of, alignment,
 * and the declarations of util_parse.c, util_time.c and util_copy.c. */
#ifndef TLM_UTIL_H
#define TLM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define TLM_LIKELY(x) __builtin_expect(!!(x), 1)
#define TLM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLM_CACHELINE 64
#define TLM_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((size_t)(a) - 1))
#define TLM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TLM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define tlm_container_of(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#define TLM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* util_parse.c: the parsers used for every configuration value.  Each
 * returns 0 on success, -1 on a malformed value (nothing stored). */
int tlm_util_parse_size(const char *s, size_t *out);   /* "16k", "4M", "2g" */
int tlm_util_parse_bool(const char *s, bool *out);     /* y/n/yes/no/1/0/on/off */
int tlm_util_parse_int(const char *s, long *out);      /* decimal */
int tlm_util_parse_seconds(const char *s, double *out); /* "30", "1.5", "200ms", "2m" */

/* util_time.c: monotonic time in seconds. */
double tlm_util_now(void);

/* util_copy.c: the copy of the message path (see there why it is memcpy). */
void tlm_util_copy(void *dst, const void *src, size_t n);

#endif

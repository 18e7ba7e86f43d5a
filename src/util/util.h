/* util.h - small shared helpers: branch hints, container_of, alignment,
 * overflow-free range checks, and the declarations of util_parse.c,
 * util_random.c, util_time.c and util_copy.c. */
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

/* Range checks without wrapping arithmetic (no `lo + len`, which wraps for
 * addresses near UINTPTR_MAX and then passes): does [lo, lo + len) lie
 * inside [base, end)?  An empty range must start inside or at end. */
static inline bool tlm_util_range_in(uintptr_t lo, size_t len, uintptr_t base,
                                     uintptr_t end)
{
    return lo >= base && lo <= end && len <= end - lo;
}

/* Would [lo, lo + len) run past the end of the address space? */
static inline bool tlm_util_range_wraps(uintptr_t lo, size_t len)
{
    return len > UINTPTR_MAX - lo;
}

/* Do [a, a + alen) and [b, b + blen) share a byte? */
static inline bool tlm_util_ranges_overlap(uintptr_t a, size_t alen,
                                           uintptr_t b, size_t blen)
{
    return a >= b ? alen && a - b < blen : blen && b - a < alen;
}

/* util_parse.c: the parsers used for every configuration value.  Each
 * returns 0 on success, -1 on a malformed value (nothing stored). */
int tlm_util_parse_size(const char *s, size_t *out);   /* "16k", "4M", "2g" */
/* The next entry "name:size" of a list spec at *sp ("a:32k,b:1m"): 1
 * (*key, *kl its name, *v its size; *sp moves past it), 0 at the end, -1
 * malformed (TELEMEM_DIRECT_THRESHOLD, TELEMEM_COLL_THRESHOLD). */
int tlm_util_spec_next(const char **sp, const char **key, size_t *kl,
                       size_t *v);
int tlm_util_parse_bool(const char *s, bool *out);     /* y/n/yes/no/1/0/on/off */
int tlm_util_parse_int(const char *s, long *out);      /* decimal */
int tlm_util_parse_seconds(const char *s, double *out); /* "30", "1.5", "200ms", "2m" */

/* util_random.c: ndigits (at most 128) random hex digits and a NUL into
 * out, from getrandom(); 0, or -1 when the kernel gave none. */
int tlm_util_random_hex(char *out, size_t ndigits);

/* util_time.c: monotonic time in seconds, and in nanoseconds (one clock
 * for every process of the machine). */
double tlm_util_now(void);
int64_t tlm_util_now_ns(void);
/* The poll(2) timeout (ms) for left seconds until a deadline: 0 once it
 * passed, rounded up, at most INT_MAX (a longer time, e.g. a timeout of a
 * year, would not fit an int). */
int tlm_util_poll_ms(double left);

/* util_copy.c: the copy of the message path (see there why it is memcpy). */
void tlm_util_copy(void *dst, const void *src, size_t n);

/* The last bytes of a put, which targets poll ("the last word", telemem.h):
 * how many of a put of n bytes are stored last, in one store (8, or 4, 2,
 * 1 for shorter puts). */
static inline size_t tlm_util_tail_len(size_t n)
{
    return n >= 8 ? 8 : n >= 4 ? 4 : n >= 2 ? 2 : n;
}

typedef uint64_t tlm_util_u64u_t __attribute__((aligned(1), may_alias));
typedef uint32_t tlm_util_u32u_t __attribute__((aligned(1), may_alias));
typedef uint16_t tlm_util_u16u_t __attribute__((aligned(1), may_alias));

/* Copy w bytes (1, 2, 4 or 8; any alignment) with a single store, so that
 * each byte is written once.  memcpy may write the same bytes twice
 * (glibc's copy of 8-15 bytes stores its first and its last 8, the same 8
 * for a copy of 8): a target that saw the new value there and wrote its
 * own would have it overwritten by the second store. */
static inline void tlm_util_store_once(void *dst, const void *src, size_t w)
{
    switch (w) {
    case 8:
        *(volatile tlm_util_u64u_t *)dst = *(const tlm_util_u64u_t *)src;
        break;
    case 4:
        *(volatile tlm_util_u32u_t *)dst = *(const tlm_util_u32u_t *)src;
        break;
    case 2:
        *(volatile tlm_util_u16u_t *)dst = *(const tlm_util_u16u_t *)src;
        break;
    case 1:
        *(volatile uint8_t *)dst = *(const uint8_t *)src;
        break;
    default:
        break;
    }
}

/* tlm_util_copy whose last tlm_util_tail_len(n) bytes are stored after the
 * rest (release order) and once: the copy of a put's last piece. */
void tlm_util_copy_last(void *dst, const void *src, size_t n);

#endif

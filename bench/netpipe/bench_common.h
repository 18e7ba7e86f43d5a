/* bench_common.h - helpers shared by telemem-netpipe and telemem-memcpy-bw:
 * the clock, sorting doubles, size arguments with units, and NetPIPE's
 * message-size schedule. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Decimal u64; with units, a k/m/g suffix (optionally followed by b). */
static inline int bench_parse_u64(const char *s, uint64_t *out, int units)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mul = 1;
    if (units && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ull << 10; break;
        case 'm': case 'M': mul = 1ull << 20; break;
        case 'g': case 'G': mul = 1ull << 30; break;
        default: return -1;
        }
        end++;
        if (*end == 'b' || *end == 'B')
            end++;
    }
    if (*end || v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

/* NetPIPE's schedule (1 2 3 4 6 8 12 16 24 32 48 ...: powers of two and the
 * midpoints between them), each size whose step exceeds pert+1 also with
 * -pert and +pert bytes.  Sizes outside [min, max] are dropped. */
static inline size_t bench_netpipe_sizes(uint64_t min, uint64_t max,
                                         uint32_t pert, uint64_t *out,
                                         size_t cap)
{
    uint64_t len = 1, inc = 1;
    unsigned nq = 0;
    size_t n = 0;
    for (; len <= max; len += inc, nq++) {
        if (nq > 2 && nq % 2)
            inc += inc;
        int wide = pert > 0 && inc > (uint64_t)pert + 1;
        for (int64_t p = wide ? -(int64_t)pert : 0; p <= (int64_t)pert;
             p += wide ? (int64_t)pert : (int64_t)pert + 1) {
            uint64_t s = (uint64_t)((int64_t)len + p);
            if (s >= min && s <= max && n < cap)
                out[n++] = s;
        }
    }
    return n;
}

#endif

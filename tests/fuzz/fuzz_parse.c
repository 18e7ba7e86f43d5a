/* fuzz_parse.c - libFuzzer target: the configuration value parsers of
 * src/util (tlm_util_parse_size, _int, _bool, _seconds) and the log-level
 * parser.  The first input byte picks the parser, the rest is the value
 * (NUL-terminated copy).  Besides "no crash", checks the documented
 * contract: nothing stored on failure, and every accepted value agrees
 * with a small independent reference parser. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/log.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BAD(...)                                                            \
    do {                                                                    \
        fprintf(stderr, "fuzz_parse: ");                                    \
        fprintf(stderr, __VA_ARGS__);                                       \
        fprintf(stderr, "\n");                                              \
        abort();                                                            \
    } while (0)

/* Reference: digits, then optional k/m/g/t (any case) with optional b or
 * ib; value must fit size_t.  Returns 0 / -1. */
static int ref_size(const char *s, size_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    unsigned shift = 0;
    switch (tolower((unsigned char)*p)) {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    case 't': shift = 40; break;
    case '\0': break;
    default: return -1;
    }
    if (shift) {
        p++;
        if (*p == 'b' || *p == 'B')
            p++;
        else if (*p == 'i' && (p[1] == 'b' || p[1] == 'B'))
            p += 2;
    }
    if (*p)
        return -1;
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    v <<= shift;
    if (v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int ref_int(const char *s, long *out)
{
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    /* Accumulate negatively so LONG_MIN fits. */
    long v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        int d = *p - '0';
        if (v < (LONG_MIN + d) / 10)
            return -1;
        v = v * 10 - d;
    }
    if (*p)
        return -1;
    if (!neg) {
        if (v == LONG_MIN)
            return -1;
        v = -v;
    }
    *out = v;
    return 0;
}

static int ref_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"y", "yes", "1", "on", "true"};
    static const char *const no[] = {"n", "no", "0", "off", "false"};
    for (size_t i = 0; i < 5; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return *out = true, 0;
        if (strcasecmp(s, no[i]) == 0)
            return *out = false, 0;
    }
    return -1;
}

static void check_size(const char *s)
{
    size_t v = 0x5a5a5a5a, r = 0;
    int rc = tlm_util_parse_size(s, &v);
    int rr = ref_size(s, &r);
    if (rc != 0 && rc != -1)
        BAD("parse_size(\"%s\") returned %d", s, rc);
    if (rc == -1 && v != 0x5a5a5a5a)
        BAD("parse_size(\"%s\") failed but stored %zu", s, v);
    if (rc != rr || (rc == 0 && v != r))
        BAD("parse_size(\"%s\") = %d, %zu; reference %d, %zu", s, rc, v, rr,
            r);
}

static void check_int(const char *s)
{
    long v = 0x5a5a5a5a, r = 0;
    int rc = tlm_util_parse_int(s, &v);
    int rr = ref_int(s, &r);
    if (rc == -1 && v != 0x5a5a5a5a)
        BAD("parse_int(\"%s\") failed but stored %ld", s, v);
    if (rc != rr || (rc == 0 && v != r))
        BAD("parse_int(\"%s\") = %d, %ld; reference %d, %ld", s, rc, v, rr,
            r);
}

static void check_bool(const char *s)
{
    bool v = true, r = false;
    int rc = tlm_util_parse_bool(s, &v);
    int rr = ref_bool(s, &r);
    if (rc == -1 && v != true)
        BAD("parse_bool(\"%s\") failed but stored a value", s);
    if (rc != rr || (rc == 0 && v != r))
        BAD("parse_bool(\"%s\") = %d, %d; reference %d, %d", s, rc, v, rr,
            r);
}

static void check_seconds(const char *s)
{
    double v = -12345.0;
    int rc = tlm_util_parse_seconds(s, &v);
    if (rc == -1 && v != -12345.0)
        BAD("parse_seconds(\"%s\") failed but stored %g", s, v);
    if (rc == 0 && (!isfinite(v) || v < 0))
        BAD("parse_seconds(\"%s\") accepted %g (negative or not finite)", s,
            v);
    if (rc == 0 && !(isdigit((unsigned char)s[0]) || s[0] == '.'))
        BAD("parse_seconds(\"%s\") accepted a value not starting with a "
            "digit", s);
}

static void check_level(const char *s)
{
    int v = -77;
    int rc = tlm_util_log_level_parse(s, &v);
    if (rc == -1 && v != -77)
        BAD("log_level_parse(\"%s\") failed but stored %d", s, v);
    if (rc == 0 && (v < TLM_LOG_ERROR || v > TLM_LOG_DATA))
        BAD("log_level_parse(\"%s\") gave level %d", s, v);
    if (rc == 0 && strcasecmp(s, tlm_util_log_level_name(v)) != 0)
        BAD("log_level_parse(\"%s\") gave %s", s,
            tlm_util_log_level_name(v));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    char *s = malloc(size);
    if (!s)
        abort();
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    switch (data[0] % 6) {
    case 0: check_size(s); break;
    case 1: check_int(s); break;
    case 2: check_bool(s); break;
    case 3: check_seconds(s); break;
    case 4: check_level(s); break;
    default: /* all of them on the same string */
        check_size(s);
        check_int(s);
        check_bool(s);
        check_seconds(s);
        check_level(s);
        break;
    }
    free(s);
    return 0;
}

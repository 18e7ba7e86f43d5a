/* util_parse.c - parsers for configuration values: sizes with units,
 * booleans, integers, durations and "name:size" lists.  Pure functions. */
#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util.h"

int tlm_util_parse_size(const char *s, size_t *out)
{
    char *end;
    if (!s || !isdigit((unsigned char)*s)) /* no sign, no blanks */
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    switch (tolower((unsigned char)*end)) {
    case '\0': break;
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    case 't': shift = 40; end++; break;
    default: return -1;
    }
    if (shift && (*end == 'b' || *end == 'B'))
        end++;
    else if (shift && (*end == 'i') && (end[1] == 'b' || end[1] == 'B'))
        end += 2;
    if (*end)
        return -1;
    if (shift && v > (~0ULL >> shift))
        return -1;
    v <<= shift;
    if (v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

int tlm_util_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"y", "yes", "1", "on", "true"};
    static const char *const no[] = {"n", "no", "0", "off", "false"};
    if (!s)
        return -1;
    for (size_t i = 0; i < TLM_ARRAY_SIZE(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

int tlm_util_parse_int(const char *s, long *out)
{
    char *end;
    if (!s || !(isdigit((unsigned char)*s) ||
                (*s == '-' && isdigit((unsigned char)s[1]))))
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

int tlm_util_parse_seconds(const char *s, double *out)
{
    char *end;
    if (!s || !(isdigit((unsigned char)*s) || *s == '.')) /* no inf, nan */
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v))
        return -1;
    if (*end == '\0' || strcmp(end, "s") == 0)
        ;
    else if (strcmp(end, "ms") == 0)
        v /= 1000.0;
    else if (strcmp(end, "us") == 0)
        v /= 1e6;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        v *= 60.0;
    else if (strcmp(end, "h") == 0)
        v *= 3600.0;
    else
        return -1;
    if (!isfinite(v)) /* "1e308h" overflows in the unit multiply */
        return -1;
    *out = v;
    return 0;
}

int tlm_util_spec_next(const char **sp, const char **key, size_t *kl,
                       size_t *v)
{
    const char *s = *sp;
    if (!*s)
        return 0;
    size_t n = strcspn(s, ",");
    const char *colon = memchr(s, ':', n);
    char val[64];
    if (!colon || colon == s || (size_t)(s + n - colon - 1) >= sizeof(val))
        return -1;
    size_t vl = (size_t)(s + n - colon - 1);
    memcpy(val, colon + 1, vl);
    val[vl] = '\0';
    if (tlm_util_parse_size(val, v) != 0)
        return -1;
    *key = s;
    *kl = (size_t)(colon - s);
    *sp = s + n + (s[n] == ',');
    return 1;
}

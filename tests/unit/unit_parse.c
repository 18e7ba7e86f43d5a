/* unit_parse.c - unit: the configuration value parsers of src/util
 * (tlm_util_parse_size, _bool, _int, _seconds): accepted forms, units,
 * rejected forms (nothing stored on failure), overflow. */
#include <math.h>

#include "tt.h"
#include "util/util.h"

static int fails;

#define FAILF(...)                                                          \
    do {                                                                    \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                \
        fprintf(stderr, __VA_ARGS__);                                       \
        fprintf(stderr, "\n");                                              \
        fails++;                                                            \
    } while (0)

static void size_ok(const char *s, size_t want)
{
    size_t v = 12345;
    int rc = tlm_util_parse_size(s, &v);
    if (rc != 0 || v != want)
        FAILF("parse_size(\"%s\") = %d, %zu; want 0, %zu", s, rc, v, want);
}

static void size_bad(const char *s)
{
    size_t v = 12345;
    int rc = tlm_util_parse_size(s, &v);
    if (rc != -1 || v != 12345)
        FAILF("parse_size(\"%s\") = %d, %zu; want -1 and nothing stored",
              s ? s : "(null)", rc, v);
}

static void bool_ok(const char *s, bool want)
{
    bool v = !want;
    int rc = tlm_util_parse_bool(s, &v);
    if (rc != 0 || v != want)
        FAILF("parse_bool(\"%s\") = %d, %d; want 0, %d", s, rc, v, want);
}

static void bool_bad(const char *s)
{
    bool v = true;
    int rc = tlm_util_parse_bool(s, &v);
    if (rc != -1 || v != true)
        FAILF("parse_bool(\"%s\") = %d; want -1, nothing stored",
              s ? s : "(null)", rc);
}

static void int_ok(const char *s, long want)
{
    long v = 777;
    int rc = tlm_util_parse_int(s, &v);
    if (rc != 0 || v != want)
        FAILF("parse_int(\"%s\") = %d, %ld; want 0, %ld", s, rc, v, want);
}

static void int_bad(const char *s)
{
    long v = 777;
    int rc = tlm_util_parse_int(s, &v);
    if (rc != -1 || v != 777)
        FAILF("parse_int(\"%s\") = %d, %ld; want -1, nothing stored",
              s ? s : "(null)", rc, v);
}

static void sec_ok(const char *s, double want)
{
    double v = -99;
    int rc = tlm_util_parse_seconds(s, &v);
    if (rc != 0 || fabs(v - want) > 1e-12 * (1 + fabs(want)))
        FAILF("parse_seconds(\"%s\") = %d, %g; want 0, %g", s, rc, v, want);
}

static void sec_bad(const char *s)
{
    double v = -99;
    int rc = tlm_util_parse_seconds(s, &v);
    if (rc != -1 || v != -99)
        FAILF("parse_seconds(\"%s\") = %d, %g; want -1, nothing stored",
              s ? s : "(null)", rc, v);
}

int main(void)
{
    /* sizes */
    size_ok("7", 7);
    size_ok("0", 0);
    size_ok("16k", 16384);
    size_ok("16K", 16384);
    size_ok("16kb", 16384);
    size_ok("16KiB", 16384);
    size_ok("4M", 4u << 20);
    size_ok("4m", 4u << 20);
    size_ok("2g", (size_t)2 << 30);
    size_ok("2G", (size_t)2 << 30);
    size_ok("1t", (size_t)1 << 40);
    size_ok("18446744073709551615", SIZE_MAX);
    size_ok("17179869183g", (size_t)17179869183ull << 30);
    size_bad("x");
    size_bad("");
    size_bad(NULL);
    size_bad("-1");
    size_bad("-4k");
    size_bad(" -1");        /* strtoull would accept and negate it */
    size_bad("\t-16k");
    size_bad("16q");
    size_bad("16 k");
    size_bad("16k ");
    size_bad("1.5k");
    size_bad("k");
    size_bad("16kk");
    size_bad("18446744073709551616");   /* 2^64 */
    size_bad("99999999999999999999999");
    size_bad("17179869184g");           /* 2^64 */
    size_bad("16777216t");              /* 2^64 */
    size_bad("banana");

    /* booleans */
    bool_ok("y", true);
    bool_ok("yes", true);
    bool_ok("1", true);
    bool_ok("on", true);
    bool_ok("true", true);
    bool_ok("Y", true);
    bool_ok("YES", true);
    bool_ok("n", false);
    bool_ok("no", false);
    bool_ok("0", false);
    bool_ok("off", false);
    bool_ok("false", false);
    bool_ok("N", false);
    bool_bad("maybe");
    bool_bad("");
    bool_bad(NULL);
    bool_bad("2");
    bool_bad("yes ");
    bool_bad("ye");

    /* integers */
    int_ok("42", 42);
    int_ok("-42", -42);
    int_ok("0", 0);
    int_bad("x");
    int_bad("");
    int_bad(NULL);
    int_bad("42x");
    int_bad("4 2");
    int_bad("99999999999999999999");

    /* durations */
    sec_ok("30", 30);
    sec_ok("0", 0);
    sec_ok("1.5", 1.5);
    sec_ok("10s", 10);
    sec_ok("200ms", 0.2);
    sec_ok("100us", 1e-4);
    sec_ok("2m", 120);
    sec_ok("2min", 120);
    sec_ok("1h", 3600);
    sec_bad("x");
    sec_bad("");
    sec_bad(NULL);
    sec_bad("-1");
    sec_bad(" -1");         /* strtod would accept it */
    sec_bad("5 parsecs");
    sec_bad("5sec");
    sec_bad("nan");
    sec_bad("inf");
    sec_bad("1e400");
    sec_bad("1e307h");      /* finite, but not after the unit multiply */
    sec_bad("1e307min");
    sec_ok("1e300h", 3.6e303);
    sec_bad("30 ");

    if (fails) {
        fprintf(stderr, "%d failures\n", fails);
        return 1;
    }
    printf("PASS\n");
    return 0;
}

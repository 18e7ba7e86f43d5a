/* unit_profile.c - unit: the calibration profile reader
 * (src/util/util_profile.c): entries with one and two numbers, comments,
 * lines that are no entry (a sign, no number, a name too long), a line
 * longer than the reader's buffer (skipped whole, the next line read),
 * lookup of repeated names in file order, a missing file, and a path to
 * a device that never ends (/dev/zero: reading stops, no hang); a direct
 * driver's line keyed by driver and provider ("ofi-rma@tcp;ofi_rxm"),
 * and a profile without provider keys read as before. */
#include <string.h>

#include "tt.h"
#include "util/profile.h"

static int fails;

#define CHECK(c, ...)                                                          \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "FAIL line %d: ", __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            fails++;                                                           \
        }                                                                      \
    } while (0)

static const char *write_file(char *path, const char *text)
{
    int fd = mkstemp(path);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f)
        return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

/* tlm_util_profile_driver: name and provider to the expected key and
 * numbers (want NULL: no line). */
static void check_driver(const tlm_profile_t *p, const char *name,
                         const char *prov, const char *want,
                         unsigned long long thr, unsigned long long row)
{
    char key[96];
    const tlm_profile_entry_t *e =
        tlm_util_profile_driver(p, name, prov, key, sizeof(key));
    if (!want) {
        CHECK(!e, "%s over %s: no line wanted, got %s", name,
              prov ? prov : "(none)", e ? key : "");
        return;
    }
    CHECK(e && !strcmp(key, want) && e->value[0] == thr && e->value[1] == row,
          "%s over %s: want %s %llu %llu, got %s %llu %llu", name,
          prov ? prov : "(none)", want, thr, row, e ? key : "none",
          e ? e->value[0] : 0, e ? e->value[1] : 0);
}

/* Lines keyed by driver and provider beside plain ones. */
static void provider_keys(void)
{
    char with[] = "/tmp/unit_profile_XXXXXX";
    char old[] = "/tmp/unit_profile_XXXXXX";
    CHECK(write_file(with, "# driver threshold row\n"
                           "window 32768 4096\n"
                           "ofi-rma@tcp;ofi_rxm 4096 1024\n"
                           "ofi-rma 65536 8192\n"
                           "ucx-rma@tcp 18446744073709551615 "
                           "18446744073709551615\n"
                           "ofi-rma@verbs;ofi_rxm 1\n" /* one number */
                           "ofi-rma@verbs;ofi_rxm 2048 512\n"
                           "ofi-rma@tcp;ofi_rxm 1 1\n") != NULL,
          "temporary file");
    CHECK(write_file(old, "window 32768 4096\nofi-rma 65536 8192\n") != NULL,
          "temporary file");
    tlm_profile_t p;
    CHECK(tlm_util_profile_load(&p, with) == 0, "load");
    check_driver(&p, "ofi-rma", "tcp;ofi_rxm", "ofi-rma@tcp;ofi_rxm", 4096,
                 1024); /* the first of two */
    check_driver(&p, "ofi-rma", "verbs;ofi_rxm", "ofi-rma@verbs;ofi_rxm", 2048,
                 512); /* a line of one number is no driver's */
    check_driver(&p, "ofi-rma", "efa", "ofi-rma", 65536, 8192);
    check_driver(&p, "ofi-rma", "", "ofi-rma", 65536, 8192);
    check_driver(&p, "ofi-rma", NULL, "ofi-rma", 65536, 8192);
    check_driver(&p, "ucx-rma", "tcp", "ucx-rma@tcp", ~0ull, ~0ull);
    check_driver(&p, "ucx-rma", "rc_mlx5", NULL, 0, 0);
    check_driver(&p, "window", "", "window", 32768, 4096);
    tlm_util_profile_free(&p);
    CHECK(tlm_util_profile_load(&p, old) == 0, "load");
    check_driver(&p, "ofi-rma", "tcp;ofi_rxm", "ofi-rma", 65536, 8192);
    check_driver(&p, "window", NULL, "window", 32768, 4096);
    char key[8];
    CHECK(!tlm_util_profile_driver(&p, "ofi-rma", "tcp;ofi_rxm", key,
                                   sizeof(key)) ||
              !strcmp(key, "ofi-rma"),
          "a key too long for its buffer is never looked up cut short");
    tlm_util_profile_free(&p);
    unlink(with);
    unlink(old);
}

int main(void)
{
    provider_keys();
    char path[] = "/tmp/unit_profile_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# driver threshold row\n");
    fprintf(f, "window 32768 4096\n");
    fprintf(f, "shm-pull 1048576 0\n");
    fprintf(f, "single 7\n");
    fprintf(f, "signed +5 1\n");
    fprintf(f, "nonumber abc\n");
    fprintf(f, "%s 1 2\n", "n123456789012345678901234567890123456789"
                           "01234567890123456789012345"); /* 65 bytes */
    fprintf(f, "long");
    for (int i = 0; i < 400; i++)
        fputc(' ', f);
    fprintf(f, "9 9\n");
    fprintf(f, "after 3 4\n");
    fprintf(f, "window 1 2\n");
    fclose(f);

    tlm_profile_t p;
    CHECK(tlm_util_profile_load(&p, path) == 0, "load");
    size_t pos = 0;
    const tlm_profile_entry_t *e = tlm_util_profile_next(&p, "window", &pos);
    CHECK(e && e->nvalues == 2 && e->value[0] == 32768 && e->value[1] == 4096,
          "first window line");
    e = tlm_util_profile_next(&p, "window", &pos);
    CHECK(e && e->value[0] == 1 && e->value[1] == 2, "second window line");
    CHECK(!tlm_util_profile_next(&p, "window", &pos), "no third window");
    pos = 0;
    e = tlm_util_profile_next(&p, "shm-pull", &pos);
    CHECK(e && e->value[0] == 1048576 && e->value[1] == 0, "shm-pull");
    pos = 0;
    e = tlm_util_profile_next(&p, "single", &pos);
    CHECK(e && e->nvalues == 1 && e->value[0] == 7 && e->value[1] == 0,
          "one number");
    const char *none[] = {"signed", "nonumber", "long", "#"};
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        pos = 0;
        CHECK(!tlm_util_profile_next(&p, none[i], &pos), "%s is no entry",
              none[i]);
    }
    CHECK(p.n == 5, "%zu entries, want 5", p.n);
    pos = 0;
    e = tlm_util_profile_next(&p, "after", &pos);
    CHECK(e && e->value[0] == 3 && e->value[1] == 4,
          "the line after an over-long one");
    tlm_util_profile_free(&p);
    unlink(path);

    CHECK(tlm_util_profile_load(&p, "/nonexistent/profile") == 0 && p.n == 0,
          "missing file: empty");
    tlm_util_profile_free(&p);
    CHECK(tlm_util_profile_load(&p, NULL) == 0 && p.n == 0, "no path");
    tlm_util_profile_free(&p);
    double t0 = tt_now();
    CHECK(tlm_util_profile_load(&p, "/dev/zero") == 0 && p.n == 0,
          "/dev/zero: empty");
    tlm_util_profile_free(&p);
    CHECK(tt_now() - t0 < 30, "/dev/zero took %.1f s", tt_now() - t0);
    if (fails)
        return 1;
    printf("unit-profile: ok\n");
    return 0;
}

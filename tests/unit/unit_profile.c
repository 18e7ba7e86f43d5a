/* unit_profile.c - unit: the calibration profile reader
 * (src/util/util_profile.c): entries with one and two numbers, comments,
 * lines that are no entry (a sign, no number, a name too long), a line
 * longer than the reader's buffer (skipped whole, the next line read),
 * lookup of repeated names in file order, a missing file, and a path to
 * a device that never ends (/dev/zero: reading stops, no hang). */
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

int main(void)
{
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

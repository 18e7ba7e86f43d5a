/* unit_status.c - unit: the status list.  telemem_strerror() and
 * telemem_status_name() for every code of the public enum (expected names
 * spelled out here), unknown codes, distinct texts, status_list.h equal to
 * the enum in both directions, and the version string. */
#include <limits.h>

#include "tt.h"

static const struct {
    int code;
    const char *name;
} codes[] = {
    {TELEMEM_OK, "TELEMEM_OK"},
    {TELEMEM_INPROGRESS, "TELEMEM_INPROGRESS"},
    {TELEMEM_ERR_INVALID_ARG, "TELEMEM_ERR_INVALID_ARG"},
    {TELEMEM_ERR_NOT_INITIALIZED, "TELEMEM_ERR_NOT_INITIALIZED"},
    {TELEMEM_ERR_ALREADY_INITIALIZED, "TELEMEM_ERR_ALREADY_INITIALIZED"},
    {TELEMEM_ERR_OUT_OF_RANGE, "TELEMEM_ERR_OUT_OF_RANGE"},
    {TELEMEM_ERR_NO_MEMORY, "TELEMEM_ERR_NO_MEMORY"},
    {TELEMEM_ERR_TIMED_OUT, "TELEMEM_ERR_TIMED_OUT"},
    {TELEMEM_ERR_PEER_DEAD, "TELEMEM_ERR_PEER_DEAD"},
    {TELEMEM_ERR_TRANSPORT, "TELEMEM_ERR_TRANSPORT"},
    {TELEMEM_ERR_UNSUPPORTED, "TELEMEM_ERR_UNSUPPORTED"},
    {TELEMEM_ERR_BOOTSTRAP, "TELEMEM_ERR_BOOTSTRAP"},
    {TELEMEM_ERR_CONFIG, "TELEMEM_ERR_CONFIG"},
    {TELEMEM_ERR_IN_HANDLER, "TELEMEM_ERR_IN_HANDLER"},
    {TELEMEM_ERR_AGAIN, "TELEMEM_ERR_AGAIN"},
    {TELEMEM_ERR_PROTOCOL, "TELEMEM_ERR_PROTOCOL"},
    {TELEMEM_ERR_UNREACHABLE, "TELEMEM_ERR_UNREACHABLE"},
    {TELEMEM_ERR_NOT_FOUND, "TELEMEM_ERR_NOT_FOUND"},
    {TELEMEM_ERR_STATE, "TELEMEM_ERR_STATE"},
};
#define NCODES (sizeof codes / sizeof codes[0])

/* status_list.h, expanded here: every entry must be one of the codes
 * above with the same name, and the list must hold all of them. */
static const struct {
    int value;
    const char *name, *text;
} list[] = {
#define TLM_STATUS(name, value, text) {value, #name, text},
#include "util/status_list.h"
#undef TLM_STATUS
};
#define NLIST (sizeof list / sizeof list[0])

int main(void)
{
    int fails = 0;
    for (size_t i = 0; i < NCODES; i++) {
        const char *s = telemem_strerror(codes[i].code);
        const char *nm = telemem_status_name(codes[i].code);
        if (!s || !*s || strcmp(s, "unknown status") == 0) {
            fprintf(stderr, "FAIL: strerror(%s) = \"%s\"\n", codes[i].name,
                    s ? s : "(null)");
            fails++;
        }
        if (!nm || strcmp(nm, codes[i].name) != 0) {
            fprintf(stderr, "FAIL: status_name(%d) = \"%s\", want %s\n",
                    codes[i].code, nm ? nm : "(null)", codes[i].name);
            fails++;
        }
        for (size_t j = 0; j < i; j++)
            if (s && strcmp(s, telemem_strerror(codes[j].code)) == 0) {
                fprintf(stderr, "FAIL: %s and %s share the text \"%s\"\n",
                        codes[i].name, codes[j].name, s);
                fails++;
            }
    }
    if (NLIST != NCODES) {
        fprintf(stderr, "FAIL: status_list.h has %zu entries, the public "
                "enum %zu\n", (size_t)NLIST, (size_t)NCODES);
        fails++;
    }
    for (size_t i = 0; i < NLIST; i++) {
        size_t j = 0;
        while (j < NCODES && codes[j].code != list[i].value)
            j++;
        if (j == NCODES || strcmp(codes[j].name, list[i].name) != 0) {
            fprintf(stderr, "FAIL: status_list.h entry %s = %d is not in "
                    "the public enum\n", list[i].name, list[i].value);
            fails++;
        }
        if (strcmp(telemem_strerror(list[i].value), list[i].text) != 0) {
            fprintf(stderr, "FAIL: strerror(%s) differs from the list\n",
                    list[i].name);
            fails++;
        }
    }
    static const int unknown[] = {12345, -12345, 2, -18, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = telemem_strerror(unknown[i]);
        const char *nm = telemem_status_name(unknown[i]);
        if (!s || strcmp(s, "unknown status") != 0 || !nm || !*nm) {
            fprintf(stderr, "FAIL: unknown code %d: \"%s\" / \"%s\"\n",
                    unknown[i], s ? s : "(null)", nm ? nm : "(null)");
            fails++;
        }
    }
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d.%d", TELEMEM_VERSION_MAJOR,
             TELEMEM_VERSION_MINOR, TELEMEM_VERSION_PATCH);
    if (!telemem_version() || strcmp(telemem_version(), ver) != 0) {
        fprintf(stderr, "FAIL: telemem_version() = %s, header says %s\n",
                telemem_version() ? telemem_version() : "(null)", ver);
        fails++;
    }
    if (fails)
        return 1;
    printf("PASS: %zu codes\n", (size_t)NCODES);
    return 0;
}

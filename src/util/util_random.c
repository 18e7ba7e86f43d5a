/* util_random.c - random names for shared-memory objects: hex digits from
 * getrandom(), so another user cannot guess (and take first) the name of
 * an object this job is about to create. */
#include <errno.h>
#include <sys/random.h>

#include "util/util.h"

int tlm_util_random_hex(char *out, size_t ndigits)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[64] = {0};
    if (ndigits > 2 * sizeof(b))
        return -1;
    size_t need = (ndigits + 1) / 2, got = 0;
    while (got < need) {
        ssize_t k = getrandom(b + got, need - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    for (size_t i = 0; i < ndigits; i++)
        out[i] = hex[(b[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    out[ndigits] = '\0';
    return 0;
}

/* profile.h - the calibration profile (telemem-run --calibrate), read once:
 * its lines "<name> <number> [<number>]" as entries looked up by name.
 * Where the file is: profile_path.h. */
#ifndef TLM_UTIL_PROFILE_H
#define TLM_UTIL_PROFILE_H

#include <stddef.h>

typedef struct tlm_profile_entry {
    char name[64];
    unsigned long long value[2];
    int nvalues; /* 1 or 2: the numbers the line has (value[1] is 0 for 1) */
} tlm_profile_entry_t;

typedef struct tlm_profile {
    char path[512]; /* the file read, "" = none (for the log) */
    tlm_profile_entry_t *entry;
    size_t n;
} tlm_profile_t;

/* Read the profile at path (NULL or "" = none) into p: every line (of at
 * most 255 bytes) that does not start with '#' and has a name, blanks and
 * a decimal number, and maybe a second one; other lines are left out, and
 * so is everything after the first 4096 lines or a line of over 4 KiB.  A file that cannot be
 * opened is an empty profile.  0, or -1 when out of
 * memory (p is then empty). */
int tlm_util_profile_load(tlm_profile_t *p, const char *path);

/* The next entry named name from *pos on, in file order (*pos = 0 for the
 * first), *pos moved past it; NULL when there is no more. */
const tlm_profile_entry_t *tlm_util_profile_next(const tlm_profile_t *p,
                                                 const char *name, size_t *pos);

/* The direct-path line of driver name opened over provider (NULL or "":
 * none): the first "<name>@<provider>" entry with two numbers, else the
 * first "<name>" one (profiles written before 2026-11-29 have no provider
 * keys; they apply to every provider); the key it has to key (cap bytes).
 * NULL when there is neither (key then holds the plain name). */
const tlm_profile_entry_t *tlm_util_profile_driver(const tlm_profile_t *p,
                                                   const char *name,
                                                   const char *provider,
                                                   char *key, size_t cap);

void tlm_util_profile_free(tlm_profile_t *p);

#endif

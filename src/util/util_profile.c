/* util_profile.c - the calibration profile read once into entries
 * (profile.h): one parse for the direct path's thresholds (keyed by driver
 * and provider) and the backends' own lines. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/profile.h"

#define PROFILE_MAX_LINES 4096
#define PROFILE_MAX_LINE 4096

/* One decimal number after blanks, *s moved past it: 0, or -1 when there is
 * none or it does not fit (strtoull, not sscanf, to see the errors). */
static int profile_num(const char **s, unsigned long long *v)
{
    const char *p = *s + strspn(*s, " \t");
    char *end;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    *v = strtoull(p, &end, 10);
    if (errno || end == p)
        return -1;
    *s = end;
    return 0;
}

/* One line into *e: 0, or -1 when it is no entry. */
static int parse_line(const char *line, tlm_profile_entry_t *e)
{
    if (line[0] == '#')
        return -1;
    const char *s = line + strspn(line, " \t");
    size_t n = strcspn(s, " \t\r\n");
    if (n == 0 || n >= sizeof(e->name))
        return -1;
    memcpy(e->name, s, n);
    e->name[n] = '\0';
    s += n;
    e->value[0] = e->value[1] = 0;
    e->nvalues = 0;
    while (e->nvalues < 2 && profile_num(&s, &e->value[e->nvalues]) == 0)
        e->nvalues++;
    if (e->nvalues == 1)
        e->value[1] = 0; /* profile_num may have written a failed parse */
    return e->nvalues > 0 ? 0 : -1;
}

int tlm_util_profile_load(tlm_profile_t *p, const char *path)
{
    memset(p, 0, sizeof(*p));
    if (!path || !path[0])
        return 0;
    snprintf(p->path, sizeof(p->path), "%s", path);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[256];
    size_t cap = 0, lines = 0;
    int rc = 0;
    /* A profile is a few lines: reading stops after PROFILE_MAX_LINES (a
     * path naming a device or a huge file must not hold up initialize). */
    while (rc == 0 && lines++ < PROFILE_MAX_LINES &&
           fgets(line, sizeof(line), f)) {
        tlm_profile_entry_t e;
        if (!strchr(line, '\n') && !feof(f)) {
            /* Longer than the buffer: no entry; skip the rest of it, up to
             * PROFILE_MAX_LINE bytes (else this is no profile: stop). */
            int c = 0;
            size_t k = 0;
            while (k++ < PROFILE_MAX_LINE && (c = fgetc(f)) != EOF &&
                   c != '\n')
                ;
            if (c != '\n')
                break;
            continue;
        }
        if (parse_line(line, &e) < 0)
            continue;
        if (p->n == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            tlm_profile_entry_t *ne = realloc(p->entry, ncap * sizeof(*ne));
            if (!ne) {
                rc = -1;
                break;
            }
            p->entry = ne;
            cap = ncap;
        }
        p->entry[p->n++] = e;
    }
    fclose(f);
    if (rc < 0)
        tlm_util_profile_free(p);
    return rc;
}

const tlm_profile_entry_t *tlm_util_profile_next(const tlm_profile_t *p,
                                                 const char *name, size_t *pos)
{
    for (; p && *pos < p->n; (*pos)++)
        if (strcmp(p->entry[*pos].name, name) == 0)
            return &p->entry[(*pos)++];
    return NULL;
}

const tlm_profile_entry_t *tlm_util_profile_driver(const tlm_profile_t *p,
                                                   const char *name,
                                                   const char *provider,
                                                   char *key, size_t cap)
{
    bool prov = provider && provider[0];
    for (int with = prov ? 1 : 0; with >= 0; with--) {
        int w = with ? snprintf(key, cap, "%s@%s", name, provider)
                     : snprintf(key, cap, "%s", name);
        if (w < 0 || (size_t)w >= cap)
            continue; /* a key cut short would find another's line */
        size_t pos = 0;
        const tlm_profile_entry_t *e;
        while ((e = tlm_util_profile_next(p, key, &pos)) != NULL)
            if (e->nvalues >= 2)
                return e;
    }
    return NULL;
}

void tlm_util_profile_free(tlm_profile_t *p)
{
    free(p->entry);
    memset(p, 0, sizeof(*p));
}

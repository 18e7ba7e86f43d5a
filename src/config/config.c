/* config.c - the settings service and the only reader of the environment:
 * parses every setting of config_table.h (defaults through the same
 * parser), warns about unknown TELEMEM_* variables, renders the settings
 * for TELEMEM_PRINT_CONFIG, and reads the launcher's variables and the
 * calibration profile's place for the layers that need them.  It logs as
 * the core subsystem (util/log.h's default), as it did inside core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "config/config.h"
#include "util/log.h"
#include "util/profile_path.h"
#include "util/util.h"

extern char **environ;

typedef enum {
    T_SIZE, T_INT, T_BOOL, T_SECONDS, T_STRING, T_LOGLEVEL, T_SECRET
} ctype_t;

typedef struct {
    const char *name;
    ctype_t type;
    const char *def;
    const char *range; /* config_table.h's syntax; NULL: a row without */
    const char *doc;
    size_t offset;
} centry_t;

/* Rows are (name, type, default, range, doc); a row written without its
 * range still builds (its range is NULL, unchecked) and the lint test
 * names it. */
#define TLM_CFG_PICK(a, b, pick, ...) pick
#define TLM_CFG_R2(range, doc) range
#define TLM_CFG_R1(doc) NULL
#define TLM_CFG_D2(range, doc) doc
#define TLM_CFG_D1(doc) doc
#define TLM_CFG_RANGE(...) \
    TLM_CFG_PICK(__VA_ARGS__, TLM_CFG_R2, TLM_CFG_R1, ~)(__VA_ARGS__)
#define TLM_CFG_DOC(...) \
    TLM_CFG_PICK(__VA_ARGS__, TLM_CFG_D2, TLM_CFG_D1, ~)(__VA_ARGS__)

static const centry_t entries[] = {
#define TLM_CONFIG(name, type, def, ...)                                   \
    {#name, T_##type, def, TLM_CFG_RANGE(__VA_ARGS__),                     \
     TLM_CFG_DOC(__VA_ARGS__), offsetof(tlm_config_t, name)},
#include "config/config_table.h"
#undef TLM_CONFIG
};

/* The other libraries' variables a layer consults (TLM_CONFIG_ENV rows). */
static const struct {
    const char *name;
    size_t offset;
} foreign[] = {
#define TLM_CONFIG(name, type, ...)
#define TLM_CONFIG_ENV(name) {#name, offsetof(tlm_config_t, name)},
#include "config/config_table.h"
#undef TLM_CONFIG_ENV
#undef TLM_CONFIG
    {NULL, 0} /* keeps the list non-empty in a build that has none */
};

static const char *const type_forms[] = {
    [T_SIZE] = "a size such as 4096, 16k, 4m, 1g",
    [T_INT] = "a decimal integer",
    [T_BOOL] = "y/n, yes/no, 1/0, on/off",
    [T_SECONDS] = "seconds such as 30, 1.5, 200ms, 2m",
    [T_STRING] = "a string",
    [T_LOGLEVEL] = "error, warn, info, debug, trace or data",
    [T_SECRET] = "a string",
};

static char *config_text;
static char *strings[TLM_ARRAY_SIZE(entries)];
static bool from_env[TLM_ARRAY_SIZE(entries)];

static int parse_one(const centry_t *e, const char *val, tlm_config_t *cfg,
                     size_t idx)
{
    void *p = (char *)cfg + e->offset;
    switch (e->type) {
    case T_SIZE: return tlm_util_parse_size(val, (size_t *)p);
    case T_INT: return tlm_util_parse_int(val, (long *)p);
    case T_BOOL: return tlm_util_parse_bool(val, (bool *)p);
    case T_SECONDS: return tlm_util_parse_seconds(val, (double *)p);
    case T_LOGLEVEL: return tlm_util_log_level_parse(val, (int *)p);
    case T_STRING:
    case T_SECRET:
        free(strings[idx]);
        strings[idx] = strdup(val);
        if (!strings[idx])
            return -1;
        *(const char **)p = strings[idx];
        return 0;
    }
    return -1;
}

/* ---- ranges ------------------------------------------------------------ */

/* The value's word w (n bytes) among the words of "a|b|c" or "a,b,c". */
static bool word_in(const char *w, size_t n, const char *words, char sep)
{
    for (const char *p = words; *p;) {
        const char *e = strchr(p, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

/* Bounds of a "min..max" range parsed as the entry's type; -1 malformed. */
static int bounds(const centry_t *e, double *lo, double *hi)
{
    const char *dots = strstr(e->range, "..");
    char a[64];
    if (!dots || (size_t)(dots - e->range) >= sizeof(a))
        return -1;
    memcpy(a, e->range, (size_t)(dots - e->range));
    a[dots - e->range] = '\0';
    const char *b = dots + 2;
    size_t sz;
    long l;
    double d;
    for (int i = 0; i < 2; i++) {
        const char *t = i ? b : a;
        double *out = i ? hi : lo;
        if (e->type == T_SIZE && tlm_util_parse_size(t, &sz) == 0)
            *out = (double)sz;
        else if (e->type == T_INT && tlm_util_parse_int(t, &l) == 0)
            *out = (double)l;
        else if (e->type == T_SECONDS && tlm_util_parse_seconds(t, &d) == 0)
            *out = d;
        else
            return -1;
    }
    return 0;
}

/* Is the parsed value of e in its range?  0 yes, -1 no, -2 the range
 * itself is malformed (a table bug). */
static int in_range(const centry_t *e, const tlm_config_t *cfg)
{
    const void *p = (const char *)cfg + e->offset;
    if (!e->range || !e->range[0] || !strcmp(e->range, "*"))
        return 0;
    if (e->type == T_STRING) {
        const char *v = *(const char *const *)p;
        if (!strncmp(e->range, "list:", 5)) {
            for (const char *s = v; *s;) { /* every item known, "" too */
                size_t n = strcspn(s, ",");
                if (n && !word_in(s, n, e->range + 5, ','))
                    return -1;
                s += n + (s[n] == ',');
            }
            return 0;
        }
        return word_in(v, strlen(v), e->range, '|') ? 0 : -1;
    }
    double lo, hi, v;
    if (bounds(e, &lo, &hi) != 0)
        return -2;
    switch (e->type) {
    case T_SIZE: v = (double)*(const size_t *)p; break;
    case T_INT: v = (double)*(const long *)p; break;
    case T_SECONDS: v = *(const double *)p; break;
    default: return -2;
    }
    return v >= lo && v <= hi ? 0 : -1;
}

/* The range as words for a message: "0..1048576", "one of auto, shm". */
static void range_text(const centry_t *e, char *buf, size_t n)
{
    const char *r = e->range ? e->range : "";
    bool list = !strncmp(r, "list:", 5);
    if (strstr(r, "..") || !r[0] || !strcmp(r, "*")) {
        snprintf(buf, n, "%s", r);
        return;
    }
    size_t o = (size_t)snprintf(buf, n, "%s", list
                                ? "a comma list of " : "one of ");
    for (const char *s = list ? r + 5 : r; *s && o + 3 < n; s++)
        o += (size_t)snprintf(buf + o, n - o, "%s",
                              *s == '|' || *s == ',' ? ", " : (char[2]){*s, 0});
}

static void render(const tlm_config_t *cfg)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < TLM_ARRAY_SIZE(entries); i++) {
        const centry_t *e = &entries[i];
        const void *p = (const char *)cfg + e->offset;
        char val[256];
        switch (e->type) {
        case T_SIZE: snprintf(val, sizeof(val), "%zu", *(const size_t *)p); break;
        case T_INT: snprintf(val, sizeof(val), "%ld", *(const long *)p); break;
        case T_BOOL: snprintf(val, sizeof(val), "%s", *(const bool *)p ? "y" : "n"); break;
        case T_SECONDS: snprintf(val, sizeof(val), "%g", *(const double *)p); break;
        case T_STRING: snprintf(val, sizeof(val), "%s", *(const char *const *)p); break;
        case T_LOGLEVEL:
            snprintf(val, sizeof(val), "%s", tlm_util_log_level_name(*(const int *)p));
            break;
        case T_SECRET: /* the job's key: never shown */
            snprintf(val, sizeof(val), "%s",
                     **(const char *const *)p ? "(hidden)" : "");
            break;
        }
        char line[400];
        int n = snprintf(line, sizeof(line), "TELEMEM_%s = %s (%s)\n", e->name,
                         val, from_env[i] ? "set" : "default");
        if (n < 0)
            continue;
        if (len + (size_t)n + 1 > cap) {
            char *nb = realloc(buf, cap * 2 + (size_t)n);
            if (!nb)
                break;
            buf = nb;
            cap = cap * 2 + (size_t)n;
        }
        memcpy(buf + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    free(config_text);
    config_text = buf;
}

int tlm_config_init(tlm_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    int rc = TELEMEM_OK;
    for (size_t i = 0; i < TLM_ARRAY_SIZE(entries); i++) {
        const centry_t *e = &entries[i];
        char var[128];
        snprintf(var, sizeof(var), "TELEMEM_%s", e->name);
        const char *val = getenv(var);
        from_env[i] = val != NULL;
        if (parse_one(e, e->def, cfg, i) != 0 || in_range(e, cfg) != 0) {
            tlm_error("built-in default of %s (\"%s\") does not parse or is "
                      "outside its range \"%s\"", var, e->def,
                      e->range ? e->range : "");
            rc = TELEMEM_ERR_CONFIG;
        }
        if (val && parse_one(e, val, cfg, i) != 0) {
            tlm_error("%s=\"%s\" is invalid: expected %s", var,
                      e->type == T_SECRET ? "(hidden)" : val,
                      type_forms[e->type]);
            rc = TELEMEM_ERR_CONFIG;
        } else if (val && in_range(e, cfg) != 0) {
            char rt[256];
            range_text(e, rt, sizeof(rt));
            tlm_error("%s=\"%s\" is out of range: expected %s", var, val,
                      rt);
            rc = TELEMEM_ERR_CONFIG;
        }
    }
    for (size_t i = 0; foreign[i].name; i++)
        *(const char **)(void *)((char *)cfg + foreign[i].offset) =
            getenv(foreign[i].name);
    for (char **ep = environ; ep && *ep; ep++) {
        if (strncmp(*ep, "TELEMEM_", 8) != 0)
            continue;
        const char *name = *ep + 8;
        size_t n = strcspn(name, "=");
        bool known = false;
        for (size_t i = 0; i < TLM_ARRAY_SIZE(entries) && !known; i++)
            known = strlen(entries[i].name) == n &&
                    strncmp(entries[i].name, name, n) == 0;
        if (!known)
            tlm_warn("unknown variable %.*s ignored (see README, "
                     "\"Configuration\")", (int)(n + 8), *ep);
    }
    if (rc == TELEMEM_OK)
        render(cfg);
    return rc;
}

/* The launcher variables the bootstrap reads (docs/bootstrap.md,
 * "Launchers"): what joins a job, and what says how many ranks a launcher
 * started. */
static const char *const launcher_vars[] = {
    "PMIX_NAMESPACE", "PMIX_RANK",                      /* PMIx */
    "PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE", "PMI_JOBID",
                                                        /* PMI-1, PMI-2 */
    "MPI_LOCALNRANKS",                                  /* Hydra */
    "SLURM_STEP_ID", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS",
    "SLURM_MPI_TYPE",                                   /* Slurm srun */
    "OMPI_COMM_WORLD_SIZE",                             /* Open MPI */
    "MV2_COMM_WORLD_SIZE",                              /* MVAPICH */
};

const char *tlm_config_launcher_env(const char *name)
{
    for (size_t i = 0; name && i < TLM_ARRAY_SIZE(launcher_vars); i++)
        if (strcmp(name, launcher_vars[i]) == 0)
            return getenv(name);
    tlm_debug("launcher variable %s is not in the list read", name);
    return NULL;
}

const char *tlm_config_string(void)
{
    return config_text ? config_text : "";
}

void tlm_config_append(const char *text)
{
    size_t old = config_text ? strlen(config_text) : 0, n = strlen(text);
    char *t = realloc(config_text, old + n + 1);
    if (!t)
        return;
    memcpy(t + old, text, n + 1);
    config_text = t;
}

bool tlm_config_profile_path(const tlm_config_t *cfg, char *buf, size_t n)
{
    return tlm_util_profile_path(cfg->DIRECT_PROFILE, getenv("XDG_CACHE_HOME"),
                                 getenv("HOME"), buf, n);
}

void tlm_config_fini(void)
{
    free(config_text);
    config_text = NULL;
    for (size_t i = 0; i < TLM_ARRAY_SIZE(entries); i++) {
        free(strings[i]);
        strings[i] = NULL;
    }
}

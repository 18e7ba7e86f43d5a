/* direct_thresholds.c - which transfers take the direct path:
 * TELEMEM_DIRECT and its thresholds per driver (from the environment, the
 * calibration profile or the driver), and their text for
 * TELEMEM_PRINT_CONFIG (docs/direct.md). */
#define TLM_LOG_SUBSYS "direct"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/direct_int.h"

/* ---- thresholds ----------------------------------------------------------- */

/* Look name (or alt) up in spec: "64k" or "a:32k,b:1m".  1 found, 0 not,
 * -1 malformed. */
static int spec_lookup(const char *spec, const char *name, const char *alt,
                       size_t *out)
{
    if (!spec || !spec[0])
        return 0;
    if (!strchr(spec, ':'))
        return tlm_util_parse_size(spec, out) == 0 ? 1 : -1;
    const char *s = spec, *key;
    size_t kl, v;
    int found = 0, rc;
    while ((rc = tlm_util_spec_next(&s, &key, &kl, &v)) > 0)
        if (!found &&
            ((name && strlen(name) == kl && !strncmp(key, name, kl)) ||
             (alt && strlen(alt) == kl && !strncmp(key, alt, kl)))) {
            *out = v;
            found = 1;
        }
    return rc < 0 ? -1 : found;
}

/* Names in a well-formed list spec that no transport or direct driver of
 * this build has: a warning each (a typo would leave the default in force
 * without a word; a name of a transport another build has is harmless). */
static void warn_unknown(const char *var, const char *spec)
{
    if (!spec || !strchr(spec, ':'))
        return;
    const char *s = spec, *key;
    size_t kl, v;
    while (tlm_util_spec_next(&s, &key, &kl, &v) > 0) {
        char all[128];
        if (!tlm_backend_known_name(key, kl, all, sizeof(all)))
            tlm_warn("%s names \"%.*s\", which is no transport or direct "
                     "driver of this build (%s): its size is not used", var,
                     (int)kl, key, all);
    }
}

int tlm_core_direct_check_config(const tlm_config_t *c)
{
    size_t v;
    if (strcmp(c->DIRECT, "auto") && strcmp(c->DIRECT, "never") &&
        strcmp(c->DIRECT, "always")) {
        tlm_error("TELEMEM_DIRECT=\"%s\" is invalid: expected auto, never "
                  "or always", c->DIRECT);
        return TELEMEM_ERR_CONFIG;
    }
    if (spec_lookup(c->DIRECT_THRESHOLD, NULL, NULL, &v) < 0 ||
        spec_lookup(c->DIRECT_ROW_THRESHOLD, NULL, NULL, &v) < 0) {
        tlm_error("TELEMEM_DIRECT_%sTHRESHOLD=\"%s\" is invalid: expected a "
                  "size (64k) or a comma list name:size (window:32k,"
                  "ofi-rma:1m)",
                  spec_lookup(c->DIRECT_THRESHOLD, NULL, NULL, &v) < 0 ? ""
                                                                    : "ROW_",
                  spec_lookup(c->DIRECT_THRESHOLD, NULL, NULL, &v) < 0
                      ? c->DIRECT_THRESHOLD : c->DIRECT_ROW_THRESHOLD);
        return TELEMEM_ERR_CONFIG;
    }
    warn_unknown("TELEMEM_DIRECT_THRESHOLD", c->DIRECT_THRESHOLD);
    warn_unknown("TELEMEM_DIRECT_ROW_THRESHOLD", c->DIRECT_ROW_THRESHOLD);
    return TELEMEM_OK;
}

static bool has_provider(const tlm_direct_t *d)
{
    return d->provider && d->provider[0];
}

/* The calibration profile (read once at initialize, util/profile.h): the
 * line of the provider the driver opened, else its plain line (a profile
 * written before 2026-11-29); the line's key to *key (for the text).
 * 1 found, 0 not. */
static int profile_lookup(const tlm_direct_t *d, size_t *thr, size_t *row,
                          char *key, size_t cap)
{
    const tlm_profile_t *p = &tlm_core.profile;
    const tlm_profile_entry_t *e =
        tlm_util_profile_driver(p, d->name, d->provider, key, cap);
    if (!e) {
        if (has_provider(d))
            tlm_debug("direct profile %s: no line %s@%s or %s", p->path,
                      d->name, d->provider, d->name);
        return 0;
    }
    *thr = (size_t)e->value[0];
    *row = (size_t)e->value[1];
    tlm_debug("direct profile %s: %s threshold %zu, row %zu", p->path, key,
              *thr, *row);
    return 1;
}

static void describe(const tlm_transport_t *tp, size_t thr, size_t row,
                     const char *src)
{
    char line[320], via[80] = "";
    if (has_provider(tp->direct))
        snprintf(via, sizeof(via), ", provider %s", tp->direct->provider);
    if (D.mode == MODE_AUTO)
        snprintf(line, sizeof(line),
                 "direct path %s (%s%s): from %zu bytes, "
                 "strided rows from %zu bytes (%s)\n",
                 tp->direct->name, tp->name, via, thr, row, src);
    else
        snprintf(line, sizeof(line), "direct path %s (%s%s): %s\n",
                 tp->direct->name, tp->name, via,
                 D.mode == MODE_NEVER
                     ? "off (TELEMEM_DIRECT=never)"
                     : "every transfer it can take (TELEMEM_DIRECT=always)");
    size_t old = D.text ? strlen(D.text) : 0;
    char *t = realloc(D.text, old + strlen(line) + 1);
    if (!t)
        return;
    memcpy(t + old, line, strlen(line) + 1);
    D.text = t;
}

const char *tlm_core_direct_string(void)
{
    return D.text ? D.text : "";
}



void tlm_core_dx_thresholds(const tlm_transport_t *tp, size_t *thr,
                            size_t *row)
{
    const tlm_config_t *c = &tlm_core.cfg;
    tlm_direct_t *d = tp->direct;
    const char *src = "driver default";
    char key[128], from[160];
    *thr = d->threshold;
    *row = d->row_threshold ? d->row_threshold
                            : TLM_MAX(d->threshold / 16, 256);
    size_t pt, pr;
    if (profile_lookup(d, &pt, &pr, key, sizeof(key))) {
        *thr = pt;
        *row = pr;
        /* "profile" alone for the plain line of a driver without provider
         * (the text tests and users have read since 2026-11-20) */
        snprintf(from, sizeof(from),
                 has_provider(d) ? "profile line %s" : "profile", key);
        src = from;
    }
    if (spec_lookup(c->DIRECT_THRESHOLD, d->name, tp->name, thr) > 0)
        src = "TELEMEM_DIRECT_THRESHOLD";
    if (spec_lookup(c->DIRECT_ROW_THRESHOLD, d->name, tp->name, row) > 0)
        src = "TELEMEM_DIRECT_ROW_THRESHOLD";
    if (D.mode == MODE_ALWAYS)
        *thr = *row = 1;
    if (D.mode == MODE_NEVER)
        *thr = *row = SIZE_MAX;
    *thr = TLM_MAX(*thr, 1);
    describe(tp, *thr, *row, src);
}

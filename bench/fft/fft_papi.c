/* fft_papi.c - PAPI counters of the distributed FFT benchmark (fft.h):
 * L1/L2/L3 data-cache misses, cycles and instructions of the calling thread,
 * counted around the compute phases only.  Built with -DFFT_HAVE_PAPI when
 * meson found PAPI; otherwise (or when the machine has no counters, as in
 * most virtual machines) every call does nothing and the reason is kept. */
#include <stdio.h>
#include <string.h>

#include "fft.h"

#ifdef FFT_HAVE_PAPI
#include <papi.h>
#endif

const char *const fft_papi_columns[FFT_PAPI_NSLOTS] = {
    "papi_l1_dcm", "papi_l2_dcm", "papi_l3_dcm", "papi_tot_cyc", "papi_tot_ins",
};

static int g_avail;
static int g_slot_on[FFT_PAPI_NSLOTS];
static const char *g_slot_event[FFT_PAPI_NSLOTS];
static int g_nev;                      /* events in the set */
static int g_ev_slot[FFT_PAPI_NSLOTS]; /* set position -> slot */
static char g_reason[1200];

#ifdef FFT_HAVE_PAPI
static int g_set = -1; /* PAPI_NULL is -1 */

/* Presets per slot, the first one the machine offers wins (AMD offers no
 * L3 data-cache preset on most models; total L3 misses is the next best). */
static const char *const g_presets[FFT_PAPI_NSLOTS][2] = {
    {"PAPI_L1_DCM", NULL},          {"PAPI_L2_DCM", NULL},
    {"PAPI_L3_DCM", "PAPI_L3_TCM"}, {"PAPI_TOT_CYC", NULL},
    {"PAPI_TOT_INS", NULL},
};

void fft_papi_init(const char **reason_p)
{
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        snprintf(g_reason, sizeof g_reason, "PAPI_library_init: %s",
                 rc > 0 ? "version mismatch" : PAPI_strerror(rc));
        *reason_p = g_reason;
        return;
    }
    /* The CPU component (perf_event on Linux) says why it is off. */
    const PAPI_component_info_t *ci = PAPI_get_component_info(0);
    if (ci && ci->disabled) {
        snprintf(g_reason, sizeof g_reason, "PAPI component %s disabled: %s",
                 ci->name, ci->disabled_reason);
        *reason_p = g_reason;
        return;
    }
    if ((rc = PAPI_create_eventset(&g_set)) != PAPI_OK) {
        snprintf(g_reason, sizeof g_reason, "PAPI_create_eventset: %s",
                 PAPI_strerror(rc));
        *reason_p = g_reason;
        return;
    }
    const char *last = "no preset event exists";
    char lastbuf[256];
    for (int s = 0; s < FFT_PAPI_NSLOTS; s++) {
        for (int k = 0; k < 2 && g_presets[s][k]; k++) {
            int code;
            if (PAPI_event_name_to_code(g_presets[s][k], &code) != PAPI_OK)
                continue;
            if ((rc = PAPI_query_event(code)) != PAPI_OK) {
                snprintf(lastbuf, sizeof lastbuf, "%s: %s", g_presets[s][k],
                         PAPI_strerror(rc));
                last = lastbuf;
                continue;
            }
            if ((rc = PAPI_add_event(g_set, code)) != PAPI_OK) {
                snprintf(lastbuf, sizeof lastbuf, "PAPI_add_event(%s): %s",
                         g_presets[s][k], PAPI_strerror(rc));
                last = lastbuf;
                continue;
            }
            g_slot_on[s] = 1;
            g_slot_event[s] = g_presets[s][k];
            g_ev_slot[g_nev++] = s;
            break;
        }
    }
    if (g_nev == 0) {
        snprintf(g_reason, sizeof g_reason,
                 "no preset can be counted (%d hardware counters; %s)",
                 PAPI_num_cmp_hwctrs(0), last);
        *reason_p = g_reason;
        return;
    }
    g_avail = 1;
    *reason_p = NULL;
}

void fft_papi_start(void)
{
    if (g_avail && PAPI_start(g_set) != PAPI_OK)
        g_avail = 0;
}

void fft_papi_pause(long long acc[FFT_PAPI_NSLOTS])
{
    if (!g_avail)
        return;
    long long v[FFT_PAPI_NSLOTS] = {0};
    /* PAPI_accum adds the counts into v and resets the counters. */
    if (PAPI_accum(g_set, v) != PAPI_OK)
        return;
    for (int i = 0; i < g_nev; i++)
        acc[g_ev_slot[i]] += v[i];
}

void fft_papi_resume(void)
{
    if (g_avail)
        PAPI_reset(g_set);
}

void fft_papi_stop(void)
{
    long long v[FFT_PAPI_NSLOTS];
    if (g_avail)
        PAPI_stop(g_set, v);
}
#else /* !FFT_HAVE_PAPI */
void fft_papi_init(const char **reason_p)
{
    snprintf(g_reason, sizeof g_reason,
             "built without PAPI (install libpapi-dev and reconfigure)");
    (void)g_slot_event;
    (void)g_ev_slot;
    (void)g_nev;
    *reason_p = g_reason;
}

void fft_papi_start(void)
{
}
void fft_papi_pause(long long acc[FFT_PAPI_NSLOTS])
{
    (void)acc;
}
void fft_papi_resume(void)
{
}
void fft_papi_stop(void)
{
}
#endif

int fft_papi_available(void)
{
    return g_avail;
}

int fft_papi_slot(int s, const char **event_p)
{
    if (s < 0 || s >= FFT_PAPI_NSLOTS || !g_slot_on[s])
        return 0;
    if (event_p)
        *event_p = g_slot_event[s];
    return 1;
}

/* caf_init.c - the life of an image: caf_init (Telemem, the control
 * block, the handlers), normal termination (END PROGRAM, STOP) and
 * FAIL IMAGE, which tell every image and wait in a barrier for the job to
 * end, and ERROR STOP, which ends the job at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caf_internal.h"

tlm_caf_t tlm_caf;

static int ctl_setup(void)
{
    size_t n = (size_t)tlm_caf.n;
    int rc;

    tlm_caf.ctl_bases = calloc(n, sizeof(void *));
    tlm_caf.posted = calloc(n, sizeof(int64_t));
    tlm_caf.seen = calloc(n, sizeof(int64_t));
    if (!tlm_caf.ctl_bases || !tlm_caf.posted || !tlm_caf.seen)
        return TELEMEM_ERR_NO_MEMORY;
    rc = telemem_malloc_all(TLM_CAF_CTL_WORDS(n) * sizeof(int64_t),
                            tlm_caf.ctl_bases);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_caf.ctl_block = tlm_caf.ctl_bases[tlm_caf.me];
    memset(tlm_caf.ctl_block, 0, TLM_CAF_CTL_WORDS(n) * sizeof(int64_t));
    tlm_caf.ctl.arrived = tlm_caf.ctl_block;
    tlm_caf.ctl.state = tlm_caf.ctl_block + n;
    tlm_caf.ctl.xchg = tlm_caf.ctl_block + 2 * n;
    return tlm_caf_jc_setup();
}

static void team_setup(void)
{
    tlm_caf_team_t *t = &tlm_caf.initial;
    int i;

    t->number = -1;
    t->size = tlm_caf.n;
    t->me = tlm_caf.me;
    t->ranks = malloc((size_t)tlm_caf.n * sizeof(int));
    if (!t->ranks)
        tlm_caf_die(1, "caf_init: out of memory");
    for (i = 0; i < tlm_caf.n; i++)
        t->ranks[i] = i;
    t->active = true;
    tlm_caf.team = t;
}

void _gfortran_caf_init(int *argc, char ***argv)
{
    int rc;

    if (tlm_caf.inited) {
        /* Static coarrays are registered, and given their initial values,
         * by constructors that run before main calls caf_init: no image
         * may start the program (and write into another's coarrays)
         * before every image has initialised its own. */
        if (tlm_caf.early && argv) {
            tlm_caf.early = false;
            rc = telemem_barrier();
            if (rc != TELEMEM_OK)
                tlm_caf_die(1, "caf_init: barrier: %s",
                            telemem_strerror(rc));
        }
        return;
    }
    rc = telemem_initialize(argc, argv);
    if (rc != TELEMEM_OK)
        tlm_caf_die(1, "caf_init: telemem_initialize: %s (%s)",
                    telemem_strerror(rc), telemem_status_name(rc));
    tlm_caf.me = telemem_rank();
    tlm_caf.n = telemem_nranks();
    tlm_caf.inited = true;
    rc = ctl_setup();
    if (rc != TELEMEM_OK)
        tlm_caf_die(1, "caf_init: control block: %s", telemem_strerror(rc));
    team_setup();
    tlm_caf_ref_init();
    tlm_caf_tcoll_init();
    /* Nobody may address a control block or a handler before every image
     * has set them up. */
    rc = telemem_barrier();
    if (rc != TELEMEM_OK)
        tlm_caf_die(1, "caf_init: barrier: %s", telemem_strerror(rc));
}

void tlm_caf_need_init(void)
{
    if (!tlm_caf.inited) {
        _gfortran_caf_init(NULL, NULL);
        tlm_caf.early = true;
    }
}

/* Wait until no image is running, looking at each in turn (when an image
 * has died the barrier fails). */
static void wait_each_done(void)
{
    int r;

    for (r = 0; r < tlm_caf.n; r++) {
        telemem_wait_t w = TELEMEM_WAIT_INIT(r);
        if (r == tlm_caf.me)
            continue;
        while (tlm_caf_state(r) == TLM_CAF_RUNNING)
            if (telemem_wait_poll(&w) != TELEMEM_OK)
                break;
    }
}

void tlm_caf_terminate(int st, int code)
{
    int64_t v = st;
    int r;

    tlm_caf_need_init();
    tlm_caf.finalizing = true;
    telemem_quiet();
    tlm_caf.ctl.state[tlm_caf.me] = st;
    for (r = 0; r < tlm_caf.n; r++)
        if (r != tlm_caf.me && tlm_caf_state(r) != TLM_CAF_FAILED)
            telemem_put(r, (int64_t *)tlm_caf.ctl_bases[r] + tlm_caf.n +
                               tlm_caf.me, &v, sizeof v);
    telemem_quiet();
    /* Stay, serving the others' requests (they may still read this
     * image's coarrays, or wait on it), until every image has ended:
     * take part, as an image that ended, in the running images' SYNC ALLs
     * and collectives (caf_jcoll.c).  When a process has died the
     * collectives fail: look at each image instead. */
    if (!tlm_caf_jc_ended(st))
        wait_each_done();
    fflush(NULL);
    telemem_finalize();
    exit(code);
}

void _gfortran_caf_finalize(void)
{
    tlm_caf_terminate(TLM_CAF_STOPPED, 0);
}

void _gfortran_caf_stop_numeric(int code, bool quiet)
{
    fflush(stdout);
    if (!quiet)
        fprintf(stderr, "STOP %d\n", code);
    tlm_caf_terminate(TLM_CAF_STOPPED, code);
}

void _gfortran_caf_stop_str(const char *s, size_t len, bool quiet)
{
    fflush(stdout);
    if (!quiet)
        fprintf(stderr, "STOP %.*s\n", (int)len, s);
    tlm_caf_terminate(TLM_CAF_STOPPED, 0);
}

void _gfortran_caf_error_stop_str(const char *s, size_t len, bool quiet)
{
    fflush(stdout);
    if (!quiet)
        fprintf(stderr, "ERROR STOP %.*s\n", (int)len, s);
    fflush(NULL);
    /* The launcher ends the other images when this one exits non-zero. */
    exit(1);
}

void _gfortran_caf_error_stop(int code, bool quiet)
{
    fflush(stdout);
    if (!quiet)
        fprintf(stderr, "ERROR STOP %d\n", code);
    fflush(NULL);
    exit(code ? code : 1);
}

void _gfortran_caf_fail_image(void)
{
    fflush(NULL);
    tlm_caf_terminate(TLM_CAF_FAILED, 0);
}

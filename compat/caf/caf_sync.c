/* caf_sync.c - image control: SYNC IMAGES (pairwise counters in the
 * control blocks, waited on with telemem_wait_poll so a waiting image
 * spins, yields or sleeps by Telemem's wait policy), SYNC ALL (one
 * exchange of caf_jcoll.c's slots in the initial team of 4 images or
 * more, SYNC IMAGES with the whole team otherwise), SYNC MEMORY. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

/* Tell rank r that this image reached a SYNC IMAGES with it. */
static int post(int r)
{
    int64_t *remote = (int64_t *)tlm_caf.ctl_bases[r] + tlm_caf.me;

    tlm_caf.posted[r]++;
    if (r == tlm_caf.me) {
        __atomic_store_n(&tlm_caf.ctl.arrived[r], tlm_caf.posted[r],
                         __ATOMIC_RELEASE);
        return TELEMEM_OK;
    }
    return telemem_put(r, remote, &tlm_caf.posted[r], sizeof(int64_t));
}

/* Wait for rank r's matching post; a STAT= code. */
static int await(int r, char *msg, size_t cap)
{
    telemem_wait_t w = TELEMEM_WAIT_INIT(r);
    int rc;

    while (__atomic_load_n(&tlm_caf.ctl.arrived[r], __ATOMIC_ACQUIRE) <=
           tlm_caf.seen[r]) {
        int s = tlm_caf_state(r);
        if (s != TLM_CAF_RUNNING) {
            snprintf(msg, cap, "sync images: image %d has %s", r + 1,
                     s == TLM_CAF_FAILED ? "failed" : "stopped");
            return s == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                       : TLM_CAF_STAT_STOPPED_IMAGE;
        }
        rc = telemem_wait_poll(&w);
        if (rc != TELEMEM_OK) {
            if (rc == TELEMEM_ERR_PEER_DEAD)
                tlm_caf_refresh_dead();
            snprintf(msg, cap, "sync images: waiting for image %d: %s (%s)",
                     r + 1, rc == TELEMEM_ERR_PEER_DEAD
                                ? "the image has failed"
                                : telemem_strerror(rc),
                     telemem_status_name(rc));
            return tlm_caf_stat_of(rc);
        }
    }
    tlm_caf.seen[r]++;
    return 0;
}

int tlm_caf_sync_ranks(const int *ranks, int count, char *msg, size_t cap)
{
    int i, rc, code = 0, c;

    rc = telemem_quiet();
    if (rc != TELEMEM_OK && rc != TELEMEM_ERR_PEER_DEAD) {
        snprintf(msg, cap, "sync images: completing puts: %s",
                 telemem_strerror(rc));
        return tlm_caf_stat_of(rc);
    }
    for (i = 0; i < count; i++) {
        int r = ranks[i];
        if (r == tlm_caf.me || tlm_caf_state(r) == TLM_CAF_FAILED)
            continue;
        rc = post(r);
        if (rc != TELEMEM_OK && !code) {
            snprintf(msg, cap, "sync images: image %d: %s", r + 1,
                     telemem_strerror(rc));
            code = tlm_caf_stat_of(rc);
        }
    }
    for (i = 0; i < count; i++) {
        if (ranks[i] == tlm_caf.me)
            continue;
        c = await(ranks[i], msg, code ? 0 : cap);
        /* A failed image outranks a stopped one. */
        if (c && (!code || c == TLM_CAF_STAT_FAILED_IMAGE))
            code = c;
    }
    return code;
}

/* SYNC ALL of the initial team as one exchange of the slots
 * (caf_jcoll.c), in which an image that has stopped or failed takes part
 * too, from tlm_caf_terminate until every image has ended, so every
 * image takes this path and agrees on its outcome.  Returns 1 when done
 * (STAT= code in *code), 0 when Telemem's collectives no longer work (a
 * process died): SYNC ALL is then pairwise, and stays so. */
static int sync_all_coll(int *code, char *msg, size_t cap)
{
    tlm_caf_jc_t op = {.what = TLM_CAF_JC_SYNC, .name = "sync all"};
    int c;

    if (tlm_caf.coll_broken)
        return 0;
    if (telemem_quiet() != TELEMEM_OK) {
        tlm_caf.coll_broken = true;
        tlm_caf_refresh_dead();
        return 0;
    }
    c = tlm_caf_jc(&op, msg, cap);
    if (c < 0)
        return 0;
    *code = c;
    return 1;
}

/* From this many images on, SYNC ALL of the initial team is one
 * collective (sync_all_coll): 2 to 2.8 times faster than the pairwise
 * posts at 4, 16 and 32 images on one node; at 2 images the posts were
 * faster (docs/caf.md, "Performance"). */
#define TLM_CAF_SYNC_ALL_COLL_MIN 4

/* SYNC ALL: in the initial team of TLM_CAF_SYNC_ALL_COLL_MIN images or
 * more one collective (sync_all_coll); otherwise, inside CHANGE TEAM, or
 * once a process has died, SYNC IMAGES with every image of the team: a
 * stopped or failed image is then seen by each image that waits for it,
 * with no agreement step, but each image posts to every other: O(images)
 * messages per image. */
int tlm_caf_sync_team_all(char *msg, size_t cap)
{
    const tlm_caf_team_t *t = tlm_caf.team;
    int code;

    if (t == &tlm_caf.initial && tlm_caf.n >= TLM_CAF_SYNC_ALL_COLL_MIN &&
        sync_all_coll(&code, msg, cap))
        return code;
    return tlm_caf_sync_ranks(t->ranks, t->size, msg, cap);
}

/* gfortran 12 passes ERRMSG= of SYNC ALL, SYNC MEMORY and SYNC IMAGES
 * as the address of a pointer to the variable (the address of the
 * address it passes elsewhere): follow it. */
static char *sync_errmsg(char *errmsg, size_t len)
{
    if (!errmsg || len == 0)
        return NULL;
    return *(char **)(void *)errmsg;
}

void _gfortran_caf_sync_all(int *stat, char *errmsg, size_t errmsg_len)
{
    char msg[256] = "";
    int code;

    tlm_caf_need_init();
    errmsg = sync_errmsg(errmsg, errmsg_len);
    code = tlm_caf_sync_team_all(msg, sizeof msg);
    if (code)
        tlm_caf_report(stat, errmsg, errmsg_len, code, "%s", msg);
    else
        tlm_caf_ok(stat);
}

void _gfortran_caf_sync_memory(int *stat, char *errmsg, size_t errmsg_len)
{
    int rc;

    tlm_caf_need_init();
    tlm_caf_ok(stat);
    errmsg = sync_errmsg(errmsg, errmsg_len);
    rc = telemem_quiet();
    tlm_caf_check(rc, stat, errmsg, errmsg_len, "sync memory", 0);
}

void _gfortran_caf_sync_images(int count, int images[], int *stat,
                               char *errmsg, size_t errmsg_len)
{
    char msg[256] = "";
    int *ranks, i, j, code;
    const tlm_caf_team_t *t;

    tlm_caf_need_init();
    errmsg = sync_errmsg(errmsg, errmsg_len);
    t = tlm_caf.team;
    if (count < 0) { /* SYNC IMAGES (*) */
        code = tlm_caf_sync_ranks(t->ranks, t->size, msg, sizeof msg);
        goto out;
    }
    ranks = malloc(((size_t)count + 1) * sizeof(int));
    if (!ranks)
        tlm_caf_die(1, "sync images: out of memory");
    /* Duplicates first, as OpenCoarrays checks (its tests expect it). */
    for (i = 0; i < count; i++)
        for (j = 0; j < i; j++)
            if (images[j] == images[i]) {
                free(ranks);
                tlm_caf_report(stat, errmsg, errmsg_len,
                               TLM_CAF_STAT_DUP_SYNC_IMAGES,
                               "sync images: image %d appears twice in the "
                               "list", images[i]);
                return;
            }
    for (i = 0; i < count; i++) {
        ranks[i] = tlm_caf_rank_of(images[i]);
        if (ranks[i] < 0) {
            free(ranks);
            tlm_caf_report(stat, errmsg, errmsg_len, TLM_CAF_STAT_INVALID,
                           "sync images: image index %d out of range "
                           "[1, %d]", images[i], t->size);
            return;
        }
    }
    code = tlm_caf_sync_ranks(ranks, count, msg, sizeof msg);
    free(ranks);
out:
    if (code)
        tlm_caf_report(stat, errmsg, errmsg_len, code, "%s", msg);
    else
        tlm_caf_ok(stat);
}

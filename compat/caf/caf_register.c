/* caf_register.c - coarray memory and tokens: caf_register and
 * caf_deregister for every kind gfortran asks for (static and allocatable
 * coarrays in telemem_malloc_all blocks, locks and critical constructs
 * with a Telemem mutex set beside their block, events, coarrays ALLOCATEd
 * inside CHANGE TEAM in memory each image registers, and the memory of
 * allocatable components, which one image allocates alone), and the
 * registration numbers by which the *_by_ref handlers find a token. */
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

/* The registration number of a coarray allocated inside a team: this
 * bit, the team's tag and how many the team allocated before, the same
 * on every image of the team.  Others are numbered in the initial team's
 * order (remember). */
#define TEAM_ID ((int64_t)1 << 62)

tlm_caf_token_t *tlm_caf_token_by_id(int64_t id)
{
    if (id & TEAM_ID) {
        for (tlm_caf_token_t *t = tlm_caf.tokens; t; t = t->next_all)
            if (t->id == id && t->mem)
                return t;
        return NULL;
    }
    if (id < 0 || (uint64_t)id >= tlm_caf.by_id_cap)
        return NULL;
    return tlm_caf.by_id[id];
}

void *tlm_caf_remote(const tlm_caf_token_t *t, int rank, const void *local)
{
    if (!t->bases)
        return rank == tlm_caf.me ? (void *)local : NULL;
    return (char *)t->bases[rank] + ((const char *)local - (char *)t->mem);
}

static int remember(tlm_caf_token_t *t)
{
    if ((size_t)tlm_caf.next_id >= tlm_caf.by_id_cap) {
        size_t cap = tlm_caf.by_id_cap ? 2 * tlm_caf.by_id_cap : 64;
        /* An array of pointers: sizeof(*p) is meant. */
        /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
        tlm_caf_token_t **p = realloc(tlm_caf.by_id, cap * sizeof(*p));
        if (!p)
            return TELEMEM_ERR_NO_MEMORY;
        memset(p + tlm_caf.by_id_cap, 0,
               /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
               (cap - tlm_caf.by_id_cap) * sizeof(*p));
        tlm_caf.by_id = p;
        tlm_caf.by_id_cap = cap;
    }
    t->id = tlm_caf.next_id++;
    tlm_caf.by_id[t->id] = t;
    return TELEMEM_OK;
}

/* Forget and free a token. */
static void token_free(tlm_caf_token_t *t)
{
    if (t->prev_all)
        t->prev_all->next_all = t->next_all;
    else
        tlm_caf.tokens = t->next_all;
    if (t->next_all)
        t->next_all->prev_all = t->prev_all;
    free(t);
}

static bool is_lock(int type)
{
    return type == TLM_CAF_REG_LOCK_STATIC ||
           type == TLM_CAF_REG_LOCK_ALLOC || type == TLM_CAF_REG_CRITICAL;
}

static bool is_event(int type)
{
    return type == TLM_CAF_REG_EVENT_STATIC ||
           type == TLM_CAF_REG_EVENT_ALLOC;
}

/* An image of team t that stopped or failed no longer joins collectives:
 * refuse before entering one (it would wait for ever). */
static int check_running(const tlm_caf_team_t *t, int *stat, char *errmsg,
                         size_t len, const char *what)
{
    tlm_caf_refresh_dead();
    for (int i = 0; i < t->size; i++) {
        int s = tlm_caf_state(t->ranks[i]);
        if (s == TLM_CAF_RUNNING)
            continue;
        tlm_caf_report(stat, errmsg, len,
                       s == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                           : TLM_CAF_STAT_STOPPED_IMAGE,
                       "%s: image %d%s has %s", what, i + 1,
                       t == &tlm_caf.initial ? "" : " of the team",
                       s == TLM_CAF_FAILED ? "failed" : "stopped");
        return 1;
    }
    return 0;
}

/* Before the Telemem collective of an ALLOCATE or DEALLOCATE: every image
 * this one knows of runs (check_running), and in the initial team the
 * images agree (caf_jcoll.c's slots) that every one of them runs and is
 * in the same statement: an image that stops meanwhile takes part in that
 * exchange, but not in the allocation's collective, which would wait for
 * it until TELEMEM_TIMEOUT.  1 (reported) when they do not; inside a
 * team, or once a process died, the slots are skipped (the allocation's
 * collective fails by itself then). */
static int agree(tlm_caf_jc_what_t what, size_t size, int *stat,
                 char *errmsg, size_t len)
{
    char msg[160];
    tlm_caf_jc_t op = {.what = what, .bytes = size,
                       .name = what == TLM_CAF_JC_ALLOC ? "allocate coarray"
                                                        : "deallocate coarray"};
    int code;

    if (check_running(&tlm_caf.initial, stat, errmsg, len, op.name))
        return 1;
    if (tlm_caf.n < 2)
        return 0;
    code = tlm_caf_jc(&op, msg, sizeof msg);
    if (code <= 0)
        return 0;
    tlm_caf_report(stat, errmsg, len, code, "%s", msg);
    return 1;
}

/* Every image registers its coarrays in the same order: allocate one
 * telemem_malloc_all block each, zero it, and synchronise (an ALLOCATE
 * of a coarray is an image control statement). */
static int register_collective(tlm_caf_token_t *t, size_t size, int *stat,
                               char *errmsg, size_t len)
{
    size_t bytes = size;
    int rc;

    if (agree(TLM_CAF_JC_ALLOC, size, stat, errmsg, len))
        return 1;
    if (is_lock(t->type) || is_event(t->type)) {
        /* One 64-bit word per lock or event. */
        t->nlocks = size ? size : 1;
        bytes = t->nlocks * sizeof(int64_t);
    }
    t->bases = calloc((size_t)tlm_caf.n, sizeof(void *));
    if (!t->bases)
        return tlm_caf_check(TELEMEM_ERR_NO_MEMORY, stat, errmsg, len,
                             "allocate coarray", 0);
    rc = telemem_malloc_all(bytes, t->bases);
    if (tlm_caf_check(rc, stat, errmsg, len, "allocate coarray", 0))
        goto err_bases;
    t->mem = t->bases[tlm_caf.me];
    t->size = bytes;
    memset(t->mem, 0, bytes);
    if (is_lock(t->type)) {
        rc = telemem_mutexes_create((int)t->nlocks, &t->mutex_set);
        if (tlm_caf_check(rc, stat, errmsg, len, "allocate lock", 0))
            goto err_block;
    }
    rc = remember(t);
    if (rc == TELEMEM_OK)
        rc = telemem_barrier();
    if (tlm_caf_check(rc, stat, errmsg, len, "allocate coarray", 0))
        goto err_block;
    return 0;

err_block:
    telemem_free_all(t->mem);
err_bases:
    free(t->bases);
    t->bases = NULL;
    return 1;
}

/* Inside CHANGE TEAM an ALLOCATE of a coarray is a statement of the
 * current team's images only: images of other teams never make it, so
 * no job-wide collective (telemem_malloc_all) may serve it.  Each image
 * zeroes and registers memory of its own (telemem_register: puts and gets
 * to it take the polling path), and the team's images exchange the
 * addresses between two syncs of theirs.  Lock coarrays need a Telemem
 * mutex set, which only the whole job can create: refused. */
static int register_team(tlm_caf_token_t *t, size_t size, int *stat,
                         char *errmsg, size_t len)
{
    tlm_caf_team_t *team = tlm_caf.team;
    size_t bytes = size ? size : 1;
    int64_t *all;
    char msg[256] = "";
    int rc, code;

    if (is_lock(t->type)) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "allocate lock: a lock coarray cannot be allocated "
                       "inside CHANGE TEAM (allocate it in the initial "
                       "team)");
        return 1;
    }
    if (check_running(team, stat, errmsg, len, "allocate coarray"))
        return 1;
    if (is_event(t->type)) {
        t->nlocks = bytes;
        bytes = t->nlocks * sizeof(int64_t);
    }
    t->bases = calloc((size_t)tlm_caf.n, sizeof(void *));
    all = calloc((size_t)team->size, sizeof(int64_t));
    if (!t->bases || !all || posix_memalign(&t->mem, 64, bytes) != 0) {
        t->mem = NULL;
        rc = TELEMEM_ERR_NO_MEMORY;
        goto fail;
    }
    memset(t->mem, 0, bytes);
    rc = telemem_register(t->mem, bytes);
    if (rc != TELEMEM_OK)
        goto fail;
    code = tlm_caf_team_exchange(team, (int64_t)(uintptr_t)t->mem, all,
                                 "allocate coarray", msg, sizeof msg);
    if (code) {
        telemem_deregister(t->mem);
        tlm_caf_report(stat, errmsg, len, code, "allocate coarray: %s",
                       msg);
        goto out;
    }
    for (int i = 0; i < team->size; i++)
        t->bases[team->ranks[i]] = (void *)(uintptr_t)all[i];
    t->size = bytes;
    t->team = team;
    t->id = TEAM_ID | (int64_t)team->cid << 24 | (team->allocs++ & 0xffffff);
    free(all);
    return 0;
fail:
    tlm_caf_check(rc, stat, errmsg, len, "allocate coarray", 0);
out:
    free(t->mem);
    t->mem = NULL;
    free(t->bases);
    t->bases = NULL;
    free(all);
    return 1;
}

/* DEALLOCATE of a coarray allocated inside a team: once the team's
 * images are past their accesses to it (a sync of theirs, wherever the
 * statement is), each forgets its own memory. */
static void deregister_team(tlm_caf_token_t *t, int *stat, char *errmsg,
                            size_t len)
{
    char msg[256] = "";
    int code = tlm_caf_sync_ranks(t->team->ranks, t->team->size, msg,
                                  sizeof msg);
    if (code) {
        tlm_caf_report(stat, errmsg, len, code, "deallocate coarray: %s",
                       msg);
        return;
    }
    telemem_deregister(t->mem);
    free(t->mem);
    t->mem = NULL;
    free(t->bases);
    t->bases = NULL;
    t->team = NULL;
}

void _gfortran_caf_register(size_t size, int type, tlm_caf_token_p *token,
                            tlm_gfc_desc_t *desc, int *stat, char *errmsg,
                            size_t errmsg_len)
{
    tlm_caf_token_t *t;

    tlm_caf_need_init();
    tlm_caf_ok(stat);
    if (type == TLM_CAF_REG_ALLOCATE_ONLY && *token) {
        t = *token;
    } else {
        t = calloc(1, sizeof *t);
        if (!t) {
            tlm_caf_report(stat, errmsg, errmsg_len,
                           tlm_caf_stat_of(TELEMEM_ERR_NO_MEMORY),
                           "allocate coarray: out of memory (%zu bytes)",
                           sizeof *t);
            return;
        }
        t->id = -1;
        t->mutex_set = -1;
        t->type = type;
        t->next_all = tlm_caf.tokens;
        if (tlm_caf.tokens)
            tlm_caf.tokens->prev_all = t;
        tlm_caf.tokens = t;
    }
    t->desc = desc;
    if (type == TLM_CAF_REG_REGISTER_ONLY) {
        *token = t;
        return;
    }
    if (type == TLM_CAF_REG_ALLOCATE_ONLY) {
        /* A component: this image alone allocates it; others reach it
         * through the *_by_ref handlers. */
        t->mem = calloc(1, size ? size : 1);
        if (!t->mem) {
            tlm_caf_report(stat, errmsg, errmsg_len,
                           tlm_caf_stat_of(TELEMEM_ERR_NO_MEMORY),
                           "allocate component: out of memory (%zu bytes)",
                           size);
            return;
        }
        t->size = size;
    } else if (tlm_caf.team != &tlm_caf.initial
                   ? register_team(t, size, stat, errmsg, errmsg_len)
                   : register_collective(t, size, stat, errmsg,
                                         errmsg_len)) {
        token_free(t);
        return;
    }
    if (desc)
        desc->base_addr = t->mem;
    *token = t;
}

void _gfortran_caf_deregister(tlm_caf_token_p *token, int type, int *stat,
                              char *errmsg, size_t errmsg_len)
{
    tlm_caf_token_t *t = token ? *token : NULL;
    int rc = TELEMEM_OK;

    tlm_caf_ok(stat);
    if (!t)
        return;
    if (t->team) {
        deregister_team(t, stat, errmsg, errmsg_len);
        if (t->team)
            return; /* STAT= set */
    } else if (t->bases) {
        if (agree(TLM_CAF_JC_DEALLOC, t->size, stat, errmsg, errmsg_len))
            return;
        if (t->mutex_set >= 0)
            rc = telemem_mutexes_destroy(t->mutex_set);
        if (rc == TELEMEM_OK)
            rc = telemem_free_all(t->mem);
        if (t->id >= 0)
            tlm_caf.by_id[t->id] = NULL;
        free(t->bases);
        t->bases = NULL;
        free(t->held);
        t->held = NULL;
        t->nheld = t->capheld = 0;
        tlm_caf_check(rc, stat, errmsg, errmsg_len, "deallocate coarray",
                      0);
    } else {
        free(t->mem);
    }
    t->mem = NULL;
    if (type == TLM_CAF_DEREG_DEALLOCATE_ONLY)
        return; /* the component's token stays for the next ALLOCATE */
    token_free(t);
    *token = NULL;
}

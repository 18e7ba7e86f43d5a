/* caf_team.c - teams: FORM TEAM (the members learn each other's team
 * numbers and new indices through the control blocks' exchange slots),
 * CHANGE TEAM / END TEAM (image indices, this_image, num_images and SYNC
 * ALL then refer to the team), SYNC TEAM, TEAM_NUMBER and GET_TEAM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

int tlm_caf_team_exchange(const tlm_caf_team_t *t, int64_t v, int64_t *out,
                          const char *what, char *msg, size_t cap)
{
    int i, rc, code;

    for (i = 0; i < t->size; i++) {
        int r = t->ranks[i];
        int64_t *slot = (int64_t *)tlm_caf.ctl_bases[r] +
                        2 * (ptrdiff_t)tlm_caf.n + tlm_caf.me;
        if (r == tlm_caf.me) {
            tlm_caf.ctl.xchg[r] = v;
            continue;
        }
        rc = telemem_put(r, slot, &v, sizeof v);
        if (rc != TELEMEM_OK) {
            snprintf(msg, cap, "%s: image %d: %s", what, r + 1,
                     telemem_strerror(rc));
            return tlm_caf_stat_of(rc);
        }
    }
    /* The puts are complete before the posts of the sync. */
    code = tlm_caf_sync_ranks(t->ranks, t->size, msg, cap);
    if (code)
        return code;
    for (i = 0; i < t->size; i++)
        out[i] = tlm_caf.ctl.xchg[t->ranks[i]];
    /* Nobody writes the slots again before everyone has read them. */
    return tlm_caf_sync_ranks(t->ranks, t->size, msg, cap);
}

/* The tag of a new team's collectives: every member of the parent forms
 * its teams in the same order, so the members of one new team compute the
 * same value (splitmix64 of the parent's tag, how many teams the parent
 * formed, and the team number); the initial team's is 0. */
static uint32_t team_cid(tlm_caf_team_t *parent, int team_number)
{
    uint64_t z = ((uint64_t)parent->cid << 32) ^
                 ((uint64_t)++parent->formed << 20) ^ (uint32_t)team_number;

    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (uint32_t)z ? (uint32_t)z : 1;
}

void _gfortran_caf_form_team(int team_number, tlm_caf_team_p *team,
                             int index)
{
    tlm_caf_team_t *cur, *t;
    int64_t *all, mine;
    int i, k, code;
    char msg[256] = "";

    tlm_caf_need_init();
    cur = tlm_caf.team;
    all = calloc((size_t)cur->size, sizeof(int64_t));
    t = calloc(1, sizeof *t);
    if (!all || !t)
        tlm_caf_die(1, "form team: out of memory");
    /* team number in the high half, NEW_INDEX (0: none) in the low. */
    mine = (int64_t)(((uint64_t)(uint32_t)team_number << 32) |
                     (uint32_t)index);
    code = tlm_caf_team_exchange(cur, mine, all, "form team", msg,
                                 sizeof msg);
    if (code)
        tlm_caf_die(1, "%s", msg);
    t->number = team_number;
    t->parent = cur;
    t->cid = team_cid(cur, team_number);
    t->ranks = malloc((size_t)cur->size * sizeof(int));
    if (!t->ranks)
        tlm_caf_die(1, "form team: out of memory");
    for (i = 0; i < cur->size; i++)
        if ((int)(uint32_t)((uint64_t)all[i] >> 32) == team_number)
            t->ranks[t->size++] = cur->ranks[i];
    if (index > 0) {
        /* Place each member at its NEW_INDEX. */
        /* t->size >= 1: this image is a member of its own team. */
        int *by_index = calloc((size_t)t->size + 1, sizeof(int));
        if (!by_index)
            tlm_caf_die(1, "form team: out of memory");
        for (i = 0, k = 0; i < cur->size; i++) {
            int ni = (int)(uint32_t)all[i];
            if ((int)(uint32_t)((uint64_t)all[i] >> 32) != team_number)
                continue;
            if (ni < 1 || ni > t->size)
                tlm_caf_die(1, "form team: new_index %d out of range "
                            "[1, %d]", ni, t->size);
            by_index[ni - 1] = cur->ranks[i];
            k++;
        }
        memcpy(t->ranks, by_index, (size_t)t->size * sizeof(int));
        free(by_index);
    }
    for (i = 0; i < t->size; i++)
        if (t->ranks[i] == tlm_caf.me)
            t->me = i;
    free(all);
    t->next_all = tlm_caf.teams;
    tlm_caf.teams = t;
    *team = t;
}

void _gfortran_caf_change_team(tlm_caf_team_p *team, int coselector)
{
    tlm_caf_team_t *t = team ? *team : NULL;
    char msg[256] = "";
    int code;

    (void)coselector;
    tlm_caf_need_init();
    if (!t)
        tlm_caf_die(1, "change team: the team variable was not formed");
    t->parent = tlm_caf.team;
    t->active = true;
    tlm_caf.team = t;
    code = tlm_caf_sync_ranks(t->ranks, t->size, msg, sizeof msg);
    if (code)
        tlm_caf_die(1, "%s", msg);
}

void _gfortran_caf_end_team(tlm_caf_team_p *team)
{
    tlm_caf_team_t *t = tlm_caf.team;
    char msg[256] = "";
    int code;

    (void)team;
    tlm_caf_need_init();
    if (t == &tlm_caf.initial)
        tlm_caf_die(1, "end team: not inside CHANGE TEAM");
    code = tlm_caf_sync_ranks(t->ranks, t->size, msg, sizeof msg);
    t->active = false;
    tlm_caf.team = t->parent;
    if (code)
        tlm_caf_die(1, "%s", msg);
}

void _gfortran_caf_sync_team(tlm_caf_team_p *team, int unused)
{
    tlm_caf_team_t *t = team && *team ? *team : tlm_caf.team;
    char msg[256] = "";
    int code;

    (void)unused;
    tlm_caf_need_init();
    code = tlm_caf_sync_ranks(t->ranks, t->size, msg, sizeof msg);
    if (code)
        tlm_caf_die(1, "%s", msg);
}

int _gfortran_caf_team_number(tlm_caf_team_p *team)
{
    tlm_caf_need_init();
    if (team && *team)
        return ((tlm_caf_team_t *)*team)->number;
    return tlm_caf.team->number;
}

tlm_caf_team_p _gfortran_caf_get_team(int32_t *level)
{
    tlm_caf_team_t *t;

    tlm_caf_need_init();
    t = tlm_caf.team;
    /* ISO_FORTRAN_ENV's INITIAL_TEAM, PARENT_TEAM, CURRENT_TEAM. */
    if (level && *level == -1)
        t = &tlm_caf.initial;
    else if (level && *level == -2 && t->parent)
        t = t->parent;
    return t;
}

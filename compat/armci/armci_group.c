/* armci_group.c - ARMCI groups: the world and default groups, group
 * creation (ARMCI_Group_create*, ARMCIX_Group_split/dup) and the group
 * collectives libarmci builds on (barrier, broadcast, allgather, fresh
 * context ids).  The world group uses Telemem's collectives; other groups
 * use libarmci's active messages, gathered at the group's rank 0. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "armci_internal.h"

static tlm_armci_grp_t *grp_new(int size, const int *members)
{
    int n = tlm_armci.n;
    tlm_armci_grp_t *g =
        malloc(sizeof *g + ((size_t)size + (size_t)n) * sizeof(int));
    if (!g)
        tlm_armci_fail("ARMCI_Group_create", "out of memory (%d members)",
                       size);
    g->magic = TLM_ARMCI_GRP_MAGIC;
    g->ctx = 0;
    g->coll_seq = 0;
    g->alloc_seq = 0;
    g->size = size;
    g->rank = -1;
    g->abs_to_grp = g->grp_to_abs + size;
    for (int i = 0; i < n; i++)
        g->abs_to_grp[i] = -1;
    for (int i = 0; i < size; i++) {
        g->grp_to_abs[i] = members[i];
        g->abs_to_grp[members[i]] = i;
        if (members[i] == tlm_armci.me)
            g->rank = i;
    }
    return g;
}

static void grp_publish(tlm_armci_grp_t *g, ARMCI_Group *out)
{
    out->grp_to_abs = g->grp_to_abs;
    out->abs_to_grp = g->abs_to_grp;
    out->rank = g->rank;
    out->size = g->size;
}

static void grp_not_member(ARMCI_Group *out)
{
    out->grp_to_abs = NULL;
    out->abs_to_grp = NULL;
    out->rank = -1;
    out->size = 0;
}

tlm_armci_grp_t *tlm_armci_grp_get(const char *call, const ARMCI_Group *g)
{
    tlm_armci_check_ready(call);
    if (!g)
        tlm_armci_fail(call, "group is NULL");
    if (!g->grp_to_abs)
        tlm_armci_fail(call,
                       "this rank is not a member of group %p (rank %d, "
                       "size %d)",
                       (const void *)g, g->rank, g->size);
    tlm_armci_grp_t *info =
        (tlm_armci_grp_t *)((char *)g->grp_to_abs -
                            offsetof(tlm_armci_grp_t, grp_to_abs));
    if (info->magic != TLM_ARMCI_GRP_MAGIC)
        tlm_armci_fail(call,
                       "%p is not a group made by ARMCI (freed, or never "
                       "created)",
                       (const void *)g);
    return info;
}

void tlm_armci_grp_init(void)
{
    int n = tlm_armci.n;
    int *all = malloc((size_t)n * sizeof(int));
    if (!all)
        tlm_armci_fail("ARMCI_Init", "out of memory (%d ranks)", n);
    for (int i = 0; i < n; i++)
        all[i] = i;
    tlm_armci.world = grp_new(n, all);
    free(all);
    tlm_armci_mpi_detect();
    tlm_armci_mpi_world(&tlm_armci.world_grp);
    grp_publish(tlm_armci.world, &tlm_armci.world_grp);
    tlm_armci.default_grp = tlm_armci.world_grp;
}

void tlm_armci_grp_fini(void)
{
    tlm_armci_mpi_free(&tlm_armci.world_grp);
    tlm_armci.world->magic = 0;
    free(tlm_armci.world);
    tlm_armci.world = NULL;
    memset(&tlm_armci.world_grp, 0, sizeof tlm_armci.world_grp);
    memset(&tlm_armci.default_grp, 0, sizeof tlm_armci.default_grp);
}

/* ------------------------------------------------------------------------
 * Collectives */

static void coll_send(const char *call, tlm_armci_grp_t *g, int grank,
                      uint32_t seq, const void *buf, size_t bytes)
{
    uint32_t args[4] = {TLM_ARMCI_AM_COLL, g->ctx, seq, (uint32_t)g->rank};
    int rank = g->grp_to_abs[grank];
    tlm_armci_rc(call,
                 telemem_am_request(rank, tlm_armci.am_id, buf, bytes, args,
                                    4),
                 "group collective message to rank %d", rank);
}

/* Receive the collective message of step seq from group rank src. */
static void coll_recv(const char *call, tlm_armci_grp_t *g, int src,
                      uint32_t seq, void *buf, size_t bytes)
{
    tlm_armci_msg_t *m =
        tlm_armci_inbox_wait(call, TLM_ARMCI_AM_COLL, g->ctx, seq, src);
    if (m->bytes != bytes)
        tlm_armci_fail(call,
                       "group collective mismatch: group rank %d sent %zu "
                       "bytes, %zu expected (do all members make the same "
                       "calls with the same sizes?)",
                       src, m->bytes, bytes);
    if (bytes)
        memcpy(buf, m->data, bytes);
    free(m);
}

void tlm_armci_grp_allgather(const char *call, tlm_armci_grp_t *g,
                             const void *in, void *out, size_t bytes)
{
    if (g->ctx == 0) {
        tlm_armci_rc(call, telemem_allgather(in, out, bytes),
                     "allgather of %zu bytes", bytes);
        return;
    }
    uint32_t seq = ++g->coll_seq;
    unsigned char *o = out;
    if (bytes)
        memmove(o + (size_t)g->rank * bytes, in, bytes);
    if (g->size == 1)
        return;
    size_t total = (size_t)g->size * bytes;
    if (g->rank != 0) {
        coll_send(call, g, 0, seq, in, bytes);
        coll_recv(call, g, 0, seq, out, total);
        return;
    }
    for (int r = 1; r < g->size; r++)
        coll_recv(call, g, r, seq, o + (size_t)r * bytes, bytes);
    for (int r = 1; r < g->size; r++)
        coll_send(call, g, r, seq, out, total);
}

void tlm_armci_grp_barrier(const char *call, tlm_armci_grp_t *g)
{
    if (g->ctx == 0) {
        tlm_armci_rc(call, telemem_barrier(), "barrier");
        return;
    }
    tlm_armci_grp_allgather(call, g, NULL, NULL, 0);
}

void tlm_armci_grp_bcast(const char *call, tlm_armci_grp_t *g, void *buf,
                         size_t bytes, int root)
{
    if (root < 0 || root >= g->size)
        tlm_armci_fail(call, "root %d out of range [0, %d)", root, g->size);
    if (g->ctx == 0) {
        tlm_armci_rc(call, telemem_broadcast(buf, bytes, root),
                     "broadcast of %zu bytes from rank %d", bytes, root);
        return;
    }
    uint32_t seq = ++g->coll_seq;
    if (g->rank == root) {
        for (int r = 0; r < g->size; r++)
            if (r != root)
                coll_send(call, g, r, seq, buf, bytes);
    } else {
        coll_recv(call, g, root, seq, buf, bytes);
    }
}

uint32_t tlm_armci_grp_new_ctx(const char *call, tlm_armci_grp_t *g)
{
    uint32_t *all = malloc((size_t)g->size * sizeof *all);
    if (!all)
        tlm_armci_fail(call, "out of memory");
    uint32_t mine = tlm_armci.next_ctx;
    tlm_armci_grp_allgather(call, g, &mine, all, sizeof mine);
    uint32_t ctx = 0;
    for (int i = 0; i < g->size; i++)
        if (all[i] > ctx)
            ctx = all[i];
    free(all);
    /* Any group this rank joins later gets a larger id, so two live groups
     * of one rank never share an id (disjoint groups may). */
    tlm_armci.next_ctx = ctx + 1;
    return ctx;
}

/* ------------------------------------------------------------------------
 * Creation */

typedef struct split_entry {
    int32_t color, key;
    uint32_t next_ctx;
} split_entry_t;

typedef struct member {
    int key, prank;
} member_t;

static int member_cmp(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->prank > y->prank) - (x->prank < y->prank);
}

/* Collective over the parent: the ranks of @p color form the new group,
 * ordered by key, then parent rank; color < 0 joins none.  On a member,
 * members_p (if not NULL) receives the new group's parent ranks. */
static void grp_split(const char *call, const ARMCI_Group *parent, int color,
                      int key, ARMCI_Group *out, int *members_p)
{
    tlm_armci_grp_t *p = tlm_armci_grp_get(call, parent);
    if (!out)
        tlm_armci_fail(call, "output group is NULL");
    if (color < 0)
        color = -1;
    split_entry_t mine = {color, key, tlm_armci.next_ctx};
    split_entry_t *all = malloc((size_t)p->size * sizeof *all);
    member_t *m = malloc((size_t)p->size * sizeof *m);
    int *abs = malloc((size_t)p->size * sizeof *abs);
    if (!all || !m || !abs)
        tlm_armci_fail(call, "out of memory (%d ranks)", p->size);
    tlm_armci_grp_allgather(call, p, &mine, all, sizeof mine);
    uint32_t ctx = 0;
    int count = 0;
    for (int i = 0; i < p->size; i++) {
        if (all[i].next_ctx > ctx)
            ctx = all[i].next_ctx;
        if (color >= 0 && all[i].color == color)
            m[count++] = (member_t){all[i].key, i};
    }
    tlm_armci.next_ctx = ctx + 1;
    /* Every parent member takes part in the communicator split. */
    ARMCI_Group result;
    tlm_armci_mpi_child(parent, &result, color, key);
    if (color < 0) {
        grp_not_member(&result);
    } else {
        qsort(m, (size_t)count, sizeof *m, member_cmp);
        for (int i = 0; i < count; i++) {
            abs[i] = p->grp_to_abs[m[i].prank];
            if (members_p)
                members_p[i] = m[i].prank;
        }
        tlm_armci_grp_t *g = grp_new(count, abs);
        g->ctx = ctx;
        grp_publish(g, &result);
    }
    free(all);
    free(m);
    free(abs);
    *out = result;
}

/* Check pid_list (parent ranks, each once); return this rank's place in
 * it, or -1, and the smallest rank listed (INT_MAX for an empty list). */
static int check_list(const char *call, const tlm_armci_grp_t *p,
                      int grp_size, const int *pid_list, int *min_p)
{
    char *seen = calloc((size_t)p->size, 1);
    if (!seen)
        tlm_armci_fail(call, "out of memory");
    int key = -1, min = INT_MAX;
    for (int i = 0; i < grp_size; i++) {
        int r = pid_list[i];
        if (r < 0 || r >= p->size)
            tlm_armci_fail(call, "pid_list[%d] = %d out of range [0, %d)", i,
                           r, p->size);
        if (seen[r])
            tlm_armci_fail(call, "pid_list[%d] = %d appears twice", i, r);
        seen[r] = 1;
        if (r == p->rank)
            key = i;
        if (r < min)
            min = r;
    }
    free(seen);
    *min_p = min;
    return key;
}

/* Like MPI_Comm_create, which ARMCI-MPI uses: each rank may pass its own
 * list (Global Arrays makes one group per node so), the ranks of one list
 * must all pass that list, and disjoint lists make disjoint groups.  A
 * list is told from the others by its smallest rank (disjoint lists have
 * different ones); its order gives the group ranks. */
void PARMCI_Group_create_child(int grp_size, int *pid_list,
                               ARMCI_Group *group_out,
                               ARMCI_Group *group_parent)
{
    static const char call[] = "ARMCI_Group_create_child";
    tlm_armci_grp_t *p = tlm_armci_grp_get(call, group_parent);
    if (grp_size < 0 || grp_size > p->size)
        tlm_armci_fail(call, "grp_size %d out of range [0, %d]", grp_size,
                       p->size);
    if (grp_size > 0 && !pid_list)
        tlm_armci_fail(call, "pid_list is NULL (grp_size %d)", grp_size);
    int min = INT_MAX;
    int key = check_list(call, p, grp_size, pid_list, &min);
    int *got = malloc((size_t)p->size * sizeof *got);
    if (!got)
        tlm_armci_fail(call, "out of memory");
    grp_split(call, group_parent, key >= 0 ? min : -1, key, group_out, got);
    if (key >= 0) {
        /* Every member of my list must have passed the same list. */
        for (int i = 0; i < grp_size; i++)
            if (i >= group_out->size || got[i] != pid_list[i])
                tlm_armci_fail(call,
                               "the ranks of this rank's list (%d ranks, "
                               "from %d) did not all pass the same list: "
                               "group rank %d is parent rank %d here, but "
                               "%d there",
                               grp_size, min, i, pid_list[i],
                               i < group_out->size ? got[i] : -1);
        if (group_out->size != grp_size)
            tlm_armci_fail(call,
                           "ranks outside this rank's list (%d ranks, from "
                           "%d) passed a list that overlaps it",
                           grp_size, min);
    }
    free(got);
}
TLM_ARMCI_ALIAS(Group_create_child);

void PARMCI_Group_create(int grp_size, int *pid_list, ARMCI_Group *group_out)
{
    tlm_armci_check_ready("ARMCI_Group_create");
    ARMCI_Group parent = tlm_armci.default_grp;
    PARMCI_Group_create_child(grp_size, pid_list, group_out, &parent);
}
TLM_ARMCI_ALIAS(Group_create);

int ARMCIX_Group_split(ARMCI_Group *parent, int color, int key,
                       ARMCI_Group *new_group)
{
    grp_split("ARMCIX_Group_split", parent, color, key, new_group, NULL);
    return 0;
}

int ARMCIX_Group_dup(ARMCI_Group *parent, ARMCI_Group *new_group)
{
    tlm_armci_grp_t *p = tlm_armci_grp_get("ARMCIX_Group_dup", parent);
    grp_split("ARMCIX_Group_dup", parent, 0, p->rank, new_group, NULL);
    return 0;
}

void PARMCI_Group_free(ARMCI_Group *group)
{
    static const char call[] = "ARMCI_Group_free";
    tlm_armci_check_ready(call);
    if (!group)
        tlm_armci_fail(call, "group is NULL");
    if (!group->grp_to_abs) {
        tlm_armci_mpi_free(group);
        grp_not_member(group);
        return;
    }
    tlm_armci_grp_t *g = tlm_armci_grp_get(call, group);
    if (g == tlm_armci.world)
        tlm_armci_fail(call, "the world group cannot be freed");
    tlm_armci_mpi_free(group);
    g->magic = 0;
    free(g);
    grp_not_member(group);
}
TLM_ARMCI_ALIAS(Group_free);

int PARMCI_Group_rank(ARMCI_Group *group, int *rank)
{
    static const char call[] = "ARMCI_Group_rank";
    tlm_armci_check_ready(call);
    if (!group || !rank)
        tlm_armci_fail(call, "%s is NULL", group ? "rank" : "group");
    if (group->grp_to_abs)
        tlm_armci_grp_get(call, group);
    *rank = group->rank;
    return group->rank < 0 ? 1 : 0; /* 1: not a member (as ARMCI-MPI) */
}
TLM_ARMCI_ALIAS(Group_rank);

void PARMCI_Group_size(ARMCI_Group *group, int *size)
{
    static const char call[] = "ARMCI_Group_size";
    tlm_armci_check_ready(call);
    if (!group || !size)
        tlm_armci_fail(call, "%s is NULL", group ? "size" : "group");
    if (group->grp_to_abs)
        tlm_armci_grp_get(call, group);
    *size = group->size;
}
TLM_ARMCI_ALIAS(Group_size);

void PARMCI_Group_set_default(ARMCI_Group *group)
{
    tlm_armci_grp_get("ARMCI_Group_set_default", group);
    tlm_armci.default_grp = *group;
}
TLM_ARMCI_ALIAS(Group_set_default);

void PARMCI_Group_get_default(ARMCI_Group *group_out)
{
    static const char call[] = "ARMCI_Group_get_default";
    tlm_armci_check_ready(call);
    if (!group_out)
        tlm_armci_fail(call, "group_out is NULL");
    *group_out = tlm_armci.default_grp;
}
TLM_ARMCI_ALIAS(Group_get_default);

void PARMCI_Group_get_world(ARMCI_Group *group_out)
{
    static const char call[] = "ARMCI_Group_get_world";
    tlm_armci_check_ready(call);
    if (!group_out)
        tlm_armci_fail(call, "group_out is NULL");
    *group_out = tlm_armci.world_grp;
}
TLM_ARMCI_ALIAS(Group_get_world);

int PARMCI_Absolute_id(ARMCI_Group *group, int group_rank)
{
    static const char call[] = "ARMCI_Absolute_id";
    tlm_armci_grp_t *g = tlm_armci_grp_get(call, group);
    if (group_rank < 0 || group_rank >= g->size)
        tlm_armci_fail(call, "group_rank %d out of range [0, %d)",
                       group_rank, g->size);
    return g->grp_to_abs[group_rank];
}
TLM_ARMCI_ALIAS(Absolute_id);

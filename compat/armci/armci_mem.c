/* armci_mem.c - ARMCI memory: collective allocations over a group
 * (ARMCI_Malloc*, ARMCI_Free*, the memdev variants), local buffers, and
 * ARMCI_Access_begin/end.  World allocations are Telemem blocks
 * (telemem_malloc_all); a smaller group's are local memory registered with
 * telemem_register and exchanged within the group.  A rank that asks for 0
 * bytes sees NULL for itself and its peers see NULL too (as ARMCI-MPI). */
#include <stdlib.h>
#include <string.h>

#include "armci_internal.h"

typedef struct alloc {
    struct alloc *next;
    tlm_armci_grp_t *grp; /* the group it was made over */
    uint32_t ctx;
    uint64_t id;    /* the group's allocation counter at creation */
    void *block;    /* telemem_malloc_all block, or malloc'd memory */
    void *user;     /* this rank's pointer as the program sees it */
    size_t bytes;
    bool world;     /* block from telemem_malloc_all */
    bool all_zero;  /* every member asked for 0 bytes */
} alloc_t;

static alloc_t *allocs; /* under tlm_armci.lock */

static void add(alloc_t *a)
{
    pthread_mutex_lock(&tlm_armci.lock);
    alloc_t **pp = &allocs;
    while (*pp)
        pp = &(*pp)->next;
    *pp = a;
    pthread_mutex_unlock(&tlm_armci.lock);
}

static void unlink_alloc(alloc_t *a)
{
    pthread_mutex_lock(&tlm_armci.lock);
    for (alloc_t **pp = &allocs; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    pthread_mutex_unlock(&tlm_armci.lock);
}

/* The allocation whose local part starts at ptr (any_byte: contains it). */
static alloc_t *find_ptr(const void *ptr, bool any_byte)
{
    alloc_t *found = NULL;
    const char *p = ptr;
    pthread_mutex_lock(&tlm_armci.lock);
    for (alloc_t *a = allocs; a; a = a->next) {
        const char *u = a->user;
        if (!u)
            continue;
        if (p == u || (any_byte && (uintptr_t)p >= (uintptr_t)u &&
                       (uintptr_t)p - (uintptr_t)u < a->bytes)) {
            found = a;
            break;
        }
    }
    pthread_mutex_unlock(&tlm_armci.lock);
    return found;
}

static alloc_t *find_id(uint32_t ctx, uint64_t id)
{
    alloc_t *found = NULL;
    pthread_mutex_lock(&tlm_armci.lock);
    for (alloc_t *a = allocs; a; a = a->next)
        if (a->ctx == ctx && a->id == id)
            found = a;
    pthread_mutex_unlock(&tlm_armci.lock);
    return found;
}

/* The most recent allocation of the group where everyone had 0 bytes. */
static alloc_t *find_all_zero(uint32_t ctx)
{
    alloc_t *found = NULL;
    pthread_mutex_lock(&tlm_armci.lock);
    for (alloc_t *a = allocs; a; a = a->next)
        if (a->ctx == ctx && a->all_zero)
            found = a;
    pthread_mutex_unlock(&tlm_armci.lock);
    return found;
}

static int malloc_group(const char *call, void **ptr_arr, armci_size_t bytes,
                        const ARMCI_Group *group)
{
    tlm_armci_grp_t *g = tlm_armci_grp_get(call, group);
    if (!ptr_arr)
        tlm_armci_fail(call, "ptr_arr is NULL");
    tlm_armci_check_bytes(call, "size", bytes);
    alloc_t *a = calloc(1, sizeof *a);
    if (!a)
        tlm_armci_fail(call, "out of memory");
    a->grp = g;
    a->ctx = g->ctx;
    a->id = ++g->alloc_seq;
    a->bytes = (size_t)bytes;
    a->all_zero = true;
    if (g->ctx == 0) {
        /* The world: a Telemem block per rank, and who asked for 0. */
        int n = g->size;
        int64_t mine = bytes, *sizes = malloc((size_t)n * sizeof *sizes);
        void **bases = malloc((size_t)n * sizeof *bases);
        if (!sizes || !bases)
            tlm_armci_fail(call, "out of memory (%d ranks)", n);
        tlm_armci_rc(call, telemem_allgather(&mine, sizes, sizeof mine),
                     "allgather of sizes");
        tlm_armci_rc(call, telemem_malloc_all((size_t)bytes, bases),
                     "telemem_malloc_all of %ld bytes", bytes);
        for (int i = 0; i < n; i++) {
            ptr_arr[i] = sizes[i] > 0 ? bases[i] : NULL;
            if (sizes[i] > 0)
                a->all_zero = false;
        }
        a->world = true;
        a->block = bases[g->rank];
        free(sizes);
        free(bases);
    } else {
        if (bytes > 0) {
            size_t rounded = ((size_t)bytes + 63) & ~(size_t)63;
            a->block = aligned_alloc(64, rounded);
            if (!a->block)
                tlm_armci_fail(call, "out of memory (%ld bytes)", bytes);
            /* Peers learn the address only below, after registration. */
            tlm_armci_rc(call, telemem_register(a->block, (size_t)bytes),
                         "telemem_register of %ld bytes", bytes);
        }
        tlm_armci_grp_allgather(call, g, &a->block, ptr_arr,
                                sizeof a->block);
        for (int i = 0; i < g->size; i++)
            if (ptr_arr[i])
                a->all_zero = false;
    }
    a->user = bytes > 0 ? a->block : NULL;
    add(a);
    return 0;
}

static void release(const char *call, alloc_t *a)
{
    if (a->world) {
        tlm_armci_rc(call, telemem_free_all(a->block), "telemem_free_all");
    } else if (a->block) {
        tlm_armci_rc(call, telemem_deregister(a->block), "telemem_deregister");
        free(a->block);
    }
    free(a);
}

/* Collective over the group: every member names the same allocation (by
 * pointer, or NULL where it had 0 bytes). */
static int free_group(const char *call, void *ptr, tlm_armci_grp_t *g)
{
    alloc_t *a = NULL;
    uint64_t id = 0;
    if (ptr) {
        a = find_ptr(ptr, false);
        if (!a)
            tlm_armci_fail(call,
                           "%p is not the start of this rank's part of an "
                           "ARMCI allocation",
                           ptr);
        if (a->grp != g)
            tlm_armci_fail(call, "%p was allocated over another group", ptr);
        id = a->id;
    }
    /* Everyone's earlier operations complete before anyone frees. */
    tlm_armci_rc(call, telemem_quiet(), "completing operations");
    uint64_t *ids = malloc((size_t)g->size * sizeof *ids);
    if (!ids)
        tlm_armci_fail(call, "out of memory");
    tlm_armci_grp_allgather(call, g, &id, ids, sizeof id);
    uint64_t agreed = 0;
    for (int i = 0; i < g->size; i++) {
        if (ids[i] == 0)
            continue;
        if (agreed != 0 && ids[i] != agreed)
            tlm_armci_fail(call,
                           "ranks passed pointers of different allocations "
                           "(group ranks %d and earlier disagree)",
                           i);
        agreed = ids[i];
    }
    free(ids);
    if (agreed == 0) {
        a = find_all_zero(g->ctx);
        if (!a)
            tlm_armci_fail(call, "every rank passed NULL and no allocation "
                                 "of 0 bytes everywhere is left to free");
    } else if (!a) {
        a = find_id(g->ctx, agreed);
        if (!a)
            tlm_armci_fail(call, "no allocation matches the other ranks'");
        if (a->user)
            tlm_armci_fail(call,
                           "NULL given for an allocation of %zu bytes on "
                           "this rank (pass this rank's pointer)",
                           a->bytes);
    }
    unlink_alloc(a);
    release(call, a);
    return 0;
}

int PARMCI_Malloc_group(void **ptr_arr, armci_size_t bytes,
                        ARMCI_Group *group)
{
    return malloc_group("ARMCI_Malloc_group", ptr_arr, bytes, group);
}
TLM_ARMCI_ALIAS(Malloc_group);

int PARMCI_Free_group(void *ptr, ARMCI_Group *group)
{
    static const char call[] = "ARMCI_Free_group";
    return free_group(call, ptr, tlm_armci_grp_get(call, group));
}
TLM_ARMCI_ALIAS(Free_group);

/* ARMCI_Malloc is collective over all ranks whatever the default group
 * (as in ARMCI-MPI, whose Global Arrays build relies on it). */
int PARMCI_Malloc(void **base_ptrs, armci_size_t size)
{
    tlm_armci_check_ready("ARMCI_Malloc");
    return malloc_group("ARMCI_Malloc", base_ptrs, size,
                        &tlm_armci.world_grp);
}
TLM_ARMCI_ALIAS(Malloc);

static int free_default(const char *call, void *ptr)
{
    tlm_armci_check_ready(call);
    tlm_armci_grp_t *g = NULL;
    if (ptr) {
        alloc_t *a = find_ptr(ptr, false);
        if (a)
            g = a->grp;
    }
    if (!g)
        g = tlm_armci.world;
    return free_group(call, ptr, g);
}

int PARMCI_Free(void *ptr)
{
    return free_default("ARMCI_Free", ptr);
}
TLM_ARMCI_ALIAS(Free);

int PARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes,
                         const char *device)
{
    (void)device; /* host memory serves every device name */
    tlm_armci_check_ready("ARMCI_Malloc_memdev");
    return malloc_group("ARMCI_Malloc_memdev", ptr_arr, bytes,
                        &tlm_armci.world_grp);
}
TLM_ARMCI_ALIAS(Malloc_memdev);

int PARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes,
                               ARMCI_Group *group, const char *device)
{
    (void)device;
    return malloc_group("ARMCI_Malloc_group_memdev", ptr_arr, bytes, group);
}
TLM_ARMCI_ALIAS(Malloc_group_memdev);

int PARMCI_Free_memdev(void *ptr)
{
    return free_default("ARMCI_Free_memdev", ptr);
}
TLM_ARMCI_ALIAS(Free_memdev);

void *PARMCI_Malloc_local(armci_size_t size)
{
    static const char call[] = "ARMCI_Malloc_local";
    tlm_armci_check_bytes(call, "size", size);
    size_t rounded = ((size_t)size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
        tlm_armci_fail(call, "out of memory (%ld bytes)", size);
    return p;
}
TLM_ARMCI_ALIAS(Malloc_local);

int PARMCI_Free_local(void *ptr)
{
    free(ptr);
    return 0;
}
TLM_ARMCI_ALIAS(Free_local);

/* Local loads and stores of ARMCI memory need no bracketing here (the
 * target applies remote operations to ordinary memory); the calls only
 * check that ptr is ARMCI memory of this rank, as ARMCI-MPI does. */
void PARMCI_Access_begin(void *ptr)
{
    static const char call[] = "ARMCI_Access_begin";
    tlm_armci_check_ready(call);
    if (!ptr || !find_ptr(ptr, true))
        tlm_armci_fail(call, "%p is not in this rank's ARMCI memory", ptr);
}
TLM_ARMCI_ALIAS(Access_begin);

void PARMCI_Access_end(void *ptr)
{
    static const char call[] = "ARMCI_Access_end";
    tlm_armci_check_ready(call);
    if (!ptr || !find_ptr(ptr, true))
        tlm_armci_fail(call, "%p is not in this rank's ARMCI memory", ptr);
}
TLM_ARMCI_ALIAS(Access_end);

void tlm_armci_mem_fini(void)
{
    /* World blocks in creation order (each rank has the same list); group
     * memory is local.  The caller synchronised all ranks before. */
    pthread_mutex_lock(&tlm_armci.lock);
    alloc_t *a = allocs;
    allocs = NULL;
    pthread_mutex_unlock(&tlm_armci.lock);
    while (a) {
        alloc_t *next = a->next;
        release("ARMCI_Finalize", a);
        a = next;
    }
}

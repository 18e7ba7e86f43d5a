/* armci_mutex_hdl.c - ARMCIX mutex handles: sets of mutexes over any group,
 * on libarmci's active messages.  The owner of a mutex keeps its holder
 * and a FIFO of waiters; a lock request is granted at once or queued; an
 * unlock asks the owner for the next waiter and hands the mutex to it
 * directly.  Nobody spins over the network: a waiter only polls.  The
 * owner's side runs in the message handler (possibly on Telemem's
 * progress thread), under tlm_armci.lock. */
#include <stdlib.h>
#include <string.h>

#include "armci_internal.h"

#define MUTEXES_MAGIC 0x41524d4349584d58ull /* "ARMCIXMX" */

typedef struct owned {
    int holder; /* absolute rank, -1 when free */
    int *queue; /* waiting ranks, FIFO from head */
    int head, len, cap;
} owned_t;

typedef struct mutexes {
    struct armcix_mutex_hdl_s pub; /* first: the handle points here */
    uint64_t magic;
    uint32_t id;     /* the same on every member */
    int *counts;     /* mutexes per group rank */
    int *abs_to_grp; /* tlm_armci.n entries */
    owned_t *own;    /* pub.my_count entries */
    struct mutexes *next;
} mutexes_t;

/* A rank waiting for a reply or a grant. */
typedef struct waiter {
    struct waiter *next;
    uint32_t kind; /* TLM_ARMCI_AM_GRANT, _TRYRES or _UNLOCKED */
    uint32_t id;
    int mutex, owner;
    int result;
    atomic_int done;
} waiter_t;

static mutexes_t *registry; /* under tlm_armci.lock */
static waiter_t *waiters;   /* under tlm_armci.lock */

static mutexes_t *find(uint32_t id)
{
    for (mutexes_t *m = registry; m; m = m->next)
        if (m->id == id)
            return m;
    return NULL;
}

static mutexes_t *get(const char *call, armcix_mutex_hdl_t hdl)
{
    tlm_armci_check_ready(call);
    mutexes_t *m = (mutexes_t *)hdl;
    if (!m || m->magic != MUTEXES_MAGIC)
        tlm_armci_fail(call, "%p is not a mutex handle of "
                             "ARMCIX_Create_mutexes_hdl",
                       (void *)hdl);
    return m;
}

static void check_mutex(const char *call, mutexes_t *m, int mutex, int proc)
{
    tlm_armci_check_proc(call, proc);
    int g = m->abs_to_grp[proc];
    if (g < 0)
        tlm_armci_fail(call, "proc %d is not a member of the handle's group",
                       proc);
    if (mutex < 0 || mutex >= m->counts[g])
        tlm_armci_fail(call, "mutex %d out of range [0, %d) on proc %d",
                       mutex, m->counts[g], proc);
}

armcix_mutex_hdl_t ARMCIX_Create_mutexes_hdl(int count, ARMCI_Group *pgroup)
{
    static const char call[] = "ARMCIX_Create_mutexes_hdl";
    tlm_armci_grp_t *g = tlm_armci_grp_get(call, pgroup);
    if (count < 0)
        tlm_armci_fail(call, "count %d is negative", count);
    mutexes_t *m = calloc(1, sizeof *m);
    int n = tlm_armci.n;
    if (m) {
        m->counts = malloc((size_t)g->size * sizeof(int));
        m->abs_to_grp = malloc((size_t)n * sizeof(int));
        m->own = calloc(count > 0 ? (size_t)count : 1, sizeof(owned_t));
    }
    if (!m || !m->counts || !m->abs_to_grp || !m->own)
        tlm_armci_fail(call, "out of memory (%d mutexes)", count);
    for (int i = 0; i < count; i++)
        m->own[i].holder = -1;
    memcpy(m->abs_to_grp, g->abs_to_grp, (size_t)n * sizeof(int));
    m->magic = MUTEXES_MAGIC;
    m->id = tlm_armci_grp_new_ctx(call, g);
    m->pub.my_count = count;
    m->pub.grp = *pgroup;
    m->pub.windows = NULL;
    m->pub.bases = NULL;
    pthread_mutex_lock(&tlm_armci.lock);
    m->next = registry;
    registry = m;
    pthread_mutex_unlock(&tlm_armci.lock);
    /* Registered before the exchange below: no member can send a request
     * before every member has registered. */
    tlm_armci_grp_allgather(call, g, &count, m->counts, sizeof count);
    m->pub.max_count = 0;
    for (int i = 0; i < g->size; i++)
        if (m->counts[i] > m->pub.max_count)
            m->pub.max_count = m->counts[i];
    return &m->pub;
}

int ARMCIX_Destroy_mutexes_hdl(armcix_mutex_hdl_t hdl)
{
    static const char call[] = "ARMCIX_Destroy_mutexes_hdl";
    mutexes_t *m = get(call, hdl);
    tlm_armci_grp_t *g = tlm_armci_grp_get(call, &m->pub.grp);
    /* Every member has finished its unlocks before the barrier. */
    tlm_armci_grp_barrier(call, g);
    pthread_mutex_lock(&tlm_armci.lock);
    int held = -1, holder = -1;
    for (int i = 0; i < m->pub.my_count; i++)
        if (m->own[i].holder >= 0 || m->own[i].len > 0) {
            held = i;
            holder = m->own[i].holder;
            break;
        }
    if (held < 0)
        for (mutexes_t **pp = &registry; *pp; pp = &(*pp)->next)
            if (*pp == m) {
                *pp = m->next;
                break;
            }
    pthread_mutex_unlock(&tlm_armci.lock);
    if (held >= 0)
        tlm_armci_fail(call, "mutex %d of this rank is still held by rank %d",
                       held, holder);
    for (int i = 0; i < m->pub.my_count; i++)
        free(m->own[i].queue);
    free(m->own);
    free(m->counts);
    free(m->abs_to_grp);
    m->magic = 0;
    free(m);
    return 0;
}

/* ------------------------------------------------------------------------
 * Requester side */

static void waiter_add(waiter_t *w)
{
    pthread_mutex_lock(&tlm_armci.lock);
    w->next = waiters;
    waiters = w;
    pthread_mutex_unlock(&tlm_armci.lock);
}

static void waiter_wait(const char *call, waiter_t *w)
{
    /* any rank may hold the mutex: watch them all */
    tlm_armci_wait_t aw;
    tlm_armci_wait_init(&aw, call, -1);
    while (!atomic_load_explicit(&w->done, memory_order_acquire))
        tlm_armci_wait_poll(&aw);
    pthread_mutex_lock(&tlm_armci.lock);
    for (waiter_t **pp = &waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    pthread_mutex_unlock(&tlm_armci.lock);
}

static void request(const char *call, int proc, uint32_t kind, uint32_t id,
                    int mutex, int owner)
{
    uint32_t args[4] = {kind, id, (uint32_t)mutex, (uint32_t)owner};
    tlm_armci_rc(call,
                 telemem_am_request(proc, tlm_armci.am_id, NULL, 0, args, 4),
                 "mutex %d on proc %d", mutex, owner);
}

void ARMCIX_Lock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc)
{
    static const char call[] = "ARMCIX_Lock_hdl";
    mutexes_t *m = get(call, hdl);
    check_mutex(call, m, mutex, proc);
    waiter_t w = {.kind = TLM_ARMCI_AM_GRANT, .id = m->id, .mutex = mutex,
                  .owner = proc};
    waiter_add(&w);
    request(call, proc, TLM_ARMCI_AM_LOCK, m->id, mutex, proc);
    waiter_wait(call, &w);
    if (w.result < 0)
        tlm_armci_fail(call, "mutex %d on proc %d is held by this rank "
                             "already (mutexes are not recursive)",
                       mutex, proc);
}

int ARMCIX_Trylock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc)
{
    static const char call[] = "ARMCIX_Trylock_hdl";
    mutexes_t *m = get(call, hdl);
    check_mutex(call, m, mutex, proc);
    waiter_t w = {.kind = TLM_ARMCI_AM_TRYRES, .id = m->id, .mutex = mutex,
                  .owner = proc};
    waiter_add(&w);
    request(call, proc, TLM_ARMCI_AM_TRYLOCK, m->id, mutex, proc);
    waiter_wait(call, &w);
    return w.result ? 0 : 1;
}

void ARMCIX_Unlock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc)
{
    static const char call[] = "ARMCIX_Unlock_hdl";
    mutexes_t *m = get(call, hdl);
    check_mutex(call, m, mutex, proc);
    /* What the critical section wrote is complete before the next holder
     * can enter it. */
    tlm_armci_rc(call, telemem_quiet(), "completing operations");
    waiter_t w = {.kind = TLM_ARMCI_AM_UNLOCKED, .id = m->id,
                  .mutex = mutex, .owner = proc};
    waiter_add(&w);
    request(call, proc, TLM_ARMCI_AM_UNLOCK, m->id, mutex, proc);
    waiter_wait(call, &w);
    if (w.result == -2)
        tlm_armci_fail(call, "mutex %d on proc %d is not held by this rank",
                       mutex, proc);
    if (w.result >= 0)
        request(call, w.result, TLM_ARMCI_AM_GRANT, m->id, mutex, proc);
}

/* ------------------------------------------------------------------------
 * Message handler side (tlm_armci_mutex_am) */

static void queue_push(owned_t *o, int rank)
{
    if (o->len == o->cap) {
        int cap = o->cap ? 2 * o->cap : 4;
        int *q = malloc((size_t)cap * sizeof *q);
        if (!q)
            tlm_armci_fail("ARMCIX_Lock_hdl (owner)", "out of memory");
        for (int i = 0; i < o->len; i++)
            q[i] = o->queue[(o->head + i) % o->cap];
        free(o->queue);
        o->queue = q;
        o->cap = cap;
        o->head = 0;
    }
    o->queue[(o->head + o->len) % o->cap] = rank;
    o->len++;
}

static int queue_pop(owned_t *o)
{
    if (o->len == 0)
        return -1;
    int r = o->queue[o->head];
    o->head = (o->head + 1) % o->cap;
    o->len--;
    return r;
}

static void reply(telemem_am_token_t tok, uint32_t kind, const uint32_t *args,
                  int value)
{
    uint32_t out[5] = {kind, args[1], args[2], (uint32_t)tlm_armci.me,
                       (uint32_t)value};
    int rc = telemem_am_reply(tok, tlm_armci.am_id, NULL, 0, out, 5);
    if (rc != TELEMEM_OK)
        tlm_armci_rc_slow("ARMCIX mutex (owner)", rc, "reply");
}

/* Owner: LOCK, TRYLOCK, UNLOCK requests. */
static void owner_side(telemem_am_token_t tok, const uint32_t *args, int src)
{
    uint32_t kind = args[0];
    int mutex = (int)args[2];
    uint32_t out_kind = 0;
    int value = 0;
    bool send = true;
    pthread_mutex_lock(&tlm_armci.lock);
    mutexes_t *m = find(args[1]);
    if (!m || mutex < 0 || mutex >= m->pub.my_count) {
        pthread_mutex_unlock(&tlm_armci.lock);
        tlm_armci_fail("ARMCIX mutex (owner)",
                       "request from rank %d for unknown mutex %d of set %u",
                       src, mutex, (unsigned)args[1]);
    }
    owned_t *o = &m->own[mutex];
    if (kind == TLM_ARMCI_AM_LOCK) {
        if (o->holder < 0) {
            o->holder = src;
            out_kind = TLM_ARMCI_AM_GRANT;
        } else if (o->holder == src) {
            out_kind = TLM_ARMCI_AM_LOCKERR;
        } else {
            queue_push(o, src); /* granted later by the unlocker */
            send = false;
        }
    } else if (kind == TLM_ARMCI_AM_TRYLOCK) {
        out_kind = TLM_ARMCI_AM_TRYRES;
        value = o->holder < 0;
        if (value)
            o->holder = src;
    } else { /* UNLOCK */
        out_kind = TLM_ARMCI_AM_UNLOCKED;
        if (o->holder != src) {
            value = -2;
        } else {
            value = queue_pop(o);
            o->holder = value;
        }
    }
    pthread_mutex_unlock(&tlm_armci.lock);
    if (send)
        reply(tok, out_kind, args, value);
}

/* Requester: GRANT (reply or request), TRYRES, UNLOCKED, LOCKERR. */
static void requester_side(const uint32_t *args, unsigned nargs)
{
    uint32_t kind = args[0];
    uint32_t match = kind == TLM_ARMCI_AM_LOCKERR ? TLM_ARMCI_AM_GRANT : kind;
    int value = nargs > 4 ? (int)args[4] : 0;
    if (kind == TLM_ARMCI_AM_LOCKERR)
        value = -1;
    else if (kind == TLM_ARMCI_AM_GRANT)
        value = 0;
    pthread_mutex_lock(&tlm_armci.lock);
    waiter_t *w = waiters;
    while (w && !(w->kind == match && w->id == args[1] &&
                  w->mutex == (int)args[2] && w->owner == (int)args[3]))
        w = w->next;
    if (w) {
        w->result = value;
        atomic_store_explicit(&w->done, 1, memory_order_release);
    }
    pthread_mutex_unlock(&tlm_armci.lock);
    if (!w)
        tlm_armci_fail("ARMCIX mutex", "unexpected message %u for mutex %u "
                                       "on rank %u",
                       (unsigned)kind, (unsigned)args[2], (unsigned)args[3]);
}

void tlm_armci_mutex_am(telemem_am_token_t tok, const uint32_t *args,
                        unsigned nargs, int src)
{
    if (nargs < 4)
        tlm_armci_fail("ARMCIX mutex", "short message from rank %d", src);
    switch (args[0]) {
    case TLM_ARMCI_AM_LOCK:
    case TLM_ARMCI_AM_TRYLOCK:
    case TLM_ARMCI_AM_UNLOCK:
        owner_side(tok, args, src);
        break;
    default:
        requester_side(args, nargs);
        break;
    }
}

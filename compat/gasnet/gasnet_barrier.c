/* gasnet_barrier.c - GASNet's split-phase named/anonymous barrier over
 * Telemem active messages: every node sends its (id, flags) to every other
 * node at notify, each node merges the values itself, so completion costs
 * one message latency and mismatches are seen identically everywhere. */
#include <stdio.h>
#include <stdlib.h>

#include "gasnet_internal.h"

/* Merged notifies of one barrier phase.  A node can receive notifies of
 * the next phase (from nodes that already left this one) but never of the
 * one after, so two slots indexed by the phase's parity suffice. */
typedef struct slot {
    int count;      /* notifies merged, this node's included */
    int named;      /* some notify was named */
    int32_t value;  /* the named value */
    int mismatch;   /* a MISMATCH flag or two different names */
    uint32_t phase; /* the phase this slot collects (sanity check) */
} slot_t;

static struct {
    uint32_t phase;     /* of the next or current barrier */
    int inside;         /* between notify and wait/try */
    slot_t slot[2];
    int last_named;     /* result of the last completed barrier */
    int32_t last_value;
} B;

/* GASNET_PAR: handlers merging other nodes' notifies may run on another
 * thread than the one in notify or wait; the lock orders the merges, and
 * a slot's count is read atomically by the waiter. */
static pthread_mutex_t B_lock = PTHREAD_MUTEX_INITIALIZER;

static inline int slot_count(const slot_t *s)
{
    return __atomic_load_n(&s->count, __ATOMIC_ACQUIRE);
}

#define KNOWN_FLAGS                                                         \
    (GASNET_BARRIERFLAG_ANONYMOUS | GASNET_BARRIERFLAG_MISMATCH |           \
     GASNET_BARRIERFLAG_IMAGES | GASNET_BARRIERFLAG_UNNAMED)

static void merge(slot_t *s, int32_t id, int flags)
{
    if (flags & GASNET_BARRIERFLAG_MISMATCH) {
        s->mismatch = 1;
    } else if (!(flags & GASNET_BARRIERFLAG_ANONYMOUS)) {
        if (s->named && s->value != id)
            s->mismatch = 1;
        s->named = 1;
        s->value = id;
    }
    __atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELEASE);
}

static void on_notify(telemem_am_token_t tok, void *payload, size_t bytes,
                      const uint32_t *args, unsigned nargs, void *ctx)
{
    int src = -1;
    telemem_am_source(tok, &src);
    uint32_t phase = nargs == 3 ? args[0] : 0;
    pthread_mutex_lock(&B_lock);
    /* Only this phase or the next one can arrive (see slot_t). */
    if (nargs != 3 || (phase != B.phase && phase != B.phase + 1))
        tlm_gasnet_fatal("gasnet_barrier_notify", "unexpected barrier "
                         "message from node %d (phase %u, this node is at "
                         "%u)", src, phase, B.phase);
    slot_t *s = &B.slot[phase & 1];
    if (s->count == 0)
        s->phase = phase;
    else if (s->phase != phase)
        tlm_gasnet_fatal("gasnet_barrier_notify", "barrier phases crossed "
                         "(node %d)", src);
    merge(s, (int32_t)args[1], (int)args[2]);
    pthread_mutex_unlock(&B_lock);
}

int tlm_gasnet_barrier_init(void)
{
    B.phase = 0;
    B.inside = 0;
    B.last_named = 0;
    B.last_value = 0;
    B.slot[0] = (slot_t){0, 0, 0, 0, 0};
    B.slot[1] = (slot_t){0, 0, 0, 0, 1};
    return telemem_am_register(TLM_GASNET_AM_BARRIER, on_notify, NULL);
}

void tlm_gasnet_barrier_fini(void)
{
}

static void check_call(const char *what, int flags)
{
    if (!tlm_gasnet.attached)
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    tlm_gasnet_check_context(what);
    if (flags & ~KNOWN_FLAGS)
        tlm_gasnet_fatal(what, "unknown flags 0x%x (GASNET_BARRIERFLAG_"
                         "ANONYMOUS, _MISMATCH)", (unsigned)flags);
}

void gasnet_barrier_notify(int id, int flags)
{
    static const char what[] = "gasnet_barrier_notify";
    check_call(what, flags);
    tlm_gasnet_local_flush();
    if (B.inside)
        tlm_gasnet_fatal(what, "called twice without gasnet_barrier_wait() "
                         "or a successful gasnet_barrier_try()");
    pthread_mutex_lock(&B_lock);
    slot_t *s = &B.slot[B.phase & 1];
    if (s->count == 0)
        s->phase = B.phase;
    merge(s, (int32_t)id, flags);
    pthread_mutex_unlock(&B_lock);
    uint32_t args[3] = {B.phase, (uint32_t)id, (uint32_t)flags};
    for (int r = 0; r < tlm_gasnet.nodes; r++) {
        if (r == tlm_gasnet.mynode)
            continue;
        int rc = telemem_am_request(r, TLM_GASNET_AM_BARRIER, NULL, 0, args,
                                    3);
        if (rc != TELEMEM_OK)
            tlm_gasnet_fatal(what, "cannot notify node %d: %s", r,
                             telemem_strerror(rc));
    }
    B.inside = 1;
}

/* The barrier is complete: its result for this wait's (id, flags). */
static int finish(int id, int flags)
{
    pthread_mutex_lock(&B_lock);
    slot_t *s = &B.slot[B.phase & 1];
    int rc = GASNET_OK;
    if (s->mismatch || (flags & GASNET_BARRIERFLAG_MISMATCH) ||
        (!(flags & GASNET_BARRIERFLAG_ANONYMOUS) && s->named &&
         s->value != (int32_t)id))
        rc = GASNET_ERR_BARRIER_MISMATCH;
    B.last_named = s->named;
    B.last_value = s->value;
    *s = (slot_t){0, 0, 0, 0, B.phase + 2};
    B.phase++;
    B.inside = 0;
    pthread_mutex_unlock(&B_lock);
    tlm_gasnet_check_exit();
    return rc;
}

int gasnet_barrier_wait(int id, int flags)
{
    static const char what[] = "gasnet_barrier_wait";
    check_call(what, flags);
    if (!B.inside)
        tlm_gasnet_fatal(what, "called without a matching "
                         "gasnet_barrier_notify()");
    unsigned idle = 0;
    while (slot_count(&B.slot[B.phase & 1]) < tlm_gasnet.nodes)
        tlm_gasnet_wait_step(what, &idle);
    return finish(id, flags);
}

int gasnet_barrier_try(int id, int flags)
{
    static const char what[] = "gasnet_barrier_try";
    check_call(what, flags);
    if (!B.inside)
        tlm_gasnet_fatal(what, "called without a matching "
                         "gasnet_barrier_notify()");
    if (slot_count(&B.slot[B.phase & 1]) < tlm_gasnet.nodes) {
        unsigned idle = 0;
        tlm_gasnet_wait_step(what, &idle);
        if (slot_count(&B.slot[B.phase & 1]) < tlm_gasnet.nodes)
            return GASNET_ERR_NOT_READY;
    }
    return finish(id, flags);
}

int gasnet_barrier(int id, int flags)
{
    if (B.inside && tlm_gasnet.attached)
        tlm_gasnet_fatal("gasnet_barrier", "called between "
                         "gasnet_barrier_notify() and its wait");
    gasnet_barrier_notify(id, flags);
    return gasnet_barrier_wait(id, flags);
}

int gasnet_barrier_result(int *id)
{
    static const char what[] = "gasnet_barrier_result";
    if (!id)
        tlm_gasnet_fatal(what, "id is NULL");
    if (B.inside)
        tlm_gasnet_fatal(what, "called between gasnet_barrier_notify() and "
                         "its wait");
    if (!B.last_named)
        return 1;
    *id = (int)B.last_value;
    return 0;
}

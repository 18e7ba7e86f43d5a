/* core_mutex.c - mutexes: collective creation of sets, lock / trylock /
 * unlock as messages to the owning rank, which grants them first come,
 * first served from its poll loop (waiters queue at the owner; nobody spins
 * over the network). */
#include <stdlib.h>
#include <string.h>

#include "core/core_engine.h"

enum { MX_LOCK = 1, MX_TRYLOCK = 2, MX_UNLOCK = 3 };

typedef struct mx_waiter {
    int rank;
    uint32_t id;
} mx_waiter_t;

typedef struct mx_mutex {
    int holder;          /* rank, or -1 */
    mx_waiter_t *q;      /* FIFO ring of waiters */
    size_t qhead, qlen, qcap;
} mx_mutex_t;

typedef struct mx_held {
    int mutex, rank;
} mx_held_t;

typedef struct mx_set {
    bool live;
    int count;           /* mutexes this rank owns */
    mx_mutex_t *m;
    int *counts;         /* every rank's count */
    mx_held_t *held;     /* what this rank holds in the set */
    size_t nheld, capheld;
} mx_set_t;

static mx_set_t *sets;
static int nsets;

static void set_free(mx_set_t *s)
{
    for (int i = 0; s->m && i < s->count; i++)
        free(s->m[i].q);
    free(s->m);
    free(s->counts);
    free(s->held);
    memset(s, 0, sizeof(*s));
}

void tlm_core_mutex_fini(void)
{
    for (int i = 0; i < nsets; i++)
        set_free(&sets[i]);
    free(sets);
    sets = NULL;
    nsets = 0;
}

/* ---- owner side ----------------------------------------------------------- */

static void reply(int dst, uint32_t id, int status, int result)
{
    tlm_am_hdr_t r = {TLM_AM_MUTEX_REP, (uint8_t)result,
                      (uint16_t)(int16_t)status, id};
    tlm_am_send_ctrl(dst, &r, sizeof(r), NULL, 0);
}

static int enqueue(mx_mutex_t *m, int rank, uint32_t id)
{
    if (m->qlen == m->qcap) {
        size_t nc = m->qcap ? 2 * m->qcap : 8;
        mx_waiter_t *nq = malloc(nc * sizeof(*nq));
        if (!nq)
            return TELEMEM_ERR_NO_MEMORY;
        for (size_t i = 0; i < m->qlen; i++)
            nq[i] = m->q[(m->qhead + i) % m->qcap];
        free(m->q);
        m->q = nq;
        m->qcap = nc;
        m->qhead = 0;
    }
    m->q[(m->qhead + m->qlen) % m->qcap] = (mx_waiter_t){rank, id};
    m->qlen++;
    return TELEMEM_OK;
}

static void on_mutex(int src, const void *msg, size_t len)
{
    const tlm_am_mutex_t *q = msg;
    if (len != sizeof(*q))
        return tlm_core_protocol_error(src, "mutex", len);
    int cmd = q->h.aux;
    mx_set_t *s = q->set < (uint32_t)nsets ? &sets[q->set] : NULL;
    if (!s || !s->live || q->mutex >= (uint32_t)s->count ||
        cmd < MX_LOCK || cmd > MX_UNLOCK) {
        tlm_warn("mutex request %d from rank %d for an unknown mutex "
                 "(set %u, mutex %u)", cmd, src, q->set, q->mutex);
        if (cmd == MX_LOCK || cmd == MX_TRYLOCK)
            reply(src, q->h.id, TELEMEM_ERR_INVALID_ARG, 0);
        return;
    }
    mx_mutex_t *m = &s->m[q->mutex];
    if (cmd == MX_UNLOCK) {
        if (m->holder != src) {
            tlm_warn("rank %d unlocked mutex %u of set %u, held by %d", src,
                     q->mutex, q->set, m->holder);
            return;
        }
        if (m->qlen) {
            mx_waiter_t w = m->q[m->qhead];
            m->qhead = (m->qhead + 1) % m->qcap;
            m->qlen--;
            m->holder = w.rank;
            reply(w.rank, w.id, TELEMEM_OK, 1);
        } else {
            m->holder = -1;
        }
        return;
    }
    if (m->holder < 0) {
        m->holder = src;
        reply(src, q->h.id, TELEMEM_OK, 1);
    } else if (cmd == MX_TRYLOCK) {
        reply(src, q->h.id, TELEMEM_OK, 0);
    } else if (enqueue(m, src, q->h.id) != TELEMEM_OK) {
        tlm_error("no memory to queue a lock request from rank %d", src);
        reply(src, q->h.id, TELEMEM_ERR_NO_MEMORY, 0);
    }
}

static void on_mutex_rep(int src, const void *msg, size_t len)
{
    const tlm_am_hdr_t *r = msg;
    uint32_t idx;
    if (len != sizeof(*r))
        return tlm_core_protocol_error(src, "mutex reply", len);
    tlm_op_t *op = tlm_core_op_from_wire(r->id, TLM_OP_MUTEX, &idx);
    if (!op || op->rank != src)
        return;
    if (op->result)
        *op->result = r->flags;
    tlm_core_op_complete(idx, (int16_t)r->aux);
}

void tlm_core_mutex_init(void)
{
    tlm_am_set_handler(TLM_AM_MUTEX, on_mutex);
    tlm_am_set_handler(TLM_AM_MUTEX_REP, on_mutex_rep);
}

/* ---- caller side ---------------------------------------------------------- */

int telemem_mutexes_create(int count, int *set_p)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (count < 0 || !set_p) {
        tlm_error("mutexes_create: %s", !set_p ? "set_p is NULL"
                                               : "count is negative");
        return TELEMEM_ERR_INVALID_ARG;
    }
    int *all = malloc((size_t)tlm_core.nranks * sizeof(int));
    mx_set_t *ns = all ? realloc(sets, (size_t)(nsets + 1) * sizeof(*ns))
                       : NULL;
    if (!ns) {
        free(all);
        tlm_error("mutexes_create: out of memory");
        return TELEMEM_ERR_NO_MEMORY;
    }
    sets = ns;
    /* The set's number is taken now, the same on every rank, and the set
     * is live before the exchange: a rank that leaves the allgather first
     * may lock one of ours while we are still inside it (the owner checks
     * only its own count). */
    int id = nsets++;
    mx_set_t *s = &sets[id];
    memset(s, 0, sizeof(*s));
    s->count = count;
    s->m = calloc(count ? (size_t)count : 1, sizeof(*s->m));
    s->counts = calloc((size_t)tlm_core.nranks, sizeof(int));
    if (!s->m || !s->counts) {
        tlm_error("mutexes_create: no memory for %d mutexes", count);
        rc = TELEMEM_ERR_NO_MEMORY;
    }
    for (int i = 0; rc == TELEMEM_OK && i < count; i++)
        s->m[i].holder = -1;
    s->live = rc == TELEMEM_OK;
    /* Every rank takes part even after a local failure (-1 tells the
     * others). */
    int mine = rc == TELEMEM_OK ? count : -1;
    int crc = telemem_allgather(&mine, all, sizeof(int));
    for (int r = 0; crc == TELEMEM_OK && r < tlm_core.nranks; r++)
        if (all[r] < 0)
            crc = TELEMEM_ERR_NO_MEMORY;
    if (rc == TELEMEM_OK)
        rc = crc;
    if (rc != TELEMEM_OK) {
        free(all);
        set_free(s); /* not live: later requests for it are refused */
        return rc;
    }
    memcpy(s->counts, all, (size_t)tlm_core.nranks * sizeof(int));
    free(all);
    *set_p = id;
    return TELEMEM_OK;
}

static int find_set(const char *what, int set, mx_set_t **s_p)
{
    if (set < 0 || set >= nsets || !sets[set].live) {
        tlm_error("%s: no mutex set %d", what, set);
        return TELEMEM_ERR_NOT_FOUND;
    }
    *s_p = &sets[set];
    return TELEMEM_OK;
}

int telemem_mutexes_destroy(int set)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    mx_set_t *s;
    rc = find_set("mutexes_destroy", set, &s);
    if (rc != TELEMEM_OK)
        return rc;
    if (s->nheld) {
        tlm_error("mutexes_destroy: this rank still holds %zu mutex(es) of "
                  "set %d", s->nheld, set);
        return TELEMEM_ERR_INVALID_ARG;
    }
    /* Earlier unlocks are applied at their owners before anyone frees. */
    rc = tlm_core_flush(-1);
    int brc = telemem_barrier();
    set_free(s);
    return rc != TELEMEM_OK ? rc : brc;
}

static ssize_t held_index(const mx_set_t *s, int mutex, int rank)
{
    for (size_t i = 0; i < s->nheld; i++)
        if (s->held[i].mutex == mutex && s->held[i].rank == rank)
            return (ssize_t)i;
    return -1;
}

static int check_mutex(const char *what, int set, int mutex, int rank,
                       mx_set_t **s_p)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (set < 0 || set >= nsets || !sets[set].live) {
        tlm_error("%s: no mutex set %d", what, set);
        return TELEMEM_ERR_INVALID_ARG;
    }
    mx_set_t *s = &sets[set];
    if (rank < 0 || rank >= tlm_core.nranks || mutex < 0 ||
        mutex >= s->counts[rank]) {
        tlm_error("%s: no mutex %d on rank %d in set %d", what, mutex, rank,
                  set);
        return TELEMEM_ERR_INVALID_ARG;
    }
    *s_p = s;
    return TELEMEM_OK;
}

static int acquire(const char *what, int cmd, int set, int mutex, int rank,
                   int *acquired)
{
    mx_set_t *s;
    int rc = check_mutex(what, set, mutex, rank, &s);
    if (rc == TELEMEM_OK) /* its owner known dead: no wait for a reply */
        rc = tlm_core_check_rank(what, rank);
    if (rc != TELEMEM_OK)
        return rc;
    if (held_index(s, mutex, rank) >= 0) {
        tlm_error("%s: this rank already holds mutex %d of rank %d (mutexes "
                  "are not recursive)", what, mutex, rank);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (s->nheld == s->capheld) {
        size_t nc = s->capheld ? 2 * s->capheld : 4;
        mx_held_t *nh = realloc(s->held, nc * sizeof(*nh));
        if (!nh)
            return TELEMEM_ERR_NO_MEMORY;
        s->held = nh;
        s->capheld = nc;
    }
    uint32_t idx;
    rc = tlm_core_op_alloc(&idx);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_op_t *op = tlm_core_op(idx);
    int got = 0;
    op->kind = TLM_OP_MUTEX;
    op->rank = rank;
    op->result = &got;
    tlm_am_mutex_t m = {{TLM_AM_MUTEX, 0, (uint16_t)cmd,
                         tlm_core_wire_id(idx)},
                        (uint32_t)set, (uint32_t)mutex};
    rc = tlm_am_send_ctrl(rank, &m, sizeof(m), NULL, 0);
    if (rc != TELEMEM_OK) {
        tlm_core_op_free(idx);
        return rc;
    }
    /* A lock waits for whichever rank holds the mutex, not only for its
     * owner: a holder that dies must end the wait too. */
    rc = tlm_core_op_wait_peer(idx, cmd == MX_LOCK ? -1 : rank);
    if (rc == TELEMEM_OK && got)
        s->held[s->nheld++] = (mx_held_t){mutex, rank};
    if (acquired && rc == TELEMEM_OK)
        *acquired = got; /* outputs are written only on success */
    return rc;
}

int telemem_mutex_lock(int set, int mutex, int rank)
{
    TLM_API_GUARD();
    return acquire("mutex_lock", MX_LOCK, set, mutex, rank, NULL);
}

int telemem_mutex_trylock(int set, int mutex, int rank, int *acquired)
{
    TLM_API_GUARD();
    if (!acquired) {
        tlm_error("mutex_trylock: acquired is NULL");
        return tlm_core.initialized ? TELEMEM_ERR_INVALID_ARG
                                    : TELEMEM_ERR_NOT_INITIALIZED;
    }
    return acquire("mutex_trylock", MX_TRYLOCK, set, mutex, rank, acquired);
}

int telemem_mutex_unlock(int set, int mutex, int rank)
{
    TLM_API_GUARD();
    mx_set_t *s;
    int rc = check_mutex("mutex_unlock", set, mutex, rank, &s);
    if (rc != TELEMEM_OK)
        return rc;
    ssize_t i = held_index(s, mutex, rank);
    if (i < 0) {
        tlm_error("mutex_unlock: this rank does not hold mutex %d of rank %d",
                  mutex, rank);
        return TELEMEM_ERR_INVALID_ARG;
    }
    /* The critical section's operations are complete first; the mutex is
     * released even when one of them failed (that error is returned). */
    rc = tlm_core_flush(-1);
    s->held[i] = s->held[--s->nheld];
    tlm_am_mutex_t m = {{TLM_AM_MUTEX, 0, MX_UNLOCK, 0}, (uint32_t)set,
                        (uint32_t)mutex};
    TLM_RLX_SET(tlm_core.peers[rank].unflushed,
                tlm_core.peers[rank].unflushed + 1);
    int src = tlm_am_send_ctrl(rank, &m, sizeof(m), NULL, 0);
    return rc != TELEMEM_OK ? rc : src;
}

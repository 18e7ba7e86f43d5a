/* armci_am.c - libarmci's active-message handler and inbox: one Telemem
 * handler takes every internal request and reply (tagged messages, group
 * collectives, notify, mutex traffic), and messages wait in the inbox
 * until a receive takes them.  The handler may run on Telemem's progress
 * thread, so the inbox is under tlm_armci.lock; nobody calls Telemem while
 * holding that lock. */
#include <stdlib.h>
#include <string.h>

#include "armci_internal.h"

static tlm_armci_msg_t *inbox_head;
static tlm_armci_msg_t **inbox_tail = &inbox_head;

static void enqueue(uint32_t kind, uint32_t a, uint32_t b, int src,
                    const void *payload, size_t bytes)
{
    tlm_armci_msg_t *m = malloc(sizeof *m + bytes);
    if (!m)
        tlm_armci_fail("armci (message handler)",
                       "out of memory for a %zu-byte message from rank %d",
                       bytes, src);
    m->next = NULL;
    m->kind = kind;
    m->a = a;
    m->b = b;
    m->src = src;
    m->bytes = bytes;
    if (bytes)
        memcpy(m->data, payload, bytes);
    pthread_mutex_lock(&tlm_armci.lock);
    *inbox_tail = m;
    inbox_tail = &m->next;
    pthread_mutex_unlock(&tlm_armci.lock);
}

/* The first matching message, unlinked, or NULL. */
static tlm_armci_msg_t *take(uint32_t kind, uint32_t a, uint32_t b, int src)
{
    tlm_armci_msg_t *found = NULL;
    pthread_mutex_lock(&tlm_armci.lock);
    for (tlm_armci_msg_t **pp = &inbox_head; *pp; pp = &(*pp)->next) {
        tlm_armci_msg_t *m = *pp;
        if (m->kind != kind || m->a != a || (src >= 0 && m->src != src))
            continue;
        if (kind == TLM_ARMCI_AM_COLL && m->b != b)
            continue;
        *pp = m->next;
        if (inbox_tail == &m->next)
            inbox_tail = pp;
        found = m;
        break;
    }
    pthread_mutex_unlock(&tlm_armci.lock);
    return found;
}

tlm_armci_msg_t *tlm_armci_inbox_wait(const char *call, uint32_t kind,
                                      uint32_t a, uint32_t b, int src)
{
    tlm_armci_wait_t w;
    tlm_armci_wait_init(&w, call, src);
    for (;;) {
        tlm_armci_msg_t *m = take(kind, a, b, src);
        if (m)
            return m;
        tlm_armci_wait_poll(&w);
    }
}

static void handler(telemem_am_token_t tok, void *payload, size_t bytes,
                    const uint32_t *args, unsigned nargs, void *ctx)
{
    (void)ctx;
    int src = -1;
    telemem_am_source(tok, &src);
    /* Arguments each kind needs (mutex kinds check their own). */
    static const unsigned need[] = {[TLM_ARMCI_AM_MSG] = 2,
                                    [TLM_ARMCI_AM_COLL] = 4,
                                    [TLM_ARMCI_AM_NOTIFY] = 1};
    if (nargs < 1 || (args[0] < sizeof need / sizeof need[0] &&
                      nargs < need[args[0]]))
        tlm_armci_fail("armci (message handler)",
                       "message of kind %u with %u arguments from rank %d",
                       nargs ? (unsigned)args[0] : 0u, nargs, src);
    switch (args[0]) {
    case TLM_ARMCI_AM_MSG:
        enqueue(TLM_ARMCI_AM_MSG, args[1], 0, src, payload, bytes);
        break;
    case TLM_ARMCI_AM_COLL:
        enqueue(TLM_ARMCI_AM_COLL, args[1], args[2], (int)args[3], payload,
                bytes);
        break;
    case TLM_ARMCI_AM_NOTIFY:
        atomic_fetch_add_explicit(&tlm_armci.notify_received[src], 1,
                                  memory_order_release);
        break;
    case TLM_ARMCI_AM_LOCK:
    case TLM_ARMCI_AM_TRYLOCK:
    case TLM_ARMCI_AM_UNLOCK:
    case TLM_ARMCI_AM_GRANT:
    case TLM_ARMCI_AM_TRYRES:
    case TLM_ARMCI_AM_UNLOCKED:
    case TLM_ARMCI_AM_LOCKERR:
        tlm_armci_mutex_am(tok, args, nargs, src);
        break;
    default:
        /* Nobody can take a status here: a corrupt message ends the job. */
        tlm_armci_fail("armci (message handler)",
                       "unknown internal message kind %u from rank %d",
                       (unsigned)args[0], src);
    }
}

void tlm_armci_am_init(void)
{
    static const char call[] = "ARMCI_Init";
    int id = -1;
    tlm_armci_rc(call, telemem_am_register_any(handler, NULL, &id),
                 "registering libarmci's message handler");
    /* Every rank must have picked the same id: the lowest free one, equal
     * when every rank registered the same handlers before.  The allreduce
     * also keeps requests from arriving before the handler is in place. */
    int32_t lohi[2] = {id, -id};
    tlm_armci_rc(call,
                 telemem_allreduce(lohi, 2, TELEMEM_INT32, TELEMEM_MIN),
                 "allreduce");
    if (lohi[0] != id || -lohi[1] != id)
        tlm_armci_fail(call,
                       "ranks registered libarmci's handler under different "
                       "active-message ids (%d here, %d..%d overall): "
                       "register the program's own handlers in the same "
                       "order on every rank",
                       id, lohi[0], -lohi[1]);
    tlm_armci.am_id = id;
}

void tlm_armci_am_fini(void)
{
    /* Telemem has no unregister: the handler stays until finalize.  Drop
     * messages nobody received. */
    pthread_mutex_lock(&tlm_armci.lock);
    tlm_armci_msg_t *m = inbox_head;
    inbox_head = NULL;
    inbox_tail = &inbox_head;
    pthread_mutex_unlock(&tlm_armci.lock);
    while (m) {
        tlm_armci_msg_t *next = m->next;
        free(m);
        m = next;
    }
}

/* ------------------------------------------------------------------------
 * armci_notify: a message after the earlier operations to the target. */

int armci_notify(int proc)
{
    static const char call[] = "armci_notify";
    tlm_armci_check_proc(call, proc);
    uint32_t args[1] = {TLM_ARMCI_AM_NOTIFY};
    tlm_armci_rc(call,
                 telemem_am_request(proc, tlm_armci.am_id, NULL, 0, args, 1),
                 "proc %d", proc);
    return ++tlm_armci.notify_sent[proc];
}

int armci_notify_wait(int proc, int *pval)
{
    static const char call[] = "armci_notify_wait";
    tlm_armci_check_proc(call, proc);
    int waited = ++tlm_armci.notify_waited[proc];
    tlm_armci_wait_t w;
    tlm_armci_wait_init(&w, call, proc);
    while (atomic_load_explicit(&tlm_armci.notify_received[proc],
                                memory_order_acquire) < waited)
        tlm_armci_wait_poll(&w);
    if (pval)
        *pval = waited;
    return atomic_load(&tlm_armci.notify_received[proc]);
}

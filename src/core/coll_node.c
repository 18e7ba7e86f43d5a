/* coll_node.c - the node area (transport.h, node_base): the steps in
 * which the ranks of this node meet through shared memory, and the
 * buffers a step's data lies in.  A step counts arrivals on one word
 * (every rank adds one) and ends when one rank stores the step's number
 * in the release word and wakes the local ranks that sleep (the node
 * word's futex, core_wait.c, and ops->wake: the doorbell a message would
 * ring).  Layout and protocol:
 * docs/coll.md, "The node area". */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "coll"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/coll_int.h"

/* Control words, each in its own cache line.  Arrivals are counted per
 * parity of the step: a rank arrives at step s + 2 only after every rank
 * arrived at step s (each step's writer waited for them, or its release
 * needed them), so while step s + 1's arrivals may come before step s's
 * last one, step s + 2's cannot. */
typedef struct node_ctl {
    _Alignas(64) _Atomic uint64_t arrived[2]; /* by parity: all steps' */
    _Alignas(64) uint64_t pad;
    _Alignas(64) _Atomic uint64_t release; /* last step released */
    _Alignas(64) _Atomic uint64_t err_step; /* a step released with... */
    _Atomic int32_t err_code;               /* ...this error */
    /* Ranks waiting for a step's arrivals: how many, and which (one byte
     * per local rank after this struct): the last arrival wakes them. */
    _Alignas(64) _Atomic uint32_t arr_waiting;
    /* The node word of the waits (tlm_core_wait_node_words): a futex word
     * and how many sleep on it. */
    _Alignas(64) _Atomic uint32_t wake_seq;
    _Atomic uint32_t sleepers;
} node_ctl_t;

/* A small slot: allreduce and allgather contributions up to this size
 * go through dense slots (the reducer reads a few lines, not a page per
 * rank). */
#define SMALL_SLOT 512u
#define PAGE 4096u

tlm_core_node_t tlm_core_node;

static struct {
    uint8_t *base;
    node_ctl_t *ctl;
    _Atomic uint8_t *arr_want; /* nlocal bytes */
    _Atomic uint8_t *asleep;   /* nlocal bytes: no longer spinning in a
                                * node step's wait (yields or sleeps) */
    bool track;                /* keep asleep (the ranks fit the CPUs:
                                * broadcasts look at it) */
    uint8_t *small[2];         /* (nlocal + 1) small slots per set */
    uint8_t *big[2];           /* (nlocal + 1) large slots per set */
    int *rank;                 /* local index -> rank */
} A;

static size_t small_off(int nlocal)
{
    return TLM_ALIGN_UP(sizeof(node_ctl_t) + 2 * (size_t)nlocal, 64);
}

static size_t big_off(int nlocal)
{
    return TLM_ALIGN_UP(small_off(nlocal) +
                            2 * (size_t)(nlocal + 1) * SMALL_SLOT, PAGE);
}

/* The large slot for nlocal ranks: TELEMEM_COLL_NODE_MEM over the two
 * sets of nlocal + 1 slots, in whole pages, at most SLOT_MAX (a piece
 * larger than that saves no step worth its memory). */
#define SLOT_MAX ((size_t)1 << 20)
static size_t slot_bytes(int nlocal)
{
    size_t per = tlm_core.cfg.COLL_NODE_MEM / (2 * (size_t)(nlocal + 1));
    return TLM_MIN(TLM_MAX(per / PAGE * PAGE, (size_t)PAGE), SLOT_MAX);
}

size_t tlm_core_coll_node_bytes(int nlocal)
{
    if (strcmp(tlm_core.cfg.COLL, "flat") == 0)
        return 0;
    return big_off(nlocal) + 2 * (size_t)(nlocal + 1) * slot_bytes(nlocal);
}

/* The transport that offers a node area (every rank of this node shares
 * it), or NULL. */
static tlm_transport_t *area_transport(void)
{
    for (int i = 0; i < tlm_am.ntps; i++)
        if (tlm_am.tps[i]->node_base)
            return tlm_am.tps[i];
    return NULL;
}

int tlm_core_node_init(void)
{
    tlm_core_node_t *N = &tlm_core_node;
    memset(N, 0, sizeof(*N));
    memset(&A, 0, sizeof(A));
    int n = tlm_core.nranks, lead = tlm_core.node_leader[tlm_core.rank];
    A.rank = malloc((size_t)n * sizeof(int));
    if (!A.rank)
        return TELEMEM_ERR_NO_MEMORY;
    for (int r = 0; r < n; r++) {
        if (tlm_core.node_leader[r] != lead)
            continue;
        if (r == tlm_core.rank)
            N->me = N->nlocal;
        A.rank[N->nlocal++] = r;
    }
    N->rank = A.rank;
    tlm_transport_t *tp = area_transport();
    if (!tp || tp->node_len < tlm_core_coll_node_bytes(N->nlocal))
        return TELEMEM_OK; /* no node area: the collectives go flat */
    N->tp = tp;
    N->small = SMALL_SLOT;
    N->slot = slot_bytes(N->nlocal);
    N->set_bytes = (size_t)(N->nlocal + 1) * N->slot;
    /* Where the node's ranks fit its CPUs (every rank of the node decides
     * alike): pieces smaller than a set, so that a reader copies a piece
     * out while the root copies the next in (with more ranks than CPUs
     * each step costs wake-ups that a piece's copy does not pay for). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    bool fits = cpus > 0 && N->nlocal <= cpus;
    size_t piece = tlm_core_coll_thr[TLM_COLL_BCAST_PIECE];
    N->bcast_piece = fits && piece
                         ? TLM_MIN(TLM_ALIGN_UP(piece, 64), N->set_bytes)
                         : N->set_bytes;
    /* Readers copying from the root's buffer (one copy each, but a
     * process_vm_readv copies more slowly than memcpy, and the root waits
     * for the last reader) pay only where they run side by side. */
    N->cma = tp->node_cma && fits;
    /* Where they fit, the split's stripes are reduced side by side. */
    N->split_at = tlm_core_coll_thr[TLM_COLL_SPLIT];
    if (fits)
        N->split_at = TLM_MIN(N->split_at,
                              tlm_core_coll_thr[TLM_COLL_SPLIT_FIT]);
    A.track = fits;
    A.base = tp->node_base;
    A.ctl = (node_ctl_t *)(void *)A.base;
    A.arr_want = (_Atomic uint8_t *)(A.base + sizeof(node_ctl_t));
    A.asleep = A.arr_want + N->nlocal;
    for (int k = 0; k < 2; k++) {
        A.small[k] = A.base + small_off(N->nlocal) +
                     (size_t)k * (size_t)(N->nlocal + 1) * SMALL_SLOT;
        A.big[k] = A.base + big_off(N->nlocal) + (size_t)k * N->set_bytes;
    }
    /* A job of one node: its steps' sleepers may sleep on the node word
     * (no rank elsewhere needs them through a network). */
    if (N->nlocal == n)
        tlm_core_wait_node_words(&A.ctl->wake_seq, &A.ctl->sleepers);
    return TELEMEM_OK;
}

void tlm_core_node_fini(void)
{
    tlm_core_wait_node_words(NULL, NULL);
    free(A.rank);
    memset(&A, 0, sizeof(A));
    memset(&tlm_core_node, 0, sizeof(tlm_core_node));
}

uint8_t *tlm_core_node_small(uint64_t s, int l)
{
    return A.small[s & 1] + (size_t)l * SMALL_SLOT;
}

uint8_t *tlm_core_node_slot(uint64_t s, int l)
{
    return A.big[s & 1] + (size_t)l * tlm_core_node.slot;
}

uint8_t *tlm_core_node_result(uint64_t s)
{
    return tlm_core_node_slot(s, tlm_core_node.nlocal);
}

uint8_t *tlm_core_node_set(uint64_t s)
{
    return A.big[s & 1];
}

int tlm_core_node_cma_read(int pid, void *dst, uintptr_t addr, size_t n)
{
    struct iovec l = {dst, n}, r = {(void *)addr, n};
    while (r.iov_len) {
        ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            int err = k < 0 ? errno : EFAULT;
            if (err == ESRCH)
                return TELEMEM_ERR_PEER_DEAD;
            tlm_error("broadcast: reading %zu bytes from pid %d: %s", n, pid,
                      strerror(err));
            return TELEMEM_ERR_TRANSPORT;
        }
        l.iov_base = (char *)l.iov_base + k;
        l.iov_len -= (size_t)k;
        r.iov_base = (char *)r.iov_base + k;
        r.iov_len -= (size_t)k;
    }
    return TELEMEM_OK;
}

/* ---- waiting and waking -------------------------------------------------- */

static void wake(int l)
{
    tlm_transport_t *tp = tlm_core_node.tp;
    tp->ops->wake(tp, A.rank[l]);
}

/* Every rank of this node is alive (in finalize, where the waits watch
 * no rank: ranks of other nodes that finished may look dead). */
static int local_alive(void)
{
    for (int l = 0; l < tlm_core_node.nlocal; l++) {
        int rc = tlm_core_check_alive(A.rank[l]);
        if (rc != TELEMEM_OK)
            return rc;
    }
    return TELEMEM_OK;
}

/* Wait until *word >= target, serving requests meanwhile (the wait loop
 * sleeps on the node word or the transports' doorbells; whoever makes
 * the condition true wakes both).  Every rank's death ends it. */
static int wait_word(_Atomic uint64_t *word, uint64_t target)
{
    if (atomic_load_explicit(word, memory_order_acquire) >= target)
        return TELEMEM_OK;
    bool fin = tlm_core.finalizing;
    tlm_wait_t w;
    tlm_core_wait_init(&w, fin ? tlm_core.rank : -1);
    double next = fin ? tlm_util_now() + tlm_core.cfg.LIVENESS_INTERVAL : 0;
    _Atomic uint8_t *asleep = &A.asleep[tlm_core_node.me];
    bool marked = false;
    int rc = TELEMEM_OK;
    while (atomic_load_explicit(word, memory_order_acquire) < target) {
        rc = tlm_core_wait_node_step(&w, word, target);
        if (rc == TELEMEM_OK && fin && tlm_util_now() >= next) {
            next = tlm_util_now() + tlm_core.cfg.LIVENESS_INTERVAL;
            rc = local_alive();
        }
        if (rc != TELEMEM_OK)
            break;
        if (A.track && marked == tlm_core_wait_spinning(&w)) {
            marked = !marked;
            atomic_store_explicit(asleep, marked, memory_order_relaxed);
        }
    }
    if (marked)
        atomic_store_explicit(asleep, 0, memory_order_relaxed);
    return rc;
}

bool tlm_core_node_asleep(int except)
{
    for (int l = 0; l < tlm_core_node.nlocal; l++)
        if (l != except &&
            atomic_load_explicit(&A.asleep[l], memory_order_relaxed))
            return true;
    return false;
}

/* The count of step s's parity once every rank arrived at s. */
static uint64_t full_count(uint64_t s)
{
    return (s + 1) / 2 * (uint64_t)tlm_core_node.nlocal;
}

int tlm_core_node_wait_all(uint64_t s)
{
    _Atomic uint64_t *cnt = &A.ctl->arrived[s & 1];
    uint64_t target = full_count(s);
    if (atomic_load_explicit(cnt, memory_order_acquire) >= target)
        return TELEMEM_OK;
    /* Say so before the last look (the last arrival looks after its add:
     * both sides' read-modify-writes order them). */
    int me = tlm_core_node.me;
    atomic_store_explicit(&A.arr_want[me], 1, memory_order_relaxed);
    atomic_fetch_add(&A.ctl->arr_waiting, 1);
    int rc = wait_word(cnt, target);
    atomic_fetch_sub(&A.ctl->arr_waiting, 1);
    atomic_store_explicit(&A.arr_want[me], 0, memory_order_relaxed);
    return rc;
}

int tlm_core_node_begin(bool writer, uint64_t *s_p)
{
    uint64_t s = ++tlm_core_node.step;
    *s_p = s;
    return writer && s > 1 ? tlm_core_node_wait_all(s - 1) : TELEMEM_OK;
}

bool tlm_core_node_arrive(uint64_t s)
{
    int nl = tlm_core_node.nlocal;
    uint64_t old = atomic_fetch_add(&A.ctl->arrived[s & 1], 1);
    if (old + 1 != full_count(s))
        return false;
    if (atomic_load(&A.ctl->arr_waiting)) {
        tlm_core_wait_node_wake();
        for (int l = 0; l < nl; l++)
            if (l != tlm_core_node.me &&
                atomic_load_explicit(&A.arr_want[l], memory_order_relaxed))
                wake(l);
    }
    return true;
}

void tlm_core_node_release(uint64_t s, int rc)
{
    if (rc != TELEMEM_OK) {
        atomic_store_explicit(&A.ctl->err_code, rc, memory_order_relaxed);
        atomic_store_explicit(&A.ctl->err_step, s, memory_order_relaxed);
    }
    atomic_store_explicit(&A.ctl->release, s, memory_order_release);
    tlm_core_wait_node_wake();
    for (int l = 0; l < tlm_core_node.nlocal; l++)
        if (l != tlm_core_node.me)
            wake(l);
}

int tlm_core_node_wait_release(uint64_t s)
{
    int rc = wait_word(&A.ctl->release, s);
    if (rc == TELEMEM_OK &&
        atomic_load_explicit(&A.ctl->err_step, memory_order_relaxed) == s)
        rc = atomic_load_explicit(&A.ctl->err_code, memory_order_relaxed);
    return rc;
}

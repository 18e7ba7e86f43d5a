/* shm_pull.c - the shm transport's pull path (docs/shm.md, "The pull
 * path"): a long payload goes as a descriptor of the sender's memory that
 * the receiver copies itself, with process_vm_readv or, from a
 * telemem_malloc_all block it maps, with memcpy; the sender's side (its
 * pulls in flight, moving one whose source is about to change, finishing
 * them) and the receiver's, and whether pulls are on at all (a probe of
 * every local peer at open, the thresholds). */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "shm"
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "telemem.h"
#include "backends/shm/shm_inl.h"
#include "backends/window/window.h"
#include "util/log.h"
#include "util/util.h"

/* Payloads from these sizes are pulled unless the profile or the settings
 * say otherwise (docs/shm.md, "The pull path"): with process_vm_readv, and
 * from a telemem_malloc_all block the receiver maps. */
#define SHM_PULL_DEFAULT (4u << 20)
#define SHM_MAP_DEFAULT (64u << 10)

/* Wait until p has finished pull i (it is reading it now: a system call
 * away), or is gone. */
static void wait_pulled(shm_transport_t *st, shm_peer_t *p, uint64_t i)
{
    for (unsigned k = 1; atomic_load_explicit(&p->out->pulled,
                                              memory_order_acquire) <= i;
         k++) {
        if (k % 1024 == 0 && tlm_shm_lock_free(st, p->local))
            return;
        sched_yield();
    }
}

/* [addr, addr+len) is about to change: pulls to peer from it that the
 * peer has not begun are moved to a copy taken now (transport.h). */
void tlm_shm_protect(tlm_transport_t *tp, int peer_rank, uintptr_t addr,
                     size_t len)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int l = peer_rank >= 0 && peer_rank < st->nranks
                ? st->local_of_rank[peer_rank] : -1;
    if (l < 0 || l == st->my_local || !st->peers[l].zc)
        return;
    shm_peer_t *p = &st->peers[l];
    uint64_t i = TLM_MAX(p->zc_done, atomic_load_explicit(
                                         &p->out->pulled,
                                         memory_order_acquire));
    for (; i < p->zc_sent; i++) {
        shm_zc_t *z = &p->zc[i & st->ring_mask];
        if (z->snap || !tlm_util_ranges_overlap(z->src, z->len, addr, len))
            continue;
        void *snap = malloc(z->len ? z->len : 1);
        uint32_t want = PULL_READY;
        if (snap) {
            memcpy(snap, (const void *)z->src, z->len);
            atomic_store_explicit(&z->desc->moved, (uintptr_t)snap,
                                  memory_order_relaxed);
            if (atomic_compare_exchange_strong_explicit(
                    &z->desc->state, &want, PULL_MOVED, memory_order_acq_rel,
                    memory_order_acquire)) {
                z->snap = snap;
                continue;
            }
            free(snap);
        }
        wait_pulled(st, p, i); /* taken already (or no memory) */
    }
}

/* Finish the sender's pulls up to n (n = UINT64_MAX: all) with status. */
void tlm_shm_finish_pulls(shm_transport_t *st, shm_peer_t *p, uint64_t n,
                          int status)
{
    while (p->zc_done < n && p->zc_done < p->zc_sent) {
        shm_zc_t z = p->zc[p->zc_done++ & st->ring_mask];
        if (p->zc_done == p->zc_sent)
            st->zc_peers--;
        free(z.snap);
        z.done(z.arg, status);
    }
}

/* A long payload as a descriptor of the caller's memory, which the
 * receiver pulls; done runs once it has (tlm_shm_reap_pulls). */
static inline int send_zc_impl(tlm_transport_t *tp, int peer_rank,
                               const void *hdr, size_t hdr_len,
                               const void *data, size_t len,
                               tlm_sent_fn_t done, void *arg, bool fenced)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    shm_pull_t d = {(uintptr_t)data, len, (uint32_t)hdr_len, PULL_READY, 0};
    shm_peer_t *p;
    uint8_t *dst;
    int rc = shm_reserve(st, peer_rank, sizeof(d) + hdr_len, &p, &dst);
    if (TLM_UNLIKELY(rc != TELEMEM_OK))
        return rc;
    memcpy(dst, &d, sizeof(d));
    memcpy(dst + sizeof(d), hdr, hdr_len);
    if (TLM_UNLIKELY(p->zc_sent - p->zc_done > st->ring_mask))
        /* The ring had room, so its older pulls are done: reap them
         * before their entries are reused. */
        tlm_shm_finish_pulls(st, p,
                             atomic_load_explicit(&p->out->pulled,
                                                  memory_order_acquire),
                             TELEMEM_OK);
    shm_zc_t *z = &p->zc[p->zc_sent++ & st->ring_mask];
    z->done = done;
    z->arg = arg;
    z->desc = (shm_pull_t *)(void *)dst;
    z->src = (uintptr_t)data;
    z->len = len;
    z->snap = NULL;
    z->taken_at = 0;
    if (p->zc_sent - p->zc_done == 1)
        st->zc_peers++;
    shm_commit(st, p, sizeof(d) + hdr_len, CELL_PULL, fenced);
    return TELEMEM_OK;
}

int tlm_shm_send_zc(tlm_transport_t *tp, int peer_rank, const void *hdr,
                    size_t hdr_len, const void *data, size_t len,
                    tlm_sent_fn_t done, void *arg)
{
    return send_zc_impl(tp, peer_rank, hdr, hdr_len, data, len, done, arg,
                        false);
}

int tlm_shm_send_zc_fenced(tlm_transport_t *tp, int peer_rank, const void *hdr,
                           size_t hdr_len, const void *data, size_t len,
                           tlm_sent_fn_t done, void *arg)
{
    return send_zc_impl(tp, peer_rank, hdr, hdr_len, data, len, done, arg,
                        true);
}

/* Does peer map [data, data+len)?  Every local peer imports this
 * process's telemem_malloc_all blocks (a peer that could not pulls with
 * process_vm_readv instead: pull_payload). */
bool tlm_shm_zc_mapped(tlm_transport_t *tp, int peer, const void *data,
                       size_t len)
{
    (void)peer; /* only ever asked for local peers */
    return tp->direct && tlm_window_mine(tp->direct, (uintptr_t)data, len);
}

/* The receivers' finished pulls: their sources may change again.  After
 * the drain, so that an ack delivered there (a put_nb's) never overtakes
 * the release of its source. */
void tlm_shm_reap_pulls(shm_transport_t *st)
{
    for (int l = 0; l < st->nlocal && st->zc_peers; l++) {
        shm_peer_t *p = &st->peers[l];
        if (l != st->my_local && p->zc_done != p->zc_sent)
            tlm_shm_finish_pulls(st, p,
                                 atomic_load_explicit(&p->out->pulled,
                                                      memory_order_acquire),
                                 TELEMEM_OK);
    }
}

/* Copy n bytes at addr in p's memory to dst, the last tlm_util_tail_len(n)
 * of them last and in one store (a put's last word, telemem.h). */
static int cma_pull(shm_peer_t *p, void *dst, uint64_t addr, size_t n)
{
    size_t tail = tlm_util_tail_len(n);
    uint64_t last = 0;
    struct iovec l[2] = {{dst, n - tail}, {&last, tail}};
    struct iovec r = {(void *)(uintptr_t)addr, n};
    int li = n > tail ? 0 : 1;
    while (r.iov_len) {
        ssize_t k = process_vm_readv(p->pid, l + li, (unsigned long)(2 - li),
                                     &r, 1, 0);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            int err = k < 0 ? errno : EFAULT;
            if (err != ESRCH)
                tlm_error("pulling %zu bytes from rank %d (pid %d): %s", n,
                          p->rank, (int)p->pid, strerror(err));
            return err == ESRCH ? TELEMEM_ERR_PEER_DEAD : TELEMEM_ERR_TRANSPORT;
        }
        r.iov_base = (char *)r.iov_base + k;
        r.iov_len -= (size_t)k;
        for (size_t left = (size_t)k; left && li < 2;) {
            size_t t = TLM_MIN(left, l[li].iov_len);
            l[li].iov_base = (char *)l[li].iov_base + t;
            l[li].iov_len -= t;
            left -= t;
            if (l[li].iov_len == 0)
                li++;
        }
    }
    atomic_thread_fence(memory_order_release);
    tlm_util_store_once((char *)dst + n - tail, &last, tail);
    return TELEMEM_OK;
}

/* Copy n bytes at addr in p's memory to dst as cma_pull does: with
 * memcpy when they lie in one of p's telemem_malloc_all blocks mapped here
 * (the window driver's shared memory: no system call, and process_vm_readv
 * copies several times slower than memcpy on some machines,
 * docs/shm.md), else with process_vm_readv. */
static int pull_payload(shm_transport_t *st, shm_peer_t *p, void *dst,
                        uint64_t addr, size_t n)
{
    const char *src = st->super.direct && addr == (uintptr_t)addr
                          ? tlm_window_map(st->super.direct, p->rank,
                                           (uintptr_t)addr, n)
                          : NULL;
    if (!src)
        return cma_pull(p, dst, addr, n);
    tlm_util_copy_last(dst, src, n);
    return TELEMEM_OK;
}

/* A pull message from p: the payload straight to where the AM layer
 * places it, else pulled behind a copy of the header and delivered whole.
 * TELEMEM_OK (consumed) or TELEMEM_ERR_AGAIN (deferred: stays in the
 * ring). */
int tlm_shm_pull_in(shm_transport_t *st, shm_peer_t *p, const uint8_t *msg,
                    size_t len)
{
    shm_pull_t *dp = (shm_pull_t *)(uintptr_t)msg, d;
    if (len < sizeof(d) || dp->hdr_len != len - sizeof(d) ||
        dp->len > (64ull << 30)) {
        tlm_error("peer %d sent a bad pull descriptor (%zu bytes)", p->rank,
                  len);
        return TELEMEM_OK;
    }
    d.addr = dp->addr;
    d.len = dp->len;
    d.hdr_len = dp->hdr_len;
    uint32_t want = PULL_READY;
    if (!atomic_compare_exchange_strong_explicit(&dp->state, &want,
                                                 PULL_TAKEN,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire) &&
        want == PULL_MOVED) /* the sender copied it away: read the copy */
        d.addr = atomic_load_explicit(&dp->moved, memory_order_relaxed);
    const uint8_t *hdr = msg + sizeof(d);
    size_t plen = (size_t)d.len;
    void *dst = st->place ? st->place(st->deliver_arg, p->rank, hdr,
                                      d.hdr_len, plen) : NULL;
    if (dst) {
        int rc = pull_payload(st, p, dst, d.addr, plen);
        st->placed(st->deliver_arg, p->rank, hdr, d.hdr_len, plen, rc);
        return TELEMEM_OK;
    }
    uint8_t *whole = malloc(d.hdr_len + plen);
    if (!whole) {
        tlm_error("no memory to receive a message of %zu bytes from rank %d",
                  d.hdr_len + plen, p->rank);
        return TELEMEM_OK;
    }
    memcpy(whole, hdr, d.hdr_len);
    int rc = pull_payload(st, p, whole + d.hdr_len, d.addr, plen);
    if (rc == TELEMEM_OK &&
        st->deliver(st->deliver_arg, p->rank, whole, d.hdr_len + plen) != 0)
        rc = TELEMEM_ERR_AGAIN;
    free(whole);
    return rc == TELEMEM_ERR_AGAIN ? rc : TELEMEM_OK;
}

/* Is a receiver reading one of this process's pulls right now?  It
 * finishes within about the time of its copy, sooner than a sleep and a
 * wake-up would take in a VM (20-30 us measured here, 2026-11-26: a 256 KiB
 * ping-pong took 29 us per message where waits slept, 7.7 us where they
 * did not), so a wait polls on instead of sleeping - for at most
 * PULL_SPIN_S plus the copy at PULL_SPIN_BW from when a wait first saw it
 * taken, in case the receiver lost its CPU in the middle. */
#define PULL_SPIN_S 50e-6
#define PULL_SPIN_BW 1e9
bool tlm_shm_pull_under_way(shm_transport_t *st)
{
    double now = 0;
    for (int l = 0; l < st->nlocal && st->zc_peers; l++) {
        shm_peer_t *p = &st->peers[l];
        if (l == st->my_local || p->zc_done == p->zc_sent)
            continue;
        uint64_t i = TLM_MAX(p->zc_done, atomic_load_explicit(
                                             &p->out->pulled,
                                             memory_order_acquire));
        if (i >= p->zc_sent)
            continue;
        shm_zc_t *z = &p->zc[i & st->ring_mask];
        if (atomic_load_explicit(&z->desc->state, memory_order_acquire) !=
            PULL_TAKEN)
            continue;
        if (now == 0)
            now = tlm_util_now();
        if (z->taken_at == 0)
            z->taken_at = now;
        if (now - z->taken_at < PULL_SPIN_S + (double)z->len / PULL_SPIN_BW)
            return true;
    }
    return false;
}

/* Can this process pull from every local peer?  A read of each peer's
 * segment header where the peer mapped it: Yama's ptrace_scope (1 allows
 * it only towards descendants, 2 and 3 only with CAP_SYS_PTRACE), other
 * users, a container's filter all show here.  The first refusal is logged
 * (info: the job runs on, with two copies). */
static bool cma_probe(shm_transport_t *st)
{
    for (int l = 0; l < st->nlocal; l++) {
        if (l == st->my_local)
            continue;
        const shm_seg_hdr_t *h = st->maps[l].hdr;
        uint32_t magic = 0;
        struct iovec lo = {&magic, sizeof(magic)};
        struct iovec ro = {(void *)(uintptr_t)h->base, sizeof(magic)};
        if (process_vm_readv(st->peers[l].pid, &lo, 1, &ro, 1, 0) !=
                (ssize_t)sizeof(magic) || magic != SHM_MAGIC) {
            tlm_info("process_vm_readv from rank %d (pid %d): %s; shared "
                     "memory copies long payloads twice (no CMA pull)",
                     st->maps[l].rank, (int)st->peers[l].pid,
                     magic != SHM_MAGIC && errno == 0 ? "wrong data"
                                                      : strerror(errno));
            return false;
        }
    }
    return true;
}

/* A pull threshold: the setting (nonzero), else the profile's last
 * "<key> <bytes> ..." line that holds a size (telemem-run --calibrate),
 * else dflt.  what names it in the debug log. */
static size_t pull_threshold(const tlm_transport_params_t *p, size_t setting,
                             const char *key, const char *what, size_t dflt)
{
    if (setting)
        return setting;
    size_t thr = dflt;
    size_t pos = 0;
    const tlm_profile_entry_t *e;
    while ((e = tlm_util_profile_next(p->profile, key, &pos))) {
        unsigned long long v = e->value[0];
        if (v == 0)
            continue;
        thr = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
        tlm_debug("profile %s: %s from %zu bytes", p->profile->path, what,
                  thr);
    }
    return TLM_MAX(thr, 1);
}

/* After every rank has mapped the others: pulls only if every local rank
 * can pull from every other (all decide alike, from the headers). */
int tlm_shm_pull_setup(shm_transport_t *st, const tlm_transport_params_t *p)
{
    shm_seg_hdr_t *me = st->maps[st->my_local].hdr;
    me->cma_ok = p->config->SHM_CMA && st->nlocal > 1 && cma_probe(st);
    int rc = tlm_boot_fence(p->boot); /* everyone has probed */
    if (rc != TELEMEM_OK)
        return rc;
    st->cma = p->config->SHM_CMA && st->nlocal > 1;
    for (int l = 0; l < st->nlocal; l++)
        st->cma = st->cma && st->maps[l].hdr->cma_ok;
    if (p->config->SHM_CMA && st->nlocal > 1 && me->cma_ok && !st->cma)
        tlm_debug("a local rank cannot pull: no CMA pull");
    st->super.node_cma = st->cma;
    if (!st->cma)
        return TELEMEM_OK;
    st->super.zc_min = pull_threshold(p, p->config->SHM_CMA_THRESHOLD,
                                      "shm-pull", "pull", SHM_PULL_DEFAULT);
    st->super.zc_mapped_min =
        pull_threshold(p, p->config->SHM_MAP_THRESHOLD, "shm-map",
                       "mapped pull", SHM_MAP_DEFAULT);
    st->super.zc_local_max = SIZE_MAX;
    st->super.zc_max_msg = 4u << 20;
    return TELEMEM_OK;
}

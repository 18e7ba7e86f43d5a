/* core_direct.c - the direct (RDMA) path in core: the one dispatch point
 * (tlm_core_direct_route: direct or polling for a transfer), the
 * transfers and atomics it hands to a driver, their ordering against the
 * AM path, flush for quiet, and set-up.  Its other concerns have their own
 * files (direct_int.h lists them): thresholds, keys, the express table,
 * blocks.  It and core_engine.c call each other: a flush waits for the
 * drivers, and a direct transfer first flushes the AM requests it could
 * overtake, so the two paths keep issue order.  Protocol: docs/direct.md. */
#define TLM_LOG_SUBSYS "direct"
#include <stdlib.h>
#include <string.h>

#include "core/direct_int.h"

tlm_core_dstate_t tlm_core_dstate;

int tlm_core_direct_init(void)
{
    tlm_config_t *c = &tlm_core.cfg;
    D.mode = !strcmp(c->DIRECT, "never")    ? MODE_NEVER
             : !strcmp(c->DIRECT, "always") ? MODE_ALWAYS
                                            : MODE_AUTO;
    tlm_core_dx_keys_init();
    D.peers = calloc((size_t)tlm_core.nranks, sizeof(dpeer_t));
    if (!D.peers)
        return TELEMEM_ERR_NO_MEMORY;
    size_t thr[4] = {0}, row[4] = {0};
    for (int i = 0; i < tlm_am.ntps; i++) {
        tlm_transport_t *tp = tlm_am.tps[i];
        tlm_direct_t *d = tp->direct;
        if (!d)
            continue;
        if (!D.slot_d[tlm_core_dx_slot(tp)])
            D.slot_d[tlm_core_dx_slot(tp)] = d;
        tlm_core_dx_thresholds(tp, &thr[i], &row[i]);
    }
    /* Local peers may apply hardware atomics and accumulates to our
     * memory: apply ours, and accumulates, with atomic instructions too.
     * Whether they may is their setting, not ours: a job whose ranks set
     * TELEMEM_DIRECT differently (never here, auto there) must still add
     * up (tlm_core.job_direct, from the start-up exchange). */
    tlm_core.acc_flags = 0;
    for (int s = 0; s < NSLOTS; s++)
        if (tlm_core.job_direct && D.slot_d[s] &&
            (D.slot_d[s]->ops->atomic || D.slot_d[s]->ops->acc))
            tlm_core.acc_flags = TLM_ACC_ATOMIC;
    for (int r = 0; r < tlm_core.nranks; r++) {
        tlm_core.peers[r].direct_min = SIZE_MAX;
        tlm_transport_t *tp = tlm_am.peers[r].tp;
        if (r == tlm_core.rank || !tp || !tp->direct)
            continue;
        for (int i = 0; i < tlm_am.ntps; i++) {
            if (tlm_am.tps[i] != tp)
                continue;
            D.peers[r].d = tp->direct;
            D.peers[r].row_min = row[i];
            tlm_core.peers[r].direct_min = thr[i];
        }
        tlm_direct_t *d = D.peers[r].d;
        if (D.mode != MODE_NEVER && d && d->sync && d->ops->atomic) {
            D.peers[r].x = calloc(XSLOTS, sizeof(xent_t));
            if (!D.peers[r].x)
                return TELEMEM_ERR_NO_MEMORY;
        }
    }
    return TELEMEM_OK;
}

/* ---- ordering and completion ------------------------------------------------ */

int tlm_core_direct_settle(int rank)
{
    tlm_core_peer_t *cp = &tlm_core.peers[rank];
    tlm_direct_t *d = D.peers[rank].d;
    if (!cp->direct_busy || !d || !d->ops->flush)
        return TELEMEM_OK;
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    for (;;) {
        int rc = d->ops->flush(d, rank);
        if (rc == TELEMEM_OK)
            break;
        if (rc == TELEMEM_ERR_PEER_DEAD && !cp->dead) {
            /* Remembered for every later wait on it and for finalize. */
            tlm_error("rank %d has died (its direct path failed)", rank);
            cp->dead = true;
            tlm_core.peer_gone = true;
        }
        if (rc != TELEMEM_ERR_AGAIN)
            return rc;
        if (d->ops->progress)
            d->ops->progress(d);
        rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK)
            return rc;
    }
    cp->direct_busy = false;
    return TELEMEM_OK;
}

int tlm_core_direct_flush(int rank)
{
    int lo = rank < 0 ? 0 : rank, hi = rank < 0 ? tlm_core.nranks : rank + 1;
    int rc = TELEMEM_OK;
    for (int r = lo; r < hi && D.peers; r++) {
        if (!tlm_core.peers[r].direct_busy)
            continue;
        int src = tlm_core_direct_settle(r);
        if (src != TELEMEM_OK && rc == TELEMEM_OK)
            rc = src;
    }
    return rc;
}

/* ---- initiator: transfers ------------------------------------------------ */

/* Run chain segs[0..n) (part of a transfer of total bytes) under the key
 * covering [lo, lo+ext) of rank. */
static int run_chain(int rank, bool write, const tlm_direct_seg_t *segs,
                     int n, uintptr_t lo, size_t ext, size_t total, int mode)
{
    dpeer_t *p = &D.peers[rank];
    tlm_direct_t *d = p->d;
    int rc;
    rkey_ent_t *e = tlm_core_dx_find(p, lo, ext);
    if (!e && (e = tlm_core_dx_find(p, lo, 1)) != NULL) {
        /* It starts in a region of the peer this rank knows (regions never
         * overlap) and runs past its end: the target would refuse it, and
         * a driver must not be handed it.  Refused here. */
        tlm_error("%s of %zu bytes at 0x%llx is out of range: it runs past "
                  "the end of rank %d's region [0x%llx, 0x%llx)",
                  write ? "put" : "get", ext,
                  (unsigned long long)lo, rank, (unsigned long long)e->base,
                  (unsigned long long)e->end);
        return TLM_DIRECT_REFUSED;
    }
    if (!e) {
        rc = tlm_core_dx_fetch(rank, lo, ext);
        if (rc != TELEMEM_OK)
            return rc;
        e = tlm_core_dx_find(p, lo, ext);
    }
    /* Decided before ordering: a declined transfer costs no flush. */
    if (!e || !e->rk || total < e->min)
        return TLM_DIRECT_DECLINED;
    rc = tlm_core_dx_order(rank, p, lo, ext, &e);
    if (rc != TELEMEM_OK)
        return rc;
    /* A driver rides on its transport's connection (direct.h): a block's
     * key comes with telemem_malloc_all, before any message to the peer
     * may have made the first contact. */
    if (TLM_UNLIKELY(!p->contacted)) {
        rc = tlm_transport_connect(tlm_am.peers[rank].tp, rank);
        if (rc != TELEMEM_OK)
            return rc;
        p->contacted = true;
    }
    /* From here no poll runs before the driver has the chain: the key
     * cannot be withdrawn under us. */
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    for (;;) {
        rc = write ? d->ops->write(d, rank, e->rk, segs, n)
                   : d->ops->read(d, rank, e->rk, segs, n);
        if (rc != TELEMEM_ERR_AGAIN)
            break;
        rc = tlm_core_wait_step(&w);
        if (rc == TELEMEM_OK)
            rc = tlm_core_dx_refind(p, lo, ext, &e); /* withdrawn while we waited? */
        if (rc != TELEMEM_OK)
            return rc;
    }
    if (rc != TELEMEM_OK)
        return rc;
    if (!d->sync) {
        tlm_core.peers[rank].direct_busy = true;
        if (mode != TLM_MODE_NBI)
            rc = tlm_core_direct_settle(rank);
    }
    return rc;
}

int tlm_core_direct_atomic(int rank, int op, unsigned width, uintptr_t addr,
                           uint64_t operand, uint64_t compare, uint64_t *old)
{
    dpeer_t *p = &D.peers[rank];
    if (D.mode == MODE_NEVER || !p->d || !p->d->ops->atomic)
        return TLM_DIRECT_DECLINED;
    rkey_ent_t *e = tlm_core_dx_find(p, addr, width);
    if (!e || !e->rk)
        return TLM_DIRECT_DECLINED;
    int rc = tlm_core_dx_order(rank, p, addr, width, &e);
    if (rc != TELEMEM_OK)
        return rc;
    rc = p->d->ops->atomic(p->d, rank, e->rk, addr, op, width, operand,
                           compare, old);
    return rc == TELEMEM_ERR_UNSUPPORTED ? TLM_DIRECT_DECLINED : rc;
}

static int direct_rma(int rank, bool write, void *remote, void *local,
                      size_t n, int mode)
{
    if (!D.peers[rank].d)
        return TLM_DIRECT_DECLINED;
    tlm_direct_seg_t s = {(uintptr_t)local, (uintptr_t)remote, n, 1, 0, 0};
    return run_chain(rank, write, &s, 1, (uintptr_t)remote, n, n, mode);
}

/* Walk patch d as block-stride descriptors (core_direct.h). */
int tlm_core_dx_chain(const tlm_pack_desc_t *d, void *remote, void *local,
                      size_t batch, tlm_core_dx_chain_fn fn, void *arg)
{
    /* Dimension 1 is the stride of a descriptor; dimensions 2.. make the
     * chain (one descriptor each), as the TCA engine takes them. */
    size_t idx[TLM_PACK_MAX_LEVELS + 1] = {0};
    size_t nsegs = 1;
    for (int k = 2; k <= d->levels; k++)
        nsegs *= d->count[k];
    tlm_direct_seg_t segs[CHAIN_BATCH];
    batch = TLM_MAX(TLM_MIN((size_t)CHAIN_BATCH, batch), 1);
    int n = 0, rc = TELEMEM_OK;
    for (size_t i = 0; i < nsegs && rc == TELEMEM_OK; i++) {
        size_t loff = 0, roff = 0;
        for (int k = 2; k <= d->levels; k++) {
            loff += idx[k] * d->stride[TLM_PACK_LOCAL][k - 1];
            roff += idx[k] * d->stride[TLM_PACK_REMOTE][k - 1];
        }
        segs[n++] =
            d->levels == 0
                ? (tlm_direct_seg_t){(uintptr_t)local, (uintptr_t)remote,
                                     d->count[0], 1, 0, 0}
                : (tlm_direct_seg_t){
                      (uintptr_t)local + loff, (uintptr_t)remote + roff,
                      d->count[0], d->count[1],
                      (ptrdiff_t)d->stride[TLM_PACK_LOCAL][0],
                      (ptrdiff_t)d->stride[TLM_PACK_REMOTE][0]};
        for (int k = 2; k <= d->levels; k++) { /* next index, odometer */
            if (++idx[k] < d->count[k])
                break;
            idx[k] = 0;
        }
        if ((size_t)n == batch || i + 1 == nsegs) {
            rc = fn(segs, n, arg);
            n = 0;
        }
    }
    return rc;
}

struct strided_run {
    int rank;
    bool write;
    uintptr_t remote;
    size_t ext, total;
    int mode;
};

static int strided_batch(const tlm_direct_seg_t *segs, int n, void *arg)
{
    const struct strided_run *s = arg;
    /* Declined after a part went direct cannot happen: the key covers the
     * whole extent and is checked before the first. */
    return run_chain(s->rank, s->write, segs, n, s->remote, s->ext, s->total,
                     s->mode);
}

static int direct_strided(int rank, bool write, const tlm_pack_desc_t *d,
                          void *remote, void *local, int mode)
{
    dpeer_t *p = &D.peers[rank];
    if (!p->d || d->levels < 1 || d->total < tlm_core.peers[rank].direct_min ||
        d->count[0] < p->row_min)
        return TLM_DIRECT_DECLINED;
    struct strided_run s = {rank, write, (uintptr_t)remote,
                            tlm_pack_extent(d, TLM_PACK_REMOTE), d->total,
                            mode};
    return tlm_core_dx_chain(d, remote, local, p->d->max_segs, strided_batch,
                             &s);
}

/* The one dispatch point (core_direct.h): the driver takes a transfer
 * when it is long enough for the peer's threshold and the driver can reach
 * it, else the AM path does, after the driver's earlier operations to the
 * peer.  Contiguous and strided transfers have their own entry so that the
 * contiguous one (the latency path) carries no strided state. */
static int route_end(int rank, int rc, bool write, int mode,
                     telemem_handle_t *h)
{
    if (rc == TLM_DIRECT_REFUSED)
        return tlm_core_refused(rank, write, mode, h,
                                TELEMEM_ERR_OUT_OF_RANGE);
    if (rc != TLM_DIRECT_DECLINED)
        return rc;
    rc = tlm_core_direct_settle(rank);
    return rc == TELEMEM_OK ? TLM_DIRECT_DECLINED : rc;
}

int tlm_core_direct_route_contig(int rank, bool write, void *remote,
                                 void *local, size_t n, int mode,
                                 telemem_handle_t *h)
{
    int rc = TLM_DIRECT_DECLINED;
    if (n >= tlm_core.peers[rank].direct_min)
        rc = direct_rma(rank, write, remote, local, n, mode);
    return route_end(rank, rc, write, mode, h);
}

int tlm_core_direct_route_strided(int rank, const tlm_core_xfer_t *x,
                                  int mode, telemem_handle_t *h)
{
    int rc = TLM_DIRECT_DECLINED;
    if (x->d->total >= tlm_core.peers[rank].direct_min)
        rc = direct_strided(rank, x->write, x->d, x->remote, x->local, mode);
    return route_end(rank, rc, x->write, mode, h);
}

void tlm_core_direct_fini(void)
{
    for (int r = 0; D.peers && r < tlm_core.nranks; r++) {
        dpeer_t *p = &D.peers[r];
        if (p->d)
            tlm_core_dx_drop(r, 0, UINTPTR_MAX, false);
        free(p->keys);
        free(p->x);
    }
    for (size_t i = 0; i < tlm_core.nregions; i++) {
        if (tlm_core.regions[i].dx) {
            tlm_core_dx_free(tlm_core.regions[i].dx);
            tlm_core.regions[i].dx = NULL;
        }
    }
    free(D.peers);
    free(D.text);
    memset(&D, 0, sizeof(D));
}

/* direct_keys.c - the direct path's keys: the per-peer rkey cache,
 * keys of telemem_register ranges fetched on demand (KEY_REQ / KEY_REP)
 * and withdrawn at deregistration (KEY_INVAL / KEY_INVAL_ACK), and the
 * exposures a target makes for them (docs/direct.md).  It and
 * core_region.c call each other: a key request looks its range up there,
 * and deregistration there withdraws the range's keys here. */
#define TLM_LOG_SUBSYS "direct"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/direct_int.h"

/* ---- the rkey cache ------------------------------------------------------- */

rkey_ent_t *tlm_core_dx_search(dpeer_t *p, uintptr_t lo, size_t len)
{
    for (size_t i = 0; i < p->nkeys; i++) {
        rkey_ent_t *e = &p->keys[i];
        if (tlm_util_range_in(lo, len, e->base, e->end)) {
            p->last = i;
            return e;
        }
    }
    return NULL;
}

/* A driver that declines a peer's transfers (key_min: none, as where UCX
 * has no RMA lane) says so once in the configuration text, which the
 * calibration reads (tools/calibrate.c): its times are the AM path's. */
static void note_declined(const dpeer_t *p)
{
    for (int s = 0; s < NSLOTS; s++) {
        if (D.slot_d[s] != p->d || (D.declined & (1u << s)))
            continue;
        D.declined |= (uint8_t)(1u << s);
        char line[160];
        snprintf(line, sizeof(line),
                 "direct path %s: declines rank %d "
                 "(transfers take the AM path)\n",
                 p->d->name, (int)(p - D.peers));
        tlm_config_append(line);
        tlm_debug("%.*s", (int)strlen(line) - 1, line);
    }
}

int tlm_core_dx_add(dpeer_t *p, uintptr_t base, size_t len,
                    tlm_direct_rkey_t *rk)
{
    if (p->nkeys == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        rkey_ent_t *k = realloc(p->keys, cap * sizeof(*k));
        if (!k)
            return TELEMEM_ERR_NO_MEMORY;
        p->keys = k;
        p->cap = cap;
    }
    size_t min = rk && p->d->ops->key_min ? p->d->ops->key_min(p->d, rk) : 0;
    p->keys[p->nkeys++] = (rkey_ent_t){base, base + len, rk, min};
    if (min == SIZE_MAX)
        note_declined(p);
    return TELEMEM_OK;
}

/* Drop (and release) every key of peer r overlapping [lo, hi) (or with
 * base == lo when exact). */
void tlm_core_dx_drop(int r, uintptr_t lo, uintptr_t hi, bool exact)
{
    dpeer_t *p = &D.peers[r];
    bool all = !exact && lo == 0 && hi == UINTPTR_MAX;
    for (size_t i = 0; i < p->nkeys;) {
        rkey_ent_t *e = &p->keys[i];
        bool hit = all ? true : exact ? e->base == lo
                         : tlm_util_ranges_overlap(e->base, e->end - e->base,
                                                   lo, hi - lo);
        if (!hit) {
            i++;
            continue;
        }
        if (e->rk)
            p->d->ops->release(p->d, e->rk);
        p->keys[i] = p->keys[--p->nkeys];
    }
    p->last = 0;
}

/* ---- initiator: keys of registered ranges ------------------------------- */

/* Ask rank for the key of the region holding [addr, addr+len) and wait
 * for the answer (which lands in the cache).  TELEMEM_OK or a wait error. */
int tlm_core_dx_fetch(int rank, uintptr_t addr, size_t len)
{
    dpeer_t *p = &D.peers[rank];
    uint32_t seq = ++p->key_sent;
    tlm_am_get_req_t q = {{TLM_AM_KEY_REQ, 0, 0, seq}, addr, len};
    int rc = tlm_am_send_ctrl(rank, &q, sizeof(q), NULL, 0);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    while ((int32_t)(p->key_done - seq) < 0 && rc == TELEMEM_OK)
        rc = tlm_core_wait_step(&w);
    return rc;
}

static void on_key_rep(int src, const void *msg, size_t len)
{
    const tlm_am_key_rep_t *h = msg;
    if (len < sizeof(*h) || h->key_len > TLM_DIRECT_KEY_MAX ||
        len != sizeof(*h) + h->key_len || !D.peers || !D.peers[src].d)
        return tlm_core_protocol_error(src, "key reply", len);
    dpeer_t *p = &D.peers[src];
    if ((int32_t)(h->h.id - p->key_done) > 0)
        p->key_done = h->h.id;
    int status = (int16_t)h->h.aux;
    if (h->len == 0 || (status != TELEMEM_OK &&
                        status != TELEMEM_ERR_UNSUPPORTED))
        return; /* refused (unknown range) or not now: nothing to cache */
    if (tlm_core_dx_find(p, h->base, h->len))
        return;
    tlm_direct_rkey_t *rk = NULL;
    if (status == TELEMEM_OK &&
        p->d->ops->import(p->d, src, h->base, h->len, h + 1, h->key_len,
                          &rk) != TELEMEM_OK)
        rk = NULL;
    if (tlm_core_dx_add(p, h->base, h->len, rk) != TELEMEM_OK && rk)
        p->d->ops->release(p->d, rk);
}

static void on_key_inval(int src, const void *msg, size_t len)
{
    const tlm_am_get_req_t *q = msg;
    if (len != sizeof(*q) || !D.peers)
        return tlm_core_protocol_error(src, "key invalidation", len);
    if (D.peers[src].d) {
        /* Writes of an async driver still in flight land first. */
        tlm_direct_t *d = D.peers[src].d;
        while (tlm_core.peers[src].direct_busy && d->ops->flush &&
               d->ops->flush(d, src) == TELEMEM_ERR_AGAIN)
            if (d->ops->progress)
                d->ops->progress(d);
        tlm_core_dx_drop(src, q->addr, q->addr, true); /* by base */
    }
    tlm_am_hdr_t a = {TLM_AM_KEY_INVAL_ACK, 0, 0, q->h.id};
    tlm_am_send_ctrl(src, &a, sizeof(a), NULL, 0);
}

/* ---- target: answering key requests ------------------------------------- */

static void key_reply(int src, uint32_t id, int status, uintptr_t base,
                      size_t len, const void *key, size_t key_len)
{
    uint64_t buf[(sizeof(tlm_am_key_rep_t) + TLM_DIRECT_KEY_MAX) / 8];
    tlm_am_key_rep_t *h = (tlm_am_key_rep_t *)(void *)buf;
    *h = (tlm_am_key_rep_t){{TLM_AM_KEY_REP, 0, (uint16_t)(int16_t)status, id},
                            base, len, key_len};
    if (key_len)
        memcpy(h + 1, key, key_len);
    tlm_am_send_ctrl(src, h, sizeof(*h) + key_len, NULL, 0);
}

static void add_holder(region_dx_t *dx, int src)
{
    for (int i = 0; i < dx->nholders; i++)
        if (dx->holders[i] == src)
            return;
    if (dx->nholders == dx->cap) {
        int cap = dx->cap ? dx->cap * 2 : 4;
        int *h = realloc(dx->holders, (size_t)cap * sizeof(int));
        if (!h)
            return;
        dx->holders = h;
        dx->cap = cap;
    }
    dx->holders[dx->nholders++] = src;
}

static void on_key_req(int src, const void *msg, size_t len)
{
    const tlm_am_get_req_t *q = msg;
    if (len != sizeof(*q))
        return tlm_core_protocol_error(src, "key request", len);
    tlm_region_t *r = tlm_core_region_find(q->addr, q->len);
    tlm_transport_t *tp = tlm_am.peers[src].tp;
    tlm_direct_t *d = tp ? tp->direct : NULL;
    if (!r || q->len == 0) {
        tlm_debug("refused a key request by rank %d for [0x%llx, +%llu)",
                  src, (unsigned long long)q->addr,
                  (unsigned long long)q->len);
        return key_reply(src, q->h.id, TELEMEM_ERR_OUT_OF_RANGE, 0, 0, NULL,
                         0);
    }
    size_t rlen = r->end - r->base;
    /* A block's keys went out with telemem_malloc_all: none to give. */
    if (r->from_malloc_all || !d || D.mode == MODE_NEVER)
        return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED,
                         r->from_malloc_all ? r->base : 0,
                         r->from_malloc_all ? rlen : 0, NULL, 0);
    if (!r->dx) {
        r->dx = calloc(1, sizeof(region_dx_t));
        if (!r->dx)
            return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED, 0, 0,
                             NULL, 0);
    }
    region_dx_t *dx = r->dx;
    if (dx->dying) /* being deregistered: this once over AM */
        return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED, 0, 0, NULL,
                         0);
    int s = tlm_core_dx_slot(tp);
    if (dx->state[s] == 0) {
        size_t kl = 0;
        int rc = d->ops->expose(d, (void *)r->base, rlen, &dx->mr[s],
                                dx->key[s], &kl);
        dx->state[s] = rc == TELEMEM_OK ? 1 : -1;
        dx->key_len[s] = (uint32_t)kl;
    }
    add_holder(dx, src);
    if (dx->state[s] < 0)
        return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED, r->base, rlen,
                         NULL, 0);
    key_reply(src, q->h.id, TELEMEM_OK, r->base, rlen, dx->key[s],
              dx->key_len[s]);
}

static void on_key_inval_ack(int src, const void *msg, size_t len)
{
    if (len != sizeof(tlm_am_hdr_t))
        return tlm_core_protocol_error(src, "key invalidation ack", len);
    if (D.inval_pending)
        D.inval_pending--;
}

void tlm_core_dx_free(region_dx_t *dx)
{
    for (int s = 0; s < NSLOTS; s++)
        if (dx->state[s] > 0 && D.slot_d[s])
            D.slot_d[s]->ops->unexpose(D.slot_d[s], dx->mr[s]);
    free(dx->holders);
    free(dx);
}

int tlm_core_direct_region_retire(tlm_region_t *r)
{
    region_dx_t *dx = r->dx;
    if (!dx)
        return TELEMEM_OK;
    /* r may move while we poll (the table grows): keep what we need. */
    uintptr_t base = r->base;
    size_t len = r->end - r->base;
    dx->dying = true;
    int rc = TELEMEM_OK;
    for (int i = 0; i < dx->nholders && rc == TELEMEM_OK; i++) {
        tlm_am_get_req_t q = {{TLM_AM_KEY_INVAL, 0, 0, 0}, base, len};
        rc = tlm_am_send_ctrl(dx->holders[i], &q, sizeof(q), NULL, 0);
        if (rc == TELEMEM_OK)
            D.inval_pending++;
    }
    tlm_wait_t w;
    tlm_core_wait_init(&w, -1);
    while (D.inval_pending && rc == TELEMEM_OK)
        rc = tlm_core_wait_step(&w);
    if (rc != TELEMEM_OK) {
        tlm_error("deregister: peers holding the key of [0x%llx, +%llu) did "
                  "not answer (%s); the range stays registered",
                  (unsigned long long)base, (unsigned long long)len,
                  telemem_strerror(rc));
        return rc;
    }
    return TELEMEM_OK;
}

/* After a successful retire: free what it kept (the caller re-found r). */
void tlm_core_direct_region_free(tlm_region_t *r)
{
    if (r->dx) {
        tlm_core_dx_free(r->dx);
        r->dx = NULL;
    }
}



void tlm_core_dx_keys_init(void)
{
    tlm_am_set_handler(TLM_AM_KEY_REQ, on_key_req);
    tlm_am_set_handler(TLM_AM_KEY_REP, on_key_rep);
    tlm_am_set_handler(TLM_AM_KEY_INVAL, on_key_inval);
    tlm_am_set_handler(TLM_AM_KEY_INVAL_ACK, on_key_inval_ack);
}

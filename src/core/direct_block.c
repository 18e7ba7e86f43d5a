/* direct_block.c - blocks of telemem_malloc_all on the direct path:
 * their memory (a driver's shared memory or the heap), exposures, the
 * allgathered records of keys, their import and release, and where a
 * peer's block is mapped for the caller's own loads and stores
 * (telemem_ptr). */
#define TLM_LOG_SUBSYS "direct"
#include <stdlib.h>
#include <string.h>

#include "core/direct_int.h"

/* ---- blocks of telemem_malloc_all ---------------------------------------- */

/* Blocks go to a driver's memory whenever one is open, also with
 * TELEMEM_DIRECT=never: the shm transport then opens the window driver
 * for its shared blocks alone, so that its pulls from them are memcpy
 * (docs/shm.md), and core routes no transfer to it. */
static bool enabled(void)
{
    return D.slot_d[SLOT_LOCAL] || D.slot_d[SLOT_NET];
}

int tlm_core_direct_block_alloc(size_t bytes, void **mem,
                                tlm_core_dblock_t **db_p)
{
    *mem = NULL;
    *db_p = NULL;
    tlm_core_dblock_t *db = calloc(1, sizeof(*db));
    if (!db)
        return TELEMEM_ERR_NO_MEMORY;
    db->bytes = bytes;
    db->rbase = calloc((size_t)tlm_core.nranks, sizeof(uintptr_t));
    db->rsize = calloc((size_t)tlm_core.nranks, sizeof(size_t));
    if (!db->rbase || !db->rsize) {
        free(db->rbase);
        free(db->rsize);
        free(db);
        return TELEMEM_ERR_NO_MEMORY;
    }
    void *m = NULL;
    if (enabled() && bytes) {
        for (int s = 0; s < NSLOTS && !m; s++) {
            tlm_direct_t *d = D.slot_d[s];
            size_t kl = 0;
            if (d && d->ops->alloc &&
                d->ops->alloc(d, bytes, &m, &db->mr[s], db->key[s], &kl) ==
                    TELEMEM_OK) {
                db->alloc_d = d;
                db->md[s] = d;
                db->key_len[s] = (uint32_t)kl;
            } else {
                m = NULL;
            }
        }
    }
    if (!m && posix_memalign(&m, 64, bytes ? bytes : 64) != 0) {
        free(db->rbase);
        free(db->rsize);
        free(db);
        return TELEMEM_ERR_NO_MEMORY;
    }
    for (int s = 0; enabled() && bytes && s < NSLOTS; s++) {
        tlm_direct_t *d = D.slot_d[s];
        size_t kl = 0;
        if (!d || d == db->alloc_d)
            continue;
        if (d->ops->expose(d, m, bytes, &db->mr[s], db->key[s], &kl) ==
            TELEMEM_OK) {
            db->key_len[s] = (uint32_t)kl;
            db->md[s] = d;
        } else {
            db->mr[s] = NULL;
        }
    }
    *mem = m;
    *db_p = db;
    return TELEMEM_OK;
}

size_t tlm_core_direct_record_size(void)
{
    /* The same on every rank, with a driver or without: base and size,
     * then the keys. */
    return sizeof(drec_t);
}

void tlm_core_direct_record(const tlm_core_dblock_t *db, void *mem, void *rec)
{
    size_t n = tlm_core_direct_record_size();
    memset(rec, 0, n);
    uint64_t w[2] = {(uint64_t)(uintptr_t)mem, db ? (uint64_t)db->bytes : 0};
    memcpy(rec, w, sizeof(w));
    if (n < sizeof(drec_t) || !db)
        return;
    drec_t *r = rec;
    for (int s = 0; s < NSLOTS; s++) {
        r->k[s].len = db->key_len[s];
        memcpy(r->k[s].key, db->key[s], db->key_len[s]);
    }
}

uint64_t tlm_core_direct_record_addr(const void *rec)
{
    uint64_t a;
    memcpy(&a, rec, sizeof(a));
    return a;
}

void tlm_core_direct_block_import(tlm_core_dblock_t *db, const void *recs,
                                  size_t bytes)
{
    (void)bytes; /* each peer's own size is in its record */
    size_t rs = tlm_core_direct_record_size();
    tlm_core_dx_x_begin();
    for (int r = 0; r < tlm_core.nranks; r++) {
        const uint8_t *rec = (const uint8_t *)recs + (size_t)r * rs;
        uint64_t w[2];
        memcpy(w, rec, sizeof(w));
        db->rbase[r] = (uintptr_t)w[0];
        /* a record that would wrap is not taken: its block takes the AM
         * path, whose target checks every request */
        bool sane = w[1] <= SIZE_MAX && (uint64_t)(uintptr_t)w[0] == w[0] &&
                    !tlm_util_range_wraps((uintptr_t)w[0], (size_t)w[1]);
        db->rsize[r] = sane ? (size_t)w[1] : 0;
        dpeer_t *p = &D.peers[r];
        size_t size = db->rsize[r];
        if (r == tlm_core.rank || !p->d || rs < sizeof(drec_t) || !size)
            continue;
        const drec_t *dr = (const drec_t *)(const void *)rec;
        int s = tlm_core_dx_slot(tlm_am.peers[r].tp);
        tlm_direct_rkey_t *rk = NULL;
        if (dr->k[s].len == 0 || dr->k[s].len > TLM_DIRECT_KEY_MAX ||
            p->d->ops->import(p->d, r, db->rbase[r], size, dr->k[s].key,
                              dr->k[s].len, &rk) != TELEMEM_OK)
            rk = NULL;
        if (tlm_core_dx_add(p, db->rbase[r], size, rk) != TELEMEM_OK) {
            if (rk)
                p->d->ops->release(p->d, rk);
        } else if (rk) {
            tlm_core_dx_x_add(p, db->rbase[r], size, rk);
        }
    }
    tlm_core_dx_x_end();
}

void tlm_core_direct_block_release(tlm_core_dblock_t *db)
{
    tlm_core_dx_x_begin();
    for (int r = 0; db && D.peers && r < tlm_core.nranks; r++) {
        if (r != tlm_core.rank && D.peers[r].d && db->rsize[r]) {
            uintptr_t lo = db->rbase[r], hi = lo + db->rsize[r];
            tlm_core_dx_x_drop(&D.peers[r], lo, hi);
            tlm_core_dx_drop(r, lo, hi, false);
        }
    }
    tlm_core_dx_x_end();
}

void tlm_core_direct_block_free(tlm_core_dblock_t *db, void *mem)
{
    if (!db) {
        free(mem);
        return;
    }
    for (int s = 0; s < NSLOTS; s++) {
        tlm_direct_t *d = db->md[s];
        if (d && d != db->alloc_d)
            d->ops->unexpose(d, db->mr[s]);
        else if (d)
            d->ops->free(d, db->mr[s]);
    }
    if (!db->alloc_d)
        free(mem);
    free(db->rbase);
    free(db->rsize);
    free(db);
}

/* ---- the caller's own loads and stores ----------------------------------- */

int tlm_core_direct_ptr(int rank, uintptr_t addr, size_t len, void **local)
{
    dpeer_t *p = D.peers ? &D.peers[rank] : NULL;
    if (D.mode == MODE_NEVER || !p || !p->d || !p->d->ops->ptr)
        return TELEMEM_ERR_UNSUPPORTED;
    rkey_ent_t *e = tlm_core_dx_find(p, addr, len);
    void *l = e && e->rk ? p->d->ops->ptr(p->d, e->rk, addr) : NULL;
    if (!l)
        return TELEMEM_ERR_UNSUPPORTED;
    *local = l;
    return TELEMEM_OK;
}

void tlm_core_direct_ptr_wake(int rank)
{
    /* D.peers and each peer's driver are fixed while the library is
     * initialized. */
    dpeer_t *p = D.peers ? &D.peers[rank] : NULL;
    if (p && p->d && p->d->ops->wake)
        p->d->ops->wake(p->d, rank);
}

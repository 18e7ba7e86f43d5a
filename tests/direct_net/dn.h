/* dn.h - helpers of the direct-path network driver tests (white box): find
 * the driver of the transport that carries a peer's messages (through the
 * AM layer's state), exchange exposure keys with telemem_allgather, wait
 * for a flush while polling like core does, read the driver's registration
 * cache, and the reference loop a block-stride chain must match. */
#ifndef DN_H
#define DN_H

#include "tt.h"
#include "am/am.h"
#include "backends/direct.h"
#include "backends/regcache.h"
#include "tlm_build_config.h"
#if TLM_HAVE_OFI
#include "backends/ofi/ofi_direct.h"
#endif
#if TLM_HAVE_UCX
#include "backends/ucx/ucx_direct.h"
#endif

/* A key as it travels between ranks. */
typedef struct dn_key {
    uint64_t len;
    uint8_t bytes[TLM_DIRECT_KEY_MAX];
} dn_key_t;

/* The direct driver that reaches peer, or a skip saying why there is none
 * (never a silent pass).  want: the driver name the test expects. */
static inline tlm_direct_t *dn_driver(int peer, const char *want)
{
    tlm_transport_t *tp = tlm_am.peers[peer].tp;
    if (!tp)
        TT_FAIL("no transport reaches rank %d", peer);
    if (!tp->direct) {
        char why[256];
        snprintf(why, sizeof why, "transport %s has no direct-path driver "
                 "here (its provider lacks remote memory access; "
                 "TELEMEM_LOG_LEVEL=debug says why)", tp->name);
        tt_skip(why);
    }
    if (want && strcmp(tp->direct->name, want) != 0)
        TT_FAIL("driver to rank %d is %s, expected %s", peer,
                tp->direct->name, want);
    return tp->direct;
}

/* The driver's registration cache (read only). */
static inline const tlm_regcache_t *dn_cache(const tlm_direct_t *d)
{
#if TLM_HAVE_OFI
    if (strcmp(d->name, "ofi-rma") == 0)
        return tlm_ofi_direct_cache(d);
#endif
#if TLM_HAVE_UCX
    if (strcmp(d->name, "ucx-rma") == 0)
        return tlm_ucx_direct_cache(d);
#endif
    TT_FAIL("no cache accessor for driver %s", d->name);
}

/* Wait for d->ops->flush(peer) to end, polling Telemem meanwhile as core's
 * waits do; returns the flush's final status.  AGAIN answers are counted
 * in *agains (may be NULL). */
static inline int dn_flush(tlm_direct_t *d, int peer, long *agains)
{
    double t0 = tt_now();
    for (;;) {
        int rc = d->ops->flush(d, peer);
        if (rc != TELEMEM_ERR_AGAIN)
            return rc;
        if (agains)
            (*agains)++;
        TT_POLL();
        if (d->ops->progress)
            d->ops->progress(d);
        if (tt_now() - t0 > 60)
            TT_FAIL("flush(%d) still not complete after 60 s", peer);
    }
}

/* Collective: every rank's key (keys[r]) for its own exposure. */
static inline void dn_exchange(const void *key, size_t key_len,
                               dn_key_t *keys)
{
    dn_key_t mine;
    memset(&mine, 0, sizeof mine);
    TT_ASSERT(key_len <= TLM_DIRECT_KEY_MAX, "key of %zu bytes", key_len);
    mine.len = key_len;
    memcpy(mine.bytes, key, key_len);
    TT_CHECK(telemem_allgather(&mine, keys, sizeof mine));
}

/* The reference loop: apply a chain with memcpy.  to_remote: copy local
 * -> remote (a write), else remote -> local (a read).  Addresses are
 * offsets added to lbase / rbase. */
static inline void dn_reference(uint8_t *lbase, uint8_t *rbase,
                                const tlm_direct_seg_t *segs, int nsegs,
                                int to_remote)
{
    for (int s = 0; s < nsegs; s++) {
        const tlm_direct_seg_t *g = &segs[s];
        for (size_t i = 0; i < g->count; i++) {
            uint8_t *l = lbase + g->local + (ptrdiff_t)i * g->local_stride;
            uint8_t *r = rbase + g->remote + (ptrdiff_t)i * g->remote_stride;
            if (to_remote)
                memmove(r, l, g->block);
            else
                memmove(l, r, g->block);
        }
    }
}

/* Fill n bytes with the pattern of key k. */
static inline void dn_fill(uint8_t *p, size_t n, uint64_t k)
{
    tt_rng_t r;
    tt_rng_seed(&r, k);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = tt_rng_next(&r);
        memcpy(p + i, &v, 8);
    }
    for (uint64_t v = tt_rng_next(&r); i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

#endif

/* direct_int.h - what the files of core's direct path share, and no other
 * file includes: the per-peer key cache, exposures, block records and the
 * state.  core_direct.c: the dispatch point, transfers, ordering against
 * the AM path, set-up; direct_thresholds.c: TELEMEM_DIRECT*, the
 * calibration profile; direct_keys.c: the rkey cache and the key exchange
 * (KEY_REQ / KEY_REP / KEY_INVAL); direct_express.c: lock-free atomics on
 * blocks; direct_block.c: blocks of telemem_malloc_all; direct_acc.c:
 * accumulates applied by the initiator. */
#ifndef TLM_DIRECT_INT_H
#define TLM_DIRECT_INT_H

#include <stdatomic.h>

#include "core/core_engine.h"
#include "core/core_direct.h"
#include "core/core_region.h"

enum { MODE_NEVER = 0, MODE_AUTO, MODE_ALWAYS };
/* Key slots of a block record: the same-node driver, the network one. */
enum { SLOT_LOCAL = 0, SLOT_NET = 1, NSLOTS = 2 };
/* Segments of a strided chain handed to a driver per call. */
#define CHAIN_BATCH 128

/* One imported key: [base, end) of a peer; rk NULL = known not to be
 * reachable directly (take the AM path without asking again). */
typedef struct rkey_ent {
    uintptr_t base, end;
    tlm_direct_rkey_t *rk;
    size_t min; /* fewest bytes worth the direct path (driver's key_min) */
} rkey_ent_t;

/* Express slots: keys of telemem_malloc_all blocks a synchronous driver
 * with hardware atomics maps here, read without the lock (seqlock
 * D.xseq; written only by telemem_malloc_all / _free_all under it).
 * base == end: a free slot. */
#define XSLOTS 8
typedef struct xent {
    _Atomic uintptr_t base, end;
    _Atomic(tlm_direct_rkey_t *) rk;
} xent_t;

typedef struct dpeer {
    tlm_direct_t *d;        /* driver of the transport reaching the peer */
    size_t row_min;         /* strided: shortest row taken directly */
    rkey_ent_t *keys;
    size_t nkeys, cap, last;
    uint32_t key_sent, key_done; /* KEY_REQ sequence */
    xent_t *x;                   /* XSLOTS express slots, or NULL */
    bool contacted;         /* the transport's connect(peer) was called */
} dpeer_t;

/* Target side: a registered range's exposure per slot and who holds it. */
typedef struct tlm_region_dx {
    tlm_direct_mr_t *mr[NSLOTS];
    int8_t state[NSLOTS]; /* 0 untried, 1 exposed, -1 cannot */
    uint32_t key_len[NSLOTS];
    uint8_t key[NSLOTS][TLM_DIRECT_KEY_MAX];
    int *holders;
    int nholders, cap;
    bool dying;
} region_dx_t;

struct tlm_core_dblock {
    tlm_direct_t *alloc_d;      /* the driver that allocated the memory */
    tlm_direct_t *md[NSLOTS];   /* the driver of each exposure */
    tlm_direct_mr_t *mr[NSLOTS];
    uint32_t key_len[NSLOTS];
    uint8_t key[NSLOTS][TLM_DIRECT_KEY_MAX];
    uintptr_t *rbase;           /* by rank: the peers' bases */
    size_t *rsize;              /* by rank: their sizes (may differ) */
    size_t bytes;
};

/* The allgathered record of a block: its base and size on that rank (the
 * sizes of telemem_malloc_all may differ per rank), then the keys. */
typedef struct drec {
    uint64_t addr;
    uint64_t size;
    struct {
        uint32_t len, pad;
        uint8_t key[TLM_DIRECT_KEY_MAX];
    } k[NSLOTS];
} drec_t;

typedef struct tlm_core_dstate {
    int mode;
    dpeer_t *peers;
    tlm_direct_t *slot_d[NSLOTS];
    uint32_t inval_pending;
    uint8_t declined; /* bit per slot: its driver declined a peer (said) */
    char *text;
    _Atomic uint32_t xseq; /* odd while the express slots change */
} tlm_core_dstate_t;

/* The direct path's state (core_direct.c), D for short in these files. */
extern tlm_core_dstate_t tlm_core_dstate;
#define D tlm_core_dstate

/* The key slot of a transport's driver (same node, net). */
static inline int tlm_core_dx_slot(const tlm_transport_t *tp)
{
    return tp->same_node_only ? SLOT_LOCAL : SLOT_NET;
}

/* direct_thresholds.c: the thresholds of tp's driver (its defaults, the
 * calibration profile, TELEMEM_DIRECT_*THRESHOLD, TELEMEM_DIRECT), added
 * to the text of tlm_core_direct_string(). */
void tlm_core_dx_thresholds(const tlm_transport_t *tp, size_t *thr,
                            size_t *row);

/* direct_keys.c: the rkey cache of peer p (imported keys by range), the
 * on-demand fetch of a registered range's key, the handlers of the key
 * exchange, and a range's exposures. */
rkey_ent_t *tlm_core_dx_search(dpeer_t *p, uintptr_t lo, size_t len);
/* The key covering [lo, lo+len) of peer p, or NULL: the last one found
 * first, inline (every direct transfer asks), then the search. */
static inline rkey_ent_t *tlm_core_dx_find(dpeer_t *p, uintptr_t lo,
                                           size_t len)
{
    if (TLM_LIKELY(p->last < p->nkeys)) {
        rkey_ent_t *e = &p->keys[p->last];
        if (TLM_LIKELY(tlm_util_range_in(lo, len, e->base, e->end)))
            return e;
    }
    return tlm_core_dx_search(p, lo, len);
}
int tlm_core_dx_add(dpeer_t *p, uintptr_t base, size_t len,
                    tlm_direct_rkey_t *rk);
/* Drop rank r's keys inside [lo, hi) (exact: the one based at lo). */
void tlm_core_dx_drop(int r, uintptr_t lo, uintptr_t hi, bool exact);
/* Ask rank for the key of the region holding [addr, addr+len) and wait
 * for the answer (which lands in the cache).  TELEMEM_OK or a wait error. */
int tlm_core_dx_fetch(int rank, uintptr_t addr, size_t len);
void tlm_core_dx_keys_init(void);
void tlm_core_dx_free(region_dx_t *dx);

/* After handlers may have run (a wait): the key of [lo, lo+len) again in
 * *e.  TELEMEM_OK, or TLM_DIRECT_DECLINED when it was withdrawn. */
static inline int tlm_core_dx_refind(dpeer_t *p, uintptr_t lo, size_t len,
                                     rkey_ent_t **e)
{
    *e = tlm_core_dx_find(p, lo, len);
    return *e && (*e)->rk ? TELEMEM_OK : TLM_DIRECT_DECLINED;
}

/* Before a direct operation on [lo, lo+len) of rank: complete what it
 * could overtake - earlier AM requests to rank (puts and accumulates not
 * yet applied, gets not yet answered) and the driver's own earlier
 * operations (network drivers do not order their operations among
 * themselves: a read may pass an earlier write to the same bytes; this
 * keeps one batch in flight per peer).  Handlers run while it waits, so
 * the key *e is looked up again then.  TELEMEM_OK (*e still valid),
 * TLM_DIRECT_DECLINED (the key was withdrawn) or a wait error. */
static inline int tlm_core_dx_order(int rank, dpeer_t *p, uintptr_t lo,
                                    size_t len, rkey_ent_t **e)
{
    const tlm_core_peer_t *cp = &tlm_core.peers[rank];
    if (TLM_LIKELY(tlm_core_peer_am_idle(cp) && !cp->direct_busy))
        return TELEMEM_OK;
    int rc = tlm_core_peer_am_idle(cp) ? TELEMEM_OK : tlm_core_flush_am(rank);
    if (rc == TELEMEM_OK)
        rc = tlm_core_direct_settle(rank); /* at once when not busy */
    return rc != TELEMEM_OK ? rc : tlm_core_dx_refind(p, lo, len, e);
}

/* core_direct.c: patch d (its remote and local bases) as block-stride
 * descriptors - dimension 1 the stride of a descriptor, dimensions 2.. the
 * chain, levels 0 one contiguous descriptor - handed to fn at most batch
 * at a time; stops at the first status other than TELEMEM_OK. */
typedef int (*tlm_core_dx_chain_fn)(const tlm_direct_seg_t *segs, int n,
                                    void *arg);
int tlm_core_dx_chain(const tlm_pack_desc_t *d, void *remote, void *local,
                      size_t batch, tlm_core_dx_chain_fn fn, void *arg);

/* direct_express.c: the express slots, written between begin and end
 * (under the lock; readers without it retry). */
void tlm_core_dx_x_begin(void);
void tlm_core_dx_x_end(void);
void tlm_core_dx_x_add(dpeer_t *p, uintptr_t base, size_t len,
                       tlm_direct_rkey_t *rk);
void tlm_core_dx_x_drop(dpeer_t *p, uintptr_t lo, uintptr_t hi);

#endif

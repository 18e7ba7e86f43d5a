/* core_direct.h - the core's side of the direct (RDMA) path: per-message
 * path choice, the rkey cache, keys of telemem_malloc_all blocks and of
 * telemem_register ranges, ordering against the AM path, and quiet.
 * Protocol: docs/direct.md. */
#ifndef TLM_CORE_DIRECT_H
#define TLM_CORE_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/direct.h"
#include "core/core.h"
#include "pack/pack.h"

/* Internal answers of the direct front ends: not taken, use the AM path;
 * or refused here, because the transfer starts in a region of the target
 * this rank knows and runs past its end (the target would refuse it, and
 * no driver may be handed it).  The caller reports a refusal as the AM
 * path reports the target's (tlm_core_refused). */
#define TLM_DIRECT_DECLINED 2
#define TLM_DIRECT_REFUSED 3

/* After the transports are open: drivers, thresholds, handlers. */
int tlm_core_direct_init(void);
/* Before the transports close: release every key and exposure. */
void tlm_core_direct_fini(void);
/* The thresholds in effect, for the configuration dump ("" if none). */
const char *tlm_core_direct_string(void);

/* One atomic (op TLM_RMW_*) on width bytes at addr of rank by the
 * driver's hardware atomics, when rank's memory there is mapped here:
 * TELEMEM_OK (*old set), TLM_DIRECT_DECLINED (take the AM path), or an
 * error.  Never fetches a key: only cached ones (telemem_malloc_all blocks)
 * qualify. */
int tlm_core_direct_atomic(int rank, int op, unsigned width, uintptr_t addr,
                           uint64_t operand, uint64_t compare, uint64_t *old);
/* The same without the lock, for a caller that does not hold it: only a
 * telemem_malloc_all block of a peer on this node, and only while nothing
 * sent to rank by the AM path is outstanding (else TLM_DIRECT_DECLINED:
 * take the locked path, which orders it).  rank must be a valid peer other
 * than this rank, addr aligned to width. */
int tlm_core_direct_atomic_express(int rank, int op, unsigned width,
                                   uintptr_t addr, uint64_t operand,
                                   uint64_t compare, uint64_t *old);
/* An accumulate (type a TLM_ACC_* without flags) of patch d from local to
 * remote on rank, applied here through the driver when it maps rank's
 * memory there (a telemem_malloc_all block of a peer on this node) and
 * every remote element is naturally aligned: TELEMEM_OK when done (it is
 * complete), TLM_DIRECT_DECLINED (take the AM path), or an error.  Never
 * fetches a key.  d->total > 0, rank a peer other than this rank. */
int tlm_core_direct_acc(int rank, int type, const void *scale, void *remote,
                        const void *local, const tlm_pack_desc_t *d);

/* ---- the one dispatch point -------------------------------------------
 * Every put- or get-like operation asks here "direct or polling for this
 * transfer?" and hands over: first the inline check (is the transfer at
 * least the peer's threshold, or has the peer's driver operations in
 * flight that the AM path must follow?), then, when it says so, route. */
typedef struct tlm_core_xfer {
    bool write;                /* put-like (true) or get-like */
    void *remote, *local;      /* the bases of the transfer */
    size_t n;                  /* contiguous bytes, when d is NULL */
    const tlm_pack_desc_t *d;  /* a strided patch, or NULL */
} tlm_core_xfer_t;

static inline bool tlm_core_direct_wanted(int rank, size_t bytes)
{
    const tlm_core_peer_t *p = &tlm_core.peers[rank];
    return TLM_UNLIKELY(bytes >= p->direct_min || p->direct_busy);
}

/* The direct path carries x to rank when the driver takes it (long
 * enough: the thresholds; a strided patch as a block-stride chain when its
 * rows are): its status then (TELEMEM_OK when done, or started for nbi; a
 * range the peer does not expose is reported as the target's refusal,
 * tlm_core_refused, with handle h for nb).  Else TLM_DIRECT_DECLINED once
 * the driver's earlier operations to rank are complete: the AM path
 * carries x, in issue order.  mode: TLM_MODE_* of the caller. */
int tlm_core_direct_route_contig(int rank, bool write, void *remote,
                                 void *local, size_t n, int mode,
                                 telemem_handle_t *h);
int tlm_core_direct_route_strided(int rank, const tlm_core_xfer_t *x,
                                  int mode, telemem_handle_t *h);
static inline int tlm_core_direct_route(int rank, const tlm_core_xfer_t *x,
                                        int mode, telemem_handle_t *h)
{
    /* Inline, so that a contiguous transfer's x never exists in memory. */
    return x->d ? tlm_core_direct_route_strided(rank, x, mode, h)
                : tlm_core_direct_route_contig(rank, x->write, x->remote,
                                               x->local, x->n, mode, h);
}

/* Before an AM operation to rank when its direct_busy is set: complete
 * the driver's operations (async drivers; keeps issue order). */
int tlm_core_direct_settle(int rank);
/* quiet / fence: complete direct operations to rank (-1: all). */
int tlm_core_direct_flush(int rank);

/* telemem_malloc_all / telemem_free_all.  A block's direct state. */
typedef struct tlm_core_dblock tlm_core_dblock_t;
/* Allocate a block (in the window driver's shared memory when there is
 * one, else posix_memalign) and expose it.  *mem NULL on failure. */
int tlm_core_direct_block_alloc(size_t bytes, void **mem,
                                tlm_core_dblock_t **db);
/* Bytes of the record each rank contributes to the allgather. */
size_t tlm_core_direct_record_size(void);
void tlm_core_direct_record(const tlm_core_dblock_t *db, void *mem,
                            void *rec);
uint64_t tlm_core_direct_record_addr(const void *rec);
/* Import every peer's key from the gathered records. */
void tlm_core_direct_block_import(tlm_core_dblock_t *db, const void *recs,
                                  size_t bytes);
/* Drop the peers' keys of this block (free_all, before its barrier). */
void tlm_core_direct_block_release(tlm_core_dblock_t *db);
/* Free the block's memory and exposure. */
void tlm_core_direct_block_free(tlm_core_dblock_t *db, void *mem);
/* telemem_ptr (under the lock): where [addr, addr+len) of rank, inside
 * one block of rank this process maps, is mapped here.  TELEMEM_OK with
 * *local set, or TELEMEM_ERR_UNSUPPORTED (no such mapping, or
 * TELEMEM_DIRECT=never). */
int tlm_core_direct_ptr(int rank, uintptr_t addr, size_t len, void **local);
/* telemem_ptr_wake (without the lock): wake rank if it sleeps, after
 * stores through tlm_core_direct_ptr's addresses. */
void tlm_core_direct_ptr_wake(int rank);

/* telemem_deregister: every peer holding a key of region r drops it (they
 * answer while they poll) before the range stops being memory a peer may
 * write.  TELEMEM_OK or a wait error. */
struct tlm_region;
int tlm_core_direct_region_retire(struct tlm_region *r);
/* After a successful retire (r found again): free its direct state. */
void tlm_core_direct_region_free(struct tlm_region *r);
/* TELEMEM_DIRECT and its thresholds parse (before the job is joined). */
struct tlm_config;
int tlm_core_direct_check_config(const struct tlm_config *c);

#endif

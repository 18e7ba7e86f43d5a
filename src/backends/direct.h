/* direct.h - the direct (RDMA) path contract: drivers that move bytes to and
 * from a peer's memory without the peer's CPU (same-node window/CMA, ofi
 * RMA, ucx RMA), behind their own ops table.  Core chooses, per message,
 * this path or the active-message path (docs/architecture.md, "Direct
 * path").
 *
 * Who does what
 *   - A driver is opened by the backend that owns the connection it rides
 *     on (the shm backend opens the window driver, ofi opens ofi-rma, ucx
 *     opens ucx-rma) and hung on that transport: tp->direct (NULL: none).
 *     Core reaches a peer's driver as the direct member of the transport
 *     that carries the peer's messages; nothing above src/backends/ names a
 *     driver.
 *   - Only this layer registers (pins) memory, and it caches registrations.
 *   - Core checks every remote byte of a transfer against the imported
 *     range (rkey) before calling write/read: a driver never sees a range
 *     outside what the target exposed.  "Refused before any byte moves."
 *   - Keys are opaque bytes (at most TLM_DIRECT_KEY_MAX) that core carries
 *     from the exposing rank to the importing rank (with telemem_malloc_all
 *     blocks, and on demand for telemem_register ranges).
 *
 * Threads: called with core's lock held (as transports are), but atomic
 * on the express path and wake (see there).  Every call is non-blocking
 * except close: waits belong to core, which keeps polling
 * the AM path while it waits (no wait may deadlock).
 */
#ifndef TLM_DIRECT_H
#define TLM_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/rmw.h"

typedef struct tlm_direct tlm_direct_t;
typedef struct tlm_direct_mr tlm_direct_mr_t;     /* a local exposure */
typedef struct tlm_direct_rkey tlm_direct_rkey_t; /* an imported peer key */

/* Largest key a driver may produce (UCX packed rkeys are the largest). */
#define TLM_DIRECT_KEY_MAX 512u

/* One block-stride descriptor, the unit the TCA DMA engine takes (seed
 * 002): count blocks of block bytes; block i is at local + i*local_stride
 * and remote + i*remote_stride.  count 1 is a contiguous transfer.  A
 * transfer is an array of these (a chain), executed in order. */
typedef struct tlm_direct_seg {
    uintptr_t local;
    uintptr_t remote;
    size_t block;
    size_t count;
    ptrdiff_t local_stride;
    ptrdiff_t remote_stride;
} tlm_direct_seg_t;

typedef struct tlm_direct_ops {
    /* Optional (NULL: core allocates with posix_memalign and exposes):
     * allocate len bytes that peers of this driver can reach, for a block
     * of telemem_malloc_all.  Writes the key to key (key_len bytes, at most
     * TLM_DIRECT_KEY_MAX).  The window driver allocates in shared memory
     * here. */
    int (*alloc)(tlm_direct_t *d, size_t len, void **base,
                 tlm_direct_mr_t **mr, void *key, size_t *key_len);
    /* Free a block of alloc (its exposure included). */
    void (*free)(tlm_direct_t *d, tlm_direct_mr_t *mr);
    /* Expose [base, base+len) of this process (register / pin as the
     * network needs) and write its key.  TELEMEM_ERR_UNSUPPORTED when this
     * memory cannot be exposed (core then uses the AM path for it). */
    int (*expose)(tlm_direct_t *d, void *base, size_t len,
                  tlm_direct_mr_t **mr, void *key, size_t *key_len);
    void (*unexpose)(tlm_direct_t *d, tlm_direct_mr_t *mr);
    /* Import a key a peer exposed for its range [rbase, rbase+rlen). */
    int (*import)(tlm_direct_t *d, int peer, uintptr_t rbase, size_t rlen,
                  const void *key, size_t key_len, tlm_direct_rkey_t **rk);
    void (*release)(tlm_direct_t *d, tlm_direct_rkey_t *rk);
    /* Optional (NULL: 0): the fewest bytes a transfer under rk should
     * have for this driver to beat the AM path, whatever the thresholds
     * (window: 0 for shared blocks, a few KiB for ranges reached with a
     * system call). */
    size_t (*key_min)(tlm_direct_t *d, const tlm_direct_rkey_t *rk);
    /* Start a transfer of the chain segs[0..nsegs) to (write) or from
     * (read) peer's memory under rk.  Core has called the transport's
     * connect(peer) before the first one (a key of a telemem_malloc_all
     * block may come before any message to the peer).  Local buffers may be reused / read
     * once flush(peer) has returned TELEMEM_OK (a driver that completes
     * before returning says so with d->sync).  TELEMEM_OK (started or
     * done), TELEMEM_ERR_AGAIN (nothing started: core polls and retries),
     * TELEMEM_ERR_PEER_DEAD, TELEMEM_ERR_TRANSPORT. */
    int (*write)(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
                 const tlm_direct_seg_t *segs, int nsegs);
    int (*read)(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
                const tlm_direct_seg_t *segs, int nsegs);
    /* Optional (NULL: none): one atomic read-modify-write of the naturally
     * aligned width-byte (4 or 8) integer at remote under rk, atomic with
     * respect to every other atomic on it by any process and to
     * accumulates applied with TLM_ACC_ATOMIC: op is a TLM_RMW_* of
     * util/rmw.h (apply it with tlm_rmw_apply()).  Writes the old value
     * to *old and
     * completes (remotely) before returning.  TELEMEM_ERR_UNSUPPORTED when
     * rk's memory cannot take it (core then uses the AM path). */
    int (*atomic)(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
                  uintptr_t remote, int op, unsigned width, uint64_t operand,
                  uint64_t compare, uint64_t *old);
    /* Optional (NULL: none): accumulate the chain segs[0..nsegs) into
     * peer's memory under rk, remote += scale * local element by element,
     * with the atomic kernels (type is a TLM_ACC_* of pack/pack.h with
     * TLM_ACC_ATOMIC: atomic, element by element, with respect to every
     * atomic and accumulate any process applies there).  Core hands only
     * chains whose remote elements are naturally aligned.  Completes
     * (remotely) before returning.  TELEMEM_ERR_UNSUPPORTED when rk's
     * memory cannot take it (core then uses the AM path). */
    int (*acc)(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
               const tlm_direct_seg_t *segs, int nsegs, int type,
               const void *scale);
    /* Optional (NULL: none): the address in this process at which remote
     * (inside rk's range, checked by core) is mapped, for the caller's
     * own loads and stores (telemem_ptr); NULL when rk's memory is not
     * mapped here (window: CMA keys). */
    void *(*ptr)(tlm_direct_t *d, tlm_direct_rkey_t *rk, uintptr_t remote);
    /* Optional (NULL: none): after stores through ptr's addresses of
     * peer, wake peer if it sleeps in a wait (telemem_ptr_wake).  Called
     * without core's lock, from any thread: it may touch only what stays
     * fixed while the driver is open. */
    void (*wake)(tlm_direct_t *d, int peer);
    /* Remote completion of every write and read to peer (-1: to every
     * peer) started so far: TELEMEM_OK when complete, TELEMEM_ERR_AGAIN
     * while not (core polls and asks again), or an error.  NULL when d->sync. */
    int (*flush)(tlm_direct_t *d, int peer);
    /* Drive the driver's completions; NULL if it has none. */
    int (*progress)(tlm_direct_t *d);
    /* Tear down (after every mr and rk was released); frees d. */
    void (*close)(tlm_direct_t *d);
} tlm_direct_ops_t;

/* Base object: every driver embeds it first. */
struct tlm_direct {
    const tlm_direct_ops_t *ops;
    const char *name;       /* "window", "ofi-rma", "ucx-rma" */
    bool sync;              /* write/read complete (remotely) on return */
    size_t threshold;       /* default TELEMEM_DIRECT_THRESHOLD, bytes */
    size_t row_threshold;   /* default TELEMEM_DIRECT_ROW_THRESHOLD (0:
                             * max(threshold / 16, 256)) */
    size_t max_segs;        /* longest chain one write/read takes */
    /* What carries it, the calibration profile's key beside the name
     * ("ofi-rma@tcp;ofi_rxm", docs/direct.md): libfabric's provider,
     * UCX's network wires ("tcp"); NULL or "" when the name says it all.
     * Kept by the driver until close; last, after the fields transfers
     * read. */
    const char *provider;
};

#endif

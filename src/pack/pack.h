/* pack.h - the software pack engine: strided descriptors (normalise, wire
 * form, extent), pack / unpack / unpack-accumulate of any byte range of the
 * packed stream, the accumulate kernels, and vector (address list) records.
 * Pure functions: no I/O, no allocation, no global state. */
#ifndef TLM_PACK_H
#define TLM_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLM_PACK_MAX_LEVELS 8

/* Sides of a two-sided descriptor: the layout at the initiator (local) and
 * at the target (remote).  A descriptor decoded from the wire has only the
 * remote side. */
enum { TLM_PACK_LOCAL = 0, TLM_PACK_REMOTE = 1 };

/*
 * A strided transfer in ARMCI's convention, normalised:
 *   run bytes   count[0]
 *   dimension k (1..levels): count[k] repetitions, stride[side][k-1] bytes
 * The packed stream is every run in order (dimension 1 fastest, as ARMCI
 * and C nested loops: for k=levels..1 ... for k=1 ... copy run).
 * Normalised form: no count is 0 or 1 except count[0] when total == 0
 * (levels is then 0); a dimension contiguous on both sides is merged into
 * the one below it (stride[s][k-1] == count[0] * ... for k == 1, or
 * stride[s][k-1] == stride[s][k-2] * count[k-1]); total is the product of
 * the counts.  levels == 0 means one contiguous run of count[0] bytes.
 */
typedef struct tlm_pack_desc {
    int levels;
    size_t count[TLM_PACK_MAX_LEVELS + 1];
    size_t stride[2][TLM_PACK_MAX_LEVELS];
    size_t total; /* packed bytes */
} tlm_pack_desc_t;

/* Build a normalised descriptor from a user's description: stride_levels
 * in [0, TLM_PACK_MAX_LEVELS], count[0..levels] (size_t), and the local and
 * remote stride arrays (levels entries each; may be NULL when levels == 0).
 * Zero counts anywhere give total 0 (levels 0, count[0] 0).
 * Returns 0, or -1 when the arguments are invalid: levels out of range,
 * count NULL, a stride array NULL with levels > 0, or the total / either
 * side's extent overflows size_t.  On -1 *d is unspecified. */
int tlm_pack_normalize(tlm_pack_desc_t *d, int levels, const size_t *count,
                       const size_t *local_stride,
                       const size_t *remote_stride);

/* Bytes from the base address to the end of the last run on that side
 * (0 when total is 0): [base, base + extent) holds every byte touched. */
size_t tlm_pack_extent(const tlm_pack_desc_t *d, int side);

/* True when the side's layout is one contiguous run (levels == 0). */
static inline bool tlm_pack_is_contig(const tlm_pack_desc_t *d)
{
    return d->levels == 0;
}

/* Wire form of one side: 8-byte words [levels, count[0..levels],
 * stride[side][0..levels-1]], little-endian host order (same machine
 * family only, as the rest of the protocol). */
static inline size_t tlm_pack_wire_size(const tlm_pack_desc_t *d)
{
    return 8u * (2u + 2u * (size_t)d->levels);
}
#define TLM_PACK_WIRE_MAX (8u * (2u + 2u * TLM_PACK_MAX_LEVELS))
/* Writes tlm_pack_wire_size(d) bytes at buf (8-byte aligned); returns it. */
size_t tlm_pack_wire_encode(const tlm_pack_desc_t *d, int side, void *buf);
/* Decode a wire descriptor of at most len bytes at buf into d's REMOTE
 * side (the LOCAL side is set equal).  Validates everything a malicious or
 * corrupt message could get wrong: levels range, counts 0 or 1 (not
 * normalised), total or extent overflowing.  Returns the bytes used, or 0
 * when malformed. */
size_t tlm_pack_wire_decode(tlm_pack_desc_t *d, const void *buf, size_t len);
/* (Added note: with LOCAL equal to REMOTE, decoding merges dimensions that
 * are contiguous on the wire's side, so d->levels may be smaller than the
 * wire's: advance by the return value, not by tlm_pack_wire_size(d).) */

/* Copy bytes [off, off + len) of the packed stream from the layout of
 * `side` at base into dst (contiguous).  off + len <= d->total. */
void tlm_pack(const tlm_pack_desc_t *d, int side, const void *base,
              size_t off, void *dst, size_t len);
/* Copy len contiguous bytes at src into bytes [off, off + len) of the
 * packed stream laid out as `side` at base. */
void tlm_unpack(const tlm_pack_desc_t *d, int side, void *base, size_t off,
                const void *src, size_t len);

/* The walk under tlm_pack() / tlm_unpack(), for other per-run operations
 * (tlm_unpack_acc() uses it): calls fn for consecutive pieces of bytes
 * [off, off + len) of the stream, in stream order.  Each call covers rows
 * runs of run bytes, the memory side's runs starting at mem, stride bytes
 * apart, and the packed side's back to back at buf (buf advances by
 * rows * run between calls).  A run cut by off or off + len comes as its
 * own call with rows 1 (and stride 0).  fn decides the direction: buf is
 * passed as given. */
typedef void (*tlm_pack_rows_fn_t)(void *arg, char *mem, size_t stride,
                                   char *buf, size_t run, size_t rows);
void tlm_pack_walk(const tlm_pack_desc_t *d, int side, void *base,
                   size_t off, void *buf, size_t len, tlm_pack_rows_fn_t fn,
                   void *arg);

/* Element types of accumulate (values of telemem_type_t). */
enum {
    TLM_ACC_INT32 = 0,
    TLM_ACC_INT64 = 1,
    TLM_ACC_UINT64 = 2,
    TLM_ACC_FLOAT = 3,
    TLM_ACC_DOUBLE = 4,
    TLM_ACC_CFLOAT = 5,
    TLM_ACC_CDOUBLE = 6,
    TLM_ACC_NTYPES = 7
};
/* ORed into a type: every kernel updates each naturally aligned scalar
 * atomically (integers with one atomic add, floating point and the
 * components of complex numbers with a compare-and-swap loop), so
 * accumulates stay atomic, element by element, with respect to atomics and
 * accumulates other processes apply to the same memory (the window
 * driver's direct atomics and accumulates).  A misaligned element gets a
 * plain add. */
#define TLM_ACC_ATOMIC 0x100
/* Element size of an accumulate type (0 for an unknown type). */
size_t tlm_acc_elem_size(int type);
/* dst[i] += scale * src[i] for n elements of type (scale points at one
 * element of that type; complex: (re, im) pairs, complex product).
 * dst and src need no alignment. */
void tlm_acc_apply(int type, void *dst, const void *src, size_t n,
                   const void *scale);
/* The accumulate form of tlm_unpack(): off and len are multiples of the
 * element size, and so is d->count[0] (checked by callers). */
void tlm_unpack_acc(const tlm_pack_desc_t *d, int side, void *base,
                    size_t off, const void *src, size_t len, int type,
                    const void *scale);

/* ---- vector transfers ------------------------------------------------------
 * A list of n segments (local address, remote address, bytes), given as
 * two pointer arrays with one common length (ARMCI's giov), as an array of
 * triples (telemem_seg_t: remote, local, bytes), or - at the target - as the
 * wire records {uint64 addr, uint64 len} (remote side only).  The packed
 * stream is the segments' bytes in list order. */
typedef struct tlm_vec {
    size_t n;
    /* giov form (segs == NULL, recs == NULL) */
    void *const *local;
    void *const *remote;
    size_t bytes;
    /* triple form: struct { void *remote; void *local; size_t bytes; } */
    const void *segs;
    /* record form: recs[2i] = remote address, recs[2i+1] = length */
    const uint64_t *recs;
} tlm_vec_t;

typedef struct tlm_vec_seg3 {
    void *remote;
    void *local;
    size_t bytes;
} tlm_vec_seg3_t; /* same layout as telemem_seg_t */

static inline void tlm_vec_seg(const tlm_vec_t *v, size_t i, void **local,
                               void **remote, size_t *bytes)
{
    if (v->recs) {
        *local = NULL;
        *remote = (void *)(uintptr_t)v->recs[2 * i];
        *bytes = (size_t)v->recs[2 * i + 1];
    } else if (v->segs) {
        const tlm_vec_seg3_t *s = (const tlm_vec_seg3_t *)v->segs + i;
        *local = s->local;
        *remote = s->remote;
        *bytes = s->bytes;
    } else {
        /* non-NULL when n > 0: tlm_vec_total() refuses NULL arrays before
         * any segment is read (the analyzer cannot see across files)
         * NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
        *local = v->local[i];
        *remote = v->remote[i];
        *bytes = v->bytes;
    }
}

/* Total bytes (sum of lengths); -1 on a NULL array with n > 0, a NULL
 * address (either side; remote only in record form) with bytes > 0, a
 * wrapping range or an overflowing sum. */
int tlm_vec_total(const tlm_vec_t *v, size_t *total);

/* Position in a vector's packed stream. */
typedef struct tlm_vec_cursor {
    size_t seg; /* current segment */
    size_t off; /* bytes of it already done */
} tlm_vec_cursor_t;

/* Gather the next len bytes of the packed stream from the local side
 * (side LOCAL) or the remote addresses (side REMOTE, used by the target
 * answering a vector get from a decoded list) into dst, advancing c. */
void tlm_vec_gather(const tlm_vec_t *v, int side, tlm_vec_cursor_t *c,
                    void *dst, size_t len);
/* Scatter len packed bytes at src into the side's addresses, advancing c. */
void tlm_vec_scatter(const tlm_vec_t *v, int side, tlm_vec_cursor_t *c,
                     const void *src, size_t len);
/* The accumulate form of tlm_vec_scatter (len and every segment's length
 * are multiples of the element size). */
void tlm_vec_scatter_acc(const tlm_vec_t *v, int side, tlm_vec_cursor_t *c,
                         const void *src, size_t len, int type,
                         const void *scale);

/* Wire list of remote segments: 16-byte records {uint64 addr, uint64 len}.
 * Fill buf (room bytes) with the records of segments from c onward, whole
 * records only, advancing c->seg; returns bytes written. */
size_t tlm_vec_encode_list(const tlm_vec_t *v, tlm_vec_cursor_t *c, void *buf,
                           size_t room);

#endif

/* pack_desc.c - strided descriptors: normalisation, extent, wire form. */
#include <string.h>

#include "pack/pack.h"

/* a * b, or false when it overflows size_t. */
static inline bool mul_ok(size_t a, size_t b, size_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static inline bool add_ok(size_t a, size_t b, size_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

/* A new dimension with this stride on side s continues the block below it
 * (the run, or the dimension d->levels): the stride is that block's size. */
static bool contiguous(const tlm_pack_desc_t *d, int s, size_t stride)
{
    size_t want;
    if (d->levels == 0)
        return stride == d->count[0];
    if (!mul_ok(d->stride[s][d->levels - 1], d->count[d->levels], &want))
        return false;
    return stride == want;
}

int tlm_pack_normalize(tlm_pack_desc_t *d, int levels, const size_t *count,
                       const size_t *local_stride, const size_t *remote_stride)
{
    if (!d || levels < 0 || levels > TLM_PACK_MAX_LEVELS || !count)
        return -1;
    if (levels > 0 && (!local_stride || !remote_stride))
        return -1;
    memset(d, 0, sizeof *d); /* also the empty descriptor */
    for (int k = 0; k <= levels; k++)
        if (count[k] == 0)
            return 0;

    size_t total = count[0];
    d->count[0] = count[0];
    for (int k = 1; k <= levels; k++) {
        size_t c = count[k];
        size_t ls = local_stride[k - 1], rs = remote_stride[k - 1];
        if (c == 1)
            continue;
        if (!mul_ok(total, c, &total))
            return -1;
        if (contiguous(d, TLM_PACK_LOCAL, ls) &&
            contiguous(d, TLM_PACK_REMOTE, rs)) {
            /* Merge into the block below: same bytes, one loop less. */
            d->count[d->levels] *= c; /* <= total: cannot overflow */
            continue;
        }
        d->levels++;
        d->count[d->levels] = c;
        d->stride[TLM_PACK_LOCAL][d->levels - 1] = ls;
        d->stride[TLM_PACK_REMOTE][d->levels - 1] = rs;
    }
    d->total = total;

    /* The last byte of the last run must be addressable from the base. */
    for (int s = 0; s < 2; s++) {
        size_t ext = d->count[0], t;
        for (int k = 1; k <= d->levels; k++)
            if (!mul_ok(d->count[k] - 1, d->stride[s][k - 1], &t) ||
                !add_ok(ext, t, &ext))
                return -1;
    }
    return 0;
}

size_t tlm_pack_extent(const tlm_pack_desc_t *d, int side)
{
    if (d->total == 0)
        return 0;
    size_t ext = d->count[0];
    for (int k = 1; k <= d->levels; k++)
        ext += (d->count[k] - 1) * d->stride[side][k - 1];
    return ext;
}

size_t tlm_pack_wire_encode(const tlm_pack_desc_t *d, int side, void *buf)
{
    unsigned char *p = buf;
    uint64_t w = (uint64_t)d->levels;
    memcpy(p, &w, 8);
    p += 8;
    for (int k = 0; k <= d->levels; k++, p += 8) {
        w = (uint64_t)d->count[k];
        memcpy(p, &w, 8);
    }
    for (int k = 0; k < d->levels; k++, p += 8) {
        w = (uint64_t)d->stride[side][k];
        memcpy(p, &w, 8);
    }
    return tlm_pack_wire_size(d);
}

/* The bytes come from the network: every word is checked before use, and
 * the descriptor is rebuilt through tlm_pack_normalize() so the overflow
 * checks are the same as the initiator's.  A sender may have left a
 * dimension unmerged that is contiguous on this side alone; with LOCAL set
 * equal to REMOTE normalisation merges it, as the normalised form wants. */
size_t tlm_pack_wire_decode(tlm_pack_desc_t *d, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    size_t count[TLM_PACK_MAX_LEVELS + 1], stride[TLM_PACK_MAX_LEVELS];
    uint64_t w;

    if (!d || !buf || len < 8)
        return 0;
    memcpy(&w, p, 8);
    if (w > TLM_PACK_MAX_LEVELS)
        return 0;
    int levels = (int)w;
    size_t need = 8u * (2u + 2u * (size_t)levels);
    if (len < need)
        return 0;
    p += 8;
    for (int k = 0; k <= levels; k++, p += 8) {
        memcpy(&w, p, 8);
#if SIZE_MAX < UINT64_MAX
        if (w > SIZE_MAX)
            return 0;
#endif
        count[k] = (size_t)w;
        /* Normalised: only an empty descriptor has a zero count, and only
         * the run (count[0]) may be 1. */
        if (count[k] == 0 ? levels > 0 : (k > 0 && count[k] == 1))
            return 0;
    }
    for (int k = 0; k < levels; k++, p += 8) {
        memcpy(&w, p, 8);
#if SIZE_MAX < UINT64_MAX
        if (w > SIZE_MAX)
            return 0;
#endif
        stride[k] = (size_t)w;
    }
    if (tlm_pack_normalize(d, levels, count, stride, stride) != 0)
        return 0;
    return need;
}

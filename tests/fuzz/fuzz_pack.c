/* fuzz_pack.c - libFuzzer target: the strided descriptor decoder and
 * normaliser of src/pack and the pack/unpack walk over a decoded
 * descriptor.  Input byte 0 picks the mode:
 *   even  wire: the rest is a wire descriptor (8-byte words: levels,
 *         count[0..levels], stride[0..levels-1]) followed by 16 bytes that
 *         choose a byte range [off, off + len) of the packed stream.  A
 *         descriptor tlm_pack_wire_decode() accepts must have a sane
 *         extent; when it is small the range is packed and unpacked over
 *         an exact-size buffer (ASan catches any byte outside the extent)
 *         and compared with a naive reference walk; re-encoding and
 *         decoding gives the same descriptor.
 *   odd   normalise: the rest gives levels, counts and two stride arrays
 *         (small numbers); tlm_pack_normalize()'s result must pack and
 *         unpack exactly as the naive nested loops over the original,
 *         un-normalised description. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EXT (1u << 16)
#define MAX_TOTAL (1u << 16)

#define BAD(...)                                                            \
    do {                                                                    \
        fprintf(stderr, "fuzz_pack: ");                                     \
        fprintf(stderr, __VA_ARGS__);                                       \
        fprintf(stderr, "\n");                                              \
        abort();                                                            \
    } while (0)

/* The description as given (before normalisation). */
typedef struct raw {
    int levels;
    size_t count[TLM_PACK_MAX_LEVELS + 1];
    size_t stride[2][TLM_PACK_MAX_LEVELS];
} raw_t;

/* Naive walk in stream order (dimension 1 fastest): for every run, call
 * the offset of its first byte on side s.  Returns the number of runs. */
static size_t ref_offsets(const raw_t *r, int s, size_t *offs, size_t max)
{
    size_t idx[TLM_PACK_MAX_LEVELS + 1] = {0};
    size_t n = 0;
    for (int k = 0; k <= r->levels; k++)
        if (r->count[k] == 0)
            return 0;
    for (;;) {
        size_t o = 0;
        for (int k = 1; k <= r->levels; k++)
            o += idx[k] * r->stride[s][k - 1];
        if (n == max)
            BAD("reference walk: more runs than expected");
        offs[n++] = o;
        int k = 1;
        while (k <= r->levels && ++idx[k] == r->count[k])
            idx[k++] = 0;
        if (k > r->levels)
            return n;
    }
}

static uint8_t pat(size_t i, uint8_t salt)
{
    return (uint8_t)((i * 167u) ^ (i >> 8) ^ salt);
}

/* Compare tlm_pack / tlm_unpack of [off, off + len) on side s with the
 * naive walk of r.  d is r normalised (or decoded). */
static void check_copy(const tlm_pack_desc_t *d, const raw_t *r, int s,
                       size_t off, size_t len)
{
    size_t ext = tlm_pack_extent(d, s);
    size_t run = r->count[0];
    size_t nruns = run ? d->total / run : 0;
    if (ext > MAX_EXT || d->total > MAX_TOTAL)
        return;
    uint8_t *mem = malloc(ext ? ext : 1);
    uint8_t *ref_stream = malloc(d->total ? d->total : 1);
    uint8_t *got = malloc(len ? len : 1);
    uint8_t *mem2 = malloc(ext ? ext : 1);
    uint8_t *mem3 = malloc(ext ? ext : 1);
    uint8_t *writes = calloc(ext ? ext : 1, 1);
    size_t *offs = malloc((nruns ? nruns : 1) * sizeof(size_t));
    if (!mem || !ref_stream || !got || !mem2 || !mem3 || !writes || !offs)
        abort();
    for (size_t i = 0; i < ext; i++)
        mem[i] = pat(i, 0x3c);
    size_t n = ref_offsets(r, s, offs, nruns);
    if (n != nruns)
        BAD("descriptor total %zu is not %zu runs of %zu", d->total, n, run);
    bool overlap = false;
    for (size_t i = 0; i < n; i++) {
        if (offs[i] + run > ext)
            BAD("run %zu at %zu+%zu is outside the extent %zu", i, offs[i],
                run, ext);
        memcpy(ref_stream + i * run, mem + offs[i], run);
        for (size_t b = 0; b < run; b++)
            overlap |= writes[offs[i] + b]++ != 0;
    }
    /* pack */
    tlm_pack(d, s, mem, off, got, len);
    if (len && memcmp(got, ref_stream + off, len) != 0)
        BAD("tlm_pack of [%zu, +%zu) differs from the reference (levels "
            "%d, total %zu)", off, len, d->levels, d->total);
    /* unpack: a different pattern into [off, off + len) */
    for (size_t i = 0; i < len; i++)
        got[i] = pat(i + off, 0xa7);
    memcpy(mem2, mem, ext);
    memcpy(mem3, mem, ext);
    tlm_unpack(d, s, mem2, off, got, len);
    for (size_t i = 0; i < n; i++) {
        size_t lo = i * run, hi = lo + run; /* stream range of run i */
        size_t a = lo > off ? lo : off, b = hi < off + len ? hi : off + len;
        if (a < b)
            memcpy(mem3 + offs[i] + (a - lo), got + (a - off), b - a);
    }
    /* Overlapping runs: the result depends on the order; only compare when
     * every byte is written once. */
    if (!overlap && ext && memcmp(mem2, mem3, ext) != 0)
        BAD("tlm_unpack of [%zu, +%zu) differs from the reference", off,
            len);
    /* unpack-accumulate: memory safety only (int32 when aligned) */
    if (run % 4 == 0 && off % 4 == 0 && len % 4 == 0) {
        int32_t one = 1;
        tlm_unpack_acc(d, s, mem2, off, got, len, TLM_ACC_INT32, &one);
    }
    free(mem);
    free(ref_stream);
    free(got);
    free(mem2);
    free(mem3);
    free(writes);
    free(offs);
}

static uint64_t word(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static void pick_range(const tlm_pack_desc_t *d, const uint8_t *p, size_t n,
                       size_t *off, size_t *len)
{
    uint64_t a = n >= 8 ? word(p) : 0, b = n >= 16 ? word(p + 8) : ~0ull;
    if (d->total > MAX_TOTAL) { /* not copied: check_copy() skips it */
        *off = *len = 0;
        return;
    }
    *off = d->total ? (size_t)(a % (d->total + 1)) : 0;
    *len = (size_t)(b % (d->total - *off + 1));
}

static void fuzz_wire(const uint8_t *p, size_t n)
{
    tlm_pack_desc_t d;
    /* exact-size copy: reads past the given length are caught */
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        abort();
    memcpy(buf, p, n);
    size_t used = tlm_pack_wire_decode(&d, buf, n);
    if (!used) {
        free(buf);
        return;
    }
    uint64_t wl = word(buf);
    if (used > n || used != 8u * (2u + 2u * wl))
        BAD("decode used %zu of %zu bytes (wire levels %llu)", used, n,
            (unsigned long long)wl);
    if (d.levels < 0 || (uint64_t)d.levels > wl)
        BAD("decoded levels %d from wire levels %llu", d.levels,
            (unsigned long long)wl);
    /* The normalised form promised by pack.h. */
    size_t t = d.count[0], ext = d.count[0];
    for (int k = 1; k <= d.levels; k++) {
        if (d.count[k] < 2)
            BAD("decoded count[%d] = %zu", k, d.count[k]);
        if (__builtin_mul_overflow(t, d.count[k], &t))
            BAD("decoded total overflows");
        size_t e;
        if (__builtin_mul_overflow(d.count[k] - 1, d.stride[1][k - 1], &e) ||
            __builtin_add_overflow(ext, e, &ext))
            BAD("decoded extent overflows");
        if (d.stride[0][k - 1] != d.stride[1][k - 1])
            BAD("decoded sides differ at level %d", k);
    }
    if (d.total != (d.total ? t : 0) || (d.total == 0 && d.levels != 0))
        BAD("decoded total %zu, product of counts %zu", d.total, t);
    if (tlm_pack_extent(&d, TLM_PACK_REMOTE) != (d.total ? ext : 0))
        BAD("extent %zu, expected %zu",
            tlm_pack_extent(&d, TLM_PACK_REMOTE), ext);
    /* Re-encode and decode: the same descriptor. */
    uint8_t w2[TLM_PACK_WIRE_MAX];
    tlm_pack_desc_t d2;
    size_t n2 = tlm_pack_wire_encode(&d, TLM_PACK_REMOTE, w2);
    if (tlm_pack_wire_decode(&d2, w2, n2) != n2 || d2.levels != d.levels ||
        d2.total != d.total ||
        memcmp(d2.count, d.count, sizeof d.count) != 0 ||
        memcmp(d2.stride, d.stride, sizeof d.stride) != 0)
        BAD("re-encoded descriptor decodes differently");
    /* The raw description is the decoded one (the wire's own levels may
     * have been merged; the decoded form walks the same bytes). */
    raw_t r;
    memset(&r, 0, sizeof r);
    r.levels = d.levels;
    memcpy(r.count, d.count, sizeof r.count);
    memcpy(r.stride, d.stride, sizeof r.stride);
    size_t off, len;
    pick_range(&d, buf + used, n - used, &off, &len);
    check_copy(&d, &r, TLM_PACK_REMOTE, off, len);
    free(buf);
}

static void fuzz_normalize(const uint8_t *p, size_t n)
{
    raw_t r;
    memset(&r, 0, sizeof r);
    size_t i = 0;
#define NEXT() (i < n ? p[i++] : 0)
    r.levels = NEXT() % (TLM_PACK_MAX_LEVELS + 1);
    r.count[0] = NEXT() % 24;
    for (int k = 1; k <= r.levels; k++)
        r.count[k] = NEXT() % 5;
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < r.levels; k++) {
            uint8_t b = NEXT();
            /* small strides, or multiples of the block below (so merges
             * happen) */
            r.stride[s][k] = b & 0x80 ? (size_t)(b & 0x7f) * 8 : b;
        }
    uint8_t range[16] = {0};
    for (int k = 0; k < 16; k++)
        range[k] = NEXT();
#undef NEXT
    tlm_pack_desc_t d;
    if (tlm_pack_normalize(&d, r.levels, r.count, r.stride[0],
                           r.stride[1]) != 0)
        BAD("normalize refused a small description (levels %d)", r.levels);
    size_t t = 1;
    for (int k = 0; k <= r.levels; k++)
        t *= r.count[k];
    if (d.total != t)
        BAD("normalized total %zu, product of counts %zu", d.total, t);
    if (t == 0)
        return;
    if (d.count[0] % r.count[0] != 0)
        BAD("normalised run %zu is not whole runs of %zu", d.count[0],
            r.count[0]);
    size_t off, len;
    pick_range(&d, range, sizeof range, &off, &len);
    for (int s = 0; s < 2; s++)
        check_copy(&d, &r, s, off, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fuzz_normalize(data + 1, size - 1);
    else
        fuzz_wire(data + 1, size - 1);
    return 0;
}

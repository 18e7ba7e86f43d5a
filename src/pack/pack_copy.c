/* pack_copy.c - walking a byte range of a strided descriptor's packed
 * stream: tlm_pack, tlm_unpack and tlm_pack_walk (used by the accumulate
 * unpack), with the run copies specialised for small runs. */
#include <string.h>

#include "pack/pack.h"

/* 1 <= n <= 64 bytes with two fixed-size moves: a call to memcpy with a
 * variable size costs more than the copy itself at these sizes.  The two
 * chunks overlap (the second rewrites some bytes with their own value), so
 * nothing outside [d, d + n) is written. */
static inline void copy_small(char *d, const char *s, size_t n)
{
    if (n >= 32) {
        memcpy(d, s, 32);
        memcpy(d + n - 32, s + n - 32, 32);
    } else if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        d[0] = s[0];
        if (n > 1) {
            d[1] = s[1];
            d[n - 1] = s[n - 1];
        }
    }
}

static inline void copy_one(char *d, const char *s, size_t n)
{
    if (n <= 64)
        copy_small(d, s, n);
    else
        memcpy(d, s, n);
}

/* rows runs of run bytes, ds and ss bytes apart.  The switch is outside
 * the loops so each loop is a few moves and two adds per run. */
static inline void copy_rows(char *d, size_t ds, const char *s, size_t ss,
                             size_t run, size_t rows)
{
    size_t i;
    if (ds == run && ss == run) {
        /* The memory side is contiguous at this level (it did not merge
         * because the other side is strided): one copy. */
        memcpy(d, s, run * rows);
        return;
    }
    switch (run) {
    case 4:
        for (i = 0; i < rows; i++, d += ds, s += ss)
            memcpy(d, s, 4);
        return;
    case 8:
        for (i = 0; i < rows; i++, d += ds, s += ss)
            memcpy(d, s, 8);
        return;
    case 16:
        for (i = 0; i < rows; i++, d += ds, s += ss)
            memcpy(d, s, 16);
        return;
    case 32:
        for (i = 0; i < rows; i++, d += ds, s += ss)
            memcpy(d, s, 32);
        return;
    case 64:
        for (i = 0; i < rows; i++, d += ds, s += ss)
            memcpy(d, s, 64);
        return;
    default:
        break;
    }
    if (run <= 64) {
        for (i = 0; i < rows; i++, d += ds, s += ss)
            copy_small(d, s, run);
    } else {
        for (i = 0; i < rows; i++, d += ds, s += ss)
            memcpy(d, s, run);
    }
}

enum { WALK_PACK, WALK_UNPACK, WALK_FN };

/* rows runs of the memory side starting at p, stride apart, and the
 * packed side at buf (runs back to back). */
static inline __attribute__((always_inline)) void
do_rows(int mode, char *p, size_t stride, char *buf, size_t run, size_t rows,
        tlm_pack_rows_fn_t fn, void *arg)
{
    if (mode == WALK_PACK)
        copy_rows(buf, run, p, stride, run, rows);
    else if (mode == WALK_UNPACK)
        copy_rows(p, stride, buf, run, run, rows);
    else
        fn(arg, p, stride, buf, run, rows);
}

static inline __attribute__((always_inline)) void do_part(int mode, char *p,
                                                          char *buf, size_t n,
                                                          tlm_pack_rows_fn_t fn,
                                                          void *arg)
{
    if (mode == WALK_PACK)
        copy_one(buf, p, n);
    else if (mode == WALK_UNPACK)
        copy_one(p, buf, n);
    else
        fn(arg, p, 0, buf, n, 1);
}

/* Bytes [off, off + len) of the stream.  Stateless: the index of the first
 * run comes from off by division; then dimension 1 is swept in one
 * do_rows() call per pass and the others advance as an odometer.  The
 * odometer only moves when more bytes follow, so no pointer is formed past
 * the patch's last run. */
static inline __attribute__((always_inline)) void
walk(const tlm_pack_desc_t *d, int side, char *base, size_t off, char *buf,
     size_t len, int mode, tlm_pack_rows_fn_t fn, void *arg)
{
    const int levels = d->levels;
    const size_t run = d->count[0];
    const size_t *st = d->stride[side];
    size_t idx[TLM_PACK_MAX_LEVELS + 1];

    if (len == 0)
        return;
    if (levels <= 0) { /* normalised descriptors have 0..8 levels */
        do_part(mode, base + off, buf, len, fn, arg);
        return;
    }

    size_t r = off / run, o = off - r * run;
    char *p = base;
    for (int k = 1; k <= levels; k++) {
        size_t q = r / d->count[k];
        idx[k] = r - q * d->count[k];
        p += idx[k] * st[k - 1];
        r = q;
    }
    const size_t c1 = d->count[1], s1 = st[0];

    if (o) { /* the rest of a run cut by off */
        size_t n = run - o < len ? run - o : len;
        do_part(mode, p + o, buf, n, fn, arg);
        buf += n;
        len -= n;
        if (len == 0)
            return;
        idx[1]++;
        p += s1;
    }
    for (;;) {
        if (idx[1] == c1) {
            int k = 2;
            p -= c1 * s1;
            idx[1] = 0;
            for (;;) {
                if (k > levels)
                    return; /* off + len > total: caller's bug */
                p += st[k - 1];
                if (++idx[k] < d->count[k])
                    break;
                p -= d->count[k] * st[k - 1];
                idx[k] = 0;
                k++;
            }
        }
        size_t rows = c1 - idx[1], whole = len / run;
        if (rows > whole)
            rows = whole;
        if (rows == 0) { /* a run cut by off + len */
            do_part(mode, p, buf, len, fn, arg);
            return;
        }
        do_rows(mode, p, s1, buf, run, rows, fn, arg);
        buf += rows * run;
        len -= rows * run;
        if (len == 0)
            return;
        idx[1] += rows;
        p += rows * s1;
    }
}

void tlm_pack(const tlm_pack_desc_t *d, int side, const void *base, size_t off,
              void *dst, size_t len)
{
    /* base is only read in this mode. */
    walk(d, side, (char *)(uintptr_t)base, off, dst, len, WALK_PACK, NULL,
         NULL);
}

void tlm_unpack(const tlm_pack_desc_t *d, int side, void *base, size_t off,
                const void *src, size_t len)
{
    /* src is only read in this mode. */
    walk(d, side, base, off, (char *)(uintptr_t)src, len, WALK_UNPACK, NULL,
         NULL);
}

void tlm_pack_walk(const tlm_pack_desc_t *d, int side, void *base, size_t off,
                   void *buf, size_t len, tlm_pack_rows_fn_t fn, void *arg)
{
    walk(d, side, base, off, buf, len, WALK_FN, fn, arg);
}

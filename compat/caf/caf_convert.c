/* caf_convert.c - converting elements between the types and kinds of a
 * coindexed assignment (integer, logical, real, complex of every gfortran
 * kind; character of kind 1 and 4 with blank padding). */
#include <string.h>

#include "caf_internal.h"

typedef __int128 tlm_i128;
typedef _Complex long double tlm_cld;

/* A value on its way: the widest integer, real and complex. */
typedef struct {
    int cls; /* 0 integer, 1 real, 2 complex */
    tlm_i128 i;
    tlm_f128 r;
    tlm_c128 c;
} tlm_val_t;

static int load(tlm_val_t *v, int type, int kind, const void *p)
{
    if (type == TLM_BT_INTEGER || type == TLM_BT_LOGICAL) {
        v->cls = 0;
        switch (kind) {
        case 1: { /* sign-extended by hand: no signed char conversion */
            unsigned b = *(const uint8_t *)p;
            v->i = (tlm_i128)b - (b & 0x80u ? 256 : 0);
            break;
        }
        case 2: v->i = *(const int16_t *)p; break;
        case 4: v->i = *(const int32_t *)p; break;
        case 8: v->i = *(const int64_t *)p; break;
        case 16: v->i = *(const tlm_i128 *)p; break;
        default: return -1;
        }
        if (type == TLM_BT_LOGICAL)
            v->i = v->i != 0;
        return 0;
    }
    if (type == TLM_BT_REAL) {
        v->cls = 1;
        switch (kind) {
        case 4: v->r = *(const float *)p; break;
        case 8: v->r = *(const double *)p; break;
        case 10: v->r = *(const long double *)p; break;
        case 16: v->r = *(const tlm_f128 *)p; break;
        default: return -1;
        }
        return 0;
    }
    if (type == TLM_BT_COMPLEX) {
        v->cls = 2;
        switch (kind) {
        case 4: v->c = *(const _Complex float *)p; break;
        case 8: v->c = *(const _Complex double *)p; break;
        case 10: v->c = *(const tlm_cld *)p; break;
        case 16: v->c = *(const tlm_c128 *)p; break;
        default: return -1;
        }
        return 0;
    }
    return -1;
}

static tlm_i128 as_int(const tlm_val_t *v)
{
    return v->cls == 0 ? v->i : v->cls == 1 ? (tlm_i128)v->r
                                            : (tlm_i128)__real__ v->c;
}

static tlm_f128 as_real(const tlm_val_t *v)
{
    return v->cls == 0 ? (tlm_f128)v->i : v->cls == 1 ? v->r
                                                      : __real__ v->c;
}

static int store(void *p, int type, int kind, const tlm_val_t *v)
{
    if (type == TLM_BT_INTEGER || type == TLM_BT_LOGICAL) {
        tlm_i128 i = as_int(v);
        if (type == TLM_BT_LOGICAL)
            i = i != 0;
        switch (kind) {
        case 1: *(int8_t *)p = (int8_t)i; return 0;
        case 2: *(int16_t *)p = (int16_t)i; return 0;
        case 4: *(int32_t *)p = (int32_t)i; return 0;
        case 8: *(int64_t *)p = (int64_t)i; return 0;
        case 16: *(tlm_i128 *)p = i; return 0;
        default: return -1;
        }
    }
    if (type == TLM_BT_REAL) {
        tlm_f128 r = as_real(v);
        switch (kind) {
        case 4: *(float *)p = (float)r; return 0;
        case 8: *(double *)p = (double)r; return 0;
        case 10: *(long double *)p = (long double)r; return 0;
        case 16: *(tlm_f128 *)p = r; return 0;
        default: return -1;
        }
    }
    if (type == TLM_BT_COMPLEX) {
        tlm_c128 c = v->cls == 2 ? v->c : (tlm_c128)as_real(v);
        switch (kind) {
        case 4: *(_Complex float *)p = (_Complex float)c; return 0;
        case 8: *(_Complex double *)p = (_Complex double)c; return 0;
        case 10: *(tlm_cld *)p = (tlm_cld)c; return 0;
        case 16: *(tlm_c128 *)p = c; return 0;
        default: return -1;
        }
    }
    return -1;
}

/* Character to character: copy what fits, pad with blanks; kind 1 <-> 4
 * converts each character ('?' for one kind 1 cannot hold). */
static void convert_char(void *dst, int dkind, size_t delem, const void *src,
                         int skind, size_t selem)
{
    size_t dn = delem / (size_t)dkind, sn = selem / (size_t)skind, i;
    size_t n = dn < sn ? dn : sn;

    for (i = 0; i < n; i++) {
        uint32_t c = skind == 1 ? ((const unsigned char *)src)[i]
                                : ((const uint32_t *)src)[i];
        if (dkind == 1)
            ((unsigned char *)dst)[i] = c > 255 ? '?' : (unsigned char)c;
        else
            ((uint32_t *)dst)[i] = c;
    }
    for (; i < dn; i++) {
        if (dkind == 1)
            ((unsigned char *)dst)[i] = ' ';
        else
            ((uint32_t *)dst)[i] = ' ';
    }
}

bool tlm_caf_needs_convert(int dtype, int dkind, size_t delem, int stype,
                           int skind, size_t selem)
{
    if (dtype == TLM_BT_DERIVED || stype == TLM_BT_DERIVED ||
        dtype == TLM_BT_CLASS || stype == TLM_BT_CLASS)
        return delem != selem;
    return dtype != stype || dkind != skind || delem != selem;
}

int tlm_caf_convert(void *dst, int dtype, int dkind, size_t delem,
                    const void *src, int stype, int skind, size_t selem)
{
    tlm_val_t v;

    if (!tlm_caf_needs_convert(dtype, dkind, delem, stype, skind, selem)) {
        memcpy(dst, src, delem);
        return 0;
    }
    if (dtype == TLM_BT_CHARACTER && stype == TLM_BT_CHARACTER) {
        if ((dkind != 1 && dkind != 4) || (skind != 1 && skind != 4))
            return -1;
        convert_char(dst, dkind, delem, src, skind, selem);
        return 0;
    }
    if (dtype == TLM_BT_DERIVED || stype == TLM_BT_DERIVED ||
        dtype == TLM_BT_CLASS || stype == TLM_BT_CLASS) {
        /* Same type, different sizes: copy what both have. */
        memcpy(dst, src, delem < selem ? delem : selem);
        return 0;
    }
    if (load(&v, stype, skind, src) != 0)
        return -1;
    return store(dst, dtype, dkind, &v);
}

int tlm_caf_convert_n(void *dst, int dtype, int dkind, size_t delem,
                      const void *src, int stype, int skind, size_t selem,
                      size_t count, size_t src_count)
{
    size_t i;

    for (i = 0; i < count; i++) {
        const char *s = (const char *)src + (src_count == 1 ? 0 : i * selem);
        if (tlm_caf_convert((char *)dst + i * delem, dtype, dkind, delem, s,
                            stype, skind, selem) != 0)
            return -1;
    }
    return 0;
}

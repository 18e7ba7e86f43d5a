/* caf_coll.c - the collective subroutines co_broadcast, co_sum, co_min,
 * co_max and co_reduce on Telemem's collectives: telemem_broadcast,
 * telemem_allreduce for the types it has, and telemem_allgather followed
 * by the same fold in image order on every image for the others
 * (character, small and 128-bit kinds, user functions). */
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

/* Refuse a collective that a stopped or failed image cannot join. */
static int coll_check(const char *what, int *stat, char *errmsg, size_t len)
{
    int r;

    tlm_caf_need_init();
    tlm_caf_ok(stat);
    if (tlm_caf.team != &tlm_caf.initial) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: collectives inside CHANGE TEAM are not "
                       "supported by libcaf_telemem", what);
        return 1;
    }
    tlm_caf_refresh_dead();
    for (r = 0; r < tlm_caf.n; r++) {
        int s = tlm_caf_state(r);
        if (s != TLM_CAF_RUNNING) {
            tlm_caf_report(stat, errmsg, len,
                           s == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                               : TLM_CAF_STAT_STOPPED_IMAGE,
                           "%s: image %d has %s", what, r + 1,
                           s == TLM_CAF_FAILED ? "failed" : "stopped");
            return 1;
        }
    }
    return 0;
}

/* The elements of a as one contiguous buffer (a new one when a is not
 * contiguous). */
static char *gather_local(tlm_gfc_desc_t *a, tlm_caf_shape_t *s,
                          bool *copied)
{
    char *buf;

    static char none;

    tlm_caf_shape_of(a, s);
    *copied = false;
    if (s->count * s->elem == 0)
        return &none;
    if (tlm_caf_is_contig(s))
        return a->base_addr;
    buf = malloc(s->count * s->elem + 1);
    if (buf) {
        tlm_caf_pack(buf, a->base_addr, s);
        *copied = true;
    }
    return buf;
}

static void scatter_local(tlm_gfc_desc_t *a, const tlm_caf_shape_t *s,
                          char *buf, bool copied)
{
    if (copied) {
        tlm_caf_unpack(a->base_addr, s, buf);
        free(buf);
    }
}

void _gfortran_caf_co_broadcast(tlm_gfc_desc_t *a, int source_image,
                                int *stat, char *errmsg, size_t errmsg_len)
{
    tlm_caf_shape_t s;
    bool copied;
    char *buf;
    int root, rc;

    if (coll_check("co_broadcast", stat, errmsg, errmsg_len))
        return;
    root = tlm_caf_rank_of(source_image);
    if (root < 0) {
        tlm_caf_report(stat, errmsg, errmsg_len, TLM_CAF_STAT_INVALID,
                       "co_broadcast: source_image %d out of range [1, %d]",
                       source_image, tlm_caf.team->size);
        return;
    }
    buf = gather_local(a, &s, &copied);
    if (!buf) {
        tlm_caf_check(TELEMEM_ERR_NO_MEMORY, stat, errmsg, errmsg_len,
                      "co_broadcast", 0);
        return;
    }
    rc = telemem_broadcast(buf, s.count * s.elem, root);
    scatter_local(a, &s, buf, copied);
    tlm_caf_check(rc, stat, errmsg, errmsg_len, "co_broadcast", 0);
}

enum { OP_SUM, OP_MIN, OP_MAX };

/* Telemem's type for (type, elem), or -1. */
static int telemem_type_of(int type, size_t elem)
{
    if (type == TLM_BT_INTEGER && elem == 4)
        return TELEMEM_INT32;
    if (type == TLM_BT_INTEGER && elem == 8)
        return TELEMEM_INT64;
    if (type == TLM_BT_REAL && elem == 4)
        return TELEMEM_FLOAT;
    if (type == TLM_BT_REAL && elem == 8)
        return TELEMEM_DOUBLE;
    return -1;
}

static size_t telemem_size(int tt)
{
    return tt == TELEMEM_INT32 || tt == TELEMEM_FLOAT ? 4 : 8;
}

/* T is a type name: it cannot take parentheses (the NOLINT below). */
#define FOLD(T)                                                             \
    do {                                                                    \
        T *x = acc; /* NOLINT(bugprone-macro-parentheses) */                \
        const T *y = v;                                                     \
        *x = op == OP_SUM ? (T)(*x + *y)                                    \
           : op == OP_MIN ? (*y < *x ? *y : *x)                             \
                          : (*y > *x ? *y : *x);                            \
    } while (0)

/* acc = acc (op) v for one element of the builtin operations. */
static int fold_builtin(int op, int type, size_t elem, int char_kind,
                        void *acc, const void *v)
{
    if (type == TLM_BT_INTEGER) {
        switch (elem) {
        case 1: FOLD(int8_t); return 0;
        case 2: FOLD(int16_t); return 0;
        case 4: FOLD(int32_t); return 0;
        case 8: FOLD(int64_t); return 0;
        case 16: FOLD(__int128); return 0;
        }
    } else if (type == TLM_BT_REAL) {
        switch (elem) {
        case 4: FOLD(float); return 0;
        case 8: FOLD(double); return 0;
        case 16: FOLD(tlm_f128); return 0;
        }
    } else if (type == TLM_BT_COMPLEX && op == OP_SUM) {
        switch (elem) {
        case 8: { _Complex float *x = acc; *x += *(const _Complex float *)v;
                  return 0; }
        case 16: { _Complex double *x = acc;
                   *x += *(const _Complex double *)v; return 0; }
        case 32: { tlm_c128 *x = acc;
                   *x += *(const tlm_c128 *)v; return 0; }
        }
    } else if (type == TLM_BT_CHARACTER && op != OP_SUM) {
        size_t i, n = elem / (size_t)char_kind;
        int c = 0;
        for (i = 0; i < n && !c; i++) {
            uint32_t p = char_kind == 1 ? ((const unsigned char *)acc)[i]
                                        : ((const uint32_t *)acc)[i];
            uint32_t q = char_kind == 1 ? ((const unsigned char *)v)[i]
                                        : ((const uint32_t *)v)[i];
            c = p < q ? -1 : p > q;
        }
        if ((op == OP_MIN && c > 0) || (op == OP_MAX && c < 0))
            memcpy(acc, v, elem);
        return 0;
    }
    return -1;
}

/* The user's function applied to (acc, v), by co_reduce's conventions. */
typedef struct {
    void *(*opr)(void *, void *);
    int flags, type;
    size_t elem;
} user_op_t;

/* The user's function is called with the signature gfortran gave it;
 * the cast goes through a function type without arguments, which any
 * function pointer converts to and from. */
typedef void (*any_fn_t)(void);

static int fold_user(const user_op_t *u, void *acc, const void *v)
{
    any_fn_t fn = (any_fn_t)u->opr;
    void *a = acc, *b = (void *)v;
    bool val = (u->flags & TLM_CAF_ARG_VALUE) != 0;

    if (u->type == TLM_BT_CHARACTER) {
        char tmp[u->elem + 1];
        ((void (*)(void *, int, void *, void *, int, int))fn)(
            tmp, (int)u->elem, a, b, (int)u->elem, (int)u->elem);
        memcpy(acc, tmp, u->elem);
        return 0;
    }
#define CALL(T)                                                             \
    do {                                                                    \
        T r = val ? ((T(*)(T, T))fn)(*(T *)a, *(T *)b)                      \
                  : ((T(*)(void *, void *))fn)(a, b);                       \
        *(T *)acc = r;                                                      \
        return 0;                                                           \
    } while (0)
    if (u->type == TLM_BT_INTEGER || u->type == TLM_BT_LOGICAL) {
        switch (u->elem) {
        case 1: CALL(int8_t);
        case 2: CALL(int16_t);
        case 4: CALL(int32_t);
        case 8: CALL(int64_t);
        case 16: CALL(__int128);
        }
    } else if (u->type == TLM_BT_REAL) {
        switch (u->elem) {
        case 4: CALL(float);
        case 8: CALL(double);
        case 16: CALL(tlm_f128);
        }
    } else if (u->type == TLM_BT_COMPLEX) {
        switch (u->elem) {
        case 8: CALL(_Complex float);
        case 16: CALL(_Complex double);
        }
    }
#undef CALL
    return -1;
}

/* Gather every image's elements and fold them in image order. */
static int allgather_fold(char *buf, const tlm_caf_shape_t *s, int op,
                          int char_kind, const user_op_t *u, int type)
{
    size_t bytes = s->count * s->elem, i;
    char *all = malloc(bytes * (size_t)tlm_caf.n + 1);
    int r, rc;

    if (!all)
        return TELEMEM_ERR_NO_MEMORY;
    rc = telemem_allgather(buf, all, bytes);
    if (rc == TELEMEM_OK) {
        memcpy(buf, all, bytes);
        for (r = 1; r < tlm_caf.n && rc == TELEMEM_OK; r++)
            for (i = 0; i < s->count; i++) {
                char *acc = buf + i * s->elem;
                const char *v = all + (size_t)r * bytes + i * s->elem;
                if ((u ? fold_user(u, acc, v)
                       : fold_builtin(op, type, s->elem, char_kind, acc,
                                      v)) != 0) {
                    rc = TELEMEM_ERR_UNSUPPORTED;
                    break;
                }
            }
    }
    free(all);
    return rc;
}

static void reduce(const char *what, tlm_gfc_desc_t *a, int op,
                   const user_op_t *u, int result_image, int a_len,
                   int *stat, char *errmsg, size_t len)
{
    tlm_caf_shape_t s;
    bool copied;
    char *buf;
    int rc, tt, type = TLM_GFC_TYPE(a), ck = 1;

    if (coll_check(what, stat, errmsg, len))
        return;
    if (result_image && tlm_caf_rank_of(result_image) < 0) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: result_image %d out of range [1, %d]", what,
                       result_image, tlm_caf.team->size);
        return;
    }
    buf = gather_local(a, &s, &copied);
    if (!buf) {
        tlm_caf_check(TELEMEM_ERR_NO_MEMORY, stat, errmsg, len, what, 0);
        return;
    }
    /* A complex sum is the sum of the real and imaginary parts. */
    if (!u && type == TLM_BT_COMPLEX && op == OP_SUM &&
        (s.elem == 8 || s.elem == 16))
        tt = telemem_type_of(TLM_BT_REAL, s.elem / 2);
    else
        tt = u ? -1 : telemem_type_of(type, s.elem);
    if (tt >= 0)
        rc = telemem_allreduce(buf, s.count * s.elem / telemem_size(tt), tt,
                               op == OP_SUM ? TELEMEM_SUM
                               : op == OP_MIN ? TELEMEM_MIN : TELEMEM_MAX);
    else {
        if (type == TLM_BT_CHARACTER && a_len > 0 &&
            s.elem == 4 * (size_t)a_len)
            ck = 4;
        rc = allgather_fold(buf, &s, op, ck, u, type);
    }
    scatter_local(a, &s, buf, copied);
    if (rc == TELEMEM_ERR_UNSUPPORTED)
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: no reduction of type %d with %zu-byte elements",
                       what, type, s.elem);
    else
        tlm_caf_check(rc, stat, errmsg, len, what, 0);
}

void _gfortran_caf_co_sum(tlm_gfc_desc_t *a, int result_image, int *stat,
                          char *errmsg, size_t errmsg_len)
{
    reduce("co_sum", a, OP_SUM, NULL, result_image, 0, stat, errmsg,
           errmsg_len);
}

void _gfortran_caf_co_min(tlm_gfc_desc_t *a, int result_image, int *stat,
                          char *errmsg, int a_len, size_t errmsg_len)
{
    reduce("co_min", a, OP_MIN, NULL, result_image, a_len, stat, errmsg,
           errmsg_len);
}

void _gfortran_caf_co_max(tlm_gfc_desc_t *a, int result_image, int *stat,
                          char *errmsg, int a_len, size_t errmsg_len)
{
    reduce("co_max", a, OP_MAX, NULL, result_image, a_len, stat, errmsg,
           errmsg_len);
}

void _gfortran_caf_co_reduce(tlm_gfc_desc_t *a, void *(*opr)(void *, void *),
                             int opr_flags, int result_image, int *stat,
                             char *errmsg, int a_len, size_t errmsg_len)
{
    user_op_t u;

    u.opr = opr;
    u.flags = opr_flags;
    u.type = TLM_GFC_TYPE(a);
    u.elem = a->dtype.elem_len;
    reduce("co_reduce", a, 0, &u, result_image, a_len, stat, errmsg,
           errmsg_len);
}

/* caf_coll.c - the collective subroutines co_broadcast, co_sum, co_min,
 * co_max and co_reduce, with the folds of every type: in the initial team
 * through caf_jcoll.c's slots (and telemem_broadcast, telemem_allreduce
 * for larger arguments), inside CHANGE TEAM on caf_tcoll.c's trees
 * (folding in image order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

static void coll_begin(int *stat)
{
    tlm_caf_need_init();
    tlm_caf_ok(stat);
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

/* A broadcast larger than a slot, once every image of the initial team
 * runs and agrees. */
int tlm_caf_jc_bcast_big(const tlm_caf_jc_t *op, char *msg, size_t cap)
{
    return tlm_caf_status_msg(
        telemem_broadcast(op->buf, op->bytes, op->root), op->name, msg, cap);
}

void _gfortran_caf_co_broadcast(tlm_gfc_desc_t *a, int source_image,
                                int *stat, char *errmsg, size_t errmsg_len)
{
    tlm_caf_shape_t s;
    bool copied;
    char *buf, msg[256] = "";
    int root, code;
    size_t bytes;

    coll_begin(stat);
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
    bytes = s.count * s.elem;
    {
        tlm_caf_jc_t op = {.what = TLM_CAF_JC_BCAST, .name = "co_broadcast",
                           .buf = buf, .bytes = bytes, .root = root,
                           .big = tlm_caf_jc_bcast_big};
        code = tlm_caf_jc(&op, msg, sizeof msg);
        if (code < 0)
            code = tlm_caf_tcoll_bcast(tlm_caf.team, buf, bytes,
                                       source_image - 1, "co_broadcast", msg,
                                       sizeof msg);
    }
    scatter_local(a, &s, buf, copied);
    if (code)
        tlm_caf_report(stat, errmsg, errmsg_len, code, "%s", msg);
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

/* What a team's reduction folds with (fold_all). */
typedef struct {
    int op, type, char_kind;
    size_t elem;
    const user_op_t *u;
} fold_ctx_t;

/* x = x (op) y over n elements of type T, the operation chosen once. */
#define FOLD_ARRAY(T)                                                       \
    do {                                                                    \
        T *x = acc; /* NOLINT(bugprone-macro-parentheses) */                \
        const T *y = v;                                                     \
        size_t k_;                                                          \
        if (f->op == OP_SUM)                                                \
            for (k_ = 0; k_ < n; k_++)                                      \
                x[k_] = (T)(x[k_] + y[k_]);                                 \
        else if (f->op == OP_MIN)                                           \
            for (k_ = 0; k_ < n; k_++)                                      \
                x[k_] = y[k_] < x[k_] ? y[k_] : x[k_];                      \
        else                                                                \
            for (k_ = 0; k_ < n; k_++)                                      \
                x[k_] = y[k_] > x[k_] ? y[k_] : x[k_];                      \
        return 0;                                                           \
    } while (0)

/* The builtin operations on whole arrays of the numeric types (a complex
 * sum is the sum of the parts); -1 for the others. */
static int fold_numeric(const fold_ctx_t *f, void *acc, const void *v,
                        size_t bytes)
{
    size_t elem = f->elem;
    int type = f->type;
    size_t n;

    if (type == TLM_BT_COMPLEX && f->op == OP_SUM && elem != 32) {
        type = TLM_BT_REAL;
        elem /= 2;
    }
    n = bytes / elem;
    if (type == TLM_BT_INTEGER) {
        switch (elem) {
        case 1: FOLD_ARRAY(int8_t);
        case 2: FOLD_ARRAY(int16_t);
        case 4: FOLD_ARRAY(int32_t);
        case 8: FOLD_ARRAY(int64_t);
        case 16: FOLD_ARRAY(__int128);
        }
    } else if (type == TLM_BT_REAL) {
        switch (elem) {
        case 4: FOLD_ARRAY(float);
        case 8: FOLD_ARRAY(double);
        case 16: FOLD_ARRAY(tlm_f128);
        }
    }
    return -1;
}

static int fold_all(void *acc, const void *v, size_t bytes, void *ctx)
{
    const fold_ctx_t *f = ctx;
    size_t i;

    if (!f->u && fold_numeric(f, acc, v, bytes) == 0)
        return 0;
    for (i = 0; i + f->elem <= bytes; i += f->elem)
        if ((f->u ? fold_user(f->u, (char *)acc + i, (const char *)v + i)
                  : fold_builtin(f->op, f->type, f->elem, f->char_kind,
                                 (char *)acc + i, (const char *)v + i)) != 0)
            return -1;
    return 0;
}

/* Whether fold_all can apply (op or u) to elements of (type, elem): every
 * image checks before the collective, so that none of them is left
 * waiting for one that gave up. */
static bool fold_supported(const fold_ctx_t *f)
{
    int t = f->type;
    size_t e = f->elem;

    if (t == TLM_BT_CHARACTER)
        return f->u || f->op != OP_SUM;
    if (t == TLM_BT_INTEGER || (f->u && t == TLM_BT_LOGICAL))
        return e == 1 || e == 2 || e == 4 || e == 8 || e == 16;
    if (t == TLM_BT_REAL)
        return e == 4 || e == 8 || e == 16;
    if (t == TLM_BT_COMPLEX)
        return f->u ? e == 8 || e == 16
                    : f->op == OP_SUM && (e == 8 || e == 16 || e == 32);
    return false;
}

/* Telemem's type for a builtin reduction of (type, elem), or -1: a
 * complex sum is the sum of the real and imaginary parts. */
static int reduce_type(int op, const user_op_t *u, int type, size_t elem)
{
    if (u)
        return -1;
    if (type == TLM_BT_COMPLEX && op == OP_SUM && (elem == 8 || elem == 16))
        return telemem_type_of(TLM_BT_REAL, elem / 2);
    return telemem_type_of(type, elem);
}

/* A reduction of an argument larger than a slot, once every image of the
 * initial team runs and agrees: telemem_allreduce for the types and
 * operations it has, the team's trees for the others. */
static int reduce_big(const tlm_caf_jc_t *op, char *msg, size_t cap)
{
    const fold_ctx_t *f = op->ctx;
    int tt = reduce_type(f->op, f->u, f->type, f->elem);

    if (tt < 0)
        return tlm_caf_tcoll_allreduce(tlm_caf.team, op->buf, op->bytes,
                                       fold_all, op->ctx, op->name, msg,
                                       cap);
    return tlm_caf_status_msg(
        telemem_allreduce(op->buf, op->bytes / telemem_size(tt), tt,
                          f->op == OP_SUM   ? TELEMEM_SUM
                          : f->op == OP_MIN ? TELEMEM_MIN
                                            : TELEMEM_MAX),
        op->name, msg, cap);
}

/* co_sum, co_min, co_max, co_reduce: every image of the current team gets
 * the result (result_image's or not).  In the initial team through the
 * slots (caf_jcoll.c), otherwise (inside CHANGE TEAM, or once a process
 * died) on the team's trees. */
static void reduce(const char *what, tlm_gfc_desc_t *a, int op,
                   const user_op_t *u, int result_image, int a_len,
                   int *stat, char *errmsg, size_t len)
{
    fold_ctx_t f;
    tlm_caf_shape_t s;
    bool copied;
    char *buf, msg[256] = "";
    int code;

    coll_begin(stat);
    if (result_image && tlm_caf_rank_of(result_image) < 0) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: result_image %d out of range [1, %d]", what,
                       result_image, tlm_caf.team->size);
        return;
    }
    f.op = op;
    f.type = TLM_GFC_TYPE(a);
    f.char_kind = 1;
    if (f.type == TLM_BT_CHARACTER && a_len > 0 &&
        a->dtype.elem_len == 4 * (size_t)a_len)
        f.char_kind = 4;
    f.elem = a->dtype.elem_len;
    f.u = u;
    if (!fold_supported(&f)) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: no reduction of type %d with %zu-byte elements",
                       what, f.type, f.elem);
        return;
    }
    buf = gather_local(a, &s, &copied);
    if (!buf) {
        tlm_caf_check(TELEMEM_ERR_NO_MEMORY, stat, errmsg, len, what, 0);
        return;
    }
    f.elem = s.elem;
    {
        tlm_caf_jc_t jc = {.what = TLM_CAF_JC_REDUCE, .name = what,
                           .buf = buf, .bytes = s.count * s.elem,
                           .fold = fold_all, .ctx = &f, .big = reduce_big};
        code = tlm_caf_jc(&jc, msg, sizeof msg);
        /* Inside a team: a flat step up to a slot's size, the trees
         * (watching for an image that took the flat step) beyond. */
        if (code < 0 && jc.bytes <= TLM_CAF_JC_DATA)
            code = tlm_caf_tflat(tlm_caf.team, &jc, msg, sizeof msg);
        else if (code < 0)
            code = tlm_caf_tcoll_allreduce_watched(tlm_caf.team, buf,
                                                   jc.bytes, fold_all, &f,
                                                   what, msg, sizeof msg);
    }
    scatter_local(a, &s, buf, copied);
    if (code)
        tlm_caf_report(stat, errmsg, len, code, "%s", msg);
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

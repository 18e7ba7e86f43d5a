/* armci_gop.c - message.h's reductions: armci_msg_*gop* (global
 * operations), armci_msg_reduce* and armci_msg_sel* (select the data of
 * the rank with the min / max value).  Sum, min and max over the world
 * use telemem_allreduce; everything else gathers the contributions and
 * combines them in rank order, so every rank gets bit-identical results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "armci_internal.h"

typedef enum gop_op {
    GOP_SUM,
    GOP_PROD,
    GOP_MAX,
    GOP_MIN,
    GOP_ABSMAX,
    GOP_ABSMIN,
    GOP_BOR,  /* "or": bitwise, integers */
    GOP_LOR,  /* "||" */
    GOP_LAND  /* "&&" */
} gop_op_t;

static const struct {
    const char *name;
    gop_op_t op;
} gop_names[] = {
    {"+", GOP_SUM},       {"*", GOP_PROD},      {"max", GOP_MAX},
    {"min", GOP_MIN},     {"absmax", GOP_ABSMAX}, {"absmin", GOP_ABSMIN},
    {"or", GOP_BOR},      {"||", GOP_LOR},      {"&&", GOP_LAND},
};

static gop_op_t parse_op(const char *call, const char *op)
{
    if (!op)
        tlm_armci_fail(call, "op is NULL");
    for (size_t i = 0; i < sizeof gop_names / sizeof gop_names[0]; i++)
        if (strcmp(op, gop_names[i].name) == 0)
            return gop_names[i].op;
    tlm_armci_fail(call,
                   "unknown operation \"%s\" (use +, *, max, min, absmax, "
                   "absmin, or, ||, &&)",
                   op);
}

static size_t type_size(const char *call, int type)
{
    switch (type) {
    case ARMCI_INT:
        return sizeof(int);
    case ARMCI_LONG:
        return sizeof(long);
    case ARMCI_LONG_LONG:
        return sizeof(long long);
    case ARMCI_FLOAT:
        return sizeof(float);
    case ARMCI_DOUBLE:
        return sizeof(double);
    default:
        tlm_armci_fail(call, "unknown type %d (use ARMCI_INT .. ARMCI_DOUBLE)",
                       type);
    }
}

static bool is_float(int type)
{
    return type == ARMCI_FLOAT || type == ARMCI_DOUBLE;
}

/* One combining step for every element type: acc[i] = acc[i] op in[i].
 * NOLINTBEGIN(bugprone-macro-parentheses): T is a type name, which cannot
 * be parenthesised in a declaration. */
#define GOP_COMBINE(T, ABS)                                                 \
    static void combine_##T(T *acc, const T *in, int n, gop_op_t op)        \
    {                                                                       \
        for (int i = 0; i < n; i++) {                                       \
            T a = acc[i], b = in[i];                                        \
            switch (op) {                                                   \
            case GOP_SUM:                                                   \
                a = a + b;                                                  \
                break;                                                      \
            case GOP_PROD:                                                  \
                a = a * b;                                                  \
                break;                                                      \
            case GOP_MAX:                                                   \
            case GOP_ABSMAX:                                                \
                a = b > a ? b : a;                                          \
                break;                                                      \
            case GOP_MIN:                                                   \
            case GOP_ABSMIN:                                                \
                a = b < a ? b : a;                                          \
                break;                                                      \
            default:                                                        \
                break;                                                      \
            }                                                               \
            acc[i] = a;                                                     \
        }                                                                   \
    }                                                                       \
    static void absval_##T(T *x, int n)                                     \
    {                                                                       \
        for (int i = 0; i < n; i++)                                         \
            x[i] = ABS(x[i]);                                               \
    }

/* Integer absolute values wrap like the machine's (INT_MIN stays). */
#define IABS(v) ((v) < 0 ? -(v) : (v))
typedef long long llong;
GOP_COMBINE(int, IABS)
GOP_COMBINE(long, IABS)
GOP_COMBINE(llong, IABS)
GOP_COMBINE(float, fabsf)
GOP_COMBINE(double, fabs)

#define GOP_LOGIC(T)                                                        \
    static void logic_##T(T *acc, const T *in, int n, gop_op_t op)          \
    {                                                                       \
        for (int i = 0; i < n; i++) {                                       \
            if (op == GOP_BOR)                                              \
                acc[i] = acc[i] | in[i];                                    \
            else if (op == GOP_LOR)                                         \
                acc[i] = acc[i] || in[i];                                   \
            else                                                            \
                acc[i] = acc[i] && in[i];                                   \
        }                                                                   \
    }
/* NOLINTEND(bugprone-macro-parentheses) */
GOP_LOGIC(int)
GOP_LOGIC(long)
GOP_LOGIC(llong)

static void combine(int type, void *acc, const void *in, int n, gop_op_t op)
{
    bool logic = op == GOP_BOR || op == GOP_LOR || op == GOP_LAND;
    switch (type) {
    case ARMCI_INT:
        (logic ? logic_int : combine_int)(acc, in, n, op);
        break;
    case ARMCI_LONG:
        (logic ? logic_long : combine_long)(acc, in, n, op);
        break;
    case ARMCI_LONG_LONG:
        (logic ? logic_llong : combine_llong)(acc, in, n, op);
        break;
    case ARMCI_FLOAT:
        combine_float(acc, in, n, op);
        break;
    default:
        combine_double(acc, in, n, op);
        break;
    }
}

static void absval(int type, void *x, int n)
{
    switch (type) {
    case ARMCI_INT:
        absval_int(x, n);
        break;
    case ARMCI_LONG:
        absval_long(x, n);
        break;
    case ARMCI_LONG_LONG:
        absval_llong(x, n);
        break;
    case ARMCI_FLOAT:
        absval_float(x, n);
        break;
    default:
        absval_double(x, n);
        break;
    }
}

/* Logical results are 0 or 1 even for a single rank. */
static void normalize_logic(int type, void *x, int n, gop_op_t op)
{
    if (op != GOP_LOR && op != GOP_LAND)
        return;
    size_t es = type == ARMCI_INT ? sizeof(int) : sizeof(long long);
    unsigned char *p = x;
    for (int i = 0; i < n; i++, p += es) {
        long long v = 0;
        if (es == sizeof(int)) {
            int iv;
            memcpy(&iv, p, sizeof iv);
            v = iv != 0;
            iv = (int)v;
            memcpy(p, &iv, sizeof iv);
        } else {
            memcpy(&v, p, sizeof v);
            v = v != 0;
            memcpy(p, &v, sizeof v);
        }
    }
}

/* Telemem's allreduce covers sum / min / max of these types. */
static bool native(int type, gop_op_t op, telemem_type_t *tt,
                   telemem_op_t *top)
{
    switch (op) {
    case GOP_SUM:
        *top = TELEMEM_SUM;
        break;
    case GOP_MAX:
    case GOP_ABSMAX:
        *top = TELEMEM_MAX;
        break;
    case GOP_MIN:
    case GOP_ABSMIN:
        *top = TELEMEM_MIN;
        break;
    default:
        return false;
    }
    switch (type) {
    case ARMCI_INT:
        *tt = TELEMEM_INT32;
        return sizeof(int) == 4;
    case ARMCI_LONG:
        *tt = TELEMEM_INT64;
        return sizeof(long) == 8;
    case ARMCI_LONG_LONG:
        *tt = TELEMEM_INT64;
        return sizeof(long long) == 8;
    case ARMCI_FLOAT:
        *tt = TELEMEM_FLOAT;
        return true;
    default:
        *tt = TELEMEM_DOUBLE;
        return true;
    }
}

void tlm_armci_gop(const char *call, tlm_armci_grp_t *g, void *x, int n,
                   const char *op, int type)
{
    gop_op_t o = parse_op(call, op);
    size_t es = type_size(call, type);
    if (n < 0)
        tlm_armci_fail(call, "n %d is negative", n);
    if (n > 0 && !x)
        tlm_armci_fail(call, "x is NULL (n %d)", n);
    if ((o == GOP_BOR || o == GOP_LOR || o == GOP_LAND) && is_float(type))
        tlm_armci_fail(call, "operation \"%s\" needs an integer type", op);
    if (n == 0)
        return;
    if (o == GOP_ABSMAX || o == GOP_ABSMIN)
        absval(type, x, n);
    if (!g || g->size == 1) {
        normalize_logic(type, x, n, o);
        return;
    }
    telemem_type_t tt;
    telemem_op_t top;
    if (g->ctx == 0 && native(type, o, &tt, &top)) {
        tlm_armci_rc(call, telemem_allreduce(x, (size_t)n, tt, top),
                     "allreduce of %d elements", n);
        return;
    }
    size_t bytes = (size_t)n * es;
    unsigned char *all = malloc((size_t)g->size * bytes);
    if (!all)
        tlm_armci_fail(call, "out of memory (%d ranks x %zu bytes)", g->size,
                       bytes);
    tlm_armci_grp_allgather(call, g, x, all, bytes);
    memcpy(x, all, bytes);
    for (int r = 1; r < g->size; r++)
        combine(type, x, all + (size_t)r * bytes, n, o);
    free(all);
    normalize_logic(type, x, n, o);
}

static void check_scope(const char *call, int scope)
{
    if (scope != SCOPE_ALL && scope != SCOPE_NODE && scope != SCOPE_MASTERS)
        tlm_armci_fail(call, "unknown scope %d", scope);
}

void armci_msg_group_gop_scope(int scope, void *x, int n, char *op, int type,
                               ARMCI_Group *group)
{
    static const char call[] = "armci_msg_group_gop_scope";
    tlm_armci_grp_t *g = tlm_armci_grp_get(call, group);
    check_scope(call, scope);
    tlm_armci_gop(call, scope == SCOPE_NODE ? NULL : g, x, n, op, type);
}

void armci_msg_gop_scope(int scope, void *x, int n, char *op, int type)
{
    static const char call[] = "armci_msg_gop_scope";
    tlm_armci_check_ready(call);
    check_scope(call, scope);
    tlm_armci_gop(call, scope == SCOPE_NODE ? NULL : tlm_armci.world, x, n,
                  op, type);
}

void armci_msg_igop(int *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_ALL, x, n, op, ARMCI_INT);
}

void armci_msg_lgop(long *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_ALL, x, n, op, ARMCI_LONG);
}

void armci_msg_llgop(long long *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_ALL, x, n, op, ARMCI_LONG_LONG);
}

void armci_msg_fgop(float *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_ALL, x, n, op, ARMCI_FLOAT);
}

void armci_msg_dgop(double *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_ALL, x, n, op, ARMCI_DOUBLE);
}

void armci_msg_group_igop(int *x, int n, char *op, ARMCI_Group *group)
{
    armci_msg_group_gop_scope(SCOPE_ALL, x, n, op, ARMCI_INT, group);
}

void armci_msg_group_lgop(long *x, int n, char *op, ARMCI_Group *group)
{
    armci_msg_group_gop_scope(SCOPE_ALL, x, n, op, ARMCI_LONG, group);
}

void armci_msg_group_llgop(long long *x, int n, char *op, ARMCI_Group *group)
{
    armci_msg_group_gop_scope(SCOPE_ALL, x, n, op, ARMCI_LONG_LONG, group);
}

void armci_msg_group_fgop(float *x, int n, char *op, ARMCI_Group *group)
{
    armci_msg_group_gop_scope(SCOPE_ALL, x, n, op, ARMCI_FLOAT, group);
}

void armci_msg_group_dgop(double *x, int n, char *op, ARMCI_Group *group)
{
    armci_msg_group_gop_scope(SCOPE_ALL, x, n, op, ARMCI_DOUBLE, group);
}

void armci_msg_reduce_scope(int scope, void *x, int n, char *op, int type)
{
    /* Rank 0 of the scope needs the result; everyone gets it. */
    armci_msg_gop_scope(scope, x, n, op, type);
}

void armci_msg_reduce(void *x, int n, char *op, int type)
{
    armci_msg_gop_scope(SCOPE_ALL, x, n, op, type);
}

/* ------------------------------------------------------------------------
 * Select */

/* -1, 0, 1 as the first element of a is below, equal to, above b's. */
static int compare_first(int type, const unsigned char *a,
                         const unsigned char *b)
{
#define CMP(T)                                                              \
    {                                                                       \
        T x, y;                                                             \
        memcpy(&x, a, sizeof x);                                            \
        memcpy(&y, b, sizeof y);                                            \
        return (x > y) - (x < y);                                           \
    }
    switch (type) {
    case ARMCI_INT:
        CMP(int)
    case ARMCI_LONG:
        CMP(long)
    case ARMCI_LONG_LONG:
        CMP(long long)
    case ARMCI_FLOAT:
        CMP(float)
    default:
        CMP(double)
    }
#undef CMP
}

void armci_msg_sel_scope(int scope, void *x, int n, char *op, int type,
                         int contribute)
{
    static const char call[] = "armci_msg_sel_scope";
    tlm_armci_check_ready(call);
    check_scope(call, scope);
    size_t es = type_size(call, type);
    if (!op || (strcmp(op, "min") != 0 && strcmp(op, "max") != 0))
        tlm_armci_fail(call, "unknown operation \"%s\" (use min or max)",
                       op ? op : "(null)");
    if (n < (int)es || !x)
        tlm_armci_fail(call, "x %p of %d bytes cannot hold one element",
                       x, n);
    if (scope == SCOPE_NODE)
        return; /* this rank alone: x is the answer */
    bool want_max = op[1] == 'a';
    tlm_armci_grp_t *g = tlm_armci.world;
    size_t slot = sizeof(int) + (size_t)n;
    unsigned char *mine = malloc(slot);
    unsigned char *all = malloc((size_t)g->size * slot);
    if (!mine || !all)
        tlm_armci_fail(call, "out of memory");
    int flag = contribute != 0;
    memcpy(mine, &flag, sizeof flag);
    memcpy(mine + sizeof(int), x, (size_t)n);
    tlm_armci_grp_allgather(call, g, mine, all, slot);
    const unsigned char *best = NULL;
    for (int r = 0; r < g->size; r++) {
        const unsigned char *s = all + (size_t)r * slot;
        memcpy(&flag, s, sizeof flag);
        if (!flag)
            continue;
        s += sizeof(int);
        if (!best) {
            best = s;
            continue;
        }
        int c = compare_first(type, s, best);
        if (want_max ? c > 0 : c < 0)
            best = s;
    }
    if (best)
        memcpy(x, best, (size_t)n);
    free(mine);
    free(all);
}

void armci_msg_sel(void *x, int n, char *op, int type, int contribute)
{
    armci_msg_sel_scope(SCOPE_ALL, x, n, op, type, contribute);
}

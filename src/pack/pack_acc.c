/* pack_acc.c - the accumulate kernels (dst += scale * src for every
 * accumulate type) and the accumulate form of tlm_unpack(). */
#include <string.h>

#include "pack/pack.h"

/* Every kernel works on rows of ne elements: row r of dst starts at
 * d + r * ds, row r of src at s + r * ss; elements within a row are
 * contiguous.  The contiguous case is one row.  Loads and stores go
 * through memcpy (no alignment is promised; it compiles to plain moves).
 * Integers are added in unsigned arithmetic: wrapping is defined there and
 * gives the two's complement result of the signed types. */
typedef void (*acc_kernel_t)(char *d, size_t ds, const char *s, size_t ss,
                             size_t ne, size_t rows, const void *scale);

/* The loops of one kernel for one expression OP(x, y) (x the dst element,
 * y the src element), with one element per row as its own loop: the
 * common strided shape (a column of doubles) then has no inner loop. */
#define ACC_LOOPS(T, OP)                                                       \
    do {                                                                       \
        T x_, y_;                                                              \
        if (ne == 1) {                                                         \
            for (size_t r_ = 0; r_ < rows; r_++, d += ds, s += ss) {           \
                memcpy(&x_, d, sizeof(T));                                     \
                memcpy(&y_, s, sizeof(T));                                     \
                x_ = OP(x_, y_);                                               \
                memcpy(d, &x_, sizeof(T));                                     \
            }                                                                  \
            break;                                                             \
        }                                                                      \
        for (size_t r_ = 0; r_ < rows; r_++, d += ds, s += ss) {               \
            for (size_t e_ = 0; e_ < ne; e_++) {                               \
                memcpy(&x_, d + e_ * sizeof(T), sizeof(T));                    \
                memcpy(&y_, s + e_ * sizeof(T), sizeof(T));                    \
                x_ = OP(x_, y_);                                               \
                memcpy(d + e_ * sizeof(T), &x_, sizeof(T));                    \
            }                                                                  \
        }                                                                      \
    } while (0)

#define ADD(x, y) ((x) + (y))
#define ADD_SCALED(x, y) ((x) + a * (y))

/* Real types (integers as their unsigned counterpart).  Scale 1 skips the
 * multiply: for floating point x + 1 * y == x + y anyway. */
#define REAL_KERNEL(NAME, T)                                                   \
    static void NAME(char *d, size_t ds, const char *s, size_t ss, size_t ne,  \
                     size_t rows, const void *scale)                           \
    {                                                                          \
        T a;                                                                   \
        memcpy(&a, scale, sizeof a);                                           \
        if (a == (T)1)                                                         \
            ACC_LOOPS(T, ADD);                                                 \
        else                                                                   \
            ACC_LOOPS(T, ADD_SCALED);                                          \
    }

REAL_KERNEL(acc_u32, uint32_t)
REAL_KERNEL(acc_u64, uint64_t)
REAL_KERNEL(acc_f32, float)
REAL_KERNEL(acc_f64, double)

/* Complex: (re, im) pairs of T, the textbook product (no C99 Annex G
 * infinity recovery, which costs a library call per element).  Scale
 * (1, 0) is the real addition of 2 * ne components. */
#define COMPLEX_KERNEL(NAME, T, REAL)                                          \
    static void NAME(char *d, size_t ds, const char *s, size_t ss, size_t ne,  \
                     size_t rows, const void *scale)                           \
    {                                                                          \
        T a[2], x[2], y[2];                                                    \
        memcpy(a, scale, sizeof a);                                            \
        if (a[0] == (T)1 && a[1] == (T)0) {                                    \
            REAL(d, ds, s, ss, 2 * ne, rows, a);                               \
            return;                                                            \
        }                                                                      \
        for (size_t r = 0; r < rows; r++, d += ds, s += ss) {                  \
            for (size_t e = 0; e < ne; e++) {                                  \
                memcpy(x, d + e * sizeof x, sizeof x);                         \
                memcpy(y, s + e * sizeof y, sizeof y);                         \
                T re = x[0] + (a[0] * y[0] - a[1] * y[1]);                     \
                T im = x[1] + (a[0] * y[1] + a[1] * y[0]);                     \
                x[0] = re;                                                     \
                x[1] = im;                                                     \
                memcpy(d + e * sizeof x, x, sizeof x);                         \
            }                                                                  \
        }                                                                      \
    }

COMPLEX_KERNEL(acc_c32, float, acc_f32)
COMPLEX_KERNEL(acc_c64, double, acc_f64)

/* The TLM_ACC_ATOMIC kernels update each naturally aligned scalar
 * atomically and a misaligned one with a plain add (no atomic can target
 * it: atomics require alignment).  About 5-20x slower than the plain
 * loops, which is why only memory that peers reach with direct atomics and
 * accumulates asks for them.  The add of one scalar y to the T at p:
 * integers with one relaxed atomic add (x86: lock add); floating point,
 * which x86 cannot add atomically, with a compare-and-swap loop on its
 * bits (U, the unsigned integer of T's width). */
#define INT_ADD_ATOMIC(NAME, T)                                                \
    static void NAME(char *p, T y)                                             \
    {                                                                          \
        if ((uintptr_t)p % sizeof(T) == 0) {                                   \
            __atomic_fetch_add((T *)(void *)p, y, __ATOMIC_RELAXED);           \
            return;                                                            \
        }                                                                      \
        T x;                                                                   \
        memcpy(&x, p, sizeof(T));                                              \
        x = (T)(x + y);                                                        \
        memcpy(p, &x, sizeof(T));                                              \
    }

INT_ADD_ATOMIC(add_u32_atomic, uint32_t)
INT_ADD_ATOMIC(add_u64_atomic, uint64_t)

#define FP_ADD_ATOMIC(NAME, T, U)                                              \
    static void NAME(char *p, T y)                                             \
    {                                                                          \
        T x;                                                                   \
        if ((uintptr_t)p % sizeof(T)) {                                        \
            memcpy(&x, p, sizeof(T));                                          \
            x = x + y;                                                         \
            memcpy(p, &x, sizeof(T));                                          \
            return;                                                            \
        }                                                                      \
        U old = __atomic_load_n((U *)(void *)p, __ATOMIC_RELAXED), nw;         \
        do {                                                                   \
            memcpy(&x, &old, sizeof(T));                                       \
            x = x + y;                                                         \
            memcpy(&nw, &x, sizeof(T));                                        \
        } while (!__atomic_compare_exchange_n((U *)(void *)p, &old, nw, true,  \
                                              __ATOMIC_RELAXED,                \
                                              __ATOMIC_RELAXED));              \
    }

FP_ADD_ATOMIC(add_f32_atomic, float, uint32_t)
FP_ADD_ATOMIC(add_f64_atomic, double, uint64_t)

/* Real types: dst += scale * src, one ADD per element. */
#define ATOMIC_KERNEL(NAME, T, ADD)                                            \
    static void NAME(char *d, size_t ds, const char *s, size_t ss, size_t ne,  \
                     size_t rows, const void *scale)                           \
    {                                                                          \
        T a, y;                                                                \
        memcpy(&a, scale, sizeof a);                                           \
        for (size_t r = 0; r < rows; r++, d += ds, s += ss) {                  \
            for (size_t e = 0; e < ne; e++) {                                  \
                memcpy(&y, s + e * sizeof(T), sizeof(T));                      \
                ADD(d + e * sizeof(T), (T)(a * y));                            \
            }                                                                  \
        }                                                                      \
    }

ATOMIC_KERNEL(acc_u32_atomic, uint32_t, add_u32_atomic)
ATOMIC_KERNEL(acc_u64_atomic, uint64_t, add_u64_atomic)
ATOMIC_KERNEL(acc_f32_atomic, float, add_f32_atomic)
ATOMIC_KERNEL(acc_f64_atomic, double, add_f64_atomic)

/* Complex: the product as above, each component added atomically on its
 * own (the sums commute, so concurrent updates add up exactly as they
 * would one after the other). */
#define CPLX_ATOMIC_KERNEL(NAME, T, ADD)                                       \
    static void NAME(char *d, size_t ds, const char *s, size_t ss, size_t ne,  \
                     size_t rows, const void *scale)                           \
    {                                                                          \
        T a[2], y[2];                                                          \
        memcpy(a, scale, sizeof a);                                            \
        for (size_t r = 0; r < rows; r++, d += ds, s += ss) {                  \
            for (size_t e = 0; e < ne; e++) {                                  \
                memcpy(y, s + e * sizeof y, sizeof y);                         \
                char *p = d + e * sizeof y;                                    \
                ADD(p, a[0] * y[0] - a[1] * y[1]);                             \
                ADD(p + sizeof(T), a[0] * y[1] + a[1] * y[0]);                 \
            }                                                                  \
        }                                                                      \
    }

CPLX_ATOMIC_KERNEL(acc_c32_atomic, float, add_f32_atomic)
CPLX_ATOMIC_KERNEL(acc_c64_atomic, double, add_f64_atomic)

static const struct {
    size_t size;
    acc_kernel_t fn;
} acc_types[TLM_ACC_NTYPES] = {
    [TLM_ACC_INT32] = {4, acc_u32},    [TLM_ACC_INT64] = {8, acc_u64},
    [TLM_ACC_UINT64] = {8, acc_u64},   [TLM_ACC_FLOAT] = {4, acc_f32},
    [TLM_ACC_DOUBLE] = {8, acc_f64},   [TLM_ACC_CFLOAT] = {8, acc_c32},
    [TLM_ACC_CDOUBLE] = {16, acc_c64},
};

size_t tlm_acc_elem_size(int type)
{
    type &= ~TLM_ACC_ATOMIC;
    if (type < 0 || type >= TLM_ACC_NTYPES)
        return 0;
    return acc_types[type].size;
}

/* The kernel of type (flags included); NULL for an unknown type. */
static acc_kernel_t kernel_of(int type)
{
    int t = type & ~TLM_ACC_ATOMIC;
    if (t < 0 || t >= TLM_ACC_NTYPES)
        return NULL;
    if (type & TLM_ACC_ATOMIC) {
        static const acc_kernel_t atomic_fn[TLM_ACC_NTYPES] = {
            [TLM_ACC_INT32] = acc_u32_atomic,
            [TLM_ACC_INT64] = acc_u64_atomic,
            [TLM_ACC_UINT64] = acc_u64_atomic,
            [TLM_ACC_FLOAT] = acc_f32_atomic,
            [TLM_ACC_DOUBLE] = acc_f64_atomic,
            [TLM_ACC_CFLOAT] = acc_c32_atomic,
            [TLM_ACC_CDOUBLE] = acc_c64_atomic,
        };
        return atomic_fn[t];
    }
    return acc_types[t].fn;
}

void tlm_acc_apply(int type, void *dst, const void *src, size_t n,
                   const void *scale)
{
    acc_kernel_t fn = kernel_of(type);
    if (!fn || n == 0)
        return;
    fn(dst, 0, src, 0, n, 1, scale);
}

struct unpack_acc {
    acc_kernel_t fn;
    size_t size;
    const void *scale;
};

/* One tlm_pack_walk() piece: rows runs at mem += the packed runs at buf. */
static void unpack_acc_rows(void *arg, char *mem, size_t stride, char *buf,
                            size_t run, size_t rows)
{
    const struct unpack_acc *u = arg;
    if (stride == run) { /* contiguous on this side: one long row */
        run *= rows;
        rows = 1;
    }
    u->fn(mem, stride, buf, run, run / u->size, rows, u->scale);
}

void tlm_unpack_acc(const tlm_pack_desc_t *d, int side, void *base, size_t off,
                    const void *src, size_t len, int type, const void *scale)
{
    acc_kernel_t fn = kernel_of(type);
    if (!fn)
        return;
    struct unpack_acc u = {fn, tlm_acc_elem_size(type), scale};
    /* The walk hands src back to unpack_acc_rows, which only reads it. */
    tlm_pack_walk(d, side, base, off, (void *)(uintptr_t)src, len,
                  unpack_acc_rows, &u);
}

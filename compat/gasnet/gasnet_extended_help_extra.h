/* gasnet_extended_help_extra.h - the telemem conduit's inline puts and
 * gets (as GASNet's smp-conduit has its own there): where a node's
 * segment is mapped in this process (a node on this host, Telemem's
 * window driver, telemem_ptr), gasnet_put, _get and their _bulk, _nb,
 * _nbi and _val forms store and load there in the client's code, complete
 * at once (gasnet_wait_syncnb and _try_syncnb of their invalid handles
 * too); otherwise they call libgasnet, which does everything else and
 * reports every error.  gasnet.h includes it last of the extended API. */
#ifndef GASNET_EXTENDED_HELP_EXTRA_H
#define GASNET_EXTENDED_HELP_EXTRA_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_extended_help_extra.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* By node, set by gasnet_attach(): its segment [base, base + size) where
 * this process maps it (at local), and whether that is another process's
 * memory, which the client reaches only through these calls.  size is 0
 * for a segment not mapped here (Telemem's operations carry its
 * transfers); gasnetc_segmap_nodes is 0 before gasnet_attach().  The fields' and counters' types differ from those of the
 * typed stores below (unsigned long long, unsigned int, unsigned short),
 * so that the compiler may keep them in registers across such stores. */
typedef struct {
    char *base;
    uintptr_t size;
    char *local;
    uintptr_t other;
} gasnetc_segmap_t;
GASNETC_API extern gasnetc_segmap_t *gasnetc_segmap;
GASNETC_API extern uintptr_t gasnetc_segmap_nodes;
/* Non-zero when this node should poll (in its control line, in shared
 * memory): another node called gasnet_exit(0), or a thread sent this node
 * a request (GASNet runs such handlers at once); the inline operations
 * then call libgasnet, which polls (and joins the exit), as GASNet's
 * calls do. */
GASNETC_API extern const volatile uintptr_t *gasnetc_attention;
GASNETC_API void gasnetc_tick(void);
/* Copies above 1 MiB go in pieces (libgasnet). */
#define GASNETC_LONG_COPY ((size_t)1024 * 1024)
GASNETC_API void gasnetc_copy_long(char *dst, const char *src, size_t n);

#if defined(__GNUC__)
/* The entry of node when [remote, +n) lies in its segment mapped here,
 * else NULL; *l is where remote is mapped. */
static inline const gasnetc_segmap_t *
gasnetc_local_at(gasnet_node_t node, const void *remote, size_t n, char **l)
{
    if (GASNETT_PREDICT_TRUE(node < gasnetc_segmap_nodes)) {
        const gasnetc_segmap_t *m = gasnetc_segmap + node;
        uintptr_t off = (uintptr_t)((const char *)remote - m->base);
        if (GASNETT_PREDICT_TRUE(off < m->size && n <= m->size - off)) {
            *l = m->local + off;
            return m;
        }
    }
    return 0;
}
static inline char *gasnetc_local(gasnet_node_t node, const void *remote,
                                  size_t n)
{
    char *l = 0;
    return gasnetc_local_at(node, remote, n, &l) ? l : 0;
}

/* Word-sized accesses to another process's segment, of types nothing of
 * the client's or of the map has (any alignment). */
typedef unsigned long long gasnetc_u8_t __attribute__((aligned(1)));
typedef unsigned int gasnetc_u4_t __attribute__((aligned(1)));
typedef unsigned short gasnetc_u2_t __attribute__((aligned(1)));
typedef unsigned char gasnetc_v16_t
    __attribute__((vector_size(16), aligned(1)));

/* A put's bytes (GASNet promises nothing about the order in which they
 * land; a put of 1, 2, 4 or 8 bytes is one store, or two of the same
 * value).  typed: dst is
 * another process's memory.  A node that may sleep in GASNET_BLOCKUNTIL
 * for them is woken at this process's next synchronisation, wait, poll,
 * barrier or exit (libgasnet; telemem_ptr_wake). */
static inline void gasnetc_store(char *dst, const void *src, size_t n,
                                 int typed)
{
    const char *s = (const char *)src;
    if (typed && n - 1 < 64) {
        /* Up to 64 bytes: stores in the client's code, the last one
         * overlapping (a call of memcpy cost as much as the put); from 16
         * bytes 16-byte vectors, two or four. */
        if (n >= 16) {
            gasnetc_v16_t a, b, c, d;
            memcpy(&a, s, 16);
            memcpy(&b, s + n - 16, 16);
            if (n > 32) {
                memcpy(&c, s + 16, 16);
                memcpy(&d, s + n - 32, 16);
                *(gasnetc_v16_t *)(void *)(dst + 16) = c;
                *(gasnetc_v16_t *)(void *)(dst + n - 32) = d;
            }
            *(gasnetc_v16_t *)(void *)dst = a;
            *(gasnetc_v16_t *)(void *)(dst + n - 16) = b;
        } else if (n >= 8) {
            unsigned long long a, b;
            memcpy(&a, s, 8);
            memcpy(&b, s + n - 8, 8);
            *(gasnetc_u8_t *)(void *)dst = a;
            *(gasnetc_u8_t *)(void *)(dst + n - 8) = b;
        } else if (n >= 4) {
            unsigned int a, b;
            memcpy(&a, s, 4);
            memcpy(&b, s + n - 4, 4);
            *(gasnetc_u4_t *)(void *)dst = a;
            *(gasnetc_u4_t *)(void *)(dst + n - 4) = b;
        } else if (n >= 2) {
            unsigned short a, b;
            memcpy(&a, s, 2);
            memcpy(&b, s + n - 2, 2);
            *(gasnetc_u2_t *)(void *)dst = a;
            *(gasnetc_u2_t *)(void *)(dst + n - 2) = b;
        } else {
            *dst = *s;
        }
    } else if (GASNETT_PREDICT_FALSE(n > GASNETC_LONG_COPY)) {
        gasnetc_copy_long(dst, s, n);
    } else {
        memcpy(dst, s, n);
    }
}

/* A get's bytes (typed: src is another process's memory). */
static inline void gasnetc_load(void *dst, const char *src, size_t n,
                                int typed)
{
    char *d = (char *)dst;
    if (typed && n - 1 < 64) {
        if (n >= 16) {
            gasnetc_v16_t a, b, c, e;
            a = *(const gasnetc_v16_t *)(const void *)src;
            b = *(const gasnetc_v16_t *)(const void *)(src + n - 16);
            if (n > 32) {
                c = *(const gasnetc_v16_t *)(const void *)(src + 16);
                e = *(const gasnetc_v16_t *)(const void *)(src + n - 32);
                memcpy(d + 16, &c, 16);
                memcpy(d + n - 32, &e, 16);
            }
            memcpy(d, &a, 16);
            memcpy(d + n - 16, &b, 16);
        } else if (n >= 8) {
            unsigned long long a =
                *(const gasnetc_u8_t *)(const void *)src;
            unsigned long long b =
                *(const gasnetc_u8_t *)(const void *)(src + n - 8);
            memcpy(d, &a, 8);
            memcpy(d + n - 8, &b, 8);
        } else if (n >= 4) {
            unsigned int a = *(const gasnetc_u4_t *)(const void *)src;
            unsigned int b = *(const gasnetc_u4_t *)(const void *)(src + n - 4);
            memcpy(d, &a, 4);
            memcpy(d + n - 4, &b, 4);
        } else if (n >= 2) {
            unsigned short a = *(const gasnetc_u2_t *)(const void *)src;
            unsigned short b =
                *(const gasnetc_u2_t *)(const void *)(src + n - 2);
            memcpy(d, &a, 2);
            memcpy(d + n - 2, &b, 2);
        } else {
            *d = *src;
        }
    } else if (GASNETT_PREDICT_FALSE(n > GASNETC_LONG_COPY)) {
        gasnetc_copy_long(d, src, n);
    } else {
        memcpy(d, src, n);
    }
}

#define GASNETC_TICK_()                                                     \
    do {                                                                    \
        if (GASNETT_PREDICT_FALSE(__atomic_load_n(gasnetc_attention,       \
                                                  __ATOMIC_RELAXED) != 0))  \
            gasnetc_tick();                                                 \
    } while (0)

/* Each form: inline where mapped, else libgasnet's function of the same
 * name (in parentheses: the function, not the macro below). */
#define GASNETC_PUT_(name)                                                  \
    static inline void gasnetc_##name##_i(gasnet_node_t node, void *dest,  \
                                          void *src, size_t nbytes)         \
    {                                                                       \
        char *l = 0;                                                        \
        const gasnetc_segmap_t *m = gasnetc_local_at(node, dest, nbytes, &l);\
        if (GASNETT_PREDICT_TRUE(m != 0 && src != 0)) {                     \
            gasnetc_store(l, src, nbytes, (int)m->other);                   \
            GASNETC_TICK_();                                                \
        } else {                                                            \
            (gasnet_##name)(node, dest, src, nbytes);                       \
        }                                                                   \
    }
#define GASNETC_GET_(name)                                                  \
    static inline void gasnetc_##name##_i(void *dest, gasnet_node_t node,  \
                                          void *src, size_t nbytes)         \
    {                                                                       \
        char *l = 0;                                                        \
        const gasnetc_segmap_t *m = gasnetc_local_at(node, src, nbytes, &l);\
        if (GASNETT_PREDICT_TRUE(m != 0 && dest != 0)) {                    \
            gasnetc_load(dest, l, nbytes, (int)m->other);                   \
            GASNETC_TICK_();                                                \
        } else {                                                            \
            (gasnet_##name)(dest, node, src, nbytes);                       \
        }                                                                   \
    }
#define GASNETC_PUT_NB_(name)                                               \
    static inline gasnet_handle_t gasnetc_##name##_i(                      \
        gasnet_node_t node, void *dest, void *src, size_t nbytes)           \
    {                                                                       \
        char *l = 0;                                                        \
        const gasnetc_segmap_t *m = gasnetc_local_at(node, dest, nbytes, &l);\
        if (GASNETT_PREDICT_FALSE(m == 0 || src == 0))                      \
            return (gasnet_##name)(node, dest, src, nbytes);                \
        gasnetc_store(l, src, nbytes, (int)m->other);                       \
        GASNETC_TICK_();                                                    \
        return GASNET_INVALID_HANDLE;                                       \
    }
#define GASNETC_GET_NB_(name)                                               \
    static inline gasnet_handle_t gasnetc_##name##_i(                      \
        void *dest, gasnet_node_t node, void *src, size_t nbytes)           \
    {                                                                       \
        char *l = 0;                                                        \
        const gasnetc_segmap_t *m = gasnetc_local_at(node, src, nbytes, &l);\
        if (GASNETT_PREDICT_FALSE(m == 0 || dest == 0))                     \
            return (gasnet_##name)(dest, node, src, nbytes);                \
        gasnetc_load(dest, l, nbytes, (int)m->other);                       \
        GASNETC_TICK_();                                                    \
        return GASNET_INVALID_HANDLE;                                       \
    }
GASNETC_PUT_(put)
GASNETC_PUT_(put_bulk)
GASNETC_PUT_(put_nbi)
GASNETC_PUT_(put_nbi_bulk)
GASNETC_GET_(get)
GASNETC_GET_(get_bulk)
GASNETC_GET_(get_nbi)
GASNETC_GET_(get_nbi_bulk)
GASNETC_PUT_NB_(put_nb)
GASNETC_PUT_NB_(put_nb_bulk)
GASNETC_GET_NB_(get_nb)
GASNETC_GET_NB_(get_nb_bulk)

/* Where the nbytes low-order bytes of a register value sit in memory. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define GASNETC_VAL_OFF_(n) (sizeof(uint64_t) - (n))
#else
#define GASNETC_VAL_OFF_(n) 0
#endif
#define GASNETC_PUT_VAL_(name)                                              \
    static inline void gasnetc_##name##_i(gasnet_node_t node, void *dest,  \
                                          gasnet_register_value_t value,    \
                                          size_t nbytes)                    \
    {                                                                       \
        char *l = 0;                                                        \
        const gasnetc_segmap_t *m = gasnetc_local_at(node, dest, nbytes, &l);\
        uint64_t v = value;                                                 \
        if (GASNETT_PREDICT_TRUE(m != 0 && nbytes - 1 <                     \
                                 (size_t)SIZEOF_GASNET_REGISTER_VALUE_T)) { \
            gasnetc_store(l, (char *)&v + GASNETC_VAL_OFF_(nbytes), nbytes, \
                          (int)m->other);                                   \
            GASNETC_TICK_();                                                \
        } else {                                                            \
            (gasnet_##name)(node, dest, value, nbytes);                     \
        }                                                                   \
    }
GASNETC_PUT_VAL_(put_val)
GASNETC_PUT_VAL_(put_nbi_val)

static inline gasnet_register_value_t
gasnetc_get_val_i(gasnet_node_t node, void *src, size_t nbytes)
{
    const char *l = gasnetc_local(node, src, nbytes);
    if (GASNETT_PREDICT_FALSE(l == 0 || nbytes - 1 >=
                              (size_t)SIZEOF_GASNET_REGISTER_VALUE_T))
        return (gasnet_get_val)(node, src, nbytes);
    uint64_t v = 0;
    memcpy((char *)&v + GASNETC_VAL_OFF_(nbytes), l, nbytes);
    GASNETC_TICK_();
    return (gasnet_register_value_t)v;
}

/* A handle of an operation done inline is GASNET_INVALID_HANDLE: its
 * synchronisation is no call. */
static inline void gasnetc_wait_syncnb_i(gasnet_handle_t h)
{
    if (h != GASNET_INVALID_HANDLE)
        (gasnet_wait_syncnb)(h);
}
static inline int gasnetc_try_syncnb_i(gasnet_handle_t h)
{
    return h == GASNET_INVALID_HANDLE ? GASNET_OK : (gasnet_try_syncnb)(h);
}

/* The calls go to the inline forms; a function's address is still
 * libgasnet's (the macros take arguments). */
#ifndef GASNETC_BUILDING_LIBGASNET
#define gasnet_put(n, d, s, b) gasnetc_put_i((n), (d), (s), (b))
#define gasnet_put_bulk(n, d, s, b) gasnetc_put_bulk_i((n), (d), (s), (b))
#define gasnet_put_nbi(n, d, s, b) gasnetc_put_nbi_i((n), (d), (s), (b))
#define gasnet_put_nbi_bulk(n, d, s, b)                                     \
    gasnetc_put_nbi_bulk_i((n), (d), (s), (b))
#define gasnet_put_nb(n, d, s, b) gasnetc_put_nb_i((n), (d), (s), (b))
#define gasnet_put_nb_bulk(n, d, s, b) gasnetc_put_nb_bulk_i((n), (d), (s), (b))
#define gasnet_get(d, n, s, b) gasnetc_get_i((d), (n), (s), (b))
#define gasnet_get_bulk(d, n, s, b) gasnetc_get_bulk_i((d), (n), (s), (b))
#define gasnet_get_nbi(d, n, s, b) gasnetc_get_nbi_i((d), (n), (s), (b))
#define gasnet_get_nbi_bulk(d, n, s, b)                                     \
    gasnetc_get_nbi_bulk_i((d), (n), (s), (b))
#define gasnet_get_nb(d, n, s, b) gasnetc_get_nb_i((d), (n), (s), (b))
#define gasnet_get_nb_bulk(d, n, s, b) gasnetc_get_nb_bulk_i((d), (n), (s), (b))
#define gasnet_put_val(n, d, v, b) gasnetc_put_val_i((n), (d), (v), (b))
#define gasnet_put_nbi_val(n, d, v, b) gasnetc_put_nbi_val_i((n), (d), (v), (b))
#define gasnet_get_val(n, s, b) gasnetc_get_val_i((n), (s), (b))
#define gasnet_wait_syncnb(h) gasnetc_wait_syncnb_i(h)
#define gasnet_try_syncnb(h) gasnetc_try_syncnb_i(h)
#endif
#endif /* __GNUC__ */

#ifdef __cplusplus
}
#endif

#endif /* GASNET_EXTENDED_HELP_EXTRA_H */

/* gasnet_tools.h - the GASNet-1 tools (gasnett_*): timers, atomics, memory
 * barriers, mutexes, condition variables, thread keys, environment
 * helpers, number formatting, host queries and backtrace hooks, as
 * GASNet-1 clients and their tests use them.  Implemented in libgasnet
 * (the inline parts here); usable without gasnet.h. */
#ifndef GASNET_TOOLS_H
#define GASNET_TOOLS_H
#define _INCLUDED_GASNET_TOOLS_H

#if !defined(_INCLUDED_GASNET_H) &&                                         \
    (defined(GASNET_PAR) || defined(GASNET_PARSYNC))
#error "include gasnet.h before gasnet_tools.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gasnet_basic.h"

#if defined(__GNUC__)
#define GASNETT_API_ __attribute__((visibility("default")))
#else
#define GASNETT_API_
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** @name Versions, configuration and compiler features */
/**@{*/
#define GASNETT_SPEC_VERSION_MAJOR 1
#define GASNETT_SPEC_VERSION_MINOR 3
#define GASNETT_RELEASE_VERSION_MAJOR GASNET_RELEASE_VERSION_MAJOR
#define GASNETT_RELEASE_VERSION_MINOR GASNET_RELEASE_VERSION_MINOR
#define GASNETT_RELEASE_VERSION_PATCH GASNET_RELEASE_VERSION_PATCH

/** Page size and cache line: integer literals, usable in #if. */
#define GASNETT_PAGESIZE GASNETI_PAGESIZE
#define GASNETT_CACHE_LINE_BYTES GASNETI_CACHE_LINE_BYTES

#define GASNETT_THREAD_SAFE 1
#define GASNETT_CONFIG_STRING                                               \
    "tools,TELEMEM,timer=clock_gettime(MONOTONIC),membar=gcc-atomic,"      \
    "atomics=gcc-atomic"

#if defined(__GNUC__)
#define GASNETT_INLINE(fnname) static __inline__ __attribute__((unused))
#define GASNETT_NEVER_INLINE(fnname, declarator)                            \
    __attribute__((noinline)) declarator
#define GASNETT_RESTRICT __restrict__
#define GASNETT_NORETURN __attribute__((noreturn))
#define GASNETT_NORETURNP(fnpointer)
#define GASNETT_MALLOC __attribute__((malloc))
#define GASNETT_PURE __attribute__((pure))
#define GASNETT_CONST __attribute__((const))
#define GASNETT_USED __attribute__((used))
#define GASNETT_HOT __attribute__((hot))
#define GASNETT_COLD __attribute__((cold))
#define GASNETT_DEPRECATED __attribute__((deprecated))
#define GASNETT_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#define GASNETT_FORMAT_PRINTF(fn, fmtarg, firstvararg, declarator)          \
    __attribute__((format(printf, fmtarg, firstvararg))) declarator
#else
#define GASNETT_INLINE(fnname) static inline
#define GASNETT_NEVER_INLINE(fnname, declarator) declarator
#define GASNETT_RESTRICT
#define GASNETT_NORETURN
#define GASNETT_NORETURNP(fnpointer)
#define GASNETT_MALLOC
#define GASNETT_PURE
#define GASNETT_CONST
#define GASNETT_USED
#define GASNETT_HOT
#define GASNETT_COLD
#define GASNETT_DEPRECATED
#define GASNETT_WARN_UNUSED_RESULT
#define GASNETT_FORMAT_PRINTF(fn, fmtarg, firstvararg, declarator) declarator
#endif
#define GASNETT_CURRENT_FUNCTION __func__
#ifdef __cplusplus
#define GASNETT_BEGIN_EXTERNC extern "C" {
#define GASNETT_END_EXTERNC }
#define GASNETT_EXTERNC extern "C"
#else
#define GASNETT_BEGIN_EXTERNC
#define GASNETT_END_EXTERNC
#define GASNETT_EXTERNC
#endif
/** Embed an identification string in the object file. */
#define GASNETT_IDENT(identName, identText)                                 \
    GASNETT_USED static const char identName[] = identText

/** The library's release ("1.30.0"), as a string and as an increasing
 *  integer (major * 10000 + minor * 100 + patch). */
GASNETT_API_ const char *gasnett_release_version_str(void);
GASNETT_API_ uint64_t gasnett_release_version(void);
/** Build options that may hurt performance (always "" here). */
GASNETT_API_ const char *gasnett_performance_warning_str(void);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Memory barriers */
/**@{*/
#if defined(__GNUC__)
#define gasnett_compiler_fence() __asm__ __volatile__("" : : : "memory")
#if defined(__SANITIZE_THREAD__)
/* ThreadSanitizer does not model fences (gcc: -Wtsan): an atomic
 * read-modify-write of a private word orders the same way for it. */
#define gasnett_fence_(order)                                                \
    do {                                                                     \
        static int gasnett_fence_word_;                                      \
        (void)__atomic_fetch_add(&gasnett_fence_word_, 0, (order));          \
    } while (0)
#define gasnett_local_wmb() gasnett_fence_(__ATOMIC_RELEASE)
#define gasnett_local_rmb() gasnett_fence_(__ATOMIC_ACQUIRE)
#define gasnett_local_mb() gasnett_fence_(__ATOMIC_SEQ_CST)
#else
#define gasnett_local_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define gasnett_local_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define gasnett_local_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#if defined(__x86_64__) || defined(__i386__)
#define gasnett_spinloop_hint() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define gasnett_spinloop_hint() __asm__ __volatile__("yield" : : : "memory")
#else
#define gasnett_spinloop_hint() gasnett_compiler_fence()
#endif
#else
#error "gasnet_tools.h needs GCC-compatible atomic builtins"
#endif
/* Single-threaded clients (GASNET_SEQ) may use the weak forms. */
#define gasnett_weak_wmb() gasnett_local_wmb()
#define gasnett_weak_rmb() gasnett_local_rmb()
#define gasnett_weak_mb() gasnett_local_mb()
#define GASNETT_MEMBAR_CONFIG gcc_atomic
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Timers
 * Ticks are nanoseconds of CLOCK_MONOTONIC. */
/**@{*/
typedef uint64_t gasnett_tick_t;
#define GASNETT_TICK_MIN ((gasnett_tick_t)0)
#define GASNETT_TICK_MAX (~(gasnett_tick_t)0)
#define GASNETT_TIMER_CONFIG timer_clock_gettime

static inline gasnett_tick_t gasnett_ticks_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (gasnett_tick_t)ts.tv_sec * 1000000000u +
           (gasnett_tick_t)ts.tv_nsec;
}
#define gasnett_ticks_to_ns(ticks) ((uint64_t)(ticks))
#define gasnett_ticks_to_us(ticks) ((uint64_t)(ticks) / 1000u)
/** Smallest difference between two ticks_now() values, in microseconds. */
GASNETT_API_ double gasnett_tick_granularityus(void);
/** Cost of one gasnett_ticks_now() call, in microseconds (measured once). */
GASNETT_API_ double gasnett_tick_overheadus(void);
#define gasnett_timer_granularityus() gasnett_tick_granularityus()
#define gasnett_timer_overheadus() gasnett_tick_overheadus()
/** Wall-clock microseconds since the epoch. */
GASNETT_API_ uint64_t gasnett_gettimeofday_us(void);
/** Sleep for at least @p ns_delay nanoseconds. */
GASNETT_API_ int gasnett_nsleep(uint64_t ns_delay);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Atomics
 *
 * Types gasnett_atomic_t (gasnett_atomic_val_t = 32 bits), gasnett_atomic32_t,
 * gasnett_atomic64_t and their "strong" twins (identical here: every
 * operation is a real atomic, safe between threads and from signal
 * handlers on this platform).  For each type T:
 *
 *   T_init(v)                static initializer
 *   T_read(p, f)             value
 *   T_set(p, v, f)
 *   T_increment(p, f)  T_decrement(p, f)
 *   T_decrement_and_test(p, f)        non-zero if the result is 0
 *   T_compare_and_swap(p, old, new, f) non-zero if it swapped
 *   T_swap(p, v, f)          returns the old value
 *   T_add(p, v, f)  T_subtract(p, v, f)   return the NEW value
 *   T_fetchadd(p, v, f)      returns the OLD value (an extension)
 *
 * @p f takes GASNETT_ATOMIC_* fence flags; every operation is sequentially
 * consistent here, which is at least as strong as any flag asks.
 */
/**@{*/
#define GASNETT_ATOMIC_NONE 0
#define GASNETT_ATOMIC_RMB_PRE 0x01
#define GASNETT_ATOMIC_WMB_PRE 0x02
#define GASNETT_ATOMIC_RMB_POST 0x04
#define GASNETT_ATOMIC_WMB_POST 0x08
#define GASNETT_ATOMIC_RMB_POST_IF_TRUE 0x10
#define GASNETT_ATOMIC_RMB_POST_IF_FALSE 0x20
#define GASNETT_ATOMIC_MB_PRE (GASNETT_ATOMIC_RMB_PRE | GASNETT_ATOMIC_WMB_PRE)
#define GASNETT_ATOMIC_MB_POST                                              \
    (GASNETT_ATOMIC_RMB_POST | GASNETT_ATOMIC_WMB_POST)
#define GASNETT_ATOMIC_REL GASNETT_ATOMIC_WMB_PRE
#define GASNETT_ATOMIC_ACQ GASNETT_ATOMIC_RMB_POST
#define GASNETT_ATOMIC_ACQ_IF_TRUE GASNETT_ATOMIC_RMB_POST_IF_TRUE
#define GASNETT_ATOMIC_ACQ_IF_FALSE GASNETT_ATOMIC_RMB_POST_IF_FALSE

#define GASNETT_HAVE_ATOMIC_CAS 1
#define GASNETT_HAVE_ATOMIC_ADD_SUB 1
#define GASNETT_HAVE_STRONGATOMIC_CAS 1
#define GASNETT_HAVE_STRONGATOMIC_ADD_SUB 1
#define GASNETT_ATOMIC_CONFIG atomic_gcc
#define GASNETT_ATOMIC32_CONFIG atomic32_gcc
#define GASNETT_ATOMIC64_CONFIG atomic64_gcc

typedef uint32_t gasnett_atomic_val_t;
typedef int32_t gasnett_atomic_sval_t;
#define GASNETT_ATOMIC_MAX ((gasnett_atomic_val_t)0xFFFFFFFFu)
#define GASNETT_ATOMIC_SIGNED_MIN ((gasnett_atomic_sval_t)INT32_MIN)
#define GASNETT_ATOMIC_SIGNED_MAX ((gasnett_atomic_sval_t)INT32_MAX)
#define gasnett_atomic_signed(v) ((gasnett_atomic_sval_t)(v))

#define GASNETT_ATOMIC_DEFINE_(N, T)                                        \
    typedef struct {                                                        \
        volatile T ctr_;                                                    \
    } N##_t;                                                                \
    static inline T N##_read(const N##_t *p, int f)                         \
    {                                                                       \
        (void)f;                                                            \
        return __atomic_load_n(&p->ctr_, __ATOMIC_SEQ_CST);                 \
    }                                                                       \
    static inline void N##_set(N##_t *p, T v, int f)                        \
    {                                                                       \
        (void)f;                                                            \
        __atomic_store_n(&p->ctr_, v, __ATOMIC_SEQ_CST);                    \
    }                                                                       \
    static inline void N##_increment(N##_t *p, int f)                       \
    {                                                                       \
        (void)f;                                                            \
        __atomic_add_fetch(&p->ctr_, (T)1, __ATOMIC_SEQ_CST);               \
    }                                                                       \
    static inline void N##_decrement(N##_t *p, int f)                       \
    {                                                                       \
        (void)f;                                                            \
        __atomic_sub_fetch(&p->ctr_, (T)1, __ATOMIC_SEQ_CST);               \
    }                                                                       \
    static inline int N##_decrement_and_test(N##_t *p, int f)               \
    {                                                                       \
        (void)f;                                                            \
        return __atomic_sub_fetch(&p->ctr_, (T)1, __ATOMIC_SEQ_CST) == 0;   \
    }                                                                       \
    static inline int N##_compare_and_swap(N##_t *p, T oldval, T newval,    \
                                           int f)                           \
    {                                                                       \
        (void)f;                                                            \
        return __atomic_compare_exchange_n(&p->ctr_, &oldval, newval, 0,    \
                                           __ATOMIC_SEQ_CST,                \
                                           __ATOMIC_SEQ_CST);               \
    }                                                                       \
    static inline T N##_swap(N##_t *p, T v, int f)                          \
    {                                                                       \
        (void)f;                                                            \
        return __atomic_exchange_n(&p->ctr_, v, __ATOMIC_SEQ_CST);          \
    }                                                                       \
    static inline T N##_add(N##_t *p, T v, int f)                           \
    {                                                                       \
        (void)f;                                                            \
        return __atomic_add_fetch(&p->ctr_, v, __ATOMIC_SEQ_CST);           \
    }                                                                       \
    static inline T N##_subtract(N##_t *p, T v, int f)                      \
    {                                                                       \
        (void)f;                                                            \
        return __atomic_sub_fetch(&p->ctr_, v, __ATOMIC_SEQ_CST);           \
    }                                                                       \
    static inline T N##_fetchadd(N##_t *p, T v, int f)                      \
    {                                                                       \
        (void)f;                                                            \
        return __atomic_fetch_add(&p->ctr_, v, __ATOMIC_SEQ_CST);           \
    }

GASNETT_ATOMIC_DEFINE_(gasnett_atomic, uint32_t)
GASNETT_ATOMIC_DEFINE_(gasnett_atomic32, uint32_t)
GASNETT_ATOMIC_DEFINE_(gasnett_atomic64, uint64_t)
GASNETT_ATOMIC_DEFINE_(gasnett_strongatomic, uint32_t)
GASNETT_ATOMIC_DEFINE_(gasnett_strongatomic32, uint32_t)
GASNETT_ATOMIC_DEFINE_(gasnett_strongatomic64, uint64_t)

#define gasnett_atomic_init(v) {(uint32_t)(v)}
#define gasnett_atomic32_init(v) {(uint32_t)(v)}
#define gasnett_atomic64_init(v) {(uint64_t)(v)}
#define gasnett_strongatomic_init(v) {(uint32_t)(v)}
#define gasnett_strongatomic32_init(v) {(uint32_t)(v)}
#define gasnett_strongatomic64_init(v) {(uint64_t)(v)}
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Mutexes, read-write locks and condition variables (POSIX) */
/**@{*/
typedef pthread_mutex_t gasnett_mutex_t;
#define GASNETT_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define gasnett_mutex_init(pl) pthread_mutex_init((pl), NULL)
#define gasnett_mutex_destroy(pl) pthread_mutex_destroy(pl)
#define gasnett_mutex_destroy_ignoreerr(pl) ((void)pthread_mutex_destroy(pl))
#define gasnett_mutex_lock(pl) pthread_mutex_lock(pl)
/** 0 when acquired, EBUSY when held elsewhere. */
#define gasnett_mutex_trylock(pl) pthread_mutex_trylock(pl)
#define gasnett_mutex_unlock(pl) pthread_mutex_unlock(pl)
#define gasnett_mutex_assertlocked(pl) ((void)0)
#define gasnett_mutex_assertunlocked(pl) ((void)0)

typedef pthread_rwlock_t gasnett_rwlock_t;
#define GASNETT_RWLOCK_INITIALIZER PTHREAD_RWLOCK_INITIALIZER
#define gasnett_rwlock_init(pl) pthread_rwlock_init((pl), NULL)
#define gasnett_rwlock_destroy(pl) pthread_rwlock_destroy(pl)
#define gasnett_rwlock_rdlock(pl) pthread_rwlock_rdlock(pl)
#define gasnett_rwlock_wrlock(pl) pthread_rwlock_wrlock(pl)
#define gasnett_rwlock_tryrdlock(pl) pthread_rwlock_tryrdlock(pl)
#define gasnett_rwlock_trywrlock(pl) pthread_rwlock_trywrlock(pl)
#define gasnett_rwlock_unlock(pl) pthread_rwlock_unlock(pl)
#define gasnett_rwlock_assertlocked(pl) ((void)0)
#define gasnett_rwlock_assertrdlocked(pl) ((void)0)
#define gasnett_rwlock_assertwrlocked(pl) ((void)0)
#define gasnett_rwlock_assertunlocked(pl) ((void)0)

typedef pthread_cond_t gasnett_cond_t;
#define GASNETT_COND_INITIALIZER PTHREAD_COND_INITIALIZER
#define gasnett_cond_init(pc) pthread_cond_init((pc), NULL)
#define gasnett_cond_destroy(pc) pthread_cond_destroy(pc)
#define gasnett_cond_signal(pc) pthread_cond_signal(pc)
#define gasnett_cond_broadcast(pc) pthread_cond_broadcast(pc)
/** Wait on @p pc; @p pl must be locked by the caller. */
#define gasnett_cond_wait(pc, pl) pthread_cond_wait((pc), (pl))
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Thread keys
 * @code
 * GASNETT_THREADKEY_DEFINE(mykey);      // at file scope, once
 * gasnett_threadkey_set(mykey, ptr);    // per-thread value, NULL at first
 * void *p = gasnett_threadkey_get(mykey);
 * @endcode
 * The key is created on first use (or by gasnett_threadkey_init()). */
/**@{*/
typedef struct {
    volatile int inited_;
    pthread_key_t key_;
} gasnett_threadkey_t;
#define GASNETT_THREADKEY_INITIALIZER {0, (pthread_key_t)0}
#define GASNETT_THREADKEY_DECLARE(key) extern gasnett_threadkey_t key
#define GASNETT_THREADKEY_DEFINE(key)                                       \
    gasnett_threadkey_t key = GASNETT_THREADKEY_INITIALIZER
/* Create the key once (thread-safe). */
GASNETT_API_ void gasnett_threadkey_init_(gasnett_threadkey_t *pkey);
static inline void *gasnett_threadkey_get_(gasnett_threadkey_t *pkey)
{
    if (!__atomic_load_n(&pkey->inited_, __ATOMIC_ACQUIRE))
        gasnett_threadkey_init_(pkey);
    return pthread_getspecific(pkey->key_);
}
static inline void gasnett_threadkey_set_(gasnett_threadkey_t *pkey,
                                          void *newval)
{
    if (!__atomic_load_n(&pkey->inited_, __ATOMIC_ACQUIRE))
        gasnett_threadkey_init_(pkey);
    pthread_setspecific(pkey->key_, newval);
}
#define gasnett_threadkey_init(key) gasnett_threadkey_init_(&(key))
#define gasnett_threadkey_get(key) gasnett_threadkey_get_(&(key))
#define gasnett_threadkey_set(key, newval)                                  \
    gasnett_threadkey_set_(&(key), (void *)(newval))
#define gasnett_threadkey_get_noinit(key) pthread_getspecific((key).key_)
#define gasnett_threadkey_set_noinit(key, newval)                           \
    ((void)pthread_setspecific((key).key_, (void *)(newval)))
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Environment and number formatting */
/**@{*/
/** getenv(). */
GASNETT_API_ char *gasnett_getenv(const char *key);
/** setenv(key, val, 1) / unsetenv(key). */
GASNETT_API_ void gasnett_setenv(const char *key, const char *val);
GASNETT_API_ void gasnett_unsetenv(const char *key);
/** The variable's value, or @p defaultval when unset or empty. */
GASNETT_API_ const char *gasnett_getenv_withdefault(const char *key,
                                                    const char *defaultval);
/** y/yes/1/true/on -> 1, n/no/0/false/off -> 0 (any case); unset ->
 *  @p defaultval; anything else is a fatal error naming the variable. */
GASNETT_API_ int gasnett_getenv_yesno_withdefault(const char *key,
                                                  int defaultval);
/** An integer (see gasnett_parse_int()); unset -> @p defaultval. */
GASNETT_API_ int64_t
gasnett_getenv_int_withdefault(const char *key, int64_t defaultval,
                               uint64_t mem_size_multiplier);
/** A floating-point number; unset -> @p defaultval; malformed: fatal. */
GASNETT_API_ double gasnett_getenv_dbl_withdefault(const char *key,
                                                   double defaultval);
/** Non-zero when GASNET_VERBOSEENV asks to print settings (then the
 *  *_withdefault helpers print each value they return, on node 0). */
GASNETT_API_ int gasnett_verboseenv(void);
/**
 * Parse a decimal (or 0x hexadecimal) integer.  With
 * @p mem_size_multiplier != 0 it is a memory size: a K/M/G/T suffix (with
 * optional B) scales by 2^10.. 2^40, and a plain number is multiplied by
 * @p mem_size_multiplier (fractions allowed: "1.5G").  Malformed input is
 * a fatal error.
 */
GASNETT_API_ int64_t gasnett_parse_int(const char *str,
                                       uint64_t mem_size_multiplier);
/** Format @p val into @p buf; with @p is_mem_size as "4 KB", "1.5 MB"...
 *  when exact to two decimals, else plain digits.  Returns @p buf. */
GASNETT_API_ char *gasnett_format_number(int64_t val, char *buf,
                                         size_t bufsz, int is_mem_size);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name System queries and misc */
/**@{*/
/** This host's name (a static string). */
GASNETT_API_ const char *gasnett_gethostname(void);
#define gasnett_sched_yield() sched_yield()
/** Online processors (>= 1). */
GASNETT_API_ int gasnett_cpu_count(void);
/** Physical memory in bytes; 0 if unknown (fatal if @p failureIsFatal). */
GASNETT_API_ uint64_t gasnett_getPhysMemSz(int failureIsFatal);
/** Pin this thread to processor @p rank % gasnett_cpu_count(). */
GASNETT_API_ void gasnett_set_affinity(int rank);
/** fflush(stdout), fflush(stderr). */
GASNETT_API_ void gasnett_flush_streams(void);
GASNETT_API_ int gasnett_isLittleEndian(void);
/** A 64-bit checksum of @p numbytes bytes (FNV-1a). */
GASNETT_API_ uint64_t gasnett_checksum(const void *p, int numbytes);
/** Print "*** FATAL ERROR: <message>" and end the job with status 1. */
GASNETT_API_ void gasnett_fatalerror(const char *msg, ...)
    __attribute__((format(printf, 1, 2), noreturn));
#define gasnett_fatalerror_nopos gasnett_fatalerror
/** End this process with @p exitcode at once. */
GASNETT_API_ void gasnett_killmyprocess(int exitcode)
    __attribute__((noreturn));
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Backtraces
 *
 * A client may define gasnett_backtrace_user (a strong definition
 * overrides the library's weak, empty one); gasnett_print_backtrace()
 * then calls its @c fnp with the file descriptor before trying glibc's
 * backtrace(). */
/**@{*/
typedef struct {
    const char *name;  /**< upper-case display name */
    int (*fnp)(int);   /**< writes a backtrace to the fd; 0 on success */
    int threadsupport; /**< handles threads correctly */
} gasnett_backtrace_type_t;
GASNETT_API_ extern gasnett_backtrace_type_t gasnett_backtrace_user;

/** Write a backtrace of the calling thread to @p fd; 0 on success. */
GASNETT_API_ int gasnett_print_backtrace(int fd);
/** As gasnett_print_backtrace() when GASNET_BACKTRACE is set to yes. */
GASNETT_API_ int gasnett_print_backtrace_ifenabled(int fd);
/** Record the executable's name (used by nothing here). */
GASNETT_API_ void gasnett_backtrace_init(const char *exename);
/**@}*/

/* ------------------------------------------------------------------------ */
/* Tracing and statistics are not compiled in: the hooks do nothing. */
#define GASNETT_TRACE_ENABLED 0
#define GASNETT_TRACE_SETSOURCELINE(file, line) ((void)0)
#define GASNETT_TRACE_GETSOURCELINE(pfile, pline) ((void)0)
#define GASNETT_TRACE_FREEZESOURCELINE() ((void)0)
#define GASNETT_TRACE_UNFREEZESOURCELINE() ((void)0)
#define GASNETT_TRACE_GETMASK() ""
#define GASNETT_TRACE_SETMASK(mask) ((void)0)
#define GASNETT_TRACE_GET_TRACELOCAL() (0)
#define GASNETT_TRACE_SET_TRACELOCAL(newval) ((void)0)
static inline void gasnett_trace_printf_noop_(const char *fmt, ...)
{
    (void)fmt;
}
#define GASNETT_TRACE_PRINTF gasnett_trace_printf_noop_
#define GASNETT_TRACE_PRINTF_FORCE gasnett_trace_printf_noop_
#define GASNETT_STATS_INIT(callbackfn) 0
#define GASNETT_STATS_GETMASK() ""
#define GASNETT_STATS_SETMASK(mask) ((void)0)


/* ------------------------------------------------------------------------ */
/** @name Platform facts, zero-byte counting, limits, signals */
/**@{*/
/** "cpu-vendor-os" of the build machine, as GASNet's configure names it. */
#define GASNETT_SYSTEM_TUPLE GASNETI_SYSTEM_TUPLE
/** log2(GASNETT_PAGESIZE). */
#define GASNETT_PAGESHIFT GASNETI_PAGESHIFT
/** Most threads per process that may use GASNet at once (GASNET_PAR). */
#define GASNETT_MAX_THREADS GASNETI_MAX_THREADS

/** Number of zero bytes in [src, src+len). */
GASNETT_API_ size_t gasnett_count0s(const void *src, size_t len);
/** memcpy(dst, src, len) and the number of zero bytes copied. */
GASNETT_API_ size_t gasnett_count0s_copy(void *dst, const void *src,
                                         size_t len);
/** Zero bytes in one integer. */
static inline int gasnett_count0s_uint64_t(uint64_t x)
{
    int n = 0;
    for (int i = 0; i < 8; i++, x >>= 8)
        n += (x & 0xFFu) == 0;
    return n;
}
static inline int gasnett_count0s_uint32_t(uint32_t x)
{
    return gasnett_count0s_uint64_t(x) - 4;
}
#if UINTPTR_MAX > 0xFFFFFFFFu
#define gasnett_count0s_uintptr_t(x) gasnett_count0s_uint64_t((uint64_t)(x))
#else
#define gasnett_count0s_uintptr_t(x) gasnett_count0s_uint32_t((uint32_t)(x))
#endif

/** Raise this process's soft resource limits (address space, data, stack,
 *  open files, processes...) to their hard limits; 1 if any changed. */
GASNETT_API_ int gasnett_maximize_rlimits(void);

typedef void (*gasnett_sighandlerfn_t)(int);
/** signal(sigtocatch, fp): install a handler, return the old one. */
GASNETT_API_ gasnett_sighandlerfn_t
gasnett_reghandler(int sigtocatch, gasnett_sighandlerfn_t fp);

/** Not provided over Telemem (segments come from telemem_malloc_all()):
 *  a fatal error naming the call, as GASNet builds without mmap do. */
#define gasnett_mmap(sz)                                                    \
    (gasnett_fatalerror("gasnett_mmap(%lu) not available",                  \
                        (unsigned long)(sz)), (void *)0)

/** Aligned allocation (posix_memalign); fatal when memory is out. */
GASNETT_API_ void *gasnett_malloc_aligned(size_t alignment, size_t size);
GASNETT_API_ void gasnett_free_aligned(void *ptr);

#if defined(_INCLUDED_GASNET_H)
/**
 * libgasnet's self-test (collective, after gasnet_attach()): @p iters
 * rounds of puts and gets of patterns into the next node's segment (the
 * first 64 KiB of seginfo[next], which the test overwrites), memsets,
 * atomics and barriers, each checked; @p threadcnt, @p testsections are
 * accepted and not used.  Returns the number of errors found (also
 * printed).
 */
GASNETT_API_ int gasnett_run_diagnostics(int iters, int threadcnt,
                                         const char *testsections,
                                         gasnet_seginfo_t const *seginfo);
/* VIS descriptions as text (for error messages): each _bufsz gives the
 * buffer size its formatter needs; the formatters write a NUL-terminated
 * line and return the total bytes described (memvec/addr lists: a small
 * summary). */
typedef struct {
    size_t minsz, maxsz, totalsz;
    void *minaddr, *maxaddr;
} gasnett_memveclist_stats_t;
typedef gasnett_memveclist_stats_t gasnett_addrlist_stats_t;
GASNETT_API_ size_t gasnett_format_memveclist_bufsz(size_t count);
GASNETT_API_ gasnett_memveclist_stats_t
gasnett_format_memveclist(char *buf, size_t count,
                          gasnet_memvec_t const *list);
GASNETT_API_ size_t gasnett_format_putvgetv_bufsz(size_t dstcount,
                                                  size_t srccount);
GASNETT_API_ size_t gasnett_format_putvgetv(char *buf, gasnet_node_t node,
                                            size_t dstcount,
                                            gasnet_memvec_t const dstlist[],
                                            size_t srccount,
                                            gasnet_memvec_t const srclist[]);
GASNETT_API_ size_t gasnett_format_addrlist_bufsz(size_t count);
GASNETT_API_ gasnett_addrlist_stats_t
gasnett_format_addrlist(char *buf, size_t count, void *const *list,
                        size_t len);
GASNETT_API_ size_t gasnett_format_putigeti_bufsz(size_t dstcount,
                                                  size_t srccount);
GASNETT_API_ size_t gasnett_format_putigeti(char *buf, gasnet_node_t node,
                                            size_t dstcount,
                                            void *const dstlist[],
                                            size_t dstlen, size_t srccount,
                                            void *const srclist[],
                                            size_t srclen);
GASNETT_API_ size_t gasnett_format_strides_bufsz(size_t count);
GASNETT_API_ void gasnett_format_strides(char *buf, size_t count,
                                         const size_t *list);
GASNETT_API_ size_t gasnett_format_putsgets_bufsz(size_t stridelevels);
GASNETT_API_ size_t gasnett_format_putsgets(char *buf, void *pstats,
                                            gasnet_node_t node,
                                            void *dstaddr,
                                            const size_t dststrides[],
                                            void *srcaddr,
                                            const size_t srcstrides[],
                                            const size_t count[],
                                            size_t stridelevels);
/** The handlers gasnett_run_diagnostics() needs: none (*htable NULL,
 *  *htable_cnt 0). */
GASNETT_API_ void gasnett_diagnostic_gethandlers(gasnet_handlerentry_t **htable,
                                                int *htable_cnt);
#endif

/* Small helpers GASNet's tools header also offers. */
#if defined(_INCLUDED_GASNET_H)
#define GASNETT_THREAD_MODEL GASNETC_THREADMODEL_STR
#elif defined(GASNETT_THREAD_SINGLE)
#define GASNETT_THREAD_MODEL "SINGLE"
#else
#define GASNETT_THREAD_MODEL "SAFE"
#endif
#define GASNETT_CONFIGURE_MISMATCH 0
#define GASNETT_DEBUG_CONFIG nodebug
#define GASNETT_PTR_CONFIG _CONCAT(SIZEOF_VOID_P, byte)
#define GASNETT_PLATFORM_COMPILER_IDSTR PLATFORM_COMPILER_IDSTR
#define GASNETT_PLATFORM_COMPILER_FAMILYID PLATFORM_COMPILER_FAMILYID
#define GASNETT_PLATFORM_COMPILER_ID PLATFORM_COMPILER_ID
#define GASNETT_PLATFORM_COMPILER_VERSION PLATFORM_COMPILER_VERSION
#if defined(__GNUC__)
#define GASNETT_UNUSED __attribute__((unused))
#define GASNETT_ALWAYS_INLINE(fnname) __attribute__((always_inline))
#define gasnett_constant_p(expr) __builtin_constant_p(expr)
#else
#define GASNETT_UNUSED
#define GASNETT_ALWAYS_INLINE(fnname)
#define gasnett_constant_p(expr) 0
#endif
#define GASNETT_PUREP(fnpointer)
#define GASNETT_CONSTP(fnpointer)
#define GASNETT_MALLOCP(fnpointer)
#define gasnett_current_loc "unknown location"
/** Flush and close stdout and stderr. */
#define gasnett_close_streams() ((void)fflush(NULL))
/** No debugger freeze here (GASNET_FREEZE is not read). */
#define gasnett_freezeForDebuggerNow(val, name) ((void)(val), (void)(name))
#define gasnett_freezeForDebuggerErr() ((void)0)

#define GASNETT_FAST_ALIGNED_MEMCPY(dst, src, nbytes)                       \
    ((void)memcpy((dst), (src), (nbytes)))
#define GASNETT_FAST_UNALIGNED_MEMCPY(dst, src, nbytes)                     \
    ((void)memcpy((dst), (src), (nbytes)))
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* GASNET_TOOLS_H */

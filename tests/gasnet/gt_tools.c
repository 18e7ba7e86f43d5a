/* gt_tools.c - gasnet_tools.h: timers, the 32/64-bit (strong) atomics
 * single-threaded and under four threads, memory barriers, mutexes and
 * condition variables, thread keys, the getenv helpers, number parsing and
 * formatting, host queries, and the client-defined backtrace hook. */
#include <gasnet_tools.h>

#include "gt.h"

#if GASNETT_PAGESIZE != GASNET_PAGESIZE
#error "GASNETT_PAGESIZE"
#endif

/* A client backtrace hook (replaces the library's weak definition). */
static int hook_calls;
static int my_backtrace(int fd)
{
    hook_calls++;
    return 0;
}
gasnett_backtrace_type_t gasnett_backtrace_user = {"GT", my_backtrace, 0};

#define THREADS 4
#define PER_THREAD 100000

static gasnett_atomic_t a32 = gasnett_atomic_init(0);
static gasnett_strongatomic64_t a64 = gasnett_strongatomic64_init(0);
static gasnett_atomic32_t cas_ctr = gasnett_atomic32_init(0);
static gasnett_mutex_t mtx = GASNETT_MUTEX_INITIALIZER;
static gasnett_cond_t cond = GASNETT_COND_INITIALIZER;
static int arrived;
static int64_t plain;
GASNETT_THREADKEY_DEFINE(key);

static void *worker(void *arg)
{
    intptr_t id = (intptr_t)arg;
    GT_ASSERT(gasnett_threadkey_get(key) == NULL, "fresh key not NULL");
    gasnett_threadkey_set(key, (void *)(id + 1));
    for (int i = 0; i < PER_THREAD; i++) {
        gasnett_atomic_increment(&a32, 0);
        gasnett_strongatomic64_add(&a64, 3, GASNETT_ATOMIC_REL);
        uint32_t old;
        do {
            old = gasnett_atomic32_read(&cas_ctr, 0);
        } while (!gasnett_atomic32_compare_and_swap(&cas_ctr, old, old + 1,
                                                    GASNETT_ATOMIC_ACQ));
        if (i % 1000 == 0) {
            gasnett_mutex_lock(&mtx);
            plain += 1;
            gasnett_mutex_unlock(&mtx);
        }
    }
    GT_ASSERT(gasnett_threadkey_get(key) == (void *)(id + 1),
              "thread key changed");
    gasnett_mutex_lock(&mtx);
    arrived++;
    gasnett_cond_broadcast(&cond);
    gasnett_mutex_unlock(&mtx);
    return NULL;
}

int main(int argc, char **argv)
{
    setenv("GT_YES", "Yes", 1);
    setenv("GT_NO", "off", 1);
    setenv("GT_INT", "42", 1);
    setenv("GT_MEM", "2M", 1);
    setenv("GT_DBL", "2.5", 1);
    gt_start(&argc, &argv, "gt_tools", NULL, 0, 0);

    /* Timers. */
    gasnett_tick_t t0 = gasnett_ticks_now();
    double w0 = gt_now();
    while (gt_now() - w0 < 0.002)
        gasnett_spinloop_hint();
    gasnett_tick_t t1 = gasnett_ticks_now();
    GT_ASSERT(t1 > t0 && gasnett_ticks_to_us(t1 - t0) >= 1000 &&
              gasnett_ticks_to_ns(t1 - t0) >= 1000000,
              "2 ms measured as %" PRIu64 " ns", gasnett_ticks_to_ns(t1 - t0));
    GT_ASSERT(gasnett_tick_granularityus() > 0 &&
              gasnett_tick_overheadus() >= 0, "timer calibration");
    GT_ASSERT(GASNETT_TICK_MIN < GASNETT_TICK_MAX, "tick range");
    GT_ASSERT(gasnett_gettimeofday_us() > 1000000000ull * 1000000ull / 1000,
              "gettimeofday_us");

    /* Atomics, single-threaded semantics. */
    gasnett_atomic64_t x = gasnett_atomic64_init(10);
    GT_ASSERT(gasnett_atomic64_add(&x, 5, 0) == 15, "add returns new");
    GT_ASSERT(gasnett_atomic64_subtract(&x, 3, 0) == 12, "subtract");
    GT_ASSERT(gasnett_atomic64_fetchadd(&x, 1, 0) == 12, "fetchadd old");
    GT_ASSERT(gasnett_atomic64_swap(&x, 100, 0) == 13, "swap old");
    GT_ASSERT(!gasnett_atomic64_compare_and_swap(&x, 99, 1, 0) &&
              gasnett_atomic64_compare_and_swap(&x, 100, 1, 0) &&
              gasnett_atomic64_read(&x, 0) == 1, "compare_and_swap");
    GT_ASSERT(gasnett_atomic64_decrement_and_test(&x, 0) &&
              !gasnett_atomic64_decrement_and_test(&x, 0), "dec_and_test");
    gasnett_atomic64_set(&x, UINT64_MAX, 0);
    gasnett_atomic64_increment(&x, 0);
    GT_ASSERT(gasnett_atomic64_read(&x, 0) == 0, "64-bit wrap");
    gasnett_strongatomic32_t y = gasnett_strongatomic32_init(1);
    gasnett_strongatomic32_decrement(&y, 0);
    GT_ASSERT(gasnett_strongatomic32_read(&y, 0) == 0, "strong32");
    GT_ASSERT(gasnett_atomic_signed(GASNETT_ATOMIC_MAX) == -1, "signed");
    gasnett_local_wmb();
    gasnett_local_rmb();
    gasnett_local_mb();
    gasnett_compiler_fence();

    /* Atomics, mutexes, condition variables and keys under threads. */
    pthread_t th[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        GT_ASSERT(pthread_create(&th[i], NULL, worker, (void *)i) == 0,
                  "pthread_create");
    gasnett_mutex_lock(&mtx);
    while (arrived < THREADS)
        gasnett_cond_wait(&cond, &mtx);
    gasnett_mutex_unlock(&mtx);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    GT_ASSERT(gasnett_atomic_read(&a32, 0) == THREADS * PER_THREAD &&
              gasnett_strongatomic64_read(&a64, 0) ==
                  3ull * THREADS * PER_THREAD &&
              gasnett_atomic32_read(&cas_ctr, 0) == THREADS * PER_THREAD &&
              plain == THREADS * (PER_THREAD / 1000),
              "threaded counts %u %" PRIu64 " %u %" PRId64,
              gasnett_atomic_read(&a32, 0),
              gasnett_strongatomic64_read(&a64, 0),
              gasnett_atomic32_read(&cas_ctr, 0), plain);
    GT_ASSERT(gasnett_mutex_trylock(&mtx) == 0, "trylock free mutex");
    GT_ASSERT(gasnett_mutex_trylock(&mtx) == EBUSY, "trylock held mutex");
    gasnett_mutex_unlock(&mtx);
    GT_ASSERT(gasnett_threadkey_get(key) == NULL, "main thread's key");

    /* Environment. */
    GT_ASSERT(gasnett_getenv_yesno_withdefault("GT_YES", 0) == 1 &&
              gasnett_getenv_yesno_withdefault("GT_NO", 1) == 0 &&
              gasnett_getenv_yesno_withdefault("GT_UNSET_X", 1) == 1,
              "yesno");
    GT_ASSERT(gasnett_getenv_int_withdefault("GT_INT", 7, 0) == 42 &&
              gasnett_getenv_int_withdefault("GT_UNSET_X", 7, 0) == 7 &&
              gasnett_getenv_int_withdefault("GT_MEM", 0, 1) == 2 << 20,
              "int_withdefault");
    GT_ASSERT(gasnett_getenv_dbl_withdefault("GT_DBL", 0) == 2.5, "dbl");
    GT_ASSERT(strcmp(gasnett_getenv_withdefault("GT_UNSET_X", "d"), "d") == 0,
              "withdefault");
    GT_ASSERT(gasnett_parse_int("0x10", 0) == 16 &&
              gasnett_parse_int("3", 1 << 20) == 3 << 20 &&
              gasnett_parse_int("1.5K", 1) == 1536 &&
              gasnett_parse_int("4GB", 1) == 4ll << 30, "parse_int");
    char buf[64];
    GT_ASSERT(strcmp(gasnett_format_number(4096, buf, sizeof buf, 1),
                     "4 KB") == 0, "format 4096: %s", buf);
    GT_ASSERT(strcmp(gasnett_format_number(1536, buf, sizeof buf, 1),
                     "1.50 KB") == 0, "format 1536: %s", buf);
    GT_ASSERT(strcmp(gasnett_format_number(-12, buf, sizeof buf, 0), "-12") ==
              0, "format -12: %s", buf);

    /* Host, system, misc. */
    GT_ASSERT(gasnett_gethostname()[0] != '\0', "hostname");
    GT_ASSERT(gasnett_cpu_count() >= 1 && gasnett_getPhysMemSz(0) > 0,
              "system queries");
    GT_ASSERT(gasnett_isLittleEndian() == (*(const uint16_t *)"\1\0" == 1),
              "endianness");
    GT_ASSERT(gasnett_checksum("abc", 3) == gasnett_checksum("abc", 3) &&
              gasnett_checksum("abc", 3) != gasnett_checksum("abd", 3),
              "checksum");
    GT_ASSERT(gasnett_sched_yield() == 0, "sched_yield");
    GT_ASSERT(strlen(gasnett_release_version_str()) >= 5 &&
              gasnett_release_version() >= 10000, "release version");
    GT_ASSERT(gasnett_print_backtrace(2) == 0 && hook_calls == 1,
              "user backtrace hook called %d times", hook_calls);
    gasnett_flush_streams();
    gt_finish("gt_tools");
    return 0;
}

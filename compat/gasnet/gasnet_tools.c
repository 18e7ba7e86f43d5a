/* gasnet_tools.c - the out-of-line GASNet tools (gasnett_*): timer
 * calibration, thread-key creation, environment and number parsing,
 * system queries, fatal errors and backtraces. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <execinfo.h>
#endif

#include "gasnet_internal.h"
#include "gasnet_tools.h"

/* ---- versions ------------------------------------------------------------ */

#define RELEASE_STR_(a, b, c) #a "." #b "." #c
#define RELEASE_STR(a, b, c) RELEASE_STR_(a, b, c)

const char *gasnett_release_version_str(void)
{
    return RELEASE_STR(GASNET_RELEASE_VERSION_MAJOR,
                       GASNET_RELEASE_VERSION_MINOR,
                       GASNET_RELEASE_VERSION_PATCH);
}

uint64_t gasnett_release_version(void)
{
    return (uint64_t)GASNET_RELEASE_VERSION_MAJOR * 10000u +
           (uint64_t)GASNET_RELEASE_VERSION_MINOR * 100u +
           (uint64_t)GASNET_RELEASE_VERSION_PATCH;
}

const char *gasnett_performance_warning_str(void)
{
    return "";
}

/* ---- timers -------------------------------------------------------------- */

double gasnett_tick_granularityus(void)
{
    static double gran = -1.0;
    if (gran < 0) {
        /* The smallest non-zero step seen over a few readings. */
        uint64_t best = UINT64_MAX;
        for (int i = 0; i < 1000; i++) {
            gasnett_tick_t a = gasnett_ticks_now(), b;
            do {
                b = gasnett_ticks_now();
            } while (b == a);
            if (b - a < best)
                best = b - a;
        }
        gran = (double)best / 1000.0;
    }
    return gran;
}

double gasnett_tick_overheadus(void)
{
    static double over = -1.0;
    if (over < 0) {
        enum { N = 10000 };
        gasnett_tick_t t0 = gasnett_ticks_now(), t = t0;
        for (int i = 0; i < N; i++)
            t = gasnett_ticks_now();
        over = (double)(t - t0) / N / 1000.0;
    }
    return over;
}

uint64_t gasnett_gettimeofday_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

int gasnett_nsleep(uint64_t ns_delay)
{
    struct timespec ts = {(time_t)(ns_delay / 1000000000u),
                          (long)(ns_delay % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    return 0;
}

/* ---- thread keys --------------------------------------------------------- */

static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

void gasnett_threadkey_init_(gasnett_threadkey_t *pkey)
{
    pthread_mutex_lock(&key_lock);
    if (!pkey->inited_) {
        int rc = pthread_key_create(&pkey->key_, NULL);
        if (rc != 0) {
            pthread_mutex_unlock(&key_lock);
            gasnett_fatalerror("gasnett_threadkey_init: pthread_key_create: "
                               "%s", strerror(rc));
        }
        __atomic_store_n(&pkey->inited_, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&key_lock);
}

/* ---- environment --------------------------------------------------------- */

char *gasnett_getenv(const char *key)
{
    return key ? getenv(key) : NULL;
}

void gasnett_setenv(const char *key, const char *val)
{
    if (key && val)
        setenv(key, val, 1);
}

void gasnett_unsetenv(const char *key)
{
    if (key)
        unsetenv(key);
}

int gasnett_verboseenv(void)
{
    static int v = -1;
    if (v < 0) {
        const char *s = getenv("GASNET_VERBOSEENV");
        v = s && *s && strchr("yY1tT", *s) ? 1 : 0;
    }
    return v && (!tlm_gasnet.inited || tlm_gasnet.mynode == 0);
}

static void show(const char *key, const char *val, int is_default)
{
    if (gasnett_verboseenv())
        fprintf(stderr, "ENV parameter: %s = %s%s\n", key, val,
                is_default ? "   (default)" : "");
}

const char *gasnett_getenv_withdefault(const char *key,
                                       const char *defaultval)
{
    const char *v = key ? getenv(key) : NULL;
    int dflt = !v || !*v;
    if (dflt)
        v = defaultval;
    if (key)
        show(key, v ? v : "(null)", dflt);
    return v;
}

int gasnett_getenv_yesno_withdefault(const char *key, int defaultval)
{
    static const char *const yes[] = {"y", "yes", "1", "true", "on"};
    static const char *const no[] = {"n", "no", "0", "false", "off"};
    const char *v = key ? getenv(key) : NULL;
    if (!v || !*v) {
        if (key)
            show(key, defaultval ? "YES" : "NO", 1);
        return defaultval;
    }
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            show(key, "YES", 0);
            return 1;
        }
        if (strcasecmp(v, no[i]) == 0) {
            show(key, "NO", 0);
            return 0;
        }
    }
    gasnett_fatalerror("environment variable %s='%s' is not a yes/no value",
                       key, v);
}

/* A number with an optional K/M/G/T[B] suffix; -1 when malformed. */
static int parse_size(const char *str, uint64_t mult, int64_t *out)
{
    if (!str)
        return -1;
    while (isspace((unsigned char)*str))
        str++;
    char *end;
    errno = 0;
    int hex = str[0] == '0' && (str[1] == 'x' || str[1] == 'X');
    double d = 0;
    long long ll = 0;
    int is_float = 0;
    if (hex) {
        ll = strtoll(str, &end, 16);
    } else {
        ll = strtoll(str, &end, 10);
        if (*end == '.' || *end == 'e' || *end == 'E') {
            d = strtod(str, &end);
            is_float = 1;
        }
    }
    if (errno || end == str)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    uint64_t scale = 1;
    int suffix = 0;
    if ((*end == 'b' || *end == 'B') && !end[1] && mult) {
        suffix = 1; /* "0 B": plain bytes, as gasnett_format_number writes */
    } else if (*end) {
        const char *units = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u || !mult)
            return -1;
        scale = (uint64_t)1 << (10 * (u - units + 1));
        suffix = 1;
        end++;
        if (*end == 'b' || *end == 'B')
            end++;
        if (*end)
            return -1;
    }
    if (!suffix && mult)
        scale = mult;
    if (is_float) {
        if (!mult && d != (double)(long long)d)
            return -1;
        d *= (double)scale;
        if (d > 9.2e18 || d < -9.2e18)
            return -1;
        *out = (int64_t)d;
        return 0;
    }
    if (scale > 1 && (ll > INT64_MAX / (long long)scale ||
                      ll < INT64_MIN / (long long)scale))
        return -1;
    *out = (int64_t)ll * (int64_t)scale;
    return 0;
}

int64_t gasnett_parse_int(const char *str, uint64_t mem_size_multiplier)
{
    int64_t v;
    if (parse_size(str, mem_size_multiplier, &v) != 0)
        gasnett_fatalerror("'%s' is not %s", str ? str : "(null)",
                           mem_size_multiplier
                               ? "a memory size (a number with an optional "
                                 "K/M/G/T suffix)"
                               : "an integer");
    return v;
}

int64_t gasnett_getenv_int_withdefault(const char *key, int64_t defaultval,
                                       uint64_t mem_size_multiplier)
{
    const char *v = key ? getenv(key) : NULL;
    char buf[64];
    if (!v || !*v) {
        if (key) {
            snprintf(buf, sizeof buf, "%lld", (long long)defaultval);
            show(key, buf, 1);
        }
        return defaultval;
    }
    int64_t r;
    if (parse_size(v, mem_size_multiplier, &r) != 0)
        gasnett_fatalerror("environment variable %s='%s' is not %s", key, v,
                           mem_size_multiplier ? "a memory size"
                                               : "an integer");
    snprintf(buf, sizeof buf, "%lld", (long long)r);
    show(key, buf, 0);
    return r;
}

double gasnett_getenv_dbl_withdefault(const char *key, double defaultval)
{
    const char *v = key ? getenv(key) : NULL;
    char buf[64];
    if (!v || !*v) {
        if (key) {
            snprintf(buf, sizeof buf, "%g", defaultval);
            show(key, buf, 1);
        }
        return defaultval;
    }
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || end == v || *end)
        gasnett_fatalerror("environment variable %s='%s' is not a number",
                           key, v);
    snprintf(buf, sizeof buf, "%g", d);
    show(key, buf, 0);
    return d;
}

char *gasnett_format_number(int64_t val, char *buf, size_t bufsz,
                            int is_mem_size)
{
    if (!buf || bufsz == 0)
        return buf;
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    if (is_mem_size) {
        uint64_t mag = val < 0 ? (uint64_t)0 - (uint64_t)val : (uint64_t)val;
        int u = 0;
        while (u < 4 && mag >= ((uint64_t)1 << (10 * (u + 1))))
            u++;
        uint64_t unit = (uint64_t)1 << (10 * u);
        if (u > 0 && (mag * 100) % unit == 0) {
            double x = (double)mag / (double)unit;
            if (mag % unit == 0)
                snprintf(buf, bufsz, "%s%llu %s", val < 0 ? "-" : "",
                         (unsigned long long)(mag / unit), units[u]);
            else
                snprintf(buf, bufsz, "%s%.2f %s", val < 0 ? "-" : "", x,
                         units[u]);
            return buf;
        }
        snprintf(buf, bufsz, "%lld B", (long long)val);
        return buf;
    }
    snprintf(buf, bufsz, "%lld", (long long)val);
    return buf;
}

/* ---- system queries ------------------------------------------------------ */

const char *gasnett_gethostname(void)
{
    static char name[256];
    if (!name[0] && gethostname(name, sizeof name - 1) != 0)
        snprintf(name, sizeof name, "unknown");
    return name;
}

int gasnett_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

uint64_t gasnett_getPhysMemSz(int failureIsFatal)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0)
        return (uint64_t)pages * (uint64_t)psz;
    if (failureIsFatal)
        gasnett_fatalerror("cannot determine the physical memory size");
    return 0;
}

void gasnett_set_affinity(int rank)
{
#if defined(__linux__) && defined(CPU_SET)
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((size_t)rank % (size_t)gasnett_cpu_count(), &set);
    sched_setaffinity(0, sizeof set, &set);
#else
    (void)rank;
#endif
}

void gasnett_flush_streams(void)
{
    fflush(stdout);
    fflush(stderr);
}

int gasnett_isLittleEndian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

uint64_t gasnett_checksum(const void *p, int numbytes)
{
    const unsigned char *c = p;
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < numbytes; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

void gasnett_fatalerror(const char *msg, ...)
{
    char text[768];
    va_list ap;
    va_start(ap, msg);
    vsnprintf(text, sizeof text, msg, ap);
    va_end(ap);
    fflush(stdout);
    if (tlm_gasnet.inited)
        fprintf(stderr, "*** FATAL ERROR (node %d): %s\n", tlm_gasnet.mynode,
                text);
    else
        fprintf(stderr, "*** FATAL ERROR: %s\n", text);
    fflush(NULL);
    _exit(1);
}

void gasnett_killmyprocess(int exitcode)
{
    fflush(NULL);
    _exit(exitcode);
}

/* ---- backtraces ---------------------------------------------------------- */

/* Weak: a client's definition replaces it. */
__attribute__((weak)) gasnett_backtrace_type_t gasnett_backtrace_user;

int gasnett_print_backtrace(int fd)
{
    if (gasnett_backtrace_user.fnp && gasnett_backtrace_user.fnp(fd) == 0)
        return 0;
#if defined(__GLIBC__)
    void *frames[64];
    int n = backtrace(frames, 64);
    if (n > 0) {
        backtrace_symbols_fd(frames, n, fd);
        return 0;
    }
#endif
    return 1;
}

int gasnett_print_backtrace_ifenabled(int fd)
{
    const char *v = getenv("GASNET_BACKTRACE");
    if (v && *v && strchr("yY1tT", *v))
        return gasnett_print_backtrace(fd);
    return 1;
}

void gasnett_backtrace_init(const char *exename)
{
    (void)exename;
}

/* ------------------------------------------------------------------------ */
/* Zero-byte counting, limits, signals, aligned memory */

size_t gasnett_count0s(const void *src, size_t len)
{
    const unsigned char *p = src;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += p[i] == 0;
    return n;
}

size_t gasnett_count0s_copy(void *dst, const void *src, size_t len)
{
    if (len)
        memcpy(dst, src, len);
    return gasnett_count0s(dst, len);
}

int gasnett_maximize_rlimits(void)
{
    static const int res[] = {RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK,
                              RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_RSS,
                              RLIMIT_MEMLOCK, RLIMIT_CORE};
    int changed = 0;
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++) {
        struct rlimit r;
        if (getrlimit(res[i], &r) != 0 || r.rlim_cur == r.rlim_max)
            continue;
        r.rlim_cur = r.rlim_max;
        if (setrlimit(res[i], &r) == 0)
            changed = 1;
    }
    return changed;
}

gasnett_sighandlerfn_t gasnett_reghandler(int sigtocatch,
                                          gasnett_sighandlerfn_t fp)
{
    gasnett_sighandlerfn_t old = signal(sigtocatch, fp);
    if (old == SIG_ERR)
        gasnett_fatalerror("gasnett_reghandler: cannot register a handler "
                           "for signal %d", sigtocatch);
    return old;
}

void *gasnett_malloc_aligned(size_t alignment, size_t size)
{
    void *p = NULL;
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    if (posix_memalign(&p, alignment, size ? size : 1) != 0)
        gasnett_fatalerror("gasnett_malloc_aligned(%zu, %zu): out of memory",
                           alignment, size);
    return p;
}

void gasnett_free_aligned(void *ptr)
{
    free(ptr);
}

/* ------------------------------------------------------------------------ */
/* Self-test */

void gasnett_diagnostic_gethandlers(gasnet_handlerentry_t **htable,
                                    int *htable_cnt)
{
    if (htable)
        *htable = NULL;
    if (htable_cnt)
        *htable_cnt = 0;
}

/* The word w of a diagnostics round: node, round and index, so a word
 * that landed in the wrong place or round is told apart. */
static uint64_t diag_word(unsigned node, int it, size_t w)
{
    return (uint64_t)node * (UINT64_C(1) << 48) ^
           (uint64_t)(unsigned)it * (UINT64_C(1) << 24) ^ (uint64_t)w;
}

int gasnett_run_diagnostics(int iters, int threadcnt,
                            const char *testsections,
                            gasnet_seginfo_t const *seginfo)
{
    (void)threadcnt;
    (void)testsections;
    int errs = 0;
    gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes();
    gasnet_node_t next = (me + 1) % n, prev = (me + n - 1) % n;
    size_t len = 65536;
    if (!seginfo || seginfo[next].size < len || seginfo[me].size < len)
        len = seginfo ? (size_t)seginfo[me].size : 0;
    for (gasnet_node_t i = 0; seginfo && i < n; i++)
        if (seginfo[i].size < len)
            len = (size_t)seginfo[i].size;
    len &= ~(size_t)7;
    uint64_t *buf = malloc(len ? len : 8);
    if (!buf)
        gasnett_fatalerror("gasnett_run_diagnostics: out of memory");
    size_t nw = len / 8;
    gasnett_atomic_t a = gasnett_atomic_init(0);
    for (int it = 0; it < iters && len; it++) {
        for (size_t w = 0; w < nw; w++)
            buf[w] = diag_word(me, it, w);
        gasnet_put(next, seginfo[next].addr, buf, len);
        gasnet_barrier_notify(it, 0);
        errs += gasnet_barrier_wait(it, 0) != GASNET_OK;
        const uint64_t *mine = seginfo[me].addr;
        for (size_t w = 0; w < nw; w++)
            if (mine[w] != diag_word(prev, it, w)) {
                errs++;
                break;
            }
        gasnet_get(buf, next, seginfo[next].addr, len);
        if (buf[nw - 1] != (((uint64_t)me << 48) ^ ((uint64_t)it << 24) ^
                            (nw - 1)))
            errs++;
        gasnett_atomic_increment(&a, 0);
        gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
        errs += gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS) !=
                GASNET_OK;
    }
    if (gasnett_atomic_read(&a, 0) != (gasnett_atomic_val_t)(len ? iters : 0))
        errs++;
    free(buf);
    if (errs)
        fprintf(stderr, "gasnett_run_diagnostics: %d errors on node %u\n",
                errs, (unsigned)me);
    return errs;
}

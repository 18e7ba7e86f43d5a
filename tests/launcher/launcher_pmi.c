/* launcher_pmi.c - tests of the launcher adapters and their choice
 * (boot_select.c, boot_text.c, boot_pmi1.c, PMI-2, PMIx)
 * through boot.h.  Modes:
 *   kvs N          started by another launcher (TELEMEM_BOOTSTRAP chooses,
 *                  as in the library): N ranks, the launcher's ranks, and
 *                  put / fence / get of binary values of every size
 *   abort R CODE   rank R ends the job through its launcher
 *   exit R CODE    rank R exits; the launcher must end the others' fence
 *   text           the PMI text layer over an in-memory store
 *   select         the choice of adapter and the refusals, fake environments
 *   pmi1-fake      the PMI-1 client against a fake server: a whole session,
 *                  then a server that misbehaves in each way we know */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "telemem.h"
#include "boot/boot.h"
#include "boot/boot_select.h"
#include "boot/boot_text.h"
#include "tlm_build_config.h"
#include "util/log.h"

static int g_rank = -1;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "launcher_pmi r%d: FAIL: ", g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void check(int rc, int want, const char *what)
{
    if (rc != want)
        fail("%s returned %s (%d), expected %s", what,
             telemem_status_name(rc), rc, telemem_status_name(want));
}

static void pattern(unsigned char *buf, size_t n, unsigned seed)
{
    unsigned x = 2166136261u ^ seed * 16777619u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
}

/* ---- kvs: a real launcher ---------------------------------------------- */

static const char *real_env(const char *name)
{
    return getenv(name);
}

static tlm_boot_t *join_launched(double timeout)
{
    tlm_boot_params_t p = {.rank = -1, .size = -1, .kvs_addr = "",
                           .jobid = "", .timeout = timeout,
                           .mode = getenv("TELEMEM_BOOTSTRAP"),
                           .env = real_env};
    tlm_boot_t *b;
    check(tlm_boot_open(&p, &b), TELEMEM_OK, "open");
    g_rank = tlm_boot_rank(b);
    tlm_util_log_set_rank(g_rank);
    return b;
}

/* Sizes around the chunk limits of PMI-2 and PMI-1 stores (762 and 1524
 * bytes for 1023-character values), and the largest value. */
static const size_t sizes[] = {0,    1,    2,    3,    4,    5,    100,
                               761,  762,  763,  764,  765,  1000, 1523,
                               1526, 1527, 1528, 3000, 4096, 65536};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void long_key(char *key, size_t cap, int r)
{
    char tail[16];
    int n = snprintf(tail, sizeof(tail), ".%d", r);
    memset(key, 'L', 200);
    memcpy(key + 200, tail, (size_t)n + 1);
    (void)cap;
}

/* The first of these the launcher set is this rank (SLURM_PROCID last:
 * under mpiexec in a Slurm allocation it numbers Hydra's proxies). */
static void check_rank(const tlm_boot_t *b, int want)
{
    const char *vars[] = {"PMI_RANK", "PMIX_RANK", "PMI_ID", "SLURM_PROCID"};
    int rank = tlm_boot_rank(b), size = tlm_boot_size(b);
    if (size != want)
        fail("size %d, the launcher started %d", size, want);
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0] && atoi(v) != rank)
            fail("rank %d, but %s=%s", rank, vars[i], v);
        if (v && v[0])
            return;
    }
}

static void put_all(tlm_boot_t *b, int rank, unsigned char *buf)
{
    char key[256];
    for (size_t i = 0; i < NSIZES; i++) {
        snprintf(key, sizeof(key), "s%zu.%d", i, rank);
        pattern(buf, sizes[i], (unsigned)(rank * 100 + (int)i));
        check(tlm_boot_put(b, key, buf, sizes[i]), TELEMEM_OK, key);
    }
    long_key(key, sizeof(key), rank);
    pattern(buf, 3000, (unsigned)rank + 7777u);
    check(tlm_boot_put(b, key, buf, 3000), TELEMEM_OK, "long key");
    const char *jobid = tlm_boot_jobid(b);
    snprintf(key, sizeof(key), "j.%d", rank);
    check(tlm_boot_put(b, key, jobid, strlen(jobid) + 1), TELEMEM_OK,
          "put jobid");
}

static void get_all(tlm_boot_t *b, int r, unsigned char *want,
                    unsigned char *got)
{
    char key[256];
    size_t len;
    for (size_t i = 0; i < NSIZES; i++) {
        snprintf(key, sizeof(key), "s%zu.%d", i, r);
        pattern(want, sizes[i], (unsigned)(r * 100 + (int)i));
        len = 12345;
        check(tlm_boot_get(b, key, got, 65536, &len), TELEMEM_OK, key);
        if (len != sizes[i] || memcmp(got, want, len) != 0)
            fail("%s: %zu bytes back, %zu put, or they differ", key, len,
                 sizes[i]);
    }
    long_key(key, sizeof(key), r);
    pattern(want, 3000, (unsigned)r + 7777u);
    check(tlm_boot_get(b, key, got, 65536, &len), TELEMEM_OK,
          "get long key");
    if (len != 3000 || memcmp(got, want, len) != 0)
        fail("long key of rank %d: value differs", r);
    snprintf(key, sizeof(key), "j.%d", r);
    check(tlm_boot_get(b, key, got, 65536, &len), TELEMEM_OK, key);
    if (strcmp((char *)got, tlm_boot_jobid(b)) != 0)
        fail("rank %d has job id %s, this rank %s", r, (char *)got,
             tlm_boot_jobid(b));
}

static int mode_kvs(int want)
{
    static unsigned char buf[65536], got[65536];
    tlm_boot_t *b = join_launched(60);
    int rank = tlm_boot_rank(b), size = tlm_boot_size(b);
    check_rank(b, want);
    put_all(b, rank, buf);
    check(tlm_boot_fence(b), TELEMEM_OK, "fence 1");
    for (int r = 0; r < size; r++)
        get_all(b, r, buf, got);
    size_t len = 0;
    check(tlm_boot_get(b, "s19.0", got, 10, &len),
          TELEMEM_ERR_INVALID_ARG, "get into a small buffer");
    if (len != 65536)
        fail("small buffer: length %zu, expected 65536", len);
    check(tlm_boot_get(b, "nokey.0", got, sizeof(got), &len),
          TELEMEM_ERR_NOT_FOUND, "get missing");
    /* a second round: values put after fence 1 are seen after fence 2 */
    char key[64];
    snprintf(key, sizeof(key), "r2.%d", rank);
    check(tlm_boot_put(b, key, &rank, sizeof(rank)), TELEMEM_OK, key);
    check(tlm_boot_fence(b), TELEMEM_OK, "fence 2");
    for (int r = 0; r < size; r++) {
        int v = -1;
        snprintf(key, sizeof(key), "r2.%d", r);
        check(tlm_boot_get(b, key, &v, sizeof(v), &len), TELEMEM_OK,
              key);
        if (len != sizeof(v) || v != r)
            fail("%s: got %d", key, v);
    }
    check(tlm_boot_fence(b), TELEMEM_OK, "last fence");
    tlm_boot_close(b);
    if (tlm_util_log_count(TLM_LOG_ERROR) || tlm_util_log_count(TLM_LOG_WARN))
        fail("unexpected log lines");
    printf("launcher_pmi: rank %d of %d: store ok\n", rank, size);
    return 0;
}

/* exit R CODE: rank R exits with CODE, the others wait in a fence (which
 * the launcher must end, with the job). */
static int mode_exit(int who, int code)
{
    tlm_boot_t *b = join_launched(0);
    if (g_rank == who)
        exit(code);
    int rc = tlm_boot_fence(b);
    tlm_boot_close(b);
    return rc == TELEMEM_OK ? 0 : 1;
}

static int mode_abort(int who, int code)
{
    tlm_boot_t *b = join_launched(0);
    if (g_rank == who) {
        tlm_boot_abort(b, code, "launcher_pmi aborts on purpose");
        for (;;)
            pause(); /* the launcher ends the job */
    }
    check(tlm_boot_fence(b), TELEMEM_OK, "fence"); /* never returns */
    tlm_boot_close(b);
    return 0;
}

/* ---- text: the PMI text layer over memory ------------------------------ */

typedef struct mem_store {
    char (*key)[TLM_BOOT_TEXT_KEY_MAX + 1];
    char **val;
    size_t n, cap;
    size_t key_max, val_max;
} mem_store_t;

static long mem_find(const mem_store_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->key[i], key) == 0)
            return (long)i;
    return -1;
}

static int mem_put(void *ctx, const char *key, const char *val)
{
    mem_store_t *m = ctx;
    if (strlen(key) > m->key_max || strlen(val) > m->val_max ||
        strpbrk(key, " =;\n") || strpbrk(val, " =;\n"))
        fail("text put \"%s\" = \"%.40s\": too long or unsafe characters",
             key, val);
    long i = mem_find(m, key);
    if (i < 0) {
        if (m->n == m->cap) {
            m->cap = m->cap ? 2 * m->cap : 64;
            m->key = realloc(m->key, m->cap * sizeof(*m->key));
            m->val = realloc(m->val, m->cap * sizeof(*m->val));
            if (!m->key || !m->val)
                fail("out of memory");
        }
        i = (long)m->n++;
        snprintf(m->key[i], sizeof(m->key[i]), "%s", key);
        m->val[i] = NULL;
    }
    free(m->val[i]);
    m->val[i] = strdup(val);
    return TELEMEM_OK;
}

static int mem_get(void *ctx, int owner, const char *key, char *val,
                   size_t cap)
{
    mem_store_t *m = ctx;
    long i = mem_find(m, key);
    if (i < 0)
        return TELEMEM_ERR_NOT_FOUND;
    if (strlen(m->val[i]) >= cap)
        fail("text get %s: %zu characters for a %zu-byte buffer", key,
             strlen(m->val[i]), cap);
    strcpy(val, m->val[i]);
    return TELEMEM_OK;
}

static void mem_clear(mem_store_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->val[i]);
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof(*m));
}

static void text_round_trip(const tlm_boot_text_t *s, const char *key,
                            size_t len, unsigned seed)
{
    static unsigned char v[65536], got[65536];
    size_t glen = 0;
    pattern(v, len, seed);
    check(tlm_boot_text_put(s, key, v, len), TELEMEM_OK, "text put");
    check(tlm_boot_text_get(s, 3, key, got, sizeof(got), &glen), TELEMEM_OK,
          "text get");
    if (glen != len || memcmp(v, got, len) != 0)
        fail("text %s: %zu bytes back of %zu, or they differ", key, glen,
             len);
    if (len > 0) {
        check(tlm_boot_text_get(s, 3, key, got, len - 1, &glen),
              TELEMEM_ERR_INVALID_ARG, "text get, small buffer");
        if (glen != len)
            fail("text %s: small buffer gave length %zu", key, glen);
    }
}

static void text_limits(size_t key_max, size_t val_max, size_t top)
{
    mem_store_t m = {.key_max = key_max, .val_max = val_max};
    tlm_boot_text_t s = {.ctx = &m, .put_str = mem_put, .get_str = mem_get,
                         .key_max = key_max, .val_max = val_max};
    char key[300];
    for (size_t len = 0; len <= 300; len++) {
        snprintf(key, sizeof(key), "t%zu.3", len);
        text_round_trip(&s, key, len, (unsigned)len);
    }
    size_t big[] = {1000, 4095, 4096, top};
    for (size_t i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "big%zu.3", i);
        text_round_trip(&s, key, big[i], 99u + (unsigned)i);
    }
    /* keys too long or with unsafe characters: hashed, still distinct */
    memset(key, 'x', 253);
    strcpy(key + 253, ".3");
    text_round_trip(&s, key, 2000, 5);
    key[0] = 'y';
    text_round_trip(&s, key, 10, 6);
    text_round_trip(&s, "a key with spaces=and;signs.3", 50, 7);
    if (mem_find(&m, "tlm.t5.3") < 0)
        fail("short keys are not kept readable");
    /* a value cut short, and one that is not ours */
    unsigned char got[4096];
    size_t glen;
    long i = mem_find(&m, "tlm.big1.3~1");
    if (i < 0)
        fail("no second chunk of a 4095-byte value");
    strcpy(m.key[i], "gone");
    check(tlm_boot_text_get(&s, 3, "big1.3", got, sizeof(got), &glen),
          TELEMEM_ERR_BOOTSTRAP, "value cut short");
    mem_put(&m, "tlm.foreign.3", "hello");
    check(tlm_boot_text_get(&s, 3, "foreign.3", got, sizeof(got), &glen),
          TELEMEM_ERR_BOOTSTRAP, "a foreign value");
    mem_put(&m, "tlm.bad.3", "3,****");
    check(tlm_boot_text_get(&s, 3, "bad.3", got, sizeof(got), &glen),
          TELEMEM_ERR_BOOTSTRAP, "not base64url");
    check(tlm_boot_text_get(&s, 3, "nokey.3", got, sizeof(got), &glen),
          TELEMEM_ERR_NOT_FOUND, "missing key");
    mem_clear(&m);
}

static int mode_text(void)
{
    int lvl = tlm_log_level;
    tlm_log_level = -1; /* the malformed values are logged */
    text_limits(32, 16, 3000);
    text_limits(32, 63, 65536);
    text_limits(63, 100, 65536);
    text_limits(63, 930, 65536);
    text_limits(63, 1023, 65536);
    tlm_log_level = lvl;
    printf("launcher_pmi: text layer ok\n");
    return 0;
}

/* ---- select: fake environments ------------------------------------------ */

static const char *const *fake_vars; /* NAME=value, NULL-terminated */

static const char *fake_env(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *v = fake_vars; v && *v; v++)
        if (strncmp(*v, name, n) == 0 && (*v)[n] == '=')
            return *v + n + 1;
    return NULL;
}

typedef struct select_case {
    const char *mode;
    const char *kvs;
    const char *vars[8];
    int status;
    const char *adapter; /* NULL: telemem-run's store or a singleton */
} select_case_t;

#if TLM_HAVE_PMIX
#define PMIX_ST TELEMEM_OK
#define PMIX_NAME "pmix"
#else
#define PMIX_ST TELEMEM_ERR_BOOTSTRAP
#define PMIX_NAME NULL
#endif
#if TLM_HAVE_PMI2
#define PMI2_ST TELEMEM_OK
#define SLURM_PMI "pmi2"
#else
#define PMI2_ST TELEMEM_ERR_BOOTSTRAP
#define SLURM_PMI "pmi1"
#endif

#define SRUN2 "SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=2", "SLURM_NTASKS=2"
static const select_case_t cases[] = {
    {"auto", "", {NULL}, TELEMEM_OK, NULL},
    {"", "", {NULL}, TELEMEM_OK, NULL},
    {"auto", "127.0.0.1:1", {SRUN2, "PMI_FD=5"}, TELEMEM_OK, NULL},
    {"auto", "", {SRUN2, "SLURM_MPI_TYPE=none"}, TELEMEM_ERR_BOOTSTRAP,
     NULL},
    {"auto", "", {"SLURM_STEP_ID=0", "SLURM_NTASKS=3"},
     TELEMEM_ERR_BOOTSTRAP, NULL},
    {"auto", "", {"SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=1"}, TELEMEM_OK,
     NULL},
    {"auto", "", {"SLURM_NTASKS=4", "SLURM_JOB_ID=9"}, TELEMEM_OK, NULL},
    {"auto", "", {SRUN2, "PMI_FD=5", "PMI_JOBID=7.0", "PMI_RANK=0"},
     TELEMEM_OK, SLURM_PMI},
    /* Hydra's proxies started by srun (mpiexec in an allocation) */
    {"auto", "", {SRUN2, "PMI_FD=5", "PMI_RANK=0", "MPI_LOCALNRANKS=2"},
     TELEMEM_OK, "pmi1"},
    {"auto", "", {"PMI_FD=5", "PMI_RANK=0", "PMI_SIZE=2",
                  "MPI_LOCALNRANKS=2"}, TELEMEM_OK, "pmi1"},
    {"auto", "", {"PMI_PORT=vm:1", "PMI_ID=0", "MPI_LOCALNRANKS=2"},
     TELEMEM_OK, "pmi1"},
    {"auto", "", {"PMIX_NAMESPACE=x", "PMIX_RANK=0", SRUN2}, PMIX_ST,
     PMIX_NAME},
    {"auto", "", {"PMIX_RANK=0", "OMPI_COMM_WORLD_SIZE=2"}, PMIX_ST,
     PMIX_NAME},
    {"auto", "", {"OMPI_COMM_WORLD_SIZE=4"}, TELEMEM_ERR_BOOTSTRAP, NULL},
    {"auto", "", {"OMPI_COMM_WORLD_SIZE=1"}, TELEMEM_OK, NULL},
    {"auto", "", {"PMI_SIZE=3", "PMI_RANK=1"}, TELEMEM_ERR_BOOTSTRAP, NULL},
    {"auto", "", {"MPI_LOCALNRANKS=2"}, TELEMEM_ERR_BOOTSTRAP, NULL},
    {"auto", "", {"MV2_COMM_WORLD_SIZE=2"}, TELEMEM_ERR_BOOTSTRAP, NULL},
    {"singleton", "", {SRUN2}, TELEMEM_OK, NULL},
    {"telemem", "", {SRUN2}, TELEMEM_OK, NULL},
    {"pmi1", "", {NULL}, TELEMEM_OK, "pmi1"},
    {"pmi2", "", {NULL}, PMI2_ST, TLM_HAVE_PMI2 ? "pmi2" : NULL},
    {"pmix", "", {NULL}, PMIX_ST, PMIX_NAME},
    {"bogus", "", {NULL}, TELEMEM_ERR_CONFIG, NULL},
};

static int mode_select(void)
{
    int lvl = tlm_log_level;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const select_case_t *c = &cases[i];
        const tlm_boot_adapter_ops_t *ops = (void *)&ops;
        fake_vars = c->vars;
        tlm_log_level = c->status == TELEMEM_OK ? lvl : -1;
        int rc = tlm_boot_select(c->mode, c->kvs, fake_env, &ops);
        tlm_log_level = lvl;
        const char *name = ops ? ops->name : NULL;
        if (rc != c->status ||
            (rc == TELEMEM_OK && (!name != !c->adapter ||
                                  (name && strcmp(name, c->adapter)))))
            fail("select case %zu (%s, %s...): %s and %s, expected %s and "
                 "%s", i, c->mode, c->vars[0] ? c->vars[0] : "no variables",
                 telemem_status_name(rc), name ? name : "none",
                 telemem_status_name(c->status),
                 c->adapter ? c->adapter : "none");
    }
    /* and open: the PMI-1 client needs a socket */
    static const char *const bad_fd[] = {"PMI_FD=100000", "PMI_RANK=0",
                                         "PMI_SIZE=1", NULL};
    static const char *const bad_rank[] = {"PMI_FD=0", "PMI_RANK=2",
                                           "PMI_SIZE=2", NULL};
    const char *const *envs[] = {bad_fd, bad_rank, NULL};
    for (int i = 0; i < 3; i++) {
        tlm_boot_params_t p = {.rank = -1, .size = -1, .mode = "pmi1",
                               .env = fake_env, .timeout = 1};
        tlm_boot_t *b;
        fake_vars = envs[i];
        tlm_log_level = -1;
        check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP,
              "pmi1 open without a usable PMI_FD");
        tlm_log_level = lvl;
    }
    printf("launcher_pmi: %zu choices ok\n",
           sizeof(cases) / sizeof(cases[0]));
    return 0;
}

/* ---- pmi1-fake: the PMI-1 client against a fake server ------------------ */

enum fault { F_NONE, F_CLOSE, F_BOGUS, F_INIT_RC, F_MAXES, F_HANG };

static int fget(const char *line, const char *name, char *out, size_t cap)
{
    char pat[32];
    snprintf(pat, sizeof(pat), " %s=", name);
    const char *p = strstr(line, pat);
    if (!p)
        return -1;
    p += strlen(pat);
    size_t n = strcspn(p, " \n");
    if (n >= cap)
        return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

static void say(int fd, const char *text)
{
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n)
        _exit(8);
}

/* One client, as Hydra and Slurm serve it; a line over 1024 bytes (one
 * read() of Slurm's) ends the server with status 9. */
static void serve(int fd, enum fault fault)
{
    static mem_store_t m = {.key_max = 64, .val_max = 1024};
    char line[4096], reply[2048], k[128], v[1100];
    for (;;) {
        size_t n = 0;
        while (n < sizeof(line) - 1 && read(fd, line + n, 1) == 1 &&
               line[n] != '\n')
            n++;
        if (n == 0)
            _exit(0);
        line[n] = '\0';
        if (n + 1 > 1024)
            _exit(9);
        if (fault == F_CLOSE)
            _exit(0);
        if (fault == F_BOGUS) {
            say(fd, "cmd=bogus rc=0\n");
            continue;
        }
        if (!strncmp(line, "cmd=init ", 9))
            say(fd, fault == F_INIT_RC ? "cmd=response_to_init rc=-1\n"
                                       : "cmd=response_to_init rc=0\n");
        else if (!strcmp(line, "cmd=get_maxes"))
            say(fd, fault == F_MAXES
                        ? "cmd=maxes kvsname_max=256 keylen_max=8 "
                          "vallen_max=1024\n"
                        : "cmd=maxes kvsname_max=256 keylen_max=64 "
                          "vallen_max=1024\n");
        else if (!strcmp(line, "cmd=get_appnum"))
            say(fd, "cmd=appnum appnum=0\n");
        else if (!strcmp(line, "cmd=get_my_kvsname"))
            say(fd, "cmd=my_kvsname kvsname=fake_kvs_1\n");
        else if (!strncmp(line, "cmd=put ", 8) &&
                 fget(line, "key", k, sizeof(k)) == 0 &&
                 fget(line, "value", v, sizeof(v)) == 0) {
            mem_put(&m, k, v);
            say(fd, "cmd=put_result rc=0 msg=success\n");
        } else if (!strncmp(line, "cmd=get ", 8) &&
                   fget(line, "key", k, sizeof(k)) == 0) {
            long i = mem_find(&m, k);
            snprintf(reply, sizeof(reply), i < 0
                     ? "cmd=get_result rc=-1 msg=key_%s_not_found\n"
                     : "cmd=get_result rc=0 msg=success value=%s\n",
                     i < 0 ? k : m.val[i]);
            say(fd, reply);
        } else if (!strcmp(line, "cmd=barrier_in")) {
            if (fault == F_HANG)
                for (;;)
                    pause();
            say(fd, "cmd=barrier_out\n");
        } else if (!strcmp(line, "cmd=finalize")) {
            say(fd, "cmd=finalize_ack\n");
            _exit(0);
        } else if (!strncmp(line, "cmd=abort ", 10) &&
                   fget(line, "exitcode", k, sizeof(k)) == 0) {
            _exit(atoi(k));
        } else {
            _exit(10); /* a command we do not expect */
        }
    }
}

static pid_t start_fake(enum fault fault, int *fd_p, char *fd_var)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        fail("socketpair: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0) {
        close(sv[0]);
        serve(sv[1], fault);
    }
    close(sv[1]);
    *fd_p = sv[0];
    sprintf(fd_var, "PMI_FD=%d", sv[0]);
    return pid;
}

static int end_fake(pid_t pid, int fd)
{
    int st;
    close(fd);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static tlm_boot_t *fake_open(enum fault f, double timeout, pid_t *pid_p,
                             int *fd_p, int want)
{
    static char fd_var[32];
    static const char *vars[4];
    *pid_p = start_fake(f, fd_p, fd_var);
    vars[0] = fd_var;
    vars[1] = "PMI_RANK=0";
    vars[2] = "PMI_SIZE=1";
    fake_vars = vars;
    tlm_boot_params_t p = {.rank = -1, .size = -1, .mode = "pmi1",
                           .env = fake_env, .timeout = timeout};
    tlm_boot_t *b = NULL;
    int lvl = tlm_log_level;
    if (want != TELEMEM_OK)
        tlm_log_level = -1;
    check(tlm_boot_open(&p, &b), want, "open against a fake server");
    tlm_log_level = lvl;
    return b;
}

/* A whole session: open, every size of value, fence, get, finalize; and
 * no second one in the same process. */
static void fake_session(void)
{
    static unsigned char buf[65536], got[65536];
    pid_t pid;
    int fd;
    tlm_boot_t *b = fake_open(F_NONE, 10, &pid, &fd, TELEMEM_OK);
    if (tlm_boot_size(b) != 1 || tlm_boot_rank(b) != 0 ||
        tlm_boot_jobid(b)[0] != 'm')
        fail("fake open: rank %d of %d, job %s", tlm_boot_rank(b),
             tlm_boot_size(b), tlm_boot_jobid(b));
    put_all(b, 0, buf);
    check(tlm_boot_fence(b), TELEMEM_OK, "fake fence");
    get_all(b, 0, buf, got);
    size_t len;
    check(tlm_boot_get(b, "nokey.0", got, sizeof(got), &len),
          TELEMEM_ERR_NOT_FOUND, "fake get missing");
    tlm_boot_close(b);
    int st = end_fake(pid, fd);
    if (st != 0)
        fail("the fake server ended with status %d (9: a line over 1024 "
             "bytes, 10: an unexpected command)", st);
    fake_open(F_NONE, 10, &pid, &fd, TELEMEM_ERR_BOOTSTRAP);
    end_fake(pid, fd);
}

/* abort: the server gets the exit code */
static void fake_abort(void)
{
    pid_t pid;
    int fd;
    tlm_boot_t *b = fake_open(F_NONE, 10, &pid, &fd, TELEMEM_OK);
    int lvl = tlm_log_level;
    tlm_log_level = -1;
    tlm_boot_abort(b, 42, "on purpose");
    tlm_log_level = lvl;
    tlm_boot_close(b); /* no finalize after an abort */
    int st = end_fake(pid, fd);
    if (st != 42)
        fail("abort: the fake server ended with %d, not 42", st);
}

static void fake_fault(enum fault f)
{
    pid_t pid;
    int fd;
    if (f != F_HANG) {
        fake_open(f, 0.3, &pid, &fd, TELEMEM_ERR_BOOTSTRAP);
        end_fake(pid, fd);
        return;
    }
    /* a fence that times out leaves the stream out of step */
    tlm_boot_t *b = fake_open(f, 0.3, &pid, &fd, TELEMEM_OK);
    char v[8];
    size_t len;
    int lvl = tlm_log_level;
    tlm_log_level = -1;
    check(tlm_boot_put(b, "x.0", "1", 1), TELEMEM_OK, "put");
    check(tlm_boot_fence(b), TELEMEM_ERR_TIMED_OUT,
          "fence against a server that hangs");
    check(tlm_boot_get(b, "x.0", v, sizeof(v), &len),
          TELEMEM_ERR_BOOTSTRAP, "get after a lost fence");
    tlm_log_level = lvl;
    tlm_boot_close(b);
    kill(pid, SIGKILL);
    end_fake(pid, fd);
}

/* Each case in a process of its own: a process joins a PMI job once. */
static void in_child(void (*fn)(void), void (*fault_fn)(enum fault),
                     enum fault f, const char *what)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0) {
        if (fn)
            fn();
        else
            fault_fn(f);
        fflush(NULL);
        _exit(tlm_util_log_count(TLM_LOG_ERROR) ||
              tlm_util_log_count(TLM_LOG_WARN) ? 1 : 0);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail("%s failed (status %d)", what, st);
}

static int mode_pmi1_fake(void)
{
    in_child(fake_session, NULL, F_NONE, "a whole session");
    in_child(fake_abort, NULL, F_NONE, "abort");
    in_child(NULL, fake_fault, F_CLOSE, "a server that closes");
    in_child(NULL, fake_fault, F_BOGUS, "a server that answers nonsense");
    in_child(NULL, fake_fault, F_INIT_RC, "a server that refuses init");
    in_child(NULL, fake_fault, F_MAXES, "a server with short keys");
    in_child(NULL, fake_fault, F_HANG, "a server that hangs in a barrier");
    printf("launcher_pmi: PMI-1 client against a fake server ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "kvs") == 0 && argc == 3)
        return mode_kvs(atoi(argv[2]));
    if (strcmp(mode, "abort") == 0 && argc == 4)
        return mode_abort(atoi(argv[2]), atoi(argv[3]));
    if (strcmp(mode, "exit") == 0 && argc == 4)
        return mode_exit(atoi(argv[2]), atoi(argv[3]));
    if (strcmp(mode, "text") == 0)
        return mode_text();
    if (strcmp(mode, "select") == 0)
        return mode_select();
    if (strcmp(mode, "pmi1-fake") == 0)
        return mode_pmi1_fake();
    fprintf(stderr, "usage: launcher_pmi kvs N | abort R CODE | exit R CODE "
            "| text | select | pmi1-fake\n");
    return 2;
}

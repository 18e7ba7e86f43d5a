/* launcher_rank.c - the rank program of the launcher tests: drives the
 * bootstrap client (boot.c) in the ways launcher_check.sh checks. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "telemem.h"
#include "boot/boot.h"
#include "boot/boot_wire.h"
#include "util/log.h"
#include "util/util.h"

#define BIG 65536

static int g_rank = -1;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "launcher_rank r%d: FAIL: ", g_rank);
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

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

static tlm_boot_params_t params(double timeout)
{
    tlm_boot_params_t p = {0}; /* mode "" = auto; not under PMIx */
    const char *r = env("TELEMEM_RANK"), *n = env("TELEMEM_NRANKS");
    p.rank = *r ? atoi(r) : -1;
    p.size = *n ? atoi(n) : -1;
    p.kvs_addr = env("TELEMEM_KVS");
    p.jobid = env("TELEMEM_JOBID");
    p.secret = env("TELEMEM_KVS_SECRET");
    p.timeout = timeout;
    return p;
}

static tlm_boot_t *join(double timeout)
{
    tlm_boot_params_t p = params(timeout);
    tlm_boot_t *b;
    check(tlm_boot_open(&p, &b), TELEMEM_OK, "open");
    g_rank = tlm_boot_rank(b);
    tlm_util_log_set_rank(g_rank);
    return b;
}

/* Seeded bytes, different per rank. */
static void pattern(unsigned char *buf, size_t n, int rank)
{
    unsigned x = 2166136261u ^ (unsigned)rank * 16777619u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
}

static void write_file(const char *dir, const char *name, const char *fmt,
                       ...) __attribute__((format(printf, 3, 4)));
static void write_file(const char *dir, const char *name, const char *fmt,
                       ...)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (fp == NULL)
        fail("fopen %s: %s", path, strerror(errno));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(fp, fmt, ap);
    va_end(ap);
    fclose(fp);
}

/* kvs [light]: put k<rank> (and a 64 KiB b<rank>), fence, read back. */
static int mode_kvs(int light)
{
    tlm_boot_t *b = join(60);
    int rank = tlm_boot_rank(b), size = tlm_boot_size(b);
    const char *jobid = tlm_boot_jobid(b);
    const char *want_jobid = env("TELEMEM_JOBID");
    if (*env("TELEMEM_KVS") == '\0') {
        char s[32];
        snprintf(s, sizeof(s), "s%ld", (long)getpid());
        if (rank != 0 || size != 1 || strcmp(jobid, s) != 0)
            fail("singleton: rank %d size %d jobid %s", rank, size, jobid);
    } else if (rank != atoi(env("TELEMEM_RANK")) ||
               size != atoi(env("TELEMEM_NRANKS")) ||
               strcmp(jobid, want_jobid) != 0) {
        fail("rank %d size %d jobid %s disagree with the environment", rank,
             size, jobid);
    }
    static unsigned char big[BIG], got[BIG + 1];
    char key[64], val[64];
    size_t len;
    snprintf(key, sizeof(key), "k%d", rank);
    snprintf(val, sizeof(val), "value of rank %d", rank);
    check(tlm_boot_put(b, key, val, strlen(val) + 1), TELEMEM_OK, "put");
    if (!light) {
        pattern(big, BIG, rank);
        snprintf(key, sizeof(key), "b%d", rank);
        check(tlm_boot_put(b, key, big, BIG), TELEMEM_OK, "put big");
        snprintf(key, sizeof(key), "e%d", rank);
        check(tlm_boot_put(b, key, NULL, 0), TELEMEM_OK, "put empty");
        /* the last put of a key wins */
        check(tlm_boot_put(b, "same", "x", 1), TELEMEM_OK, "put same");
        snprintf(key, sizeof(key), "o%d", rank);
        check(tlm_boot_put(b, key, "old", 3), TELEMEM_OK, "put old");
        check(tlm_boot_put(b, key, "new!", 4), TELEMEM_OK, "put new");
    }
    check(tlm_boot_fence(b), TELEMEM_OK, "fence 1");
    int peers[3] = {(rank + 1) % size, (rank + size - 1) % size, 0};
    for (int i = 0; i < (light ? 3 : size); i++) {
        int r = light ? peers[i] : i;
        snprintf(key, sizeof(key), "k%d", r);
        snprintf(val, sizeof(val), "value of rank %d", r);
        check(tlm_boot_get(b, key, got, sizeof(got), &len), TELEMEM_OK,
              key);
        if (len != strlen(val) + 1 || memcmp(got, val, len) != 0)
            fail("%s: got %zu bytes '%.*s'", key, len, (int)len, got);
        if (light)
            continue;
        snprintf(key, sizeof(key), "b%d", r);
        check(tlm_boot_get(b, key, got, sizeof(got), &len), TELEMEM_OK,
              key);
        pattern(big, BIG, r);
        if (len != BIG || memcmp(got, big, BIG) != 0)
            fail("%s: 64 KiB value differs (len %zu)", key, len);
        snprintf(key, sizeof(key), "e%d", r);
        len = 99;
        check(tlm_boot_get(b, key, NULL, 0, &len), TELEMEM_OK, key);
        if (len != 0)
            fail("%s: empty value has length %zu", key, len);
        snprintf(key, sizeof(key), "o%d", r);
        check(tlm_boot_get(b, key, got, sizeof(got), &len), TELEMEM_OK,
              key);
        if (len != 4 || memcmp(got, "new!", 4) != 0)
            fail("%s: last put did not win", key);
    }
    if (!light) {
        /* too small a buffer: INVALID_ARG, and the length */
        check(tlm_boot_get(b, "b0", got, 10, &len),
              TELEMEM_ERR_INVALID_ARG, "get into a small buffer");
        if (len != BIG)
            fail("small buffer: length %zu, expected %d", len, BIG);
        check(tlm_boot_get(b, "no-such-key", got, sizeof(got), &len),
              TELEMEM_ERR_NOT_FOUND, "get missing");
        check(tlm_boot_get(b, "same", got, sizeof(got), &len),
              TELEMEM_OK, "get same");
        /* bad arguments are caught before any I/O */
        char longkey[300];
        memset(longkey, 'a', sizeof(longkey) - 1);
        longkey[sizeof(longkey) - 1] = '\0';
        int lvl = tlm_log_level;
        tlm_log_level = -1; /* these errors are expected */
        check(tlm_boot_put(b, longkey, "x", 1), TELEMEM_ERR_INVALID_ARG,
              "put long key");
        check(tlm_boot_put(b, "", "x", 1), TELEMEM_ERR_INVALID_ARG,
              "put empty key");
        check(tlm_boot_put(b, "k", big, BIG + 1),
              TELEMEM_ERR_INVALID_ARG, "put oversize value");
        tlm_log_level = lvl;
        /* a second round: values put after fence 1 seen after fence 2 */
        snprintf(key, sizeof(key), "r2k%d", rank);
        check(tlm_boot_put(b, key, &rank, sizeof(rank)), TELEMEM_OK,
              "put round 2");
        check(tlm_boot_fence(b), TELEMEM_OK, "fence 2");
        for (int r = 0; r < size; r++) {
            int v = -1;
            snprintf(key, sizeof(key), "r2k%d", r);
            check(tlm_boot_get(b, key, &v, sizeof(v), &len), TELEMEM_OK,
                  key);
            if (len != sizeof(v) || v != r)
                fail("%s: got %d", key, v);
        }
    }
    check(tlm_boot_fence(b), TELEMEM_OK, "last fence");
    tlm_boot_close(b);
    if (tlm_util_log_count(TLM_LOG_ERROR) || tlm_util_log_count(TLM_LOG_WARN))
        fail("unexpected log lines");
    return 0;
}

/* exit R CODE: rank R exits with CODE; the others wait in a fence. */
static int mode_exit(int who, int code)
{
    tlm_boot_t *b = join(0);
    if (g_rank == who)
        exit(code);
    int rc = tlm_boot_fence(b);
    tlm_boot_close(b);
    return rc == TELEMEM_OK ? 0 : 1;
}

/* kill DIR R: rank R dies by SIGKILL after the job set up shm and
 * grandchildren; rank 2 ignores SIGTERM; survivors would wait forever. */
static int mode_kill(const char *dir, int who)
{
    tlm_boot_t *b = join(0);
    char name[64];
    if (g_rank == 2)
        signal(SIGTERM, SIG_IGN);
    pid_t g = fork();
    if (g == 0) {
        signal(SIGTERM, SIG_IGN); /* only SIGKILL to the group ends it */
        sleep_forever();
    }
    if (g < 0)
        fail("fork: %s", strerror(errno));
    snprintf(name, sizeof(name), "pid.g%d", g_rank);
    write_file(dir, name, "%ld\n", (long)g);
    snprintf(name, sizeof(name), "pid.%d", g_rank);
    write_file(dir, name, "%ld\n", (long)getpid());
    if (g_rank == who) {
        char shm[128];
        snprintf(shm, sizeof(shm), "/telemem-%s-test%d",
                 tlm_boot_jobid(b), g_rank);
        int fd = shm_open(shm, O_CREAT | O_RDWR, 0600);
        if (fd < 0)
            fail("shm_open %s: %s", shm, strerror(errno));
        close(fd);
        write_file(dir, "jobid", "%s\n", tlm_boot_jobid(b));
    }
    check(tlm_boot_fence(b), TELEMEM_OK, "set-up fence");
    if (g_rank == who)
        raise(SIGKILL);
    tlm_boot_fence(b); /* PEER_DEAD, or killed first */
    sleep_forever();
    return 1;
}

/* keepgoing DIR R CODE: rank R exits CODE; the others must see PEER_DEAD
 * and live on (--keep-going). */
static int mode_keepgoing(const char *dir, int who, int code)
{
    tlm_boot_t *b = join(30);
    char name[64];
    if (g_rank == who)
        exit(code);
    int lvl = tlm_log_level;
    tlm_log_level = -1; /* the fence's error line is expected */
    int rc = tlm_boot_fence(b);
    tlm_log_level = lvl;
    check(rc, TELEMEM_ERR_PEER_DEAD, "fence with a dead rank");
    /* a later fence fails the same way, at once */
    tlm_log_level = -1;
    rc = tlm_boot_fence(b);
    tlm_log_level = lvl;
    check(rc, TELEMEM_ERR_PEER_DEAD, "second fence with a dead rank");
    /* the store still answers */
    size_t len;
    char v[8];
    check(tlm_boot_put(b, "late", "ok", 3), TELEMEM_OK, "put after");
    check(tlm_boot_get(b, "late", v, sizeof(v), &len), TELEMEM_OK,
          "get after");
    nap(0.3); /* still alive: nobody killed us */
    snprintf(name, sizeof(name), "ok.%d", g_rank);
    write_file(dir, name, "ok\n");
    tlm_boot_close(b);
    return 0;
}

/* abort R CODE: rank R asks the launcher to end the job. */
static int mode_abort(int who, int code)
{
    tlm_boot_t *b = join(0);
    if (g_rank == who) {
        char why[64];
        snprintf(why, sizeof(why), "test abort from rank %d", g_rank);
        tlm_boot_abort(b, code, why);
    } else {
        tlm_boot_fence(b);
    }
    sleep_forever();
    return 1;
}

/* A fence with a short timeout, waited for again (the same fence) until
 * it completes: a loaded machine may need a few rounds. */
static int fence_patiently(tlm_boot_t *b)
{
    int lvl = tlm_log_level, rc = TELEMEM_ERR_TIMED_OUT;
    for (int i = 0; i < 100 && rc == TELEMEM_ERR_TIMED_OUT; i++) {
        tlm_log_level = -1;
        rc = tlm_boot_fence(b);
        tlm_log_level = lvl;
    }
    return rc;
}

/* timeout: rank 0's fence times out while rank 1 waits for its signal (a
 * /dev/shm object), then the same fence completes. */
static int mode_timeout(void)
{
    tlm_boot_t *b = join(atoi(env("TELEMEM_RANK")) == 0 ? 0.3 : 30);
    char shm[128];
    size_t len;
    int v, rc, lvl = tlm_log_level;
    snprintf(shm, sizeof(shm), "/telemem-%s-go", tlm_boot_jobid(b));
    if (g_rank == 1) {
        int fd = -1;
        for (int i = 0; i < 600 && fd < 0; i++) {
            fd = shm_open(shm, O_RDONLY, 0);
            if (fd < 0)
                nap(0.05);
        }
        if (fd < 0)
            fail("rank 0 never created %s", shm);
        close(fd);
        shm_unlink(shm);
        check(tlm_boot_fence(b), TELEMEM_OK, "late fence");
    } else {
        tlm_log_level = -1;
        rc = tlm_boot_fence(b);
        tlm_log_level = lvl;
        check(rc, TELEMEM_ERR_TIMED_OUT, "fence that times out");
        /* requests wait behind the open fence: this get times out too,
         * and its late reply must not be taken for a later one */
        tlm_log_level = -1;
        rc = tlm_boot_get(b, "nothing", &v, sizeof(v), &len);
        tlm_log_level = lvl;
        check(rc, TELEMEM_ERR_TIMED_OUT, "get behind an open fence");
        int fd = shm_open(shm, O_CREAT | O_RDWR, 0600);
        if (fd < 0)
            fail("shm_open %s: %s", shm, strerror(errno));
        close(fd);
        /* resume the same fence: it completes once rank 1 comes */
        check(fence_patiently(b), TELEMEM_OK, "resumed fence");
    }
    check(tlm_boot_put(b, g_rank ? "v1" : "v0", &g_rank,
                            sizeof(g_rank)), TELEMEM_OK, "put");
    check(fence_patiently(b), TELEMEM_OK, "fence after");
    for (int i = 0;; i++) { /* a loaded machine may need a retry */
        tlm_log_level = -1;
        rc = tlm_boot_get(b, g_rank ? "v0" : "v1", &v, sizeof(v), &len);
        tlm_log_level = lvl;
        if (rc != TELEMEM_ERR_TIMED_OUT || i == 100)
            break;
    }
    check(rc, TELEMEM_OK, "get after");
    if (len != sizeof(v) || v != 1 - g_rank)
        fail("got %d", v);
    check(fence_patiently(b), TELEMEM_OK, "last fence");
    tlm_boot_close(b);
    return 0;
}

/* ---- raw protocol (docs/bootstrap.md), without boot.c ---- */

static int raw_connect(void)
{
    const char *addr = env("TELEMEM_KVS");
    int fd;
    if (strncmp(addr, "unix:", 5) == 0) {
        struct sockaddr_un su;
        memset(&su, 0, sizeof(su));
        su.sun_family = AF_UNIX;
        snprintf(su.sun_path, sizeof(su.sun_path), "%s", addr + 5);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (void *)&su, sizeof(su)) < 0)
            fail("connect %s: %s", addr, strerror(errno));
        return fd;
    }
    const char *colon = strrchr(addr, ':');
    if (colon == NULL)
        fail("TELEMEM_KVS '%s'", addr);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((unsigned short)atoi(colon + 1));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (void *)&sa, sizeof(sa)) < 0)
        fail("connect %s: %s", addr, strerror(errno));
    return fd;
}

static void raw_send(int fd, int op, uint32_t blen, const void *body,
                     size_t n)
{
    unsigned char f[8 + 512];
    f[0] = (unsigned char)(blen >> 24);
    f[1] = (unsigned char)(blen >> 16);
    f[2] = (unsigned char)(blen >> 8);
    f[3] = (unsigned char)blen;
    f[4] = (unsigned char)op;
    f[5] = f[6] = f[7] = 0;
    if (n)
        memcpy(f + 8, body, n);
    if (send(fd, f, 8 + n, MSG_NOSIGNAL) != (ssize_t)(8 + n))
        fail("raw send: %s", strerror(errno));
}

static int raw_read(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 10000) != 1)
            fail("raw read: no answer in 10 s");
        ssize_t r = recv(fd, (char *)buf + got, n - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Read one reply; returns its status, the body in buf (NUL-terminated). */
static int raw_reply(int fd, int op, char *buf, size_t cap)
{
    unsigned char h[8];
    if (raw_read(fd, h, 8) < 0)
        fail("raw reply to op %d: connection closed", op);
    size_t blen = (size_t)h[0] << 24 | (size_t)h[1] << 16 |
                  (size_t)h[2] << 8 | h[3];
    if (h[4] != op || blen >= cap)
        fail("raw reply: op %d (wanted %d), %zu bytes", h[4], op, blen);
    if (raw_read(fd, buf, blen) < 0)
        fail("raw reply: body cut short");
    buf[blen] = '\0';
    return h[5];
}

/* The launcher's challenge, sent on every new connection: its nonce. */
static void raw_challenge(int fd, unsigned char *nonce)
{
    char buf[64];
    if (raw_reply(fd, OP_CHALLENGE, buf, sizeof(buf)) != 0)
        fail("challenge: bad status");
    memcpy(nonce, buf + 4, WIRE_NONCE);
}

static void raw_expect_eof(int fd)
{
    char c;
    if (raw_read(fd, &c, 1) == 0)
        fail("the launcher kept a bad connection open");
    close(fd);
}

/* raw: rank 1 speaks the protocol by hand, then drops its connection
 * without BYE and lives on; rank 0 (the client) must see PEER_DEAD from
 * the lost connection, before rank 1 exits. */
static int mode_raw(void)
{
    char buf[600];
    int rank = atoi(env("TELEMEM_RANK"));
    g_rank = rank;
    if (rank == 1) {
        unsigned char nonce[WIRE_NONCE];
        int fd = raw_connect(); /* a request before HELLO */
        raw_challenge(fd, nonce);
        raw_send(fd, 4, 1, "k", 1);
        if (raw_reply(fd, 4, buf, sizeof(buf)) != 4 || !strstr(buf, "HELLO"))
            fail("GET before HELLO: '%s'", buf);
        raw_expect_eof(fd);
        fd = raw_connect(); /* too long a frame */
        raw_challenge(fd, nonce);
        raw_send(fd, 1, 0x7fffffff, NULL, 0);
        if (raw_reply(fd, 1, buf, sizeof(buf)) != 4)
            fail("oversize frame: '%s'", buf);
        raw_expect_eof(fd);
        fd = raw_connect();
        raw_challenge(fd, nonce);
        unsigned char hello[WIRE_HELLO_BODY];
        uint32_t w[3] = {htonl(WIRE_VERSION), htonl(1), htonl(2)};
        memcpy(hello, w, 12);
        memset(hello + 12, 7, WIRE_NONCE);
        wire_proof(env("TELEMEM_KVS_SECRET"), 1, nonce, hello + 12, 1, 2,
                   hello + 12 + WIRE_NONCE);
        raw_send(fd, 1, WIRE_HELLO_BODY, hello, WIRE_HELLO_BODY);
        if (raw_reply(fd, 1, buf, sizeof(buf)) != 0)
            fail("HELLO refused: '%s'", buf);
        unsigned char put[2 + 3 + 3] = {0, 3, 'r', 'a', 'w', 'x', 'y', 'z'};
        raw_send(fd, 2, sizeof(put), put, sizeof(put));
        raw_send(fd, 4, 3, "raw", 3);
        if (raw_reply(fd, 4, buf, sizeof(buf)) != 0 || strcmp(buf, "xyz"))
            fail("GET raw: '%s'", buf);
        raw_send(fd, 4, 4, "nope", 4);
        if (raw_reply(fd, 4, buf, sizeof(buf)) != 1)
            fail("GET nope: not NOT_FOUND");
        close(fd); /* no BYE */
        nap(4.0);
        return 0;
    }
    tlm_boot_t *b = join(30);
    double t0 = tlm_util_now();
    int lvl = tlm_log_level;
    tlm_log_level = -1;
    int rc = tlm_boot_fence(b);
    tlm_log_level = lvl;
    check(rc, TELEMEM_ERR_PEER_DEAD, "fence with a lost rank");
    double dt = tlm_util_now() - t0;
    if (dt > 3.5)
        fail("PEER_DEAD came after %.1f s: from the exit, not the lost "
             "connection", dt);
    size_t len;
    check(tlm_boot_get(b, "raw", buf, sizeof(buf), &len), TELEMEM_OK,
          "get raw");
    if (len != 3 || memcmp(buf, "xyz", 3) != 0)
        fail("raw: got %zu bytes", len);
    tlm_boot_close(b);
    return 0;
}

/* badhello: the launcher refuses wrong ranks and secrets. */
static int mode_badhello(void)
{
    tlm_boot_params_t p = params(10);
    tlm_boot_t *b;
    int lvl = tlm_log_level;
    int rank = p.rank;
    g_rank = rank;
    tlm_log_level = -1;
    p.rank = p.size; /* out of range: refused before connecting */
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP, "rank = size");
    p.rank = rank;
    p.size = p.size + 1; /* the launcher refuses */
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP, "size + 1");
    p.size--;
    p.secret = "0123456789abcdef"; /* not this job's: refused */
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP, "wrong secret");
    p.secret = ""; /* refused before connecting */
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP, "no secret");
    p.secret = env("TELEMEM_KVS_SECRET");
    p.jobid = "bad/jobid";
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP, "bad jobid");
    p.jobid = env("TELEMEM_JOBID");
    p.kvs_addr = "127.0.0.1";
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP, "no port");
    p.kvs_addr = "";
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP,
          "rank without kvs");
    p.kvs_addr = env("TELEMEM_KVS");
    check(tlm_boot_open(NULL, &b), TELEMEM_ERR_INVALID_ARG, "NULL");
    tlm_log_level = lvl;
    check(tlm_boot_open(&p, &b), TELEMEM_OK, "good open");
    /* the same rank again is a duplicate */
    tlm_boot_t *b2;
    tlm_log_level = -1;
    check(tlm_boot_open(&p, &b2), TELEMEM_ERR_BOOTSTRAP, "duplicate");
    tlm_log_level = lvl;
    check(tlm_boot_fence(b), TELEMEM_OK, "fence");
    tlm_boot_close(b);
    return 0;
}

/* deadkvs: nothing listens at TELEMEM_KVS: open fails in bounded time. */
static int mode_deadkvs(void)
{
    tlm_boot_params_t p = params(0.5);
    tlm_boot_t *b;
    p.rank = 0;
    p.size = 1;
    p.jobid = "j1";
    p.kvs_addr = "127.0.0.1:1"; /* port 1: refused */
    int lvl = tlm_log_level;
    tlm_log_level = -1;
    check(tlm_boot_open(&p, &b), TELEMEM_ERR_BOOTSTRAP, "dead kvs");
    tlm_log_level = lvl;
    return 0;
}

/* sendsig SIG LAUNCHER DIR: run LAUNCHER -n 2 <this program> sleep DIR
 * with SIGINT, SIGHUP and SIGTERM at their defaults (a shell's background
 * job ignores SIGINT, nohup SIGHUP, and the launcher keeps a signal that
 * was ignored at its start ignored), send it SIG once the ranks run, and
 * exit with the launcher's status. */
static int mode_sendsig(int sig, const char *self, const char *launcher,
                        const char *dir)
{
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execl(launcher, launcher, "-n", "2", self, "sleep", dir,
              (char *)NULL);
        _exit(126);
    }
    char path[4096];
    for (int i = 0; i < 200; i++) {
        snprintf(path, sizeof(path), "%s/pid.1", dir);
        if (access(path, F_OK) == 0) {
            snprintf(path, sizeof(path), "%s/pid.0", dir);
            if (access(path, F_OK) == 0)
                break;
        }
        nap(0.05);
    }
    kill(pid, sig);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "kvs") == 0)
        return mode_kvs(argc > 2 && strcmp(argv[2], "light") == 0);
    if (strcmp(mode, "exit") == 0 && argc == 4)
        return mode_exit(atoi(argv[2]), atoi(argv[3]));
    if (strcmp(mode, "kill") == 0 && argc == 4)
        return mode_kill(argv[2], atoi(argv[3]));
    if (strcmp(mode, "keepgoing") == 0 && argc == 5)
        return mode_keepgoing(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (strcmp(mode, "abort") == 0 && argc == 4)
        return mode_abort(atoi(argv[2]), atoi(argv[3]));
    if (strcmp(mode, "timeout") == 0)
        return mode_timeout();
    if (strcmp(mode, "raw") == 0)
        return mode_raw();
    if (strcmp(mode, "badhello") == 0)
        return mode_badhello();
    if (strcmp(mode, "deadkvs") == 0)
        return mode_deadkvs();
    if (strcmp(mode, "sendsig") == 0 && argc == 5)
        return mode_sendsig(atoi(argv[2]), argv[0], argv[3], argv[4]);
    if (strcmp(mode, "sleep") == 0) { /* sleep [DIR]: pid.<rank> in DIR */
        if (argc > 2) {
            char name[64];
            snprintf(name, sizeof(name), "pid.%s", env("TELEMEM_RANK"));
            write_file(argv[2], name, "%ld\n", (long)getpid());
        }
        sleep_forever();
        return 1;
    }
    fprintf(stderr, "usage: launcher_rank kvs [light] | exit R CODE | kill "
            "DIR R | keepgoing DIR R CODE | abort R CODE | timeout | "
            "badhello | raw | deadkvs | sleep [DIR] |\n"
            "       sendsig SIG LAUNCHER DIR\n");
    return 2;
}

/* kvs_attack.c - clients that try to get into a job through telemem-run's
 * key-value store (docs/bootstrap.md, "Who may join"), and the job they
 * attack.  As the job (no argument), rank 0 first sets attackers on the
 * store while the other ranks wait for it to join: a client that knows only
 * the store's address and the job id (protocol 1 and 2), one with a wrong
 * secret, a replay of a proof made for another connection, another user
 * (uid 65534, holding the secret, when run as root), and 1,500 connections
 * held open idle; then rank 0 joins (the job must work) and a holder of
 * the secret claims rank 1 a second time.  Every attempt must be refused,
 * no refusal may carry the job id or the secret, the store must listen on
 * exactly the address asked for (--kvs-addr) or on a Unix socket in a
 * directory of mode 0700, and the job must complete.  With
 * KVS_ATTACK_REMOTE=1 (tests/multihost: the store is on another "host")
 * the listener and other-user checks are left out, and no process of this
 * machine may show the secret on its command line.
 * usage: KVS_ATTACK_ADDR=A telemem-run [--kvs-addr A] -n N kvs_attack
 *        kvs_attack attack WHAT RANK   (one attempt; exit 0 if refused) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tt.h"
#include "boot/boot_wire.h"

#define FLOOD 1500

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v ? v : dflt;
}

/* ---- the raw protocol ---------------------------------------------------- */

static int kvs_connect(const char *addr)
{
    int fd;
    if (strncmp(addr, "unix:", 5) == 0) {
        struct sockaddr_un su;
        memset(&su, 0, sizeof(su));
        su.sun_family = AF_UNIX;
        snprintf(su.sun_path, sizeof(su.sun_path), "%s", addr + 5);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (void *)&su, sizeof(su)) == 0)
            return fd;
    } else {
        const char *colon = strrchr(addr, ':');
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof(sa));
        sa.sin_family = AF_INET;
        if (!colon)
            return -1;
        char host[64];
        snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
        sa.sin_port = htons((unsigned short)atoi(colon + 1));
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
            return -1;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (void *)&sa, sizeof(sa)) == 0)
            return fd;
    }
    int e = errno;
    if (fd >= 0)
        close(fd);
    errno = e;
    return -1;
}

static void send_frame(int fd, int op, const void *body, size_t n)
{
    unsigned char f[WIRE_HDR + 256];
    put_u32(f, (uint32_t)n);
    f[4] = (unsigned char)op;
    f[5] = f[6] = f[7] = 0;
    memcpy(f + WIRE_HDR, body, n);
    ssize_t w = send(fd, f, WIRE_HDR + n, MSG_NOSIGNAL);
    (void)w; /* a refused connection may be closed already */
}

static int read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 15000) != 1)
            return -1;
        ssize_t r = recv(fd, (char *)buf + got, n - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Next frame: op, status, body (NUL-terminated) in buf.  -1: closed. */
static int read_frame(int fd, int *op, int *st, char *buf, size_t cap,
                      size_t *len)
{
    unsigned char h[WIRE_HDR];
    if (read_all(fd, h, WIRE_HDR) < 0)
        return -1;
    size_t blen = get_u32(h);
    if (blen >= cap)
        return -1;
    if (read_all(fd, buf, blen) < 0)
        return -1;
    buf[blen] = '\0';
    *op = h[4];
    *st = h[5];
    *len = blen;
    return 0;
}

/* ---- one attempt (a separate process; exit 0 = refused) ----------------- */

static int said_too_much(const char *text, size_t len)
{
    const char *jobid = env_or("ATTACK_JOBID", "");
    const char *secret = env_or("ATTACK_CHECK", ""); /* never used to prove */
    return (jobid[0] && memmem(text, len, jobid, strlen(jobid))) ||
           (secret[0] && memmem(text, len, secret, 16));
}

/* The outcome of a HELLO sent on fd: 0 refused, 1 accepted, 2 said too
 * much (job id or secret in the answer). */
static int outcome(int fd, const char *what)
{
    char buf[2048];
    int op, st;
    size_t len;
    for (;;) {
        if (read_frame(fd, &op, &st, buf, sizeof(buf), &len) < 0) {
            printf("attack %s: refused (connection closed)\n", what);
            return 0;
        }
        if (said_too_much(buf, len)) {
            printf("attack %s: the answer carries the job id or the secret: "
                   "'%s'\n", what, buf);
            return 2;
        }
        if (op == OP_CHALLENGE)
            continue;
        if (op == OP_HELLO && st == ST_OK) {
            printf("attack %s: ACCEPTED as a rank\n", what);
            return 1;
        }
        printf("attack %s: refused (status %d): %s\n", what, st, buf);
        return 0;
    }
}

/* A HELLO of protocol 1: version, rank, nranks, the job id. */
static int attack_v1(const char *addr, int rank, int nranks)
{
    int fd = kvs_connect(addr);
    if (fd < 0) {
        printf("attack v1: refused (connect: %s)\n", strerror(errno));
        return 0;
    }
    const char *jobid = env_or("ATTACK_JOBID", "");
    unsigned char b[12 + WIRE_MAX_JOBID];
    put_u32(b, 1);
    put_u32(b + 4, (uint32_t)rank);
    put_u32(b + 8, (uint32_t)nranks);
    memcpy(b + 12, jobid, strlen(jobid));
    send_frame(fd, OP_HELLO, b, 12 + strlen(jobid));
    return outcome(fd, "v1 with the job id");
}

/* The server's nonce of a new connection, or -1. */
static int challenge(int fd, unsigned char *nonce)
{
    char buf[2048];
    int op, st;
    size_t len;
    if (read_frame(fd, &op, &st, buf, sizeof(buf), &len) < 0 ||
        op != OP_CHALLENGE || len != WIRE_CHALLENGE_BODY)
        return -1;
    memcpy(nonce, buf + 4, WIRE_NONCE);
    return 0;
}

static void hello_body(unsigned char *b, const char *key,
                       const unsigned char *snonce, int rank, int nranks)
{
    put_u32(b, WIRE_VERSION);
    put_u32(b + 4, (uint32_t)rank);
    put_u32(b + 8, (uint32_t)nranks);
    memset(b + 12, 0x5a, WIRE_NONCE);
    wire_proof(key, 1, snonce, b + 12, rank, nranks, b + 12 + WIRE_NONCE);
}

/* Protocol 2 with a key: the secret (ATTACK_SECRET) or a guess. */
static int attack_v2(const char *addr, const char *what, const char *key,
                     int rank, int nranks)
{
    unsigned char nonce[WIRE_NONCE], b[WIRE_HELLO_BODY];
    int fd = kvs_connect(addr);
    if (fd < 0) {
        printf("attack %s: refused (connect: %s)\n", what, strerror(errno));
        return 0;
    }
    if (challenge(fd, nonce) < 0)
        return outcome(fd, what); /* refused before any challenge */
    hello_body(b, key, nonce, rank, nranks);
    send_frame(fd, OP_HELLO, b, sizeof(b));
    return outcome(fd, what);
}

/* A valid proof for connection 1's nonce, sent on connection 2. */
static int attack_replay(const char *addr, int rank, int nranks)
{
    unsigned char n1[WIRE_NONCE], n2[WIRE_NONCE], b[WIRE_HELLO_BODY];
    int fd1 = kvs_connect(addr), fd2 = kvs_connect(addr);
    if (fd1 < 0 || fd2 < 0 || challenge(fd1, n1) < 0 ||
        challenge(fd2, n2) < 0) {
        printf("attack replay: cannot set up two connections\n");
        return 3;
    }
    hello_body(b, env_or("ATTACK_SECRET", ""), n1, rank, nranks);
    close(fd1); /* the proof is never used where it was made */
    send_frame(fd2, OP_HELLO, b, sizeof(b));
    return outcome(fd2, "replay");
}

static int mode_attack(const char *what, int rank)
{
    const char *addr = env_or("ATTACK_KVS", "");
    int nranks = atoi(env_or("ATTACK_NRANKS", "0"));
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(what, "v1"))
        return attack_v1(addr, rank, nranks);
    if (!strcmp(what, "guess"))
        return attack_v2(addr, "wrong secret", "00112233445566778899aabbcc"
                         "ddeeff00112233445566778899aabbccddeeff", rank,
                         nranks);
    if (!strcmp(what, "replay"))
        return attack_replay(addr, rank, nranks);
    if (!strcmp(what, "secret"))
        return attack_v2(addr, "with the secret", env_or("ATTACK_SECRET", ""),
                         rank, nranks);
    printf("unknown attack %s\n", what);
    return 3;
}

/* ---- the job ------------------------------------------------------------- */

/* Run "kvs_attack attack WHAT RANK" with only the ATTACK_* variables (no
 * TELEMEM_* at all), as uid 65534 when other_user; its exit status. */
static int run_attack(const char *self, const char *what, int rank,
                      bool with_secret, bool other_user)
{
    char nr[16], rk[16];
    snprintf(nr, sizeof(nr), "%d", tt_n);
    snprintf(rk, sizeof(rk), "%d", rank);
    char e_kvs[300], e_job[100], e_sec[100], e_chk[100], e_nr[40];
    snprintf(e_kvs, sizeof(e_kvs), "ATTACK_KVS=%s", env_or("TELEMEM_KVS", ""));
    snprintf(e_job, sizeof(e_job), "ATTACK_JOBID=%s",
             env_or("TELEMEM_JOBID", ""));
    snprintf(e_sec, sizeof(e_sec), "ATTACK_SECRET=%s",
             with_secret ? env_or("TELEMEM_KVS_SECRET", "") : "");
    snprintf(e_chk, sizeof(e_chk), "ATTACK_CHECK=%s",
             env_or("TELEMEM_KVS_SECRET", ""));
    snprintf(e_nr, sizeof(e_nr), "ATTACK_NRANKS=%s", nr);
    char *envp[] = {e_kvs, e_job, e_sec, e_chk, e_nr, "PATH=/usr/bin:/bin",
                    NULL};
    pid_t pid = fork();
    if (pid == 0) {
        if (other_user) {
            char *av[] = {"setpriv", "--reuid=65534", "--regid=65534",
                          "--clear-groups", (char *)self, "attack",
                          (char *)what, rk, NULL};
            execve("/usr/bin/setpriv", av, envp);
            _exit(4);
        }
        char *av[] = {(char *)self, "attack", (char *)what, rk, NULL};
        execve(self, av, envp);
        _exit(4);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void expect_refused(const char *self, const char *what, int rank,
                           bool with_secret, bool other_user)
{
    int st = run_attack(self, what, rank, with_secret, other_user);
    TT_ASSERT(st == 0, "attack %s on rank %d%s: %s (status %d)", what, rank,
              other_user ? " as uid 65534" : "",
              st == 1 ? "the store let it in"
              : st == 2 ? "a refusal gave away the job id or the secret"
                        : "the attacker failed",
              st);
}

/* The store listens on exactly the address asked for, or on a Unix socket
 * in a directory only this user can enter. */
static void check_listener(void)
{
    const char *addr = env_or("TELEMEM_KVS", "");
    const char *want = getenv("KVS_ATTACK_ADDR");
    if (strncmp(addr, "unix:", 5) == 0) {
        TT_ASSERT(!want || !want[0], "asked for %s, got %s", want, addr);
        char dir[300];
        snprintf(dir, sizeof(dir), "%s", addr + 5);
        *strrchr(dir, '/') = '\0';
        struct stat sb;
        TT_ASSERT(stat(dir, &sb) == 0, "stat %s: %s", dir, strerror(errno));
        TT_ASSERT((sb.st_mode & 0777) == 0700 && sb.st_uid == geteuid(),
                  "socket directory %s has mode %o, owner %d", dir,
                  (unsigned)(sb.st_mode & 0777), (int)sb.st_uid);
        tt_log("store: Unix socket in %s (mode 0700)", dir);
        return;
    }
    TT_ASSERT(want && want[0], "store at %s without --kvs-addr", addr);
    unsigned port = (unsigned)atoi(strrchr(addr, ':') + 1);
    struct in_addr ia;
    TT_ASSERT(inet_pton(AF_INET, want, &ia) == 1, "bad address %s", want);
    char local[32];
    snprintf(local, sizeof(local), "%08X:%04X", (unsigned)ia.s_addr, port);
    FILE *f = fopen("/proc/net/tcp", "r");
    TT_ASSERT(f, "/proc/net/tcp: %s", strerror(errno));
    char line[512], l[64];
    unsigned st;
    int found = 0, wild = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, " %*d: %63s %*s %x", l, &st) != 2 || st != 0x0A)
            continue;
        unsigned lp;
        if (sscanf(strchr(l, ':') + 1, "%x", &lp) != 1 || lp != port)
            continue;
        found |= strcmp(l, local) == 0;
        wild |= strncmp(l, "00000000:", 9) == 0;
    }
    fclose(f);
    TT_ASSERT(found && !wild, "store port %u: listening on %s: %s", port,
              want, wild ? "no, on 0.0.0.0" : "not found");
    tt_log("store: TCP %s, not 0.0.0.0", addr);
}

/* No command line on this machine holds the job's secret (the remote
 * shell got it on stdin). */
static void check_cmdlines(void)
{
    const char *secret = env_or("TELEMEM_KVS_SECRET", "");
    TT_ASSERT(strlen(secret) >= 16, "no secret in the environment");
    FILE *ls = popen("ls /proc", "r");
    TT_ASSERT(ls, "ls /proc: %s", strerror(errno));
    char name[64], path[128], buf[65536];
    int seen = 0;
    while (fgets(name, sizeof(name), ls)) {
        name[strcspn(name, "\n")] = '\0';
        if (name[0] < '0' || name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/cmdline", name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf));
        close(fd);
        seen++;
        TT_ASSERT(n <= 0 || !memmem(buf, (size_t)n, secret, 16),
                  "process %s has the secret on its command line", name);
    }
    pclose(ls);
    tt_log("no command line of %d processes holds the secret", seen);
}

/* Open FLOOD connections and hold them, idle, until killed. */
static pid_t start_flood(void)
{
    const char *addr = env_or("TELEMEM_KVS", "");
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max < FLOOD + 64 ? rl.rlim_max : FLOOD + 64;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < FLOOD + 64)
        rl.rlim_max = rl.rlim_cur = FLOOD + 64; /* root may raise it */
    setrlimit(RLIMIT_NOFILE, &rl);
    int opened = 0;
    for (int i = 0; i < FLOOD; i++)
        opened += kvs_connect(addr) >= 0;
    printf("[flood] %d of %d idle connections open\n", opened, FLOOD);
    fflush(stdout);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "attack") == 0)
        return mode_attack(argv[2], atoi(argv[3]));
    int rank = atoi(env_or("TELEMEM_RANK", "-1"));
    tt_n = atoi(env_or("TELEMEM_NRANKS", "0"));
    TT_ASSERT(rank >= 0 && tt_n >= 2, "run under telemem-run -n 2 or more");
    char self[4096];
    ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
    TT_ASSERT(k > 0, "readlink: %s", strerror(errno));
    self[k] = '\0';
    pid_t flood = -1;
    if (rank == 0) {
        tt_me = 0;
        tt_proc_line();
        bool remote = getenv("KVS_ATTACK_REMOTE") != NULL;
        if (remote)
            check_cmdlines();
        else
            check_listener();
        /* the other ranks have joined or are joining; rank 0's place is
         * free: strangers try to take it */
        expect_refused(self, "v1", 0, false, false);
        expect_refused(self, "guess", 0, false, false);
        expect_refused(self, "replay", 0, true, false);
        if (remote) /* the store cannot see who connects from elsewhere */
            tt_log("remote store: the other-user attack is left out");
        else if (geteuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0)
            expect_refused(self, "secret", 0, true, true);
        else
            tt_log("not root or no setpriv: the other-user attack is left "
                   "out");
        /* and rank 0 joins through a crowd of idle connections */
        flood = start_flood();
    }
    tt_init(&argc, &argv, "kvs_attack");
    /* the job works: every rank writes its rank into everyone's block */
    int64_t *blk[64];
    TT_ASSERT(tt_n <= 64, "at most 64 ranks");
    void *bases[64];
    TT_CHECK(telemem_malloc_all((size_t)tt_n * 8, bases));
    for (int r = 0; r < tt_n; r++)
        blk[r] = bases[r];
    int64_t v = tt_me + 1000;
    for (int r = 0; r < tt_n; r++)
        TT_CHECK(telemem_put(r, blk[r] + tt_me, &v, sizeof(v)));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    for (int r = 0; r < tt_n; r++)
        TT_ASSERT(blk[tt_me][r] == r + 1000, "slot %d holds %lld", r,
                  (long long)blk[tt_me][r]);
    if (tt_me == 0) /* rank 1 has joined: nobody takes its place again */
        expect_refused(self, "secret", 1, true, false);
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(bases[tt_me]));
    tt_finalize();
    if (flood > 0) {
        kill(flood, SIGKILL);
        waitpid(flood, NULL, 0);
    }
    tt_log("PASS");
    return 0;
}

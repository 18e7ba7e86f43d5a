/* telemem_run.c - telemem-run: starts N ranks on this host (or on the
 * hosts of -H through a remote shell, run_hosts.c), ends the job cleanly on
 * any failure; main loop of the store (run_kvs.c) and of the tagged output
 * (run_output.c).  Its options: run_opts.c; --calibrate:
 * run_calibrate.c. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

run_job_t J;

/* ---- messages ----------------------------------------------------------- */

void run_say(const char *fmt, ...)
{
    char buf[1400];
    va_list ap;
    int n = snprintf(buf, sizeof(buf), "telemem-run: ");
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(buf);
    buf[len++] = '\n';
    ssize_t w = write(2, buf, len); /* one write: lines stay whole */
    (void)w;
}

void *run_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        run_say("out of memory (%zu bytes)", n);
        exit(EXIT_INTERNAL); /* the launcher, not the library */
    }
    return q;
}

/* ---- processes ---------------------------------------------------------- */

static void signal_groups(int sig)
{
    for (int i = 0; i < J.n; i++) {
        if (J.ranks[i].pid <= 0)
            continue;
        /* exited ranks too: what they forked may still run */
        if (kill(-J.ranks[i].pid, sig) < 0 && errno == ESRCH &&
            !J.ranks[i].exited)
            kill(J.ranks[i].pid, sig); /* not yet in its own group */
    }
}

static int groups_alive(void)
{
    for (int i = 0; i < J.n; i++)
        if (J.ranks[i].pid > 0 && kill(-J.ranks[i].pid, 0) == 0)
            return 1;
    return 0;
}

/* First failure decides the exit status; then every rank is told to go. */
void run_end_job(int status)
{
    if (J.final_status < 0)
        J.final_status = status;
    if (J.terminating)
        return;
    J.terminating = 1;
    J.term_at = tlm_util_now();
    if (J.live > 0)
        verbose("ending the job: SIGTERM to %d running ranks", J.live);
    signal_groups(SIGTERM);
}

static void describe(const rank_t *r, int rank, char *buf, size_t cap)
{
    int sig = WIFSIGNALED(r->wstatus) ? WTERMSIG(r->wstatus) : 0;
    if (sig)
        snprintf(buf, cap, "rank %d (pid %ld) killed by signal %d (%s)",
                 rank, (long)r->pid, sig, strsignal(sig));
    else
        snprintf(buf, cap, "rank %d (pid %ld) exited with status %d", rank,
                 (long)r->pid, WEXITSTATUS(r->wstatus));
}

static void rank_exited(int rank)
{
    rank_t *r = &J.ranks[rank];
    char what[160];
    describe(r, rank, what, sizeof(what));
    int code = WIFSIGNALED(r->wstatus) ? 128 + WTERMSIG(r->wstatus)
                                       : WEXITSTATUS(r->wstatus);
    if (code != 0 && !J.terminating) {
        run_say("%s", what);
        run_kvs_note_dead(rank);
        if (J.final_status < 0)
            J.final_status = code;
        if (!J.keep_going)
            run_end_job(code);
    } else {
        verbose("%s", what);
    }
    run_mark_gone(rank, "%s", what);
}

static int find_rank(pid_t pid)
{
    for (int i = 0; i < J.n; i++)
        if (J.ranks[i].pid == pid)
            return i;
    return -1;
}

static void reap(void)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        int i = find_rank(pid);
        if (i < 0)
            continue; /* an orphan of a rank (we are a subreaper) */
        rank_t *r = &J.ranks[i];
        /* what it sent before dying (an ABORT, a FENCE) comes first */
        if (r->conn)
            run_conn_read(r->conn);
        r->exited = 1;
        r->wstatus = st;
        J.live--;
        rank_exited(i);
    }
}

static void on_signal(int sig)
{
    if (sig == SIGCHLD) {
        reap();
        return;
    }
    if (J.terminating) {
        if (!J.killed) {
            run_say("caught signal %d (%s) again, killing the job", sig,
                    strsignal(sig));
            J.term_at = tlm_util_now() - KILL_GRACE; /* SIGKILL right away */
        }
        return;
    }
    run_say("caught signal %d (%s), ending the job", sig, strsignal(sig));
    run_end_job(128 + sig);
}

static void write_all_fd(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* A rank on another host gets the secret as the first line of the remote
 * shell's stdin (its command reads it into TELEMEM_KVS_SECRET): a command
 * line is visible to every user of both machines, a pipe is not.  Rank 0
 * then reads the launcher's stdin through a helper that copies it on; the
 * others read nothing more. */
static void secret_to_stdin(int rank)
{
    int p[2];
    if (pipe(p) < 0) {
        char msg[160];
        int n = snprintf(msg, sizeof(msg), "telemem-run: rank %d: pipe: %s\n",
                         rank, strerror(errno));
        write_all_fd(2, msg, (size_t)n);
        _exit(EXIT_INTERNAL);
    }
    char line[WIRE_SECRET_HEX + 2];
    int n = snprintf(line, sizeof(line), "%s\n", J.secret);
    if (rank != 0) {
        write_all_fd(p[1], line, (size_t)n); /* fits the pipe's buffer */
    } else {
        pid_t h = fork();
        if (h == 0) {
            close(p[0]);
            write_all_fd(p[1], line, (size_t)n);
            char buf[65536];
            ssize_t k;
            while ((k = read(0, buf, sizeof(buf))) > 0 ||
                   (k < 0 && errno == EINTR))
                if (k > 0)
                    write_all_fd(p[1], buf, (size_t)k);
            _exit(0);
        }
    }
    close(p[1]);
    dup2(p[0], 0);
    close(p[0]);
}

static void child(int rank, int out_pipe[2], int err_pipe[2])
{
    char buf[32];
    setpgid(0, 0);
    /* no rank outlives a launcher killed by SIGKILL */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != J.self)
        _exit(EXIT_INTERNAL);
    sigprocmask(SIG_SETMASK, &J.orig_mask, NULL);
    setrlimit(RLIMIT_NOFILE, &J.orig_nofile);
    if (J.bind && !(J.nhosts && !J.hosts[J.ranks[rank].host].local)) {
        int c = run_bind_cpu(rank); /* run_bind.c */
        if (c >= 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof(one), &one); /* best effort */
        }
    }
    if (rank != 0) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd >= 0 && fd != 0) {
            dup2(fd, 0);
            close(fd);
        }
    }
    if (J.tag_output) {
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
    }
    if (J.nhosts && !J.hosts[J.ranks[rank].host].local) {
        secret_to_stdin(rank);
        char **av = run_hosts_rsh_argv(rank);
        execvp(av[0], av);
        char msg[512];
        int n = snprintf(msg, sizeof(msg), "telemem-run: rank %d: exec %s "
                         "(--rsh): %s\n", rank, av[0], strerror(errno));
        ssize_t w = write(2, msg, (size_t)n);
        (void)w;
        _exit(EXIT_NOTFOUND);
    }
    snprintf(buf, sizeof(buf), "%d", rank);
    setenv("TELEMEM_RANK", buf, 1);
    snprintf(buf, sizeof(buf), "%d", J.n);
    setenv("TELEMEM_NRANKS", buf, 1);
    setenv("TELEMEM_KVS", J.addr, 1);
    setenv("TELEMEM_JOBID", J.jobid, 1);
    setenv("TELEMEM_KVS_SECRET", J.secret, 1);
    execv(J.path, J.argv);
    char msg[512];
    int n = snprintf(msg, sizeof(msg), "telemem-run: rank %d: exec %s: %s\n",
                     rank, J.path, strerror(errno));
    ssize_t w = write(2, msg, (size_t)n);
    (void)w;
    _exit(EXIT_NOTFOUND);
}

static int start_rank(int rank)
{
    int op[2] = {-1, -1}, ep[2] = {-1, -1};
    if (J.tag_output &&
        (pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)) {
        run_say("pipe for rank %d: %s", rank, strerror(errno));
        if (op[0] >= 0) {
            close(op[0]);
            close(op[1]);
        }
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        run_say("fork for rank %d: %s", rank, strerror(errno));
        if (J.tag_output) {
            close(op[0]); close(op[1]); close(ep[0]); close(ep[1]);
        }
        return -1;
    }
    if (pid == 0)
        child(rank, op, ep);
    setpgid(pid, pid); /* both sides, whichever runs first */
    rank_t *r = &J.ranks[rank];
    r->pid = pid;
    J.live++;
    J.started++;
    if (J.tag_output) {
        close(op[1]);
        close(ep[1]);
        fcntl(op[0], F_SETFL, O_NONBLOCK);
        fcntl(ep[0], F_SETFL, O_NONBLOCK);
        r->io[0] = (stream_t){.fd = op[0], .dst = 1};
        r->io[1] = (stream_t){.fd = ep[0], .dst = 2};
    }
    verbose("rank %d: pid %ld", rank, (long)pid);
    return 0;
}

/* ---- set-up and clean-up ------------------------------------------------ */

static void make_jobid(void)
{
    uint32_t rnd;
    if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rnd = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u;
    }
    snprintf(J.jobid, sizeof(J.jobid), "%ldx%08x", (long)J.self,
             (unsigned)rnd);
    /* The job's secret: what a rank proves to join the store
     * (docs/bootstrap.md).  No fallback: without it nobody joins. */
    unsigned char key[WIRE_SECRET_HEX / 2];
    if (run_random(key, sizeof(key)) != 0) {
        run_say("getrandom: %s", strerror(errno));
        exit(EXIT_INTERNAL);
    }
    for (size_t i = 0; i < sizeof(key); i++)
        sprintf(J.secret + 2 * i, "%02x", key[i]);
    memset(key, 0, sizeof(key));
}

void run_remove_socket(void)
{
    if (!J.sock_dir[0] || getpid() != J.self)
        return; /* a child that exits through exit() leaves it alone */
    char path[sizeof(J.sock_dir) + 8];
    snprintf(path, sizeof(path), "%s/kvs", J.sock_dir);
    unlink(path);
    rmdir(J.sock_dir);
    J.sock_dir[0] = '\0';
}

/* All ranks on this host: a Unix socket in a directory of mode 0700, so
 * only this user can even connect. */
static int open_unix_listener(void)
{
    const char *tmp = getenv("TMPDIR");
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    for (int i = 0; i < 2; i++, tmp = "/tmp") {
        if (!tmp || !tmp[0] ||
            (size_t)snprintf(J.sock_dir, sizeof(J.sock_dir),
                             "%s/telemem-run-XXXXXX", tmp) >= sizeof(J.sock_dir) ||
            strlen(J.sock_dir) + 5 >= sizeof(sa.sun_path))
            continue;
        if (mkdtemp(J.sock_dir))
            break;
        J.sock_dir[0] = '\0';
    }
    if (!J.sock_dir[0]) {
        run_say("cannot create a directory for the store's socket in "
                "$TMPDIR or /tmp: %s", strerror(errno));
        exit(EXIT_INTERNAL);
    }
    atexit(run_remove_socket);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/kvs", J.sock_dir);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (void *)&sa, sizeof(sa)) < 0 ||
        listen(fd, SOMAXCONN) < 0) {
        run_say("kvs socket %s: %s", sa.sun_path, strerror(errno));
        exit(EXIT_INTERNAL);
    }
    J.listen_unix = 1;
    snprintf(J.addr, sizeof(J.addr), "unix:%s", sa.sun_path);
    return fd;
}

static void open_listener(void)
{
    int remote = J.nhosts && run_hosts_any_remote();
    if (!J.kvs_host && !remote) {
        J.listen_fd = open_unix_listener();
        return;
    }
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    char host[64];
    if (J.kvs_host)
        snprintf(host, sizeof(host), "%s", J.kvs_host);
    else if (run_hosts_default_addr(host, sizeof(host)) != 0)
        run_bad_usage("no IPv4 address for other hosts to reach the store: "
                      "give one with --kvs-addr");
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    /* exactly the address asked for, never all of them */
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        run_bad_usage("--kvs-addr: '%s' is not an IPv4 address", host);
    sa.sin_port = 0; /* the kernel picks */
    J.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                         0);
    if (J.listen_fd < 0 || bind(J.listen_fd, (void *)&sa, sizeof(sa)) < 0 ||
        listen(J.listen_fd, SOMAXCONN) < 0 ||
        getsockname(J.listen_fd, (void *)&sa, &sl) < 0) {
        run_say("kvs socket on %s: %s", host, strerror(errno));
        exit(EXIT_INTERNAL);
    }
    snprintf(J.addr, sizeof(J.addr), "%s:%u", host,
             (unsigned)ntohs(sa.sin_port));
}

static void setup_signals(void)
{
    sigset_t set;
    /* an inherited SIG_IGN would make the kernel reap ranks for us */
    signal(SIGCHLD, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    /* a signal ignored at start (nohup, a shell's background job) stays
     * ignored: blocking it would make signalfd see it after all */
    static const int ends[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
        struct sigaction sa;
        if (sigaction(ends[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            continue;
        sigaddset(&set, ends[i]);
    }
    sigaddset(&set, SIGPIPE); /* EPIPE instead; ranks get the old mask */
    sigprocmask(SIG_BLOCK, &set, &J.orig_mask);
    sigdelset(&set, SIGPIPE);
    J.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (J.sig_fd < 0) {
        run_say("signalfd: %s", strerror(errno));
        exit(EXIT_INTERNAL);
    }
    /* orphans of ranks come to us, so we can see them end */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* One socket and, with --tag-output, two pipes per rank, and the
 * connections that have not joined yet. */
static void raise_fd_limit(void)
{
    getrlimit(RLIMIT_NOFILE, &J.orig_nofile);
    rlim_t need = (rlim_t)J.n * (J.tag_output ? 4 : 2) + MAX_PENDING + 64;
    if (J.orig_nofile.rlim_cur != RLIM_INFINITY &&
        J.orig_nofile.rlim_cur < need) {
        struct rlimit rl = J.orig_nofile;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
            run_say("%d ranks need %lu open files, the hard limit is %lu "
                    "(ulimit -Hn)", J.n, (unsigned long)need,
                    (unsigned long)rl.rlim_max);
            exit(EXIT_INTERNAL);
        }
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
            run_say("setrlimit(RLIMIT_NOFILE, %lu): %s", (unsigned long)need,
                    strerror(errno));
            exit(EXIT_INTERNAL);
        }
    }
}

/* The library unlinks its /dev/shm objects; this is for ranks that crash. */
static void cleanup_shm(void)
{
    char prefix[WIRE_MAX_JOBID + 16];
    int pl = snprintf(prefix, sizeof(prefix), "telemem-%s-", J.jobid);
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)pl) != 0)
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            verbose("removed /dev/shm/%s", e->d_name);
        else if (errno != ENOENT)
            run_say("cannot remove /dev/shm/%s: %s", e->d_name,
                    strerror(errno));
    }
    closedir(d);
}

/* ---- main loop ---------------------------------------------------------- */

enum { SRC_SIG, SRC_LISTEN, SRC_CONN, SRC_STREAM };

typedef struct src {
    int kind;
    int rank;
    void *p;
} src_t;

static int streams_open(void)
{
    if (!J.tag_output)
        return 0;
    for (int i = 0; i < J.n; i++)
        if (J.ranks[i].io[0].fd >= 0 || J.ranks[i].io[1].fd >= 0)
            return 1;
    return 0;
}

static double min_t(double a, double b)
{
    return a <= 0 ? b : (b <= 0 ? a : (a < b ? a : b));
}

/* Time-driven steps; returns the next time something is due (0: none). */
static double timers(void)
{
    double t = tlm_util_now(), next = 0;
    if (J.deadline > 0 && !J.terminating) {
        if (t >= J.deadline) {
            run_say("timeout: the job ran longer than %g s, ending it",
                    J.timeout);
            run_end_job(EXIT_TIMEOUT);
        } else {
            next = J.deadline;
        }
    }
    if (J.terminating && !J.killed) {
        if (t >= J.term_at + KILL_GRACE) {
            if (J.live > 0 || groups_alive())
                verbose("SIGKILL to what is left of the job");
            signal_groups(SIGKILL);
            J.killed = 1;
        } else {
            next = min_t(next, J.term_at + KILL_GRACE);
        }
    }
    next = min_t(next, run_conn_timers(t));
    if (J.listen_pause > t)
        next = min_t(next, J.listen_pause);
    for (int i = 0; i < J.n; i++) {
        rank_t *r = &J.ranks[i];
        if (r->lost_at <= 0 || r->gone)
            continue;
        if (r->exited || t >= r->lost_at + LOST_GRACE)
            run_mark_gone(i, "rank %d (pid %ld) lost its connection to "
                          "the launcher", i, (long)r->pid);
        else
            next = min_t(next, r->lost_at + LOST_GRACE);
    }
    return next;
}

/* Is there anything left to wait for? */
static int job_running(void)
{
    if (J.live > 0)
        return 1;
    double t = tlm_util_now();
    if (J.terminating && J.term_at + 2 * KILL_GRACE > t && groups_alive())
        return 1; /* children of ranks still dying */
    if (J.drain_until == 0)
        J.drain_until = t + DRAIN_WAIT;
    return streams_open() && t < J.drain_until;
}

static int run(void)
{
    struct pollfd *pfd = NULL;
    src_t *src = NULL;
    size_t cap = 0;
    while (job_running()) {
        double next = timers();
        if (J.live == 0) /* waiting for orphans or output: check often */
            next = min_t(next, tlm_util_now() + 0.05);
        size_t need = 2 + J.nconns + 2 * (size_t)J.n;
        if (need > cap) {
            cap = need;
            pfd = run_xrealloc(pfd, cap * sizeof(*pfd));
            src = run_xrealloc(src, cap * sizeof(*src));
        }
        size_t k = 0;
        pfd[k] = (struct pollfd){.fd = J.sig_fd, .events = POLLIN};
        src[k++] = (src_t){SRC_SIG, -1, NULL};
        pfd[k] = (struct pollfd){.fd = J.listen_fd,
                                 .events = J.listen_pause > tlm_util_now()
                                               ? 0 : POLLIN};
        src[k++] = (src_t){SRC_LISTEN, -1, NULL};
        for (size_t i = 0; i < J.nconns; i++) {
            conn_t *c = J.conns[i];
            short ev = 0;
            if (run_conn_wants_input(c))
                ev |= POLLIN;
            if (c->out_off < c->out_len)
                ev |= POLLOUT;
            pfd[k] = (struct pollfd){.fd = c->fd, .events = ev};
            src[k++] = (src_t){SRC_CONN, -1, c};
        }
        for (int i = 0; J.tag_output && i < J.n; i++) {
            for (int j = 0; j < 2; j++) {
                stream_t *s = &J.ranks[i].io[j];
                if (s->fd < 0)
                    continue;
                pfd[k] = (struct pollfd){.fd = s->fd, .events = POLLIN};
                src[k++] = (src_t){SRC_STREAM, i, s};
            }
        }
        int ms = -1;
        if (next > 0)
            ms = tlm_util_poll_ms(next - tlm_util_now());
        int n = poll(pfd, k, ms);
        if (n < 0 && errno != EINTR) {
            run_say("poll: %s", strerror(errno));
            run_end_job(EXIT_INTERNAL);
            continue;
        }
        for (size_t i = 0; n > 0 && i < k; i++) {
            if (!pfd[i].revents)
                continue;
            switch (src[i].kind) {
            case SRC_SIG: {
                struct signalfd_siginfo si;
                while (read(J.sig_fd, &si, sizeof(si)) == sizeof(si))
                    on_signal((int)si.ssi_signo);
                reap(); /* signals coalesce: look anyway */
                break;
            }
            case SRC_LISTEN:
                run_accept();
                break;
            case SRC_CONN: {
                conn_t *c = src[i].p;
                if (c->dead)
                    break;
                if (pfd[i].revents & POLLOUT)
                    run_conn_flush(c);
                if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
                    run_conn_read(c);
                break;
            }
            case SRC_STREAM:
                run_stream_read(src[i].rank, src[i].p);
                break;
            }
        }
        /* ranks let out of a fence may have requests waiting */
        for (size_t i = 0; i < J.nconns; i++) {
            conn_t *c = J.conns[i];
            if (!c->dead && !c->in_fence && c->in_len > c->in_off)
                run_conn_process(c);
        }
        run_free_dead_conns();
    }
    free(pfd);
    free(src);
    return J.final_status < 0 ? 0 : J.final_status;
}

int main(int argc, char **argv)
{
    run_parse_args(argc, argv);
    run_resolve_prog(J.argv[0]);
    J.self = getpid();
    J.final_status = -1;
    J.ranks = run_xrealloc(NULL, (size_t)J.n * sizeof(*J.ranks));
    memset(J.ranks, 0, (size_t)J.n * sizeof(*J.ranks));
    for (int i = 0; i < J.n; i++)
        J.ranks[i].io[0].fd = J.ranks[i].io[1].fd = -1;
    if (J.nhosts)
        run_hosts_assign();
    run_bind_plan(); /* after the ranks have hosts */
    raise_fd_limit();
    make_jobid();
    setup_signals();
    open_listener();
    verbose("job %s: %d ranks of %s, store at %s", J.jobid, J.n, J.path,
            J.addr);
    if (J.timeout > 0)
        J.deadline = tlm_util_now() + J.timeout;
    for (int i = 0; i < J.n && !J.terminating; i++) {
        if (start_rank(i) < 0)
            run_end_job(EXIT_INTERNAL);
        /* keep the store and the exits moving while starting many ranks */
        if ((i & 63) == 63) {
            struct signalfd_siginfo si;
            while (read(J.sig_fd, &si, sizeof(si)) == sizeof(si))
                on_signal((int)si.ssi_signo);
            run_accept();
        }
    }
    if (J.started < J.n) {
        /* ranks never started count as gone for the fences */
        for (int i = J.started; i < J.n; i++)
            J.ranks[i].gone = 1;
        if (!J.any_gone) {
            J.any_gone = 1;
            snprintf(J.gone_text, sizeof(J.gone_text),
                     "the launcher could not start rank %d", J.started);
        }
    }
    int status = run();
    cleanup_shm();
    verbose("exit status %d", status);
    return status;
}

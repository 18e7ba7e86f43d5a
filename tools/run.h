/* run.h - telemem-run's shared state and the calls between its files:
 * telemem_run.c (ranks, set-up, main loop), run_opts.c (the command
 * line), run_calibrate.c (--calibrate), run_kvs.c (the key-value store
 * server), run_hosts.c (-H and the remote shell), run_bind.c (pinning
 * ranks to CPUs), run_output.c (--tag-output). */
#ifndef TLM_RUN_H
#define TLM_RUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#define RUN_VERSION "0.1.0"
#define MAX_RANKS 4096
#define KILL_GRACE 2.0   /* seconds between SIGTERM and SIGKILL */
#define LOST_GRACE 1.0   /* a dropped connection waits this long for the
                          * rank's exit status before it counts as dead */
#define DRAIN_WAIT 1.0   /* seconds to drain --tag-output pipes at the end */
#define EXIT_TIMEOUT 124
#define EXIT_INTERNAL 125
#define EXIT_NOTFOUND 127
#define EXIT_USAGE 2
/* Connections that have not joined yet (no valid HELLO): at most the
 * ranks yet to join plus MAX_PENDING at a time, the oldest is dropped for a
 * new one (a rank connects again), and each is dropped after JOIN_WAIT
 * seconds -- so idle connections cannot crowd out the ranks. */
#define MAX_PENDING 64
#define JOIN_WAIT 10.0
/* Replies queued for one rank beyond this: its further requests wait. */
#define MAX_OUT (1u << 20)
/* Refusals reported one by one; then only counted (a flood of strangers
 * must not flood the launcher's stderr). */
#define MAX_REFUSALS_SHOWN 8

#include <sched.h>

#include "boot/boot_wire.h" /* shared with the client */
#include "util/util.h"  /* tlm_util_now, tlm_util_poll_ms */

/* A rank's connection to the key-value store. */
typedef struct conn {
    int fd;
    int rank;          /* -1 until HELLO */
    double since;      /* accepted at (tlm_util_now) */
    int pending;       /* accepted, not joined (counted in J.npending) */
    unsigned char nonce[WIRE_NONCE]; /* the challenge sent to it */
    unsigned char *in; /* received bytes, in[in_off .. in_len) unparsed */
    size_t in_off, in_len, in_cap;
    unsigned char *out; /* replies not yet sent, out[out_off .. out_len) */
    size_t out_off, out_len, out_cap;
    int in_fence;      /* waiting in FENCE: later frames wait too */
    int closing;       /* close once out is flushed (refused, bad frame) */
    int dead;          /* closed: free at the end of the loop iteration */
} conn_t;

/* One --tag-output pipe (a rank's stdout or stderr). */
typedef struct stream {
    int fd;   /* read end, -1 at EOF */
    int dst;  /* 1 or 2 */
    int cont; /* the next bytes continue a line already started */
    char *part;
    size_t plen;
} stream_t;

typedef struct rank {
    pid_t pid;        /* 0: not started */
    int exited;
    int wstatus;
    conn_t *conn;
    int hello;        /* has joined the store */
    int gone;         /* can take no further part in a fence */
    double lost_at;   /* connection dropped without BYE, process alive */
    int host;         /* index in J.hosts (-H), 0 otherwise */
    stream_t io[2];
} rank_t;

typedef struct kv {
    struct kv *next;
    uint64_t hash;
    unsigned char *val;
    size_t vlen;
    char key[];
} kv_t;

#define MAX_HOSTS 1024

typedef struct run_host {
    char name[256];
    int slots;
    int local;        /* this machine: started without the remote shell */
} run_host_t;

/* The one job this launcher runs. */
typedef struct run_job {
    /* options */
    int n;
    double timeout;
    int keep_going;
    int bind;         /* pin ranks to CPUs (--bind; run_bind.c) */
    int ncpus;        /* CPUs in the launcher's affinity set */
    cpu_set_t cpus;
    cpu_set_t bind_set; /* the CPUs ranks are pinned to, in order */
    int tag_output;
    int verbose;
    char *const *argv;
    char *path;
    run_host_t *hosts; /* -H; NULL: every rank on this host */
    int nhosts;
    const char *rsh;   /* --rsh command ("ssh %h") */
    const char *kvs_host; /* --kvs-addr, or picked when hosts are remote */
    /* job */
    pid_t self;
    char jobid[WIRE_MAX_JOBID + 1];
    char secret[WIRE_SECRET_HEX + 1]; /* TELEMEM_KVS_SECRET */
    char addr[160];   /* TELEMEM_KVS: host:port or unix:PATH */
    char sock_dir[96]; /* the 0700 directory of a Unix socket, or "" */
    int listen_fd;
    int listen_unix;  /* the store is a Unix socket */
    double listen_pause; /* out of descriptors: accept again from then */
    int npending;     /* connections that have not joined yet */
    int joined;       /* ranks that joined the store */
    unsigned long refusals;
    int sig_fd;
    rank_t *ranks;
    int started;
    int live;         /* started and not yet reaped */
    conn_t **conns;
    size_t nconns, cap_conns;
    /* key-value store */
    kv_t **kv;
    size_t kv_cap, kv_n;
    int in_fence;     /* ranks waiting in the current fence */
    unsigned long fences;
    int any_gone;
    char gone_text[256];
    /* ending */
    int final_status; /* -1 until the first failure decides it */
    int terminating;
    double term_at;
    int killed;
    double deadline;  /* --timeout, 0 for none */
    double drain_until;
    sigset_t orig_mask;
    struct rlimit orig_nofile;
} run_job_t;

extern run_job_t J;

/* telemem_run.c */
void run_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define verbose(...)                                                       \
    do {                                                                   \
        if (J.verbose)                                                     \
            run_say(__VA_ARGS__);                                          \
    } while (0)
void *run_xrealloc(void *p, size_t n);
/* The first failure decides the exit status; every rank is told to go. */
void run_end_job(int status);
/* A rank died (killed, or exited with a non-zero status): its number is
 * added to the store's "telemem.gone" list, which survivors read. */
void run_kvs_note_dead(int rank);

/* run_opts.c: the options into J (exits on --help, --version and
 * --calibrate); J.path: prog found as execvp would (exit 127 if not); a
 * usage error (the message, a hint, exit status 2). */
void run_parse_args(int argc, char **argv);
void run_resolve_prog(const char *prog);
void run_bad_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* telemem-run --calibrate's options. */
typedef struct run_cal {
    const char *profile;  /* --calibrate=PROFILE, or NULL */
    int quick;            /* --quick */
    const char *hosts;    /* -H: the network phases between its first two
                           * hosts; NULL: this host's phases */
    const char *rsh;      /* --rsh */
    const char *kvs_addr; /* --kvs-addr, or NULL */
    double timeout;       /* --timeout per phase, 0: 600 s */
} run_cal_t;

/* run_calibrate.c: telemem-run --calibrate[=PROFILE]; exits. */
void run_calibrate(const run_cal_t *o) __attribute__((noreturn));

/* run_bind.c: decide J.bind and J.bind_set (after the options); the CPU
 * of rank r on this host, or -1. */
void run_bind_plan(void);
int run_bind_cpu(int rank);

/* run_kvs.c: connections of ranks to the store */
void run_accept(void);
void run_conn_read(conn_t *c);
void run_conn_flush(conn_t *c);
void run_conn_process(conn_t *c);
/* Rank can take no further part in a fence: fail every fence from now. */
void run_mark_gone(int rank, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void run_free_dead_conns(void);
/* Connections waiting to join for too long are dropped; the next time
 * that is due (0: none). */
double run_conn_timers(double now);
/* Can the store read more from c now (bounded buffers)? */
int run_conn_wants_input(const conn_t *c);
/* Fill buf with n random bytes (getrandom); 0, or -1 if none came. */
int run_random(void *buf, size_t n);

/* The Unix socket's path and directory go (nothing can connect any more):
 * once every rank joined, and at exit. */
void run_remove_socket(void);

/* run_hosts.c: -H host:slots,...; returns the slot total or -1 */
int run_hosts_parse(const char *list);
void run_hosts_assign(void);
int run_hosts_any_remote(void);
int run_hosts_default_addr(char *buf, size_t cap);
/* argv (malloc'ed) that starts rank on its host through the remote shell */
char **run_hosts_rsh_argv(int rank);

/* run_output.c */
void run_stream_read(int rank, stream_t *s);

#endif

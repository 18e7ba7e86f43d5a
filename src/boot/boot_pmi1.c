/* boot_pmi1.c - the PMI-1 launcher adapter: a client of PMI-1's
 * "simple" wire protocol on the socket PMI_FD (or PMI_PORT, Hydra's
 * -pmi-port), spoken by MPICH's Hydra mpiexec (and by Slurm's srun
 * --mpi=pmi2, which serves PMI-1 too).  No
 * library exists for it apart from MPI's own copies, so this is our own
 * small client; the protocol and what we use of it are in docs/bootstrap.md
 * ("PMI-1"). */
#define TLM_LOG_SUBSYS "boot"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "telemem.h"
#include "boot/boot_adapter.h"
#include "boot/boot_io.h"
#include "boot/boot_text.h"
#include "util/log.h"
#include "util/util.h"

/* A command line and its reply fit in 1024 bytes: Slurm's server reads a
 * command with one read() of at most 1024 bytes. */
#define LINE_MAX_LEN 1024
#define OPEN_WINDOW 10.0 /* seconds the first replies may take, at least */

/* The launcher closes the PMI socket at finalize (and Hydra kills a rank
 * that exits without it): one join per process. */
static int finalized;

typedef struct boot_pmi1 {
    int fd;
    int rank;
    int size;
    int own_fd; /* connected by us (PMI_PORT): closed at the end */
    int broken; /* the stream is out of step: every call fails */
    double timeout;
    char kvsname[257];
    tlm_boot_text_t text;
    char in[2 * LINE_MAX_LEN]; /* received, not yet consumed */
    size_t in_len;
} boot_pmi1_t;

static double deadline_of(const boot_pmi1_t *b, double at_least)
{
    double t = TLM_MAX(b->timeout, at_least);
    return b->timeout > 0 ? tlm_util_now() + t : 0;
}

/* The PMI socket, for boot_io.c. */
static tlm_boot_io_t io_of(const boot_pmi1_t *b)
{
    tlm_boot_io_t io = {.fd = b->fd, .timeout = b->timeout, .proto = "pmi1",
                        .addr = NULL, .fd_name = "PMI_FD"};
    return io;
}

static int send_line(boot_pmi1_t *b, const char *line, double deadline,
                     const char *what)
{
    tlm_boot_io_t io = io_of(b);
    int err = 0;
    int rc = tlm_boot_io_send(&io, line, strlen(line), deadline, what, NULL,
                              &err);
    if (rc == TLM_BOOT_IO_LOST) {
        tlm_error("pmi1 %s: send on PMI_FD %d: %s", what, b->fd,
                  err ? strerror(err) : "connection closed");
        rc = TELEMEM_ERR_BOOTSTRAP;
    }
    if (rc != TELEMEM_OK)
        b->broken = 1; /* a late reply would be taken for the next */
    return rc;
}

/* Receive one reply line (without its newline) into out. */
static int recv_line(boot_pmi1_t *b, char *out, size_t cap, double deadline,
                     const char *what)
{
    tlm_boot_io_t io = io_of(b);
    for (;;) {
        char *nl = memchr(b->in, '\n', b->in_len);
        if (nl) {
            size_t n = (size_t)(nl - b->in);
            if (n >= cap) {
                tlm_error("pmi1 %s: a %zu-byte reply from the launcher", what,
                          n);
                b->broken = 1;
                return TELEMEM_ERR_BOOTSTRAP;
            }
            memcpy(out, b->in, n);
            out[n] = '\0';
            b->in_len -= n + 1;
            memmove(b->in, nl + 1, b->in_len);
            return TELEMEM_OK;
        }
        if (b->in_len == sizeof(b->in)) {
            tlm_error("pmi1 %s: a reply without an end of line", what);
            b->broken = 1;
            return TELEMEM_ERR_BOOTSTRAP;
        }
        size_t got = 0;
        int err = 0;
        int rc = tlm_boot_io_recv(&io, b->in + b->in_len,
                                  sizeof(b->in) - b->in_len, deadline, what,
                                  &got, &err);
        if (rc == TELEMEM_OK) {
            b->in_len += got;
            continue;
        }
        if (rc == TLM_BOOT_IO_LOST) {
            tlm_error("pmi1 %s: the launcher closed PMI_FD %d%s%s", what,
                      b->fd, err ? ": " : "", err ? strerror(err) : "");
            rc = TELEMEM_ERR_BOOTSTRAP;
        }
        b->broken = 1; /* a late reply would be taken for the next */
        return rc;
    }
}

/* The value of field name in a reply ("cmd=x rc=0 name=value ..."), copied
 * to out; -1 when the reply has no such field or it does not fit. */
static int field(const char *reply, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = reply; p && *p;) {
        while (*p == ' ')
            p++;
        size_t tl = strcspn(p, " ");
        if (tl > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            size_t vl = tl - nl - 1;
            if (vl >= cap)
                return -1;
            memcpy(out, p + nl + 1, vl);
            out[vl] = '\0';
            return 0;
        }
        p += tl;
    }
    return -1;
}

/* One exchange: send line, read the reply, check it is `expect` and, when
 * it carries an rc, that rc is 0 (else, when rc_p is given, *rc_p is set
 * to 1 and the call returns TELEMEM_OK). */
static int command(boot_pmi1_t *b, const char *line, const char *expect,
                   char *reply, size_t cap, int *rc_p, double deadline)
{
    char what[32];
    snprintf(what, sizeof(what), "%.*s", (int)strcspn(line + 4, " \n"),
             line + 4);
    if (b->broken) {
        tlm_error("pmi1 %s: the launcher's PMI stream is out of step after "
                  "an earlier error", what);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int rc = send_line(b, line, deadline, what);
    if (rc == TELEMEM_OK)
        rc = recv_line(b, reply, cap, deadline, what);
    if (rc != TELEMEM_OK)
        return rc;
    char cmd[32], st[16];
    if (field(reply, "cmd", cmd, sizeof(cmd)) < 0 || strcmp(cmd, expect)) {
        tlm_error("pmi1 %s: the launcher answered \"%.80s\" (expected "
                  "cmd=%s)", what, reply, expect);
        b->broken = 1;
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int code = 0; /* no rc: success; an rc that is not 0: failure */
    if (field(reply, "rc", st, sizeof(st)) == 0) {
        char *end;
        long v = strtol(st, &end, 10);
        code = end != st && *end == '\0' && v == 0 ? 0 : 1;
    }
    if (code != 0 && rc_p == NULL) {
        tlm_error("pmi1 %s: the launcher refused: \"%.200s\"", what, reply);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    if (rc_p)
        *rc_p = code;
    return TELEMEM_OK;
}

static int pmi1_put_str(void *ctx, const char *key, const char *val)
{
    boot_pmi1_t *b = ctx;
    char line[LINE_MAX_LEN + 1], reply[LINE_MAX_LEN + 1];
    int n = snprintf(line, sizeof(line), "cmd=put kvsname=%s key=%s "
                     "value=%s\n", b->kvsname, key, val);
    if (n < 0 || n > LINE_MAX_LEN) { /* text.val_max prevents it */
        tlm_error("pmi1 put %s: a %d-byte line", key, n);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return command(b, line, "put_result", reply, sizeof(reply), NULL,
                   deadline_of(b, 0));
}

static int pmi1_get_str(void *ctx, int owner, const char *key, char *val,
                        size_t cap)
{
    boot_pmi1_t *b = ctx;
    char line[LINE_MAX_LEN + 1], reply[LINE_MAX_LEN + 1];
    snprintf(line, sizeof(line), "cmd=get kvsname=%s key=%s\n", b->kvsname,
             key);
    int code = 0;
    int rc = command(b, line, "get_result", reply, sizeof(reply), &code,
                     deadline_of(b, 0));
    if (rc != TELEMEM_OK)
        return rc;
    if (code != 0) /* Hydra says -1 "key_..._not_found", Slurm 1 */
        return TELEMEM_ERR_NOT_FOUND;
    if (field(reply, "value", val, cap) < 0) {
        tlm_error("pmi1 get %s: the launcher's reply has no value that "
                  "fits: \"%.80s\"", key, reply);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

static int int_of(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* init, get_maxes, get_appnum, get_my_kvsname. */
static int handshake(boot_pmi1_t *b)
{
    char reply[LINE_MAX_LEN + 1], v[300];
    double deadline = deadline_of(b, OPEN_WINDOW);
    int rc = command(b, "cmd=init pmi_version=1 pmi_subversion=1\n",
                     "response_to_init", reply, sizeof(reply), NULL,
                     deadline);
    if (rc == TELEMEM_OK)
        rc = command(b, "cmd=get_maxes\n", "maxes", reply, sizeof(reply),
                     NULL, deadline);
    if (rc != TELEMEM_OK)
        return rc;
    int kvs_max = 0, key_max = 0, val_max = 0;
    if (field(reply, "kvsname_max", v, sizeof(v)) < 0 ||
        int_of(v, 1, 1 << 20, &kvs_max) < 0 ||
        field(reply, "keylen_max", v, sizeof(v)) < 0 ||
        int_of(v, 1, 1 << 20, &key_max) < 0 ||
        field(reply, "vallen_max", v, sizeof(v)) < 0 ||
        int_of(v, 1, 1 << 20, &val_max) < 0 || key_max < 33 ||
        val_max < 64) {
        tlm_error("pmi1 get_maxes: \"%.200s\" (Telemem needs keys of 32 "
                  "and values of 63 characters at least)", reply);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    rc = command(b, "cmd=get_appnum\n", "appnum", reply, sizeof(reply),
                 NULL, deadline);
    if (rc == TELEMEM_OK)
        rc = command(b, "cmd=get_my_kvsname\n", "my_kvsname", reply,
                     sizeof(reply), NULL, deadline);
    if (rc != TELEMEM_OK)
        return rc;
    if (field(reply, "kvsname", b->kvsname, sizeof(b->kvsname)) < 0 ||
        !b->kvsname[0]) {
        tlm_error("pmi1 get_my_kvsname: no usable name in \"%.200s\"",
                  reply);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    /* A put line is "cmd=put kvsname=K key=k value=v\n": keep it within
     * one read of the server. */
    size_t line_room = LINE_MAX_LEN - 30 - strlen(b->kvsname) -
                       TLM_BOOT_TEXT_KEY_MAX;
    b->text = (tlm_boot_text_t){
        .ctx = b,
        .put_str = pmi1_put_str,
        .get_str = pmi1_get_str,
        .key_max = TLM_MIN((size_t)key_max - 1, TLM_BOOT_TEXT_KEY_MAX),
        .val_max = TLM_MIN(TLM_MIN((size_t)val_max - 1, line_room),
                           TLM_BOOT_TEXT_VAL_MAX),
    };
    return TELEMEM_OK;
}

/* Hydra's -pmi-port mode: connect to PMI_PORT ("host:port"), introduce
 * this process by PMI_ID, and learn size and rank from the replies. */
static int connect_port(boot_pmi1_t *b, const char *port_s, const char *id_s)
{
    char host[256], reply[LINE_MAX_LEN + 1], v[32];
    const char *colon = strrchr(port_s, ':');
    int id;
    if (!colon || colon == port_s || (size_t)(colon - port_s) >= sizeof(host)
        || int_of(id_s, 0, 1 << 30, &id) < 0) {
        tlm_error("pmi1: PMI_PORT \"%s\" / PMI_ID \"%s\": not host:port "
                  "and a number", port_s, id_s ? id_s : "");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    memcpy(host, port_s, (size_t)(colon - port_s));
    host[colon - port_s] = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(host, colon + 1, &hints, &res);
    if (gai != 0) {
        tlm_error("pmi1: PMI_PORT %s: %s", port_s, gai_strerror(gai));
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int err = 0;
    for (struct addrinfo *ai = res; ai && b->fd < 0; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                        ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            b->fd = fd;
            break;
        }
        err = errno;
        close(fd);
    }
    freeaddrinfo(res);
    if (b->fd < 0) {
        tlm_error("pmi1: connect to PMI_PORT %s: %s", port_s, strerror(err));
        return TELEMEM_ERR_BOOTSTRAP;
    }
    b->own_fd = 1;
    char line[64];
    snprintf(line, sizeof(line), "cmd=initack pmiid=%d\n", id);
    double deadline = deadline_of(b, OPEN_WINDOW);
    int rc = command(b, line, "initack", reply, sizeof(reply), NULL,
                     deadline);
    /* then "cmd=set size=N", "cmd=set rank=R", "cmd=set debug=D" */
    int bad = 0;
    for (int i = 0; rc == TELEMEM_OK && i < 3; i++) {
        rc = recv_line(b, reply, sizeof(reply), deadline, "initack");
        if (rc == TELEMEM_OK && field(reply, "size", v, sizeof(v)) == 0)
            bad |= int_of(v, 1, 1 << 30, &b->size) < 0;
        if (rc == TELEMEM_OK && field(reply, "rank", v, sizeof(v)) == 0)
            bad |= int_of(v, 0, 1 << 30, &b->rank) < 0;
    }
    if (rc == TELEMEM_OK && (bad || b->size < 1 || b->rank < 0 ||
                             b->rank >= b->size)) {
        tlm_error("pmi1 initack: rank %d of %d from the launcher", b->rank,
                  b->size);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return rc;
}

/* PMI_FD, PMI_RANK and PMI_SIZE: a socket the launcher opened for us. */
static int use_fd(boot_pmi1_t *b, const char *fd_s, const char *rank_s,
                  const char *size_s)
{
    if (int_of(fd_s, 0, 1 << 30, &b->fd) < 0 ||
        int_of(size_s, 1, 1 << 30, &b->size) < 0 ||
        int_of(rank_s, 0, b->size - 1, &b->rank) < 0) {
        tlm_error("pmi1: PMI_FD \"%s\", PMI_RANK \"%s\", PMI_SIZE \"%s\": "
                  "not a socket, a rank and a size in range", fd_s,
                  rank_s ? rank_s : "", size_s ? size_s : "");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int type = 0;
    socklen_t tl = sizeof(type);
    errno = 0;
    if (getsockopt(b->fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
        type != SOCK_STREAM) {
        tlm_error("pmi1: PMI_FD %d is not a stream socket%s%s", b->fd,
                  errno ? ": " : "", errno ? strerror(errno) : "");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

static int pmi1_open(tlm_boot_env_fn_t *env, double timeout, void **a_p,
                     tlm_boot_join_t *join)
{
    if (finalized) {
        tlm_error("pmi1: this process left its job already "
                  "(telemem_finalize): under a PMI launcher "
                  "telemem_initialize runs once per process");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    const char *fd_s = env ? env("PMI_FD") : NULL;
    const char *port_s = env ? env("PMI_PORT") : NULL;
    boot_pmi1_t *b = calloc(1, sizeof(*b));
    if (!b) {
        tlm_error("pmi1: out of memory");
        return TELEMEM_ERR_NO_MEMORY;
    }
    b->fd = -1;
    b->rank = -1;
    b->timeout = timeout > 0 ? timeout : 0;
    int rc;
    if (fd_s && *fd_s)
        rc = use_fd(b, fd_s, env("PMI_RANK"), env("PMI_SIZE"));
    else if (port_s && *port_s)
        rc = connect_port(b, port_s, env("PMI_ID"));
    else {
        tlm_error("pmi1: neither PMI_FD nor PMI_PORT is set (started by a "
                  "PMI-1 launcher such as MPICH's mpiexec?)");
        rc = TELEMEM_ERR_BOOTSTRAP;
    }
    if (rc == TELEMEM_OK)
        rc = handshake(b);
    if (rc != TELEMEM_OK) {
        if (b->own_fd)
            close(b->fd);
        free(b);
        return rc == TELEMEM_ERR_TIMED_OUT ? TELEMEM_ERR_BOOTSTRAP : rc;
    }
    join->rank = b->rank;
    join->size = b->size;
    tlm_boot_text_jobid("m", b->kvsname, join->jobid, sizeof(join->jobid));
    tlm_debug("rank %d of %d joined PMI-1 job %s", b->rank, b->size,
              b->kvsname);
    *a_p = b;
    return TELEMEM_OK;
}

static int pmi1_put(void *a, const char *key, const void *val, size_t len)
{
    boot_pmi1_t *b = a;
    return tlm_boot_text_put(&b->text, key, val, len);
}

static int pmi1_fence(void *a)
{
    boot_pmi1_t *b = a;
    char reply[LINE_MAX_LEN + 1];
    return command(b, "cmd=barrier_in\n", "barrier_out", reply,
                   sizeof(reply), NULL, deadline_of(b, 0));
}

static int pmi1_get(void *a, int owner, const char *key, void *buf,
                    size_t cap, size_t *len_p)
{
    boot_pmi1_t *b = a;
    return tlm_boot_text_get(&b->text, owner, key, buf, cap, len_p);
}

static void pmi1_abort(void *a, int status, const char *why)
{
    boot_pmi1_t *b = a;
    char line[64];
    tlm_error("abort with status %d: %s", status, why);
    /* no reply: the launcher ends the job */
    snprintf(line, sizeof(line), "cmd=abort exitcode=%d\n", status);
    if (!b->broken)
        send_line(b, line, tlm_util_now() + 1.0, "abort");
    b->broken = 1; /* the job is ending: no finalize */
}

static void pmi1_close(void *a)
{
    boot_pmi1_t *b = a;
    char reply[LINE_MAX_LEN + 1];
    /* Best effort (the job is over for this rank), but a launcher that
     * writes its answer after the rank has gone fails the job (Hydra's
     * proxy: "error sending PMI response", seen once under load with a
     * wait of 1 s): wait as long as for the first replies. */
    if (!b->broken)
        command(b, "cmd=finalize\n", "finalize_ack", reply, sizeof(reply),
                NULL, tlm_util_now() + TLM_MAX(b->timeout, OPEN_WINDOW));
    finalized = 1;
    if (b->own_fd)
        close(b->fd);
    free(b);
}

const tlm_boot_adapter_ops_t tlm_boot_pmi1_ops = {
    .name = "pmi1",
    .open = pmi1_open,
    .put = pmi1_put,
    .fence = pmi1_fence,
    .get = pmi1_get,
    .abort_job = pmi1_abort,
    .close = pmi1_close,
};

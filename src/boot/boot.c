/* boot.c - bootstrap client: the telemem-run key-value store over a
 * Unix socket or TCP, joined by proving the job's secret (docs/bootstrap.md),
 * a launcher adapter when another launcher started the job
 * (boot_adapter.h: PMIx, PMI-2, PMI-1; chosen by boot_select.c),
 * or a local table in singleton mode. */
#define TLM_LOG_SUBSYS "boot"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "telemem.h"
#include "boot/boot.h"
#include "util/log.h"
#include "util/util.h"

#include "boot/boot_io.h"
#include "boot/boot_select.h"
#include "boot/boot_wire.h"

#define CONNECT_WINDOW 10.0 /* seconds to connect and join, at least */
#define ABORT_WAIT 5.0      /* seconds to wait for the launcher's ack */

typedef struct boot_kv {
    char *key;
    void *val;
    size_t len;
} boot_kv_t;

struct tlm_boot {
    int rank;
    int size;
    double timeout;
    char jobid[WIRE_MAX_JOBID + 1];
    char secret[WIRE_SECRET_HEX + 1];
    char addr[256];
    int fd;          /* -1: singleton */
    int broken;      /* stream lost or out of step: every call fails */
    int lost;        /* the launcher closed or reset the connection */
    int joining;     /* in join(): a lost connection is retried, not
                      * reported */
    int fence_state; /* FENCE_* below */
    int fence_result;
    unsigned stale;  /* replies still due for GETs/ABORTs that timed out */
    bool dead_unknown; /* tlm_boot_dead asks no more (the store failed) */
    char *dead_list;   /* tlm_boot_dead's answer, WIRE_MAX_VAL + 1 bytes */
    unsigned char *in;
    size_t in_len;
    const tlm_boot_adapter_ops_t *ad_ops;
    void *ad; /* non-NULL: every call goes to this launcher adapter */
    /* singleton store */
    boot_kv_t *kv;
    size_t nkv;
    size_t cap_kv;
};

/* A fence that timed out is still under way at the launcher: the next
 * tlm_boot_fence() waits for that one instead of starting another. */
enum { FENCE_IDLE = 0, FENCE_PENDING, FENCE_DONE };

static double deadline_of(const tlm_boot_t *b)
{
    return b->timeout > 0 ? tlm_util_now() + b->timeout : 0;
}

/* The stream to the launcher, for boot_io.c. */
static tlm_boot_io_t io_of(const tlm_boot_t *b)
{
    tlm_boot_io_t io = {.fd = b->fd, .timeout = b->timeout, .proto = "kvs",
                        .addr = b->addr, .fd_name = NULL};
    return io;
}

/* The launcher closed or reset the stream (err: an errno, 0 for an
 * orderly close, told as closed): "kvs <what>: <who> at <addr>: <cause>",
 * at debug level while joining (the caller tries again), and the stream
 * is unusable from now on (the caller returns TELEMEM_ERR_BOOTSTRAP). */
static void stream_lost(tlm_boot_t *b, const char *what, const char *who,
                       int err, const char *closed)
{
    const char *why = err ? strerror(err) : closed;
    if (b->joining)
        tlm_debug("kvs %s: %s at %s: %s", what, who, b->addr, why);
    else
        tlm_error("kvs %s: %s at %s: %s", what, who, b->addr, why);
    b->broken = b->lost = 1;
}

/* Send one whole frame.  A frame cut short leaves the stream unusable. */
static int send_frame(tlm_boot_t *b, int op, const void *body1, size_t len1,
                      const void *body2, size_t len2, double deadline,
                      const char *what)
{
    unsigned char hdr[WIRE_HDR];
    put_u32(hdr, (uint32_t)(len1 + len2));
    hdr[4] = (unsigned char)op;
    hdr[5] = 0;
    put_u16(hdr + 6, 0);
    const unsigned char *part[3] = {hdr, body1, body2};
    size_t plen[3] = {WIRE_HDR, len1, len2};
    size_t sent_total = 0;
    tlm_boot_io_t io = io_of(b);
    for (int i = 0; i < 3; i++) {
        int err = 0;
        int rc = tlm_boot_io_send(&io, part[i], plen[i], deadline, what,
                                  &sent_total, &err);
        if (rc == TELEMEM_OK)
            continue;
        if (rc != TLM_BOOT_IO_LOST) {
            if (sent_total > 0)
                b->broken = 1; /* half a frame is on the wire */
            return rc;
        }
        stream_lost(b, what, "send to launcher", err,
                    b->joining ? "closed" : "connection closed");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

/* Read until the buffer holds one whole frame; returns its body length in
 * *blen_p.  The caller consumes it with consume_frame(). */
static int recv_frame(tlm_boot_t *b, double deadline, const char *what,
                      size_t *blen_p)
{
    tlm_boot_io_t io = io_of(b);
    for (;;) {
        if (b->in_len >= WIRE_HDR) {
            size_t blen = get_u32(b->in);
            if (blen > WIRE_MAX_BODY) {
                tlm_error("kvs %s: launcher sent a %zu-byte frame (max %d)",
                          what, blen, WIRE_MAX_BODY);
                b->broken = 1;
                return TELEMEM_ERR_BOOTSTRAP;
            }
            if (b->in_len >= WIRE_HDR + blen) {
                *blen_p = blen;
                return TELEMEM_OK;
            }
        }
        size_t got = 0;
        int err = 0;
        int rc = tlm_boot_io_recv(&io, b->in + b->in_len,
                                  WIRE_HDR + WIRE_MAX_BODY - b->in_len,
                                  deadline, what, &got, &err);
        if (rc == TELEMEM_OK) {
            b->in_len += got;
            continue;
        }
        if (rc != TLM_BOOT_IO_LOST)
            return rc;
        stream_lost(b, what, "launcher", err, "connection closed");
        return TELEMEM_ERR_BOOTSTRAP;
    }
}

static void consume_frame(tlm_boot_t *b, size_t blen)
{
    size_t flen = WIRE_HDR + blen;
    memmove(b->in, b->in + flen, b->in_len - flen);
    b->in_len -= flen;
}

/* Text carried by an error reply, for the log. */
static void frame_text(const tlm_boot_t *b, size_t blen, char *out,
                       size_t cap)
{
    size_t n = TLM_MIN(blen, cap - 1);
    memcpy(out, b->in + WIRE_HDR, n);
    out[n] = '\0';
}

/* Wait for the reply to the last request of type op, setting aside the
 * replies still due to earlier requests that timed out.  On success the
 * reply is the first frame of b->in; the caller consumes it. */
static int recv_reply(tlm_boot_t *b, int op, double deadline,
                      const char *what, int *status_p, size_t *blen_p)
{
    for (;;) {
        size_t blen;
        int rc = recv_frame(b, deadline, what, &blen);
        if (rc != TELEMEM_OK)
            return rc;
        int fop = b->in[4];
        int st = b->in[5];
        if (st == ST_BAD_REQUEST) {
            char text[WIRE_MAX_TEXT + 1];
            frame_text(b, blen, text, sizeof(text));
            tlm_error("kvs %s: launcher refused a request: %s", what, text);
            b->broken = 1;
            return TELEMEM_ERR_BOOTSTRAP;
        }
        if (fop == OP_FENCE && b->fence_state == FENCE_PENDING) {
            if (op == OP_FENCE) {
                *status_p = st;
                *blen_p = blen;
                return TELEMEM_OK;
            }
            /* the reply to a fence that timed out: keep it for the next
             * fence call */
            b->fence_state = FENCE_DONE;
            b->fence_result = st;
            consume_frame(b, blen);
            continue;
        }
        if (b->stale > 0 && (fop == OP_GET || fop == OP_ABORT)) {
            b->stale--;
            consume_frame(b, blen);
            continue;
        }
        if (fop != op) {
            tlm_error("kvs %s: unexpected reply op %d from the launcher "
                      "(wanted %d)", what, fop, op);
            b->broken = 1;
            return TELEMEM_ERR_BOOTSTRAP;
        }
        *status_p = st;
        *blen_p = blen;
        return TELEMEM_OK;
    }
}

static int check_usable(const tlm_boot_t *b, const char *what)
{
    if (b->broken) {
        tlm_error("kvs %s: the connection to the launcher at %s is lost",
                  what, b->addr);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

static int check_key(const char *key, const char *what)
{
    if (key == NULL) {
        tlm_error("kvs %s: key is NULL", what);
        return TELEMEM_ERR_INVALID_ARG;
    }
    size_t n = strlen(key);
    if (n == 0 || n > WIRE_MAX_KEY) {
        tlm_error("kvs %s: key length %zu out of range [1, %d]", what, n,
                  WIRE_MAX_KEY);
        return TELEMEM_ERR_INVALID_ARG;
    }
    return TELEMEM_OK;
}

/* The job id names /dev/shm objects: 1..63 characters of [A-Za-z0-9]. */
static int check_jobid(const char *jobid)
{
    size_t n = strlen(jobid);
    if (n == 0 || n > WIRE_MAX_JOBID)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = jobid[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9')))
            return -1;
    }
    return 0;
}

/* TELEMEM_KVS_SECRET: 1 to 64 characters (telemem-run gives 64 hex
 * digits).  Never printed: it is the job's key. */
static int check_secret(const char *secret)
{
    if (secret[0] && strlen(secret) <= WIRE_SECRET_HEX)
        return 0;
    tlm_error("TELEMEM_KVS_SECRET is %s: a rank proves the job's secret to "
              "join the store (start the job with telemem-run %s)",
              secret[0] ? "too long" : "not set", TLM_VERSION);
    return -1;
}

/* ---- connecting --------------------------------------------------------- */

/* Split "host:port" or "[v6addr]:port". */
static int split_addr(const char *addr, char *host, size_t hcap, char *port,
                      size_t pcap)
{
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon == addr || colon[1] == '\0')
        return -1;
    const char *h = addr;
    size_t hlen = (size_t)(colon - addr);
    if (h[0] == '[') {
        if (hlen < 3 || h[hlen - 1] != ']')
            return -1;
        h++;
        hlen -= 2;
    }
    size_t plen = strlen(colon + 1);
    if (hlen >= hcap || plen >= pcap)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    memcpy(port, colon + 1, plen + 1);
    return 0;
}

/* One non-blocking connect attempt bounded by deadline.  Returns the
 * socket, or -1 with errno set. */
static int try_connect(const struct addrinfo *ai, double deadline)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
                                       SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS && errno != EINTR)
        goto err;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int n = poll(&pfd, 1, tlm_util_poll_ms(deadline - tlm_util_now()));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto err;
        if (n == 0) {
            errno = ETIMEDOUT;
            goto err;
        }
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            goto err;
        if (soerr != 0) {
            errno = soerr;
            goto err;
        }
        return fd;
    }
err:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* The store's address as one getaddrinfo-like list: a Unix socket
 * ("unix:PATH") or "host:port".  Returns 0, or -1 (logged). */
static int resolve(const tlm_boot_t *b, struct addrinfo **res_p,
                   struct sockaddr_un *un, struct addrinfo *un_ai)
{
    if (strncmp(b->addr, "unix:", 5) == 0) {
        const char *path = b->addr + 5;
        if (!path[0] || strlen(path) >= sizeof(un->sun_path)) {
            tlm_error("kvs address '%s': bad socket path", b->addr);
            return -1;
        }
        memset(un, 0, sizeof(*un));
        un->sun_family = AF_UNIX;
        memcpy(un->sun_path, path, strlen(path) + 1);
        memset(un_ai, 0, sizeof(*un_ai));
        un_ai->ai_family = AF_UNIX;
        un_ai->ai_socktype = SOCK_STREAM;
        un_ai->ai_addr = (struct sockaddr *)un;
        un_ai->ai_addrlen = sizeof(*un);
        *res_p = un_ai;
        return 0;
    }
    char host[256], port[32];
    if (split_addr(b->addr, host, sizeof(host), port, sizeof(port)) < 0) {
        tlm_error("kvs address '%s' is not host:port or unix:PATH", b->addr);
        return -1;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int gai = getaddrinfo(host, port, &hints, res_p);
    if (gai != 0) {
        tlm_error("kvs address %s: %s", b->addr, gai_strerror(gai));
        return -1;
    }
    return 0;
}

/* Connect to the launcher, retrying while it is not (yet) reachable, until
 * deadline. */
static int connect_kvs(tlm_boot_t *b, double deadline)
{
    struct addrinfo *res = NULL, un_ai;
    struct sockaddr_un un;
    if (resolve(b, &res, &un, &un_ai) != 0)
        return TELEMEM_ERR_BOOTSTRAP;
    double pause = 0.01;
    int fd = -1, err = 0;
    for (;;) {
        for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
            fd = try_connect(ai, deadline);
            if (fd < 0)
                err = errno;
        }
        /* A Unix socket exists before any rank starts and goes once every
         * rank has joined: no path means nobody more is let in. */
        if (fd >= 0 || tlm_util_now() + pause >= deadline ||
            (res == &un_ai && err == ENOENT))
            break;
        /* refused or reset: the launcher may be busy starting ranks */
        struct timespec ts = {0, (long)(pause * 1e9)};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        pause = TLM_MIN(pause * 2, 0.25);
    }
    if (res != &un_ai)
        freeaddrinfo(res);
    if (fd < 0) {
        tlm_error("kvs connect %s: %s%s", b->addr, strerror(err),
                  res == &un_ai && err == ENOENT
                      ? " (every rank has joined, or the launcher ended)" : "");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int one = 1;
    if (res != &un_ai &&
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
        tlm_debug("kvs setsockopt(TCP_NODELAY): %s", strerror(errno));
    b->fd = fd;
    return TELEMEM_OK;
}

/* The launcher closed the connection before it answered HELLO (it drops
 * connections that wait to join when too many do): try again. */
#define HELLO_RETRY 1

/* Join: the launcher's challenge (a nonce), our proof of the job's secret
 * over both nonces and our rank, the launcher's proof back.  The secret
 * itself never travels. */
static int hello(tlm_boot_t *b, double deadline)
{
    int st;
    size_t blen;
    char text[WIRE_MAX_TEXT + 1];
    int rc = recv_frame(b, deadline, "hello", &blen);
    if (rc != TELEMEM_OK)
        return b->lost ? HELLO_RETRY : rc;
    int op = b->in[4];
    st = b->in[5];
    if (op != OP_CHALLENGE || st != ST_OK || blen != WIRE_CHALLENGE_BODY ||
        get_u32(b->in + WIRE_HDR) != WIRE_VERSION) {
        frame_text(b, blen, text, sizeof(text));
        if (op == OP_HELLO && st == ST_REFUSED)
            tlm_error("kvs hello: launcher at %s refused rank %d: %s",
                      b->addr, b->rank, text);
        else
            tlm_error("kvs hello: launcher at %s speaks another protocol "
                      "(op %d, %zu bytes; this library speaks version %d)",
                      b->addr, op, blen, WIRE_VERSION);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    unsigned char snonce[WIRE_NONCE], body[WIRE_HELLO_BODY];
    memcpy(snonce, b->in + WIRE_HDR + 4, WIRE_NONCE);
    consume_frame(b, blen);
    unsigned char *cnonce = body + 12, *mac = body + 12 + WIRE_NONCE;
    if (getrandom(cnonce, WIRE_NONCE, 0) != (ssize_t)WIRE_NONCE) {
        tlm_error("kvs hello: getrandom: %s", strerror(errno));
        return TELEMEM_ERR_BOOTSTRAP;
    }
    put_u32(body, WIRE_VERSION);
    put_u32(body + 4, (uint32_t)b->rank);
    put_u32(body + 8, (uint32_t)b->size);
    wire_proof(b->secret, 1, snonce, cnonce, b->rank, b->size, mac);
    rc = send_frame(b, OP_HELLO, body, sizeof(body), NULL, 0, deadline,
                    "hello");
    if (rc == TELEMEM_OK)
        rc = recv_reply(b, OP_HELLO, deadline, "hello", &st, &blen);
    if (rc != TELEMEM_OK)
        return b->lost ? HELLO_RETRY : rc;
    frame_text(b, blen, text, sizeof(text));
    unsigned char want[WIRE_MAC];
    wire_proof(b->secret, 0, snonce, cnonce, b->rank, b->size, want);
    bool proven = st == ST_OK && blen == WIRE_MAC &&
                  tlm_util_equal_ct(b->in + WIRE_HDR, want, WIRE_MAC);
    consume_frame(b, blen);
    if (st != ST_OK) {
        tlm_error("kvs hello: launcher at %s refused rank %d of %d: %s",
                  b->addr, b->rank, b->size, text);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    if (!proven) {
        tlm_error("kvs hello: the store at %s does not know this job's "
                  "secret (TELEMEM_KVS_SECRET): not our launcher", b->addr);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    return TELEMEM_OK;
}

/* Connect and join; a connection the launcher dropped before its challenge
 * (too many waiting) is tried again.  Connecting and joining may take
 * CONNECT_WINDOW or the timeout, whichever is longer: a short
 * TELEMEM_TIMEOUT must not fail the start of a big job. */
static int join(tlm_boot_t *b)
{
    double deadline = tlm_util_now() + TLM_MAX(CONNECT_WINDOW, b->timeout);
    for (;;) {
        b->joining = 1;
        int rc = connect_kvs(b, deadline);
        if (rc == TELEMEM_OK)
            rc = hello(b, b->timeout > 0 ? deadline : 0);
        b->joining = 0;
        if (rc == TELEMEM_OK)
            return TELEMEM_OK;
        if (b->fd >= 0) {
            close(b->fd);
            b->fd = -1;
        }
        b->broken = b->lost = 0;
        b->in_len = 0;
        if (rc == HELLO_RETRY && tlm_util_now() < deadline) {
            tlm_debug("kvs hello: the launcher closed the connection before "
                      "it answered; connecting again");
            continue;
        }
        if (rc == HELLO_RETRY)
            tlm_error("kvs hello: the launcher at %s closed every connection "
                      "before it answered", b->addr);
        return rc == HELLO_RETRY || rc == TELEMEM_ERR_TIMED_OUT
                   ? TELEMEM_ERR_BOOTSTRAP : rc;
    }
}

/* ---- public (internal) API ---------------------------------------------- */

/* The rank a key belongs to: its ".<rank>" suffix, or -1. */
static int key_rank(const char *key)
{
    const char *dot = strrchr(key, '.');
    if (!dot || !dot[1])
        return -1;
    char *end;
    long r = strtol(dot + 1, &end, 10);
    return *end || r < 0 || r > INT32_MAX ? -1 : (int)r;
}

static void boot_free(tlm_boot_t *b)
{
    if (b->ad)
        b->ad_ops->close(b->ad);
    if (b->fd >= 0)
        close(b->fd);
    memset(b->secret, 0, sizeof(b->secret));
    for (size_t i = 0; i < b->nkv; i++) {
        free(b->kv[i].key);
        free(b->kv[i].val);
    }
    free(b->kv);
    free(b->dead_list);
    free(b->in);
    free(b);
}

/* Join through a launcher adapter; its calls replace the store's. */
static int open_adapter(const tlm_boot_params_t *p,
                        const tlm_boot_adapter_ops_t *ops,
                        tlm_boot_t **boot_p)
{
    tlm_boot_t *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        tlm_error("boot open: out of memory");
        return TELEMEM_ERR_NO_MEMORY;
    }
    b->fd = -1;
    tlm_boot_join_t join = {.rank = -1};
    int rc = ops->open(p->env, p->timeout, &b->ad, &join);
    if (rc != TELEMEM_OK) {
        b->ad = NULL;
        boot_free(b);
        return rc;
    }
    b->ad_ops = ops;
    b->rank = join.rank;
    b->size = join.size;
    snprintf(b->jobid, sizeof(b->jobid), "%s", join.jobid);
    tlm_info("rank %d of %d joined job %s through %s", b->rank, b->size,
             b->jobid, ops->name);
    *boot_p = b;
    return TELEMEM_OK;
}

int tlm_boot_open(const tlm_boot_params_t *p, tlm_boot_t **boot_p)
{
    if (p == NULL || boot_p == NULL) {
        tlm_error("boot open: NULL %s", p == NULL ? "params" : "boot_p");
        return TELEMEM_ERR_INVALID_ARG;
    }
    const char *addr = p->kvs_addr ? p->kvs_addr : "";
    const char *jobid = p->jobid ? p->jobid : "";
    const char *mode = p->mode && p->mode[0] ? p->mode : "auto";
    const tlm_boot_adapter_ops_t *ops;
    int rc = tlm_boot_select(mode, addr, p->env, &ops);
    if (rc != TELEMEM_OK)
        return rc;
    if (ops)
        return open_adapter(p, ops, boot_p);
    if (strcmp(mode, "singleton") == 0)
        addr = "";
    if (strcmp(mode, "telemem") == 0 && !addr[0]) {
        tlm_error("TELEMEM_BOOTSTRAP=telemem but TELEMEM_KVS is not set: "
                  "start the job with telemem-run");
        return TELEMEM_ERR_BOOTSTRAP;
    }
    int singleton = addr[0] == '\0';
    if (singleton && !(p->rank == -1 || (p->rank == 0 && p->size <= 1))) {
        tlm_error("TELEMEM_RANK is %d but TELEMEM_KVS is not set: start the "
                  "job with telemem-run, or unset TELEMEM_RANK", p->rank);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    if (!singleton) {
        if (p->size < 1 || p->rank < 0 || p->rank >= p->size) {
            tlm_error("TELEMEM_RANK %d / TELEMEM_NRANKS %d: rank out of "
                      "range [0, %d)", p->rank, p->size, p->size);
            return TELEMEM_ERR_BOOTSTRAP;
        }
        if (strlen(addr) >= sizeof(((tlm_boot_t *)0)->addr)) {
            tlm_error("TELEMEM_KVS '%s' is too long", addr);
            return TELEMEM_ERR_BOOTSTRAP;
        }
    }
    if ((!singleton || jobid[0]) && check_jobid(jobid) < 0) {
        tlm_error("TELEMEM_JOBID '%s' is not 1 to %d characters of "
                  "[A-Za-z0-9]", jobid, WIRE_MAX_JOBID);
        return TELEMEM_ERR_BOOTSTRAP;
    }
    const char *secret = p->secret ? p->secret : "";
    if (!singleton && check_secret(secret) < 0)
        return TELEMEM_ERR_BOOTSTRAP;

    tlm_boot_t *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        tlm_error("boot open: out of memory");
        return TELEMEM_ERR_NO_MEMORY;
    }
    b->fd = -1;
    b->timeout = p->timeout > 0 ? p->timeout : 0;
    if (singleton) {
        b->rank = 0;
        b->size = 1;
        if (jobid[0])
            snprintf(b->jobid, sizeof(b->jobid), "%s", jobid);
        else
            snprintf(b->jobid, sizeof(b->jobid), "s%ld", (long)getpid());
        tlm_debug("singleton job %s", b->jobid);
        *boot_p = b;
        return TELEMEM_OK;
    }
    b->rank = p->rank;
    b->size = p->size;
    snprintf(b->jobid, sizeof(b->jobid), "%s", jobid);
    snprintf(b->addr, sizeof(b->addr), "%s", addr);
    snprintf(b->secret, sizeof(b->secret), "%s", secret);
    b->in = malloc(WIRE_HDR + WIRE_MAX_BODY);
    if (b->in == NULL) {
        tlm_error("boot open: out of memory for a %d-byte buffer",
                  WIRE_HDR + WIRE_MAX_BODY);
        boot_free(b);
        return TELEMEM_ERR_NO_MEMORY;
    }
    rc = join(b);
    if (rc != TELEMEM_OK) {
        boot_free(b);
        return rc;
    }
    tlm_debug("rank %d of %d joined job %s via %s", b->rank, b->size,
              b->jobid, b->addr);
    *boot_p = b;
    return TELEMEM_OK;
}

int tlm_boot_rank(const tlm_boot_t *b)
{
    return b ? b->rank : TELEMEM_ERR_INVALID_ARG;
}

int tlm_boot_size(const tlm_boot_t *b)
{
    return b ? b->size : TELEMEM_ERR_INVALID_ARG;
}

const char *tlm_boot_jobid(const tlm_boot_t *b)
{
    return b ? b->jobid : "";
}

const char *tlm_boot_dead(tlm_boot_t *b)
{
    if (!b || b->ad || b->fd < 0 || b->dead_unknown)
        return NULL;
    if (!b->dead_list && !(b->dead_list = malloc(WIRE_MAX_VAL + 1))) {
        b->dead_unknown = true;
        return NULL;
    }
    size_t len = 0;
    int rc = tlm_boot_get(b, "telemem.gone", b->dead_list, WIRE_MAX_VAL,
                          &len);
    if (rc == TELEMEM_ERR_NOT_FOUND)
        return NULL;
    if (rc != TELEMEM_OK) {
        tlm_debug("kvs: the launcher's list of dead ranks is not readable; "
                  "not asked again");
        b->dead_unknown = true;
        return NULL;
    }
    b->dead_list[TLM_MIN(len, (size_t)WIRE_MAX_VAL)] = '\0';
    return b->dead_list;
}

bool tlm_boot_launched(const tlm_boot_t *b)
{
    return b && (b->ad_ops != NULL || b->fd >= 0);
}

static boot_kv_t *local_find(tlm_boot_t *b, const char *key)
{
    for (size_t i = 0; i < b->nkv; i++)
        if (strcmp(b->kv[i].key, key) == 0)
            return &b->kv[i];
    return NULL;
}

static int local_put(tlm_boot_t *b, const char *key, const void *val,
                     size_t len)
{
    void *copy = malloc(len ? len : 1);
    if (copy == NULL) {
        tlm_error("kvs put %s: out of memory for %zu bytes", key, len);
        return TELEMEM_ERR_NO_MEMORY;
    }
    if (len)
        memcpy(copy, val, len);
    boot_kv_t *kv = local_find(b, key);
    if (kv) { /* last put wins, as at the launcher */
        free(kv->val);
        kv->val = copy;
        kv->len = len;
        return TELEMEM_OK;
    }
    if (b->nkv == b->cap_kv) {
        size_t cap = b->cap_kv ? 2 * b->cap_kv : 16;
        boot_kv_t *n = realloc(b->kv, cap * sizeof(*n));
        if (n == NULL) {
            tlm_error("kvs put %s: out of memory for %zu keys", key, cap);
            free(copy);
            return TELEMEM_ERR_NO_MEMORY;
        }
        b->kv = n;
        b->cap_kv = cap;
    }
    char *k = strdup(key);
    if (k == NULL) {
        tlm_error("kvs put %s: out of memory", key);
        free(copy);
        return TELEMEM_ERR_NO_MEMORY;
    }
    b->kv[b->nkv++] = (boot_kv_t){.key = k, .val = copy, .len = len};
    return TELEMEM_OK;
}

int tlm_boot_put(tlm_boot_t *b, const char *key, const void *val,
                      size_t len)
{
    if (b == NULL) {
        tlm_error("kvs put: NULL handle");
        return TELEMEM_ERR_INVALID_ARG;
    }
    int rc = check_key(key, "put");
    if (rc != TELEMEM_OK)
        return rc;
    if (len > WIRE_MAX_VAL || (len > 0 && val == NULL)) {
        tlm_error("kvs put %s: %s value of %zu bytes (max %d)", key,
                  val ? "too large a" : "NULL", len, WIRE_MAX_VAL);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (b->ad)
        return b->ad_ops->put(b->ad, key, val, len);
    if (b->fd < 0)
        return local_put(b, key, val, len);
    if ((rc = check_usable(b, "put")) != TELEMEM_OK)
        return rc;
    unsigned char head[2 + WIRE_MAX_KEY];
    size_t klen = strlen(key);
    put_u16(head, (unsigned)klen);
    /* length-prefixed, not NUL-terminated: the length is checked above
     * NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
    memcpy(head + 2, key, klen);
    /* no reply: TCP keeps it ahead of this rank's next FENCE */
    return send_frame(b, OP_PUT, head, 2 + klen, val, len, deadline_of(b),
                      "put");
}

static int fence_status(int st, const char *text)
{
    switch (st) {
    case ST_OK:
        return TELEMEM_OK;
    case ST_PEER_DEAD:
        tlm_error("kvs fence: %s", text[0] ? text : "a rank died");
        return TELEMEM_ERR_PEER_DEAD;
    default:
        tlm_error("kvs fence: launcher answered status %d: %s", st, text);
        return TELEMEM_ERR_BOOTSTRAP;
    }
}

int tlm_boot_fence(tlm_boot_t *b)
{
    if (b == NULL) {
        tlm_error("kvs fence: NULL handle");
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (b->ad)
        return b->ad_ops->fence(b->ad);
    if (b->fd < 0)
        return TELEMEM_OK;
    if (b->fence_state == FENCE_DONE) {
        /* a timed-out fence completed while we waited for something else */
        b->fence_state = FENCE_IDLE;
        return fence_status(b->fence_result, "");
    }
    int rc = check_usable(b, "fence");
    if (rc != TELEMEM_OK)
        return rc;
    double deadline = deadline_of(b);
    if (b->fence_state == FENCE_IDLE) {
        rc = send_frame(b, OP_FENCE, NULL, 0, NULL, 0, deadline, "fence");
        if (rc != TELEMEM_OK)
            return rc;
        b->fence_state = FENCE_PENDING;
    }
    int st;
    size_t blen;
    rc = recv_reply(b, OP_FENCE, deadline, "fence", &st, &blen);
    if (rc != TELEMEM_OK)
        return rc; /* a timeout leaves the fence pending */
    b->fence_state = FENCE_IDLE;
    char text[WIRE_MAX_TEXT + 1];
    frame_text(b, blen, text, sizeof(text));
    consume_frame(b, blen);
    return fence_status(st, text);
}

int tlm_boot_get(tlm_boot_t *b, const char *key, void *buf, size_t cap,
                      size_t *len_p)
{
    if (b == NULL || len_p == NULL || (buf == NULL && cap > 0)) {
        tlm_error("kvs get: NULL %s", b == NULL ? "handle" :
                                      len_p == NULL ? "len_p" : "buf");
        return TELEMEM_ERR_INVALID_ARG;
    }
    int rc = check_key(key, "get");
    if (rc != TELEMEM_OK)
        return rc;
    if (b->ad) {
        int owner = key_rank(key);
        if (owner < 0 || owner >= b->size) {
            tlm_error("kvs get %s: the key names no rank", key);
            return TELEMEM_ERR_INVALID_ARG;
        }
        return b->ad_ops->get(b->ad, owner, key, buf, cap, len_p);
    }
    const void *val;
    size_t len;
    if (b->fd < 0) {
        boot_kv_t *kv = local_find(b, key);
        if (kv == NULL) {
            /* callers probe for optional keys: not worth an error line */
            tlm_debug("kvs get %s: not found", key);
            return TELEMEM_ERR_NOT_FOUND;
        }
        val = kv->val;
        len = kv->len;
    } else {
        if ((rc = check_usable(b, "get")) != TELEMEM_OK)
            return rc;
        double deadline = deadline_of(b);
        size_t klen = strlen(key);
        rc = send_frame(b, OP_GET, key, klen, NULL, 0, deadline, "get");
        if (rc != TELEMEM_OK)
            return rc;
        int st;
        size_t blen;
        rc = recv_reply(b, OP_GET, deadline, "get", &st, &blen);
        if (rc != TELEMEM_OK) {
            if (rc == TELEMEM_ERR_TIMED_OUT)
                b->stale++; /* its reply will come later */
            return rc;
        }
        if (st == ST_NOT_FOUND) {
            consume_frame(b, blen);
            tlm_debug("kvs get %s: not found", key);
            return TELEMEM_ERR_NOT_FOUND;
        }
        if (st != ST_OK) {
            char text[WIRE_MAX_TEXT + 1];
            frame_text(b, blen, text, sizeof(text));
            consume_frame(b, blen);
            tlm_error("kvs get %s: launcher answered status %d: %s", key, st,
                      text);
            return TELEMEM_ERR_BOOTSTRAP;
        }
        val = b->in + WIRE_HDR;
        len = blen;
        if (len <= cap && len > 0)
            memcpy(buf, val, len);
        consume_frame(b, blen);
        *len_p = len;
        if (len > cap) {
            tlm_debug("kvs get %s: value of %zu bytes exceeds buffer of %zu",
                      key, len, cap);
            return TELEMEM_ERR_INVALID_ARG;
        }
        return TELEMEM_OK;
    }
    *len_p = len;
    if (len > cap) {
        /* the caller may be asking for the length: debug only */
        tlm_debug("kvs get %s: value of %zu bytes exceeds buffer of %zu", key,
                  len, cap);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (len)
        memcpy(buf, val, len);
    return TELEMEM_OK;
}

void tlm_boot_abort(tlm_boot_t *b, int exit_status, const char *why)
{
    if (why == NULL)
        why = "";
    if (b && b->ad) {
        b->ad_ops->abort_job(b->ad, exit_status, why);
        return;
    }
    if (b == NULL || b->fd < 0 || b->broken) {
        tlm_error("abort with status %d: %s%s", exit_status, why,
                  b && b->fd >= 0 ? " (launcher unreachable)" : "");
        return;
    }
    unsigned char head[4];
    size_t tlen = TLM_MIN(strlen(why), (size_t)WIRE_MAX_TEXT);
    put_u32(head, (uint32_t)exit_status);
    double deadline = tlm_util_now() +
                      (b->timeout > 0 ? TLM_MIN(b->timeout, ABORT_WAIT)
                                      : ABORT_WAIT);
    if (send_frame(b, OP_ABORT, head, 4, why, tlen, deadline, "abort") !=
        TELEMEM_OK)
        return;
    /* wait for the ack so the launcher has the reason before this rank
     * goes on to exit */
    int st;
    size_t blen;
    if (recv_reply(b, OP_ABORT, deadline, "abort", &st, &blen) == TELEMEM_OK)
        consume_frame(b, blen);
    else
        b->stale++;
}

void tlm_boot_close(tlm_boot_t *b)
{
    if (b == NULL)
        return;
    if (b->fd >= 0 && !b->broken) {
        /* best effort: a launcher that is gone needs no goodbye */
        if (send_frame(b, OP_BYE, NULL, 0, NULL, 0, tlm_util_now() + 1.0,
                       "bye") == TELEMEM_OK)
            shutdown(b->fd, SHUT_WR);
    }
    boot_free(b);
}

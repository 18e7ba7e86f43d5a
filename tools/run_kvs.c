/* run_kvs.c - telemem-run's key-value store server: the ranks' TCP
 * connections, HELLO/PUT/FENCE/GET/ABORT/BYE (docs/bootstrap.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "run.h"

/* ---- key-value store ---------------------------------------------------- */

static uint64_t hash_key(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
    return h;
}

static kv_t *kv_find(const char *key, size_t klen, uint64_t h)
{
    if (J.kv_cap == 0)
        return NULL;
    for (kv_t *e = J.kv[h & (J.kv_cap - 1)]; e; e = e->next)
        if (e->hash == h && strlen(e->key) == klen &&
            memcmp(e->key, key, klen) == 0)
            return e;
    return NULL;
}

static void kv_put(const char *key, size_t klen, const void *val,
                   size_t vlen)
{
    uint64_t h = hash_key(key, klen);
    unsigned char *copy = run_xrealloc(NULL, vlen);
    memcpy(copy, val, vlen);
    kv_t *e = kv_find(key, klen, h);
    if (e) { /* last put wins */
        free(e->val);
        e->val = copy;
        e->vlen = vlen;
        return;
    }
    if (J.kv_n + 1 > J.kv_cap / 4 * 3) {
        size_t cap = J.kv_cap ? J.kv_cap * 2 : 1024;
        kv_t **t = run_xrealloc(NULL, cap * sizeof(*t));
        memset(t, 0, cap * sizeof(*t));
        for (size_t i = 0; i < J.kv_cap; i++) {
            for (kv_t *x = J.kv[i], *nx; x; x = nx) {
                nx = x->next;
                x->next = t[x->hash & (cap - 1)];
                t[x->hash & (cap - 1)] = x;
            }
        }
        free(J.kv);
        J.kv = t;
        J.kv_cap = cap;
    }
    e = run_xrealloc(NULL, sizeof(*e) + klen + 1);
    memcpy(e->key, key, klen);
    e->key[klen] = '\0';
    e->hash = h;
    e->val = copy;
    e->vlen = vlen;
    e->next = J.kv[h & (J.kv_cap - 1)];
    J.kv[h & (J.kv_cap - 1)] = e;
    J.kv_n++;
}

/* ---- connections -------------------------------------------------------- */

/* Queue one reply frame and try to send it at once. */
static void reply(conn_t *c, int op, int status, const void *body,
                  size_t len)
{
    if (c->dead)
        return;
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    size_t need = c->out_len + WIRE_HDR + len;
    if (need > c->out_cap) {
        if (c->out_off > 0) {
            memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
            c->out_len -= c->out_off;
            c->out_off = 0;
            need = c->out_len + WIRE_HDR + len;
        }
        if (need > c->out_cap) {
            c->out_cap = need < 4096 ? 4096 : need;
            c->out = run_xrealloc(c->out, c->out_cap);
        }
    }
    unsigned char *h = c->out + c->out_len;
    put_u32(h, (uint32_t)len);
    h[4] = (unsigned char)op;
    h[5] = (unsigned char)status;
    h[6] = h[7] = 0;
    if (len)
        memcpy(h + WIRE_HDR, body, len);
    c->out_len += WIRE_HDR + len;
    run_conn_flush(c);
}

static void reply_text(conn_t *c, int op, int status, const char *text)
{
    reply(c, op, status, text, strlen(text));
}

static void conn_close(conn_t *c)
{
    if (c->dead)
        return;
    close(c->fd);
    c->fd = -1;
    c->dead = 1;
    if (c->rank < 0)
        return;
    rank_t *r = &J.ranks[c->rank];
    r->conn = NULL;
    if (!r->gone && !r->exited)
        r->lost_at = run_now(); /* wait a little for its exit status */
}

/* A request this launcher cannot take: say why and hang up. */
static void refuse(conn_t *c, int op, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refuse(conn_t *c, int op, int status, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (c->rank >= 0)
        run_say("rank %d: %s", c->rank, text);
    else
        run_say("kvs connection refused: %s", text);
    reply_text(c, op, status, text);
    c->closing = 1;
    if (c->out_off == c->out_len)
        conn_close(c);
}

void run_conn_flush(conn_t *c)
{
    while (!c->dead && c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        /* the rank is gone; its EOF or exit tells the rest */
        c->out_off = c->out_len = 0;
        conn_close(c);
        return;
    }
    if (c->closing && !c->dead)
        conn_close(c);
}

/* Every rank is out of the fence for good once one rank is gone. */
static void fail_fences(void)
{
    for (int i = 0; i < J.n; i++) {
        rank_t *r = &J.ranks[i];
        if (r->conn && r->conn->in_fence) {
            r->conn->in_fence = 0;
            reply_text(r->conn, OP_FENCE, ST_PEER_DEAD, J.gone_text);
        }
    }
    J.in_fence = 0;
}

void run_mark_gone(int rank, const char *fmt, ...)
{
    rank_t *r = &J.ranks[rank];
    if (r->gone)
        return;
    r->gone = 1;
    r->lost_at = 0;
    if (J.any_gone)
        return;
    J.any_gone = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(J.gone_text, sizeof(J.gone_text), fmt, ap);
    va_end(ap);
    if (J.in_fence)
        verbose("failing the fence of %d ranks: %s", J.in_fence, J.gone_text);
    fail_fences();
}

static void complete_fence(void)
{
    J.fences++;
    verbose("fence %lu complete", J.fences);
    for (int i = 0; i < J.n; i++) {
        conn_t *c = J.ranks[i].conn;
        if (c && c->in_fence) {
            c->in_fence = 0;
            reply(c, OP_FENCE, ST_OK, NULL, 0);
        }
    }
    J.in_fence = 0;
}

static void do_hello(conn_t *c, const unsigned char *b, size_t len)
{
    if (c->rank >= 0) {
        refuse(c, OP_HELLO, ST_BAD_REQUEST, "second HELLO");
        return;
    }
    if (len < 12 || len > 12 + WIRE_MAX_JOBID) {
        refuse(c, OP_HELLO, ST_BAD_REQUEST, "malformed HELLO (%zu bytes)",
               len);
        return;
    }
    uint32_t version = get_u32(b);
    int rank = (int32_t)get_u32(b + 4);
    int size = (int32_t)get_u32(b + 8);
    size_t jlen = len - 12;
    if (version != WIRE_VERSION) {
        refuse(c, OP_HELLO, ST_REFUSED, "protocol version %u, launcher "
               "speaks %d", (unsigned)version, WIRE_VERSION);
        return;
    }
    if (jlen != strlen(J.jobid) || memcmp(b + 12, J.jobid, jlen) != 0) {
        refuse(c, OP_HELLO, ST_REFUSED, "job id '%.*s' is not this job's "
               "(%s)", (int)jlen, (const char *)b + 12, J.jobid);
        return;
    }
    if (size != J.n || rank < 0 || rank >= J.n) {
        refuse(c, OP_HELLO, ST_REFUSED, "rank %d of %d does not fit a job "
               "of %d ranks", rank, size, J.n);
        return;
    }
    rank_t *r = &J.ranks[rank];
    if (r->hello) {
        refuse(c, OP_HELLO, ST_REFUSED, "rank %d joined the store already",
               rank);
        return;
    }
    r->hello = 1;
    r->conn = c;
    c->rank = rank;
    verbose("rank %d joined the store", rank);
    reply(c, OP_HELLO, ST_OK, NULL, 0);
}

static void do_abort(conn_t *c, const unsigned char *b, size_t len)
{
    if (len < 4 || len > 4 + WIRE_MAX_TEXT) {
        refuse(c, OP_ABORT, ST_BAD_REQUEST, "malformed ABORT");
        return;
    }
    int status = (int32_t)get_u32(b);
    rank_t *r = &J.ranks[c->rank];
    run_say("rank %d (pid %ld) aborted the job with status %d: %.*s",
            c->rank, (long)r->pid, status, (int)(len - 4),
            (const char *)b + 4);
    reply(c, OP_ABORT, ST_OK, NULL, 0);
    if (status < 1 || status > 255)
        status = 1;
    run_end_job(status);
}

/* Act on one frame.  Returns 0 to go on with the next one. */
static int handle_frame(conn_t *c, int op, const unsigned char *b,
                        size_t len)
{
    if (op == OP_HELLO) {
        do_hello(c, b, len);
        return c->dead || c->closing;
    }
    if (c->rank < 0) {
        refuse(c, op, ST_BAD_REQUEST, "request %d before HELLO", op);
        return 1;
    }
    switch (op) {
    case OP_PUT: {
        size_t klen = len >= 2 ? (size_t)b[0] << 8 | b[1] : 0;
        if (len < 2 || klen == 0 || klen > WIRE_MAX_KEY || 2 + klen > len ||
            len - 2 - klen > WIRE_MAX_VAL || memchr(b + 2, 0, klen)) {
            refuse(c, op, ST_BAD_REQUEST, "malformed PUT (%zu bytes)", len);
            return 1;
        }
        kv_put((const char *)b + 2, klen, b + 2 + klen, len - 2 - klen);
        return 0;
    }
    case OP_GET: {
        if (len == 0 || len > WIRE_MAX_KEY || memchr(b, 0, len)) {
            refuse(c, op, ST_BAD_REQUEST, "malformed GET (%zu bytes)", len);
            return 1;
        }
        kv_t *e = kv_find((const char *)b, len, hash_key((const char *)b,
                                                        len));
        if (e)
            reply(c, OP_GET, ST_OK, e->val, e->vlen);
        else
            reply(c, OP_GET, ST_NOT_FOUND, NULL, 0);
        return 0;
    }
    case OP_FENCE:
        if (len != 0) {
            refuse(c, op, ST_BAD_REQUEST, "malformed FENCE");
            return 1;
        }
        if (J.any_gone) {
            reply_text(c, OP_FENCE, ST_PEER_DEAD, J.gone_text);
            return 0;
        }
        c->in_fence = 1;
        if (++J.in_fence == J.n)
            complete_fence();
        return 0;
    case OP_ABORT:
        do_abort(c, b, len);
        return 0;
    case OP_BYE:
        verbose("rank %d left the store", c->rank);
        run_mark_gone(c->rank, "rank %d left the job before this fence",
                      c->rank);
        c->closing = 1; /* nothing may follow BYE */
        J.ranks[c->rank].conn = NULL;
        c->rank = -1;
        run_conn_flush(c);
        return 1;
    default:
        refuse(c, op, ST_BAD_REQUEST, "unknown request %d", op);
        return 1;
    }
}

/* Handle every whole frame received, except while the rank is in a fence
 * (its replies must keep request order). */
void run_conn_process(conn_t *c)
{
    while (!c->dead && !c->closing && !c->in_fence &&
           c->in_len - c->in_off >= WIRE_HDR) {
        const unsigned char *h = c->in + c->in_off;
        size_t blen = get_u32(h);
        int op = h[4];
        if (blen > WIRE_MAX_BODY) {
            refuse(c, op, ST_BAD_REQUEST, "frame of %zu bytes (max %d)",
                   blen, WIRE_MAX_BODY);
            break;
        }
        if (c->in_len - c->in_off < WIRE_HDR + blen)
            break;
        c->in_off += WIRE_HDR + blen;
        if (handle_frame(c, op, h + WIRE_HDR, blen))
            break;
    }
    if (c->in_off == c->in_len)
        c->in_off = c->in_len = 0;
}

/* Read what the socket holds now, then handle it. */
void run_conn_read(conn_t *c)
{
    if (c->closing) { /* hung up while its last reply was pending */
        conn_close(c);
        return;
    }
    while (!c->dead && !c->closing) {
        if (c->in_fence && c->in_len - c->in_off >= 2 * (WIRE_HDR +
                                                          WIRE_MAX_BODY)) {
            /* a rank waits for each reply: in a fence it has little to
             * say, and its input must not grow without bound */
            refuse(c, OP_FENCE, ST_BAD_REQUEST, "%zu bytes of requests "
                   "sent during a fence", c->in_len - c->in_off);
            break;
        }
        if (c->in_off > 0 && c->in_cap - c->in_len < 4096) {
            memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
            c->in_len -= c->in_off;
            c->in_off = 0;
        }
        if (c->in_cap - c->in_len < 4096) {
            c->in_cap = c->in_cap ? c->in_cap * 2 : 16384;
            c->in = run_xrealloc(c->in, c->in_cap);
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len,
                         MSG_DONTWAIT);
        if (n > 0) {
            c->in_len += (size_t)n;
            run_conn_process(c);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        int err = n == 0 ? 0 : errno;
        run_conn_process(c); /* what came before the end */
        if (c->rank >= 0)
            verbose("rank %d: connection to the store %s%s", c->rank,
                    err ? "lost: " : "closed without BYE",
                    err ? strerror(err) : "");
        conn_close(c);
        break;
    }
    /* a big allocation is not kept for the whole job */
    if (!c->dead && c->in_len == 0 && c->in_cap > 65536) {
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
}

void run_accept(void)
{
    for (;;) {
        int fd = accept4(J.listen_fd, NULL, NULL,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                run_say("accept: %s", strerror(errno));
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        conn_t *c = run_xrealloc(NULL, sizeof(*c));
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        c->rank = -1;
        if (J.nconns == J.cap_conns) {
            J.cap_conns = J.cap_conns ? 2 * J.cap_conns : 64;
            J.conns = run_xrealloc(J.conns, J.cap_conns * sizeof(*J.conns));
        }
        J.conns[J.nconns++] = c;
    }
}

void run_free_dead_conns(void)
{
    size_t o = 0;
    for (size_t i = 0; i < J.nconns; i++) {
        conn_t *c = J.conns[i];
        if (c->dead) {
            free(c->in);
            free(c->out);
            free(c);
        } else {
            J.conns[o++] = c;
        }
    }
    J.nconns = o;
}

/* run_kvs.c - telemem-run's key-value store server: the ranks'
 * connections (a Unix socket or TCP), who may join (the job's secret, the
 * same user for local peers, one claim per rank, bounded buffers and
 * waiting connections), HELLO/PUT/FENCE/GET/ABORT/BYE (docs/bootstrap.md). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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
    if (c->pending) {
        c->pending = 0;
        J.npending--;
    }
    if (c->rank < 0) /* never joined, or left with BYE */
        return;
    rank_t *r = &J.ranks[c->rank];
    r->conn = NULL;
    if (!r->gone && !r->exited)
        r->lost_at = tlm_util_now(); /* wait a little for its exit status */
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
    else if (++J.refusals <= MAX_REFUSALS_SHOWN)
        run_say("kvs connection refused: %s%s", text,
                J.refusals == MAX_REFUSALS_SHOWN ? " (further refusals are "
                "only counted)" : "");
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

void run_kvs_note_dead(int rank)
{
    /* "telemem.gone": the ranks that died, comma-separated, which the
     * survivors' liveness checks read (tlm_boot_dead): a transport may not
     * see a death that a rank only waits on (ofi). */
    static char list[WIRE_MAX_VAL];
    static size_t n;
    int w = snprintf(list + n, sizeof(list) - n, "%s%d", n ? "," : "", rank);
    if (w < 0 || (size_t)w >= sizeof(list) - n)
        return; /* thousands of deaths: the rest are seen by their fences */
    n += (size_t)w;
    static const char key[] = "telemem.gone";
    kv_put(key, sizeof(key) - 1, list, n + 1);
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

static int check_peer_user(int fd);

/* HELLO: version, rank, nranks, the rank's nonce and its proof of the
 * job's secret (boot_wire.h).  The sender's user (local peers) and
 * the proof are checked before anything else is said about the job: a
 * stranger learns "not this job", nothing more (no job id, no rank count).
 * Only a HELLO costs a look at the peer: idle connections cost nothing. */
static void do_hello(conn_t *c, const unsigned char *b, size_t len)
{
    if (c->rank >= 0) {
        refuse(c, OP_HELLO, ST_BAD_REQUEST, "second HELLO");
        return;
    }
    uint32_t version = len >= 4 ? get_u32(b) : 0;
    if (len >= 4 && version != WIRE_VERSION) {
        refuse(c, OP_HELLO, ST_REFUSED, "protocol version %u, launcher "
               "speaks %d", (unsigned)version, WIRE_VERSION);
        return;
    }
    if (len != WIRE_HELLO_BODY) {
        refuse(c, OP_HELLO, ST_BAD_REQUEST, "malformed HELLO (%zu bytes)",
               len);
        return;
    }
    int rank = (int32_t)get_u32(b + 4);
    int size = (int32_t)get_u32(b + 8);
    const unsigned char *cnonce = b + 12, *mac = b + 12 + WIRE_NONCE;
    if (check_peer_user(c->fd) != 0) {
        /* another user of this machine, whatever it proves */
        refuse(c, OP_HELLO, ST_REFUSED, "not this job (another user)");
        return;
    }
    unsigned char want[WIRE_MAC];
    wire_proof(J.secret, 1, c->nonce, cnonce, rank, size, want);
    if (!tlm_util_equal_ct(mac, want, WIRE_MAC)) {
        refuse(c, OP_HELLO, ST_REFUSED, "not this job");
        return;
    }
    if (size != J.n || rank < 0 || rank >= J.n) {
        refuse(c, OP_HELLO, ST_REFUSED, "rank %d of %d does not fit a job "
               "of %d ranks", rank, size, J.n);
        return;
    }
    rank_t *r = &J.ranks[rank];
    if (r->hello) {
        /* a rank joins once: a second claim (even with the secret) is
         * refused, the first connection stays */
        refuse(c, OP_HELLO, ST_REFUSED, "rank %d joined the store already",
               rank);
        return;
    }
    r->hello = 1;
    r->conn = c;
    c->rank = rank;
    c->pending = 0;
    J.npending--;
    if (++J.joined == J.n)
        run_remove_socket(); /* no one else is to come: nothing left */
    verbose("rank %d joined the store", rank);
    unsigned char proof[WIRE_MAC];
    wire_proof(J.secret, 0, c->nonce, cnonce, rank, size, proof);
    reply(c, OP_HELLO, ST_OK, proof, sizeof(proof));
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
    if (op == OP_CHALLENGE) {
        refuse(c, op, ST_BAD_REQUEST, "CHALLENGE comes from the launcher");
        return 1;
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

/* The most unparsed input kept for c: one HELLO before it joined, two
 * of the largest frames after (a rank waits for each reply, so in a fence
 * it has little to say). */
static size_t in_limit(const conn_t *c)
{
    return c->rank < 0 ? WIRE_HDR + WIRE_HELLO_BODY
                       : 2 * (size_t)(WIRE_HDR + WIRE_MAX_BODY);
}

int run_conn_wants_input(const conn_t *c)
{
    return !c->closing && c->in_len - c->in_off < in_limit(c);
}

/* Handle every whole frame received, except while the rank is in a fence
 * (its replies must keep request order) or has too many replies it has
 * not read yet. */
void run_conn_process(conn_t *c)
{
    while (!c->dead && !c->closing && !c->in_fence &&
           c->out_len - c->out_off <= MAX_OUT &&
           c->in_len - c->in_off >= WIRE_HDR) {
        const unsigned char *h = c->in + c->in_off;
        size_t blen = get_u32(h);
        int op = h[4];
        if (blen > WIRE_MAX_BODY ||
            (c->rank < 0 && blen > WIRE_HELLO_BODY)) {
            refuse(c, op, ST_BAD_REQUEST, "frame of %zu bytes (max %d)",
                   blen, c->rank < 0 ? WIRE_HELLO_BODY : WIRE_MAX_BODY);
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

/* Read what the socket holds now (up to the buffer's bound), then handle
 * it. */
void run_conn_read(conn_t *c)
{
    if (c->closing) { /* hung up while its last reply was pending */
        conn_close(c);
        return;
    }
    while (!c->dead && !c->closing) {
        size_t limit = in_limit(c);
        if (c->in_off > 0) {
            memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
            c->in_len -= c->in_off;
            c->in_off = 0;
        }
        if (c->in_len >= limit) {
            if (c->in_fence) /* docs/bootstrap.md: refused */
                refuse(c, OP_FENCE, ST_BAD_REQUEST, "%zu bytes of requests "
                       "sent during a fence", c->in_len);
            break; /* else read on once replies went out */
        }
        if (c->in_cap < limit) {
            c->in = run_xrealloc(c->in, limit);
            c->in_cap = limit;
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, limit - c->in_len,
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

int run_random(void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom((char *)buf + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

/* The owner of the TCP connection whose far end is peer and near end
 * local, from /proc/net/tcp (or tcp6): 1 found (*uid set), 0 not in this
 * network namespace (another host), -1 cannot tell.  SO_PEERCRED answers
 * only for Unix sockets. */
static int tcp_peer_uid(const struct sockaddr_storage *peer,
                        const struct sockaddr_storage *local, uid_t *uid)
{
    int v6 = peer->ss_family == AF_INET6;
    FILE *f = fopen(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", "r");
    if (!f)
        return -1;
    /* the kernel prints each 32-bit word of the address as it is in
     * memory, in hex of the host's byte order; ports in plain hex */
    char want_l[40], want_r[40];
    const unsigned char *pa, *la;
    unsigned pport, lport;
    if (v6) {
        const struct sockaddr_in6 *p = (const void *)peer;
        const struct sockaddr_in6 *l = (const void *)local;
        pa = p->sin6_addr.s6_addr;
        la = l->sin6_addr.s6_addr;
        pport = ntohs(p->sin6_port);
        lport = ntohs(l->sin6_port);
    } else {
        const struct sockaddr_in *p = (const void *)peer;
        const struct sockaddr_in *l = (const void *)local;
        pa = (const unsigned char *)&p->sin_addr;
        la = (const unsigned char *)&l->sin_addr;
        pport = ntohs(p->sin_port);
        lport = ntohs(l->sin_port);
    }
    int words = v6 ? 4 : 1;
    for (int side = 0; side < 2; side++) {
        const unsigned char *a = side ? la : pa;
        char *o = side ? want_r : want_l;
        for (int w = 0; w < words; w++) {
            uint32_t x;
            memcpy(&x, a + 4 * w, 4);
            o += sprintf(o, "%08X", (unsigned)x);
        }
        sprintf(o, ":%04X", side ? lport : pport);
    }
    char line[512], l_addr[64], r_addr[64];
    unsigned u;
    int found = 0;
    while (!found && fgets(line, sizeof(line), f)) {
        if (sscanf(line, " %*d: %63s %63s %*x %*s %*s %*s %u", l_addr, r_addr,
                   &u) != 3)
            continue;
        if (strcmp(l_addr, want_l) == 0 && strcmp(r_addr, want_r) == 0) {
            *uid = (uid_t)u;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* Local peers must be this user: for a Unix socket the kernel says who
 * connected (SO_PEERCRED); for TCP the connection's owner is found in this
 * network namespace's table (another host's connection is not there: the
 * proof of the secret alone admits it).  0 admitted, -1 refused. */
static int check_peer_user(int fd)
{
    uid_t me = geteuid();
    if (J.listen_unix) {
        struct ucred cr;
        socklen_t sl = sizeof(cr);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) != 0)
            return -1;
        return cr.uid == me ? 0 : -1;
    }
    struct sockaddr_storage peer, local;
    socklen_t pl = sizeof(peer), ll = sizeof(local);
    if (getpeername(fd, (void *)&peer, &pl) != 0 ||
        getsockname(fd, (void *)&local, &ll) != 0)
        return -1;
    uid_t uid;
    int rc = tcp_peer_uid(&peer, &local, &uid);
    return rc == 0 || (rc == 1 && uid == me) ? 0 : -1;
}

/* Drop the connection that has waited longest without joining. */
static void drop_oldest_pending(void)
{
    conn_t *old = NULL;
    for (size_t i = 0; i < J.nconns; i++) {
        conn_t *c = J.conns[i];
        if (!c->dead && c->pending && (!old || c->since < old->since))
            old = c;
    }
    if (old)
        conn_close(old);
}

double run_conn_timers(double now)
{
    double next = 0;
    for (size_t i = 0; i < J.nconns; i++) {
        conn_t *c = J.conns[i];
        if (c->dead || !c->pending)
            continue;
        if (now >= c->since + JOIN_WAIT)
            conn_close(c); /* never joined: not a rank of this job */
        else if (next == 0 || c->since + JOIN_WAIT < next)
            next = c->since + JOIN_WAIT;
    }
    return next;
}

void run_accept(void)
{
    if (J.listen_pause > tlm_util_now())
        return;
    for (;;) {
        int fd = accept4(J.listen_fd, NULL, NULL,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE) {
                if (J.npending > 0) { /* make room: it never joined */
                    drop_oldest_pending(); /* its descriptor is free now */
                    continue;
                }
                J.listen_pause = tlm_util_now() + 0.1;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
                run_say("accept: %s", strerror(errno));
            }
            return;
        }
        if (J.npending >= J.n + MAX_PENDING)
            drop_oldest_pending();
        if (!J.listen_unix) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
        conn_t *c = run_xrealloc(NULL, sizeof(*c));
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        c->rank = -1;
        c->since = tlm_util_now();
        c->pending = 1;
        J.npending++;
        if (J.nconns == J.cap_conns) {
            J.cap_conns = J.cap_conns ? 2 * J.cap_conns : 64;
            J.conns = run_xrealloc(J.conns, J.cap_conns * sizeof(*J.conns));
        }
        J.conns[J.nconns++] = c;
        /* the challenge: a fresh nonce the rank's proof must cover */
        unsigned char ch[WIRE_CHALLENGE_BODY];
        put_u32(ch, WIRE_VERSION);
        if (run_random(ch + 4, WIRE_NONCE) != 0) {
            run_say("getrandom: %s", strerror(errno));
            conn_close(c);
            continue;
        }
        memcpy(c->nonce, ch + 4, WIRE_NONCE);
        reply(c, OP_CHALLENGE, ST_OK, ch, sizeof(ch));
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

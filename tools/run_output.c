/* run_output.c - telemem-run --tag-output: each line of rank r's stdout
 * and stderr passed on whole, prefixed with "[r] ". */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

/* ---- tagged output ------------------------------------------------------ */

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            poll(&pfd, 1, 100);
        } else {
            return; /* EPIPE etc.: the reader is gone, drop the output */
        }
    }
}

/* Write [r] + line (one write, so lines of ranks never mix). */
static void emit(int rank, stream_t *s, const char *p, size_t n, int eol)
{
    char stackbuf[4096];
    char pre[16];
    int pl = s->cont ? 0 : snprintf(pre, sizeof(pre), "[%d] ", rank);
    size_t total = (size_t)pl + n + (eol ? 1 : 0);
    char *buf = total <= sizeof(stackbuf) ? stackbuf
                                          : run_xrealloc(NULL, total);
    memcpy(buf, pre, (size_t)pl);
    memcpy(buf + pl, p, n);
    if (eol)
        buf[pl + n] = '\n';
    write_all(s->dst, buf, total);
    if (buf != stackbuf)
        free(buf);
    s->cont = !eol;
}

#define PART_MAX 8192 /* a longer line is passed on in pieces */

void run_stream_read(int rank, stream_t *s)
{
    char buf[65536];
    ssize_t n = read(s->fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        if (s->plen)
            emit(rank, s, s->part, s->plen, 1);
        s->plen = 0;
        close(s->fd);
        s->fd = -1;
        return;
    }
    const char *p = buf, *end = buf + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        if (s->plen) {
            size_t add = (size_t)(nl - p);
            s->part = run_xrealloc(s->part, s->plen + add);
            memcpy(s->part + s->plen, p, add);
            emit(rank, s, s->part, s->plen + add, 1);
            s->plen = 0;
        } else {
            emit(rank, s, p, (size_t)(nl - p), 1);
        }
        p = nl + 1;
    }
    size_t rest = (size_t)(end - p);
    if (rest == 0)
        return;
    if (s->plen + rest > PART_MAX) {
        if (s->plen)
            emit(rank, s, s->part, s->plen, 0);
        emit(rank, s, p, rest, 0);
        s->plen = 0;
        return;
    }
    s->part = run_xrealloc(s->part, s->plen + rest);
    memcpy(s->part + s->plen, p, rest);
    s->plen += rest;
}

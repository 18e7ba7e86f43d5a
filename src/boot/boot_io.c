/* boot_io.c - non-blocking fd I/O with a deadline for the bootstrap
 * clients (boot.c, boot_pmi1.c): poll(2) with EINTR handled and the
 * timeout and poll failure logged, send-all and receive-some loops. */
#define TLM_LOG_SUBSYS "boot"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "telemem.h"
#include "util/log.h"
#include "util/util.h"

#include "boot/boot_io.h"

/* Milliseconds left for poll(), -1 for no deadline, 0 when it passed. */
static int ms_left(double deadline)
{
    if (deadline <= 0)
        return -1;
    return tlm_util_poll_ms(deadline - tlm_util_now());
}

int tlm_boot_io_wait(const tlm_boot_io_t *io, short events, double deadline,
                     const char *what)
{
    for (;;) {
        struct pollfd pfd = {.fd = io->fd, .events = events};
        int ms = ms_left(deadline);
        if (ms == 0) {
            tlm_error("%s %s: the launcher%s%s did not answer in time "
                      "(timeout %g s)",
                      io->proto, what, io->addr ? " at " : "",
                      io->addr ? io->addr : "", io->timeout);
            return TELEMEM_ERR_TIMED_OUT;
        }
        int n = poll(&pfd, 1, ms);
        if (n > 0)
            return TELEMEM_OK; /* errors show up in the send/recv */
        if (n < 0 && errno != EINTR) {
            int err = errno;
            if (io->fd_name)
                tlm_error("%s %s: poll(%s %d): %s", io->proto, what,
                          io->fd_name, io->fd, strerror(err));
            else
                tlm_error("%s %s: poll: %s", io->proto, what, strerror(err));
            return TELEMEM_ERR_BOOTSTRAP;
        }
    }
}

int tlm_boot_io_send(const tlm_boot_io_t *io, const void *buf, size_t len,
                     double deadline, const char *what, size_t *sent_p,
                     int *err_p)
{
    const unsigned char *p = buf;
    size_t off = 0;
    while (off < len) {
        ssize_t n =
            send(io->fd, p + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            off += (size_t)n;
            if (sent_p)
                *sent_p += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int rc = tlm_boot_io_wait(io, POLLOUT, deadline, what);
            if (rc != TELEMEM_OK)
                return rc;
            continue;
        }
        *err_p = n < 0 ? errno : 0;
        return TLM_BOOT_IO_LOST;
    }
    return TELEMEM_OK;
}

int tlm_boot_io_recv(const tlm_boot_io_t *io, void *buf, size_t cap,
                     double deadline, const char *what, size_t *got_p,
                     int *err_p)
{
    for (;;) {
        ssize_t n = recv(io->fd, buf, cap, MSG_DONTWAIT);
        if (n > 0) {
            *got_p = (size_t)n;
            return TELEMEM_OK;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int rc = tlm_boot_io_wait(io, POLLIN, deadline, what);
            if (rc != TELEMEM_OK)
                return rc;
            continue;
        }
        *err_p = n < 0 ? errno : 0;
        return TLM_BOOT_IO_LOST;
    }
}

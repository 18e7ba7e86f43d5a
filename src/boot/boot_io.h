/* boot_io.h - non-blocking fd I/O with a deadline for the bootstrap
 * clients (boot.c, boot_pmi1.c): wait on poll(2), send all bytes, receive
 * what is there.  Internal to src/boot. */
#ifndef TLM_BOOT_IO_H
#define TLM_BOOT_IO_H

#include <stddef.h>

/* The peer closed or reset the stream: returned by the send and receive
 * calls below, not logged (each client words that itself); the cause is
 * in *err_p (an errno, or 0 for an orderly close).  Not a TELEMEM_ code. */
#define TLM_BOOT_IO_LOST 1

/* One stream and the words its failures are logged with:
 * "<proto> <what>: the launcher[ at <addr>] did not answer in time
 * (timeout <timeout> s)" and "<proto> <what>: poll[(<fd_name> <fd>)]:
 * <error>". */
typedef struct tlm_boot_io {
    int fd;
    double timeout;      /* seconds, for the message only */
    const char *proto;   /* "kvs", "pmi1" */
    const char *addr;    /* the launcher's address, or NULL */
    const char *fd_name; /* the fd's name (e.g. "PMI_FD"), or NULL */
} tlm_boot_io_t;

/* Wait until io->fd is ready for events or deadline (0 = none) passes.
 * TELEMEM_OK, TELEMEM_ERR_TIMED_OUT or TELEMEM_ERR_BOOTSTRAP (both
 * logged). */
int tlm_boot_io_wait(const tlm_boot_io_t *io, short events, double deadline,
                     const char *what);

/* Send all len bytes of buf, waiting for room until deadline.  *sent_p
 * (when given) grows by every byte sent, also when the call fails.
 * TELEMEM_OK, a tlm_boot_io_wait() status, or TLM_BOOT_IO_LOST. */
int tlm_boot_io_send(const tlm_boot_io_t *io, const void *buf, size_t len,
                     double deadline, const char *what, size_t *sent_p,
                     int *err_p);

/* Receive at least one byte (at most cap) into buf, waiting for it until
 * deadline; *got_p is the count.  TELEMEM_OK, a tlm_boot_io_wait() status,
 * or TLM_BOOT_IO_LOST. */
int tlm_boot_io_recv(const tlm_boot_io_t *io, void *buf, size_t cap,
                     double deadline, const char *what, size_t *got_p,
                     int *err_p);

#endif

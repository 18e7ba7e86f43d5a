/* netpipe_backend.h - what bench/netpipe/netpipe.c needs from a
 * communication library, so that one measurement source builds four
 * programs (docs/benchmarks.md):
 *
 *   backend_telemem.c                      -> telemem-netpipe   (telemem)
 *   backend_armci.c against compat/armci   -> armci-netpipe     (armci-telemem)
 *   backend_armci.c against ARMCI-MPI      -> armci-mpi-netpipe (armci-mpi)
 *   backend_mpi.c, MPI two-sided           -> mpi-netpipe       (mpi)
 *
 * One-sided backends move a message with nb_put() into the peer's memory
 * and the receiver sees it by polling that memory.  The two-sided backend
 * (MPI) turns nb_put() into a send and needs the receiver to post a
 * matching nb_recv() into the same memory first; netpipe.c does that
 * wherever a one-sided receiver would start polling, so both kinds run the
 * same sequence of messages.
 *
 * Every function either succeeds or prints the failing call and ends the
 * process (exit status 1; the launcher then ends the job). */
#ifndef NETPIPE_BACKEND_H
#define NETPIPE_BACKEND_H

#include <stddef.h>
#include <stdio.h>

struct nb_info {
    const char *prog;   /* program name, for messages and the header */
    const char *impl;   /* the CSV's impl column */
    const char *launch; /* how to start 2 ranks, for --help */
    int two_sided;      /* 1: nb_put is a send that needs an nb_recv */
    int poll_default;   /* 1: waits call nb_poll() unless --poll no */
    int has_path;       /* 1: --path (TELEMEM_DIRECT) applies */
    int ordered;        /* 1: once a put's last bytes are visible at the
                         * target, all of it is, and puts to one target
                         * land in issue order.  0: the receiver needs a
                         * separate flag put after nb_fence(). */
};

/* Static description of this build. */
const struct nb_info *nb_info(void);

/* This process's rank as the launcher announced it in the environment,
 * before initialization (-1 when started without a launcher). */
int nb_env_rank(void);

/* Start the library.  @p path is "am", "direct", "auto" or NULL (leave
 * TELEMEM_DIRECT alone); only backends with has_path take a non-NULL
 * value. */
void nb_init(int *argc, char ***argv, const char *path);
void nb_finalize(void);
int nb_rank(void);
int nb_nranks(void);

/* End the whole job after an error (never returns). */
void nb_abort(int code) __attribute__((noreturn));

/* Collective: one block of @p bytes per rank, usable as the target of
 * nb_put from every rank (two-sided: private memory; the addresses are
 * exchanged anyway so that the caller's bookkeeping is the same). */
void nb_malloc_all(size_t bytes, void **bases);
void nb_free_all(void *mine);

/* Collectives; they keep serving incoming requests while they wait.
 * nb_barrier does not imply nb_quiet. */
void nb_barrier(void);
void nb_broadcast(void *buf, size_t bytes, int root);
void nb_allgather(const void *in, void *out, size_t bytes_per_rank);

/* Copy @p n bytes from @p local to @p remote in rank @p peer's block
 * (two-sided: send them; the receiver posts the matching nb_recv).
 * Returns when @p local may be reused.  Messages from one rank to one
 * peer are applied (received) in issue order. */
void nb_put(int peer, void *remote, const void *local, size_t n);

/* Two-sided only: receive the next message from @p peer (of exactly
 * @p n bytes) into @p local. */
void nb_recv(int peer, void *local, size_t n);

/* One-sided: every earlier nb_put of this rank is complete at its
 * target.  Two-sided: nothing (netpipe.c waits for an answer instead). */
void nb_quiet(void);

/* Every earlier nb_put of this rank to @p peer is complete at @p peer
 * (one-sided); nothing for two-sided backends. */
void nb_fence(int peer);

/* One step of progress from a spin loop (serve incoming requests). */
void nb_poll(void);

/* The CSV's path column: how puts travel ("am", "direct", "auto" for
 * Telemem as configured; "rma", "send" for the references). */
const char *nb_path(void);

/* "# key = value" header lines describing the library and its settings. */
void nb_print_header(FILE *out);

#endif

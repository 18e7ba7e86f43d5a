/* shm_bell.c - the shm transport's doorbell (docs/shm.md, "Sleeping"): a
 * word in each process's segment that senders look at after each message
 * and a datagram socket they write to when it says "asleep"; the sleeping
 * waits' arm and disarm around it; and the kicks that wake a peer's
 * progress thread (transport.h). */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "shm"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/shm/shm_inl.h"
#include "util/log.h"
#include "util/util.h"

/* The peer's bell said asleep: the first to ring it writes one datagram
 * to its socket (a sleeper polls it); later senders see RUNG.  The
 * datagram is the time of the ring (CLOCK_MONOTONIC, ns): the woken
 * process learns what its wake-up cost (tlm_shm_wait_disarm). */
void tlm_shm_ring_slow(shm_transport_t *st, shm_peer_t *p)
{
    uint32_t want = BELL_SLEEPING;
    if (atomic_compare_exchange_strong(p->bell, &want, BELL_RUNG)) {
        int64_t t = tlm_util_now_ns();
        (void)sendto(st->bell_fd, &t, sizeof(t), MSG_DONTWAIT | MSG_NOSIGNAL,
                     (const struct sockaddr *)&st->bell_to[p->local].addr,
                     st->bell_to[p->local].len);
    }
}

/* A sender sleeps until this receiver makes room: it has made some. */
void tlm_shm_space_slow(shm_transport_t *st, shm_peer_t *p)
{
    atomic_store_explicit(&p->in->want_space, 0, memory_order_relaxed);
    tlm_shm_ring_slow(st, p);
}

/* A wait of this process needs rank's CPU: wake its progress thread if
 * it listens and its application is outside the library (transport.h).
 * A datagram to its kick socket, not a futex: the socket's wake-up tells
 * the scheduler that the waker is about to wait (a sync wake-up), which
 * places the thread on this CPU, free in a moment, rather than behind its
 * own application's spin (measured 2026-11-28: a futex kick left the
 * thread queued behind its rank in MPI_Barrier for 2-4 ms while the
 * kicker's CPU went idle). */
bool tlm_shm_kick(tlm_transport_t *tp, int rank)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int l = rank >= 0 && rank < st->nranks ? st->local_of_rank[rank] : -1;
    if (l < 0 || l == st->my_local || !st->maps[l].kick)
        return false;
    _Atomic uint32_t *w = st->maps[l].kick;
    if (!atomic_load_explicit(&w[TLM_KICK_LISTEN], memory_order_relaxed) ||
        (atomic_load_explicit(&w[TLM_KICK_INSIDE], memory_order_relaxed) & 1))
        return false;
    struct sockaddr_un a = st->bell_to[l].addr;
    socklen_t len = st->bell_to[l].len;
    size_t n = len - offsetof(struct sockaddr_un, sun_path);
    if (n < 5 || memcmp(a.sun_path + n - 4, "bell", 4) != 0)
        return false; /* a cut name */
    memcpy(a.sun_path + n - 4, "kick", 4);
    char one = 1;
    return sendto(st->kick_fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
                  (const struct sockaddr *)&a, len) == 1;
}

_Atomic uint32_t *tlm_shm_kick_word(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    return st->maps[st->my_local].kick;
}

int tlm_shm_kick_fd(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    return st->kick_fd;
}

/* The window driver wrote into rank's memory. */
void tlm_shm_wake_rank(void *arg, int rank)
{
    shm_transport_t *st = arg;
    int l = st->local_of_rank[rank];
    if (l >= 0 && l != st->my_local)
        wake_check(st, &st->peers[l], st->fence);
}

/* Core stored into the node area what rank may wait for. */
void tlm_shm_wake(tlm_transport_t *tp, int rank)
{
    tlm_shm_wake_rank(tlm_container_of(tp, shm_transport_t, super), rank);
}

/* Ask the receivers this process waits on for room (its ring to them was
 * full, or its buffers are all with them) to ring when they make some,
 * then make every local process's earlier stores visible to the caller's
 * last look (membarrier: senders only need a compiler barrier), or fence
 * where that is not available.  A thread that sleeps while another sleeps
 * on the doorbell calls this alone: the room it waits for rings that
 * sleeper, which wakes it. */
void tlm_shm_wait_want(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    for (int l = 0; l < st->nlocal; l++) {
        shm_peer_t *p = &st->peers[l];
        if (l != st->my_local &&
            (p->blocked || (st->starved && p->fhead != p->ftail)))
            atomic_store_explicit(&p->out->want_space, 1,
                                  memory_order_relaxed);
    }
    if (!st->mb ||
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}

/* A wait is about to sleep: announce it (senders look at the bell after
 * each message), then tlm_shm_wait_want. */
int tlm_shm_wait_arm(tlm_transport_t *tp, int *fd_p)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    if (TLM_UNLIKELY(st->zc_peers) && tlm_shm_pull_under_way(st))
        return TELEMEM_ERR_AGAIN;
    atomic_store_explicit(st->maps[st->my_local].doorbell, BELL_SLEEPING,
                          memory_order_relaxed);
    tlm_shm_wait_want(&st->super);
    *fd_p = st->bell_fd;
    return TELEMEM_OK;
}

/* The sleep is over: the bell says awake, and the datagrams go.  Returns
 * the time of the earliest ring (0 if none), from which the waits learn
 * what this wake-up cost.  A datagram from outside the job (the socket's
 * name is not secret) can only skew that figure, which the waits bound. */
int64_t tlm_shm_wait_disarm(tlm_transport_t *tp)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    atomic_store(st->maps[st->my_local].doorbell, BELL_AWAKE);
    int64_t first = 0, t;
    ssize_t r;
    while ((r = recv(st->bell_fd, &t, sizeof(t), MSG_DONTWAIT)) >= 0)
        if (r == (ssize_t)sizeof(t) && t > 0 && (first == 0 || t < first))
            first = t;
    return first;
}

/* The abstract socket name of rank's doorbell, or with kind "kick" of its
 * kick socket (no file, gone with the process; ranks of one node share a
 * network namespace). */
static socklen_t sock_name(struct sockaddr_un *a, const char *jobid, int rank,
                           const char *kind)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    int k = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
                     "telemem-%s-%d-%s", jobid, rank, kind);
    if (k < 0 || (size_t)k >= sizeof(a->sun_path) - 1)
        k = (int)sizeof(a->sun_path) - 2; /* cut: still unique enough */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
}

socklen_t tlm_shm_bell_name(struct sockaddr_un *a, const char *jobid, int rank)
{
    return sock_name(a, jobid, rank, "bell");
}

/* A datagram socket of this process bound to its name of kind. */
static int bound_socket(const tlm_transport_params_t *p, const char *kind)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tlm_error("socket(AF_UNIX): %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un a;
    socklen_t len = sock_name(&a, p->jobid, p->rank, kind);
    if (bind(fd, (const struct sockaddr *)&a, len) != 0) {
        tlm_error("bind(@%s): %s", a.sun_path + 1, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* This process's doorbell and kick sockets, and its registration for
 * membarrier. */
int tlm_shm_bell_open(shm_transport_t *st, const tlm_transport_params_t *p)
{
    st->bell_fd = bound_socket(p, "bell");
    st->kick_fd = st->bell_fd >= 0 ? bound_socket(p, "kick") : -1;
    if (st->kick_fd < 0)
        return TELEMEM_ERR_TRANSPORT;
    st->mb = syscall(SYS_membarrier,
                     MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    if (!st->mb)
        tlm_debug("membarrier: %s; senders fence before the doorbell",
                  strerror(errno));
    return TELEMEM_OK;
}

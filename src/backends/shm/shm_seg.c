/* shm_seg.c - the shm transport's segments: one per process (its rings
 * from every local sender, its doorbell and kick words, its buffer pool),
 * their names, layout, creation and mapping; and a segment's lock, which
 * tells that its owner died, and what a dead owner leaves behind. */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "shm"
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/shm/shm_int.h"
#include "util/log.h"
#include "util/util.h"

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* The segment's name: the job id and the rank (the launcher's clean-up
 * and the tests find a job's objects by them) and 16 random hex digits,
 * so nobody can take the name first; peers learn it from the store. */
static int seg_name(char *buf, size_t n, const char *jobid, int rank)
{
    char rnd[17];
    if (tlm_util_random_hex(rnd, 16) != 0)
        return -1;
    snprintf(buf, n, "/telemem-%s-%d-%s", jobid, rank, rnd);
    return 0;
}

static void seg_key(char *buf, size_t n, int rank)
{
    snprintf(buf, n, "shm.seg.%d", rank);
}

static void layout(shm_seg_hdr_t *h, int nlocal, size_t buf_size,
                   size_t buf_count, size_t cells)
{
    size_t pg = page_size();
    size_t nwords = ((size_t)nlocal + 63) / 64;
    h->nlocal = nlocal;
    h->buf_size = buf_size;
    h->buf_count = buf_count;
    h->ring_cells = cells;
    h->off_doorbell = TLM_ALIGN_UP(sizeof(*h), CELL_SIZE);
    h->off_kick = h->off_doorbell + CELL_SIZE;
    h->off_active = h->off_kick + CELL_SIZE;
    h->off_rings = TLM_ALIGN_UP(h->off_active + nwords * 8, pg);
    h->ring_stride = TLM_ALIGN_UP(sizeof(shm_ring_t) + cells * CELL_SIZE, pg);
    h->off_slot_state = h->off_rings + (size_t)nlocal * h->ring_stride;
    h->off_bufs = TLM_ALIGN_UP(h->off_slot_state + buf_count * 4, pg);
    h->seg_size = h->off_bufs + buf_count * buf_size;
}

static void map_fill(shm_map_t *m, void *base)
{
    shm_seg_hdr_t *h = base;
    m->hdr = h;
    m->doorbell = (_Atomic uint32_t *)(void *)((char *)base + h->off_doorbell);
    m->kick = (_Atomic uint32_t *)(void *)((char *)base + h->off_kick);
    m->active = (_Atomic uint64_t *)(void *)((char *)base + h->off_active);
    m->rings = (char *)base + h->off_rings;
    m->slot_state =
        (_Atomic uint32_t *)(void *)((char *)base + h->off_slot_state);
    m->bufs = (char *)base + h->off_bufs;
}

/* Populate m's buffer pool (which pools and why: shm_int.h). */
void tlm_shm_populate(const shm_map_t *m, int advice, uint64_t max)
{
    size_t len = (size_t)(m->hdr->seg_size - m->hdr->off_bufs);
    if (len && len <= max && madvise(m->bufs, len, advice) != 0)
        tlm_debug("madvise(%s) of a buffer pool: %s",
                  advice == MADV_POPULATE_WRITE ? "POPULATE_WRITE"
                                                : "POPULATE_READ",
                  strerror(errno));
}

int tlm_shm_seg_create(shm_transport_t *st, const tlm_transport_params_t *p)
{
    shm_seg_hdr_t h = {0};
    layout(&h, st->nlocal, st->buf_size, (size_t)p->config->SHM_BUF_COUNT,
           (size_t)p->config->SHM_RING);
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
        if (seg_name(st->name, sizeof(st->name), p->jobid, p->rank) != 0) {
            tlm_error("getrandom: %s", strerror(errno));
            st->name[0] = '\0';
            return TELEMEM_ERR_TRANSPORT;
        }
        fd = shm_open(st->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno == EEXIST) /* not ours: another name */
            tlm_warn("/dev/shm%s exists already (not created by this job): "
                     "taking another name", st->name);
        else if (fd < 0)
            break;
    }
    if (fd < 0) {
        tlm_error("shm_open(%s): %s", st->name, strerror(errno));
        st->name[0] = '\0';
        return TELEMEM_ERR_TRANSPORT;
    }
    char key[32];
    seg_key(key, sizeof(key), p->rank);
    int rc = tlm_boot_put(p->boot, key, st->name, strlen(st->name) + 1);
    if (rc != TELEMEM_OK) {
        close(fd);
        return rc;
    }
    shm_map_t *m = &st->maps[st->my_local];
    m->fd = fd;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        tlm_error("flock(%s): %s", st->name, strerror(errno));
        return TELEMEM_ERR_TRANSPORT;
    }
    if (ftruncate(fd, (off_t)h.seg_size) != 0) {
        tlm_error("ftruncate(%s, %llu): %s", st->name,
                  (unsigned long long)h.seg_size, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    void *base = mmap(NULL, h.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                      fd, 0);
    if (base == MAP_FAILED) {
        tlm_error("mmap(%s, %llu): %s", st->name,
                  (unsigned long long)h.seg_size, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    h.magic = SHM_MAGIC;
    h.version = SHM_VERSION;
    h.rank = p->rank;
    h.mb_ok = st->mb;
    h.pid = (int32_t)getpid();
    h.base = (uintptr_t)base;
    memcpy(base, &h, sizeof(h));
    map_fill(m, base);
    m->rank = p->rank;
    tlm_shm_populate(m, MADV_POPULATE_WRITE, POPULATE_OWN_MAX);
    return TELEMEM_OK;
}

int tlm_shm_seg_map(shm_transport_t *st, const tlm_transport_params_t *p, int l,
                    int rank)
{
    char name[128], key[32];
    size_t len;
    shm_map_t *m = &st->maps[l];
    seg_key(key, sizeof(key), rank);
    int rc = tlm_boot_get(p->boot, key, name, sizeof(name), &len);
    if (rc != TELEMEM_OK || len < 2 || name[len - 1] != '\0' ||
        name[0] != '/' || strchr(name + 1, '/')) {
        tlm_error("rank %d published no usable segment name (%s)", rank,
                  telemem_strerror(rc));
        return rc != TELEMEM_OK ? rc : TELEMEM_ERR_TRANSPORT;
    }
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
    if (fd < 0) {
        tlm_error("shm_open(%s) of rank %d: %s", name, rank, strerror(errno));
        return TELEMEM_ERR_TRANSPORT;
    }
    m->fd = fd;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof(shm_seg_hdr_t)) {
        tlm_error("segment %s of rank %d is too small", name, rank);
        return TELEMEM_ERR_TRANSPORT;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        /* only this user's own, private object is a rank's segment */
        tlm_error("segment %s of rank %d belongs to uid %ld with mode %o, "
                  "not to this user with mode 600: refused", name, rank,
                  (long)sb.st_uid, (unsigned)(sb.st_mode & 0777));
        return TELEMEM_ERR_TRANSPORT;
    }
    void *base = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE,
                      MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        tlm_error("mmap(%s): %s", name, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    shm_seg_hdr_t *h = base;
    if (h->magic != SHM_MAGIC || h->version != SHM_VERSION ||
        h->rank != rank || h->nlocal != st->nlocal ||
        h->seg_size != (uint64_t)sb.st_size) {
        tlm_error("segment %s of rank %d has a different layout (version "
                  "%u, %d local ranks): mixed Telemem versions or settings?",
                  name, rank, h->version, h->nlocal);
        munmap(base, (size_t)sb.st_size);
        return TELEMEM_ERR_TRANSPORT;
    }
    map_fill(m, base);
    m->rank = rank;
    st->mb = st->mb && h->mb_ok; /* every rank computes the same */
    shm_peer_t *pe = &st->peers[l];
    pe->bell = m->doorbell;
    pe->local = l;
    pe->pid = (pid_t)h->pid;
    st->bell_to[l].len =
        tlm_shm_bell_name(&st->bell_to[l].addr, p->jobid, rank);
    return TELEMEM_OK;
}

void tlm_shm_seg_unmap_all(shm_transport_t *st)
{
    for (int l = 0; st->maps && l < st->nlocal; l++) {
        if (st->maps[l].hdr)
            munmap(st->maps[l].hdr, st->maps[l].hdr->seg_size);
        if (st->maps[l].fd >= 0)
            close(st->maps[l].fd);
    }
}

/* Is local peer l dead?  Each process holds an exclusive flock on its
 * segment for its whole life; the kernel drops it when the process dies
 * (even as a zombie).  A dead peer will never release the buffers still in
 * flight to it: they are taken back here, or the survivors run out of
 * buffers for each other. */
bool tlm_shm_lock_free(const shm_transport_t *st, int l)
{
    int fd = st->maps[l].fd;
    if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) != 0)
        return false;
    flock(fd, LOCK_UN);
    return true;
}

static bool local_dead(shm_transport_t *st, int l)
{
    if (!tlm_shm_lock_free(st, l))
        return false;
    shm_peer_t *p = &st->peers[l];
    while (p->fhead != p->ftail) {
        uint32_t sl = p->fifo[p->fhead++ % st->buf_count];
        atomic_store_explicit(&st->maps[st->my_local].slot_state[sl], 0,
                              memory_order_relaxed);
        st->free_q[st->free_tail++ % st->buf_count] = sl;
    }
    /* What it pulled is done; what it did not pull never will be. */
    tlm_shm_finish_pulls(st, p,
                         atomic_load_explicit(&p->out->pulled,
                                              memory_order_acquire),
                         TELEMEM_OK);
    tlm_shm_finish_pulls(st, p, UINT64_MAX, TELEMEM_ERR_PEER_DEAD);
    return true;
}

/* Out of buffers: maybe some are held by a dead peer (checked at most
 * every 50 ms, since it costs a system call per peer). */
void tlm_shm_reclaim_from_dead(shm_transport_t *st)
{
    double now = tlm_util_now();
    if (now < st->next_dead_check)
        return;
    st->next_dead_check = now + 0.05;
    for (int l = 0; l < st->nlocal; l++)
        if (l != st->my_local && st->peers[l].fhead != st->peers[l].ftail)
            local_dead(st, l);
}

/* A peer that finalized and closed its transport is gone, not dead: in
 * the finalize barrier the ranks that leave first must not turn the others'
 * last waits into TELEMEM_ERR_PEER_DEAD (everything they owe was sent
 * before they left the barrier). */
int tlm_shm_peer_alive(tlm_transport_t *tp, int peer_rank)
{
    shm_transport_t *st = tlm_container_of(tp, shm_transport_t, super);
    int l = st->local_of_rank[peer_rank];
    if (l < 0 || l == st->my_local)
        return TELEMEM_OK;
    if (!local_dead(st, l))
        return TELEMEM_OK;
    return st->maps[l].hdr &&
                   __atomic_load_n(&st->maps[l].hdr->departed, __ATOMIC_ACQUIRE)
               ? TELEMEM_OK
               : TELEMEM_ERR_PEER_DEAD;
}

/* window_direct.c - the same-node direct-path driver: blocks of
 * telemem_malloc_all in shared memory every local rank maps (the TCA model:
 * one address space), other registered memory reached with
 * process_vm_writev/readv (CMA); transfers are block-stride chains executed
 * by the initiator with plain stores (a few bytes), memcpy or CMA iovecs.
 * No target CPU involvement; every call completes before it returns.
 * Protocol, keys and clean-up: docs/direct.md. */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "window"
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/window/window.h"
#include "pack/pack.h"
#include "util/log.h"
#include "util/util.h"

/* Key kinds. */
enum { KEY_SEG = 1, KEY_CMA = 2 };

#define WIN_NAME_MAX 128
/* The first page of a segment holds its header: importers count themselves
 * there and the last one unlinks the name (nothing left in /dev/shm once
 * every local rank has mapped it, as the shm transport does). */
#define WIN_HDR 4096u
/* iovecs per process_vm_* call (UIO_MAXIOV is 1024). */
#define WIN_IOV 64

typedef struct win_key {
    uint32_t kind;
    int32_t pid;      /* KEY_CMA: the exposing process */
    uint64_t size;    /* KEY_SEG: mapping size (header page included) */
    uint32_t importers; /* KEY_SEG: local peers that will map it */
    uint32_t pad;
    char name[WIN_NAME_MAX];
} win_key_t;

_Static_assert(sizeof(win_key_t) <= TLM_DIRECT_KEY_MAX,
               "a window key fits the key of every block record");

typedef struct win_seg_hdr {
    _Atomic uint32_t mapped; /* importers that have mapped the segment */
} win_seg_hdr_t;

typedef struct win_mr {
    int kind;
    void *map;          /* KEY_SEG: the whole mapping */
    size_t map_len;
    char name[WIN_NAME_MAX];
    struct win_mr *next; /* KEY_SEG: this process's other blocks */
} win_mr_t;

typedef struct win_rkey {
    int kind;
    int peer;
    pid_t pid;          /* KEY_CMA */
    uintptr_t rbase;
    size_t rlen;
    char *map;          /* KEY_SEG: where rbase is mapped here */
    size_t map_len;
    struct win_rkey *next; /* KEY_SEG: the peer's other mapped blocks */
} win_rkey_t;

typedef struct window {
    tlm_direct_t super;
    int rank;
    int nlocal;
    pid_t pid;
    bool cma;           /* process_vm_* may be tried */
    bool *cma_denied;   /* by rank: a probe failed, do not ask again */
    int nranks;
    unsigned long seq;  /* segment names */
    tlm_window_wake_fn_t wake; /* a sleeping target wakes (window.h) */
    void *wake_arg;
    char prefix[88];    /* /telemem-<jobid>-<rank>-w */
    win_rkey_t **segs;  /* by rank: its blocks mapped here (tlm_window_map) */
    win_mr_t *mine;     /* this process's blocks (tlm_window_mine) */
} window_t;

static window_t *win_of(tlm_direct_t *d)
{
    return tlm_container_of(d, window_t, super);
}

/* ---- memory of telemem_malloc_all --------------------------------------- */

/* A new object of this rank under a name nobody can guess: the job id is
 * no secret (it is in every object's name), so a name made of it alone
 * could be taken first by another user.  A name that exists already is
 * not ours to use: say so and take another.  The descriptor, or -1
 * (logged; the block takes the AM path). */
static int create_seg(window_t *w, char *name, size_t cap)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        char rnd[17];
        if (tlm_util_random_hex(rnd, 16) != 0) {
            tlm_info("getrandom: %s; this block takes the AM path",
                     strerror(errno));
            return -1;
        }
        snprintf(name, cap, "%s%lu-%s", w->prefix, w->seq++, rnd);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST) {
            tlm_info("shm_open(%s): %s; this block takes the AM path", name,
                     strerror(errno));
            return -1;
        }
        tlm_warn("/dev/shm%s exists already (not created by this job): "
                 "taking another name", name);
    }
    return -1;
}

/* Is the object on fd what a peer of this job created: ours (the same
 * user), readable by nobody else, of the size its key says?  Then it is
 * mapped; anything else is refused with the reason. */
static bool seg_is_ours(int fd, const char *name, int peer, uint64_t size)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        tlm_warn("fstat(%s) of rank %d: %s; its block takes the AM path",
                 name, peer, strerror(errno));
        return false;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & 077) ||
        (uint64_t)sb.st_size != size) {
        tlm_warn("/dev/shm%s of rank %d is not that rank's block (owner "
                 "%ld, mode %o, %lld bytes; expected owner %ld, mode 600, "
                 "%llu bytes): its block takes the AM path", name, peer,
                 (long)sb.st_uid, (unsigned)(sb.st_mode & 0777),
                 (long long)sb.st_size, (long)geteuid(),
                 (unsigned long long)size);
        return false;
    }
    return true;
}

static int win_alloc(tlm_direct_t *d, size_t len, void **base,
                     tlm_direct_mr_t **mr_p, void *key, size_t *key_len)
{
    window_t *w = win_of(d);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    if (len > SIZE_MAX / 4)
        return TELEMEM_ERR_UNSUPPORTED; /* core's allocation reports it */
    size_t map_len = WIN_HDR + TLM_ALIGN_UP(len ? len : 1, pg);
    /* A shared block is sparse until touched: one larger than the free
     * space of /dev/shm (tmpfs, half of RAM by default) would be granted
     * and then kill whoever touches its end (SIGBUS).  Such a block is
     * private memory instead, checked by the kernel's overcommit rules. */
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) == 0 && vfs.f_frsize &&
        map_len / vfs.f_frsize >= (size_t)vfs.f_bavail) {
        tlm_info("a block of %zu bytes exceeds the free space of /dev/shm; "
                 "it takes the AM path", len);
        return TELEMEM_ERR_UNSUPPORTED;
    }
    win_mr_t *mr = calloc(1, sizeof(*mr));
    if (!mr)
        return TELEMEM_ERR_NO_MEMORY;
    int fd = create_seg(w, mr->name, sizeof(mr->name));
    if (fd < 0) {
        free(mr);
        return TELEMEM_ERR_UNSUPPORTED;
    }
    void *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)map_len) == 0)
        m = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (m == MAP_FAILED) {
        tlm_info("cannot size or map %s (%zu bytes): %s; this block takes "
                 "the AM path", mr->name, map_len, strerror(err));
        shm_unlink(mr->name);
        free(mr);
        return TELEMEM_ERR_UNSUPPORTED;
    }
    mr->kind = KEY_SEG;
    mr->map = m;
    mr->map_len = map_len;
    win_key_t k = {KEY_SEG, 0, map_len, (uint32_t)(w->nlocal - 1), 0, ""};
    snprintf(k.name, sizeof(k.name), "%s", mr->name);
    if (w->nlocal <= 1) { /* nobody will map it */
        shm_unlink(mr->name);
        mr->name[0] = '\0';
    }
    memcpy(key, &k, sizeof(k));
    *key_len = sizeof(k);
    *base = (char *)m + WIN_HDR;
    *mr_p = (tlm_direct_mr_t *)(void *)mr;
    mr->next = w->mine;
    w->mine = mr;
    return TELEMEM_OK;
}

static void win_free(tlm_direct_t *d, tlm_direct_mr_t *m)
{
    win_mr_t *mr = (win_mr_t *)(void *)m;
    if (!mr)
        return;
    if (mr->kind == KEY_SEG) {
        win_mr_t **pp = &win_of(d)->mine;
        while (*pp && *pp != mr)
            pp = &(*pp)->next;
        if (*pp)
            *pp = mr->next;
        if (mr->name[0])
            shm_unlink(mr->name); /* not every peer imported it */
        munmap(mr->map, mr->map_len);
    }
    free(mr);
}

/* ---- other memory: CMA -------------------------------------------------- */

static int win_expose(tlm_direct_t *d, void *base, size_t len,
                      tlm_direct_mr_t **mr_p, void *key, size_t *key_len)
{
    window_t *w = win_of(d);
    if (!w->cma)
        return TELEMEM_ERR_UNSUPPORTED;
    win_mr_t *mr = calloc(1, sizeof(*mr));
    if (!mr)
        return TELEMEM_ERR_NO_MEMORY;
    mr->kind = KEY_CMA;
    win_key_t k = {KEY_CMA, (int32_t)w->pid, 0, 0, 0, ""};
    memcpy(key, &k, sizeof(k));
    *key_len = sizeof(k);
    *mr_p = (tlm_direct_mr_t *)(void *)mr;
    return TELEMEM_OK;
}

static void win_unexpose(tlm_direct_t *d, tlm_direct_mr_t *m)
{
    free(m); /* nothing is pinned: the key only names the process */
}

/* ---- import ------------------------------------------------------------- */

static int import_seg(window_t *w, win_rkey_t *rk, const win_key_t *k)
{
    if (memchr(k->name, '\0', sizeof(k->name)) == NULL ||
        k->size < WIN_HDR || rk->rlen > k->size - WIN_HDR ||
        k->size > SIZE_MAX)
        return TELEMEM_ERR_INVALID_ARG;
    int fd = shm_open(k->name, O_RDWR | O_NOFOLLOW, 0);
    if (fd < 0) {
        tlm_warn("shm_open(%s) of rank %d: %s; its block takes the AM path",
                 k->name, rk->peer, strerror(errno));
        return TELEMEM_ERR_UNSUPPORTED;
    }
    if (!seg_is_ours(fd, k->name, rk->peer, k->size)) {
        close(fd);
        return TELEMEM_ERR_UNSUPPORTED;
    }
    void *m = mmap(NULL, k->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (m == MAP_FAILED) {
        tlm_warn("mmap(%s) of rank %d: %s; its block takes the AM path",
                 k->name, rk->peer, strerror(err));
        return TELEMEM_ERR_UNSUPPORTED;
    }
    rk->map = (char *)m + WIN_HDR;
    rk->map_len = k->size;
    /* The last local peer to map it removes the name. */
    win_seg_hdr_t *h = m;
    if (atomic_fetch_add(&h->mapped, 1) + 1 == k->importers)
        shm_unlink(k->name);
    (void)w;
    return TELEMEM_OK;
}

/* May this process write into rank's memory with process_vm_writev?  One
 * real read of a byte of the exposed range tells (ptrace rules, seccomp). */
static int import_cma(window_t *w, win_rkey_t *rk, const win_key_t *k)
{
    if (!w->cma || w->cma_denied[rk->peer])
        return TELEMEM_ERR_UNSUPPORTED;
    rk->pid = (pid_t)k->pid;
    char b;
    struct iovec l = {&b, 1}, r = {(void *)rk->rbase, 1};
    if (rk->rlen == 0 || process_vm_readv(rk->pid, &l, 1, &r, 1, 0) == 1)
        return TELEMEM_OK;
    tlm_info("process_vm_readv of rank %d (pid %d): %s; its registered "
             "ranges take the AM path", rk->peer, (int)rk->pid,
             strerror(errno));
    w->cma_denied[rk->peer] = true;
    return TELEMEM_ERR_UNSUPPORTED;
}

static int win_import(tlm_direct_t *d, int peer, uintptr_t rbase, size_t rlen,
                      const void *key, size_t key_len,
                      tlm_direct_rkey_t **rk_p)
{
    window_t *w = win_of(d);
    win_key_t k;
    if (key_len != sizeof(k) || peer < 0 || peer >= w->nranks)
        return TELEMEM_ERR_INVALID_ARG;
    memcpy(&k, key, sizeof(k));
    win_rkey_t *rk = calloc(1, sizeof(*rk));
    if (!rk)
        return TELEMEM_ERR_NO_MEMORY;
    rk->kind = (int)k.kind;
    rk->peer = peer;
    rk->rbase = rbase;
    rk->rlen = rlen;
    int rc = k.kind == KEY_SEG   ? import_seg(w, rk, &k)
             : k.kind == KEY_CMA ? import_cma(w, rk, &k)
                                 : TELEMEM_ERR_INVALID_ARG;
    if (rc != TELEMEM_OK) {
        free(rk);
        return rc;
    }
    if (rk->kind == KEY_SEG) {
        rk->next = w->segs[peer];
        w->segs[peer] = rk;
    }
    *rk_p = (tlm_direct_rkey_t *)(void *)rk;
    return TELEMEM_OK;
}

static void win_release(tlm_direct_t *d, tlm_direct_rkey_t *r)
{
    win_rkey_t *rk = (win_rkey_t *)(void *)r;
    if (!rk)
        return;
    if (rk->kind == KEY_SEG) {
        win_rkey_t **pp = &win_of(d)->segs[rk->peer];
        while (*pp && *pp != rk)
            pp = &(*pp)->next;
        if (*pp)
            *pp = rk->next;
        munmap(rk->map - WIN_HDR, rk->map_len);
    }
    free(rk);
}

bool tlm_window_mine(tlm_direct_t *d, uintptr_t addr, size_t len)
{
    for (const win_mr_t *mr = win_of(d)->mine; mr; mr = mr->next) {
        uintptr_t lo = (uintptr_t)mr->map + WIN_HDR;
        if (tlm_util_range_in(addr, len, lo,
                              (uintptr_t)mr->map + mr->map_len))
            return true;
    }
    return false;
}

const void *tlm_window_map(tlm_direct_t *d, int peer, uintptr_t addr,
                           size_t len)
{
    window_t *w = win_of(d);
    if (peer < 0 || peer >= w->nranks)
        return NULL;
    for (const win_rkey_t *rk = w->segs[peer]; rk; rk = rk->next)
        if (tlm_util_range_in(addr, len, rk->rbase, rk->rbase + rk->rlen))
            return rk->map + (addr - rk->rbase);
    return NULL;
}

/* The caller's own loads and stores (telemem_ptr): blocks only; a CMA
 * key maps nothing here. */
static void *win_ptr(tlm_direct_t *d, tlm_direct_rkey_t *r, uintptr_t remote)
{
    (void)d;
    win_rkey_t *rk = (win_rkey_t *)(void *)r;
    if (rk->kind != KEY_SEG ||
        !tlm_util_range_in(remote, 1, rk->rbase, rk->rbase + rk->rlen))
        return NULL;
    return rk->map + (remote - rk->rbase);
}

/* After the caller's stores through win_ptr: the doorbell check a write
 * makes (the shm transport's; lock-free). */
static void win_wake(tlm_direct_t *d, int peer)
{
    window_t *w = win_of(d);
    w->wake(w->wake_arg, peer);
}

/* A process_vm_* call costs a system call and page lookups: below this
 * the AM path is faster (the old driver default, docs/direct.md). */
#define WIN_CMA_MIN 4096u

static size_t win_key_min(tlm_direct_t *d, const tlm_direct_rkey_t *r)
{
    (void)d;
    const win_rkey_t *rk = (const win_rkey_t *)(const void *)r;
    return rk->kind == KEY_CMA ? WIN_CMA_MIN : 0;
}

/* ---- transfers ---------------------------------------------------------- */

/* count blocks of n bytes, block i from src + i * ss to dst + i * ds.  A
 * few bytes go as plain stores (PIO): the common row lengths get loops of
 * their own, where memcpy of a constant size compiles to moves. */
#define WIN_ROWS(N)                                                            \
    for (size_t i_ = 0; i_ < count; i_++, dst += ds, src += ss)               \
        memcpy(dst, src, N);                                                   \
    break

/* Long blocks are copied in pieces of this size: glibc's memcpy uses
 * rep movsb up to 1 MiB on this kind of CPU (x86.cpu_features.
 * rep_movsb_stop_threshold) and a vector loop above it, which was 15-20%
 * slower here for 2-8 MiB puts into the shared window. */
#define WIN_PIECE ((size_t)512 * 1024)

static void win_copy_long(char *dst, const char *src, size_t n)
{
    while (n > WIN_PIECE) {
        memcpy(dst, src, WIN_PIECE);
        dst += WIN_PIECE;
        src += WIN_PIECE;
        n -= WIN_PIECE;
    }
    memcpy(dst, src, n);
}

static void win_rows(char *dst, ptrdiff_t ds, const char *src, ptrdiff_t ss,
                     size_t n, size_t count)
{
    if (n > WIN_PIECE) {
        for (size_t i = 0; i < count; i++, dst += ds, src += ss)
            win_copy_long(dst, src, n);
        return;
    }
    switch (n) {
    case 1: WIN_ROWS(1);
    case 2: WIN_ROWS(2);
    case 4: WIN_ROWS(4);
    case 8: WIN_ROWS(8);
    case 16: WIN_ROWS(16);
    case 32: WIN_ROWS(32);
    case 64: WIN_ROWS(64);
    case 128: WIN_ROWS(128);
    default: WIN_ROWS(n);
    }
}

static void seg_chain(win_rkey_t *rk, const tlm_direct_seg_t *segs, int nsegs,
                      bool write)
{
    for (int i = 0; i < nsegs; i++) {
        const tlm_direct_seg_t *s = &segs[i];
        char *loc = (char *)s->local;
        char *rem = rk->map + (s->remote - rk->rbase);
        if (!write) {
            win_rows(loc, s->local_stride, rem, s->remote_stride, s->block,
                     s->count);
            continue;
        }
        if (i < nsegs - 1 || s->count == 0 || s->block == 0) {
            win_rows(rem, s->remote_stride, loc, s->local_stride, s->block,
                     s->count);
            continue;
        }
        /* telemem.h promises a put whose last bytes show their new value
         * is there whole (targets poll the last word), and memcpy does not
         * store in address order: the last 8 bytes of the last block (4,
         * 2, 1 when shorter) go after the rest, in one store.  Not memcpy:
         * it may store them twice, and a target that saw the first store
         * and wrote there (NetPIPE's receiver does) lost its write to the
         * second. */
        size_t k = s->count - 1, tail = tlm_util_tail_len(s->block);
        win_rows(rem, s->remote_stride, loc, s->local_stride, s->block, k);
        loc += (ptrdiff_t)k * s->local_stride;
        rem += (ptrdiff_t)k * s->remote_stride;
        if (s->block > tail)
            win_copy_long(rem, loc, s->block - tail);
        atomic_thread_fence(memory_order_release);
        tlm_util_store_once(rem + s->block - tail, loc + s->block - tail,
                            tail);
    }
    /* Later messages of this rank (flags, AM requests) must not become
     * visible before the data. */
    atomic_thread_fence(memory_order_release);
}

/* Hand n (local, remote) pairs to the kernel, resuming after a partial
 * transfer (the kernel stops at page or iovec boundaries under pressure). */
static int cma_batch(win_rkey_t *rk, struct iovec *l, struct iovec *r, int n,
                     bool write)
{
    int li = 0, ri = 0;
    while (li < n) {
        ssize_t k = write ? process_vm_writev(rk->pid, l + li, (unsigned long)(n - li),
                                              r + ri, (unsigned long)(n - ri), 0)
                          : process_vm_readv(rk->pid, l + li, (unsigned long)(n - li),
                                             r + ri, (unsigned long)(n - ri), 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            tlm_error("process_vm_%sv to rank %d (pid %d): %s",
                      write ? "write" : "read", rk->peer, (int)rk->pid,
                      strerror(err));
            return err == ESRCH ? TELEMEM_ERR_PEER_DEAD
                                : TELEMEM_ERR_TRANSPORT;
        }
        if (k == 0) {
            tlm_error("process_vm_%sv to rank %d moved nothing",
                      write ? "write" : "read", rk->peer);
            return TELEMEM_ERR_TRANSPORT;
        }
        /* Local and remote iovecs pair one to one (same lengths). */
        size_t done = (size_t)k;
        while (done && li < n) {
            size_t t = TLM_MIN(done, l[li].iov_len);
            l[li].iov_base = (char *)l[li].iov_base + t;
            l[li].iov_len -= t;
            r[ri].iov_base = (char *)r[ri].iov_base + t;
            r[ri].iov_len -= t;
            done -= t;
            if (l[li].iov_len == 0) {
                li++;
                ri++;
            }
        }
    }
    return TELEMEM_OK;
}

static int cma_chain(win_rkey_t *rk, const tlm_direct_seg_t *segs, int nsegs,
                     bool write)
{
    struct iovec l[WIN_IOV], r[WIN_IOV];
    int n = 0;
    for (int i = 0; i < nsegs; i++) {
        const tlm_direct_seg_t *s = &segs[i];
        uintptr_t loc = s->local, rem = s->remote;
        for (size_t b = 0; b < s->count; b++) {
            /* A put's last 8 bytes (last byte when shorter) get an entry
             * of their own: the kernel copies the entries in order, so
             * they land after the rest (seg_chain's promise). */
            bool last = write && i == nsegs - 1 && b == s->count - 1;
            size_t tail = !last || s->block <= 1 ? 0 : s->block > 8 ? 8 : 1;
            for (int part = 0; s->block && part < 2; part++) {
                size_t off = part ? s->block - tail : 0;
                size_t len = part ? tail : s->block - tail;
                if (!len)
                    continue;
                l[n] = (struct iovec){(void *)(loc + off), len};
                r[n] = (struct iovec){(void *)(rem + off), len};
                if (++n == WIN_IOV) {
                    int rc = cma_batch(rk, l, r, n, write);
                    if (rc != TELEMEM_OK)
                        return rc;
                    n = 0;
                }
            }
            loc += (uintptr_t)s->local_stride;
            rem += (uintptr_t)s->remote_stride;
        }
    }
    return n ? cma_batch(rk, l, r, n, write) : TELEMEM_OK;
}

/* Does every block of the chain lie inside the key's range?  Core checks
 * a transfer's extent against the range it knows before it comes here;
 * this keeps the driver from ever forming an address outside the mapping
 * (a wrong chain would otherwise be a write into this process's own
 * memory). */
static bool chain_inside(const win_rkey_t *rk, const tlm_direct_seg_t *segs,
                         int nsegs)
{
    uintptr_t end = rk->rbase + rk->rlen;
    for (int i = 0; i < nsegs; i++) {
        const tlm_direct_seg_t *s = &segs[i];
        if (s->count == 0 || s->block == 0)
            continue;
        /* the last block starts (count - 1) strides after the first */
        if (s->remote_stride < 0 ||
            (s->count > 1 &&
             (size_t)s->remote_stride > (SIZE_MAX - s->block) / (s->count - 1)))
            return false;
        size_t span = (s->count - 1) * (size_t)s->remote_stride + s->block;
        if (!tlm_util_range_in(s->remote, span, rk->rbase, end))
            return false;
    }
    return true;
}

static int win_write(tlm_direct_t *d, int peer, tlm_direct_rkey_t *r,
                     const tlm_direct_seg_t *segs, int nsegs)
{
    window_t *w = win_of(d);
    win_rkey_t *rk = (win_rkey_t *)(void *)r;
    if (rk->kind == KEY_SEG && !chain_inside(rk, segs, nsegs)) {
        tlm_error("a write to rank %d runs outside its block", peer);
        return TELEMEM_ERR_OUT_OF_RANGE;
    }
    int rc = TELEMEM_OK;
    if (rk->kind == KEY_SEG)
        seg_chain(rk, segs, nsegs, true);
    else
        rc = cma_chain(rk, segs, nsegs, true);
    w->wake(w->wake_arg, peer);
    return rc;
}

static int win_read(tlm_direct_t *d, int peer, tlm_direct_rkey_t *r,
                    const tlm_direct_seg_t *segs, int nsegs)
{
    win_rkey_t *rk = (win_rkey_t *)(void *)r;
    if (rk->kind == KEY_SEG && !chain_inside(rk, segs, nsegs)) {
        tlm_error("a read from rank %d runs outside its block", peer);
        return TELEMEM_ERR_OUT_OF_RANGE;
    }
    if (rk->kind == KEY_SEG) {
        atomic_thread_fence(memory_order_acquire);
        seg_chain(rk, segs, nsegs, false);
        return TELEMEM_OK;
    }
    return cma_chain(rk, segs, nsegs, false);
}

/* Hardware atomics on the shared mapping: every local rank maps the same
 * pages, so a lock-prefixed instruction here is atomic against the
 * target's own (core applies atomics and integer accumulates with atomic
 * instructions while this driver is open: TLM_ACC_ATOMIC).  CMA keys
 * cannot do it (process_vm_* copies bytes). */
static int win_atomic(tlm_direct_t *d, int peer, tlm_direct_rkey_t *r,
                      uintptr_t remote, int op, unsigned width,
                      uint64_t operand, uint64_t compare, uint64_t *old)
{
    window_t *w = win_of(d);
    win_rkey_t *rk = (win_rkey_t *)(void *)r;
    if (rk->kind != KEY_SEG || (width != 4 && width != 8) || remote % width)
        return TELEMEM_ERR_UNSUPPORTED;
    if (!tlm_util_range_in(remote, width, rk->rbase, rk->rbase + rk->rlen))
        return TELEMEM_ERR_OUT_OF_RANGE; /* core checked it: never here */
    *old = tlm_rmw_apply(op, width, rk->map + (remote - rk->rbase), operand,
                         compare);
    w->wake(w->wake_arg, peer);
    return TELEMEM_OK;
}

/* Accumulates on the shared mapping: the initiator applies them with the
 * atomic kernels, as the target applies the ones that reach it by the AM
 * path (TLM_ACC_ATOMIC while this driver is open), so both mix element by
 * element.  The target's CPU takes no part: an accumulate completes while
 * the target computes or sleeps. */
static int win_acc(tlm_direct_t *d, int peer, tlm_direct_rkey_t *r,
                   const tlm_direct_seg_t *segs, int nsegs, int type,
                   const void *scale)
{
    window_t *w = win_of(d);
    win_rkey_t *rk = (win_rkey_t *)(void *)r;
    size_t es = tlm_acc_elem_size(type);
    if (rk->kind != KEY_SEG || !es)
        return TELEMEM_ERR_UNSUPPORTED;
    for (int i = 0; i < nsegs; i++) {
        const tlm_direct_seg_t *s = &segs[i];
        const char *loc = (const char *)s->local;
        char *rem = rk->map + (s->remote - rk->rbase);
        for (size_t b = 0; b < s->count; b++) {
            tlm_acc_apply(type | TLM_ACC_ATOMIC, rem, loc, s->block / es,
                          scale);
            loc += s->local_stride;
            rem += s->remote_stride;
        }
    }
    /* Visible before anything this rank sends next (a flag, a barrier). */
    atomic_thread_fence(memory_order_release);
    w->wake(w->wake_arg, peer);
    return TELEMEM_OK;
}

static void win_close(tlm_direct_t *d)
{
    window_t *w = win_of(d);
    free(w->cma_denied);
    free(w->segs);
    free(w);
}

static const tlm_direct_ops_t win_ops = {
    .alloc = win_alloc,
    .free = win_free,
    .expose = win_expose,
    .unexpose = win_unexpose,
    .import = win_import,
    .release = win_release,
    .key_min = win_key_min,
    .write = win_write,
    .read = win_read,
    .atomic = win_atomic,
    .acc = win_acc,
    .ptr = win_ptr,
    .wake = win_wake,
    .flush = NULL, /* sync */
    .progress = NULL,
    .close = win_close,
};

/* ---- open --------------------------------------------------------------- */

/* Can this process use process_vm_writev/readv on its peers?  Yama's
 * ptrace_scope 1 allows it only towards descendants (not our peers), 2 and
 * 3 only with CAP_SYS_PTRACE; a container may filter the system call.  A
 * read of our own memory tells whether the call exists and is allowed. */
static bool cma_usable(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f) {
        /* A malformed value counts as 0, as a missing file does. */
        char buf[32];
        long scope = 0;
        if (fgets(buf, sizeof(buf), f)) {
            char *end;
            errno = 0;
            scope = strtol(buf, &end, 10);
            if (errno || end == buf)
                scope = 0;
        }
        fclose(f);
        if (scope != 0) {
            tlm_info("yama ptrace_scope is %ld: registered ranges take the AM "
                     "path (CMA needs 0)", scope);
            return false;
        }
    }
    char src = 1, dst = 0;
    struct iovec l = {&dst, 1}, r = {&src, 1};
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 1 || dst != 1) {
        tlm_info("process_vm_readv is not available (%s): registered ranges "
                 "take the AM path", strerror(errno));
        return false;
    }
    return true;
}

int tlm_window_open(const tlm_transport_params_t *p, const int *local_of_rank,
                    tlm_window_wake_fn_t wake, void *wake_arg,
                    tlm_direct_t **d_p)
{
    *d_p = NULL;
    window_t *w = calloc(1, sizeof(*w));
    if (!w)
        return TELEMEM_ERR_NO_MEMORY;
    w->cma_denied = calloc((size_t)p->size, sizeof(bool));
    w->segs = calloc((size_t)p->size, sizeof(win_rkey_t *));
    if (!w->cma_denied || !w->segs) {
        free(w->cma_denied);
        free(w->segs);
        free(w);
        return TELEMEM_ERR_NO_MEMORY;
    }
    w->super.ops = &win_ops;
    w->super.name = "window";
    w->super.sync = true;
    /* docs/direct.md: on an idle machine here a store into the shared
     * mapping beats the AM path at every size and row length. */
    w->super.threshold = 1;
    w->super.row_threshold = 1;
    w->super.max_segs = 1u << 20;
    w->rank = p->rank;
    w->nranks = p->size;
    w->wake = wake;
    w->wake_arg = wake_arg;
    w->pid = getpid();
    for (int r = 0; r < p->size; r++)
        w->nlocal += local_of_rank[r] >= 0;
    w->cma = p->direct_cma && cma_usable();
    snprintf(w->prefix, sizeof(w->prefix), "/telemem-%s-%d-w", p->jobid,
             p->rank);
    tlm_debug("window open: %d local ranks, cma %s", w->nlocal,
              w->cma ? "on" : "off");
    *d_p = &w->super;
    return TELEMEM_OK;
}

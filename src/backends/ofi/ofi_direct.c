/* ofi_direct.c - the ofi-rma direct-path driver: fi_writemsg/fi_readmsg on
 * the ofi transport's own endpoint, memory registered through the
 * registration cache (regcache.h), keys = the provider's MR key plus the
 * registration's base (for providers that address by offset), completions
 * taken from the transport's completion queue (tlm_ofi_direct_event).
 *
 * A block-stride chain becomes a list of operations, each carrying up to
 * the provider's iov limit of (local block, remote block) pairs; they are
 * posted in order, and what the provider cannot take yet (-FI_EAGAIN)
 * waits in a FIFO that progress and flush post later, so write and read
 * never answer "again" for the provider's sake.  Writes ask for
 * FI_DELIVERY_COMPLETE: their completion means the bytes are in the
 * target's memory, which is what flush (quiet) promises.  Sharing the
 * transport's endpoint means the target's ordinary polling of the
 * transport also drives incoming RMA on software providers (tcp, shm). */
#define TLM_LOG_SUBSYS "ofi"
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/ofi/ofi_direct.h"
#include "backends/regcache.h"
#include "util/log.h"
#include "util/util.h"

#define OD_IOV_MAX 8           /* most block pairs in one operation */
#define OD_MAGIC 0x7e1ed1c7u   /* tells our contexts from the transport's */
#define OD_KEY_VERSION 1u
#define OD_CHUNK 64            /* operations allocated at a time */
/* Default TELEMEM_DIRECT_THRESHOLD for this driver: below it the AM path's
 * copies are cheaper than an RMA operation (bench/direct on loopback). */
#define OD_THRESHOLD ((size_t)64 * 1024)

/* One provider operation.  fi_context first (FI_CONTEXT mode), then the
 * magic at the same offset as the transport's context tag. */
typedef struct od_op {
    struct fi_context fctx;
    uint32_t magic;
    bool write;
    int peer;
    int n;
    struct od_op *next;
    uint64_t key;
    struct iovec iov[OD_IOV_MAX];
    void *desc[OD_IOV_MAX];
    struct fi_rma_iov rma[OD_IOV_MAX];
    tlm_regcache_entry_t *local[OD_IOV_MAX]; /* FI_MR_LOCAL only */
} od_op_t;

/* The key bytes that travel to importers. */
typedef struct od_key {
    uint64_t key;     /* fi_mr_key */
    uint64_t base;    /* registered base: remote offsets start here */
    uint32_t virt;    /* 1: the provider addresses by virtual address */
    uint32_t version;
} od_key_t;

/* An imported key.  Released keys are kept (not freed) on a FIFO and
 * reused only once RK_KEEP of them wait, so a write under a released key
 * is recognised and refused (never attempted) rather than reading freed
 * memory. */
typedef struct od_rkey {
    uint64_t key, base;
    bool virt, live;
    int peer;
    struct od_rkey *next;
} od_rkey_t;
#define RK_KEEP 64

typedef struct ofi_direct {
    tlm_direct_t super;
    tlm_ofi_direct_env_t env;
    tlm_regcache_t cache;
    bool mr_local, virt, prov_key, deliv;
    uint64_t next_key;          /* requested keys without FI_MR_PROV_KEY */
    size_t iov_limit;
    size_t max_msg;
    od_op_t *free_ops;
    struct od_chunk *chunks;    /* every operation's memory, freed at close */
    od_rkey_t *rk_head, *rk_tail; /* released keys, oldest first */
    long rk_waiting;
    od_op_t *q_head, *q_tail;   /* built, not yet accepted by the provider */
    long *inflight;             /* by rank: operations not yet complete */
    long total;
    int *err;                   /* by rank: first failure since last flush */
    char prov[48];              /* super.provider: libfabric's provider */
} ofi_direct_t;

static ofi_direct_t *od_of(tlm_direct_t *d)
{
    return tlm_container_of(d, ofi_direct_t, super);
}

/* Registration cache callbacks. */
static int od_reg(void *arg, uintptr_t lo, size_t len, void **handle_p)
{
    ofi_direct_t *od = arg;
    struct fid_mr *mr = NULL;
    uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    int r = fi_mr_reg(od->env.domain, (void *)lo, len, access, 0,
                      od->prov_key ? 0 : od->next_key++, 0, &mr, NULL);
    if (r) {
        tlm_error("fi_mr_reg(%#lx, %zu bytes): %s", (unsigned long)lo, len,
                  fi_strerror(-r));
        return TELEMEM_ERR_TRANSPORT;
    }
    *handle_p = mr;
    return TELEMEM_OK;
}

static void od_dereg(void *arg, void *handle)
{
    (void)arg;
    int r = fi_close(&((struct fid_mr *)handle)->fid);
    if (r)
        tlm_warn("fi_close(mr): %s", fi_strerror(-r));
}

static int od_expose(tlm_direct_t *d, void *base, size_t len,
                     tlm_direct_mr_t **mr_p, void *key, size_t *key_len)
{
    ofi_direct_t *od = od_of(d);
    if (!base || !len || !mr_p || !key || !key_len)
        return TELEMEM_ERR_INVALID_ARG;
    tlm_regcache_entry_t *e;
    int rc = tlm_regcache_get(&od->cache, (uintptr_t)base, len, &e);
    if (rc != TELEMEM_OK)
        return rc;
    od_key_t k = {.key = fi_mr_key(e->handle), .base = e->lo,
                  .virt = od->virt, .version = OD_KEY_VERSION};
    memcpy(key, &k, sizeof(k));
    *key_len = sizeof(k);
    *mr_p = (tlm_direct_mr_t *)(void *)e;
    return TELEMEM_OK;
}

/* The range is no longer exposed, and core is about to free it: drop
 * every unused registration over it, so the key dies now (a peer's write
 * under it is refused by providers that check keys) and no cached
 * registration outlives the memory (an address reused by a later mapping
 * would otherwise meet registrations of the old pages). */
static void od_unexpose(tlm_direct_t *d, tlm_direct_mr_t *mr)
{
    tlm_regcache_entry_t *e = (tlm_regcache_entry_t *)(void *)mr;
    if (!e)
        return;
    uintptr_t lo = e->lo;
    size_t len = e->hi - e->lo;
    tlm_regcache_put(&od_of(d)->cache, e);
    tlm_regcache_flush(&od_of(d)->cache, lo, len);
}

const tlm_regcache_t *tlm_ofi_direct_cache(const tlm_direct_t *d)
{
    return d ? &tlm_container_of(d, ofi_direct_t, super)->cache : NULL;
}

static int od_import(tlm_direct_t *d, int peer, uintptr_t rbase, size_t rlen,
                     const void *key, size_t key_len, tlm_direct_rkey_t **rk_p)
{
    ofi_direct_t *od = od_of(d);
    od_key_t k;
    if (peer < 0 || peer >= od->env.size || !key || !rk_p ||
        key_len != sizeof(k))
        return TELEMEM_ERR_INVALID_ARG;
    memcpy(&k, key, sizeof(k));
    if (k.version != OD_KEY_VERSION || rbase < k.base) {
        tlm_error("rank %d sent a malformed ofi-rma key", peer);
        return TELEMEM_ERR_PROTOCOL;
    }
    (void)rlen;
    od_rkey_t *rk;
    if (od->rk_waiting >= RK_KEEP) {
        rk = od->rk_head;
        od->rk_head = rk->next;
        if (!od->rk_head)
            od->rk_tail = NULL;
        od->rk_waiting--;
    } else if (!(rk = malloc(sizeof(*rk)))) {
        return TELEMEM_ERR_NO_MEMORY;
    }
    *rk = (od_rkey_t){.key = k.key, .base = k.base, .virt = k.virt != 0,
                      .live = true, .peer = peer};
    *rk_p = (tlm_direct_rkey_t *)(void *)rk;
    return TELEMEM_OK;
}

static void od_release(tlm_direct_t *d, tlm_direct_rkey_t *rkey)
{
    ofi_direct_t *od = od_of(d);
    od_rkey_t *rk = (od_rkey_t *)(void *)rkey;
    if (!rk || !rk->live)
        return;
    rk->live = false;
    rk->next = NULL;
    if (od->rk_tail)
        od->rk_tail->next = rk;
    else
        od->rk_head = rk;
    od->rk_tail = rk;
    od->rk_waiting++;
}

/* Operations come from chunks that live until close, so operations still
 * in flight when the endpoint closes are freed with them. */
typedef struct od_chunk {
    struct od_chunk *next;
    od_op_t ops[OD_CHUNK];
} od_chunk_t;

static od_op_t *op_take(ofi_direct_t *od)
{
    if (!od->free_ops) {
        od_chunk_t *c = malloc(sizeof(*c));
        if (!c)
            return NULL;
        c->next = od->chunks;
        od->chunks = c;
        for (int i = 0; i < OD_CHUNK; i++) {
            c->ops[i].next = od->free_ops;
            od->free_ops = &c->ops[i];
        }
    }
    od_op_t *op = od->free_ops;
    od->free_ops = op->next;
    memset(op, 0, offsetof(od_op_t, iov));
    op->magic = OD_MAGIC;
    return op;
}

/* An operation is over (done, failed or never posted): give back what it
 * holds. */
static void op_finish(ofi_direct_t *od, od_op_t *op, int err)
{
    for (int i = 0; i < op->n; i++)
        if (op->local[i])
            tlm_regcache_put(&od->cache, op->local[i]);
    if (err && !od->err[op->peer]) {
        /* A connection torn down under the operation (the peer died, or
         * the provider dropped it): the peer is gone for this job. */
        bool gone = err == FI_ECONNREFUSED || err == FI_ENOTCONN ||
                    err == FI_ECONNRESET || err == FI_ECANCELED;
        tlm_error("%s of %zu bytes at rank %d failed: %s%s",
                  op->write ? "fi_writemsg" : "fi_readmsg",
                  op->iov[0].iov_len, op->peer, fi_strerror(err),
                  gone ? " (the peer is dead or its connection was lost)"
                       : "");
        od->err[op->peer] = gone ? TELEMEM_ERR_PEER_DEAD
                                 : TELEMEM_ERR_TRANSPORT;
    }
    od->inflight[op->peer]--;
    od->total--;
    op->next = od->free_ops;
    od->free_ops = op;
}

bool tlm_ofi_direct_event(tlm_direct_t *d, void *ctx, int err)
{
    uint32_t magic;
    if (!d || !ctx)
        return false;
    memcpy(&magic, (char *)ctx + offsetof(od_op_t, magic), sizeof(magic));
    if (magic != OD_MAGIC)
        return false;
    op_finish(od_of(d), ctx, err);
    return true;
}

static ssize_t post_one(ofi_direct_t *od, od_op_t *op)
{
    struct fi_msg_rma m = {
        .msg_iov = op->iov,
        .desc = od->mr_local ? op->desc : NULL,
        .iov_count = (size_t)op->n,
        .addr = od->env.addrs[op->peer],
        .rma_iov = op->rma,
        .rma_iov_count = (size_t)op->n,
        .context = &op->fctx,
    };
    if (!op->write)
        return fi_readmsg(od->env.ep, &m, FI_COMPLETION);
    ssize_t r = fi_writemsg(od->env.ep, &m, FI_COMPLETION |
                            (od->deliv ? FI_DELIVERY_COMPLETE : 0));
    if (r == -FI_EBADFLAGS && od->deliv) {
        /* The provider completes writes only on transmission: keep going
         * (reliable, ordered providers deliver them before later traffic)
         * but say so once. */
        tlm_debug("provider refuses FI_DELIVERY_COMPLETE on writes; using "
                  "its default completion");
        od->deliv = false;
        r = fi_writemsg(od->env.ep, &m, FI_COMPLETION);
    }
    return r;
}

/* Hand queued operations to the provider, in order, while it takes them. */
static void post_queue(ofi_direct_t *od)
{
    while (od->q_head) {
        od_op_t *op = od->q_head;
        ssize_t r = post_one(od, op);
        if (r == -FI_EAGAIN) {
            fi_cq_read(od->env.cq, NULL, 0); /* let the provider progress */
            return;
        }
        od->q_head = op->next;
        if (!od->q_head)
            od->q_tail = NULL;
        if (r)
            op_finish(od, op, (int)-r);
    }
}

/* Build the operations of one chain (local registrations included) into
 * [*head, *tail]; nothing is posted.  TELEMEM_OK or an error with the
 * list given back. */
static int build(ofi_direct_t *od, int peer, const od_rkey_t *rk, bool write,
                 const tlm_direct_seg_t *segs, int nsegs, od_op_t **head,
                 od_op_t **tail, long *nops)
{
    od_op_t *cur = NULL;
    size_t cur_bytes = 0;
    int rc = TELEMEM_OK;
    *head = *tail = NULL;
    *nops = 0;
    for (int s = 0; s < nsegs && rc == TELEMEM_OK; s++) {
        const tlm_direct_seg_t *g = &segs[s];
        for (size_t i = 0; i < g->count && g->block && rc == TELEMEM_OK;
             i++) {
            uintptr_t l = g->local + (uintptr_t)((ptrdiff_t)i * g->local_stride);
            uintptr_t r = g->remote +
                          (uintptr_t)((ptrdiff_t)i * g->remote_stride);
            size_t left = g->block;
            while (left && rc == TELEMEM_OK) {
                size_t piece = TLM_MIN(left, od->max_msg);
                if (!cur || cur->n == (int)od->iov_limit ||
                    cur_bytes + piece > od->max_msg) {
                    od_op_t *op = op_take(od);
                    if (!op) {
                        rc = TELEMEM_ERR_NO_MEMORY;
                        break;
                    }
                    op->write = write;
                    op->peer = peer;
                    op->key = rk->key;
                    if (*tail)
                        (*tail)->next = op;
                    else
                        *head = op;
                    *tail = cur = op;
                    cur_bytes = 0;
                    (*nops)++;
                    od->inflight[peer]++;
                    od->total++;
                }
                int k = cur->n;
                cur->iov[k] = (struct iovec){(void *)l, piece};
                cur->rma[k] = (struct fi_rma_iov){
                    .addr = rk->virt ? r : r - rk->base,
                    .len = piece,
                    .key = rk->key,
                };
                cur->local[k] = NULL;
                cur->desc[k] = NULL;
                cur->n++;
                if (od->mr_local) {
                    tlm_regcache_entry_t *e;
                    rc = tlm_regcache_get(&od->cache, l, piece, &e);
                    if (rc != TELEMEM_OK) {
                        cur->n--;
                        break;
                    }
                    cur->local[k] = e;
                    cur->desc[k] = fi_mr_desc(e->handle);
                }
                cur_bytes += piece;
                l += piece;
                r += piece;
                left -= piece;
            }
        }
    }
    if (rc != TELEMEM_OK) {
        while (*head) {
            od_op_t *op = *head;
            *head = op->next;
            op_finish(od, op, 0);
        }
        *tail = NULL;
        *nops = 0;
    }
    return rc;
}

static int transfer(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rkey,
                    const tlm_direct_seg_t *segs, int nsegs, bool write)
{
    ofi_direct_t *od = od_of(d);
    od_rkey_t *rk = (od_rkey_t *)(void *)rkey;
    if (peer < 0 || peer >= od->env.size || !rk || rk->peer != peer ||
        (nsegs && !segs) || nsegs < 0)
        return TELEMEM_ERR_INVALID_ARG;
    if (!rk->live) {
        tlm_error("%s to rank %d under a released key: not attempted",
                  write ? "write" : "read", peer);
        return TELEMEM_ERR_INVALID_ARG;
    }
    od_op_t *head, *tail;
    long nops;
    int rc = build(od, peer, rk, write, segs, nsegs, &head, &tail, &nops);
    if (rc == TELEMEM_ERR_UNSUPPORTED && od->total > nops)
        return TELEMEM_ERR_AGAIN; /* local registrations free up later */
    if (rc != TELEMEM_OK)
        return rc;
    if (!head)
        return TELEMEM_OK;
    if (od->q_tail)
        od->q_tail->next = head;
    else
        od->q_head = head;
    od->q_tail = tail;
    post_queue(od);
    return TELEMEM_OK;
}

static int od_write(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
                    const tlm_direct_seg_t *segs, int nsegs)
{
    return transfer(d, peer, rk, segs, nsegs, true);
}

static int od_read(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
                   const tlm_direct_seg_t *segs, int nsegs)
{
    return transfer(d, peer, rk, segs, nsegs, false);
}

static int od_flush(tlm_direct_t *d, int peer)
{
    ofi_direct_t *od = od_of(d);
    if (peer < -1 || peer >= od->env.size)
        return TELEMEM_ERR_INVALID_ARG;
    post_queue(od);
    long left = peer < 0 ? od->total : od->inflight[peer];
    if (left) {
        /* Completions arrive on the transport's queue, which core polls. */
        fi_cq_read(od->env.cq, NULL, 0);
        return TELEMEM_ERR_AGAIN;
    }
    int rc = TELEMEM_OK;
    for (int r = peer < 0 ? 0 : peer; r < (peer < 0 ? od->env.size : peer + 1);
         r++) {
        if (od->err[r] && rc == TELEMEM_OK)
            rc = od->err[r];
        od->err[r] = 0;
    }
    return rc;
}

static int od_progress(tlm_direct_t *d)
{
    ofi_direct_t *od = od_of(d);
    post_queue(od);
    if (od->total)
        fi_cq_read(od->env.cq, NULL, 0);
    return TELEMEM_OK;
}

static void od_close(tlm_direct_t *d)
{
    ofi_direct_t *od = od_of(d);
    /* The endpoint is closed: nothing in flight will complete any more. */
    if (od->total)
        tlm_debug("ofi-rma closing with %ld operations unfinished",
                  od->total);
    while (od->q_head) {
        od_op_t *op = od->q_head;
        od->q_head = op->next;
        op_finish(od, op, 0);
    }
    size_t used = tlm_regcache_fini(&od->cache);
    if (used)
        tlm_debug("ofi-rma closed with %zu registrations in use", used);
    tlm_debug("ofi-rma registration cache: %lu hits, %lu misses, %lu "
              "evictions, %lu refused, peak %zu bytes", od->cache.hits,
              od->cache.misses, od->cache.evictions, od->cache.refused,
              od->cache.peak);
    while (od->rk_head) {
        od_rkey_t *rk = od->rk_head;
        od->rk_head = rk->next;
        free(rk);
    }
    while (od->chunks) {
        od_chunk_t *c = od->chunks;
        od->chunks = c->next;
        free(c);
    }
    free(od->inflight);
    free(od->err);
    free(od);
}

static const tlm_direct_ops_t od_ops = {
    .alloc = NULL,
    .free = NULL,
    .expose = od_expose,
    .unexpose = od_unexpose,
    .import = od_import,
    .release = od_release,
    .write = od_write,
    .read = od_read,
    .flush = od_flush,
    .progress = od_progress,
    .close = od_close,
};

int tlm_ofi_direct_open(const tlm_ofi_direct_env_t *env, tlm_direct_t **d_p)
{
    if (!env || !env->info || !env->domain || !env->ep || !env->cq ||
        !env->addrs || !d_p)
        return TELEMEM_ERR_INVALID_ARG;
    const struct fi_info *fi = env->info;
    uint64_t need = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
                    FI_REMOTE_WRITE;
    if ((fi->caps & need) != need) {
        tlm_debug("ofi-rma: provider %s lacks RMA (caps %s); no direct path",
                  fi->fabric_attr->prov_name,
                  fi_tostr(&fi->caps, FI_TYPE_CAPS));
        return TELEMEM_ERR_UNSUPPORTED;
    }
    int mode = fi->domain_attr->mr_mode;
    if (mode & (FI_MR_ENDPOINT | FI_MR_RAW | FI_MR_MMU_NOTIFY)) {
        tlm_debug("ofi-rma: provider %s wants memory registration modes "
                  "this driver does not handle (%s); no direct path",
                  fi->fabric_attr->prov_name,
                  fi_tostr(&mode, FI_TYPE_MR_MODE));
        return TELEMEM_ERR_UNSUPPORTED;
    }
    ofi_direct_t *od = calloc(1, sizeof(*od));
    if (!od)
        return TELEMEM_ERR_NO_MEMORY;
    od->inflight = calloc((size_t)env->size, sizeof(long));
    od->err = calloc((size_t)env->size, sizeof(int));
    if (!od->inflight || !od->err) {
        free(od->inflight);
        free(od->err);
        free(od);
        return TELEMEM_ERR_NO_MEMORY;
    }
    od->env = *env;
    od->mr_local = mode & FI_MR_LOCAL;
    od->virt = mode & FI_MR_VIRT_ADDR; /* else offsets from the base */
    od->prov_key = mode & FI_MR_PROV_KEY;
    od->deliv = true;
    od->next_key = 0x7e1e0000u; /* the transport's buffers use key 0 */
    size_t lim = TLM_MIN(fi->tx_attr->iov_limit, fi->tx_attr->rma_iov_limit);
    od->iov_limit = TLM_MAX((size_t)1, TLM_MIN(lim, (size_t)OD_IOV_MAX));
    od->max_msg = fi->ep_attr->max_msg_size ? fi->ep_attr->max_msg_size
                                            : SIZE_MAX;
    long pg = sysconf(_SC_PAGESIZE);
    tlm_regcache_init(&od->cache, env->reg_cache_max,
                      pg > 0 ? (size_t)pg : 4096, od_reg, od_dereg, od);
    od->super.ops = &od_ops;
    od->super.name = "ofi-rma";
    snprintf(od->prov, sizeof(od->prov), "%s",
             fi->fabric_attr->prov_name ? fi->fabric_attr->prov_name : "");
    od->super.provider = od->prov;
    od->super.sync = false;
    od->super.threshold = OD_THRESHOLD;
    od->super.max_segs = 1024;
    tlm_debug("ofi-rma open: provider %s, mr_mode %s, %zu iovs per op, "
              "registration cap %zu bytes", fi->fabric_attr->prov_name,
              fi_tostr(&mode, FI_TYPE_MR_MODE), od->iov_limit,
              env->reg_cache_max);
    *d_p = &od->super;
    return TELEMEM_OK;
}

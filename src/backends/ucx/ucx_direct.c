/* ucx_direct.c - the ucx-rma direct-path driver: ucp_put_nbx/ucp_get_nbx on
 * the UCX transport's worker and endpoints, one operation per block of a
 * block-stride chain; memory mapped with ucp_mem_map through the
 * registration cache (regcache.h); keys = packed remote keys
 * (ucp_rkey_pack), unpacked per endpoint by the importer.  Remote
 * completion is an endpoint flush (ucp_ep_flush_nbx) started by flush and
 * polled to its end by later flush/progress calls; gets are complete when
 * their requests are.  UCX's own progress (ucp_worker_progress) drives
 * both; on the target it is the transport's ordinary polling, which also
 * serves the software RMA of tcp.  Where UCX has no RMA lane to a peer
 * (tcp: it emulates puts with its own active messages, 2-3x slower than
 * Telemem's AM path at every size here) key_min sends every transfer to
 * the AM path. */
#define TLM_LOG_SUBSYS "ucx"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/regcache.h"
#include "backends/ucx/ucx_direct.h"
#include "util/log.h"
#include "util/util.h"

/* Default TELEMEM_DIRECT_THRESHOLD for this driver (bench/direct). */
#define UD_THRESHOLD ((size_t)64 * 1024)
#define UD_CLOSE_WAIT 2.0 /* seconds close waits for operations in flight */

typedef struct ucx_direct ucx_direct_t;

/* Per-peer state; also the user data of its requests' callbacks. */
typedef struct ud_peer {
    ucx_direct_t *ud;
    int rank;
    long pending;        /* put/get requests not yet called back */
    uint64_t issued;     /* operations started */
    uint64_t flushed;    /* operations covered by a finished flush */
    uint64_t flushing;   /* what the flush in flight covers */
    void *flush_req;     /* ucp_ep_flush_nbx request in flight, or NULL */
    int err;             /* first failure since the last flush */
    int8_t rma;          /* 1 UCX has an RMA lane, -1 emulated, 0 unknown */
} ud_peer_t;

/* An imported key.  Released keys are kept (their UCX key destroyed) on a
 * FIFO and reused only once RK_KEEP of them wait, so a transfer under a
 * released key is recognised and refused, never attempted. */
typedef struct ud_rkey {
    ucp_rkey_h rkey;
    int peer;
    bool live;
    struct ud_rkey *next;
} ud_rkey_t;
#define RK_KEEP 64

struct ucx_direct {
    tlm_direct_t super;
    tlm_ucx_direct_env_t env;
    tlm_regcache_t cache;
    ud_peer_t *peers;
    long pending;        /* over all peers */
    ud_rkey_t *rk_head, *rk_tail; /* released keys, oldest first */
    long rk_waiting;
    char wires[48]; /* super.provider: the network wires (network_wires) */
};

static ucx_direct_t *ud_of(tlm_direct_t *d)
{
    return tlm_container_of(d, ucx_direct_t, super);
}

static int ud_reg(void *arg, uintptr_t lo, size_t len, void **handle_p)
{
    ucx_direct_t *ud = arg;
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = (void *)lo,
        .length = len,
    };
    ucp_mem_h memh;
    ucs_status_t st = ucp_mem_map(ud->env.ctx, &mp, &memh);
    if (st != UCS_OK) {
        tlm_error("ucp_mem_map(%#lx, %zu bytes): %s", (unsigned long)lo,
                  len, ucs_status_string(st));
        return TELEMEM_ERR_TRANSPORT;
    }
    *handle_p = memh;
    return TELEMEM_OK;
}

static void ud_dereg(void *arg, void *handle)
{
    ucx_direct_t *ud = arg;
    ucs_status_t st = ucp_mem_unmap(ud->env.ctx, handle);
    if (st != UCS_OK)
        tlm_warn("ucp_mem_unmap: %s", ucs_status_string(st));
}

static int ud_expose(tlm_direct_t *d, void *base, size_t len,
                     tlm_direct_mr_t **mr_p, void *key, size_t *key_len)
{
    ucx_direct_t *ud = ud_of(d);
    if (!base || !len || !mr_p || !key || !key_len)
        return TELEMEM_ERR_INVALID_ARG;
    tlm_regcache_entry_t *e;
    int rc = tlm_regcache_get(&ud->cache, (uintptr_t)base, len, &e);
    if (rc != TELEMEM_OK)
        return rc;
    void *buf = NULL;
    size_t n = 0;
    ucs_status_t st = ucp_rkey_pack(ud->env.ctx, e->handle, &buf, &n);
    if (st != UCS_OK || n > TLM_DIRECT_KEY_MAX) {
        if (st != UCS_OK)
            tlm_error("ucp_rkey_pack: %s", ucs_status_string(st));
        else
            tlm_debug("ucx-rma: packed key of %zu bytes is above %u: "
                      "memory not exposed", n, TLM_DIRECT_KEY_MAX);
        if (buf)
            ucp_rkey_buffer_release(buf);
        tlm_regcache_put(&ud->cache, e);
        return st != UCS_OK ? TELEMEM_ERR_TRANSPORT : TELEMEM_ERR_UNSUPPORTED;
    }
    memcpy(key, buf, n);
    ucp_rkey_buffer_release(buf);
    *key_len = n;
    *mr_p = (tlm_direct_mr_t *)(void *)e;
    return TELEMEM_OK;
}

/* The range is no longer exposed, and core is about to free it: drop
 * every unused registration over it, so the key dies now (a peer's write
 * under it is refused by providers that check keys) and no cached
 * registration outlives the memory (an address reused by a later mapping
 * would otherwise meet registrations of the old pages). */
static void ud_unexpose(tlm_direct_t *d, tlm_direct_mr_t *mr)
{
    tlm_regcache_entry_t *e = (tlm_regcache_entry_t *)(void *)mr;
    if (!e)
        return;
    uintptr_t lo = e->lo;
    size_t len = e->hi - e->lo;
    tlm_regcache_put(&ud_of(d)->cache, e);
    tlm_regcache_flush(&ud_of(d)->cache, lo, len);
}

const tlm_regcache_t *tlm_ucx_direct_cache(const tlm_direct_t *d)
{
    return d ? &tlm_container_of(d, ucx_direct_t, super)->cache : NULL;
}

static ucp_ep_h ep_of(ucx_direct_t *ud, int peer)
{
    if (!ud->env.eps[peer] &&
        tlm_transport_connect(ud->env.tp, peer) != TELEMEM_OK)
        return NULL;
    return ud->env.eps[peer];
}

static int ud_import(tlm_direct_t *d, int peer, uintptr_t rbase, size_t rlen,
                     const void *key, size_t key_len, tlm_direct_rkey_t **rk_p)
{
    ucx_direct_t *ud = ud_of(d);
    (void)rbase;
    (void)rlen;
    if (peer < 0 || peer >= ud->env.size || !key || !key_len ||
        key_len > TLM_DIRECT_KEY_MAX || !rk_p)
        return TELEMEM_ERR_INVALID_ARG;
    ucp_ep_h ep = ep_of(ud, peer);
    if (!ep)
        return TELEMEM_ERR_TRANSPORT;
    ucp_rkey_h h;
    ucs_status_t st = ucp_ep_rkey_unpack(ep, key, &h);
    if (st != UCS_OK) {
        tlm_error("ucp_ep_rkey_unpack (key of rank %d): %s", peer,
                  ucs_status_string(st));
        return TELEMEM_ERR_PROTOCOL;
    }
    ud_rkey_t *rk;
    if (ud->rk_waiting >= RK_KEEP) {
        rk = ud->rk_head;
        ud->rk_head = rk->next;
        if (!ud->rk_head)
            ud->rk_tail = NULL;
        ud->rk_waiting--;
    } else if (!(rk = malloc(sizeof(*rk)))) {
        ucp_rkey_destroy(h);
        return TELEMEM_ERR_NO_MEMORY;
    }
    *rk = (ud_rkey_t){.rkey = h, .peer = peer, .live = true};
    *rk_p = (tlm_direct_rkey_t *)(void *)rk;
    return TELEMEM_OK;
}

char *tlm_ucx_ep_dump(ucp_ep_h ep)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    ucp_ep_print_info(ep, f);
    fclose(f);
    if (text && !strstr(text, "UCP endpoint")) {
        free(text);
        text = NULL;
    }
    return text;
}

/* Whether UCX reaches peer with RMA lanes of a transport, not by its
 * active-message emulation.  UCX 1.13 has no query for it: its endpoint
 * dump lists "put[i]:" protocol ranges only for RMA lanes.  A dump that
 * cannot be read counts as native (the thresholds decide, as before). */
static bool rma_native(ucx_direct_t *ud, int peer)
{
    ud_peer_t *p = &ud->peers[peer];
    if (p->rma != 0 || !ud->env.eps[peer])
        return p->rma >= 0;
    char *text = tlm_ucx_ep_dump(ud->env.eps[peer]);
    bool known = text != NULL;
    p->rma = !known || strstr(text, "put[") ? 1 : -1;
    free(text);
    if (p->rma < 0)
        tlm_debug("rank %d: UCX has no RMA lane (it would emulate puts with "
                  "active messages): transfers take the AM path", peer);
    return p->rma > 0;
}

static size_t ud_key_min(tlm_direct_t *d, const tlm_direct_rkey_t *rkey)
{
    const ud_rkey_t *rk = (const ud_rkey_t *)(const void *)rkey;
    return rma_native(ud_of(d), rk->peer) ? 0 : SIZE_MAX;
}

static void ud_release(tlm_direct_t *d, tlm_direct_rkey_t *rkey)
{
    ucx_direct_t *ud = ud_of(d);
    ud_rkey_t *rk = (ud_rkey_t *)(void *)rkey;
    if (!rk || !rk->live)
        return;
    ucp_rkey_destroy(rk->rkey);
    rk->rkey = NULL;
    rk->live = false;
    rk->next = NULL;
    if (ud->rk_tail)
        ud->rk_tail->next = rk;
    else
        ud->rk_head = rk;
    ud->rk_tail = rk;
    ud->rk_waiting++;
}

static int status_rc(ucs_status_t st)
{
    return st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
                   st == UCS_ERR_UNREACHABLE
               ? TELEMEM_ERR_PEER_DEAD
               : TELEMEM_ERR_TRANSPORT;
}

static void note_error(ud_peer_t *p, const char *what, ucs_status_t st)
{
    if (p->err)
        return;
    tlm_error("%s at rank %d: %s", what, p->rank, ucs_status_string(st));
    p->err = status_rc(st);
}

static void on_done(void *request, ucs_status_t status, void *user)
{
    ud_peer_t *p = user;
    if (status != UCS_OK)
        note_error(p, "ucx-rma transfer", status);
    p->pending--;
    p->ud->pending--;
    ucp_request_free(request);
}

static int transfer(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rkey,
                    const tlm_direct_seg_t *segs, int nsegs, bool write)
{
    ucx_direct_t *ud = ud_of(d);
    ud_rkey_t *rk = (ud_rkey_t *)(void *)rkey;
    if (peer < 0 || peer >= ud->env.size || !rk || rk->peer != peer ||
        nsegs < 0 || (nsegs && !segs))
        return TELEMEM_ERR_INVALID_ARG;
    if (!rk->live) {
        tlm_error("%s to rank %d under a released key: not attempted",
                  write ? "write" : "read", peer);
        return TELEMEM_ERR_INVALID_ARG;
    }
    ucp_ep_h ep = ep_of(ud, peer);
    if (!ep)
        return TELEMEM_ERR_TRANSPORT;
    ud_peer_t *p = &ud->peers[peer];
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                        UCP_OP_ATTR_FIELD_USER_DATA,
        .cb = {.send = on_done},
        .user_data = p,
    };
    p->issued++;
    for (int s = 0; s < nsegs; s++) {
        const tlm_direct_seg_t *g = &segs[s];
        for (size_t i = 0; i < g->count && g->block; i++) {
            uintptr_t l = g->local + (uintptr_t)((ptrdiff_t)i * g->local_stride);
            uintptr_t r = g->remote +
                          (uintptr_t)((ptrdiff_t)i * g->remote_stride);
            ucs_status_ptr_t q =
                write ? ucp_put_nbx(ep, (const void *)l, g->block, r,
                                    rk->rkey, &prm)
                      : ucp_get_nbx(ep, (void *)l, g->block, r, rk->rkey,
                                    &prm);
            if (q == NULL)
                continue; /* done already */
            if (UCS_PTR_IS_ERR(q)) {
                /* Started blocks stay started: the failure is reported
                 * by flush, like a failed completion. */
                note_error(p, write ? "ucp_put_nbx" : "ucp_get_nbx",
                           UCS_PTR_STATUS(q));
                return TELEMEM_OK;
            }
            p->pending++;
            ud->pending++;
        }
    }
    return TELEMEM_OK;
}

static int ud_write(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
                    const tlm_direct_seg_t *segs, int nsegs)
{
    return transfer(d, peer, rk, segs, nsegs, true);
}

static int ud_read(tlm_direct_t *d, int peer, tlm_direct_rkey_t *rk,
                   const tlm_direct_seg_t *segs, int nsegs)
{
    return transfer(d, peer, rk, segs, nsegs, false);
}

/* One step of flushing peer p: TELEMEM_OK when everything it started is
 * complete at the target, TELEMEM_ERR_AGAIN while not. */
static int flush_peer(ucx_direct_t *ud, ud_peer_t *p)
{
    if (p->flush_req) {
        ucs_status_t st = ucp_request_check_status(p->flush_req);
        if (st == UCS_INPROGRESS)
            return TELEMEM_ERR_AGAIN;
        ucp_request_free(p->flush_req);
        p->flush_req = NULL;
        if (st != UCS_OK)
            note_error(p, "ucp_ep_flush_nbx", st);
        p->flushed = p->flushing;
    }
    if (p->flushed != p->issued && ud->env.eps[p->rank]) {
        ucp_request_param_t prm = {.op_attr_mask = 0};
        p->flushing = p->issued;
        ucs_status_ptr_t q = ucp_ep_flush_nbx(ud->env.eps[p->rank], &prm);
        if (UCS_PTR_IS_PTR(q)) {
            p->flush_req = q;
            return TELEMEM_ERR_AGAIN;
        }
        if (UCS_PTR_IS_ERR(q))
            note_error(p, "ucp_ep_flush_nbx", UCS_PTR_STATUS(q));
        p->flushed = p->flushing;
    }
    if (p->pending)
        return TELEMEM_ERR_AGAIN;
    return TELEMEM_OK;
}

static int ud_flush(tlm_direct_t *d, int peer)
{
    ucx_direct_t *ud = ud_of(d);
    if (peer < -1 || peer >= ud->env.size)
        return TELEMEM_ERR_INVALID_ARG;
    ucp_worker_progress(ud->env.worker);
    int lo = peer < 0 ? 0 : peer, hi = peer < 0 ? ud->env.size : peer + 1;
    bool again = false;
    for (int r = lo; r < hi; r++)
        if (flush_peer(ud, &ud->peers[r]) == TELEMEM_ERR_AGAIN)
            again = true;
    if (again)
        return TELEMEM_ERR_AGAIN;
    int rc = TELEMEM_OK;
    for (int r = lo; r < hi; r++) {
        if (ud->peers[r].err && rc == TELEMEM_OK)
            rc = ud->peers[r].err;
        ud->peers[r].err = 0;
    }
    return rc;
}

static int ud_progress(tlm_direct_t *d)
{
    ucx_direct_t *ud = ud_of(d);
    int n = 0;
    while (ucp_worker_progress(ud->env.worker))
        n++;
    return n;
}

static void ud_close(tlm_direct_t *d)
{
    ucx_direct_t *ud = ud_of(d);
    double end = tlm_util_now() + UD_CLOSE_WAIT;
    while (tlm_util_now() < end) {
        bool busy = ud->pending > 0;
        for (int r = 0; r < ud->env.size && !busy; r++)
            busy = ud->peers[r].flush_req != NULL;
        if (!busy)
            break;
        ucp_worker_progress(ud->env.worker);
        for (int r = 0; r < ud->env.size; r++)
            if (ud->peers[r].flush_req)
                flush_peer(ud, &ud->peers[r]);
    }
    for (int r = 0; r < ud->env.size; r++) {
        if (ud->peers[r].flush_req) {
            ucp_request_cancel(ud->env.worker, ud->peers[r].flush_req);
            ucp_request_free(ud->peers[r].flush_req);
        }
    }
    bool leak = ud->pending > 0;
    if (leak)
        tlm_warn("ucx-rma closing with %ld operations unfinished: their "
                 "state is left allocated for UCX's late callbacks",
                 ud->pending);
    size_t used = tlm_regcache_fini(&ud->cache);
    if (used)
        tlm_debug("ucx-rma closed with %zu registrations in use", used);
    tlm_debug("ucx-rma registration cache: %lu hits, %lu misses, %lu "
              "evictions, %lu refused, peak %zu bytes", ud->cache.hits,
              ud->cache.misses, ud->cache.evictions, ud->cache.refused,
              ud->cache.peak);
    while (ud->rk_head) {
        ud_rkey_t *rk = ud->rk_head;
        ud->rk_head = rk->next;
        free(rk);
    }
    if (leak)
        return; /* on_done may still run: ud->peers must stay valid */
    free(ud->peers);
    free(ud);
}

static const tlm_direct_ops_t ud_ops = {
    .alloc = NULL,
    .free = NULL,
    .expose = ud_expose,
    .unexpose = ud_unexpose,
    .import = ud_import,
    .release = ud_release,
    .key_min = ud_key_min,
    .write = ud_write,
    .read = ud_read,
    .flush = ud_flush,
    .progress = ud_progress,
    .close = ud_close,
};

/* Whether UCX wire name (a "tl", "tcp" in "tcp/eth0") moves data inside
 * one host only. */
static bool wire_local(const char *w, size_t n)
{
    static const char *const local[] = {"self", "sysv", "posix",
                                        "cma",  "knem", "xpmem"};
    for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
        if (strlen(local[i]) == n && !strncmp(w, local[i], n))
            return true;
    return (n >= 4 && !strncmp(w, "cuda", 4)) ||
           (n >= 4 && !strncmp(w, "rocm", 4)) ||
           (n == 8 && !strncmp(w, "gdr_copy", 8));
}

/* Whether w is one of the comma list's words. */
static bool listed(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *q = list; *q;) {
        size_t m = strcspn(q, ",");
        if (m == n && !strncmp(q, w, n))
            return true;
        q += m + (q[m] == ',');
    }
    return false;
}

/* The context's network wires, the profile key's provider ("tcp",
 * "rc_mlx5,ud_mlx5"), from its resource list ("resource 1 : md 1 dev 1
 * flags -- tcp/eth0", ucp_context_print_info: UCX 1.13 has no query);
 * "sm" when it has none, "" when the list cannot be read. */
static void network_wires(ucp_context_h ctx, char *out, size_t cap)
{
    char *text = NULL;
    size_t len = 0, k = 0;
    FILE *f = open_memstream(&text, &len);
    out[0] = '\0';
    if (!f)
        return;
    ucp_context_print_info(ctx, f);
    fclose(f);
    const char *p = text ? text : "";
    while ((p = strstr(p, "flags -- ")) != NULL) {
        p += strlen("flags -- ");
        size_t n = strcspn(p, "/ \n");
        char w[32];
        snprintf(w, sizeof(w), "%.*s", (int)n, p);
        if (n && n < sizeof(w) && !wire_local(w, n) && !listed(out, w) &&
            k + n + 2 < cap)
            k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? "," : "", w);
    }
    if (text && !k)
        snprintf(out, cap, "sm");
    free(text);
}

int tlm_ucx_direct_open(const tlm_ucx_direct_env_t *env, tlm_direct_t **d_p)
{
    if (!env || !env->ctx || !env->worker || !env->eps || !env->tp || !d_p ||
        env->size <= 0)
        return TELEMEM_ERR_INVALID_ARG;
    ucx_direct_t *ud = calloc(1, sizeof(*ud));
    if (!ud)
        return TELEMEM_ERR_NO_MEMORY;
    ud->peers = calloc((size_t)env->size, sizeof(*ud->peers));
    if (!ud->peers) {
        free(ud);
        return TELEMEM_ERR_NO_MEMORY;
    }
    for (int r = 0; r < env->size; r++)
        ud->peers[r] = (ud_peer_t){.ud = ud, .rank = r};
    ud->env = *env;
    long pg = sysconf(_SC_PAGESIZE);
    tlm_regcache_init(&ud->cache, env->reg_cache_max,
                      pg > 0 ? (size_t)pg : 4096, ud_reg, ud_dereg, ud);
    ud->super.ops = &ud_ops;
    ud->super.name = "ucx-rma";
    network_wires(env->ctx, ud->wires, sizeof(ud->wires));
    ud->super.provider = ud->wires;
    ud->super.sync = false;
    ud->super.threshold = UD_THRESHOLD;
    ud->super.max_segs = 1024;
    tlm_debug("ucx-rma open: wires %s, registration cap %zu bytes", ud->wires,
              env->reg_cache_max);
    *d_p = &ud->super;
    return TELEMEM_OK;
}

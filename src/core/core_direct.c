/* core_direct.c - the direct (RDMA) path in core: which transfers take it
 * (TELEMEM_DIRECT, thresholds per driver from the environment, the
 * calibration profile or the driver), the per-peer rkey cache, keys of
 * telemem_malloc_all blocks (allgathered) and of telemem_register ranges
 * (fetched on demand with KEY_REQ, withdrawn with KEY_INVAL at
 * deregistration), ordering against the AM path, flush for quiet, and
 * the express table that lets atomics on window blocks skip the lock.
 * Protocol: docs/direct.md. */
#define TLM_LOG_SUBSYS "direct"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_engine.h"
#include "core/core_direct.h"
#include "core/core_region.h"

enum { MODE_NEVER = 0, MODE_AUTO, MODE_ALWAYS };
/* Key slots of a block record: the same-node driver, the network one. */
enum { SLOT_LOCAL = 0, SLOT_NET = 1, NSLOTS = 2 };
/* Segments of a strided chain handed to a driver per call. */
#define CHAIN_BATCH 128

/* One imported key: [base, end) of a peer; rk NULL = known not to be
 * reachable directly (take the AM path without asking again). */
typedef struct rkey_ent {
    uintptr_t base, end;
    tlm_direct_rkey_t *rk;
    size_t min; /* fewest bytes worth the direct path (driver's key_min) */
} rkey_ent_t;

/* Express slots: keys of telemem_malloc_all blocks a synchronous driver
 * with hardware atomics maps here, read without the lock (seqlock
 * D.xseq; written only by telemem_malloc_all / _free_all under it).
 * base == end: a free slot. */
#define XSLOTS 8
typedef struct xent {
    _Atomic uintptr_t base, end;
    _Atomic(tlm_direct_rkey_t *) rk;
} xent_t;

typedef struct dpeer {
    tlm_direct_t *d;        /* driver of the transport reaching the peer */
    size_t row_min;         /* strided: shortest row taken directly */
    rkey_ent_t *keys;
    size_t nkeys, cap, last;
    uint32_t key_sent, key_done; /* KEY_REQ sequence */
    xent_t *x;                   /* XSLOTS express slots, or NULL */
} dpeer_t;

/* Target side: a registered range's exposure per slot and who holds it. */
typedef struct tlm_region_dx {
    tlm_direct_mr_t *mr[NSLOTS];
    int8_t state[NSLOTS]; /* 0 untried, 1 exposed, -1 cannot */
    uint32_t key_len[NSLOTS];
    uint8_t key[NSLOTS][TLM_DIRECT_KEY_MAX];
    int *holders;
    int nholders, cap;
    bool dying;
} region_dx_t;

struct tlm_core_dblock {
    tlm_direct_t *alloc_d;      /* the driver that allocated the memory */
    tlm_direct_t *md[NSLOTS];   /* the driver of each exposure */
    tlm_direct_mr_t *mr[NSLOTS];
    uint32_t key_len[NSLOTS];
    uint8_t key[NSLOTS][TLM_DIRECT_KEY_MAX];
    uintptr_t *rbase;           /* by rank: the peers' bases */
    size_t *rsize;              /* by rank: their sizes (may differ) */
    size_t bytes;
};

/* The allgathered record of a block: its base and size on that rank (the
 * sizes of telemem_malloc_all may differ per rank), then the keys. */
typedef struct drec {
    uint64_t addr;
    uint64_t size;
    struct {
        uint32_t len, pad;
        uint8_t key[TLM_DIRECT_KEY_MAX];
    } k[NSLOTS];
} drec_t;

static struct {
    int mode;
    dpeer_t *peers;
    tlm_direct_t *slot_d[NSLOTS];
    uint32_t inval_pending;
    char *text;
    _Atomic uint32_t xseq; /* odd while the express slots change */
} D;

static int slot_of(const tlm_transport_t *tp)
{
    return tp->same_node_only ? SLOT_LOCAL : SLOT_NET;
}

/* ---- thresholds ----------------------------------------------------------- */

/* Look name (or alt) up in spec: "64k" or "a:32k,b:1m".  1 found, 0 not,
 * -1 malformed. */
static int spec_lookup(const char *spec, const char *name, const char *alt,
                       size_t *out)
{
    if (!spec || !spec[0])
        return 0;
    if (!strchr(spec, ':'))
        return tlm_util_parse_size(spec, out) == 0 ? 1 : -1;
    const char *s = spec;
    int found = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        const char *colon = memchr(s, ':', n);
        char val[64];
        if (!colon || colon == s || (size_t)(s + n - colon - 1) >= sizeof(val))
            return -1;
        size_t kl = (size_t)(colon - s), vl = (size_t)(s + n - colon - 1);
        memcpy(val, colon + 1, vl);
        val[vl] = '\0';
        size_t v;
        if (tlm_util_parse_size(val, &v) != 0)
            return -1;
        if (!found && ((name && strlen(name) == kl && !strncmp(s, name, kl)) ||
                       (alt && strlen(alt) == kl && !strncmp(s, alt, kl)))) {
            *out = v;
            found = 1;
        }
        s += n;
        if (*s == ',')
            s++;
    }
    return found;
}

int tlm_core_direct_check_config(const tlm_config_t *c)
{
    size_t v;
    if (strcmp(c->DIRECT, "auto") && strcmp(c->DIRECT, "never") &&
        strcmp(c->DIRECT, "always")) {
        tlm_error("TELEMEM_DIRECT=\"%s\" is invalid: expected auto, never "
                  "or always", c->DIRECT);
        return TELEMEM_ERR_CONFIG;
    }
    if (spec_lookup(c->DIRECT_THRESHOLD, NULL, NULL, &v) < 0 ||
        spec_lookup(c->DIRECT_ROW_THRESHOLD, NULL, NULL, &v) < 0) {
        tlm_error("TELEMEM_DIRECT_%sTHRESHOLD=\"%s\" is invalid: expected a "
                  "size (64k) or a comma list name:size (window:32k,"
                  "ofi-rma:1m)",
                  spec_lookup(c->DIRECT_THRESHOLD, NULL, NULL, &v) < 0 ? ""
                                                                    : "ROW_",
                  spec_lookup(c->DIRECT_THRESHOLD, NULL, NULL, &v) < 0
                      ? c->DIRECT_THRESHOLD : c->DIRECT_ROW_THRESHOLD);
        return TELEMEM_ERR_CONFIG;
    }
    return TELEMEM_OK;
}

/* One decimal number after blanks, *s moved past it: 0, or -1 when there is
 * none or it does not fit (strtoull, not sscanf, to see the errors). */
static int profile_num(const char **s, unsigned long long *v)
{
    const char *p = *s + strspn(*s, " \t");
    char *end;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    *v = strtoull(p, &end, 10);
    if (errno || end == p)
        return -1;
    *s = end;
    return 0;
}

/* The calibration profile: lines "<driver> <threshold> <row threshold>",
 * '#' comments.  1 found, 0 not. */
static int profile_lookup(const char *driver, size_t *thr, size_t *row)
{
    char path[512];
    if (!tlm_core_config_profile_path(&tlm_core.cfg, path, sizeof(path)))
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long t, r;
    int found = 0;
    while (!found && fgets(line, sizeof(line), f)) {
        if (line[0] == '#')
            continue;
        const char *s = line + strspn(line, " \t");
        size_t n = strcspn(s, " \t\r\n");
        if (n == 0 || n != strlen(driver) || strncmp(s, driver, n))
            continue;
        s += n;
        if (profile_num(&s, &t) == 0 && profile_num(&s, &r) == 0) {
            *thr = (size_t)t;
            *row = (size_t)r;
            found = 1;
        }
    }
    fclose(f);
    if (found)
        tlm_debug("direct profile %s: %s threshold %zu, row %zu", path,
                  driver, *thr, *row);
    return found;
}

static void describe(const tlm_transport_t *tp, size_t thr, size_t row,
                     const char *src)
{
    char line[256];
    if (D.mode == MODE_AUTO)
        snprintf(line, sizeof(line), "direct path %s (%s): from %zu bytes, "
                 "strided rows from %zu bytes (%s)\n", tp->direct->name,
                 tp->name, thr, row, src);
    else
        snprintf(line, sizeof(line), "direct path %s (%s): %s\n",
                 tp->direct->name, tp->name, D.mode == MODE_NEVER
                 ? "off (TELEMEM_DIRECT=never)"
                 : "every transfer it can take (TELEMEM_DIRECT=always)");
    size_t old = D.text ? strlen(D.text) : 0;
    char *t = realloc(D.text, old + strlen(line) + 1);
    if (!t)
        return;
    memcpy(t + old, line, strlen(line) + 1);
    D.text = t;
}

const char *tlm_core_direct_string(void)
{
    return D.text ? D.text : "";
}

/* ---- target: key requests and invalidation ------------------------------ */

static void on_key_req(int src, const void *msg, size_t len);
static void on_key_rep(int src, const void *msg, size_t len);
static void on_key_inval(int src, const void *msg, size_t len);
static void on_key_inval_ack(int src, const void *msg, size_t len);

int tlm_core_direct_init(void)
{
    tlm_config_t *c = &tlm_core.cfg;
    D.mode = !strcmp(c->DIRECT, "never")    ? MODE_NEVER
             : !strcmp(c->DIRECT, "always") ? MODE_ALWAYS
                                            : MODE_AUTO;
    tlm_am_set_handler(TLM_AM_KEY_REQ, on_key_req);
    tlm_am_set_handler(TLM_AM_KEY_REP, on_key_rep);
    tlm_am_set_handler(TLM_AM_KEY_INVAL, on_key_inval);
    tlm_am_set_handler(TLM_AM_KEY_INVAL_ACK, on_key_inval_ack);
    D.peers = calloc((size_t)tlm_core.nranks, sizeof(dpeer_t));
    if (!D.peers)
        return TELEMEM_ERR_NO_MEMORY;
    size_t thr[4] = {0}, row[4] = {0};
    for (int i = 0; i < tlm_am.ntps; i++) {
        tlm_transport_t *tp = tlm_am.tps[i];
        tlm_direct_t *d = tp->direct;
        if (!d)
            continue;
        if (!D.slot_d[slot_of(tp)])
            D.slot_d[slot_of(tp)] = d;
        const char *src = "driver default";
        thr[i] = d->threshold;
        row[i] = d->row_threshold ? d->row_threshold
                                  : TLM_MAX(d->threshold / 16, 256);
        size_t pt, pr;
        if (profile_lookup(d->name, &pt, &pr)) {
            thr[i] = pt;
            row[i] = pr;
            src = "profile";
        }
        if (spec_lookup(c->DIRECT_THRESHOLD, d->name, tp->name, &thr[i]) > 0)
            src = "TELEMEM_DIRECT_THRESHOLD";
        if (spec_lookup(c->DIRECT_ROW_THRESHOLD, d->name, tp->name,
                        &row[i]) > 0)
            src = "TELEMEM_DIRECT_ROW_THRESHOLD";
        if (D.mode == MODE_ALWAYS)
            thr[i] = row[i] = 1;
        if (D.mode == MODE_NEVER)
            thr[i] = row[i] = SIZE_MAX;
        thr[i] = TLM_MAX(thr[i], 1);
        describe(tp, thr[i], row[i], src);
    }
    /* Local peers may apply hardware atomics to our memory: apply ours,
     * and integer accumulates, with atomic instructions too. */
    tlm_core.acc_flags = 0;
    for (int s = 0; s < NSLOTS; s++)
        if (D.mode != MODE_NEVER && D.slot_d[s] && D.slot_d[s]->ops->atomic)
            tlm_core.acc_flags = TLM_ACC_ATOMIC;
    for (int r = 0; r < tlm_core.nranks; r++) {
        tlm_core.peers[r].direct_min = SIZE_MAX;
        tlm_transport_t *tp = tlm_am.peers[r].tp;
        if (r == tlm_core.rank || !tp || !tp->direct)
            continue;
        for (int i = 0; i < tlm_am.ntps; i++) {
            if (tlm_am.tps[i] != tp)
                continue;
            D.peers[r].d = tp->direct;
            D.peers[r].row_min = row[i];
            tlm_core.peers[r].direct_min = thr[i];
        }
        tlm_direct_t *d = D.peers[r].d;
        if (D.mode != MODE_NEVER && d && d->sync && d->ops->atomic) {
            D.peers[r].x = calloc(XSLOTS, sizeof(xent_t));
            if (!D.peers[r].x)
                return TELEMEM_ERR_NO_MEMORY;
        }
    }
    return TELEMEM_OK;
}

/* ---- the rkey cache ------------------------------------------------------- */

static rkey_ent_t *cache_find(dpeer_t *p, uintptr_t lo, size_t len)
{
    if (p->last < p->nkeys) {
        rkey_ent_t *e = &p->keys[p->last];
        if (tlm_util_range_in(lo, len, e->base, e->end))
            return e;
    }
    for (size_t i = 0; i < p->nkeys; i++) {
        rkey_ent_t *e = &p->keys[i];
        if (tlm_util_range_in(lo, len, e->base, e->end)) {
            p->last = i;
            return e;
        }
    }
    return NULL;
}

static int cache_add(dpeer_t *p, uintptr_t base, size_t len,
                     tlm_direct_rkey_t *rk)
{
    if (p->nkeys == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        rkey_ent_t *k = realloc(p->keys, cap * sizeof(*k));
        if (!k)
            return TELEMEM_ERR_NO_MEMORY;
        p->keys = k;
        p->cap = cap;
    }
    size_t min = rk && p->d->ops->key_min ? p->d->ops->key_min(p->d, rk) : 0;
    p->keys[p->nkeys++] = (rkey_ent_t){base, base + len, rk, min};
    return TELEMEM_OK;
}

/* Drop (and release) every key of peer r overlapping [lo, hi) (or with
 * base == lo when exact). */
static void cache_drop(int r, uintptr_t lo, uintptr_t hi, bool exact)
{
    dpeer_t *p = &D.peers[r];
    bool all = !exact && lo == 0 && hi == UINTPTR_MAX;
    for (size_t i = 0; i < p->nkeys;) {
        rkey_ent_t *e = &p->keys[i];
        bool hit = all ? true : exact ? e->base == lo
                         : tlm_util_ranges_overlap(e->base, e->end - e->base,
                                                   lo, hi - lo);
        if (!hit) {
            i++;
            continue;
        }
        if (e->rk)
            p->d->ops->release(p->d, e->rk);
        p->keys[i] = p->keys[--p->nkeys];
    }
    p->last = 0;
}

/* ---- ordering and completion ------------------------------------------------ */

int tlm_core_direct_settle(int rank)
{
    tlm_core_peer_t *cp = &tlm_core.peers[rank];
    tlm_direct_t *d = D.peers[rank].d;
    if (!cp->direct_busy || !d || !d->ops->flush)
        return TELEMEM_OK;
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    for (;;) {
        int rc = d->ops->flush(d, rank);
        if (rc == TELEMEM_OK)
            break;
        if (rc != TELEMEM_ERR_AGAIN)
            return rc;
        if (d->ops->progress)
            d->ops->progress(d);
        rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK)
            return rc;
    }
    cp->direct_busy = false;
    return TELEMEM_OK;
}

int tlm_core_direct_flush(int rank)
{
    int lo = rank < 0 ? 0 : rank, hi = rank < 0 ? tlm_core.nranks : rank + 1;
    int rc = TELEMEM_OK;
    for (int r = lo; r < hi && D.peers; r++) {
        if (!tlm_core.peers[r].direct_busy)
            continue;
        int src = tlm_core_direct_settle(r);
        if (src != TELEMEM_OK && rc == TELEMEM_OK)
            rc = src;
    }
    return rc;
}

/* After handlers may have run (a wait): the key of [lo, lo+len) again in
 * *e.  TELEMEM_OK, or TLM_DIRECT_DECLINED when it was withdrawn. */
static int refind_key(dpeer_t *p, uintptr_t lo, size_t len, rkey_ent_t **e)
{
    *e = cache_find(p, lo, len);
    return *e && (*e)->rk ? TELEMEM_OK : TLM_DIRECT_DECLINED;
}

/* Complete earlier AM requests to rank that a direct transfer of
 * [lo, lo+len) could overtake (puts and accumulates not yet applied, gets
 * not yet answered).  Handlers run while it waits, so the key *e is looked
 * up again then.  TELEMEM_OK (*e still valid), TLM_DIRECT_DECLINED (the
 * key was withdrawn) or a wait error. */
static inline int order_after_am(int rank, dpeer_t *p, uintptr_t lo,
                                 size_t len, rkey_ent_t **e)
{
    if (TLM_LIKELY(tlm_core_peer_am_idle(&tlm_core.peers[rank])))
        return TELEMEM_OK;
    int rc = tlm_core_flush_am(rank);
    return rc != TELEMEM_OK ? rc : refind_key(p, lo, len, e);
}

/* ---- the express path ------------------------------------------------------ */

static void x_write_begin(void)
{
    uint32_t s = atomic_load_explicit(&D.xseq, memory_order_relaxed);
    atomic_store_explicit(&D.xseq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void x_write_end(void)
{
    uint32_t s = atomic_load_explicit(&D.xseq, memory_order_relaxed);
    atomic_store_explicit(&D.xseq, s + 1, memory_order_release);
}

/* Under x_write_begin: slot for [base, base+len) of peer r (none free:
 * that block's atomics take the locked path). */
static void x_add(dpeer_t *p, uintptr_t base, size_t len,
                  tlm_direct_rkey_t *rk)
{
    for (int i = 0; p->x && i < XSLOTS; i++) {
        xent_t *e = &p->x[i];
        if (atomic_load_explicit(&e->base, memory_order_relaxed) !=
            atomic_load_explicit(&e->end, memory_order_relaxed))
            continue;
        atomic_store_explicit(&e->rk, rk, memory_order_relaxed);
        atomic_store_explicit(&e->end, base + len, memory_order_relaxed);
        atomic_store_explicit(&e->base, base, memory_order_relaxed);
        return;
    }
}

/* Under x_write_begin: free the slots inside [lo, hi). */
static void x_drop(dpeer_t *p, uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; p->x && i < XSLOTS; i++) {
        xent_t *e = &p->x[i];
        uintptr_t b = atomic_load_explicit(&e->base, memory_order_relaxed);
        uintptr_t en = atomic_load_explicit(&e->end, memory_order_relaxed);
        if (tlm_util_ranges_overlap(b, en - b, lo, hi - lo)) {
            atomic_store_explicit(&e->base, 0, memory_order_relaxed);
            atomic_store_explicit(&e->end, 0, memory_order_relaxed);
            atomic_store_explicit(&e->rk, NULL, memory_order_relaxed);
        }
    }
}

int tlm_core_direct_atomic_express(int rank, int op, unsigned width,
                                   uintptr_t addr, uint64_t operand,
                                   uint64_t compare, uint64_t *old)
{
    dpeer_t *p = D.peers ? &D.peers[rank] : NULL;
    if (!p || !p->x || !tlm_core_peer_am_idle(&tlm_core.peers[rank]))
        return TLM_DIRECT_DECLINED;
    uint32_t s = atomic_load_explicit(&D.xseq, memory_order_acquire);
    if (s & 1)
        return TLM_DIRECT_DECLINED;
    tlm_direct_rkey_t *rk = NULL;
    for (int i = 0; i < XSLOTS && !rk; i++) {
        xent_t *e = &p->x[i];
        if (tlm_util_range_in(
                addr, width, atomic_load_explicit(&e->base, memory_order_relaxed),
                atomic_load_explicit(&e->end, memory_order_relaxed)))
            rk = atomic_load_explicit(&e->rk, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_acquire);
    if (!rk || atomic_load_explicit(&D.xseq, memory_order_relaxed) != s)
        return TLM_DIRECT_DECLINED;
    int rc = p->d->ops->atomic(p->d, rank, rk, addr, op, width, operand,
                               compare, old);
    return rc == TELEMEM_ERR_UNSUPPORTED ? TLM_DIRECT_DECLINED : rc;
}

/* ---- initiator: keys of registered ranges ------------------------------- */

/* Ask rank for the key of the region holding [addr, addr+len) and wait
 * for the answer (which lands in the cache).  TELEMEM_OK or a wait error. */
static int fetch_key(int rank, uintptr_t addr, size_t len)
{
    dpeer_t *p = &D.peers[rank];
    uint32_t seq = ++p->key_sent;
    tlm_am_get_req_t q = {{TLM_AM_KEY_REQ, 0, 0, seq}, addr, len};
    int rc = tlm_am_send_ctrl(rank, &q, sizeof(q), NULL, 0);
    if (rc != TELEMEM_OK)
        return rc;
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    while ((int32_t)(p->key_done - seq) < 0 && rc == TELEMEM_OK)
        rc = tlm_core_wait_step(&w);
    return rc;
}

static void on_key_rep(int src, const void *msg, size_t len)
{
    const tlm_am_key_rep_t *h = msg;
    if (len < sizeof(*h) || h->key_len > TLM_DIRECT_KEY_MAX ||
        len != sizeof(*h) + h->key_len || !D.peers || !D.peers[src].d)
        return tlm_core_protocol_error(src, "key reply", len);
    dpeer_t *p = &D.peers[src];
    if ((int32_t)(h->h.id - p->key_done) > 0)
        p->key_done = h->h.id;
    int status = (int16_t)h->h.aux;
    if (h->len == 0 || (status != TELEMEM_OK &&
                        status != TELEMEM_ERR_UNSUPPORTED))
        return; /* refused (unknown range) or not now: nothing to cache */
    if (cache_find(p, h->base, h->len))
        return;
    tlm_direct_rkey_t *rk = NULL;
    if (status == TELEMEM_OK &&
        p->d->ops->import(p->d, src, h->base, h->len, h + 1, h->key_len,
                          &rk) != TELEMEM_OK)
        rk = NULL;
    if (cache_add(p, h->base, h->len, rk) != TELEMEM_OK && rk)
        p->d->ops->release(p->d, rk);
}

static void on_key_inval(int src, const void *msg, size_t len)
{
    const tlm_am_get_req_t *q = msg;
    if (len != sizeof(*q) || !D.peers)
        return tlm_core_protocol_error(src, "key invalidation", len);
    if (D.peers[src].d) {
        /* Writes of an async driver still in flight land first. */
        tlm_direct_t *d = D.peers[src].d;
        while (tlm_core.peers[src].direct_busy && d->ops->flush &&
               d->ops->flush(d, src) == TELEMEM_ERR_AGAIN)
            if (d->ops->progress)
                d->ops->progress(d);
        cache_drop(src, q->addr, q->addr, true); /* by base */
    }
    tlm_am_hdr_t a = {TLM_AM_KEY_INVAL_ACK, 0, 0, q->h.id};
    tlm_am_send_ctrl(src, &a, sizeof(a), NULL, 0);
}

/* ---- target: answering key requests ------------------------------------- */

static void key_reply(int src, uint32_t id, int status, uintptr_t base,
                      size_t len, const void *key, size_t key_len)
{
    uint64_t buf[(sizeof(tlm_am_key_rep_t) + TLM_DIRECT_KEY_MAX) / 8];
    tlm_am_key_rep_t *h = (tlm_am_key_rep_t *)(void *)buf;
    *h = (tlm_am_key_rep_t){{TLM_AM_KEY_REP, 0, (uint16_t)(int16_t)status, id},
                            base, len, key_len};
    if (key_len)
        memcpy(h + 1, key, key_len);
    tlm_am_send_ctrl(src, h, sizeof(*h) + key_len, NULL, 0);
}

static void add_holder(region_dx_t *dx, int src)
{
    for (int i = 0; i < dx->nholders; i++)
        if (dx->holders[i] == src)
            return;
    if (dx->nholders == dx->cap) {
        int cap = dx->cap ? dx->cap * 2 : 4;
        int *h = realloc(dx->holders, (size_t)cap * sizeof(int));
        if (!h)
            return;
        dx->holders = h;
        dx->cap = cap;
    }
    dx->holders[dx->nholders++] = src;
}

static void on_key_req(int src, const void *msg, size_t len)
{
    const tlm_am_get_req_t *q = msg;
    if (len != sizeof(*q))
        return tlm_core_protocol_error(src, "key request", len);
    tlm_region_t *r = tlm_core_region_find(q->addr, q->len);
    tlm_transport_t *tp = tlm_am.peers[src].tp;
    tlm_direct_t *d = tp ? tp->direct : NULL;
    if (!r || q->len == 0) {
        tlm_debug("refused a key request by rank %d for [0x%llx, +%llu)",
                  src, (unsigned long long)q->addr,
                  (unsigned long long)q->len);
        return key_reply(src, q->h.id, TELEMEM_ERR_OUT_OF_RANGE, 0, 0, NULL,
                         0);
    }
    size_t rlen = r->end - r->base;
    /* A block's keys went out with telemem_malloc_all: none to give. */
    if (r->from_malloc_all || !d || D.mode == MODE_NEVER)
        return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED,
                         r->from_malloc_all ? r->base : 0,
                         r->from_malloc_all ? rlen : 0, NULL, 0);
    if (!r->dx) {
        r->dx = calloc(1, sizeof(region_dx_t));
        if (!r->dx)
            return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED, 0, 0,
                             NULL, 0);
    }
    region_dx_t *dx = r->dx;
    if (dx->dying) /* being deregistered: this once over AM */
        return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED, 0, 0, NULL,
                         0);
    int s = slot_of(tp);
    if (dx->state[s] == 0) {
        size_t kl = 0;
        int rc = d->ops->expose(d, (void *)r->base, rlen, &dx->mr[s],
                                dx->key[s], &kl);
        dx->state[s] = rc == TELEMEM_OK ? 1 : -1;
        dx->key_len[s] = (uint32_t)kl;
    }
    add_holder(dx, src);
    if (dx->state[s] < 0)
        return key_reply(src, q->h.id, TELEMEM_ERR_UNSUPPORTED, r->base, rlen,
                         NULL, 0);
    key_reply(src, q->h.id, TELEMEM_OK, r->base, rlen, dx->key[s],
              dx->key_len[s]);
}

static void on_key_inval_ack(int src, const void *msg, size_t len)
{
    if (len != sizeof(tlm_am_hdr_t))
        return tlm_core_protocol_error(src, "key invalidation ack", len);
    if (D.inval_pending)
        D.inval_pending--;
}

static void dx_free(region_dx_t *dx)
{
    for (int s = 0; s < NSLOTS; s++)
        if (dx->state[s] > 0 && D.slot_d[s])
            D.slot_d[s]->ops->unexpose(D.slot_d[s], dx->mr[s]);
    free(dx->holders);
    free(dx);
}

int tlm_core_direct_region_retire(tlm_region_t *r)
{
    region_dx_t *dx = r->dx;
    if (!dx)
        return TELEMEM_OK;
    /* r may move while we poll (the table grows): keep what we need. */
    uintptr_t base = r->base;
    size_t len = r->end - r->base;
    dx->dying = true;
    int rc = TELEMEM_OK;
    for (int i = 0; i < dx->nholders && rc == TELEMEM_OK; i++) {
        tlm_am_get_req_t q = {{TLM_AM_KEY_INVAL, 0, 0, 0}, base, len};
        rc = tlm_am_send_ctrl(dx->holders[i], &q, sizeof(q), NULL, 0);
        if (rc == TELEMEM_OK)
            D.inval_pending++;
    }
    tlm_wait_t w;
    tlm_core_wait_init(&w, -1);
    while (D.inval_pending && rc == TELEMEM_OK)
        rc = tlm_core_wait_step(&w);
    if (rc != TELEMEM_OK) {
        tlm_error("deregister: peers holding the key of [0x%llx, +%llu) did "
                  "not answer (%s); the range stays registered",
                  (unsigned long long)base, (unsigned long long)len,
                  telemem_strerror(rc));
        return rc;
    }
    return TELEMEM_OK;
}

/* After a successful retire: free what it kept (the caller re-found r). */
void tlm_core_direct_region_free(tlm_region_t *r)
{
    if (r->dx) {
        dx_free(r->dx);
        r->dx = NULL;
    }
}

/* ---- initiator: transfers ------------------------------------------------ */

/* Run chain segs[0..n) (part of a transfer of total bytes) under the key
 * covering [lo, lo+ext) of rank. */
static int run_chain(int rank, bool write, const tlm_direct_seg_t *segs,
                     int n, uintptr_t lo, size_t ext, size_t total, int mode)
{
    dpeer_t *p = &D.peers[rank];
    tlm_direct_t *d = p->d;
    int rc;
    rkey_ent_t *e = cache_find(p, lo, ext);
    if (!e && (e = cache_find(p, lo, 1)) != NULL) {
        /* It starts in a region of the peer this rank knows (regions never
         * overlap) and runs past its end: the target would refuse it, and
         * a driver must not be handed it.  Refused here. */
        tlm_error("%s of %zu bytes at 0x%llx is out of range: it runs past "
                  "the end of rank %d's region [0x%llx, 0x%llx)",
                  write ? "put" : "get", ext,
                  (unsigned long long)lo, rank, (unsigned long long)e->base,
                  (unsigned long long)e->end);
        return TLM_DIRECT_REFUSED;
    }
    if (!e) {
        rc = fetch_key(rank, lo, ext);
        if (rc != TELEMEM_OK)
            return rc;
        e = cache_find(p, lo, ext);
    }
    /* Decided before ordering: a declined transfer costs no flush. */
    if (!e || !e->rk || total < e->min)
        return TLM_DIRECT_DECLINED;
    rc = order_after_am(rank, p, lo, ext, &e);
    if (rc != TELEMEM_OK)
        return rc;
    /* Network drivers do not order their operations among themselves (a
     * read may pass an earlier write to the same bytes): complete the
     * earlier ones first.  This keeps one batch in flight per peer. */
    if (!d->sync && tlm_core.peers[rank].direct_busy) {
        rc = tlm_core_direct_settle(rank);
        if (rc == TELEMEM_OK)
            rc = refind_key(p, lo, ext, &e); /* handlers ran: withdrawn? */
        if (rc != TELEMEM_OK)
            return rc;
    }
    /* From here no poll runs before the driver has the chain: the key
     * cannot be withdrawn under us. */
    tlm_wait_t w;
    tlm_core_wait_init(&w, rank);
    for (;;) {
        rc = write ? d->ops->write(d, rank, e->rk, segs, n)
                   : d->ops->read(d, rank, e->rk, segs, n);
        if (rc != TELEMEM_ERR_AGAIN)
            break;
        rc = tlm_core_wait_step(&w);
        if (rc == TELEMEM_OK)
            rc = refind_key(p, lo, ext, &e); /* withdrawn while we waited? */
        if (rc != TELEMEM_OK)
            return rc;
    }
    if (rc != TELEMEM_OK)
        return rc;
    if (!d->sync) {
        tlm_core.peers[rank].direct_busy = true;
        if (mode != TLM_MODE_NBI)
            rc = tlm_core_direct_settle(rank);
    }
    return rc;
}

int tlm_core_direct_atomic(int rank, int op, unsigned width, uintptr_t addr,
                           uint64_t operand, uint64_t compare, uint64_t *old)
{
    dpeer_t *p = &D.peers[rank];
    if (D.mode == MODE_NEVER || !p->d || !p->d->ops->atomic)
        return TLM_DIRECT_DECLINED;
    rkey_ent_t *e = cache_find(p, addr, width);
    if (!e || !e->rk)
        return TLM_DIRECT_DECLINED;
    int rc = order_after_am(rank, p, addr, width, &e);
    if (rc != TELEMEM_OK)
        return rc;
    rc = p->d->ops->atomic(p->d, rank, e->rk, addr, op, width, operand,
                           compare, old);
    return rc == TELEMEM_ERR_UNSUPPORTED ? TLM_DIRECT_DECLINED : rc;
}

int tlm_core_direct_rma(int rank, bool write, void *remote, void *local,
                        size_t n, int mode)
{
    if (!D.peers[rank].d)
        return TLM_DIRECT_DECLINED;
    tlm_direct_seg_t s = {(uintptr_t)local, (uintptr_t)remote, n, 1, 0, 0};
    return run_chain(rank, write, &s, 1, (uintptr_t)remote, n, n, mode);
}

int tlm_core_direct_strided(int rank, bool write, const tlm_pack_desc_t *d,
                            void *remote, void *local, int mode)
{
    dpeer_t *p = &D.peers[rank];
    if (!p->d || d->levels < 1 || d->total < tlm_core.peers[rank].direct_min ||
        d->count[0] < p->row_min)
        return TLM_DIRECT_DECLINED;
    size_t ext = tlm_pack_extent(d, TLM_PACK_REMOTE);
    /* Dimension 1 is the stride of a descriptor; dimensions 2.. make the
     * chain (one descriptor each), as the TCA engine takes them. */
    size_t idx[TLM_PACK_MAX_LEVELS + 1] = {0};
    size_t nsegs = 1;
    for (int k = 2; k <= d->levels; k++)
        nsegs *= d->count[k];
    tlm_direct_seg_t segs[CHAIN_BATCH];
    size_t batch = TLM_MAX(TLM_MIN((size_t)CHAIN_BATCH, p->d->max_segs), 1);
    int n = 0, rc = TELEMEM_OK;
    for (size_t i = 0; i < nsegs && rc == TELEMEM_OK; i++) {
        size_t loff = 0, roff = 0;
        for (int k = 2; k <= d->levels; k++) {
            loff += idx[k] * d->stride[TLM_PACK_LOCAL][k - 1];
            roff += idx[k] * d->stride[TLM_PACK_REMOTE][k - 1];
        }
        segs[n++] = (tlm_direct_seg_t){
            (uintptr_t)local + loff, (uintptr_t)remote + roff, d->count[0],
            d->count[1], (ptrdiff_t)d->stride[TLM_PACK_LOCAL][0],
            (ptrdiff_t)d->stride[TLM_PACK_REMOTE][0]};
        for (int k = 2; k <= d->levels; k++) { /* next index, odometer */
            if (++idx[k] < d->count[k])
                break;
            idx[k] = 0;
        }
        if ((size_t)n == batch || i + 1 == nsegs) {
            rc = run_chain(rank, write, segs, n, (uintptr_t)remote, ext,
                           d->total, mode);
            /* Declined after a part went direct cannot happen: the key
             * covers the whole extent and is checked before the first. */
            n = 0;
        }
    }
    return rc;
}

/* ---- blocks of telemem_malloc_all ---------------------------------------- */

static bool enabled(void)
{
    return D.mode != MODE_NEVER && (D.slot_d[SLOT_LOCAL] || D.slot_d[SLOT_NET]);
}

int tlm_core_direct_block_alloc(size_t bytes, void **mem,
                                tlm_core_dblock_t **db_p)
{
    *mem = NULL;
    *db_p = NULL;
    tlm_core_dblock_t *db = calloc(1, sizeof(*db));
    if (!db)
        return TELEMEM_ERR_NO_MEMORY;
    db->bytes = bytes;
    db->rbase = calloc((size_t)tlm_core.nranks, sizeof(uintptr_t));
    db->rsize = calloc((size_t)tlm_core.nranks, sizeof(size_t));
    if (!db->rbase || !db->rsize) {
        free(db->rbase);
        free(db->rsize);
        free(db);
        return TELEMEM_ERR_NO_MEMORY;
    }
    void *m = NULL;
    if (enabled() && bytes) {
        for (int s = 0; s < NSLOTS && !m; s++) {
            tlm_direct_t *d = D.slot_d[s];
            size_t kl = 0;
            if (d && d->ops->alloc &&
                d->ops->alloc(d, bytes, &m, &db->mr[s], db->key[s], &kl) ==
                    TELEMEM_OK) {
                db->alloc_d = d;
                db->md[s] = d;
                db->key_len[s] = (uint32_t)kl;
            } else {
                m = NULL;
            }
        }
    }
    if (!m && posix_memalign(&m, 64, bytes ? bytes : 64) != 0) {
        free(db->rbase);
        free(db->rsize);
        free(db);
        return TELEMEM_ERR_NO_MEMORY;
    }
    for (int s = 0; enabled() && bytes && s < NSLOTS; s++) {
        tlm_direct_t *d = D.slot_d[s];
        size_t kl = 0;
        if (!d || d == db->alloc_d)
            continue;
        if (d->ops->expose(d, m, bytes, &db->mr[s], db->key[s], &kl) ==
            TELEMEM_OK) {
            db->key_len[s] = (uint32_t)kl;
            db->md[s] = d;
        } else {
            db->mr[s] = NULL;
        }
    }
    *mem = m;
    *db_p = db;
    return TELEMEM_OK;
}

size_t tlm_core_direct_record_size(void)
{
    /* The same on every rank (TELEMEM_DIRECT is the job's setting), even
     * one without a driver: base and size, then the keys. */
    return D.mode != MODE_NEVER ? sizeof(drec_t) : 2 * sizeof(uint64_t);
}

void tlm_core_direct_record(const tlm_core_dblock_t *db, void *mem, void *rec)
{
    size_t n = tlm_core_direct_record_size();
    memset(rec, 0, n);
    uint64_t w[2] = {(uint64_t)(uintptr_t)mem, db ? (uint64_t)db->bytes : 0};
    memcpy(rec, w, sizeof(w));
    if (n < sizeof(drec_t) || !db)
        return;
    drec_t *r = rec;
    for (int s = 0; s < NSLOTS; s++) {
        r->k[s].len = db->key_len[s];
        memcpy(r->k[s].key, db->key[s], db->key_len[s]);
    }
}

uint64_t tlm_core_direct_record_addr(const void *rec)
{
    uint64_t a;
    memcpy(&a, rec, sizeof(a));
    return a;
}

void tlm_core_direct_block_import(tlm_core_dblock_t *db, const void *recs,
                                  size_t bytes)
{
    (void)bytes; /* each peer's own size is in its record */
    size_t rs = tlm_core_direct_record_size();
    x_write_begin();
    for (int r = 0; r < tlm_core.nranks; r++) {
        const uint8_t *rec = (const uint8_t *)recs + (size_t)r * rs;
        uint64_t w[2];
        memcpy(w, rec, sizeof(w));
        db->rbase[r] = (uintptr_t)w[0];
        /* a record that would wrap is not taken: its block takes the AM
         * path, whose target checks every request */
        bool sane = w[1] <= SIZE_MAX && (uint64_t)(uintptr_t)w[0] == w[0] &&
                    !tlm_util_range_wraps((uintptr_t)w[0], (size_t)w[1]);
        db->rsize[r] = sane ? (size_t)w[1] : 0;
        dpeer_t *p = &D.peers[r];
        size_t size = db->rsize[r];
        if (r == tlm_core.rank || !p->d || rs < sizeof(drec_t) || !size)
            continue;
        const drec_t *dr = (const drec_t *)(const void *)rec;
        int s = slot_of(tlm_am.peers[r].tp);
        tlm_direct_rkey_t *rk = NULL;
        if (dr->k[s].len == 0 || dr->k[s].len > TLM_DIRECT_KEY_MAX ||
            p->d->ops->import(p->d, r, db->rbase[r], size, dr->k[s].key,
                              dr->k[s].len, &rk) != TELEMEM_OK)
            rk = NULL;
        if (cache_add(p, db->rbase[r], size, rk) != TELEMEM_OK) {
            if (rk)
                p->d->ops->release(p->d, rk);
        } else if (rk) {
            x_add(p, db->rbase[r], size, rk);
        }
    }
    x_write_end();
}

void tlm_core_direct_block_release(tlm_core_dblock_t *db)
{
    x_write_begin();
    for (int r = 0; db && D.peers && r < tlm_core.nranks; r++) {
        if (r != tlm_core.rank && D.peers[r].d && db->rsize[r]) {
            uintptr_t lo = db->rbase[r], hi = lo + db->rsize[r];
            x_drop(&D.peers[r], lo, hi);
            cache_drop(r, lo, hi, false);
        }
    }
    x_write_end();
}

void tlm_core_direct_block_free(tlm_core_dblock_t *db, void *mem)
{
    if (!db) {
        free(mem);
        return;
    }
    for (int s = 0; s < NSLOTS; s++) {
        tlm_direct_t *d = db->md[s];
        if (d && d != db->alloc_d)
            d->ops->unexpose(d, db->mr[s]);
        else if (d)
            d->ops->free(d, db->mr[s]);
    }
    if (!db->alloc_d)
        free(mem);
    free(db->rbase);
    free(db->rsize);
    free(db);
}

void tlm_core_direct_fini(void)
{
    for (int r = 0; D.peers && r < tlm_core.nranks; r++) {
        dpeer_t *p = &D.peers[r];
        if (p->d)
            cache_drop(r, 0, UINTPTR_MAX, false);
        free(p->keys);
        free(p->x);
    }
    for (size_t i = 0; i < tlm_core.nregions; i++) {
        if (tlm_core.regions[i].dx) {
            dx_free(tlm_core.regions[i].dx);
            tlm_core.regions[i].dx = NULL;
        }
    }
    free(D.peers);
    free(D.text);
    memset(&D, 0, sizeof(D));
}

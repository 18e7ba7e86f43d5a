/* caf_tcoll.c - collectives among the images of one team (any team, the
 * initial one included): a binomial reduction to the team's first image,
 * folding in image order, and a binomial broadcast, over active messages
 * tagged with the team and the collective's number.  A waiting image
 * watches the image it waits for, so an image that has stopped or failed
 * turns into STAT_STOPPED_IMAGE / STAT_FAILED_IMAGE on every image of the
 * team instead of a wait until TELEMEM_TIMEOUT (docs/caf.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

/* A message that arrived: pushed by the handler onto a lock-free stack
 * (handlers may run on Telemem's progress thread), moved by the waiting
 * image into its own list in arrival order. */
typedef struct tcoll_msg {
    struct tcoll_msg *next;
    int src;            /* rank */
    uint32_t cid, seq, phase;
    int code;           /* 0, or the STAT= code an image met */
    int image;          /* the image the code refers to (team index + 1) */
    size_t bytes;
    size_t cap;         /* bytes data[] can hold */
    char data[];
} tcoll_msg_t;

enum { PH_REDUCE = 1, PH_BCAST = 2 };
enum { ARG_CID, ARG_SEQ, ARG_PHASE, ARG_CODE, ARG_IMAGE, NARGS };

/* Buffers of large messages are kept for the next ones (at most
 * CACHE_SLOTS of at most CACHE_MAX bytes): a fresh block of that size
 * comes from mmap, and the copy into it took a page fault per page (about
 * a third of a 1 MiB co_sum's time inside a team, measured with perf).
 * The handler takes, the waiting image gives back: a spin lock, held for
 * a few loads and stores. */
#define CACHE_MIN ((size_t)64 * 1024)
#define CACHE_MAX ((size_t)16 * 1024 * 1024)
#define CACHE_SLOTS 4

static struct tcoll_msg *cache[CACHE_SLOTS];
static int cache_lock;

static tcoll_msg_t *arrived_stack; /* the handler's side */
static tcoll_msg_t *pending;       /* the waiter's, oldest first */
static int am_id = -1;

static void cache_acquire(void)
{
    while (__atomic_exchange_n(&cache_lock, 1, __ATOMIC_ACQUIRE))
        ;
}

static void cache_release(void)
{
    __atomic_store_n(&cache_lock, 0, __ATOMIC_RELEASE);
}

static tcoll_msg_t *msg_new(size_t bytes)
{
    tcoll_msg_t *m = NULL;
    int i;

    if (bytes >= CACHE_MIN && bytes <= CACHE_MAX) {
        cache_acquire();
        for (i = 0; i < CACHE_SLOTS && !m; i++)
            if (cache[i] && cache[i]->cap >= bytes) {
                m = cache[i];
                cache[i] = NULL;
            }
        cache_release();
        if (m)
            return m;
    }
    m = malloc(sizeof *m + bytes + 1);
    if (m)
        m->cap = bytes;
    return m;
}

/* Keep m for a later message when it is large (in an empty slot, or in
 * place of a smaller buffer), else free it. */
static void msg_free(tcoll_msg_t *m)
{
    int i;

    if (m && m->cap >= CACHE_MIN && m->cap <= CACHE_MAX) {
        cache_acquire();
        for (i = 0; i < CACHE_SLOTS; i++)
            if (!cache[i] || cache[i]->cap < m->cap) {
                tcoll_msg_t *old = cache[i];
                cache[i] = m;
                m = old;
                break;
            }
        cache_release();
    }
    free(m);
}

static void tcoll_handler(telemem_am_token_t token, void *payload,
                          size_t bytes, const uint32_t *args, unsigned nargs,
                          void *ctx)
{
    tcoll_msg_t *m, *top;
    int src = -1;

    (void)ctx;
    if (nargs != NARGS || telemem_am_source(token, &src) != TELEMEM_OK)
        return;
    m = msg_new(bytes);
    if (!m)
        tlm_caf_die(1, "collective: out of memory for a message of %zu "
                    "bytes", bytes);
    m->src = src;
    m->cid = args[ARG_CID];
    m->seq = args[ARG_SEQ];
    m->phase = args[ARG_PHASE];
    m->code = (int)args[ARG_CODE];
    m->image = (int)args[ARG_IMAGE];
    m->bytes = bytes;
    if (bytes)
        memcpy(m->data, payload, bytes);
    top = __atomic_load_n(&arrived_stack, __ATOMIC_RELAXED);
    do
        m->next = top;
    while (!__atomic_compare_exchange_n(&arrived_stack, &top, m, true,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void tlm_caf_tcoll_init(void)
{
    if (telemem_am_register_any(tcoll_handler, NULL, &am_id) != TELEMEM_OK)
        tlm_caf_die(1, "caf_init: cannot register active-message handlers");
}

/* Move what the handler pushed to the end of the pending list, in the
 * order it arrived. */
static void drain(void)
{
    tcoll_msg_t *s = __atomic_exchange_n(&arrived_stack, NULL,
                                         __ATOMIC_ACQUIRE);
    tcoll_msg_t *rev = NULL, **tail = &pending;

    while (s) {
        tcoll_msg_t *n = s->next;
        s->next = rev;
        rev = s;
        s = n;
    }
    while (*tail)
        tail = &(*tail)->next;
    *tail = rev;
}

static tcoll_msg_t *take(int src, uint32_t cid, uint32_t seq, uint32_t ph)
{
    tcoll_msg_t **p;

    drain();
    for (p = &pending; *p; p = &(*p)->next) {
        tcoll_msg_t *m = *p;
        if (m->src == src && m->cid == cid && m->seq == seq &&
            m->phase == ph) {
            *p = m->next;
            return m;
        }
    }
    return NULL;
}

/* A failed image outranks a stopped one, which outranks other errors. */
static void merge(int *code, int *image, int c, int img)
{
    if (!c)
        return;
    if (!*code || c == TLM_CAF_STAT_FAILED_IMAGE ||
        (c == TLM_CAF_STAT_STOPPED_IMAGE &&
         *code != TLM_CAF_STAT_FAILED_IMAGE)) {
        *code = c;
        *image = img;
    }
}

/* One collective in progress on this image. */
typedef struct {
    const tlm_caf_team_t *t;
    uint32_t seq;
    int code, image;    /* the first error met (merge) */
    bool watch;         /* tlm_caf_tflat_check while waiting */
    bool ended;         /* it said so: wait for nothing more */
    uint64_t key;
    size_t bytes;
} op_t;

/* Wait for the message of phase ph from team index idx; NULL when that
 * image stopped or failed first (recorded in o). */
static tcoll_msg_t *recv_from(op_t *o, int idx, uint32_t ph)
{
    int r = o->t->ranks[idx], rc, s;
    telemem_wait_t w = TELEMEM_WAIT_INIT(r);
    tcoll_msg_t *m;

    for (;;) {
        m = take(r, o->t->cid, o->seq, ph);
        if (m || o->ended)
            return m;
        if (o->watch) {
            int img = 0, c = tlm_caf_tflat_check(o->t, o->key, o->bytes,
                                                 &img);
            if (c) {
                merge(&o->code, &o->image, c, img);
                o->ended = true;
                return NULL;
            }
        }
        s = tlm_caf_state(r);
        if (s != TLM_CAF_RUNNING) {
            /* Its messages were handled before its state was written
             * (it completes them first): one more look. */
            m = take(r, o->t->cid, o->seq, ph);
            if (m)
                return m;
            merge(&o->code, &o->image,
                  s == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                      : TLM_CAF_STAT_STOPPED_IMAGE,
                  idx + 1);
            return NULL;
        }
        rc = telemem_wait_poll(&w);
        if (rc != TELEMEM_OK) {
            if (rc == TELEMEM_ERR_PEER_DEAD)
                tlm_caf_refresh_dead();
            merge(&o->code, &o->image, tlm_caf_stat_of(rc), idx + 1);
            return NULL;
        }
    }
}

/* Send (data, bytes) with o's error to team index idx.  An image that has
 * stopped or failed is left out (it waits for nothing) and becomes this
 * image's error. */
static void send_to(op_t *o, int idx, uint32_t ph, const void *data,
                    size_t bytes)
{
    int r = o->t->ranks[idx], rc, s;
    uint32_t args[NARGS];

    s = tlm_caf_state(r);
    if (s != TLM_CAF_RUNNING) {
        merge(&o->code, &o->image,
              s == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                  : TLM_CAF_STAT_STOPPED_IMAGE,
              idx + 1);
        return;
    }
    args[ARG_CID] = o->t->cid;
    args[ARG_SEQ] = o->seq;
    args[ARG_PHASE] = ph;
    args[ARG_CODE] = (uint32_t)o->code;
    args[ARG_IMAGE] = (uint32_t)o->image;
    if (o->code)
        bytes = 0;
    rc = telemem_am_request(r, am_id, bytes ? data : NULL, bytes, args,
                            NARGS);
    if (rc != TELEMEM_OK) {
        if (rc == TELEMEM_ERR_PEER_DEAD)
            tlm_caf_refresh_dead();
        merge(&o->code, &o->image, tlm_caf_stat_of(rc), idx + 1);
    }
}

/* An image that this one knows has stopped or failed makes the
 * collective fail here, but this image still takes its part (it forwards
 * the error): the others may not know yet, and must not wait for it. */
static void op_begin(op_t *o, tlm_caf_team_t *t)
{
    int i;

    o->t = t;
    o->seq = ++t->seq;
    o->code = 0;
    o->image = 0;
    o->watch = o->ended = false;
    tlm_caf_refresh_dead();
    for (i = 0; i < t->size; i++) {
        int s = tlm_caf_state(t->ranks[i]);
        if (s != TLM_CAF_RUNNING)
            merge(&o->code, &o->image,
                  s == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                      : TLM_CAF_STAT_STOPPED_IMAGE,
                  i + 1);
    }
}

/* The message of an error for ERRMSG=. */
static int op_end(const op_t *o, const char *what, char *msg, size_t cap)
{
    if (!o->code)
        return 0;
    if (o->code == TLM_CAF_STAT_FAILED_IMAGE ||
        o->code == TLM_CAF_STAT_STOPPED_IMAGE)
        snprintf(msg, cap, "%s: image %d has %s", what, o->image,
                 o->code == TLM_CAF_STAT_FAILED_IMAGE ? "failed"
                                                      : "stopped");
    else if (o->code == TLM_CAF_STAT_INVALID)
        snprintf(msg, cap, "%s: the argument of image %d differs in size "
                 "or type from the others'", what, o->image);
    else
        snprintf(msg, cap, "%s: image %d: %s", what, o->image,
                 telemem_strerror(TLM_CAF_STAT_TELEMEM_BASE - o->code));
    return o->code;
}

/* Binomial broadcast from team index root of buf (bytes), or of o's error
 * when it has one.  A received size that differs from bytes is this
 * image's own error: the message travels on unchanged. */
static void bcast(op_t *o, int root, void *buf, size_t bytes)
{
    int n = o->t->size, vr = (o->t->me - root + n) % n, mask = 1;
    tcoll_msg_t *m = NULL;
    const void *out = buf;
    size_t out_bytes = bytes;
    bool mismatch = false;

    for (; mask < n; mask <<= 1)
        if (vr & mask) {
            m = recv_from(o, (vr - mask + root) % n, PH_BCAST);
            if (m) {
                merge(&o->code, &o->image, m->code, m->image);
                out = m->data;
                out_bytes = m->bytes;
                mismatch = !m->code && m->bytes != bytes;
                if (!m->code && !mismatch && bytes)
                    memcpy(buf, m->data, bytes);
            }
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            send_to(o, (vr + mask + root) % n, PH_BCAST, out, out_bytes);
    if (mismatch)
        merge(&o->code, &o->image, TLM_CAF_STAT_INVALID, o->t->me + 1);
    msg_free(m);
}

/* Binomial reduction to team index 0: this image's part of the fold (its
 * own and its subtree's elements, in image order) goes to its parent. */
static void reduce(op_t *o, void *buf, size_t bytes, tlm_caf_fold_fn_t fold,
                   void *ctx)
{
    int n = o->t->size, me = o->t->me, mask;

    for (mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            send_to(o, me - mask, PH_REDUCE, buf, bytes);
            return;
        }
        if (me + mask < n) {
            tcoll_msg_t *m = recv_from(o, me + mask, PH_REDUCE);
            if (!m)
                continue;
            merge(&o->code, &o->image, m->code, m->image);
            if (!o->code && m->bytes != bytes)
                merge(&o->code, &o->image, TLM_CAF_STAT_INVALID,
                      me + mask + 1);
            if (!o->code && fold(buf, m->data, bytes, ctx) != 0)
                merge(&o->code, &o->image, TLM_CAF_STAT_INVALID, me + 1);
            msg_free(m);
        }
    }
}

int tlm_caf_tcoll_bcast(tlm_caf_team_t *t, void *buf, size_t bytes,
                        int root, const char *what, char *msg, size_t cap)
{
    op_t o;

    op_begin(&o, t);
    if (t->size > 1)
        bcast(&o, root, buf, bytes);
    return op_end(&o, what, msg, cap);
}

int tlm_caf_tcoll_allreduce(tlm_caf_team_t *t, void *buf, size_t bytes,
                            tlm_caf_fold_fn_t fold, void *ctx,
                            const char *what, char *msg, size_t cap)
{
    op_t o;

    op_begin(&o, t);
    if (t->size > 1) {
        reduce(&o, buf, bytes, fold, ctx);
        bcast(&o, 0, buf, bytes);
    }
    return op_end(&o, what, msg, cap);
}

int tlm_caf_tcoll_allreduce_watched(tlm_caf_team_t *t, void *buf,
                                    size_t bytes, tlm_caf_fold_fn_t fold,
                                    void *ctx, const char *what, char *msg,
                                    size_t cap)
{
    op_t o;

    op_begin(&o, t);
    if (t->size > 1) {
        o.watch = true;
        o.key = tlm_caf_tflat_key(t, o.seq);
        o.bytes = bytes;
        if (t->me != 0)
            tlm_caf_tflat_announce(t, o.key, bytes);
        reduce(&o, buf, bytes, fold, ctx);
        bcast(&o, 0, buf, bytes);
    }
    return op_end(&o, what, msg, cap);
}

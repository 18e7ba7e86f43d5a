/* gasnet_extended.c - GASNet's extended API over Telemem: blocking, nb and
 * nbi puts and gets (loads and stores where the node's segment is mapped
 * here, gasnet_local.c; Telemem's operations elsewhere), memset (there a
 * memset, elsewhere an active message run at the target), the
 * register-value forms, explicit handles with their sync calls, implicit
 * synchronisation and access regions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gasnet_internal.h"

/* Non-bulk puts may reuse the source at once.  Up to this size the data is
 * copied and put with telemem_put_nb(); above it telemem_put() (which
 * returns when the data is handed over) is followed by a 1-byte get of the
 * put's last byte, whose completion proves the put complete (a target
 * applies one initiator's requests in order). */
#define COPY_MAX 16384u
#define INLINE_BYTES 64u

enum { OP_FREE = 0, OP_TLM, OP_MEMSET, OP_REGION, OP_VALGET };

/* One explicit handle (gasnet_handle_t and gasnet_valget_handle_t point at
 * these). */
typedef struct gasnete_op {
    uint8_t kind;
    uint8_t val_off;         /* valget: where the bytes land in inl */
    uint8_t val_len;
    int node;
    telemem_handle_t th;     /* OP_TLM, OP_VALGET */
    void *heap;              /* owned copy of a non-bulk put's source */
    int done;                /* OP_MEMSET: set by the acknowledgement */
    int status;
    struct gasnete_op **kids; /* OP_REGION: its operations */
    size_t nkids, capkids;
    struct gasnete_op *next_free;
    uint64_t inl[INLINE_BYTES / 8]; /* small copies, values, markers */
} op_t;

#define CHUNK_OPS 128

typedef struct chunk {
    struct chunk *next;
    op_t ops[CHUNK_OPS];
} chunk_t;

/* Per thread (GASNET_PAR): each thread has its own pool of handles, its
 * own access region and its own implicit-handle state. */
/* Every chunk of every thread, for gasnet_exit to free (GASNET_PAR
 * threads may be gone by then). */
static chunk_t *all_chunks;
static pthread_mutex_t chunks_lock = PTHREAD_MUTEX_INITIALIZER;

static TLM_GASNET_TLS struct {
    op_t *free_ops;
    op_t *region;       /* the open access region, or NULL */
    int nbi_outstanding; /* nbi operations since the last implicit sync */
} X;

/* ---- op pool ------------------------------------------------------------- */

static op_t *op_alloc(const char *what, int kind, int node)
{
    if (TLM_GASNET_UNLIKELY(!X.free_ops)) {
        chunk_t *c = calloc(1, sizeof *c);
        if (!c)
            tlm_gasnet_fatal(what, "out of memory for operation handles");
        pthread_mutex_lock(&chunks_lock);
        c->next = all_chunks;
        all_chunks = c;
        pthread_mutex_unlock(&chunks_lock);
        for (int i = CHUNK_OPS - 1; i >= 0; i--) {
            c->ops[i].next_free = X.free_ops;
            X.free_ops = &c->ops[i];
        }
    }
    op_t *op = X.free_ops;
    X.free_ops = op->next_free;
    op->kind = (uint8_t)kind;
    op->node = node;
    op->heap = NULL;
    op->done = 0;
    op->status = TELEMEM_OK;
    op->nkids = 0;
    return op;
}

static void op_free(op_t *op)
{
    free(op->heap);
    op->heap = NULL;
    op->kind = OP_FREE;
    op->next_free = X.free_ops;
    X.free_ops = op;
}

static void region_add(const char *what, op_t *op)
{
    op_t *r = X.region;
    if (r->nkids == r->capkids) {
        size_t cap = r->capkids ? 2 * r->capkids : 16;
        /* an array of pointers: sizeof *k is meant
         * NOLINTNEXTLINE(bugprone-sizeof-expression) */
        op_t **k = realloc(r->kids, cap * sizeof *k);
        if (!k)
            tlm_gasnet_fatal(what, "out of memory for the access region");
        r->kids = k;
        r->capkids = cap;
    }
    r->kids[r->nkids++] = op;
}

/* ---- checks -------------------------------------------------------------- */

/* Fatal unless the call may run and [remote, +nbytes) is in node's
 * segment.  Returns false for 0 bytes (nothing to do). */
static inline bool check_rma(const char *what, gasnet_node_t node,
                             const void *remote, const void *local,
                             size_t nbytes)
{
    if (TLM_GASNET_LIKELY(tlm_gasnet.attached && !tlm_gasnet_frame &&
                          !tlm_gasnet_hsl_held &&
                          node < (gasnet_node_t)tlm_gasnet.nodes &&
                          tlm_gasnet_in_segment((int)node, remote, nbytes) &&
                          local && nbytes))
        return true;
    if (!tlm_gasnet.attached)
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    tlm_gasnet_check_context(what);
    if (node >= (gasnet_node_t)tlm_gasnet.nodes)
        tlm_gasnet_fatal(what, "node %u out of range [0, %d)",
                         (unsigned)node, tlm_gasnet.nodes);
    if (nbytes == 0)
        return false;
    if (!tlm_gasnet_in_segment((int)node, remote, nbytes))
        tlm_gasnet_fatal(what, "[%p, +%zu) is not inside the segment of node "
                         "%u ([%p, +%ju))", remote, nbytes, (unsigned)node,
                         tlm_gasnet.seg[node].addr,
                         (uintmax_t)tlm_gasnet.seg[node].size);
    tlm_gasnet_fatal(what, "local buffer is NULL with %zu bytes", nbytes);
}

static void telemem_fatal(const char *what, int rc, gasnet_node_t node,
                          const void *remote, size_t nbytes)
{
    tlm_gasnet_fatal(what, "%s (node %u, remote [%p, +%zu))",
                     telemem_strerror(rc), (unsigned)node, remote, nbytes);
}

#define CHECK_TLM(what, call, node, remote, nbytes)                         \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (TLM_GASNET_UNLIKELY(rc_ != TELEMEM_OK))                         \
            telemem_fatal(what, rc_, node, remote, nbytes);                 \
    } while (0)

/* ---- memset (an active message applied by the target) -------------------- */

/* args: dest lo, dest hi, value, nbytes lo, nbytes hi, op lo, op hi; the
 * op is 0 when no acknowledgement is wanted. */
static void on_memset(telemem_am_token_t tok, void *payload, size_t bytes,
                      const uint32_t *a, unsigned nargs, void *ctx)
{
    int src = -1;
    telemem_am_source(tok, &src);
    if (nargs != 7)
        tlm_gasnet_fatal("gasnet_memset", "malformed request from node %d",
                         src);
    void *dest = (void *)(uintptr_t)((uint64_t)a[0] | (uint64_t)a[1] << 32);
    size_t n = (size_t)((uint64_t)a[3] | (uint64_t)a[4] << 32);
    uint32_t status = TELEMEM_OK;
    if (tlm_gasnet_in_segment(tlm_gasnet.mynode, dest, n))
        memset(dest, (int)a[2], n);
    else
        status = (uint32_t)TELEMEM_ERR_OUT_OF_RANGE;
    if (a[5] | a[6]) {
        uint32_t ack[3] = {a[5], a[6], status};
        int rc = telemem_am_reply(tok, TLM_GASNET_AM_MEMSET_ACK, NULL, 0, ack,
                                  3);
        if (rc != TELEMEM_OK)
            tlm_gasnet_fatal("gasnet_memset", "cannot acknowledge node %d: "
                             "%s", src, telemem_strerror(rc));
    } else if (status != TELEMEM_OK) {
        tlm_gasnet_fatal("gasnet_memset_nbi", "node %d asked for [%p, +%zu), "
                         "which is not inside this node's segment", src,
                         dest, n);
    }
}

static void on_memset_ack(telemem_am_token_t tok, void *payload,
                          size_t bytes, const uint32_t *a, unsigned nargs,
                          void *ctx)
{
    if (nargs != 3)
        tlm_gasnet_fatal("gasnet_memset", "malformed acknowledgement");
    op_t *op = (op_t *)(uintptr_t)((uint64_t)a[0] | (uint64_t)a[1] << 32);
    op->status = (int)a[2];
    __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
}

static void memset_send(const char *what, gasnet_node_t node, void *dest,
                        int val, size_t nbytes, op_t *op)
{
    uint64_t d = (uint64_t)(uintptr_t)dest, n = nbytes,
             o = (uint64_t)(uintptr_t)op;
    uint32_t a[7] = {(uint32_t)d, (uint32_t)(d >> 32), (uint32_t)val,
                     (uint32_t)n, (uint32_t)(n >> 32), (uint32_t)o,
                     (uint32_t)(o >> 32)};
    CHECK_TLM(what, telemem_am_request((int)node, TLM_GASNET_AM_MEMSET, NULL,
                                       0, a, 7),
              node, dest, nbytes);
}

int tlm_gasnet_extended_init(void)
{
    int rc = telemem_am_register(TLM_GASNET_AM_MEMSET, on_memset, NULL);
    if (rc == TELEMEM_OK)
        rc = telemem_am_register(TLM_GASNET_AM_MEMSET_ACK, on_memset_ack,
                                 NULL);
    return rc;
}

void tlm_gasnet_extended_fini(void)
{
    pthread_mutex_lock(&chunks_lock);
    while (all_chunks) {
        chunk_t *c = all_chunks;
        all_chunks = c->next;
        for (int i = 0; i < CHUNK_OPS; i++) {
            free(c->ops[i].heap);
            free(c->ops[i].kids);
        }
        free(c);
    }
    pthread_mutex_unlock(&chunks_lock);
    X.free_ops = NULL;
    X.region = NULL;
}

/* ---- completion ---------------------------------------------------------- */

/* Poll-free test of one op; true when complete (op freed, status
 * checked). */
static bool op_test(const char *what, op_t *op)
{
    switch (op->kind) {
    case OP_TLM: {
        int done = 0;
        int rc = telemem_test(&op->th, &done);
        if (!done && rc == TELEMEM_OK)
            return false;
        if (rc != TELEMEM_OK)
            tlm_gasnet_fatal(what, "operation to node %d failed: %s",
                             op->node, telemem_strerror(rc));
        break;
    }
    case OP_MEMSET:
        if (!__atomic_load_n(&op->done, __ATOMIC_ACQUIRE)) {
            int n = telemem_poll();
            if (n < 0)
                tlm_gasnet_fatal(what, "telemem_poll failed: %s",
                                 telemem_strerror(n));
            if (!__atomic_load_n(&op->done, __ATOMIC_ACQUIRE))
                return false;
        }
        if (op->status != TELEMEM_OK)
            tlm_gasnet_fatal(what, "node %d refused a memset: %s", op->node,
                             telemem_strerror(op->status));
        break;
    case OP_REGION: {
        size_t k = 0;
        for (size_t i = 0; i < op->nkids; i++)
            if (!op_test(what, op->kids[i]))
                op->kids[k++] = op->kids[i];
        op->nkids = k;
        if (k)
            return false;
        break;
    }
    default:
        tlm_gasnet_fatal(what, "handle %p is not a live operation (already "
                         "synchronised?)", (void *)op);
    }
    op_free(op);
    return true;
}

static void op_wait(const char *what, op_t *op)
{
    switch (op->kind) {
    case OP_TLM: {
        int rc = telemem_wait(&op->th);
        if (rc != TELEMEM_OK)
            tlm_gasnet_fatal(what, "operation to node %d failed: %s",
                             op->node, telemem_strerror(rc));
        op_free(op);
        break;
    }
    case OP_REGION:
        for (size_t i = 0; i < op->nkids; i++)
            op_wait(what, op->kids[i]);
        op->nkids = 0;
        op_free(op);
        break;
    default: {
        unsigned idle = 0;
        while (!op_test(what, op))
            tlm_gasnet_wait_step(what, &idle);
    }
    }
}

static inline op_t *live(const char *what, gasnet_handle_t h)
{
    op_t *op = (op_t *)h;
    if (TLM_GASNET_UNLIKELY(op->kind == OP_FREE || op->kind == OP_VALGET))
        tlm_gasnet_fatal(what, "handle %p is not a live operation (already "
                         "synchronised?)", (void *)op);
    return op;
}

static void check_sync(const char *what)
{
    if (TLM_GASNET_UNLIKELY(!tlm_gasnet.attached))
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    tlm_gasnet_check_context(what);
}

void gasnet_wait_syncnb(gasnet_handle_t handle)
{
    if (handle == GASNET_INVALID_HANDLE)
        return;
    check_sync("gasnet_wait_syncnb");
    op_wait("gasnet_wait_syncnb", live("gasnet_wait_syncnb", handle));
    tlm_gasnet_check_exit();
}

int gasnet_try_syncnb(gasnet_handle_t handle)
{
    if (handle == GASNET_INVALID_HANDLE)
        return GASNET_OK;
    check_sync("gasnet_try_syncnb");
    bool done = op_test("gasnet_try_syncnb", live("gasnet_try_syncnb", handle));
    tlm_gasnet_check_exit();
    return done ? GASNET_OK : GASNET_ERR_NOT_READY;
}

static void check_list(const char *what, gasnet_handle_t *handles, size_t n)
{
    check_sync(what);
    if (!handles && n)
        tlm_gasnet_fatal(what, "handles is NULL with %zu entries", n);
}

void gasnet_wait_syncnb_all(gasnet_handle_t *handles, size_t numhandles)
{
    static const char what[] = "gasnet_wait_syncnb_all";
    check_list(what, handles, numhandles);
    for (size_t i = 0; i < numhandles; i++) {
        if (handles[i] != GASNET_INVALID_HANDLE) {
            op_wait(what, live(what, handles[i]));
            handles[i] = GASNET_INVALID_HANDLE;
        }
    }
    tlm_gasnet_check_exit();
}

int gasnet_try_syncnb_all(gasnet_handle_t *handles, size_t numhandles)
{
    static const char what[] = "gasnet_try_syncnb_all";
    check_list(what, handles, numhandles);
    int rc = GASNET_OK;
    for (size_t i = 0; i < numhandles; i++) {
        if (handles[i] == GASNET_INVALID_HANDLE)
            continue;
        if (op_test(what, live(what, handles[i])))
            handles[i] = GASNET_INVALID_HANDLE;
        else
            rc = GASNET_ERR_NOT_READY;
    }
    tlm_gasnet_check_exit();
    return rc;
}

/* 1: some valid handle completed, 0: none yet, -1: no valid handle. */
static int test_some(const char *what, gasnet_handle_t *handles, size_t n)
{
    int valid = 0, any = 0;
    for (size_t i = 0; i < n; i++) {
        if (handles[i] == GASNET_INVALID_HANDLE)
            continue;
        valid = 1;
        if (op_test(what, live(what, handles[i]))) {
            handles[i] = GASNET_INVALID_HANDLE;
            any = 1;
        }
    }
    return valid ? any : -1;
}

void gasnet_wait_syncnb_some(gasnet_handle_t *handles, size_t numhandles)
{
    static const char what[] = "gasnet_wait_syncnb_some";
    check_list(what, handles, numhandles);
    unsigned idle = 0;
    while (test_some(what, handles, numhandles) == 0)
        tlm_gasnet_wait_step(what, &idle);
    tlm_gasnet_check_exit();
}

int gasnet_try_syncnb_some(gasnet_handle_t *handles, size_t numhandles)
{
    static const char what[] = "gasnet_try_syncnb_some";
    check_list(what, handles, numhandles);
    int r = test_some(what, handles, numhandles);
    tlm_gasnet_check_exit();
    return r == 0 ? GASNET_ERR_NOT_READY : GASNET_OK;
}

/* ---- segments mapped here ------------------------------------------------ */

/* A transfer with the node's segment mapped here is done on the spot
 * (complete at return, whatever the form; gasnet_extended_help_extra.h
 * does the same inline in the client).  false: not mapped, Telemem's
 * operations carry it. */
static inline bool put_local(gasnet_node_t node, void *dest, const void *src,
                             size_t nbytes)
{
    char *l = NULL;
    const gasnetc_segmap_t *m = gasnetc_local_at(node, dest, nbytes, &l);
    if (!m)
        return false;
    gasnetc_store(l, src, nbytes, (int)m->other);
    return true;
}

static inline bool get_local(void *dest, gasnet_node_t node, const void *src,
                             size_t nbytes)
{
    char *l = NULL;
    const gasnetc_segmap_t *m = gasnetc_local_at(node, src, nbytes, &l);
    if (!m)
        return false;
    gasnetc_load(dest, l, nbytes, (int)m->other);
    return true;
}

static bool memset_local(gasnet_node_t node, void *dest, int val,
                         size_t nbytes)
{
    char *l = gasnetc_local(node, dest, nbytes);
    if (!l)
        return false;
    memset(l, val, nbytes);
    return true;
}

/* ---- blocking transfers -------------------------------------------------- */

/* Complete at the target on return: a put with an acknowledgement. */
static void put_blocking(const char *what, gasnet_node_t node, void *dest,
                         const void *src, size_t nbytes)
{
    if (!check_rma(what, node, dest, src, nbytes))
        return;
    if (!put_local(node, dest, src, nbytes)) {
        telemem_handle_t h;
        CHECK_TLM(what, telemem_put_nb((int)node, dest, src, nbytes, &h),
                  node, dest, nbytes);
        CHECK_TLM(what, telemem_wait(&h), node, dest, nbytes);
    }
    tlm_gasnet_check_exit();
}

static void get_blocking(const char *what, void *dest, gasnet_node_t node,
                         void *src, size_t nbytes)
{
    if (!check_rma(what, node, src, dest, nbytes))
        return;
    if (!get_local(dest, node, src, nbytes))
        CHECK_TLM(what, telemem_get((int)node, dest, src, nbytes), node, src,
                  nbytes);
    tlm_gasnet_check_exit();
}

void gasnet_put(gasnet_node_t node, void *dest, void *src, size_t nbytes)
{
    put_blocking("gasnet_put", node, dest, src, nbytes);
}

void gasnet_put_bulk(gasnet_node_t node, void *dest, void *src, size_t nbytes)
{
    put_blocking("gasnet_put_bulk", node, dest, src, nbytes);
}

void gasnet_get(void *dest, gasnet_node_t node, void *src, size_t nbytes)
{
    get_blocking("gasnet_get", dest, node, src, nbytes);
}

void gasnet_get_bulk(void *dest, gasnet_node_t node, void *src, size_t nbytes)
{
    get_blocking("gasnet_get_bulk", dest, node, src, nbytes);
}

/* memset's local side has no buffer: check with a dummy non-NULL one. */
#define NO_LOCAL ((const void *)&X)

void gasnet_memset(gasnet_node_t node, void *dest, int val, size_t nbytes)
{
    static const char what[] = "gasnet_memset";
    if (!check_rma(what, node, dest, NO_LOCAL, nbytes))
        return;
    if (!memset_local(node, dest, val, nbytes)) {
        op_t *op = op_alloc(what, OP_MEMSET, (int)node);
        memset_send(what, node, dest, val, nbytes, op);
        op_wait(what, op);
    }
    tlm_gasnet_check_exit();
}

/* ---- explicit-handle transfers ------------------------------------------- */

/* A non-bulk put whose source may be reused at return. */
static op_t *put_copy(const char *what, gasnet_node_t node, void *dest,
                      const void *src, size_t nbytes)
{
    op_t *op = op_alloc(what, OP_TLM, (int)node);
    if (nbytes <= COPY_MAX) {
        void *buf = op->inl;
        if (nbytes > INLINE_BYTES) {
            buf = op->heap = malloc(nbytes);
            if (!buf)
                tlm_gasnet_fatal(what, "out of memory for a %zu-byte copy",
                                 nbytes);
        }
        memcpy(buf, src, nbytes);
        CHECK_TLM(what, telemem_put_nb((int)node, dest, buf, nbytes, &op->th),
                  node, dest, nbytes);
    } else {
        CHECK_TLM(what, telemem_put((int)node, dest, src, nbytes), node, dest,
                  nbytes);
        CHECK_TLM(what, telemem_get_nb((int)node, op->inl,
                                       (char *)dest + nbytes - 1, 1, &op->th),
                  node, dest, nbytes);
    }
    return op;
}

static op_t *put_nb(const char *what, gasnet_node_t node, void *dest,
                    const void *src, size_t nbytes)
{
    if (!check_rma(what, node, dest, src, nbytes) ||
        put_local(node, dest, src, nbytes))
        return GASNET_INVALID_HANDLE;
    if (node == (gasnet_node_t)tlm_gasnet.mynode) {
        CHECK_TLM(what, telemem_put((int)node, dest, src, nbytes), node, dest,
                  nbytes);
        return GASNET_INVALID_HANDLE;
    }
    return put_copy(what, node, dest, src, nbytes);
}

gasnet_handle_t gasnet_put_nb(gasnet_node_t node, void *dest, void *src,
                              size_t nbytes)
{
    return put_nb("gasnet_put_nb", node, dest, src, nbytes);
}

gasnet_handle_t gasnet_put_nb_bulk(gasnet_node_t node, void *dest, void *src,
                                   size_t nbytes)
{
    static const char what[] = "gasnet_put_nb_bulk";
    if (!check_rma(what, node, dest, src, nbytes) ||
        put_local(node, dest, src, nbytes))
        return GASNET_INVALID_HANDLE;
    op_t *op = op_alloc(what, OP_TLM, (int)node);
    CHECK_TLM(what, telemem_put_nb((int)node, dest, src, nbytes, &op->th),
              node, dest, nbytes);
    return op;
}

static op_t *get_op(const char *what, void *dest, gasnet_node_t node,
                    void *src, size_t nbytes)
{
    op_t *op = op_alloc(what, OP_TLM, (int)node);
    CHECK_TLM(what, telemem_get_nb((int)node, dest, src, nbytes, &op->th),
              node, src, nbytes);
    return op;
}

gasnet_handle_t gasnet_get_nb(void *dest, gasnet_node_t node, void *src,
                              size_t nbytes)
{
    if (!check_rma("gasnet_get_nb", node, src, dest, nbytes) ||
        get_local(dest, node, src, nbytes))
        return GASNET_INVALID_HANDLE;
    return get_op("gasnet_get_nb", dest, node, src, nbytes);
}

gasnet_handle_t gasnet_get_nb_bulk(void *dest, gasnet_node_t node, void *src,
                                   size_t nbytes)
{
    if (!check_rma("gasnet_get_nb_bulk", node, src, dest, nbytes) ||
        get_local(dest, node, src, nbytes))
        return GASNET_INVALID_HANDLE;
    return get_op("gasnet_get_nb_bulk", dest, node, src, nbytes);
}

gasnet_handle_t gasnet_memset_nb(gasnet_node_t node, void *dest, int val,
                                 size_t nbytes)
{
    static const char what[] = "gasnet_memset_nb";
    if (!check_rma(what, node, dest, NO_LOCAL, nbytes) ||
        memset_local(node, dest, val, nbytes))
        return GASNET_INVALID_HANDLE;
    op_t *op = op_alloc(what, OP_MEMSET, (int)node);
    memset_send(what, node, dest, val, nbytes, op);
    return op;
}

/* ---- implicit-handle transfers ------------------------------------------- */

static void check_nbi_sync(const char *what)
{
    check_sync(what);
    if (X.region)
        tlm_gasnet_fatal(what, "implicit synchronisation inside an access "
                         "region");
}

static void put_nbi(const char *what, gasnet_node_t node, void *dest,
                    const void *src, size_t nbytes)
{
    if (!check_rma(what, node, dest, src, nbytes) ||
        put_local(node, dest, src, nbytes))
        return;
    if (X.region) {
        if (node == (gasnet_node_t)tlm_gasnet.mynode)
            CHECK_TLM(what, telemem_put((int)node, dest, src, nbytes), node,
                      dest, nbytes);
        else
            region_add(what, put_copy(what, node, dest, src, nbytes));
        return;
    }
    /* Returns when src may be reused; complete by the next quiet. */
    CHECK_TLM(what, telemem_put((int)node, dest, src, nbytes), node, dest,
              nbytes);
    X.nbi_outstanding = 1;
}

void gasnet_put_nbi(gasnet_node_t node, void *dest, void *src, size_t nbytes)
{
    put_nbi("gasnet_put_nbi", node, dest, src, nbytes);
}

void gasnet_put_nbi_bulk(gasnet_node_t node, void *dest, void *src,
                         size_t nbytes)
{
    static const char what[] = "gasnet_put_nbi_bulk";
    if (!check_rma(what, node, dest, src, nbytes) ||
        put_local(node, dest, src, nbytes))
        return;
    if (X.region) {
        op_t *op = op_alloc(what, OP_TLM, (int)node);
        CHECK_TLM(what, telemem_put_nb((int)node, dest, src, nbytes, &op->th),
                  node, dest, nbytes);
        region_add(what, op);
        return;
    }
    CHECK_TLM(what, telemem_put_nbi((int)node, dest, src, nbytes), node, dest,
              nbytes);
    X.nbi_outstanding = 1;
}

static void get_nbi(const char *what, void *dest, gasnet_node_t node,
                    void *src, size_t nbytes)
{
    if (!check_rma(what, node, src, dest, nbytes) ||
        get_local(dest, node, src, nbytes))
        return;
    if (X.region) {
        region_add(what, get_op(what, dest, node, src, nbytes));
        return;
    }
    CHECK_TLM(what, telemem_get_nbi((int)node, dest, src, nbytes), node, src,
              nbytes);
    X.nbi_outstanding = 1;
}

void gasnet_get_nbi(void *dest, gasnet_node_t node, void *src, size_t nbytes)
{
    get_nbi("gasnet_get_nbi", dest, node, src, nbytes);
}

void gasnet_get_nbi_bulk(void *dest, gasnet_node_t node, void *src,
                         size_t nbytes)
{
    get_nbi("gasnet_get_nbi_bulk", dest, node, src, nbytes);
}

void gasnet_memset_nbi(gasnet_node_t node, void *dest, int val, size_t nbytes)
{
    static const char what[] = "gasnet_memset_nbi";
    if (!check_rma(what, node, dest, NO_LOCAL, nbytes) ||
        memset_local(node, dest, val, nbytes))
        return;
    if (X.region) {
        op_t *op = op_alloc(what, OP_MEMSET, (int)node);
        memset_send(what, node, dest, val, nbytes, op);
        region_add(what, op);
        return;
    }
    /* telemem_quiet() also waits for active messages to be handled. */
    memset_send(what, node, dest, val, nbytes, NULL);
    X.nbi_outstanding = 1;
}

static void sync_nbi(const char *what)
{
    check_nbi_sync(what);
    tlm_gasnet_local_flush();
    if (X.nbi_outstanding) {
        int rc = telemem_quiet();
        if (rc != TELEMEM_OK)
            tlm_gasnet_fatal(what, "an implicit-handle operation failed: %s",
                             telemem_strerror(rc));
        X.nbi_outstanding = 0;
    }
    tlm_gasnet_check_exit();
}

void gasnet_wait_syncnbi_gets(void)
{
    sync_nbi("gasnet_wait_syncnbi_gets");
}

void gasnet_wait_syncnbi_puts(void)
{
    sync_nbi("gasnet_wait_syncnbi_puts");
}

void gasnet_wait_syncnbi_all(void)
{
    sync_nbi("gasnet_wait_syncnbi_all");
}

/* Poll once: GASNET_OK when every implicit-handle operation is complete
 * (as after sync_nbi), else GASNET_ERR_NOT_READY.  Gets, puts and all share
 * it: completing more than asked is allowed, and telemem_quiet_test sends
 * its flush requests once, so a loop of tries does not flood the targets. */
static int try_nbi(const char *what)
{
    check_nbi_sync(what);
    tlm_gasnet_local_flush();
    int ready = 1;
    if (X.nbi_outstanding) {
        int rc = telemem_quiet_test(&ready);
        if (rc != TELEMEM_OK)
            tlm_gasnet_fatal(what, "an implicit-handle operation failed: %s",
                             telemem_strerror(rc));
        if (ready)
            X.nbi_outstanding = 0;
    }
    tlm_gasnet_check_exit();
    return ready ? GASNET_OK : GASNET_ERR_NOT_READY;
}

int gasnet_try_syncnbi_gets(void)
{
    return try_nbi("gasnet_try_syncnbi_gets");
}

int gasnet_try_syncnbi_puts(void)
{
    return try_nbi("gasnet_try_syncnbi_puts");
}

int gasnet_try_syncnbi_all(void)
{
    return try_nbi("gasnet_try_syncnbi_all");
}

void gasnet_begin_nbi_accessregion(void)
{
    static const char what[] = "gasnet_begin_nbi_accessregion";
    check_sync(what);
    if (X.region)
        tlm_gasnet_fatal(what, "access regions do not nest");
    X.region = op_alloc(what, OP_REGION, -1);
}

gasnet_handle_t gasnet_end_nbi_accessregion(void)
{
    static const char what[] = "gasnet_end_nbi_accessregion";
    check_sync(what);
    if (!X.region)
        tlm_gasnet_fatal(what, "no access region is open");
    op_t *r = X.region;
    X.region = NULL;
    tlm_gasnet_local_flush(); /* its puts into segments mapped here */
    if (r->nkids == 0) {
        op_free(r);
        return GASNET_INVALID_HANDLE;
    }
    return r;
}

/* ---- register-value forms ------------------------------------------------ */

/* Where the nbytes low-order bytes of a 64-bit value sit in memory. */
static inline size_t val_offset(size_t nbytes)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return sizeof(uint64_t) - nbytes;
#else
    (void)nbytes;
    return 0;
#endif
}

static void check_val(const char *what, size_t nbytes)
{
    if (TLM_GASNET_UNLIKELY(nbytes == 0 ||
                            nbytes > SIZEOF_GASNET_REGISTER_VALUE_T))
        tlm_gasnet_fatal(what, "nbytes %zu is not in 1..%d", nbytes,
                         SIZEOF_GASNET_REGISTER_VALUE_T);
}

void gasnet_put_val(gasnet_node_t node, void *dest,
                    gasnet_register_value_t value, size_t nbytes)
{
    static const char what[] = "gasnet_put_val";
    check_val(what, nbytes);
    uint64_t v = value;
    put_blocking(what, node, dest, (char *)&v + val_offset(nbytes), nbytes);
}

gasnet_handle_t gasnet_put_nb_val(gasnet_node_t node, void *dest,
                                  gasnet_register_value_t value,
                                  size_t nbytes)
{
    static const char what[] = "gasnet_put_nb_val";
    check_val(what, nbytes);
    uint64_t v = value;
    return put_nb(what, node, dest, (char *)&v + val_offset(nbytes), nbytes);
}

void gasnet_put_nbi_val(gasnet_node_t node, void *dest,
                        gasnet_register_value_t value, size_t nbytes)
{
    static const char what[] = "gasnet_put_nbi_val";
    check_val(what, nbytes);
    uint64_t v = value;
    put_nbi(what, node, dest, (char *)&v + val_offset(nbytes), nbytes);
}

gasnet_register_value_t gasnet_get_val(gasnet_node_t node, void *src,
                                       size_t nbytes)
{
    static const char what[] = "gasnet_get_val";
    check_val(what, nbytes);
    uint64_t v = 0;
    get_blocking(what, (char *)&v + val_offset(nbytes), node, src, nbytes);
    return (gasnet_register_value_t)v;
}

gasnet_valget_handle_t gasnet_get_nb_val(gasnet_node_t node, void *src,
                                         size_t nbytes)
{
    static const char what[] = "gasnet_get_nb_val";
    check_val(what, nbytes);
    (void)check_rma(what, node, src, NO_LOCAL, nbytes); /* nbytes >= 1 */
    op_t *op = op_alloc(what, OP_VALGET, (int)node);
    op->inl[0] = 0;
    op->val_off = (uint8_t)val_offset(nbytes);
    op->val_len = (uint8_t)nbytes;
    op->th = TELEMEM_HANDLE_NULL;
    if (!get_local((char *)op->inl + op->val_off, node, src, nbytes))
        CHECK_TLM(what,
                  telemem_get_nb((int)node, (char *)op->inl + op->val_off,
                                 src, nbytes, &op->th),
                  node, src, nbytes);
    return (gasnet_valget_handle_t)op;
}

gasnet_register_value_t gasnet_wait_syncnb_valget(gasnet_valget_handle_t h)
{
    static const char what[] = "gasnet_wait_syncnb_valget";
    check_sync(what);
    op_t *op = (op_t *)h;
    if (!op || op->kind != OP_VALGET)
        tlm_gasnet_fatal(what, "handle %p is not a live value get",
                         (void *)op);
    int rc = telemem_wait(&op->th);
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal(what, "get from node %d failed: %s", op->node,
                         telemem_strerror(rc));
    uint64_t v = op->inl[0];
    op_free(op);
    tlm_gasnet_check_exit();
    return (gasnet_register_value_t)v;
}

/* ---- for the VIS and collective files ------------------------------------ */

void tlm_gasnet_check_rma_call(const char *what, gasnet_node_t node)
{
    if (!tlm_gasnet.attached)
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    tlm_gasnet_check_context(what);
    if (node >= (gasnet_node_t)tlm_gasnet.nodes)
        tlm_gasnet_fatal(what, "node %u out of range [0, %d)",
                         (unsigned)node, tlm_gasnet.nodes);
}

void tlm_gasnet_check_remote(const char *what, gasnet_node_t node,
                             const void *remote, size_t nbytes)
{
    if (!tlm_gasnet_in_segment((int)node, remote, nbytes))
        tlm_gasnet_fatal(what, "[%p, +%zu) is not inside the segment of node "
                         "%u ([%p, +%ju))", remote, nbytes, (unsigned)node,
                         tlm_gasnet.seg[node].addr,
                         (uintmax_t)tlm_gasnet.seg[node].size);
}

void tlm_gasnet_check_tlm(const char *what, int rc, gasnet_node_t node,
                          const void *remote, size_t nbytes)
{
    if (TLM_GASNET_UNLIKELY(rc != TELEMEM_OK))
        telemem_fatal(what, rc, node, remote, nbytes);
}

gasnet_handle_t tlm_gasnet_wrap(const char *what, int node,
                                telemem_handle_t th)
{
    op_t *op = op_alloc(what, OP_TLM, node);
    op->th = th;
    return op;
}

bool tlm_gasnet_in_region(void)
{
    return X.region != NULL;
}

void tlm_gasnet_region_add(const char *what, gasnet_handle_t h)
{
    region_add(what, (op_t *)h);
}

void tlm_gasnet_nbi_started(void)
{
    X.nbi_outstanding = 1;
}

/* caf_byref.c - caf_get_by_ref, caf_send_by_ref, caf_sendget_by_ref and
 * caf_is_present: the caller's side.  The chain goes to the image that
 * owns the memory as one active message (with the data, for a send); its
 * handler walks the chain through its own objects (caf_ref.c) and
 * answers with the elements or a status, so allocatable components
 * allocated by that image alone are reached too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"
#include "caf_ref.h"

/* A request in flight, named in the messages by its address. */
typedef struct {
    volatile int done;
    int status;
    char *data;
    size_t bytes;
} pending_t;

/* Request header words: op, token id, count, elem. */
#define HDR_WORDS 4

static void reply_handler(telemem_am_token_t tok, void *payload, size_t bytes,
                          const uint32_t *args, unsigned nargs, void *ctx)
{
    pending_t *p;

    (void)tok;
    (void)ctx;
    if (nargs < 3)
        return;
    p = (pending_t *)(uintptr_t)(((uint64_t)args[1] << 32) | args[0]);
    p->status = (int)args[2];
    p->data = malloc(bytes + 1);
    if (p->data) {
        if (bytes > 0)
            memcpy(p->data, payload, bytes);
        p->data[bytes] = 0;
        p->bytes = bytes;
    } else {
        p->status = TLM_CAF_REF_ERR;
    }
    __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
}

/* Answer of a GET: [rank, ext[rank], count, elem] then the elements. */
static void request_handler(telemem_am_token_t tok, void *payload,
                            size_t bytes, const uint32_t *args,
                            unsigned nargs, void *ctx)
{
    const int64_t *h = payload;
    uint32_t rargs[3];
    tlm_caf_rshape_t sh;
    char err[192] = "", *out = NULL, *msg;
    size_t nw, hdr;
    int st, i;

    (void)ctx;
    (void)bytes;
    if (nargs < 2)
        return;
    rargs[0] = args[0];
    rargs[1] = args[1];
    memset(&sh, 0, sizeof sh);
    /* the data of a send follows the chain */
    nw = tlm_caf_ref_words(h + HDR_WORDS);
    st = tlm_caf_ref_apply(tlm_caf_token_by_id((int)h[1]), (int)h[0],
                           h + HDR_WORDS,
                           (const char *)(h + HDR_WORDS + nw), (size_t)h[2],
                           &sh, &out, err, sizeof err);
    rargs[2] = (uint32_t)st;
    if (st == TLM_CAF_REF_ERR || (int)h[0] != TLM_CAF_REF_OP_GET) {
        telemem_am_reply(tok, tlm_caf.am_ref_reply, err, strlen(err), rargs,
                         3);
        return;
    }
    hdr = (size_t)(sh.rank + 3) * sizeof(int64_t);
    msg = malloc(hdr + sh.count * sh.elem + 1);
    if (!msg) {
        rargs[2] = TLM_CAF_REF_ERR;
        telemem_am_reply(tok, tlm_caf.am_ref_reply, "out of memory", 13,
                         rargs, 3);
        free(out);
        return;
    }
    ((int64_t *)msg)[0] = sh.rank;
    for (i = 0; i < sh.rank; i++)
        ((int64_t *)msg)[1 + i] = (int64_t)sh.ext[i];
    ((int64_t *)msg)[1 + sh.rank] = (int64_t)sh.count;
    ((int64_t *)msg)[2 + sh.rank] = (int64_t)sh.elem;
    memcpy(msg + hdr, out, sh.count * sh.elem);
    telemem_am_reply(tok, tlm_caf.am_ref_reply, msg,
                     hdr + sh.count * sh.elem, rargs, 3);
    free(msg);
    free(out);
}

void tlm_caf_ref_init(void)
{
    if (telemem_am_register_any(request_handler, NULL,
                                &tlm_caf.am_ref) != TELEMEM_OK ||
        telemem_am_register_any(reply_handler, NULL,
                                &tlm_caf.am_ref_reply) != TELEMEM_OK)
        tlm_caf_die(1, "caf_init: cannot register active-message handlers");
}

/* Decode a GET answer into sh and the element pointer. */
static const char *decode_get(const char *m, tlm_caf_rshape_t *sh)
{
    const int64_t *h = (const int64_t *)m;
    int i;

    sh->rank = (int)h[0];
    for (i = 0; i < sh->rank && i < TLM_CAF_MAX_DIM; i++)
        sh->ext[i] = (size_t)h[1 + i];
    sh->count = (size_t)h[1 + sh->rank];
    sh->elem = (size_t)h[2 + sh->rank];
    return m + (size_t)(sh->rank + 3) * sizeof(int64_t);
}

/* direct_ref's answer when the chain needs the owning image. */
#define NEEDS_OWNER 1

/* The shortcut of tlm_caf_ref_local: the elements' addresses on rank,
 * moved with one Telemem get or put when they follow each other, a
 * vector transfer otherwise.  Returns NEEDS_OWNER when the chain needs
 * the owner, else a Telemem status (*out as do_ref's for a GET). */
static int direct_ref(tlm_caf_token_t *t, int rank, int op,
                      const int64_t *refs, const char *data, size_t count,
                      char **out)
{
    tlm_caf_rshape_t sh;
    char **a = NULL, *buf = NULL, *elems;
    const char **loc = NULL;
    size_t i, hdr;
    bool contig = true;
    int rc;

    if ((op != TLM_CAF_REF_OP_GET && op != TLM_CAF_REF_OP_SEND) ||
        tlm_caf_ref_local(t, refs, &a, &sh) != 0)
        return NEEDS_OWNER;
    if (op == TLM_CAF_REF_OP_SEND && count != 1 && count < sh.count) {
        free(a);
        return NEEDS_OWNER; /* the owner reports the size mismatch */
    }
    for (i = 0; i < sh.count; i++) {
        if (a[i] < (char *)t->mem ||
            a[i] + sh.elem > (char *)t->mem + t->size) {
            free(a);
            return NEEDS_OWNER;
        }
        if (i > 0 && a[i] != a[i - 1] + sh.elem)
            contig = false;
        a[i] = tlm_caf_remote(t, rank, a[i]);
    }
    hdr = (size_t)(sh.rank + 3) * sizeof(int64_t);
    if (op == TLM_CAF_REF_OP_GET) {
        buf = malloc(hdr + sh.count * sh.elem + 1);
        if (!buf) {
            free(a);
            return TELEMEM_ERR_NO_MEMORY;
        }
        ((int64_t *)buf)[0] = sh.rank;
        for (i = 0; i < (size_t)sh.rank; i++)
            ((int64_t *)buf)[1 + i] = (int64_t)sh.ext[i];
        ((int64_t *)buf)[1 + sh.rank] = (int64_t)sh.count;
        ((int64_t *)buf)[2 + sh.rank] = (int64_t)sh.elem;
    }
    elems = buf + hdr;
    if (sh.count == 0) {
        rc = TELEMEM_OK;
    } else if (contig && (op == TLM_CAF_REF_OP_GET || count != 1 ||
                          sh.count == 1)) {
        rc = op == TLM_CAF_REF_OP_GET
                 ? telemem_get(rank, elems, a[0], sh.count * sh.elem)
                 : telemem_put(rank, a[0], data, sh.count * sh.elem);
    } else {
        loc = malloc(sh.count * sizeof *loc);
        if (!loc) {
            free(a);
            free(buf);
            return TELEMEM_ERR_NO_MEMORY;
        }
        for (i = 0; i < sh.count; i++)
            loc[i] = op == TLM_CAF_REF_OP_GET
                         ? elems + i * sh.elem
                         : data + (count == 1 ? 0 : i * sh.elem);
        rc = op == TLM_CAF_REF_OP_GET
                 ? telemem_get_vector(rank, (void *const *)loc,
                                      (const void *const *)a, sh.count,
                                      sh.elem)
                 : telemem_put_vector(rank, (void *const *)a,
                                      (const void *const *)loc, sh.count,
                                      sh.elem);
    }
    free(loc);
    free(a);
    if (rc == TELEMEM_OK && op == TLM_CAF_REF_OP_GET)
        *out = buf;
    else
        free(buf);
    return rc;
}

/* Carry out op on image's copy: *out (GET) is a new buffer holding the
 * answer's header and elements.  Returns TLM_CAF_REF_* or reports and
 * returns -1. */
static int do_ref(tlm_caf_token_t *t, int image, int op,
                  const tlm_caf_ref_t *refs, const char *data, size_t count,
                  size_t elem, char **out, int *stat, const char *what)
{
    int rank = image == 0 ? tlm_caf.me : tlm_caf_rank_of(image), rc, i;
    size_t words = tlm_caf_ref_encode(refs, NULL), bytes;
    char err[192] = "";
    int64_t *msg;
    pending_t p;
    uint32_t args[2];
    telemem_wait_t w;

    if (rank < 0) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s: image index %d out of range [1, %d]", what, image,
                       tlm_caf.team->size);
        return -1;
    }
    if (tlm_caf_state(rank) == TLM_CAF_FAILED) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_FAILED_IMAGE,
                       "%s image %d: the image has failed", what, rank + 1);
        return -1;
    }
    bytes = (HDR_WORDS + words) * sizeof(int64_t) + count * elem;
    msg = malloc(bytes + 8);
    if (!msg) {
        tlm_caf_check(TELEMEM_ERR_NO_MEMORY, stat, NULL, 0, what, image);
        return -1;
    }
    msg[0] = op;
    msg[1] = t ? t->id : -1;
    msg[2] = (int64_t)count;
    msg[3] = (int64_t)elem;
    tlm_caf_ref_encode(refs, msg + HDR_WORDS);
    if (count * elem > 0)
        memcpy(msg + HDR_WORDS + words, data, count * elem);
    if (rank != tlm_caf.me) {
        rc = direct_ref(t, rank, op, msg + HDR_WORDS,
                        (const char *)(msg + HDR_WORDS + words), count, out);
        if (rc != NEEDS_OWNER) {
            free(msg);
            return tlm_caf_check(rc, stat, NULL, 0, what, image)
                       ? -1
                       : TLM_CAF_REF_OK;
        }
    }
    if (rank == tlm_caf.me) {
        tlm_caf_rshape_t sh;
        char *o = NULL;
        memset(&sh, 0, sizeof sh);
        rc = tlm_caf_ref_apply(t, op, msg + HDR_WORDS,
                               (const char *)(msg + HDR_WORDS + words), count,
                               &sh, &o, err, sizeof err);
        free(msg);
        if (rc == TLM_CAF_REF_OK && op == TLM_CAF_REF_OP_GET) {
            size_t hdr = (size_t)(sh.rank + 3) * sizeof(int64_t);
            *out = malloc(hdr + sh.count * sh.elem + 1);
            if (*out) {
                ((int64_t *)*out)[0] = sh.rank;
                for (i = 0; i < sh.rank; i++)
                    ((int64_t *)*out)[1 + i] = (int64_t)sh.ext[i];
                ((int64_t *)*out)[1 + sh.rank] = (int64_t)sh.count;
                ((int64_t *)*out)[2 + sh.rank] = (int64_t)sh.elem;
                memcpy(*out + hdr, o, sh.count * sh.elem);
            }
            free(o);
        }
        if (rc == TLM_CAF_REF_ERR)
            tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                           "%s image %d: %s", what, image, err);
        return rc == TLM_CAF_REF_ERR ? -1 : rc;
    }
    memset(&p, 0, sizeof p);
    args[0] = (uint32_t)(uintptr_t)&p;
    args[1] = (uint32_t)((uint64_t)(uintptr_t)&p >> 32);
    rc = telemem_am_request(rank, tlm_caf.am_ref, msg, bytes, args, 2);
    free(msg);
    w = (telemem_wait_t)TELEMEM_WAIT_INIT(rank);
    while (rc == TELEMEM_OK && !__atomic_load_n(&p.done, __ATOMIC_ACQUIRE))
        rc = telemem_wait_poll(&w);
    if (tlm_caf_check(rc, stat, NULL, 0, what, image)) {
        free(p.data);
        return -1;
    }
    if (p.status == TLM_CAF_REF_ERR) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s image %d: %s", what, image,
                       p.data ? p.data : "failed");
        free(p.data);
        return -1;
    }
    if (op == TLM_CAF_REF_OP_GET)
        *out = p.data;
    else
        free(p.data);
    return p.status;
}

/* Allocate dst (reallocatable) for sh when it is not allocated or its
 * shape differs. */
static void realloc_dst(tlm_gfc_desc_t *dst, const tlm_caf_rshape_t *sh)
{
    tlm_caf_shape_t ds;
    ptrdiff_t stride = 1, off = 0;
    int i;

    tlm_caf_shape_of(dst, &ds);
    if (dst->base_addr && ds.count == sh->count)
        return;
    free(dst->base_addr);
    dst->base_addr = malloc(sh->count * dst->dtype.elem_len + 1);
    for (i = 0; i < TLM_GFC_RANK(dst); i++) {
        size_t e = i < sh->rank ? sh->ext[i] : 1;
        dst->dim[i].lbound = 1;
        dst->dim[i].ubound = (ptrdiff_t)e;
        dst->dim[i].stride = stride;
        off -= stride;
        stride *= (ptrdiff_t)e;
    }
    dst->offset = (size_t)off;
}

void _gfortran_caf_get_by_ref(tlm_caf_token_p token, int image,
                              tlm_gfc_desc_t *dst, tlm_caf_ref_t *refs,
                              int dst_kind, int src_kind,
                              bool may_require_tmp, bool dst_reallocatable,
                              int *stat, int src_type)
{
    tlm_caf_rshape_t sh;
    tlm_caf_shape_t ds;
    char *ans = NULL, *conv;
    const char *elems;

    (void)may_require_tmp;
    tlm_caf_ok(stat);
    if (do_ref(token, image, TLM_CAF_REF_OP_GET, refs, NULL, 0, 0, &ans,
               stat, "get from") < 0 || !ans)
        return;
    elems = decode_get(ans, &sh);
    if (dst_reallocatable)
        realloc_dst(dst, &sh);
    tlm_caf_shape_of(dst, &ds);
    if (ds.count != sh.count && sh.count != 1) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "get from image %d: %zu elements into %zu", image,
                       sh.count, ds.count);
        free(ans);
        return;
    }
    conv = malloc(ds.count * ds.elem + 1);
    if (!conv || tlm_caf_convert_n(conv, TLM_GFC_TYPE(dst), dst_kind, ds.elem,
                                   elems, src_type, src_kind, sh.elem,
                                   ds.count, sh.count) != 0)
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "get from image %d: cannot convert type %d kind %d "
                       "to type %d kind %d", image, src_type, src_kind,
                       TLM_GFC_TYPE(dst), dst_kind);
    else
        tlm_caf_unpack(dst->base_addr, &ds, conv);
    free(conv);
    free(ans);
}

static size_t last_item(const tlm_caf_ref_t *r)
{
    while (r->next)
        r = r->next;
    return r->item_size;
}

/* Send count elements (type, kind, elem) to the chain, converted to the
 * destination's (dst_type, dst_kind, last item size). */
static void send_elems(tlm_caf_token_p token, int image, tlm_caf_ref_t *refs,
                       const char *elems, size_t count, int type, int kind,
                       size_t elem, int dst_type, int dst_kind, int *stat)
{
    size_t de = last_item(refs);
    char *conv = malloc(count * de + 1);

    if (!conv || tlm_caf_convert_n(conv, dst_type, dst_kind, de, elems, type,
                                   kind, elem, count, count) != 0) {
        free(conv);
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "send to image %d: cannot convert type %d kind %d "
                       "to type %d kind %d", image, type, kind, dst_type,
                       dst_kind);
        return;
    }
    do_ref(token, image, TLM_CAF_REF_OP_SEND, refs, conv, count, de, NULL,
           stat, "send to");
    free(conv);
}

void _gfortran_caf_send_by_ref(tlm_caf_token_p token, int image,
                               tlm_gfc_desc_t *src, tlm_caf_ref_t *refs,
                               int dst_kind, int src_kind,
                               bool may_require_tmp, bool dst_reallocatable,
                               int *stat, int dst_type)
{
    tlm_caf_shape_t ss;
    char *buf;

    (void)may_require_tmp;
    (void)dst_reallocatable;
    tlm_caf_ok(stat);
    tlm_caf_shape_of(src, &ss);
    buf = malloc(ss.count * ss.elem + 1);
    if (!buf) {
        tlm_caf_check(TELEMEM_ERR_NO_MEMORY, stat, NULL, 0, "send to",
                      image);
        return;
    }
    tlm_caf_pack(buf, src->base_addr, &ss);
    send_elems(token, image, refs, buf, ss.count, TLM_GFC_TYPE(src), src_kind,
               ss.elem, dst_type, dst_kind, stat);
    free(buf);
}

void _gfortran_caf_sendget_by_ref(tlm_caf_token_p dst_token, int dst_image,
                                  tlm_caf_ref_t *dst_refs,
                                  tlm_caf_token_p src_token, int src_image,
                                  tlm_caf_ref_t *src_refs, int dst_kind,
                                  int src_kind, bool may_require_tmp,
                                  int *dst_stat, int *src_stat, int dst_type,
                                  int src_type)
{
    tlm_caf_rshape_t sh;
    char *ans = NULL;
    const char *elems;

    (void)may_require_tmp;
    tlm_caf_ok(dst_stat);
    tlm_caf_ok(src_stat);
    if (do_ref(src_token, src_image, TLM_CAF_REF_OP_GET, src_refs, NULL, 0,
               0, &ans, src_stat, "get from") < 0 || !ans)
        return;
    elems = decode_get(ans, &sh);
    send_elems(dst_token, dst_image, dst_refs, elems, sh.count, src_type,
               src_kind, sh.elem, dst_type, dst_kind, dst_stat);
    free(ans);
}

int _gfortran_caf_is_present(tlm_caf_token_p token, int image,
                             tlm_caf_ref_t *refs)
{
    int rc = do_ref(token, image, TLM_CAF_REF_OP_PRESENT, refs, NULL, 0, 0,
                    NULL, NULL, "is_present on");

    return rc == TLM_CAF_REF_OK;
}

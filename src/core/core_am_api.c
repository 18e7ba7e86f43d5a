/* core_am_api.c - the public active messages: the handler table, requests
 * and replies up to the reassembly cap (fragmented and reassembled here, or
 * written in place for the long forms), the token, the rule that handlers
 * only reply, and the per-source cap on reassembly memory that every
 * receiver of announced totals (AM, collectives, vector lists) charges. */
#include <stdlib.h>
#include <string.h>

#include "core/core_engine.h"
#include "core/core_am_api.h"
#include "core/core_region.h"

struct telemem_am_token {
    int src;
    bool is_request;
    bool replied;
};

typedef struct reasm {
    uint8_t *buf;
    uint32_t msg_id;
    bool active;
    bool dropping;     /* the current message was refused: skip its rest */
    size_t total, got;
    uint32_t args[TELEMEM_AM_MAX_ARGS];
    /* long message in progress (written in place, in order) */
    bool long_active;
    uint32_t long_id;
    uint64_t long_addr, long_total, long_next;
    /* reassembly memory held for this source (see tlm_core_reasm_reserve) */
    size_t held;
    uint32_t held_entries;
} reasm_t;

/* The token of the handler running now (handlers do not nest: they may
 * not poll), or NULL: a token is valid only during its handler. */
static struct telemem_am_token *cur_token;

typedef struct tlm_core_am {
    struct {
        telemem_am_handler_t fn;
        void *ctx;
    } h[TELEMEM_AM_MAX_HANDLERS];
    reasm_t *reasm; /* by source rank */
    uint32_t next_msg_id;
    size_t reasm_max;  /* cap on reassembly bytes per source */
} tlm_core_am_t;

/* ---- reassembly memory (finding F1 of docs/hardening.md) -----------------
 * A message header announces a total that the receiver must buffer before
 * it can hand the message over (a fragmented AM, a collective that arrived
 * early, a vector request's list).  Nothing is allocated on a header's word
 * alone: each such buffer is charged to its source first, and a source
 * may hold at most TLM_CORE_REASM_MAX bytes in TLM_CORE_REASM_MAX_ENTRIES
 * buffers at a time.  Beyond that the message is refused as a protocol
 * error (logged with the numbers) and nothing is kept. */

size_t tlm_core_reasm_max(void)
{
    return tlm_core.am ? tlm_core.am->reasm_max : TLM_CORE_REASM_MAX;
}

void tlm_core_reasm_set_max(size_t bytes)
{
    if (tlm_core.am)
        tlm_core.am->reasm_max = bytes;
}

int tlm_core_reasm_reserve(int src, uint64_t bytes, const char *what)
{
    tlm_core_am_t *am = tlm_core.am;
    if (!am || src < 0 || src >= tlm_core.nranks)
        return TELEMEM_ERR_PROTOCOL;
    reasm_t *r = &am->reasm[src];
    if (bytes > am->reasm_max || r->held > am->reasm_max - bytes ||
        r->held_entries >= TLM_CORE_REASM_MAX_ENTRIES) {
        tlm_am.protocol_errors++;
        tlm_error("refused a %s of %llu bytes from rank %d: it would hold "
                  "%zu + %llu bytes in %u + 1 buffers for that rank, more "
                  "than the reassembly cap (%zu bytes, %u buffers per "
                  "source)", what, (unsigned long long)bytes, src, r->held,
                  (unsigned long long)bytes, r->held_entries, am->reasm_max,
                  TLM_CORE_REASM_MAX_ENTRIES);
        return TELEMEM_ERR_PROTOCOL;
    }
    r->held += (size_t)bytes;
    r->held_entries++;
    return TELEMEM_OK;
}

void tlm_core_reasm_release(int src, size_t bytes)
{
    tlm_core_am_t *am = tlm_core.am;
    if (!am || src < 0 || src >= tlm_core.nranks)
        return; /* after tlm_core_am_fini: nothing to account */
    reasm_t *r = &am->reasm[src];
    r->held -= TLM_MIN(bytes, r->held);
    if (r->held_entries)
        r->held_entries--;
}

size_t tlm_core_reasm_held(int src)
{
    if (!tlm_core.am || src < 0 || src >= tlm_core.nranks)
        return 0;
    return tlm_core.am->reasm[src].held;
}

static size_t user_hdr_len(unsigned nargs)
{
    return sizeof(tlm_am_frag_hdr_t) + TLM_ALIGN_UP(nargs * 4u, 8u);
}

static void run_handler(int src, const tlm_am_frag_hdr_t *h, void *payload,
                        size_t bytes, const uint32_t *args)
{
    tlm_core_am_t *am = tlm_core.am;
    unsigned id = h->h.aux & 0xffu, nargs = h->h.aux >> 8;
    bool request = !(h->h.flags & TLM_AM_F_REPLY);
    if (!am->h[id].fn) {
        tlm_warn("active message for unregistered handler %u from rank %d "
                 "dropped", id, src);
        if (request) {
            tlm_am_nack_t n = {{TLM_AM_NACK, 0,
                                (uint16_t)(int16_t)TELEMEM_ERR_NOT_FOUND, 0},
                               id, bytes};
            tlm_am_send_ctrl(src, &n, sizeof(n), NULL, 0);
        }
        return;
    }
    struct telemem_am_token tok = {src, request, false};
    struct telemem_am_token *outer = cur_token;
    bool was = tlm_core.in_handler;
    tlm_core.in_handler = true;
    cur_token = &tok;
    am->h[id].fn(&tok, bytes ? payload : NULL, bytes, args, nargs,
                 am->h[id].ctx);
    cur_token = outer;
    tlm_core.in_handler = was;
}

/* A long message's fragment: written in place (fragments of one message
 * arrive in order), the handler runs after the last one.  data NULL: the
 * transport has written the payload in place already (place_user). */
static void on_long(int src, const tlm_am_frag_hdr_t *h, const void *data,
                    size_t plen, const uint32_t *args)
{
    reasm_t *r = &tlm_core.am->reasm[src];
    uintptr_t dst = (uintptr_t)h->addr;
    /* Fragments of one message come in order, one message at a time (F2):
     * a fragment that does not continue the current message is refused,
     * so a duplicate can neither rewrite memory nor run the handler twice,
     * and a message cannot complete with bytes it never carried. */
    if (h->offset != 0) {
        if (!r->long_active || r->long_id != h->h.id ||
            r->long_addr != h->addr || r->long_total != h->total ||
            r->long_next != h->offset) {
            if (r->long_active || !r->dropping)
                tlm_core_protocol_error(src, "long active message fragment",
                                        plen);
            r->long_active = false;
            return;
        }
    } else if (r->long_active) {
        /* a new message while one is incomplete: the old one is lost */
        tlm_core_protocol_error(src, "long active message (previous one "
                                "incomplete)", plen);
        r->long_active = false;
    }
    r->dropping = false;
    if (!tlm_core_region_contains(dst, h->total)) {
        r->dropping = true; /* its later fragments go too, quietly */
        bool request = !(h->h.flags & TLM_AM_F_REPLY);
        tlm_warn("refused a long active message %s from rank %d for "
                 "[0x%llx, +%llu): outside this rank's registered memory",
                 request ? "request" : "reply", src,
                 (unsigned long long)h->addr, (unsigned long long)h->total);
        if (request) {
            tlm_am_nack_t n = {{TLM_AM_NACK, 0,
                                (uint16_t)(int16_t)TELEMEM_ERR_OUT_OF_RANGE,
                                0}, h->addr, h->total};
            tlm_am_send_ctrl(src, &n, sizeof(n), NULL, 0);
        }
        return;
    }
    if (plen && data) {
        if (tlm_am.peers[src].live != 0)
            tlm_am_protect(src, dst + h->offset, plen);
        tlm_util_copy((void *)(dst + h->offset), data, plen);
    }
    if (h->offset + plen == h->total) {
        r->long_active = false;
        run_handler(src, h, (void *)dst, h->total, args);
    } else {
        r->long_active = true;
        r->long_id = h->h.id;
        r->long_addr = h->addr;
        r->long_total = h->total;
        r->long_next = h->offset + plen;
    }
}

/* A long message's payload may go straight to its place when the
 * transport receives it apart from the header (shm's pull): only where
 * on_long would copy it there (same checks; not while replies of live
 * memory to src are out, see place_put). */
static void *place_user(int src, const void *hdr, size_t hdr_len,
                        size_t plen)
{
    const tlm_am_frag_hdr_t *h = hdr;
    if (hdr_len < sizeof(*h) || !(h->h.flags & TLM_AM_F_LONG) ||
        (h->h.aux >> 8) > TELEMEM_AM_MAX_ARGS ||
        hdr_len != user_hdr_len(h->h.aux >> 8) || h->offset > h->total ||
        plen > h->total - h->offset || tlm_am.peers[src].live != 0 ||
        !tlm_core_region_contains((uintptr_t)h->addr, h->total))
        return NULL;
    const reasm_t *r = &tlm_core.am->reasm[src];
    if (h->offset == 0 ? r->long_active
                       : !r->long_active || r->long_id != h->h.id ||
                             r->long_addr != h->addr ||
                             r->long_total != h->total ||
                             r->long_next != h->offset)
        return NULL; /* delivered whole: on_long reports it */
    return (void *)(uintptr_t)(h->addr + h->offset);
}

static void placed_user(int src, const void *hdr, size_t hdr_len,
                        size_t plen, int status)
{
    const tlm_am_frag_hdr_t *h = hdr;
    if (status != TELEMEM_OK) {
        tlm_debug("a long active message of %zu bytes from rank %d did not "
                  "arrive: %s", plen, src, telemem_strerror(status));
        tlm_core.am->reasm[src].long_active = false;
        return;
    }
    on_long(src, h, NULL, plen, (const uint32_t *)(const void *)(h + 1));
}

static void reasm_drop(int src, reasm_t *r)
{
    if (r->buf) {
        free(r->buf);
        r->buf = NULL;
        tlm_core_reasm_release(src, r->total);
    }
    r->active = false;
}

/* The sender learns of a refused request at its next quiet / fence. */
static void nack_user(int src, const tlm_am_frag_hdr_t *h, int status)
{
    if (h->h.flags & TLM_AM_F_REPLY)
        return;
    tlm_am_nack_t n = {{TLM_AM_NACK, 0, (uint16_t)(int16_t)status, 0},
                       h->addr, h->total};
    tlm_am_send_ctrl(src, &n, sizeof(n), NULL, 0);
}

static void on_user(int src, const void *msg, size_t len)
{
    const tlm_am_frag_hdr_t *h = msg;
    if (len < sizeof(*h) || (h->h.aux >> 8) > TELEMEM_AM_MAX_ARGS)
        goto bad;
    size_t hl = user_hdr_len(h->h.aux >> 8);
    if (len < hl)
        goto bad;
    size_t plen = len - hl;
    const uint32_t *args = (const uint32_t *)(const void *)(h + 1);
    uint8_t *payload = (uint8_t *)(uintptr_t)msg + hl;
    if (h->offset > h->total || plen > h->total - h->offset)
        goto bad;
    if (h->h.flags & TLM_AM_F_LONG) {
        on_long(src, h, payload, plen, args);
        return;
    }
    reasm_t *r = &tlm_core.am->reasm[src];
    if (h->offset == 0 && plen == h->total) {
        if (r->active) {
            /* a whole message while another is incomplete (F2) */
            reasm_drop(src, r);
            goto bad;
        }
        r->dropping = false;
        run_handler(src, h, payload, plen, args);
        return;
    }
    if (h->offset == 0) {
        if (r->active) {
            reasm_drop(src, r);
            goto bad;
        }
        /* Charged before anything is allocated (F1). */
        if (tlm_core_reasm_reserve(src, h->total, "fragmented active "
                                   "message") != TELEMEM_OK) {
            r->dropping = true;
            nack_user(src, h, TELEMEM_ERR_PROTOCOL);
            return;
        }
        r->buf = malloc(h->total);
        if (!r->buf) {
            tlm_core_reasm_release(src, h->total);
            tlm_error("no memory to reassemble a %llu-byte active message "
                      "from rank %d", (unsigned long long)h->total, src);
            r->dropping = true;
            nack_user(src, h, TELEMEM_ERR_NO_MEMORY);
            return;
        }
        r->active = true;
        r->dropping = false;
        r->msg_id = h->h.id;
        r->total = h->total;
        r->got = 0;
        memcpy(r->args, args, (size_t)(h->h.aux >> 8) * 4u);
    } else if (!r->active) {
        if (r->dropping)
            return; /* the rest of a refused message: reported once */
        goto bad;
    } else if (r->msg_id != h->h.id || r->total != h->total ||
               h->offset != r->got) {
        /* Fragments come in order (F2): a gap, an overlap or a duplicate
         * ends the message; its buffer is freed. */
        reasm_drop(src, r);
        goto bad;
    }
    memcpy(r->buf + h->offset, payload, plen);
    r->got += plen;
    if (r->got == r->total) {
        uint8_t *buf = r->buf;
        r->buf = NULL;
        r->active = false;
        run_handler(src, h, buf, r->total, r->args);
        free(buf);
        tlm_core_reasm_release(src, r->total);
    }
    return;
bad:
    tlm_am.protocol_errors++;
    tlm_warn("dropped a malformed active message from rank %d (%zu bytes)",
             src, len);
}

int tlm_core_am_init(void)
{
    tlm_core.am = calloc(1, sizeof(tlm_core_am_t));
    if (!tlm_core.am)
        return TELEMEM_ERR_NO_MEMORY;
    tlm_core.am->reasm = calloc((size_t)tlm_core.nranks, sizeof(reasm_t));
    if (!tlm_core.am->reasm) {
        free(tlm_core.am);
        tlm_core.am = NULL;
        return TELEMEM_ERR_NO_MEMORY;
    }
    tlm_core.am->reasm_max = TLM_CORE_REASM_MAX;
    tlm_am_set_handler(TLM_AM_USER, on_user);
    tlm_am_set_placer(TLM_AM_USER, place_user, placed_user);
    return TELEMEM_OK;
}

void tlm_core_am_fini(void)
{
    if (!tlm_core.am)
        return;
    for (int r = 0; r < tlm_core.nranks; r++)
        free(tlm_core.am->reasm[r].buf);
    free(tlm_core.am->reasm);
    free(tlm_core.am);
    tlm_core.am = NULL;
}

int telemem_am_register(int id, telemem_am_handler_t fn, void *ctx)
{
    TLM_API_GUARD();
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (id < 0 || id >= TELEMEM_AM_MAX_HANDLERS || !fn) {
        tlm_error("am_register: %s", !fn ? "handler is NULL"
                                         : "id out of range [0, 256)");
        return TELEMEM_ERR_INVALID_ARG;
    }
    tlm_core.am->h[id].fn = fn;
    tlm_core.am->h[id].ctx = ctx;
    return TELEMEM_OK;
}

int telemem_am_register_any(telemem_am_handler_t fn, void *ctx, int *id_p)
{
    TLM_API_GUARD();
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (!fn || !id_p) {
        tlm_error("am_register_any: %s is NULL", !fn ? "handler" : "id_p");
        return TELEMEM_ERR_INVALID_ARG;
    }
    for (int id = 0; id < TELEMEM_AM_MAX_HANDLERS; id++) {
        if (!tlm_core.am->h[id].fn) {
            tlm_core.am->h[id].fn = fn;
            tlm_core.am->h[id].ctx = ctx;
            *id_p = id;
            return TELEMEM_OK;
        }
    }
    tlm_error("am_register_any: all %d handler ids are taken",
              TELEMEM_AM_MAX_HANDLERS);
    return TELEMEM_ERR_NO_MEMORY;
}

static int check_msg(const char *what, int id, const void *payload,
                     size_t bytes, const uint32_t *args, unsigned nargs)
{
    if (id < 0 || id >= TELEMEM_AM_MAX_HANDLERS) {
        tlm_error("%s: handler id %d out of range [0, %d)", what, id,
                  TELEMEM_AM_MAX_HANDLERS);
        return TELEMEM_ERR_INVALID_ARG;
    }
    if (nargs > TELEMEM_AM_MAX_ARGS || (nargs && !args) ||
        (bytes && !payload) ||
        tlm_util_range_wraps((uintptr_t)payload, bytes)) {
        tlm_error("%s: %s", what, nargs > TELEMEM_AM_MAX_ARGS
                  ? "more than 16 arguments"
                  : (nargs && !args) ? "args is NULL"
                  : !payload ? "payload is NULL"
                             : "the payload wraps around the address space");
        return TELEMEM_ERR_INVALID_ARG;
    }
    return TELEMEM_OK;
}

/* A short-form payload is reassembled at the target: above the cap it
 * would be refused there, so it is refused here (use the long form). */
static int check_reasm(const char *what, const void *remote_dst, size_t bytes)
{
    if (!remote_dst && bytes > tlm_core_reasm_max()) {
        tlm_error("%s: a %zu-byte payload is more than a target reassembles "
                  "per source (%zu bytes); send it with the _long form",
                  what, bytes, tlm_core_reasm_max());
        return TELEMEM_ERR_INVALID_ARG;
    }
    return TELEMEM_OK;
}

static size_t build_hdr(uint64_t *buf, int id, bool reply, const void *dst,
                        size_t bytes, const uint32_t *args, unsigned nargs)
{
    tlm_am_frag_hdr_t *h = (tlm_am_frag_hdr_t *)(void *)buf;
    size_t hl = user_hdr_len(nargs);
    memset(buf, 0, hl);
    h->h.type = TLM_AM_USER;
    h->h.flags = (uint8_t)((reply ? TLM_AM_F_REPLY : 0) |
                           (dst ? TLM_AM_F_LONG : 0));
    h->addr = (uintptr_t)dst;
    h->h.aux = (uint16_t)((unsigned)id | nargs << 8);
    h->h.id = ++tlm_core.am->next_msg_id;
    h->total = bytes;
    if (nargs)
        memcpy(h + 1, args, (size_t)nargs * 4u);
    return hl;
}

static int am_request(const char *what, int rank, int id, const void *payload,
                      size_t bytes, void *remote_dst, const uint32_t *args,
                      unsigned nargs)
{
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if ((rc = tlm_core_check_rank(what, rank)) != TELEMEM_OK)
        return rc;
    rc = check_msg(what, id, payload, bytes, args, nargs);
    if (rc == TELEMEM_OK)
        rc = check_reasm(what, remote_dst, bytes);
    if (rc != TELEMEM_OK)
        return rc;
    uint64_t hdr[TLM_AM_MAX_HDR / 8];
    size_t hl = build_hdr(hdr, id, false, remote_dst, bytes, args, nargs);
    TLM_RLX_SET(tlm_core.peers[rank].unflushed,
                tlm_core.peers[rank].unflushed + 1);
    return tlm_core_send_stream(rank, hdr, hl, payload, bytes);
}

static int am_reply(const char *what, telemem_am_token_t token, int id,
                    const void *payload, size_t bytes, void *remote_dst,
                    const uint32_t *args, unsigned nargs)
{
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (!token || token != cur_token || !token->is_request ||
        token->replied) {
        tlm_error("%s: %s", what, !token ? "token is NULL"
                  : token != cur_token ? "not the token of the handler "
                                         "running now"
                  : !token->is_request ? "cannot reply to a reply"
                                       : "this request was already answered");
        return TELEMEM_ERR_INVALID_ARG;
    }
    int rc = check_msg(what, id, payload, bytes, args, nargs);
    if (rc == TELEMEM_OK)
        rc = check_reasm(what, remote_dst, bytes);
    if (rc != TELEMEM_OK)
        return rc;
    uint64_t hdr[TLM_AM_MAX_HDR / 8];
    size_t hl = build_hdr(hdr, id, true, remote_dst, bytes, args, nargs);
    int src = token->src;
    if (bytes <= tlm_am_max_payload(src, hl)) {
        rc = tlm_am_send_ctrl(src, hdr, hl, payload, bytes);
    } else {
        /* Handlers never block: the payload is copied and queued. */
        rc = tlm_am_post_copy(src, hdr, hl, true, payload, bytes);
    }
    if (rc == TELEMEM_OK)
        token->replied = true;
    return rc;
}

static int check_long_dst(const char *what, const void *remote_dst,
                          size_t bytes)
{
    if (!remote_dst || tlm_util_range_wraps((uintptr_t)remote_dst, bytes)) {
        tlm_error("%s: %s", what, !remote_dst
                  ? "remote_dst is NULL"
                  : "the destination range wraps around the address space");
        return TELEMEM_ERR_INVALID_ARG;
    }
    return TELEMEM_OK;
}

int telemem_am_request(int rank, int id, const void *payload, size_t bytes,
                       const uint32_t *args, unsigned nargs)
{
    TLM_API_GUARD();
    return am_request("am_request", rank, id, payload, bytes, NULL, args,
                      nargs);
}

int telemem_am_reply(telemem_am_token_t token, int id, const void *payload,
                     size_t bytes, const uint32_t *args, unsigned nargs)
{
    TLM_API_GUARD();
    return am_reply("am_reply", token, id, payload, bytes, NULL, args, nargs);
}

int telemem_am_request_long(int rank, int id, const void *payload,
                            size_t bytes, void *remote_dst,
                            const uint32_t *args, unsigned nargs)
{
    TLM_API_GUARD();
    if (tlm_core.initialized) {
        int rc = check_long_dst("am_request_long", remote_dst, bytes);
        if (rc != TELEMEM_OK)
            return rc;
    }
    return am_request("am_request_long", rank, id, payload, bytes, remote_dst,
                      args, nargs);
}

int telemem_am_reply_long(telemem_am_token_t token, int id,
                          const void *payload, size_t bytes, void *remote_dst,
                          const uint32_t *args, unsigned nargs)
{
    TLM_API_GUARD();
    if (tlm_core.initialized) {
        int rc = check_long_dst("am_reply_long", remote_dst, bytes);
        if (rc != TELEMEM_OK)
            return rc;
    }
    return am_reply("am_reply_long", token, id, payload, bytes, remote_dst,
                    args, nargs);
}

int telemem_am_source(telemem_am_token_t token, int *rank_p)
{
    TLM_API_GUARD();
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    if (!token || !rank_p || token != cur_token) {
        /* a token is only ever looked at while its handler runs: a stale
         * or forged one is not read */
        tlm_error("am_source: %s", !token ? "token is NULL"
                  : !rank_p ? "rank_p is NULL"
                  : "not the token of the handler running now");
        return TELEMEM_ERR_INVALID_ARG;
    }
    *rank_p = token->src;
    return TELEMEM_OK;
}

/* gasnet_am.c - GASNet active messages over Telemem's: the handler table
 * (GASNet index i = Telemem AM id i), Short/Medium/Long requests and
 * replies with 0..16 arguments, dispatch to the client's handlers with the
 * right prototype, the handler rules, polling and GASNET_BLOCKUNTIL. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gasnet_internal.h"

/* A message whose payload does not travel in it goes to
 * TLM_GASNET_AM_ZERO with this header as its payload:
 * - a Medium or Long of 0 bytes, which its Telemem handler could not tell
 *   from a Short (both arrive with 0 bytes);
 * - a Long to a node whose segment this process maps (a node on this host
 *   through Telemem's window driver): the sender copies the payload into
 *   the segment itself and sends only this header, one copy where a
 *   message makes two, as GASNet's smp-conduit does.  The header leaves
 *   after the copy, and the handler runs after the header arrives;
 * - a Medium copied by its sender into one of the target's slots
 *   (gasnet_local.c), freed when the handler returns. */
enum { ZERO_MEDIUM, ZERO_LONG, ZERO_SLOT };
typedef struct zero_hdr {
    uint8_t index; /* the client's handler */
    uint8_t kind;  /* ZERO_*: Long: dest_addr is buf; slot: its number */
    uint8_t pad[6];
    uint64_t dest_addr;
    uint64_t nbytes; /* the payload, already in place */
} zero_hdr_t;

/* ---- calling a handler with its prototype -------------------------------- */

#define HT_0
#define HT_1 , gasnet_handlerarg_t
#define HT_2 HT_1, gasnet_handlerarg_t
#define HT_3 HT_2, gasnet_handlerarg_t
#define HT_4 HT_3, gasnet_handlerarg_t
#define HT_5 HT_4, gasnet_handlerarg_t
#define HT_6 HT_5, gasnet_handlerarg_t
#define HT_7 HT_6, gasnet_handlerarg_t
#define HT_8 HT_7, gasnet_handlerarg_t
#define HT_9 HT_8, gasnet_handlerarg_t
#define HT_10 HT_9, gasnet_handlerarg_t
#define HT_11 HT_10, gasnet_handlerarg_t
#define HT_12 HT_11, gasnet_handlerarg_t
#define HT_13 HT_12, gasnet_handlerarg_t
#define HT_14 HT_13, gasnet_handlerarg_t
#define HT_15 HT_14, gasnet_handlerarg_t
#define HT_16 HT_15, gasnet_handlerarg_t
#define HA_0
#define HA_1 , (gasnet_handlerarg_t)a[0]
#define HA_2 HA_1, (gasnet_handlerarg_t)a[1]
#define HA_3 HA_2, (gasnet_handlerarg_t)a[2]
#define HA_4 HA_3, (gasnet_handlerarg_t)a[3]
#define HA_5 HA_4, (gasnet_handlerarg_t)a[4]
#define HA_6 HA_5, (gasnet_handlerarg_t)a[5]
#define HA_7 HA_6, (gasnet_handlerarg_t)a[6]
#define HA_8 HA_7, (gasnet_handlerarg_t)a[7]
#define HA_9 HA_8, (gasnet_handlerarg_t)a[8]
#define HA_10 HA_9, (gasnet_handlerarg_t)a[9]
#define HA_11 HA_10, (gasnet_handlerarg_t)a[10]
#define HA_12 HA_11, (gasnet_handlerarg_t)a[11]
#define HA_13 HA_12, (gasnet_handlerarg_t)a[12]
#define HA_14 HA_13, (gasnet_handlerarg_t)a[13]
#define HA_15 HA_14, (gasnet_handlerarg_t)a[14]
#define HA_16 HA_15, (gasnet_handlerarg_t)a[15]

#define SHORT_CASE(n)                                                       \
    case n:                                                                 \
        ((void (*)(gasnet_token_t HT_##n))fn)(t HA_##n);                    \
        break;
#define MEDIUM_CASE(n)                                                      \
    case n:                                                                 \
        ((void (*)(gasnet_token_t, void *, size_t HT_##n))fn)(t, buf,       \
                                                              nbytes HA_##n); \
        break;

static void call_short(gasnetc_handler_fn_t fn, gasnet_token_t t,
                       const uint32_t *a, unsigned n)
{
    switch (n) {
    SHORT_CASE(0) SHORT_CASE(1) SHORT_CASE(2) SHORT_CASE(3) SHORT_CASE(4)
    SHORT_CASE(5) SHORT_CASE(6) SHORT_CASE(7) SHORT_CASE(8) SHORT_CASE(9)
    SHORT_CASE(10) SHORT_CASE(11) SHORT_CASE(12) SHORT_CASE(13)
    SHORT_CASE(14) SHORT_CASE(15) SHORT_CASE(16)
    default:
        tlm_gasnet_fatal("active message", "%u arguments (at most 16)", n);
    }
}

static void call_medium(gasnetc_handler_fn_t fn, gasnet_token_t t, void *buf,
                        size_t nbytes, const uint32_t *a, unsigned n)
{
    switch (n) {
    MEDIUM_CASE(0) MEDIUM_CASE(1) MEDIUM_CASE(2) MEDIUM_CASE(3)
    MEDIUM_CASE(4) MEDIUM_CASE(5) MEDIUM_CASE(6) MEDIUM_CASE(7)
    MEDIUM_CASE(8) MEDIUM_CASE(9) MEDIUM_CASE(10) MEDIUM_CASE(11)
    MEDIUM_CASE(12) MEDIUM_CASE(13) MEDIUM_CASE(14) MEDIUM_CASE(15)
    MEDIUM_CASE(16)
    default:
        tlm_gasnet_fatal("active message", "%u arguments (at most 16)", n);
    }
}

/* Run a client handler inside a frame (for the reply rules). */
static inline void run_client(unsigned index, telemem_am_token_t tok,
                              bool with_payload, void *buf, size_t nbytes,
                              const uint32_t *args, unsigned nargs)
{
    tlm_gasnet_frame_t f = {tok, 0, tlm_gasnet_hsl_held, tlm_gasnet_frame};
    tlm_gasnet_frame = &f;
    gasnetc_handler_fn_t fn = tlm_gasnet.handlers[index];
    if (with_payload)
        call_medium(fn, (gasnet_token_t)tok, buf, nbytes, args, nargs);
    else
        call_short(fn, (gasnet_token_t)tok, args, nargs);
    tlm_gasnet_frame = f.prev;
    if (TLM_GASNET_UNLIKELY(tlm_gasnet_hsl_held != f.hsl_at_entry))
        tlm_gasnet_fatal("active message", "handler %u returned while "
                         "holding a handler-safe lock", index);
}

/* Telemem handler of every registered client index. */
static void dispatch_client(telemem_am_token_t tok, void *payload,
                            size_t bytes, const uint32_t *args,
                            unsigned nargs, void *ctx)
{
    run_client((unsigned)(uintptr_t)ctx, tok, bytes != 0, payload, bytes,
               args, nargs);
}

static void dispatch_zero(telemem_am_token_t tok, void *payload,
                          size_t bytes, const uint32_t *args, unsigned nargs,
                          void *ctx)
{
    zero_hdr_t h;
    if (bytes != sizeof h)
        tlm_gasnet_fatal("active message", "malformed zero-payload message "
                         "(%zu bytes)", bytes);
    memcpy(&h, payload, sizeof h);
    if (h.index < TLM_GASNET_AM_FIRST_CLIENT ||
        !tlm_gasnet.handlers[h.index]) {
        int src = -1;
        telemem_am_source(tok, &src);
        tlm_gasnet_fatal("active message", "node %d sent a message to "
                         "handler index %u, which this node never registered "
                         "with gasnet_attach()", src, h.index);
    }
    if (h.kind != ZERO_SLOT) {
        run_client(h.index, tok, true,
                   h.kind == ZERO_LONG ? (void *)(uintptr_t)h.dest_addr : NULL,
                   (size_t)h.nbytes, args, nargs);
        return;
    }
    unsigned slot = (unsigned)h.dest_addr;
    char *buf = h.dest_addr < 32
                    ? tlm_gasnet_local_slot_mine(slot, (size_t)h.nbytes)
                    : NULL;
    if (!buf) {
        int src = -1;
        telemem_am_source(tok, &src);
        tlm_gasnet_fatal("active message",
                         "node %d sent a Medium in slot "
                         "%ju of %ju bytes, which this node does not have",
                         src, (uintmax_t)h.dest_addr, (uintmax_t)h.nbytes);
    }
    run_client(h.index, tok, true, buf, (size_t)h.nbytes, args, nargs);
    tlm_gasnet_local_slot_done(slot);
}

/* Telemem handler of client indices the table did not name. */
static void dispatch_unregistered(telemem_am_token_t tok, void *payload,
                                  size_t bytes, const uint32_t *args,
                                  unsigned nargs, void *ctx)
{
    int src = -1;
    telemem_am_source(tok, &src);
    tlm_gasnet_fatal("active message", "node %d sent a message to handler "
                     "index %u, which this node never registered with "
                     "gasnet_attach()", src, (unsigned)(uintptr_t)ctx);
}

int tlm_gasnet_am_init(void)
{
    int rc = telemem_am_register(TLM_GASNET_AM_ZERO, dispatch_zero, NULL);
    for (int i = TLM_GASNET_AM_FIRST_CLIENT; i < 256 && rc == TELEMEM_OK; i++)
        rc = telemem_am_register(i, dispatch_unregistered,
                                 (void *)(uintptr_t)i);
    return rc;
}

int tlm_gasnet_am_attach(gasnet_handlerentry_t *table, int numentries)
{
    static const char what[] = "gasnet_attach";
    if (numentries < 0 || (!table && numentries > 0))
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                numentries < 0 ? "numentries %d is negative"
                                               : "table is NULL with %d "
                                                 "entries", numentries);
    /* Check everything before changing anything. */
    unsigned char used[256];
    memset(used, 0, sizeof used);
    int fixed = 0, any = 0;
    for (int i = 0; i < numentries; i++) {
        unsigned idx = table[i].index;
        if (!table[i].fnptr)
            return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                    "table[%d] (index %u) has a NULL "
                                    "handler", i, idx);
        if (idx == 0) {
            any++;
            continue;
        }
        if (idx < TLM_GASNET_AM_FIRST_CLIENT)
            return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                    "table[%d]: index %u is reserved for "
                                    "GASNet (client handlers use 128..255, "
                                    "or 0 for any)", i, idx);
        if (used[idx])
            return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                    "table[%d]: index %u appears twice", i,
                                    idx);
        used[idx] = 1;
        fixed++;
    }
    if (fixed + any > 256 - TLM_GASNET_AM_FIRST_CLIENT)
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                "%d handlers, but only %d indices "
                                "(128..255) exist", fixed + any,
                                256 - TLM_GASNET_AM_FIRST_CLIENT);
    /* Deterministic assignment: lowest free index, in table order. */
    unsigned next = TLM_GASNET_AM_FIRST_CLIENT;
    for (int i = 0; i < numentries; i++) {
        if (table[i].index != 0)
            continue;
        while (used[next])
            next++;
        used[next] = 1;
        table[i].index = (gasnet_handler_t)next;
    }
    for (int i = 0; i < numentries; i++) {
        unsigned idx = table[i].index;
        tlm_gasnet.handlers[idx] = table[i].fnptr;
        int rc = telemem_am_register((int)idx, dispatch_client,
                                     (void *)(uintptr_t)idx);
        if (rc != TELEMEM_OK)
            return tlm_gasnet_error(GASNET_ERR_RESOURCE, what,
                                    "telemem_am_register(%u) failed: %s",
                                    idx, telemem_strerror(rc));
    }
    return GASNET_OK;
}

/* ---- requests ------------------------------------------------------------ */

/* Error path: the name of the call ("gasnet_AMRequestMedium3"). */
static int am_error(int code, const char *kind, int numargs, const char *fmt,
                    ...) TLM_GASNET_PRINTF(4, 5);
static int am_error(int code, const char *kind, int numargs, const char *fmt,
                    ...)
{
    char what[64], msg[256];
    va_list ap;
    snprintf(what, sizeof what, "gasnet_AM%s%d", kind, numargs);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tlm_gasnet_error(code, what, "%s", msg);
}

static void am_context_fatal(const char *kind, int numargs)
{
    char what[64];
    snprintf(what, sizeof what, "gasnet_AM%s%d", kind, numargs);
    tlm_gasnet_context_fatal(what);
}

/* Checks shared by every request; GASNET_OK or the code to return. */
static inline int check_request(const char *kind, gasnet_node_t dest,
                                gasnet_handler_t handler, int numargs,
                                const gasnet_handlerarg_t *args)
{
    if (TLM_GASNET_UNLIKELY(tlm_gasnet_frame || tlm_gasnet_hsl_held))
        am_context_fatal(kind, numargs);
    if (TLM_GASNET_LIKELY(tlm_gasnet.attached &&
                          dest < (gasnet_node_t)tlm_gasnet.nodes &&
                          handler >= TLM_GASNET_AM_FIRST_CLIENT &&
                          (unsigned)numargs <= 16 && (args || !numargs)))
        return GASNET_OK;
    if (!tlm_gasnet.attached)
        return am_error(GASNET_ERR_NOT_INIT, kind, numargs,
                        "called before gasnet_attach()");
    if (dest >= (gasnet_node_t)tlm_gasnet.nodes)
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "node %u out of range [0, %d)", (unsigned)dest,
                        tlm_gasnet.nodes);
    if (handler < TLM_GASNET_AM_FIRST_CLIENT)
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "handler index %u is reserved for GASNet (client "
                        "handlers are 128..255)", (unsigned)handler);
    return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                    "bad argument list (%d arguments, vector %s)", numargs,
                    args ? "given" : "NULL");
}

static inline int sent(const char *kind, gasnet_node_t dest, int numargs,
                       int rc)
{
    if (TLM_GASNET_UNLIKELY(rc != TELEMEM_OK))
        return am_error(tlm_gasnet_from_telemem(rc), kind, numargs, "%s",
                        telemem_strerror(rc));
    /* A request to this node waits for one of its polls: threads looping
     * on inline puts and gets make one (GASNet runs such a handler at
     * once). */
    if (dest == (gasnet_node_t)tlm_gasnet.mynode)
        tlm_gasnet_local_poll_soon();
    tlm_gasnet_check_exit();
    return GASNET_OK;
}

int gasnetc_AMRequestShortM(gasnet_node_t dest, gasnet_handler_t handler,
                            int numargs, const gasnet_handlerarg_t *args)
{
    int rc = check_request("RequestShort", dest, handler, numargs, args);
    if (TLM_GASNET_UNLIKELY(rc != GASNET_OK))
        return rc;
    rc = telemem_am_request((int)dest, handler, NULL, 0,
                            (const uint32_t *)args, (unsigned)numargs);
    return sent("RequestShort", dest, numargs, rc);
}

static int send_zero(int dest, telemem_am_token_t tok, gasnet_handler_t h,
                     int kind, void *dest_addr, size_t nbytes, int numargs,
                     const gasnet_handlerarg_t *args)
{
    zero_hdr_t z;
    memset(&z, 0, sizeof z);
    z.index = h;
    z.kind = (uint8_t)kind;
    z.dest_addr = (uint64_t)(uintptr_t)dest_addr;
    z.nbytes = nbytes;
    if (tok)
        return telemem_am_reply(tok, TLM_GASNET_AM_ZERO, &z, sizeof z,
                                (const uint32_t *)args, (unsigned)numargs);
    return telemem_am_request(dest, TLM_GASNET_AM_ZERO, &z, sizeof z,
                              (const uint32_t *)args, (unsigned)numargs);
}

/* A copy long enough for the target's wait to give up spinning is
 * announced in its control line (tlm_gasnet_local_copy_begin), so that
 * the wait polls through it instead of sleeping. */
#define LONG_ANNOUNCED ((size_t)64 * 1024)

/* A Medium of nbytes > 0 to node dest, a request or (tok) the reply to
 * one.  From tlm_gasnet_medium_min bytes to another node with a free
 * slot mapped here, the payload is copied into the slot and only the
 * header sent (ZERO_SLOT); otherwise Telemem's message carries it. */
static int send_medium(int dest, telemem_am_token_t tok,
                       gasnet_handler_t handler, void *source_addr,
                       size_t nbytes, int numargs,
                       const gasnet_handlerarg_t *args)
{
    unsigned slot;
    char *l;
    if (nbytes >= tlm_gasnet_medium_min && dest >= 0 &&
        dest != tlm_gasnet.mynode &&
        (l = tlm_gasnet_local_slot_claim(dest, &slot)) != NULL) {
        bool announce = nbytes >= LONG_ANNOUNCED;
        if (announce)
            tlm_gasnet_local_copy_begin(dest);
        memcpy(l, source_addr, nbytes);
        tlm_gasnet_local_slot_filled(dest, slot);
        int rc = send_zero(dest, tok, handler, ZERO_SLOT,
                           (void *)(uintptr_t)slot, nbytes, numargs, args);
        if (announce)
            tlm_gasnet_local_copy_end(dest);
        if (rc != TELEMEM_OK)
            tlm_gasnet_local_slot_release(dest, slot);
        return rc;
    }
    if (tok)
        return telemem_am_reply(tok, handler, source_addr, nbytes,
                                (const uint32_t *)args, (unsigned)numargs);
    return telemem_am_request(dest, handler, source_addr, nbytes,
                              (const uint32_t *)args, (unsigned)numargs);
}

int gasnetc_AMRequestMediumM(gasnet_node_t dest, gasnet_handler_t handler,
                             void *source_addr, size_t nbytes, int numargs,
                             const gasnet_handlerarg_t *args)
{
    static const char kind[] = "RequestMedium";
    int rc = check_request(kind, dest, handler, numargs, args);
    if (TLM_GASNET_UNLIKELY(rc != GASNET_OK))
        return rc;
    if (TLM_GASNET_UNLIKELY(nbytes > gasnet_AMMaxMedium()))
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "nbytes %zu exceeds gasnet_AMMaxMedium() = %zu", nbytes,
                        gasnet_AMMaxMedium());
    if (TLM_GASNET_UNLIKELY(nbytes == 0))
        return sent(kind, dest, numargs,
                    send_zero((int)dest, NULL, handler, ZERO_MEDIUM, NULL, 0,
                              numargs, args));
    if (TLM_GASNET_UNLIKELY(!source_addr))
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "source_addr is NULL with %zu bytes", nbytes);
    rc = send_medium((int)dest, NULL, handler, source_addr, nbytes, numargs,
                     args);
    return sent(kind, dest, numargs, rc);
}

/* A Long of nbytes > 0 to node dest, a request or (tok) the reply to
 * one.  To a node whose segment is mapped here the payload is copied in
 * place and only the header sent (zero_hdr_t), a long copy announced as
 * above.  To others, Telemem's long message. */

static int send_long(int dest, telemem_am_token_t tok,
                     gasnet_handler_t handler, void *source_addr,
                     size_t nbytes, void *dest_addr, int numargs,
                     const gasnet_handlerarg_t *args)
{
    char *l;
    if (!gasnetc_local_at((gasnet_node_t)dest, dest_addr, nbytes, &l)) {
        if (tok)
            return telemem_am_reply_long(tok, handler, source_addr, nbytes,
                                         dest_addr, (const uint32_t *)args,
                                         (unsigned)numargs);
        return telemem_am_request_long(dest, handler, source_addr, nbytes,
                                       dest_addr, (const uint32_t *)args,
                                       (unsigned)numargs);
    }
    bool announce = nbytes >= LONG_ANNOUNCED;
    if (announce)
        tlm_gasnet_local_copy_begin(dest);
    if (l != (const char *)source_addr) /* a Long to itself, in place */
        gasnetc_copy_long(l, (const char *)source_addr, nbytes);
    int rc = send_zero(dest, tok, handler, ZERO_LONG, dest_addr, nbytes,
                       numargs, args);
    if (announce)
        tlm_gasnet_local_copy_end(dest);
    return rc;
}

static int request_long(const char *kind, gasnet_node_t dest,
                        gasnet_handler_t handler, void *source_addr,
                        size_t nbytes, void *dest_addr, int numargs,
                        const gasnet_handlerarg_t *args)
{
    int rc = check_request(kind, dest, handler, numargs, args);
    if (TLM_GASNET_UNLIKELY(rc != GASNET_OK))
        return rc;
    if (TLM_GASNET_UNLIKELY(nbytes > gasnet_AMMaxLongRequest()))
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "nbytes %zu exceeds gasnet_AMMaxLongRequest() = %zu",
                        nbytes, gasnet_AMMaxLongRequest());
    if (nbytes == 0)
        return sent(kind, dest, numargs,
                    send_zero((int)dest, NULL, handler, ZERO_LONG, dest_addr, 0,
                              numargs, args));
    if (!source_addr)
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "source_addr is NULL with %zu bytes", nbytes);
    if (!tlm_gasnet_in_segment((int)dest, dest_addr, nbytes))
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "dest_addr [%p, +%zu) is not inside the segment of "
                        "node %u", dest_addr, nbytes, (unsigned)dest);
    rc = send_long((int)dest, NULL, handler, source_addr, nbytes, dest_addr,
                   numargs, args);
    return sent(kind, dest, numargs, rc);
}

int gasnetc_AMRequestLongM(gasnet_node_t dest, gasnet_handler_t handler,
                           void *source_addr, size_t nbytes, void *dest_addr,
                           int numargs, const gasnet_handlerarg_t *args)
{
    return request_long("RequestLong", dest, handler, source_addr, nbytes,
                        dest_addr, numargs, args);
}

/* Telemem's long request returns when the payload may be reused, which is
 * stronger than LongAsync needs. */
int gasnetc_AMRequestLongAsyncM(gasnet_node_t dest, gasnet_handler_t handler,
                                void *source_addr, size_t nbytes,
                                void *dest_addr, int numargs,
                                const gasnet_handlerarg_t *args)
{
    return request_long("RequestLongAsync", dest, handler, source_addr,
                        nbytes, dest_addr, numargs, args);
}

/* ---- replies ------------------------------------------------------------- */

static tlm_gasnet_frame_t *check_reply(const char *kind, gasnet_token_t token,
                                       int numargs)
{
    tlm_gasnet_frame_t *f = tlm_gasnet_frame;
    char what[64];
    if (TLM_GASNET_LIKELY(f && f->tok == (telemem_am_token_t)token &&
                          !f->replied &&
                          tlm_gasnet_hsl_held == f->hsl_at_entry))
        return f;
    snprintf(what, sizeof what, "gasnet_AM%s%d", kind, numargs);
    if (!f)
        tlm_gasnet_fatal(what, "called outside an active-message handler");
    if (f->tok != (telemem_am_token_t)token)
        tlm_gasnet_fatal(what, "the token is not the running handler's "
                         "token");
    if (f->replied)
        tlm_gasnet_fatal(what, "a request handler may reply only once");
    tlm_gasnet_fatal(what, "called while holding a handler-safe lock "
                     "(release it before replying)");
}

static int check_reply_args(const char *kind, gasnet_handler_t handler,
                            int numargs, const gasnet_handlerarg_t *args)
{
    if (TLM_GASNET_LIKELY(handler >= TLM_GASNET_AM_FIRST_CLIENT &&
                          (unsigned)numargs <= 16 && (args || !numargs)))
        return GASNET_OK;
    if (handler < TLM_GASNET_AM_FIRST_CLIENT)
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "handler index %u is reserved for GASNet (client "
                        "handlers are 128..255)", (unsigned)handler);
    return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                    "bad argument list (%d arguments, vector %s)", numargs,
                    args ? "given" : "NULL");
}

static int replied(const char *kind, int numargs, tlm_gasnet_frame_t *f,
                   int rc)
{
    if (TLM_GASNET_LIKELY(rc == TELEMEM_OK)) {
        f->replied = 1;
        return GASNET_OK;
    }
    if (rc == TELEMEM_ERR_INVALID_ARG) {
        char what[64];
        snprintf(what, sizeof what, "gasnet_AM%s%d", kind, numargs);
        tlm_gasnet_fatal(what, "Telemem refused the reply (a reply "
                         "handler may not reply)");
    }
    return am_error(tlm_gasnet_from_telemem(rc), kind, numargs, "%s",
                    telemem_strerror(rc));
}

int gasnetc_AMReplyShortM(gasnet_token_t token, gasnet_handler_t handler,
                          int numargs, const gasnet_handlerarg_t *args)
{
    tlm_gasnet_frame_t *f = check_reply("ReplyShort", token, numargs);
    int rc = check_reply_args("ReplyShort", handler, numargs, args);
    if (TLM_GASNET_UNLIKELY(rc != GASNET_OK))
        return rc;
    rc = telemem_am_reply(f->tok, handler, NULL, 0, (const uint32_t *)args,
                          (unsigned)numargs);
    return replied("ReplyShort", numargs, f, rc);
}

int gasnetc_AMReplyMediumM(gasnet_token_t token, gasnet_handler_t handler,
                           void *source_addr, size_t nbytes, int numargs,
                           const gasnet_handlerarg_t *args)
{
    static const char kind[] = "ReplyMedium";
    tlm_gasnet_frame_t *f = check_reply(kind, token, numargs);
    int rc = check_reply_args(kind, handler, numargs, args);
    if (TLM_GASNET_UNLIKELY(rc != GASNET_OK))
        return rc;
    if (nbytes > gasnet_AMMaxMedium())
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "nbytes %zu exceeds gasnet_AMMaxMedium() = %zu", nbytes,
                        gasnet_AMMaxMedium());
    if (nbytes == 0)
        rc =
            send_zero(-1, f->tok, handler, ZERO_MEDIUM, NULL, 0, numargs, args);
    else if (!source_addr)
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "source_addr is NULL with %zu bytes", nbytes);
    else {
        int src = -1;
        telemem_am_source(f->tok, &src);
        rc = send_medium(src, f->tok, handler, source_addr, nbytes, numargs,
                         args);
    }
    return replied(kind, numargs, f, rc);
}

int gasnetc_AMReplyLongM(gasnet_token_t token, gasnet_handler_t handler,
                         void *source_addr, size_t nbytes, void *dest_addr,
                         int numargs, const gasnet_handlerarg_t *args)
{
    static const char kind[] = "ReplyLong";
    tlm_gasnet_frame_t *f = check_reply(kind, token, numargs);
    int rc = check_reply_args(kind, handler, numargs, args);
    if (TLM_GASNET_UNLIKELY(rc != GASNET_OK))
        return rc;
    if (nbytes > gasnet_AMMaxLongReply())
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "nbytes %zu exceeds gasnet_AMMaxLongReply() = %zu",
                        nbytes, gasnet_AMMaxLongReply());
    if (nbytes == 0) {
        rc = send_zero(-1, f->tok, handler, ZERO_LONG, dest_addr, 0, numargs,
                       args);
        return replied(kind, numargs, f, rc);
    }
    int src = -1;
    telemem_am_source(f->tok, &src);
    if (!source_addr)
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "source_addr is NULL with %zu bytes", nbytes);
    if (!tlm_gasnet_in_segment(src, dest_addr, nbytes))
        return am_error(GASNET_ERR_BAD_ARG, kind, numargs,
                        "dest_addr [%p, +%zu) is not inside the segment of "
                        "the requesting node %d", dest_addr, nbytes, src);
    rc = send_long(src, f->tok, handler, source_addr, nbytes, dest_addr,
                   numargs, args);
    return replied(kind, numargs, f, rc);
}

/* ---- polling and message source ------------------------------------------ */

int gasnet_AMPoll(void)
{
    if (TLM_GASNET_UNLIKELY(!tlm_gasnet.inited || tlm_gasnet.finalized))
        return tlm_gasnet_error(GASNET_ERR_NOT_INIT, "gasnet_AMPoll",
                                "called before gasnet_init()");
    tlm_gasnet_check_context("gasnet_AMPoll");
    tlm_gasnet_local_flush();
    int n = telemem_poll();
    if (TLM_GASNET_UNLIKELY(n < 0))
        return tlm_gasnet_error(GASNET_ERR_RESOURCE, "gasnet_AMPoll",
                                "telemem_poll failed: %s",
                                telemem_strerror(n));
    tlm_gasnet_check_exit();
    return GASNET_OK;
}

/* The loop of GASNET_BLOCKUNTIL: one turn of a Telemem wait
 * (telemem_wait_poll: it spins, yields or sleeps until something arrives,
 * as TELEMEM_WAIT says), after which the caller looks at its condition
 * again; under GASNET_WAIT_SPIN it polls until Telemem handled something.
 * It is on the latency path of every AM round trip. */
void gasnetc_block_poll(unsigned *idle)
{
    if (TLM_GASNET_UNLIKELY(!tlm_gasnet.inited || tlm_gasnet.finalized ||
                            tlm_gasnet_frame || tlm_gasnet_hsl_held)) {
        if (!tlm_gasnet.inited || tlm_gasnet.finalized)
            tlm_gasnet_fatal("GASNET_BLOCKUNTIL", "called before "
                             "gasnet_init()");
        tlm_gasnet_context_fatal("GASNET_BLOCKUNTIL");
    }
    tlm_gasnet_local_flush();
    if (tlm_gasnet.spin_limit != ~0u) {
        tlm_gasnet_wait_step("GASNET_BLOCKUNTIL", idle); /* TELEMEM_WAIT */
        return;
    }
    for (;;) { /* GASNET_WAIT_SPIN: poll until a handler ran */
        int n = telemem_poll();
        if (TLM_GASNET_LIKELY(n > 0))
            break;
        if (TLM_GASNET_UNLIKELY(n < 0))
            tlm_gasnet_fatal("GASNET_BLOCKUNTIL", "telemem_poll failed: %s",
                             telemem_strerror(n));
    }
    tlm_gasnet_check_exit();
}

void gasnetc_block_begin(void)
{
    tlm_gasnet_local_block_begin();
}

void gasnetc_block_end(void)
{
    tlm_gasnet_local_block_end();
}

int gasnet_AMGetMsgSource(gasnet_token_t token, gasnet_node_t *srcindex)
{
    static const char what[] = "gasnet_AMGetMsgSource";
    if (!token || !srcindex)
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what, "%s is NULL",
                                !token ? "token" : "srcindex");
    const tlm_gasnet_frame_t *f = tlm_gasnet_frame;
    if (!f || f->tok != (telemem_am_token_t)token)
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what, "the token is not "
                                "the running handler's token");
    int src;
    int rc = telemem_am_source(f->tok, &src);
    if (rc != TELEMEM_OK)
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what, "%s",
                                telemem_strerror(rc));
    *srcindex = (gasnet_node_t)src;
    return GASNET_OK;
}

/* ------------------------------------------------------------------------ */
/* The variadic forms: collect the arguments, then the M forms. */

#define TLM_GASNET_VARGS_(last, numargs, argv)                              \
    gasnet_handlerarg_t argv[16];                                           \
    do {                                                                    \
        va_list ap_;                                                        \
        va_start(ap_, last);                                                \
        for (int i_ = 0; i_ < (numargs) && i_ < 16; i_++)                   \
            (argv)[i_] = (gasnet_handlerarg_t)va_arg(ap_, int);             \
        va_end(ap_);                                                        \
    } while (0)

int gasnetc_AMRequestShortV(gasnet_node_t dest, gasnet_handler_t handler,
                            int numargs, ...)
{
    TLM_GASNET_VARGS_(numargs, numargs, argv);
    return gasnetc_AMRequestShortM(dest, handler, numargs, argv);
}

int gasnetc_AMRequestMediumV(gasnet_node_t dest, gasnet_handler_t handler,
                             void *source_addr, size_t nbytes, int numargs,
                             ...)
{
    TLM_GASNET_VARGS_(numargs, numargs, argv);
    return gasnetc_AMRequestMediumM(dest, handler, source_addr, nbytes,
                                    numargs, argv);
}

int gasnetc_AMRequestLongV(gasnet_node_t dest, gasnet_handler_t handler,
                           void *source_addr, size_t nbytes, void *dest_addr,
                           int numargs, ...)
{
    TLM_GASNET_VARGS_(numargs, numargs, argv);
    return gasnetc_AMRequestLongM(dest, handler, source_addr, nbytes,
                                  dest_addr, numargs, argv);
}

int gasnetc_AMRequestLongAsyncV(gasnet_node_t dest, gasnet_handler_t handler,
                                void *source_addr, size_t nbytes,
                                void *dest_addr, int numargs, ...)
{
    TLM_GASNET_VARGS_(numargs, numargs, argv);
    return gasnetc_AMRequestLongAsyncM(dest, handler, source_addr, nbytes,
                                       dest_addr, numargs, argv);
}

int gasnetc_AMReplyShortV(gasnet_token_t token, gasnet_handler_t handler,
                          int numargs, ...)
{
    TLM_GASNET_VARGS_(numargs, numargs, argv);
    return gasnetc_AMReplyShortM(token, handler, numargs, argv);
}

int gasnetc_AMReplyMediumV(gasnet_token_t token, gasnet_handler_t handler,
                           void *source_addr, size_t nbytes, int numargs, ...)
{
    TLM_GASNET_VARGS_(numargs, numargs, argv);
    return gasnetc_AMReplyMediumM(token, handler, source_addr, nbytes,
                                  numargs, argv);
}

int gasnetc_AMReplyLongV(gasnet_token_t token, gasnet_handler_t handler,
                         void *source_addr, size_t nbytes, void *dest_addr,
                         int numargs, ...)
{
    TLM_GASNET_VARGS_(numargs, numargs, argv);
    return gasnetc_AMReplyLongM(token, handler, source_addr, nbytes,
                                dest_addr, numargs, argv);
}

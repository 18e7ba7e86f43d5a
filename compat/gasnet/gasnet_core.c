/* gasnet_core.c - GASNet job control over Telemem: gasnet_init/attach/exit
 * (with the coordinated exit protocol), the job and segment queries, error
 * names, the wait policy and the fatal-error path shared by the library. */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gasnet_internal.h"
#include "gasnet_tools.h"

tlm_gasnet_t tlm_gasnet;
TLM_GASNET_TLS tlm_gasnet_frame_t *tlm_gasnet_frame;
TLM_GASNET_TLS int tlm_gasnet_hsl_held;
TLM_GASNET_TLS unsigned tlm_gasnet_calls;

/* The configuration, findable in the library and in statically linked
 * binaries ("strings | grep GASNetConfig"). */
__attribute__((used)) static const char config_ident[] =
    "$GASNetConfig: (libgasnet) " GASNET_CONFIG_STRING " $";

#define DEFAULT_SPIN_LIMIT 200u
#define DEFAULT_EXIT_TIMEOUT 60.0
#define EXIT_GRACE 1.0

/* ---- errors -------------------------------------------------------------- */

const char *gasnet_ErrorName(int errval)
{
    switch (errval) {
    case GASNET_OK: return "GASNET_OK";
    case GASNET_ERR_NOT_INIT: return "GASNET_ERR_NOT_INIT";
    case GASNET_ERR_RESOURCE: return "GASNET_ERR_RESOURCE";
    case GASNET_ERR_BAD_ARG: return "GASNET_ERR_BAD_ARG";
    case GASNET_ERR_NOT_READY: return "GASNET_ERR_NOT_READY";
    case GASNET_ERR_BARRIER_MISMATCH: return "GASNET_ERR_BARRIER_MISMATCH";
    default: return "*unknown*";
    }
}

const char *gasnet_ErrorDesc(int errval)
{
    switch (errval) {
    case GASNET_OK: return "No error";
    case GASNET_ERR_NOT_INIT: return "GASNet message layer not initialized";
    case GASNET_ERR_RESOURCE:
        return "Problem with requested resource (communication failure or "
               "out of memory)";
    case GASNET_ERR_BAD_ARG: return "Invalid function parameter passed";
    case GASNET_ERR_NOT_READY: return "Non-blocking operation not complete";
    case GASNET_ERR_BARRIER_MISMATCH:
        return "Barrier id's mismatched or a node signalled a mismatch";
    default: return "no description available";
    }
}

int tlm_gasnet_from_telemem(int rc)
{
    switch (rc) {
    case TELEMEM_OK: return GASNET_OK;
    case TELEMEM_ERR_INVALID_ARG:
    case TELEMEM_ERR_OUT_OF_RANGE: return GASNET_ERR_BAD_ARG;
    case TELEMEM_ERR_NOT_INITIALIZED: return GASNET_ERR_NOT_INIT;
    default: return GASNET_ERR_RESOURCE;
    }
}

static void vreport(const char *kind, const char *what, const char *fmt,
                    va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fflush(stdout);
    /* One write so that nodes' lines do not interleave. */
    if (tlm_gasnet.inited)
        fprintf(stderr, "*** GASNet %s (node %d): %s: %s\n", kind,
                tlm_gasnet.mynode, what, msg);
    else
        fprintf(stderr, "*** GASNet %s: %s: %s\n", kind, what, msg);
    fflush(stderr);
}

void tlm_gasnet_fatal(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("FATAL ERROR", what, fmt, ap);
    va_end(ap);
    /* A non-zero status: telemem-run ends every other node.  _exit: the
     * state may be inconsistent, so no exit hooks run. */
    fflush(NULL);
    _exit(1);
}

int tlm_gasnet_error(int code, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("ERROR", what, fmt, ap);
    va_end(ap);
    return code;
}

void tlm_gasnet_context_fatal(const char *what)
{
    if (tlm_gasnet_frame)
        tlm_gasnet_fatal(what, "called inside an active-message handler "
                               "(handlers may only reply, once)");
    tlm_gasnet_fatal(what, "called while holding a handler-safe lock "
                           "(no communication inside an HSL section)");
}

/* ---- waiting ------------------------------------------------------------- */

void tlm_gasnet_wait_step(const char *what, unsigned *idle)
{
    /* One wait per thread (GASNET_PAR: several threads wait at once).
     * The wait watches no rank (its own: a dead one ends GASNet jobs
     * through the launcher). */
    static _Thread_local telemem_wait_t w;
    int n;
    tlm_gasnet_local_flush(); /* what we wait for may need our puts */
    if (tlm_gasnet.spin_limit == ~0u) { /* GASNET_WAIT_SPIN */
        n = telemem_poll();
    } else if (TLM_GASNET_UNLIKELY(tlm_gasnet_local_incoming())) {
        /* Another node is copying a Long into this one and its header
         * comes when the copy ends: poll through it (giving the core to
         * whoever else needs it) rather than sleep, and start the wait
         * afresh after. */
        n = telemem_poll();
        if (n == 0)
            sched_yield();
        *idle = 0;
    } else {
        if (*idle == 0)
            w = (telemem_wait_t)TELEMEM_WAIT_INIT(tlm_gasnet.mynode);
        *idle = 1;
        n = telemem_wait_poll(&w); /* spins, yields or sleeps: TELEMEM_WAIT */
    }
    if (TLM_GASNET_UNLIKELY(n < 0))
        tlm_gasnet_fatal(what, "telemem_%s failed: %s",
                         tlm_gasnet.spin_limit == ~0u ? "poll" : "wait_poll",
                         telemem_strerror(n));
    tlm_gasnet_check_exit();
}

int gasnet_set_waitmode(int wait_mode)
{
    switch (wait_mode) {
    case GASNET_WAIT_SPIN: tlm_gasnet.spin_limit = ~0u; break;
    case GASNET_WAIT_BLOCK: tlm_gasnet.spin_limit = 1; break;
    case GASNET_WAIT_SPINBLOCK: tlm_gasnet.spin_limit = DEFAULT_SPIN_LIMIT;
        break;
    default:
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, "gasnet_set_waitmode",
                                "unknown wait mode %d (GASNET_WAIT_SPIN, "
                                "_BLOCK or _SPINBLOCK)", wait_mode);
    }
    return GASNET_OK;
}

/* ---- exit ---------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void free_state(void)
{
    tlm_gasnet_coll_fini();
    tlm_gasnet_extended_fini();
    tlm_gasnet_barrier_fini();
    tlm_gasnet_local_fini();
    free(tlm_gasnet.seg);
    free(tlm_gasnet.nodeinfo);
    free((void *)tlm_gasnet.exit_seen);
    tlm_gasnet.seg = NULL;
    tlm_gasnet.nodeinfo = NULL;
    tlm_gasnet.exit_seen = NULL;
}

/* A node's gasnet_exit(0) notice. */
static void on_exit_msg(telemem_am_token_t tok, void *payload, size_t bytes,
                        const uint32_t *args, unsigned nargs, void *ctx)
{
    int src = -1;
    if (telemem_am_source(tok, &src) != TELEMEM_OK || src < 0 ||
        src >= tlm_gasnet.nodes || nargs != 1)
        tlm_gasnet_fatal("gasnet_exit", "malformed exit notice from node %d",
                         src);
    /* Atomic: under GASNET_PAR this may run on Telemem's progress thread
     * while gasnet_exit() waits on another. */
    if (!__atomic_load_n(&tlm_gasnet.exit_seen[src], __ATOMIC_RELAXED)) {
        __atomic_store_n(&tlm_gasnet.exit_seen[src], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&tlm_gasnet.exit_joined, 1, __ATOMIC_RELEASE);
    }
    if (!__atomic_load_n(&tlm_gasnet.exiting, __ATOMIC_ACQUIRE) &&
        !__atomic_load_n(&tlm_gasnet.exit_pending, __ATOMIC_ACQUIRE)) {
        tlm_gasnet.exit_code = (int)args[0];
        tlm_gasnet.exit_pending_since = now_seconds();
        __atomic_store_n(&tlm_gasnet.exit_pending, 1, __ATOMIC_RELEASE);
        tlm_gasnet_local_attention(); /* the host's inline loops poll */
    }
}

/* Status-0 exit: tell everyone, wait until everyone has said the same,
 * finish Telemem together.  Returns when this node may exit with 0. */
static void coordinated_exit(void)
{
    __atomic_store_n(&tlm_gasnet.exiting, true, __ATOMIC_RELEASE);
    tlm_gasnet_local_attention(); /* the host's inline loops poll */
    uint32_t code = 0;
    for (int r = 0; r < tlm_gasnet.nodes; r++) {
        if (r == tlm_gasnet.mynode)
            continue;
        int rc = telemem_am_request(r, TLM_GASNET_AM_EXIT, NULL, 0, &code, 1);
        if (rc != TELEMEM_OK)
            tlm_gasnet_fatal("gasnet_exit", "cannot tell node %d: %s", r,
                             telemem_strerror(rc));
    }
    double limit = DEFAULT_EXIT_TIMEOUT;
    const char *t = getenv("GASNET_EXITTIMEOUT");
    if (t && *t) {
        char *end;
        double v = strtod(t, &end);
        if (*end || v < 0)
            fprintf(stderr, "*** GASNet WARNING (node %d): GASNET_EXITTIMEOUT"
                    "='%s' is not a number of seconds; using %g\n",
                    tlm_gasnet.mynode, t, limit);
        else
            limit = v;
    }
    double start = now_seconds();
    unsigned idle = 0, checks = 0;
    while (__atomic_load_n(&tlm_gasnet.exit_joined, __ATOMIC_ACQUIRE) <
           tlm_gasnet.nodes - 1) {
        tlm_gasnet_wait_step("gasnet_exit", &idle);
        if (limit > 0 && (++checks & 1023u) == 0 &&
            now_seconds() - start > limit) {
            char list[256] = "";
            size_t k = 0;
            for (int r = 0; r < tlm_gasnet.nodes && k < sizeof list - 16;
                 r++)
                if (r != tlm_gasnet.mynode &&
                    !__atomic_load_n(&tlm_gasnet.exit_seen[r],
                                     __ATOMIC_RELAXED))
                    k += (size_t)snprintf(list + k, sizeof list - k, " %d",
                                          r);
            tlm_gasnet_fatal("gasnet_exit", "node(s)%s did not join the exit "
                             "within %g s (GASNET_EXITTIMEOUT); ending the "
                             "job", list, limit);
        }
    }
    fflush(NULL);
    int rc = telemem_finalize();
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal("gasnet_exit", "telemem_finalize failed: %s",
                         telemem_strerror(rc));
    tlm_gasnet.finalized = true;
    free_state();
}

void gasnet_exit(int exitcode)
{
    if (!tlm_gasnet.inited || tlm_gasnet.finalized)
        exit(exitcode);
    fflush(NULL);
    /* GASNET_PAR: the first thread to exit with 0 coordinates; another
     * one waits for it to end the process. */
    static int claimed;
    static TLM_GASNET_TLS int claimed_here;
    if (exitcode == 0 && !tlm_gasnet_frame && !tlm_gasnet_hsl_held) {
        if (!claimed_here &&
            __atomic_exchange_n(&claimed, 1, __ATOMIC_ACQ_REL))
            for (;;)
                pause();
        claimed_here = 1;
    }
    if (exitcode != 0 || tlm_gasnet_frame || tlm_gasnet_hsl_held ||
        __atomic_load_n(&tlm_gasnet.exiting, __ATOMIC_ACQUIRE)) {
        /* Non-zero: the launcher ends the other nodes with this status.
         * In a handler, under an HSL or during an exit nothing can be
         * coordinated: leave now. */
        _exit(exitcode);
    }
    tlm_gasnet_local_flush();
    coordinated_exit();
    exit(0);
}

void tlm_gasnet_maybe_join_exit(void)
{
    if (__atomic_load_n(&tlm_gasnet.exit_pending, __ATOMIC_ACQUIRE) &&
        now_seconds() - tlm_gasnet.exit_pending_since >= EXIT_GRACE)
        gasnet_exit(tlm_gasnet.exit_code);
}

/* main() returned (or exit() was called) without gasnet_exit(): as
 * gasnet_exit(status).  A non-zero status ends this process at once (the
 * launcher ends the others), as gasnet_exit() does. */
static void exit_hook(int status, void *arg)
{
    (void)arg;
    if (!tlm_gasnet.inited || tlm_gasnet.finalized ||
        __atomic_load_n(&tlm_gasnet.exiting, __ATOMIC_ACQUIRE) ||
        tlm_gasnet_frame || tlm_gasnet_hsl_held)
        return;
    if (status != 0) {
        fflush(NULL);
        _exit(status);
    }
    coordinated_exit();
}

/* ---- init and attach ----------------------------------------------------- */

#define HOSTNAME_LEN 64

/* Host and supernode numbers from the nodes' host names; returns the
 * number of nodes on this node's host. */
static int find_hosts(void)
{
    int n = tlm_gasnet.nodes;
    char mine[HOSTNAME_LEN];
    memset(mine, 0, sizeof mine);
    if (gethostname(mine, sizeof mine - 1) != 0)
        snprintf(mine, sizeof mine, "unknown");
    char *all = calloc((size_t)n, HOSTNAME_LEN);
    if (!all)
        tlm_gasnet_fatal("gasnet_init", "out of memory");
    int rc = telemem_allgather(mine, all, HOSTNAME_LEN);
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal("gasnet_init", "telemem_allgather of host names "
                         "failed: %s", telemem_strerror(rc));
    gasnet_node_t next = 0;
    int local = 0;
    for (int i = 0; i < n; i++) {
        const char *hi = all + (size_t)i * HOSTNAME_LEN;
        int j = 0;
        while (j < i && strncmp(hi, all + (size_t)j * HOSTNAME_LEN,
                                HOSTNAME_LEN) != 0)
            j++;
        tlm_gasnet.nodeinfo[i].host =
            j < i ? tlm_gasnet.nodeinfo[j].host : next++;
        tlm_gasnet.nodeinfo[i].supernode = tlm_gasnet.nodeinfo[i].host;
        tlm_gasnet.nodeinfo[i].offset = 0;
        if (strncmp(hi, mine, HOSTNAME_LEN) == 0)
            local++;
    }
    free(all);
    return local > 0 ? local : 1;
}

static uintptr_t page_down(uint64_t v)
{
    v -= v % GASNET_PAGESIZE;
    return v > UINTPTR_MAX ? (uintptr_t)(UINTPTR_MAX - UINTPTR_MAX %
                                         GASNET_PAGESIZE)
                           : (uintptr_t)v;
}

static void find_segment_limits(int local_nodes)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz
                                         : (uint64_t)1 << 30;
    uint64_t max = phys / (uint64_t)local_nodes;
    const char *s = getenv("GASNET_MAX_SEGSIZE");
    if (s && *s) {
        int64_t v = gasnett_parse_int(s, 1);
        if (v <= 0)
            fprintf(stderr, "*** GASNet WARNING (node %d): GASNET_MAX_SEGSIZE"
                    "='%s' is not a size; ignored\n", tlm_gasnet.mynode, s);
        else if ((uint64_t)v < max)
            max = (uint64_t)v;
    }
    tlm_gasnet.max_local = page_down(max);
    uint64_t global = tlm_gasnet.max_local;
    int rc = telemem_allreduce(&global, 1, TELEMEM_UINT64, TELEMEM_MIN);
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal("gasnet_init", "telemem_allreduce failed: %s",
                         telemem_strerror(rc));
    tlm_gasnet.max_global = (uintptr_t)global;
}

/* Telemem's optional progress thread would run handlers on a second
 * thread, which GASNET_SEQ (and this library's bookkeeping) rules out. */
static bool progress_thread_on(void)
{
    static const char key[] = "TELEMEM_PROGRESS_THREAD = ";
    const char *p = strstr(telemem_config_string(), key);
    if (!p)
        return false;
    p += sizeof key - 1;
    return !(*p == 'n' || *p == 'N' || *p == '0' || strncmp(p, "off", 3) == 0);
}

/* gasnet_init() of a client compiled in thread model @p model (0 SEQ, 1
 * PARSYNC, 2 PAR): Telemem's thread level MULTIPLE for PAR (any client
 * thread calls GASNet, handlers may run on any of them or on Telemem's
 * progress thread), SERIALIZED for PARSYNC, SINGLE for SEQ. */
static int init_model(int *argc, char ***argv, int model)
{
    if (tlm_gasnet.inited || tlm_gasnet.finalized)
        return tlm_gasnet_error(GASNET_ERR_NOT_INIT, "gasnet_init",
                                "called a second time");
    static const int level[3] = {TELEMEM_THREAD_SINGLE,
                                 TELEMEM_THREAD_SERIALIZED,
                                 TELEMEM_THREAD_MULTIPLE};
    int provided = 0;
    int rc = model == 0 ? telemem_initialize(argc, argv)
                        : telemem_initialize_thread(argc, argv, level[model],
                                                    &provided);
    if (rc != TELEMEM_OK)
        return tlm_gasnet_error(GASNET_ERR_RESOURCE, "gasnet_init",
                                "telemem_initialize failed: %s",
                                telemem_strerror(rc));
    if (model != 2 && progress_thread_on()) {
        telemem_finalize(); /* every node sees the same setting */
        return tlm_gasnet_error(GASNET_ERR_RESOURCE, "gasnet_init",
                                "handlers run in the client's thread in "
                                "GASNET_SEQ and GASNET_PARSYNC; unset "
                                "TELEMEM_PROGRESS_THREAD or build the "
                                "client with GASNET_PAR");
    }
    tlm_gasnet.threadmodel = model;
    tlm_gasnet.mynode = telemem_rank();
    tlm_gasnet.nodes = telemem_nranks();
    tlm_gasnet.spin_limit = DEFAULT_SPIN_LIMIT;
    size_t n = (size_t)tlm_gasnet.nodes;
    tlm_gasnet.seg = calloc(n, sizeof(gasnet_seginfo_t));
    tlm_gasnet.nodeinfo = calloc(n, sizeof(gasnet_nodeinfo_t));
    tlm_gasnet.exit_seen = calloc(n, 1);
    if (!tlm_gasnet.seg || !tlm_gasnet.nodeinfo || !tlm_gasnet.exit_seen)
        tlm_gasnet_fatal("gasnet_init", "out of memory for %zu nodes", n);
    /* From here on node-wide collectives run; a failure is fatal (the
     * other nodes could not carry on anyway). */
    tlm_gasnet.inited = true;
    find_segment_limits(find_hosts());
    rc = telemem_am_register(TLM_GASNET_AM_EXIT, on_exit_msg, NULL);
    if (rc == TELEMEM_OK)
        rc = tlm_gasnet_am_init();
    if (rc == TELEMEM_OK)
        rc = tlm_gasnet_barrier_init();
    if (rc == TELEMEM_OK)
        rc = tlm_gasnet_extended_init();
    if (rc == TELEMEM_OK)
        rc = tlm_gasnet_coll_init();
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal("gasnet_init", "cannot install GASNet's handlers: "
                         "%s", telemem_strerror(rc));
    /* Nobody may send before everyone has installed its handlers. */
    rc = telemem_barrier();
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal("gasnet_init", "telemem_barrier failed: %s",
                         telemem_strerror(rc));
    static bool hooked;
    if (!hooked && on_exit(exit_hook, NULL) == 0)
        hooked = true;
    return GASNET_OK;
}

gasnet_threadinfo_t gasnetc_threadinfo(void)
{
    return (gasnet_threadinfo_t)&tlm_gasnet_calls;
}

int gasnet_init(int *argc, char ***argv)
{
    return init_model(argc, argv, 0);
}

int gasnetc_init_seq(int *argc, char ***argv)
{
    return init_model(argc, argv, 0);
}

int gasnetc_init_parsync(int *argc, char ***argv)
{
    return init_model(argc, argv, 1);
}

int gasnetc_init_par(int *argc, char ***argv)
{
    return init_model(argc, argv, 2);
}

int gasnet_attach(gasnet_handlerentry_t *table, int numentries,
                  uintptr_t segsize, uintptr_t minheapoffset)
{
    static const char what[] = "gasnet_attach";
    if (!tlm_gasnet.inited || tlm_gasnet.finalized)
        return tlm_gasnet_error(GASNET_ERR_NOT_INIT, what,
                                "called before gasnet_init()");
    if (tlm_gasnet.attached)
        return tlm_gasnet_error(GASNET_ERR_NOT_INIT, what,
                                "called a second time");
    tlm_gasnet_check_context(what);
    if (segsize % GASNET_PAGESIZE != 0)
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                "segsize %ju is not a multiple of "
                                "GASNET_PAGESIZE (%d)", (uintmax_t)segsize,
                                GASNET_PAGESIZE);
    if (segsize > tlm_gasnet.max_local)
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                "segsize %ju exceeds "
                                "gasnet_getMaxLocalSegmentSize() = %ju",
                                (uintmax_t)segsize,
                                (uintmax_t)tlm_gasnet.max_local);
    int rc = tlm_gasnet_am_attach(table, numentries);
    if (rc != GASNET_OK)
        return rc;

    size_t n = (size_t)tlm_gasnet.nodes;
    void **bases = calloc(n, sizeof(void *));
    uint64_t *sizes = calloc(n, sizeof(uint64_t));
    if (!bases || !sizes)
        tlm_gasnet_fatal(what, "out of memory for %zu nodes", n);
    /* One extra page so that the segment can start on a page boundary
     * (telemem_malloc_all aligns to 64 bytes), and the node's control
     * line after it (gasnet_local.c). */
    unsigned nslots = tlm_gasnet_medium_slots_setting();
    size_t want = segsize ? (size_t)segsize + TLM_GASNET_SEG_EXTRA(nslots) : 0;
    rc = telemem_malloc_all(want, bases);
    if (rc != TELEMEM_OK) {
        free(bases);
        free(sizes);
        return tlm_gasnet_error(GASNET_ERR_RESOURCE, what,
                                "cannot allocate the segments "
                                "(telemem_malloc_all of %zu bytes: %s)", want,
                                telemem_strerror(rc));
    }
    /* Each node's segment size and number of Medium slots. */
    uint64_t mine[2] = {segsize, nslots};
    uint64_t *both = calloc(2 * n, sizeof(uint64_t));
    uint64_t *slots = calloc(n, sizeof(uint64_t));
    if (!both || !slots)
        tlm_gasnet_fatal(what, "out of memory for %zu nodes", n);
    rc = telemem_allgather(mine, both, sizeof mine);
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal(what, "telemem_allgather failed: %s",
                         telemem_strerror(rc));
    for (size_t i = 0; i < n; i++) {
        sizes[i] = both[2 * i];
        slots[i] = both[2 * i + 1];
    }
    free(both);
    for (size_t i = 0; i < n; i++) {
        uintptr_t b = (uintptr_t)bases[i];
        b = (b + GASNET_PAGESIZE - 1) & ~(uintptr_t)(GASNET_PAGESIZE - 1);
        tlm_gasnet.seg[i].addr = sizes[i] ? (void *)b : NULL;
        tlm_gasnet.seg[i].size = (uintptr_t)sizes[i];
    }
    tlm_gasnet.seg_block = bases[tlm_gasnet.mynode];
    tlm_gasnet_local_attach(bases, sizes, slots);
    free(bases);
    free(sizes);
    free(slots);
    rc = telemem_barrier();
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal(what, "telemem_barrier failed: %s",
                         telemem_strerror(rc));
    tlm_gasnet.attached = true;
    return GASNET_OK;
}

/* ---- queries ------------------------------------------------------------- */

gasnet_node_t gasnet_mynode(void)
{
    return tlm_gasnet.inited ? (gasnet_node_t)tlm_gasnet.mynode : 0;
}

gasnet_node_t gasnet_nodes(void)
{
    return tlm_gasnet.inited ? (gasnet_node_t)tlm_gasnet.nodes : 0;
}

uintptr_t gasnet_getMaxLocalSegmentSize(void)
{
    return tlm_gasnet.inited ? tlm_gasnet.max_local : 0;
}

uintptr_t gasnet_getMaxGlobalSegmentSize(void)
{
    return tlm_gasnet.inited ? tlm_gasnet.max_global : 0;
}

static int check_table(const char *what, const void *table, int numentries,
                       bool need_attach)
{
    if (!tlm_gasnet.inited || tlm_gasnet.finalized ||
        (need_attach && !tlm_gasnet.attached))
        return tlm_gasnet_error(GASNET_ERR_NOT_INIT, what, "called before "
                                "gasnet_%s()", need_attach ? "attach"
                                                           : "init");
    if (numentries < 0 || (!table && numentries > 0))
        return tlm_gasnet_error(GASNET_ERR_BAD_ARG, what,
                                numentries < 0 ? "numentries %d is negative"
                                               : "table is NULL with %d "
                                                 "entries", numentries);
    return GASNET_OK;
}

int gasnet_getSegmentInfo(gasnet_seginfo_t *seginfo_table, int numentries)
{
    int rc = check_table("gasnet_getSegmentInfo", seginfo_table, numentries,
                         true);
    if (rc != GASNET_OK)
        return rc;
    int k = numentries < tlm_gasnet.nodes ? numentries : tlm_gasnet.nodes;
    for (int i = 0; i < k; i++)
        seginfo_table[i] = tlm_gasnet.seg[i];
    return GASNET_OK;
}

int gasnet_getNodeInfo(gasnet_nodeinfo_t *nodeinfo_table, int numentries)
{
    int rc = check_table("gasnet_getNodeInfo", nodeinfo_table, numentries,
                         false);
    if (rc != GASNET_OK)
        return rc;
    int k = numentries < tlm_gasnet.nodes ? numentries : tlm_gasnet.nodes;
    for (int i = 0; i < k; i++)
        nodeinfo_table[i] = tlm_gasnet.nodeinfo[i];
    return GASNET_OK;
}

char *gasnet_getenv(const char *name)
{
    return name ? getenv(name) : NULL;
}

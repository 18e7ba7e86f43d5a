/* armci_init.c - libarmci's job state: ARMCI_Init* / ARMCI_Finalize /
 * armci_msg_init, the ARMCI_* environment settings, the progress-thread
 * choice, and the fatal-error path (ARMCI_Error and argument failures). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "armci_internal.h"

tlm_armci_state_t tlm_armci = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .me = -1,
    .mutex_set = -1,
};

/* ------------------------------------------------------------------------
 * Settings.  Every ARMCI_* environment variable libarmci reads is listed
 * here, and read only here (docs/armci.md documents them). */
#define TLM_ARMCI_SETTINGS(X)                                               \
    X(progress_thread, "PROGRESS_THREAD", "1",                              \
      "Start Telemem's progress thread, so that waits on plain loads of "   \
      "ARMCI memory complete")                                              \
    X(verbose, "VERBOSE", "0", "Rank 0 prints libarmci's settings at init")

typedef struct tlm_armci_settings {
#define X(FIELD, NAME, DEF, DOC) bool FIELD;
    TLM_ARMCI_SETTINGS(X)
#undef X
} tlm_armci_settings_t;

static bool parse_bool(const char *name, const char *v)
{
    static const char *yes[] = {"1", "y", "yes", "on", "true"};
    static const char *no[] = {"0", "n", "no", "off", "false"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (strcasecmp(v, yes[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (strcasecmp(v, no[i]) == 0)
            return false;
    tlm_armci_fail("ARMCI_Init",
                   "ARMCI_%s=\"%s\" is not a boolean (use y/n/1/0/on/off)",
                   name, v);
}

static tlm_armci_settings_t read_settings(void)
{
    tlm_armci_settings_t s;
#define X(FIELD, NAME, DEF, DOC)                                            \
    {                                                                       \
        const char *v = getenv("ARMCI_" NAME);                              \
        s.FIELD = parse_bool(NAME, v && *v ? v : (DEF));                    \
    }
    TLM_ARMCI_SETTINGS(X)
#undef X
    return s;
}

/* ------------------------------------------------------------------------
 * Errors */

static void vreport(const char *call, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fflush(stdout);
    /* One write so that ranks do not interleave inside the line. */
    fprintf(stderr, "[armci r%d] %s: %s\n", tlm_armci.me, call, msg);
    fflush(stderr);
}

void tlm_armci_abort(int code)
{
    int status = code & 0xff;
    if (status == 0)
        status = 1;
    fflush(stdout);
    fflush(stderr);
    tlm_armci_mpi_abort(code == 0 ? 1 : code);
    /* Not MPI: the launcher (telemem-run, mpirun) ends the other ranks
     * when this one exits with a failure. */
    _exit(status);
}

void tlm_armci_fail(const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(call, fmt, ap);
    va_end(ap);
    tlm_armci_abort(1);
}

void tlm_armci_rc_slow(const char *call, int rc, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (rc == TELEMEM_ERR_PEER_DEAD) {
        /* name the rank: the call may have waited for any of them */
        for (int r = 0; r < tlm_armci.n; r++)
            if (telemem_rank_alive(r) == TELEMEM_ERR_PEER_DEAD)
                tlm_armci_fail(call, "rank %d died (%s: %s)", r, what,
                               telemem_status_name(rc));
    }
    tlm_armci_fail(call, "%s (%s: %s)", telemem_strerror(rc), what,
                   telemem_status_name(rc));
}

void tlm_armci_not_ready(const char *call)
{
    tlm_armci_fail(call, "ARMCI is not initialized (call ARMCI_Init first)");
}

void tlm_armci_poll(const char *call)
{
    int rc = telemem_poll();
    if (TLM_ARMCI_UNLIKELY(rc < 0))
        tlm_armci_rc_slow(call, rc, "polling");
}

void tlm_armci_wait_init(tlm_armci_wait_t *w, const char *call, int peer)
{
    w->call = call;
    w->w = (telemem_wait_t)TELEMEM_WAIT_INIT(peer);
}

void tlm_armci_wait_poll(tlm_armci_wait_t *w)
{
    int rc = telemem_wait_poll(&w->w);
    if (TLM_ARMCI_LIKELY(rc == TELEMEM_OK))
        return;
    int peer = w->w.rank;
    /* rc_slow names the rank that died */
    if (peer < 0)
        tlm_armci_rc_slow(w->call, rc, "waiting for another rank");
    tlm_armci_rc_slow(w->call, rc, "waiting for rank %d", peer);
}

void PARMCI_Error(const char *msg, int code)
{
    fflush(stdout);
    fprintf(stderr, "[armci r%d] ARMCI_Error: %s (code %d)\n", tlm_armci.me,
            msg ? msg : "(null)", code);
    tlm_armci_abort(code);
}
TLM_ARMCI_ALIAS(Error);

/* ------------------------------------------------------------------------
 * Start and stop */

/* Telemem's thread level for an ARMCI (MPI) thread level. */
static int thread_level(const char *call, int requested)
{
#if TELEMEM_ARMCI_HAVE_MPI
    if (requested == MPI_THREAD_SINGLE)
        return TELEMEM_THREAD_SINGLE;
    if (requested == MPI_THREAD_FUNNELED)
        return TELEMEM_THREAD_FUNNELED;
    if (requested == MPI_THREAD_SERIALIZED)
        return TELEMEM_THREAD_SERIALIZED;
    if (requested == MPI_THREAD_MULTIPLE)
        return TELEMEM_THREAD_MULTIPLE;
#else
    if (requested >= TELEMEM_THREAD_SINGLE &&
        requested <= TELEMEM_THREAD_MULTIPLE)
        return requested;
#endif
    tlm_armci_fail(call, "unknown thread level %d", requested);
}

static void stop(const char *call);

/* The program's MPI_Finalize with ARMCI still up (ARMCI-MPI accepts a
 * program that ends so): it implies every ARMCI_Finalize and
 * armci_msg_finalize still owed. */
static void end_in_mpi_finalize(void)
{
    tlm_armci.armci_inits = 0;
    tlm_armci.msg_inits = 0;
    stop("MPI_Finalize");
}

/* Bring up Telemem and the ARMCI state once; later callers only count. */
static void start(const char *call, int *argc, char ***argv, int level)
{
    if (atomic_load(&tlm_armci.ready))
        return;
    if (tlm_armci.ended_telemem)
        tlm_armci_fail(call, "ARMCI was finalized and cannot start again "
                             "(Telemem joins a job once): keep one "
                             "ARMCI_Init / ARMCI_Finalize pair around the "
                             "program (inner pairs are counted)");
    tlm_armci_settings_t s = read_settings();
    int required = level;
    if (s.progress_thread)
        required |= TELEMEM_INIT_PROGRESS_THREAD;
    int provided = 0;
    int rc = telemem_initialize_thread(argc, argv, required, &provided);
    if (rc == TELEMEM_ERR_ALREADY_INITIALIZED) {
        /* The program runs Telemem itself: use it, leave it running. */
        tlm_armci.own_telemem = false;
    } else {
        tlm_armci_rc(call, rc, "telemem_initialize_thread");
        tlm_armci.own_telemem = true;
    }
    tlm_armci.progress = s.progress_thread;
    tlm_armci.me = telemem_rank();
    tlm_armci.n = telemem_nranks();
    int n = tlm_armci.n;
    tlm_armci.notify_sent = calloc((size_t)n, sizeof(int));
    tlm_armci.notify_waited = calloc((size_t)n, sizeof(int));
    tlm_armci.notify_received = calloc((size_t)n, sizeof(atomic_int));
    if (!tlm_armci.notify_sent || !tlm_armci.notify_waited ||
        !tlm_armci.notify_received)
        tlm_armci_fail(call, "out of memory (%d ranks)", n);
    tlm_armci.next_ctx = 1;
    tlm_armci.mutex_set = -1;
    tlm_armci_am_init();
    tlm_armci_grp_init();
    atomic_store_explicit(&tlm_armci.ready, 1, memory_order_release);
    tlm_armci_mpi_on_finalize(end_in_mpi_finalize);
    if (s.verbose && tlm_armci.me == 0) {
        printf("libarmci over Telemem %s: %d ranks, transport %s, progress "
               "thread %s, MPI communicators %s\n",
               telemem_version(), n, telemem_transport_name(n > 1 ? 1 : 0),
               s.progress_thread ? "on" : "off (ARMCI_PROGRESS_THREAD=0)",
               tlm_armci.mpi_mode ? "on" : "off");
        fflush(stdout);
    }
}

static void stop(const char *call)
{
    if (tlm_armci.armci_inits + tlm_armci.msg_inits > 0 ||
        !atomic_load(&tlm_armci.ready))
        return;
    tlm_armci_rc(call, telemem_quiet(), "completing operations");
    if (tlm_armci.mutex_set >= 0) {
        tlm_armci_rc(call, telemem_mutexes_destroy(tlm_armci.mutex_set),
                     "destroying the mutexes of ARMCI_Create_mutexes");
        tlm_armci.mutex_set = -1;
    }
    /* No rank may still address memory freed below. */
    tlm_armci_rc(call, telemem_barrier(), "barrier");
    tlm_armci_mem_fini();
    tlm_armci_grp_fini();
    tlm_armci_am_fini();
    atomic_store(&tlm_armci.ready, 0);
    free(tlm_armci.notify_sent);
    free(tlm_armci.notify_waited);
    free(tlm_armci.notify_received);
    tlm_armci.notify_sent = tlm_armci.notify_waited = NULL;
    tlm_armci.notify_received = NULL;
    if (tlm_armci.own_telemem) {
        tlm_armci.ended_telemem = true;
        tlm_armci_rc(call, telemem_finalize(), "telemem_finalize");
    }
    tlm_armci.own_telemem = false;
}

/* ARMCI_Init* calls are counted, as in ARMCI-MPI (GA and TCGMSG each
 * call ARMCI_Init): only the first starts ARMCI, and only the
 * ARMCI_Finalize that balances it ends it. */
static int init_common(const char *call, int *argc, char ***argv, int level)
{
    if (tlm_armci.armci_inits == 0)
        start(call, argc, argv, level);
    tlm_armci.armci_inits++;
    return 0;
}

int PARMCI_Init(void)
{
    return init_common("ARMCI_Init", NULL, NULL, TELEMEM_THREAD_SINGLE);
}
TLM_ARMCI_ALIAS(Init);

int PARMCI_Init_args(int *argc, char ***argv)
{
    return init_common("ARMCI_Init_args", argc, argv, TELEMEM_THREAD_SINGLE);
}
TLM_ARMCI_ALIAS(Init_args);

int PARMCI_Init_thread(int armci_requested)
{
    int level = thread_level("ARMCI_Init_thread", armci_requested);
    return init_common("ARMCI_Init_thread", NULL, NULL, level);
}
TLM_ARMCI_ALIAS(Init_thread);

#if TELEMEM_ARMCI_HAVE_MPI
int PARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm)
{
    static const char call[] = "ARMCI_Init_thread_comm";
    int level = thread_level(call, armci_requested);
    init_common(call, NULL, NULL, level);
    int inited = 0, result = MPI_UNEQUAL;
    MPI_Initialized(&inited);
    if (inited && comm != MPI_COMM_NULL)
        MPI_Comm_compare(comm, MPI_COMM_WORLD, &result);
    if (result != MPI_IDENT && result != MPI_CONGRUENT)
        tlm_armci_fail(call, "only MPI_COMM_WORLD (or a communicator "
                             "congruent with it) is supported: ARMCI ranks "
                             "are the ranks of the whole job");
    return 0;
}
TLM_ARMCI_ALIAS(Init_thread_comm);
#endif

int PARMCI_Initialized(void)
{
    return tlm_armci.armci_inits > 0 && atomic_load(&tlm_armci.ready);
}
TLM_ARMCI_ALIAS(Initialized);

int PARMCI_Finalize(void)
{
    /* Without a matching ARMCI_Init (a second finalize: TCGMSG's
     * tcg_pend() after GA_Terminate) it does nothing, as in ARMCI-MPI. */
    if (tlm_armci.armci_inits == 0)
        return 0;
    if (--tlm_armci.armci_inits > 0)
        return 0;
    stop("ARMCI_Finalize");
    return 0;
}
TLM_ARMCI_ALIAS(Finalize);

void PARMCI_Cleanup(void)
{
    /* ARMCI_Cleanup releases system resources before an abnormal exit.
     * Telemem's launcher already removes shared-memory objects of a job
     * that ends, and local memory goes with the process: nothing to do,
     * and nothing here may communicate. */
}
TLM_ARMCI_ALIAS(Cleanup);

void armci_msg_init(int *argc, char ***argv)
{
    tlm_armci_mpi_init_if_launched(argc, argv);
    start("armci_msg_init", argc, argv, TELEMEM_THREAD_SINGLE);
    tlm_armci.msg_inits++;
}

/* The last armci_msg_finalize ends the messaging layer and so ARMCI over
 * it: GA's armci_msg_finalize is MPI_Finalize, which ARMCI over MPI
 * cannot outlive.  A program may end with it alone, without
 * ARMCI_Finalize (GA's test programs do), call it without armci_msg_init
 * (after its own MPI_Init) or after ARMCI_Finalize; an ARMCI_Finalize
 * after it does nothing.  Then MPI ends (tlm_armci_mpi_finalize_msg). */
void armci_msg_finalize(void)
{
    if (tlm_armci.msg_inits > 0 && --tlm_armci.msg_inits > 0)
        return;
    tlm_armci.armci_inits = 0;
    stop("armci_msg_finalize");
    tlm_armci_mpi_finalize_msg();
}

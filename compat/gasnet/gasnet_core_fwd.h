/* gasnet_core_fwd.h - the telemem conduit's names that come before the
 * rest of gasnet.h: its identification and compile-time constants, the
 * error codes and the core API's types (GASNet-1 installs this header in
 * every <conduit>-conduit/ directory; gasnet.h includes it). */
#ifndef GASNET_CORE_FWD_H
#define GASNET_CORE_FWD_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_core_fwd.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** @name Compile-time constants */
/**@{*/

/** Version of the GASNet specification this header follows. */
#define GASNET_SPEC_VERSION_MAJOR 1
#define GASNET_SPEC_VERSION_MINOR 8
/** Deprecated alias of GASNET_SPEC_VERSION_MAJOR. */
#define GASNET_VERSION GASNET_SPEC_VERSION_MAJOR

/** This GASNet runs over Telemem (the "conduit"). */
#define GASNET_CONDUIT_TELEMEM 1
#define GASNET_CONDUIT_NAME TELEMEM
#define GASNET_CONDUIT_NAME_STR "TELEMEM"
/** Name and version of the core API implementation. */
#define GASNET_CORE_NAME TELEMEM
#define GASNET_CORE_NAME_STR "TELEMEM"
#define GASNET_CORE_VERSION 1.0
#define GASNET_CORE_VERSION_STR "1.0"

/* GASNET_SEGMENT_FAST (gasnet_config.h): segments are allocated by
 * gasnet_attach() with telemem_malloc_all() (ordinary memory, registered
 * with Telemem, never pinned). */

/** Segment bases differ between nodes. */
#define GASNET_ALIGNED_SEGMENTS 0

/** Granularity of segment sizes and bases (the system page size). */
#define GASNET_PAGESIZE GASNETI_PAGESIZE

/** Most nodes in one job (Telemem ranks are C ints). */
#define GASNET_MAXNODES 0x7FFFFFFFu

/** No shared-memory cross-mapping of segments (gasnet_nodeinfo_t.offset is
 *  always 0). */
#define GASNET_PSHM 0

#define GASNETC_STR2_(x) #x
#define GASNETC_STR_(x) GASNETC_STR2_(x)

/** The compile-time configuration, compared by string equality to check
 *  that a client and the library agree.  The same text is embedded in the
 *  library ("$GASNetConfig: ...$"). */
#define GASNET_CONFIG_STRING                                                \
    "RELEASE=" GASNETC_STR_(GASNET_RELEASE_VERSION_MAJOR) "."               \
    GASNETC_STR_(GASNET_RELEASE_VERSION_MINOR) "."                          \
    GASNETC_STR_(GASNET_RELEASE_VERSION_PATCH) ",SPEC=1.8,"                 \
    "CONDUIT=TELEMEM(TELEMEM-1.0/TELEMEM-1.0),THREADMODEL="        \
    GASNETC_THREADMODEL_STR ","                                             \
    "SEGMENT=FAST,PTR=" GASNETC_STR_(SIZEOF_VOID_P) "byte,noalign,nopshm"

/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Errors */
/**@{*/

/** Success; every GASNET_ERR_* is non-zero (the specification's values). */
#define GASNET_OK 0
#define _GASNET_ERR_BASE 10000
/** gasnet_init()/gasnet_attach() not called (or called twice). */
#define GASNET_ERR_NOT_INIT (_GASNET_ERR_BASE + 1)
/** The communication system or memory failed. */
#define GASNET_ERR_RESOURCE (_GASNET_ERR_BASE + 2)
/** An argument is invalid (the message on stderr says which). */
#define GASNET_ERR_BAD_ARG (_GASNET_ERR_BASE + 3)
/** A try_* call: the operation is not complete yet. */
#define GASNET_ERR_NOT_READY (_GASNET_ERR_BASE + 4)
/** A barrier's names or flags did not match. */
#define GASNET_ERR_BARRIER_MISMATCH (_GASNET_ERR_BASE + 5)

/** Symbolic name of an error code ("GASNET_ERR_BAD_ARG"); "*unknown*" for
 *  other values.  Never NULL; callable at any time. */
GASNETC_API const char *gasnet_ErrorName(int errval);
/** One-line description of an error code.  Never NULL. */
GASNETC_API const char *gasnet_ErrorDesc(int errval);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Core types */
/**@{*/

/** 0-based node index. */
typedef uint32_t gasnet_node_t;
/** Index into the active-message handler table (0..255). */
typedef uint8_t gasnet_handler_t;
/** A 32-bit handler argument. */
typedef int32_t gasnet_handlerarg_t;
/** The message being handled; valid only inside its handler. */
typedef struct gasnetc_token *gasnet_token_t;

/* Handlers have one of the prototypes of the active-message section and
 * are stored unprototyped, as GASNet-1 declares them, so that a table can
 * be initialised with plain function names. */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
typedef void (*gasnetc_handler_fn_t)();
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic pop
#endif

/** One client handler for gasnet_attach(): @c index 128..255, or 0 to let
 *  gasnet_attach() choose one (it writes the choice back). */
typedef struct {
    gasnet_handler_t index;
    gasnetc_handler_fn_t fnptr;
} gasnet_handlerentry_t;

/** A node's remote-access segment. */
typedef struct {
    void *addr;
    uintptr_t size;
} gasnet_seginfo_t;

/** Where a node runs: @c host numbers the machines of the job (0-based,
 *  in order of their lowest node), @c supernode the groups of nodes that
 *  share memory (here the same as host), @c offset is always 0 (segments
 *  are not cross-mapped). */
typedef struct {
    gasnet_node_t host;
    gasnet_node_t supernode;
    intptr_t offset;
} gasnet_nodeinfo_t;

/** Handler-safe lock (see gasnet_hsl_lock()). */
typedef struct {
    pthread_mutex_t lock_;
    void *owner_; /* the holding thread's mark, NULL when free */
} gasnet_hsl_t;
#define GASNET_HSL_INITIALIZER {PTHREAD_MUTEX_INITIALIZER, 0}

/** Per-thread metadata handle of the threadinfo optimisation (unused in
 *  GASNET_SEQ: always NULL). */
typedef void *gasnet_threadinfo_t;
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* GASNET_CORE_FWD_H */

/* gasnet_coll_fwd.h - the names of GASNet-1's collectives extension that
 * come before the declarations: the GASNET_COLL_* flags, images, handles,
 * teams and the reduction callbacks' types (gasnet.h includes it before
 * gasnet_core.h; gasnet_coll.h declares the calls). */
#ifndef GASNET_COLL_FWD_H
#define GASNET_COLL_FWD_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_coll_fwd.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Synchronisation modes: one IN_ and one OUT_ flag per call. */
#define GASNET_COLL_IN_NOSYNC (1 << 0)
#define GASNET_COLL_IN_MYSYNC (1 << 1)
#define GASNET_COLL_IN_ALLSYNC (1 << 2)
#define GASNET_COLL_OUT_NOSYNC (1 << 3)
#define GASNET_COLL_OUT_MYSYNC (1 << 4)
#define GASNET_COLL_OUT_ALLSYNC (1 << 5)
#define GASNET_COLL_SYNC_FLAG_MASK 0x3F
/** Address modes. */
#define GASNET_COLL_SINGLE (1 << 6)
#define GASNET_COLL_LOCAL (1 << 7)
/** Accepted and ignored (hints). */
#define GASNET_COLL_AGGREGATE (1 << 8)
#define GASNET_COLL_FIXED_THREADS_PER_NODE (1 << 9)
#define GASNET_COLL_DST_IN_SEGMENT (1 << 10)
#define GASNET_COLL_SRC_IN_SEGMENT (1 << 11)
/** Reduction hints and scan kinds. */
#define GASNET_COLL_REDUCE_OP_SUM (1 << 12)
#define GASNET_COLL_REDUCE_OP_MAX (1 << 13)
#define GASNET_COLL_REDUCE_OP_MIN (1 << 14)
#define GASNET_COLL_REDUCE_OP_CUSTOM (1 << 15)
#define GASNET_COLL_INCLUSIVE_SCAN (1 << 16)
#define GASNET_COLL_EXCLUSIVE_SCAN (1 << 17)
#define GASNET_COLL_DISABLE_AUTOTUNE (1 << 18)
#define GASNET_COLL_NO_IMAGES (1 << 19)

/** An image (one per node here: image i is node i). */
typedef uint32_t gasnet_image_t;

/** A collective in flight; GASNET_COLL_INVALID_HANDLE is a complete one. */
typedef struct gasnete_coll_op *gasnet_coll_handle_t;
#define GASNET_COLL_INVALID_HANDLE ((gasnet_coll_handle_t)0)

/** A team: GASNET_TEAM_ALL (every node) or one made by
 *  gasnet_coll_team_split(). */
typedef struct gasnete_coll_team *gasnet_team_handle_t;
GASNETC_API extern gasnet_team_handle_t gasnete_coll_team_all;
#define GASNET_TEAM_ALL gasnete_coll_team_all

/** Reduction callbacks: gasnet_coll_init() records a table, reductions
 *  name an entry by its index. */
typedef gasnet_handlerarg_t gasnet_coll_fn_handle_t;
typedef void (*gasnet_coll_reduce_fn_t)(void *results, size_t result_count,
                                        const void *left_operands,
                                        size_t left_count,
                                        const void *right_operands,
                                        size_t elem_size, int flags, int arg);
typedef struct {
    gasnet_coll_reduce_fn_t fnptr;
    unsigned int flags;
} gasnet_coll_fn_entry_t;
#define GASNET_COLL_AMSAFE (1 << 0)
#define GASNET_COLL_NONCOMM (1 << 1)

#ifdef __cplusplus
}
#endif

#endif /* GASNET_COLL_FWD_H */

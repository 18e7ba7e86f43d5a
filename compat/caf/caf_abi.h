/* caf_abi.h - the coarray ABI of gfortran 12 (-fcoarray=lib) as the
 * compiler calls it: its array descriptor, vector subscripts, reference
 * chains, the codes it passes, and every _gfortran_caf_* entry point that
 * libcaf_telemem exports.  Written from what gfortran 12.2 emits (see
 * docs/caf.md, "The ABI"); not installed: programs never include it. */
#ifndef TLM_CAF_ABI_H
#define TLM_CAF_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLM_CAF_API __attribute__((visibility("default")))

/* gfortran allows 15 dimensions (rank + corank). */
#define TLM_CAF_MAX_DIM 15

/* Basic types of the descriptor's dtype.type. */
enum {
    TLM_BT_UNKNOWN = 0, TLM_BT_INTEGER, TLM_BT_LOGICAL, TLM_BT_REAL,
    TLM_BT_COMPLEX, TLM_BT_DERIVED, TLM_BT_CHARACTER, TLM_BT_CLASS
};

/* STAT= values of ISO_FORTRAN_ENV (gfortran's numbers: its STAT_UNLOCKED
 * is 0). */
enum {
    TLM_CAF_STAT_LOCKED = 1,
    TLM_CAF_STAT_LOCKED_OTHER_IMAGE = 2,
    TLM_CAF_STAT_UNLOCKED = 0,
    TLM_CAF_STAT_STOPPED_IMAGE = 6000,
    TLM_CAF_STAT_FAILED_IMAGE = 6001,
    TLM_CAF_STAT_UNLOCKED_FAILED_IMAGE = 6002,
    /* not the standard's: OpenCoarrays' STAT= for an image listed twice
     * in SYNC IMAGES, which its tests expect */
    TLM_CAF_STAT_DUP_SYNC_IMAGES = 3
};

/* What _gfortran_caf_register is asked to create. */
typedef enum {
    TLM_CAF_REG_COARRAY_STATIC = 0,
    TLM_CAF_REG_COARRAY_ALLOC = 1,
    TLM_CAF_REG_LOCK_STATIC = 2,
    TLM_CAF_REG_LOCK_ALLOC = 3,
    TLM_CAF_REG_CRITICAL = 4,
    TLM_CAF_REG_EVENT_STATIC = 5,
    TLM_CAF_REG_EVENT_ALLOC = 6,
    TLM_CAF_REG_REGISTER_ONLY = 7, /* token of an allocatable component */
    TLM_CAF_REG_ALLOCATE_ONLY = 8  /* its memory, one image alone */
} tlm_caf_register_t;

typedef enum {
    TLM_CAF_DEREG_DEREGISTER = 0,
    TLM_CAF_DEREG_DEALLOCATE_ONLY = 1
} tlm_caf_deregister_t;

/* atomic_op's operation. */
enum { TLM_CAF_ATOMIC_ADD = 1, TLM_CAF_ATOMIC_AND, TLM_CAF_ATOMIC_OR,
       TLM_CAF_ATOMIC_XOR };

/* co_reduce's opr_flags. */
enum { TLM_CAF_BYREF = 1, TLM_CAF_HIDDEN_STRLEN = 2, TLM_CAF_ARG_VALUE = 4,
       TLM_CAF_ARG_DESC = 8 };

typedef struct {
    ptrdiff_t stride; /* in elements (of span bytes) */
    ptrdiff_t lbound;
    ptrdiff_t ubound;
} tlm_gfc_dim_t;

typedef struct {
    size_t elem_len;
    int version;
    signed char rank;
    signed char type;
    signed short attribute;
} tlm_gfc_dtype_t;

/* Rank and type of a descriptor as int: both are small and never negative
 * in the descriptors gfortran passes to the coarray ABI. */
#define TLM_GFC_RANK(d) ((int)(unsigned char)(d)->dtype.rank)
#define TLM_GFC_TYPE(d) ((int)(unsigned char)(d)->dtype.type)

/* gfortran's array descriptor (GCC 8 and later). */
typedef struct {
    void *base_addr;
    size_t offset;
    tlm_gfc_dtype_t dtype;
    ptrdiff_t span;
    tlm_gfc_dim_t dim[TLM_CAF_MAX_DIM];
} tlm_gfc_desc_t;

/* One dimension of a vector-subscripted coindexed section. */
typedef struct {
    size_t nvec; /* 0: triplet, else vector of nvec entries */
    union {
        struct {
            void *vector;
            int kind;
        } v;
        struct {
            ptrdiff_t lower_bound, upper_bound, stride;
        } triplet;
    } u;
} tlm_caf_vector_t;

enum { TLM_CAF_REF_COMPONENT = 0, TLM_CAF_REF_ARRAY = 1,
       TLM_CAF_REF_STATIC_ARRAY = 2 };
enum { TLM_CAF_ARR_NONE = 0, TLM_CAF_ARR_VECTOR, TLM_CAF_ARR_FULL,
       TLM_CAF_ARR_RANGE, TLM_CAF_ARR_SINGLE, TLM_CAF_ARR_OPEN_END,
       TLM_CAF_ARR_OPEN_START };

/* One link of the reference chain of the *_by_ref calls. */
typedef struct tlm_caf_ref {
    struct tlm_caf_ref *next;
    int type;
    size_t item_size;
    union {
        struct {
            ptrdiff_t offset;
            ptrdiff_t caf_token_offset;
        } c;
        struct {
            unsigned char mode[TLM_CAF_MAX_DIM];
            int static_array_type;
            union {
                struct {
                    ptrdiff_t start, end, stride;
                } s;
                struct {
                    void *vector;
                    size_t nvec;
                    int kind;
                } v;
            } dim[TLM_CAF_MAX_DIM];
        } a;
    } u;
} tlm_caf_ref_t;

typedef void *tlm_caf_token_p;
typedef void *tlm_caf_team_p;

#define TLM_CAF_ENTRY(name) _gfortran_caf_##name

TLM_CAF_API void _gfortran_caf_init(int *argc, char ***argv);
TLM_CAF_API void _gfortran_caf_finalize(void);
TLM_CAF_API int _gfortran_caf_this_image(int distance);
TLM_CAF_API int _gfortran_caf_num_images(int distance, int failed);
TLM_CAF_API void _gfortran_caf_register(size_t size, int type,
                                        tlm_caf_token_p *token,
                                        tlm_gfc_desc_t *desc, int *stat,
                                        char *errmsg, size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_deregister(tlm_caf_token_p *token, int type,
                                          int *stat, char *errmsg,
                                          size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_sync_all(int *stat, char *errmsg,
                                        size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_sync_memory(int *stat, char *errmsg,
                                           size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_sync_images(int count, int images[],
                                           int *stat, char *errmsg,
                                           size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_stop_numeric(int code, bool quiet)
    __attribute__((noreturn));
TLM_CAF_API void _gfortran_caf_stop_str(const char *s, size_t len,
                                        bool quiet)
    __attribute__((noreturn));
TLM_CAF_API void _gfortran_caf_error_stop_str(const char *s, size_t len,
                                              bool quiet)
    __attribute__((noreturn));
TLM_CAF_API void _gfortran_caf_error_stop(int code, bool quiet)
    __attribute__((noreturn));
TLM_CAF_API void _gfortran_caf_fail_image(void) __attribute__((noreturn));
TLM_CAF_API void _gfortran_caf_co_broadcast(tlm_gfc_desc_t *a,
                                            int source_image, int *stat,
                                            char *errmsg, size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_co_sum(tlm_gfc_desc_t *a, int result_image,
                                      int *stat, char *errmsg,
                                      size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_co_min(tlm_gfc_desc_t *a, int result_image,
                                      int *stat, char *errmsg, int a_len,
                                      size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_co_max(tlm_gfc_desc_t *a, int result_image,
                                      int *stat, char *errmsg, int a_len,
                                      size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_co_reduce(tlm_gfc_desc_t *a,
                                         void *(*opr)(void *, void *),
                                         int opr_flags, int result_image,
                                         int *stat, char *errmsg, int a_len,
                                         size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_get(tlm_caf_token_p token, size_t offset,
                                   int image_index, tlm_gfc_desc_t *src,
                                   tlm_caf_vector_t *src_vector,
                                   tlm_gfc_desc_t *dst, int src_kind,
                                   int dst_kind, bool may_require_tmp,
                                   int *stat);
TLM_CAF_API void _gfortran_caf_send(tlm_caf_token_p token, size_t offset,
                                    int image_index, tlm_gfc_desc_t *dst,
                                    tlm_caf_vector_t *dst_vector,
                                    tlm_gfc_desc_t *src, int dst_kind,
                                    int src_kind, bool may_require_tmp,
                                    int *stat, void *team);
TLM_CAF_API void _gfortran_caf_sendget(tlm_caf_token_p dst_token,
                                       size_t dst_offset, int dst_image,
                                       tlm_gfc_desc_t *dst,
                                       tlm_caf_vector_t *dst_vector,
                                       tlm_caf_token_p src_token,
                                       size_t src_offset, int src_image,
                                       tlm_gfc_desc_t *src,
                                       tlm_caf_vector_t *src_vector,
                                       int dst_kind, int src_kind,
                                       bool may_require_tmp, int *stat);
TLM_CAF_API void _gfortran_caf_get_by_ref(tlm_caf_token_p token, int image,
                                          tlm_gfc_desc_t *dst,
                                          tlm_caf_ref_t *refs, int dst_kind,
                                          int src_kind, bool may_require_tmp,
                                          bool dst_reallocatable, int *stat,
                                          int src_type);
TLM_CAF_API void _gfortran_caf_send_by_ref(tlm_caf_token_p token, int image,
                                           tlm_gfc_desc_t *src,
                                           tlm_caf_ref_t *refs, int dst_kind,
                                           int src_kind,
                                           bool may_require_tmp,
                                           bool dst_reallocatable, int *stat,
                                           int dst_type);
TLM_CAF_API void _gfortran_caf_sendget_by_ref(
    tlm_caf_token_p dst_token, int dst_image, tlm_caf_ref_t *dst_refs,
    tlm_caf_token_p src_token, int src_image, tlm_caf_ref_t *src_refs,
    int dst_kind, int src_kind, bool may_require_tmp, int *dst_stat,
    int *src_stat, int dst_type, int src_type);
TLM_CAF_API int _gfortran_caf_is_present(tlm_caf_token_p token, int image,
                                         tlm_caf_ref_t *refs);
TLM_CAF_API void _gfortran_caf_atomic_define(tlm_caf_token_p token,
                                             size_t offset, int image,
                                             void *value, int *stat,
                                             int type, int kind);
TLM_CAF_API void _gfortran_caf_atomic_ref(tlm_caf_token_p token,
                                          size_t offset, int image,
                                          void *value, int *stat, int type,
                                          int kind);
TLM_CAF_API void _gfortran_caf_atomic_cas(tlm_caf_token_p token,
                                          size_t offset, int image,
                                          void *old, void *compare,
                                          void *new_val, int *stat, int type,
                                          int kind);
TLM_CAF_API void _gfortran_caf_atomic_op(int op, tlm_caf_token_p token,
                                         size_t offset, int image,
                                         void *value, void *old, int *stat,
                                         int type, int kind);
TLM_CAF_API void _gfortran_caf_lock(tlm_caf_token_p token, size_t index,
                                    int image, int *acquired, int *stat,
                                    char *errmsg, size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_unlock(tlm_caf_token_p token, size_t index,
                                      int image, int *stat, char *errmsg,
                                      size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_event_post(tlm_caf_token_p token,
                                          size_t index, int image,
                                          int *stat, char *errmsg,
                                          size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_event_wait(tlm_caf_token_p token,
                                          size_t index, int until_count,
                                          int *stat, char *errmsg,
                                          size_t errmsg_len);
TLM_CAF_API void _gfortran_caf_event_query(tlm_caf_token_p token,
                                           size_t index, int image,
                                           int *count, int *stat);
TLM_CAF_API void _gfortran_caf_failed_images(tlm_gfc_desc_t *array,
                                             tlm_caf_team_p *team,
                                             int *kind);
TLM_CAF_API void _gfortran_caf_stopped_images(tlm_gfc_desc_t *array,
                                              tlm_caf_team_p *team,
                                              int *kind);
TLM_CAF_API int _gfortran_caf_image_status(int image, tlm_caf_team_p *team);
TLM_CAF_API void _gfortran_caf_random_init(bool repeatable,
                                           bool image_distinct);
TLM_CAF_API void _gfortran_caf_form_team(int team_number,
                                         tlm_caf_team_p *team, int index);
TLM_CAF_API void _gfortran_caf_change_team(tlm_caf_team_p *team,
                                           int coselector);
TLM_CAF_API void _gfortran_caf_end_team(tlm_caf_team_p *team);
TLM_CAF_API void _gfortran_caf_sync_team(tlm_caf_team_p *team, int unused);
TLM_CAF_API int _gfortran_caf_team_number(tlm_caf_team_p *team);
TLM_CAF_API tlm_caf_team_p _gfortran_caf_get_team(int32_t *level);

#endif /* TLM_CAF_ABI_H */

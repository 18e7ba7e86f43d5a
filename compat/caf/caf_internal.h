/* caf_internal.h - state and helpers shared by libcaf_telemem's source
 * files (not installed): the job and image states, tokens, teams, array
 * shapes, STAT=/ERRMSG= reporting and the waits. */
#ifndef TLM_CAF_INTERNAL_H
#define TLM_CAF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caf_abi.h"
#include "telemem.h"

/* gfortran's real(16) and complex(16): GCC spells them _Float128, clang
 * (the fuzzing and clang-tidy builds) __float128. */
#if defined(__clang__)
typedef __float128 tlm_f128;
typedef _Complex __float128 tlm_c128;
#else
typedef _Float128 tlm_f128;
typedef _Complex _Float128 tlm_c128;
#endif

#define TLM_CAF_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* What one image knows of another (tlm_caf.ctl->state[i]). */
enum { TLM_CAF_RUNNING = 0, TLM_CAF_STOPPED = 1, TLM_CAF_FAILED = 2 };

/* STAT= of errors that are not one of the standard's codes: this base
 * plus the Telemem status's magnitude (docs/caf.md, "STAT= values"). */
#define TLM_CAF_STAT_TELEMEM_BASE 7000
/* STAT= of a bad argument found by the runtime itself. */
#define TLM_CAF_STAT_INVALID 7001

/* The control block every image has (one telemem_malloc_all block):
 * arrived[j] counts image j's SYNC IMAGES posts to this image (only j
 * writes it), state[j] is what j said of itself when it stopped or
 * failed, xchg[j] is j's value in an exchange among a team's images
 * (FORM TEAM). */
typedef struct {
    volatile int64_t *arrived;
    volatile int64_t *state;
    volatile int64_t *xchg;
} tlm_caf_ctl_t;

/* A coarray, lock, event or critical construct: what caf_token_t points
 * at. */
typedef struct tlm_caf_token {
    void *mem;              /* this image's memory */
    void **bases;           /* every image's (collective ones), or NULL */
    size_t size;            /* bytes of mem */
    int type;               /* tlm_caf_register_t */
    int64_t id;             /* registration number (tlm_caf_token_by_id),
                             * or -1 */
    const struct tlm_caf_team *team; /* allocated inside this team (its
                             * images' memory registered, not a block) */
    int mutex_set;          /* locks and critical: Telemem mutex set */
    size_t nlocks;          /* locks: how many */
    tlm_gfc_desc_t *desc;   /* descriptor given at registration */
    uint64_t *held;         /* locks held by this image: index*n + rank */
    size_t nheld, capheld;
    /* every token the runtime holds (tlm_caf.tokens): gfortran never
     * deregisters some (components' tokens) */
    struct tlm_caf_token *prev_all, *next_all;
} tlm_caf_token_t;

/* A team: its members' ranks in the initial team, in image order. */
typedef struct tlm_caf_team {
    int number;             /* TEAM_NUMBER of FORM TEAM */
    int size;               /* images */
    int me;                 /* this image's index - 1 */
    int *ranks;             /* size entries */
    struct tlm_caf_team *parent;
    bool active;            /* between CHANGE TEAM and END TEAM */
    uint32_t cid;           /* the same on every member: tags collectives */
    uint32_t seq;           /* collectives begun in this team */
    uint32_t formed;        /* FORM TEAMs executed in this team */
    uint32_t allocs;        /* coarrays ALLOCATEd inside this team */
    struct tlm_caf_team *next_all; /* every team formed (tlm_caf.teams) */
} tlm_caf_team_t;

typedef struct tlm_caf {
    bool inited, finalizing;
    bool coll_broken;       /* a Telemem collective failed (a process
                             * died): SYNC ALL is pairwise from then on */
    bool early;             /* started by a constructor, before main */
    int me, n;              /* rank and images of the initial team */
    int64_t *ctl_block;     /* this image's control block */
    void **ctl_bases;       /* every image's */
    tlm_caf_ctl_t ctl;      /* views into ctl_block */
    int64_t *posted;        /* SYNC IMAGES posts sent, by image */
    int64_t *seen;          /* arrivals consumed, by image */
    int am_ref;             /* active-message id of the *_by_ref calls */
    int am_ref_reply;
    int next_id;            /* next collective registration number */
    tlm_caf_token_t **by_id;
    size_t by_id_cap;
    tlm_caf_team_t initial;
    tlm_caf_team_t *team;   /* the current team */
    tlm_caf_token_t *tokens; /* every token (the runtime owns them) */
    tlm_caf_team_t *teams;  /* every team formed (team_type holds none) */
} tlm_caf_t;

extern tlm_caf_t tlm_caf;

/* ---- errors (caf_error.c) ---- */

/* Report an error of a statement: with STAT= present, set it to @p code and
 * ERRMSG= (if present) to the message, blank padded, and return; without
 * it, print "Fortran runtime error on image N: message" and end the job
 * (error termination, exit status 1). */
void tlm_caf_report(int *stat, char *errmsg, size_t errmsg_len, int code,
                    const char *fmt, ...) TLM_CAF_PRINTF(5, 6);
/* STAT= for a Telemem status (PEER_DEAD is STAT_FAILED_IMAGE). */
int tlm_caf_stat_of(int status);
/* The STAT= code of Telemem status @p rc of @p what, with its message in
 * msg ("what: cause (STATUS)"); marks dead images as failed first.  0 for
 * TELEMEM_OK. */
int tlm_caf_status_msg(int rc, const char *what, char *msg, size_t cap);
/* The success path: STAT= to 0, ERRMSG= untouched. */
static inline void tlm_caf_ok(int *stat)
{
    if (stat)
        *stat = 0;
}
/* Print to stderr and end the job with @p code now (error stop). */
void tlm_caf_die(int code, const char *fmt, ...) TLM_CAF_PRINTF(2, 3)
    __attribute__((noreturn));
/* Report Telemem status @p rc of @p what (with a rank) through
 * tlm_caf_report; marks dead images as failed first.  Returns 1 when it
 * reported an error, 0 for TELEMEM_OK. */
int tlm_caf_check(int rc, int *stat, char *errmsg, size_t errmsg_len,
                  const char *what, int image);

/* ---- images (caf_init.c, caf_image.c) ---- */

/* Make sure the runtime is up (a program calls caf_init first; a C test
 * may not). */
void tlm_caf_need_init(void);
/* Rank (0-based, initial team) of @p image of the current team, or -1 if
 * out of range. */
int tlm_caf_rank_of(int image);
/* Update state[] from Telemem's liveness: a rank that died without
 * saying so is FAILED. */
void tlm_caf_refresh_dead(void);
/* This image's view of rank r: TLM_CAF_RUNNING, _STOPPED or _FAILED. */
int tlm_caf_state(int rank);
/* Tell every image that this one has stopped (st = TLM_CAF_STOPPED) or
 * failed, then wait, serving requests, until no image is running; then
 * leave Telemem.  Never returns to the program. */
void tlm_caf_terminate(int st, int code) __attribute__((noreturn));

/* Register the active-message handlers of the *_by_ref calls
 * (caf_byref.c). */
void tlm_caf_ref_init(void);

/* ---- teams (caf_team.c) ---- */

/* Every member of t gets every member's value v (out[i]: member i's),
 * through the control blocks' exchange slots, between two SYNC IMAGES of
 * the members.  Returns a STAT= code, the message beginning with what. */
int tlm_caf_team_exchange(const struct tlm_caf_team *t, int64_t v,
                          int64_t *out, const char *what, char *msg,
                          size_t cap);

/* ---- sync (caf_sync.c) ---- */

/* SYNC IMAGES with the ranks @p ranks (initial team numbering); returns a
 * STAT= code (0 ok) and writes a message into msg. */
int tlm_caf_sync_ranks(const int *ranks, int count, char *msg, size_t cap);
/* SYNC ALL of the current team; returns a STAT= code. */
int tlm_caf_sync_team_all(char *msg, size_t cap);

/* ---- collectives within a team (caf_tcoll.c) ---- */

/* acc = acc (op) v over a whole argument of @p bytes; 0, or -1 for an
 * operation the runtime cannot apply. */
typedef int (*tlm_caf_fold_fn_t)(void *acc, const void *v, size_t bytes,
                                 void *ctx);
/* Register the collectives' active-message handler (caf_init). */
void tlm_caf_tcoll_init(void);
/* Broadcast @p bytes of buf from team index @p root (0-based) to every
 * image of team t.  Returns a STAT= code (0 ok) with a message in msg
 * that begins with what. */
int tlm_caf_tcoll_bcast(tlm_caf_team_t *t, void *buf, size_t bytes,
                        int root, const char *what, char *msg, size_t cap);
/* Fold every image's buf with fold, in image order, and give every image
 * of t the result.  Returns a STAT= code as tlm_caf_tcoll_bcast. */
int tlm_caf_tcoll_allreduce(tlm_caf_team_t *t, void *buf, size_t bytes,
                            tlm_caf_fold_fn_t fold, void *ctx,
                            const char *what, char *msg, size_t cap);
/* The same after tlm_caf_tflat_announce, watching tlm_caf_tflat_check
 * (a team's reduction of more than TLM_CAF_JC_DATA bytes). */
int tlm_caf_tcoll_allreduce_watched(tlm_caf_team_t *t, void *buf,
                                    size_t bytes, tlm_caf_fold_fn_t fold,
                                    void *ctx, const char *what, char *msg,
                                    size_t cap);

/* ---- the initial team's collectives (caf_jcoll.c) ---- */

/* Bytes of an argument that travel inside the slots themselves. */
#define TLM_CAF_JC_DATA 32

typedef enum {
    TLM_CAF_JC_SYNC = 1,    /* SYNC ALL */
    TLM_CAF_JC_BCAST = 2,   /* co_broadcast, random_init's seed */
    TLM_CAF_JC_REDUCE = 3,  /* co_sum, co_min, co_max, co_reduce */
    TLM_CAF_JC_ALLOC = 4,   /* ALLOCATE of a coarray (buf NULL) */
    TLM_CAF_JC_DEALLOC = 5  /* DEALLOCATE of a coarray (buf NULL) */
} tlm_caf_jc_what_t;

/* One statement of the initial team (tlm_caf_jc). */
typedef struct tlm_caf_jc {
    tlm_caf_jc_what_t what;
    const char *name;       /* for messages: "co_sum", ... */
    void *buf;              /* this image's argument, contiguous */
    size_t bytes;
    int root;               /* TLM_CAF_JC_BCAST: the source's rank */
    tlm_caf_fold_fn_t fold; /* TLM_CAF_JC_REDUCE: acc = acc (op) v */
    void *ctx;
    /* An argument larger than TLM_CAF_JC_DATA, once every image runs and
     * agrees: move it and return a STAT= code. */
    int (*big)(const struct tlm_caf_jc *op, char *msg, size_t cap);
} tlm_caf_jc_t;

/* A broadcast larger than a slot from op->root (caf_coll.c): the .big
 * of co_broadcast and of RANDOM_INIT's seed. */
int tlm_caf_jc_bcast_big(const tlm_caf_jc_t *op, char *msg, size_t cap);

/* Where, in int64_t words, a control block's part for caf_tflat.c
 * begins (a slot of 8 words per image of the initial team, then this
 * image's result), 64-byte aligned; and its size in words. */
#define TLM_CAF_CTL_FLAT(n) ((3 * (size_t)(n) + 7) / 8 * 8)
#define TLM_CAF_CTL_WORDS(n) (TLM_CAF_CTL_FLAT(n) + 8 * ((size_t)(n) + 1))

/* The slots (caf_init). */
int tlm_caf_jc_setup(void);
/* Run op in the initial team: a STAT= code (0 ok, message in msg), or -1
 * when this is not the initial team or Telemem's collectives no longer
 * work (a process died): the caller then takes the pairwise posts or the
 * trees. */
int tlm_caf_jc(const tlm_caf_jc_t *op, char *msg, size_t cap);
/* An image that ended (st: TLM_CAF_STOPPED or _FAILED) takes part in the
 * running images' statements until every image has ended; false when the
 * collectives failed. */
bool tlm_caf_jc_ended(int st);
/* The first step of op inside team t (caf_tflat.c; op->root is a team
 * index): every image agrees, and an argument of up to TLM_CAF_JC_DATA
 * bytes is reduced or broadcast.  A STAT= code; a larger argument is
 * then the caller's to move. */
int tlm_caf_tflat(tlm_caf_team_t *t, const tlm_caf_jc_t *op, char *msg,
                  size_t cap);
/* The key of team t's collective number seq (the same on every image). */
uint64_t tlm_caf_tflat_key(const tlm_caf_team_t *t, uint32_t seq);
/* A reduction of more than TLM_CAF_JC_DATA bytes on the trees: tell the
 * team's first image its size (an image whose argument fits a slot waits
 * there for everyone's: a size that differs must not leave it waiting). */
void tlm_caf_tflat_announce(const tlm_caf_team_t *t, uint64_t key,
                            size_t bytes);
/* While such a reduction waits: on the first image, a slot of another
 * size ends it for everyone (STAT= 7001, the image in *image) once every
 * image's slot has come (each image's result is written after its slot:
 * a result that replaced one not read yet would leave its image waiting);
 * on the others, the first image's result ends it.  0 while neither. */
int tlm_caf_tflat_check(const tlm_caf_team_t *t, uint64_t key, size_t bytes,
                        int *image);

/* ---- tokens (caf_register.c) ---- */

tlm_caf_token_t *tlm_caf_token_by_id(int64_t id);
/* Address on @p rank of local address @p local inside token @p t, or NULL
 * when the token has no remote memory. */
void *tlm_caf_remote(const tlm_caf_token_t *t, int rank, const void *local);

/* ---- shapes and conversion (caf_shape.c, caf_convert.c) ---- */

typedef struct {
    int ndim;
    size_t elem;                          /* bytes per element */
    size_t count;                         /* elements */
    size_t extent[TLM_CAF_MAX_DIM];
    ptrdiff_t stride[TLM_CAF_MAX_DIM];    /* bytes */
} tlm_caf_shape_t;

/* Shape of descriptor @p d (rank 0: one element). */
void tlm_caf_shape_of(const tlm_gfc_desc_t *d, tlm_caf_shape_t *s);
/* A contiguous shape of @p count elements of @p elem bytes. */
void tlm_caf_shape_contig(tlm_caf_shape_t *s, size_t count, size_t elem);
/* Copy the elements of (base, s) in array element order into out, and
 * back. */
void tlm_caf_pack(void *out, const char *base, const tlm_caf_shape_t *s);
void tlm_caf_unpack(char *base, const tlm_caf_shape_t *s, const void *in);
/* Whether the elements of s follow each other without gaps, in order. */
bool tlm_caf_is_contig(const tlm_caf_shape_t *s);
/* Whether (a, b) have the same extents in the same order, ignoring
 * extents of 1. */
bool tlm_caf_same_extents(const tlm_caf_shape_t *a,
                          const tlm_caf_shape_t *b);

/* Convert one element.  Returns 0, or -1 for a pair it cannot convert. */
int tlm_caf_convert(void *dst, int dtype, int dkind, size_t delem,
                    const void *src, int stype, int skind, size_t selem);
/* Convert @p count contiguous elements (source repeated when
 * @p src_count is 1). */
int tlm_caf_convert_n(void *dst, int dtype, int dkind, size_t delem,
                      const void *src, int stype, int skind, size_t selem,
                      size_t count, size_t src_count);
/* Whether a copy from (stype, skind, selem) to (dtype, ...) needs
 * tlm_caf_convert rather than memcpy. */
bool tlm_caf_needs_convert(int dtype, int dkind, size_t delem, int stype,
                           int skind, size_t selem);

/* ---- transfers (caf_xfer.c) ---- */

/* Write the contiguous @p buf (shape @p local of it, or contiguous when
 * NULL) into rank's memory at remote with shape @p rs: one strided
 * Telemem call where it can, a list otherwise. */
int tlm_caf_put_shape(int rank, char *remote, const tlm_caf_shape_t *rs,
                      const char *local, const tlm_caf_shape_t *ls);
int tlm_caf_get_shape(int rank, char *local, const tlm_caf_shape_t *ls,
                      const char *remote, const tlm_caf_shape_t *rs);

#endif /* TLM_CAF_INTERNAL_H */

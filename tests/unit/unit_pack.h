/* unit_pack.h - what the files of unit_pack share: the state of the run
 * (seed, generator, counters, the case being run), the checks that print
 * file:line and the seed on failure, the reference and the random shapes
 * (unit_pack.c), and each file's cases. */
#ifndef UNIT_PACK_H
#define UNIT_PACK_H

#include <stdbool.h>

#include "tt.h"
#include "pack/pack.h"

#define LOCAL TLM_PACK_LOCAL
#define REMOTE TLM_PACK_REMOTE
#define MAXL TLM_PACK_MAX_LEVELS

extern uint64_t seed;
extern tt_rng_t rng;
extern long nchecks;
extern long nempty, nshapes, nfrags, nlevels[MAXL + 1], naccepted;
extern double nbytes;
extern char what[1024]; /* the case being run, printed on failure */

void fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        nchecks++;                                                             \
        if (!(cond))                                                           \
            fail_at(__FILE__, __LINE__, __VA_ARGS__);                          \
    } while (0)

uint64_t rnd(uint64_t n); /* [0, n), n > 0 */
uint64_t rnd_range(uint64_t lo, uint64_t hi);
void *xmalloc(size_t n);
void gb_alloc(tt_gbuf_t *b, size_t n, uint64_t key);
void gb_check(const tt_gbuf_t *b, const char *name, const char *file,
              int line);
#define GB_CHECK(b, name) gb_check(b, name, __FILE__, __LINE__)
void cmp_at(const void *got, const void *want, size_t n, const char *name,
            const char *file, int line);
#define CMP(got, want, n, name) cmp_at(got, want, n, name, __FILE__, __LINE__)

/* ---- the user's description and the naive reference (unit_pack.c) ---- */

typedef struct {
    int levels;
    size_t count[MAXL + 1];
    size_t stride[2][MAXL];
} ushape_t;

void describe(const ushape_t *u, const char *tag);
extern size_t *roffs; /* ref_runs' offsets */
size_t ref_runs(const ushape_t *u, int side);
size_t ref_total(const ushape_t *u);
size_t ref_extent(const ushape_t *u, int side);

/* ---- random shapes and fragments (unit_pack.c) ----------------------- */

extern int pmerge, p1; /* gen_shape's odds */
size_t pick_run(void);
void gen_shape(ushape_t *u, int levels, size_t run, size_t max_total,
               size_t max_extent, size_t max_count);

typedef struct {
    size_t off, len;
} frag_t;

#define MAXFRAG 600
extern frag_t frags[MAXFRAG];
size_t make_frags(size_t total, size_t unit, frag_t *f);
void shuffle(frag_t *f, size_t n);

/* ---- the cases ------------------------------------------------------- */

/* unit_pack_strided.c */
void test_normalize_cases(void);
void test_shapes(void);
void test_wire_malformed(void);
void test_wire_fuzz(void);
/* unit_pack_acc.c, and its kernels' helpers the vector cases use */
extern const char *const tname[TLM_ACC_NTYPES];
void rand_elems(int type, void *p, size_t n);
bool rand_scale(int type, void *a, bool one);
void ref_acc(int type, void *d, const void *s, size_t n, const void *a);
void test_acc_kernels(void);
void test_unpack_acc(void);
/* unit_pack_vec.c */
void test_vec(void);

#endif

/* fail_noncontig.c - failure: bad non-contiguous, accumulate, atomic and
 * mutex calls.
 *   Refused by the call (TELEMEM_ERR_INVALID_ARG, handle / old value
 *   untouched, nothing written anywhere): stride levels -1 and 9, NULL
 *   count, NULL stride arrays with levels > 0, NULL addresses, extents
 *   that wrap or overflow; vector and list calls with NULL arrays, a NULL
 *   segment address, a wrapping segment; accumulates with an unknown type,
 *   a NULL scale, a length (or run, or segment) that is not a multiple of
 *   the element size; atomics on a misaligned or NULL address, with a
 *   non-integer type, NULL operands or a bad rank; mutex misuse.
 *   Refused by the target (TELEMEM_ERR_OUT_OF_RANGE at quiet, fence or
 *   wait; from the call for a blocking get or atomic, and possibly for an
 *   operation on the calling rank itself): strided, vector, list and
 *   accumulate puts of which one run or segment lies outside the target's
 *   block - small ones and ones of more than 1 MiB, where only the last
 *   run is outside - must leave the WHOLE block as it was; strided, vector
 *   and list gets must leave the whole local destination as it was; an
 *   atomic outside the block leaves *old alone.  After every case a valid
 *   put lands and quiet returns OK again.
 * Every rank aims at its right neighbour (at itself when alone). */
#include <limits.h>

#include "tt.h"

/* A failed check is reported and counted, and the test goes on (one
 * wrong case must not hide the others); main() fails at the end. */
static int failures;
#define SOFT(cond, ...)                                                     \
    do {                                                                    \
        if (!(cond))                                                        \
            soft_fail(__FILE__, __LINE__, __VA_ARGS__);                     \
    } while (0)

static void soft_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void soft_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "[tt r%d] FAIL %s:%d: %s\n", tt_me, file, line, msg);
    fflush(stderr);
    failures++;
}

#define SOFT_EXPECT(call, want)                                             \
    do {                                                                    \
        int rc_ = (call), want_ = (want);                                   \
        SOFT(rc_ == want_, "%s returned %s, expected %s", #call,            \
             telemem_status_name(rc_), telemem_status_name(want_));         \
    } while (0)

#define BN ((size_t)2 << 20)   /* each rank's block */
#define LN ((size_t)3 << 20)   /* local source / destination buffers */
#define IA TELEMEM_ERR_INVALID_ARG
#define OOR TELEMEM_ERR_OUT_OF_RANGE

enum { K_STRIDED, K_VECTOR, K_LIST, K_ACC, K_ACC_STRIDED, K_ACC_VECTOR,
       K_ACC_LIST };
static const char *const kind_name[] = {"strided", "vector", "list", "acc",
                                        "acc_strided", "acc_vector",
                                        "acc_list"};
static const char *const form_name[] = {"blocking", "nb", "nbi"};

/* One operation's arguments (only those of its kind are used). */
typedef struct {
    int kind;
    telemem_type_t type;
    const void *scale;
    void *raddr, *laddr;
    const size_t *rst, *lst, *count;
    int levels;
    void **ra, **la;
    size_t cnt, bytes;
    const telemem_seg_t *segs;
} op_t;

static int me, n, target, source, ncase;
static uint64_t seed;
static void **bases;
static uint8_t *tb;        /* the target's block */
static uint8_t *src, *dst; /* local buffers */
static const double one_d = 1.0;

static int run_put(const op_t *o, int form, telemem_handle_t *h)
{
    int t = target;
    switch (o->kind) {
    case K_STRIDED:
        return form == 0 ? telemem_put_strided(t, o->raddr, o->rst, o->laddr,
                                               o->lst, o->count, o->levels)
             : form == 1 ? telemem_put_strided_nb(t, o->raddr, o->rst,
                                                  o->laddr, o->lst, o->count,
                                                  o->levels, h)
                         : telemem_put_strided_nbi(t, o->raddr, o->rst,
                                                   o->laddr, o->lst, o->count,
                                                   o->levels);
    case K_VECTOR: {
        const void *const *l = (const void *const *)o->la;
        return form == 0 ? telemem_put_vector(t, o->ra, l, o->cnt, o->bytes)
             : form == 1 ? telemem_put_vector_nb(t, o->ra, l, o->cnt,
                                                 o->bytes, h)
                         : telemem_put_vector_nbi(t, o->ra, l, o->cnt,
                                                  o->bytes);
    }
    case K_LIST:
        return form == 0 ? telemem_put_list(t, o->segs, o->cnt)
             : form == 1 ? telemem_put_list_nb(t, o->segs, o->cnt, h)
                         : telemem_put_list_nbi(t, o->segs, o->cnt);
    case K_ACC:
        return form == 0 ? telemem_acc(t, o->type, o->scale, o->raddr,
                                       o->laddr, o->bytes)
             : form == 1 ? telemem_acc_nb(t, o->type, o->scale, o->raddr,
                                          o->laddr, o->bytes, h)
                         : telemem_acc_nbi(t, o->type, o->scale, o->raddr,
                                           o->laddr, o->bytes);
    case K_ACC_STRIDED:
        return form == 0 ? telemem_acc_strided(t, o->type, o->scale, o->raddr,
                                               o->rst, o->laddr, o->lst,
                                               o->count, o->levels)
             : form == 1 ? telemem_acc_strided_nb(t, o->type, o->scale,
                                                  o->raddr, o->rst, o->laddr,
                                                  o->lst, o->count, o->levels,
                                                  h)
                         : telemem_acc_strided_nbi(t, o->type, o->scale,
                                                   o->raddr, o->rst, o->laddr,
                                                   o->lst, o->count,
                                                   o->levels);
    case K_ACC_VECTOR: {
        const void *const *l = (const void *const *)o->la;
        return form == 0 ? telemem_acc_vector(t, o->type, o->scale, o->ra, l,
                                              o->cnt, o->bytes)
             : form == 1 ? telemem_acc_vector_nb(t, o->type, o->scale, o->ra,
                                                 l, o->cnt, o->bytes, h)
                         : telemem_acc_vector_nbi(t, o->type, o->scale, o->ra,
                                                  l, o->cnt, o->bytes);
    }
    default:
        return form == 0 ? telemem_acc_list(t, o->type, o->scale, o->segs,
                                            o->cnt)
             : form == 1 ? telemem_acc_list_nb(t, o->type, o->scale, o->segs,
                                               o->cnt, h)
                         : telemem_acc_list_nbi(t, o->type, o->scale, o->segs,
                                                o->cnt);
    }
}

/* Gets of strided, vector and list ops (raddr/ra are the remote side). */
static int run_get(const op_t *o, int form, telemem_handle_t *h)
{
    int t = target;
    switch (o->kind) {
    case K_STRIDED:
        return form == 0 ? telemem_get_strided(t, o->laddr, o->lst, o->raddr,
                                               o->rst, o->count, o->levels)
             : form == 1 ? telemem_get_strided_nb(t, o->laddr, o->lst,
                                                  o->raddr, o->rst, o->count,
                                                  o->levels, h)
                         : telemem_get_strided_nbi(t, o->laddr, o->lst,
                                                   o->raddr, o->rst, o->count,
                                                   o->levels);
    case K_VECTOR: {
        const void *const *r = (const void *const *)o->ra;
        return form == 0 ? telemem_get_vector(t, o->la, r, o->cnt, o->bytes)
             : form == 1 ? telemem_get_vector_nb(t, o->la, r, o->cnt,
                                                 o->bytes, h)
                         : telemem_get_vector_nbi(t, o->la, r, o->cnt,
                                                  o->bytes);
    }
    default:
        return form == 0 ? telemem_get_list(t, o->segs, o->cnt)
             : form == 1 ? telemem_get_list_nb(t, o->segs, o->cnt, h)
                         : telemem_get_list_nbi(t, o->segs, o->cnt);
    }
}

static void fill_all(void)
{
    tt_pat_fill(bases[me], BN, tt_key(seed, 1, (uint64_t)me, 0), 0);
    tt_pat_fill(src, LN, tt_key(seed, 2, (uint64_t)me, 0), 0);
    tt_pat_fill(dst, LN, tt_key(seed, 3, (uint64_t)me, 0), 0);
}

/* After each case: a valid put of a marker lands and quiet is OK again;
 * this rank's block (written by nobody but the marker), the source and
 * the destination buffers are as they were. */
static void finish_case(const char *what)
{
    char lab[300];
    int bad = 0;
    uint64_t marker = tt_key(seed, 9, (uint64_t)me, (uint64_t)ncase);
    TT_CHECK(telemem_put(target, tb + BN - 8, &marker, 8));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    uint8_t *b = bases[me];
    uint64_t want = tt_key(seed, 9, (uint64_t)source, (uint64_t)ncase), got;
    memcpy(&got, b + BN - 8, 8);
    snprintf(lab, sizeof lab, "case %d (%s): this rank's block", ncase,
             what);
    SOFT(got == want, "%s: the valid put after the refused operation did "
         "not land", lab);
    if (tt_pat_verify(b, BN - 8, tt_key(seed, 1, (uint64_t)me, 0), 0, lab))
        bad = 1;
    snprintf(lab, sizeof lab, "case %d (%s): local source", ncase, what);
    if (tt_pat_verify(src, LN, tt_key(seed, 2, (uint64_t)me, 0), 0, lab))
        bad = 1;
    snprintf(lab, sizeof lab, "case %d (%s): local destination", ncase,
             what);
    if (tt_pat_verify(dst, LN, tt_key(seed, 3, (uint64_t)me, 0), 0, lab))
        bad = 1;
    SOFT(!bad, "case %d (%s): memory changed (above)", ncase, what);
    if (bad)
        fill_all(); /* so the next cases start clean */
    tt_pat_fill(b + BN - 8, 8, tt_key(seed, 1, (uint64_t)me, 0), BN - 8);
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("case %d: %s: done", ncase, what);
    ncase++;
}

/* ---- refused by the call ---- */

static void bad_args(const op_t *o, int gets_too, const char *what)
{
    char lab[200];
    for (int get = 0; get <= gets_too; get++)
        for (int form = 0; form < 3; form++) {
            telemem_handle_t h = {0x1234u, 0x5678u};
            int rc = get ? run_get(o, form, &h) : run_put(o, form, &h);
            SOFT(rc == IA, "%s %s %s (%s): returned %s, expected "
                 "TELEMEM_ERR_INVALID_ARG", get ? "get" : "put",
                 kind_name[o->kind], form_name[form], what,
                 telemem_status_name(rc));
            if (rc == TELEMEM_OK && form == 1) {
                (void)telemem_wait(&h); /* accepted: do not leak it */
            } else {
                SOFT(h.index_ == 0x1234u && h.generation_ == 0x5678u,
                     "%s %s nb (%s): the handle was set on failure",
                     get ? "get" : "put", kind_name[o->kind], what);
            }
        }
    (void)telemem_quiet(); /* reports what a wrongly accepted call did */
    TT_CHECK(telemem_quiet());
    snprintf(lab, sizeof lab, "%s: %s", kind_name[o->kind], what);
    finish_case(lab);
}

static void bad_strided_args(void)
{
    /* Room for the levels-9 case. */
    size_t cnt[TELEMEM_MAX_STRIDE_LEVELS + 2];
    size_t st[TELEMEM_MAX_STRIDE_LEVELS + 1];
    for (int i = 0; i < TELEMEM_MAX_STRIDE_LEVELS + 2; i++)
        cnt[i] = i == 0 ? 8 : 2;
    for (int i = 0; i <= TELEMEM_MAX_STRIDE_LEVELS; i++)
        st[i] = (size_t)16 << i;
    size_t big_st[1] = {SIZE_MAX / 2}, big_cnt[2] = {8, 4};
    size_t huge_cnt[2] = {(size_t)1 << 33, (size_t)1 << 33};
    size_t huge_st[1] = {(size_t)1 << 33};
    size_t one_cnt[1] = {128};
    static const int kinds[] = {K_STRIDED, K_ACC_STRIDED};
    for (int ki = 0; ki < 2; ki++) {
        int k = kinds[ki], gets = k == K_STRIDED;
        op_t o;
        o = (op_t){.kind = k, .type = TELEMEM_DOUBLE, .scale = &one_d,
                   .raddr = tb + 4096, .laddr = src, .rst = st, .lst = st,
                   .count = cnt, .levels = -1};
        bad_args(&o, gets, "stride levels -1");
        o.levels = TELEMEM_MAX_STRIDE_LEVELS + 1;
        bad_args(&o, gets, "stride levels 9");
        o.levels = 1;
        o.count = NULL;
        bad_args(&o, gets, "count NULL");
        o.count = cnt;
        o.rst = NULL;
        bad_args(&o, gets, "remote strides NULL, levels 1");
        o.rst = st;
        o.lst = NULL;
        bad_args(&o, gets, "local strides NULL, levels 1");
        o.lst = st;
        o.raddr = NULL;
        bad_args(&o, gets, "remote address NULL");
        o.raddr = tb + 4096;
        o.laddr = NULL;
        bad_args(&o, gets, "local address NULL");
        o.laddr = src;
        o.raddr = (void *)(UINTPTR_MAX - 64);
        o.count = one_cnt;
        o.levels = 0;
        bad_args(&o, gets, "remote extent wraps (levels 0)");
        o.raddr = tb + 4096;
        o.laddr = (void *)(UINTPTR_MAX - 64);
        bad_args(&o, gets, "local extent wraps (levels 0)");
        o.laddr = src;
        o.count = big_cnt;
        o.rst = big_st;
        o.levels = 1;
        bad_args(&o, gets, "remote stride SIZE_MAX/2: extent overflows");
        o.rst = st;
        o.lst = big_st;
        bad_args(&o, gets, "local stride SIZE_MAX/2: extent overflows");
        o.lst = huge_st;
        o.rst = huge_st;
        o.count = huge_cnt;
        bad_args(&o, gets, "2^33 x 2^33 bytes: size overflows");
    }
    /* Controls: 8 levels and NULL strides with levels 0 are fine. */
    size_t c8[TELEMEM_MAX_STRIDE_LEVELS + 1], s8[TELEMEM_MAX_STRIDE_LEVELS];
    c8[0] = 8;
    s8[0] = 8;
    for (int i = 1; i <= TELEMEM_MAX_STRIDE_LEVELS; i++) {
        c8[i] = 2;
        if (i < TELEMEM_MAX_STRIDE_LEVELS)
            s8[i] = s8[i - 1] * 2;
    }
    /* The 8-level patch is 2048 contiguous bytes. */
    uint8_t *d = dst + 4096;
    uint64_t tkey = tt_key(seed, 1, (uint64_t)target, 0);
    TT_CHECK(telemem_get_strided(target, d, s8, tb + 4096, s8, c8,
                                 TELEMEM_MAX_STRIDE_LEVELS));
    TT_ASSERT(!tt_pat_verify(d, 2048, tkey, 4096, "8-level get"),
              "an 8-level strided get brought wrong data");
    tt_pat_fill(d, 2048, tt_key(seed, 3, (uint64_t)me, 0), 4096);
    TT_CHECK(telemem_get_strided(target, d, NULL, tb + 4096, NULL, c8, 0));
    TT_ASSERT(!tt_pat_verify(d, 8, tkey, 4096, "0-level get"),
              "a 0-level strided get with NULL strides brought wrong data");
    tt_pat_fill(d, 8, tt_key(seed, 3, (uint64_t)me, 0), 4096);
    TT_CHECK(telemem_barrier());
}

static void bad_vector_args(void)
{
    void *ra[4], *la[4];
    telemem_seg_t segs[4];
    for (int i = 0; i < 4; i++) {
        ra[i] = tb + 4096 + 256 * (size_t)i;
        la[i] = src + 256 * (size_t)i;
        segs[i] = (telemem_seg_t){ra[i], la[i], 64};
    }
    static const int vkinds[] = {K_VECTOR, K_ACC_VECTOR};
    for (int ki = 0; ki < 2; ki++) {
        int k = vkinds[ki], gets = k == K_VECTOR;
        op_t o = {.kind = k, .type = TELEMEM_DOUBLE, .scale = &one_d,
                  .ra = NULL, .la = la, .cnt = 4, .bytes = 64};
        bad_args(&o, gets, "remote address array NULL");
        o.ra = ra;
        o.la = NULL;
        bad_args(&o, gets, "local address array NULL");
        o.la = la;
        ra[2] = NULL;
        bad_args(&o, gets, "remote address 2 NULL");
        ra[2] = tb + 4096 + 512;
        la[3] = NULL;
        bad_args(&o, gets, "local address 3 NULL");
        la[3] = src + 768;
        ra[1] = (void *)(UINTPTR_MAX - 10);
        bad_args(&o, gets, "remote segment 1 wraps");
        ra[1] = tb + 4096 + 256;
        la[0] = (void *)(UINTPTR_MAX - 10);
        bad_args(&o, gets, "local segment 0 wraps");
        la[0] = src;
    }
    static const int lkinds[] = {K_LIST, K_ACC_LIST};
    for (int ki = 0; ki < 2; ki++) {
        int k = lkinds[ki], gets = k == K_LIST;
        op_t o = {.kind = k, .type = TELEMEM_DOUBLE, .scale = &one_d,
                  .segs = NULL, .cnt = 4};
        bad_args(&o, gets, "segment array NULL");
        o.segs = segs;
        segs[2].remote = NULL;
        bad_args(&o, gets, "segment 2: remote NULL");
        segs[2].remote = tb + 4096 + 512;
        segs[1].local = NULL;
        bad_args(&o, gets, "segment 1: local NULL");
        segs[1].local = src + 256;
        segs[3].remote = (void *)(UINTPTR_MAX - 10);
        bad_args(&o, gets, "segment 3: remote wraps");
        segs[3].remote = tb + 4096 + 768;
        segs[0].local = (void *)(UINTPTR_MAX - 10);
        bad_args(&o, gets, "segment 0: local wraps");
        segs[0].local = src;
    }
}

static void bad_acc_args(void)
{
    size_t cnt[2] = {6, 4}, st[1] = {64};
    void *ra[2] = {tb + 4096, tb + 8192}, *la[2] = {src, src + 4096};
    telemem_seg_t segs[2] = {{tb + 4096, src, 16}, {tb + 8192, src + 4096,
                                                    24}};
    const double sc[2] = {1.0, 0.0};
    op_t o = {.kind = K_ACC, .type = (telemem_type_t)7, .scale = sc,
              .raddr = tb + 4096, .laddr = src, .bytes = 64};
    bad_args(&o, 0, "unknown type 7");
    o.type = (telemem_type_t)-1;
    bad_args(&o, 0, "unknown type -1");
    o.type = TELEMEM_DOUBLE;
    o.scale = NULL;
    bad_args(&o, 0, "scale NULL");
    o.scale = sc;
    static const struct { telemem_type_t t; size_t bytes; } bad_len[] = {
        {TELEMEM_INT32, 6}, {TELEMEM_INT64, 12}, {TELEMEM_UINT64, 4},
        {TELEMEM_FLOAT, 2}, {TELEMEM_DOUBLE, 60}, {TELEMEM_COMPLEX_FLOAT, 4},
        {TELEMEM_COMPLEX_DOUBLE, 24}};
    char what[96];
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        o.type = bad_len[i].t;
        o.bytes = bad_len[i].bytes;
        snprintf(what, sizeof what, "%zu bytes of type %d", bad_len[i].bytes,
                 (int)bad_len[i].t);
        bad_args(&o, 0, what);
    }
    o = (op_t){.kind = K_ACC_STRIDED, .type = TELEMEM_INT32, .scale = sc,
               .raddr = tb + 4096, .laddr = src, .rst = st, .lst = st,
               .count = cnt, .levels = 1};
    bad_args(&o, 0, "run of 6 bytes, INT32");
    o.type = (telemem_type_t)9;
    cnt[0] = 8;
    bad_args(&o, 0, "unknown type 9");
    o.type = (telemem_type_t)-1;
    bad_args(&o, 0, "unknown type -1");
    o.type = TELEMEM_INT32;
    o.scale = NULL;
    bad_args(&o, 0, "scale NULL");
    o = (op_t){.kind = K_ACC_VECTOR, .type = TELEMEM_DOUBLE, .scale = sc,
               .ra = ra, .la = la, .cnt = 2, .bytes = 4};
    bad_args(&o, 0, "segments of 4 bytes, DOUBLE");
    o.bytes = 16;
    o.scale = NULL;
    bad_args(&o, 0, "scale NULL");
    o.scale = sc;
    o.type = (telemem_type_t)7;
    bad_args(&o, 0, "unknown type 7");
    o.type = (telemem_type_t)-1;
    bad_args(&o, 0, "unknown type -1");
    o = (op_t){.kind = K_ACC_LIST, .type = TELEMEM_COMPLEX_DOUBLE,
               .scale = sc, .segs = segs, .cnt = 2};
    bad_args(&o, 0, "a 24-byte segment, COMPLEX_DOUBLE");
    o.type = TELEMEM_INT64;
    o.scale = NULL;
    segs[1].bytes = 16;
    bad_args(&o, 0, "scale NULL");
    o.scale = sc;
    o.type = (telemem_type_t)100;
    bad_args(&o, 0, "unknown type 100");
    o.type = (telemem_type_t)-1;
    bad_args(&o, 0, "unknown type -1");
}

static void bad_atomic_args(void)
{
    uint64_t val = 1, cmp = 0, old = 0xdeadbeefcafef00dull;
    uint8_t *w = tb + 4096;
    static const struct { telemem_type_t t; size_t off; const char *w; } c[] = {
        {TELEMEM_INT64, 4, "INT64 at +4"}, {TELEMEM_UINT64, 1, "UINT64 at +1"},
        {TELEMEM_INT32, 2, "INT32 at +2"}, {TELEMEM_FLOAT, 0, "FLOAT"},
        {TELEMEM_DOUBLE, 0, "DOUBLE"}, {TELEMEM_COMPLEX_FLOAT, 0,
                                        "COMPLEX_FLOAT"},
        {TELEMEM_COMPLEX_DOUBLE, 0, "COMPLEX_DOUBLE"},
        {(telemem_type_t)7, 0, "type 7"}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        void *a = w + c[i].off;
        telemem_type_t t = c[i].t;
        for (int form = 0; form < 3; form++) {
            telemem_handle_t h = {0x1234u, 0x5678u};
            for (int op = 0; op < 3; op++) {
                int rc;
                if (op == 0)
                    rc = form == 0 ? telemem_atomic_fetch_add(target, a, t,
                                                              &val, &old)
                       : form == 1 ? telemem_atomic_fetch_add_nb(target, a, t,
                                                                 &val, &old,
                                                                 &h)
                       : telemem_atomic_fetch_add_nbi(target, a, t, &val,
                                                      &old);
                else if (op == 1)
                    rc = form == 0 ? telemem_atomic_swap(target, a, t, &val,
                                                         &old)
                       : form == 1 ? telemem_atomic_swap_nb(target, a, t,
                                                            &val, &old, &h)
                       : telemem_atomic_swap_nbi(target, a, t, &val, &old);
                else
                    rc = form == 0 ? telemem_atomic_cswap(target, a, t, &cmp,
                                                          &val, &old)
                       : form == 1 ? telemem_atomic_cswap_nb(target, a, t,
                                                             &cmp, &val, &old,
                                                             &h)
                       : telemem_atomic_cswap_nbi(target, a, t, &cmp, &val,
                                                  &old);
                SOFT(rc == IA, "atomic op %d form %s on %s: %s, "
                          "expected TELEMEM_ERR_INVALID_ARG", op,
                          form_name[form], c[i].w, telemem_status_name(rc));
            }
            SOFT(h.index_ == 0x1234u, "atomic nb (%s): handle set on "
                      "failure", c[i].w);
        }
    }
    /* NULL operands, NULL address, bad ranks. */
    telemem_handle_t h = {0x1234u, 0x5678u};
    SOFT_EXPECT(telemem_atomic_fetch_add(target, w, TELEMEM_INT64, NULL, &old),
              IA);
    SOFT_EXPECT(telemem_atomic_swap_nb(target, w, TELEMEM_INT64, NULL, &old,
                                     &h), IA);
    SOFT_EXPECT(telemem_atomic_cswap(target, w, TELEMEM_INT64, NULL, &val,
                                   &old), IA);
    SOFT_EXPECT(telemem_atomic_cswap_nbi(target, w, TELEMEM_INT64, &cmp, NULL,
                                       &old), IA);
    SOFT_EXPECT(telemem_atomic_fetch_add(target, NULL, TELEMEM_INT64, &val,
                                       &old), IA);
    SOFT_EXPECT(telemem_atomic_swap_nbi(target, NULL, TELEMEM_INT32, &val,
                                      &old), IA);
    SOFT_EXPECT(telemem_atomic_fetch_add(n, w, TELEMEM_INT64, &val, &old), IA);
    SOFT_EXPECT(telemem_atomic_cswap_nb(-1, w, TELEMEM_INT64, &cmp, &val, &old,
                                      &h), IA);
    SOFT(h.index_ == 0x1234u, "atomic nb: handle set on failure");
    TT_CHECK(telemem_quiet());
    SOFT(old == 0xdeadbeefcafef00dull, "a refused atomic wrote *old "
              "(%" PRIx64 ")", old);
    finish_case("atomics: misaligned, non-integer, NULL, bad rank");
}

static void bad_mutex_calls(void)
{
    int set = -1, acq = -1, s2 = -1;
    SOFT_EXPECT(telemem_mutexes_create(-1, &set), IA);
    SOFT_EXPECT(telemem_mutexes_create(1, NULL), IA);
    SOFT(set == -1, "mutexes_create set *set_p on failure");
    TT_CHECK(telemem_mutexes_create(2, &set));
    /* (Locking right after create is conf_mutex's business.) */
    TT_CHECK(telemem_barrier());
    SOFT_EXPECT(telemem_mutex_lock(set + 100, 0, target), IA);
    SOFT_EXPECT(telemem_mutex_lock(set, 2, target), IA);
    SOFT_EXPECT(telemem_mutex_lock(set, -1, target), IA);
    SOFT_EXPECT(telemem_mutex_lock(set, 0, n), IA);
    SOFT_EXPECT(telemem_mutex_trylock(set, 0, target, NULL), IA);
    SOFT_EXPECT(telemem_mutex_unlock(set, 0, target), IA); /* not held */
    TT_CHECK(telemem_mutex_lock(set, 0, target));
    SOFT_EXPECT(telemem_mutex_lock(set, 0, target), IA);   /* not recursive */
    SOFT_EXPECT(telemem_mutex_trylock(set, 0, target, &acq), IA);
    SOFT(acq == -1, "trylock of a mutex this rank holds returned "
         "TELEMEM_ERR_INVALID_ARG but set *acquired to %d", acq);
    TT_CHECK(telemem_mutex_unlock(set, 0, target));
    SOFT_EXPECT(telemem_mutex_unlock(set, 0, target), IA); /* twice */
    TT_CHECK(telemem_barrier());
    SOFT_EXPECT(telemem_mutexes_destroy(set + 100), TELEMEM_ERR_NOT_FOUND);
    TT_CHECK(telemem_mutexes_destroy(set));
    SOFT_EXPECT(telemem_mutexes_destroy(set), TELEMEM_ERR_NOT_FOUND);
    TT_CHECK(telemem_mutexes_create(1, &s2));
    TT_CHECK(telemem_mutexes_destroy(s2));
    finish_case("mutex misuse");
}

/* ---- refused by the target ---- */

static void refused_put(const op_t *o, int form, const char *what)
{
    char lab[300];
    telemem_handle_t h = TELEMEM_HANDLE_NULL;
    snprintf(lab, sizeof lab, "put %s %s: %s", kind_name[o->kind],
             form_name[form], what);
    int rc = run_put(o, form, &h);
    if (target == me && rc == OOR) {
        /* An operation on this rank itself may be refused by the call. */
    } else {
        SOFT(rc == TELEMEM_OK, "%s: the call returned %s", lab,
                  telemem_status_name(rc));
        if (form == 1) {
            rc = telemem_wait(&h);
            SOFT(rc == OOR, "%s: wait returned %s, expected "
                      "TELEMEM_ERR_OUT_OF_RANGE", lab,
                      telemem_status_name(rc));
            TT_CHECK(telemem_wait(&h)); /* spent */
        } else {
            rc = form == 2 ? telemem_fence(target) : telemem_quiet();
            SOFT(rc == OOR, "%s: %s returned %s, expected "
                      "TELEMEM_ERR_OUT_OF_RANGE", lab,
                      form == 2 ? "fence" : "quiet", telemem_status_name(rc));
        }
    }
    TT_CHECK(telemem_quiet());
    finish_case(lab);
}

static void refused_get(const op_t *o, int form, const char *what)
{
    char lab[300];
    telemem_handle_t h = TELEMEM_HANDLE_NULL;
    snprintf(lab, sizeof lab, "get %s %s: %s", kind_name[o->kind],
             form_name[form], what);
    int rc = run_get(o, form, &h);
    if (form == 0 || (target == me && rc == OOR)) {
        SOFT(rc == OOR, "%s: returned %s, expected "
                  "TELEMEM_ERR_OUT_OF_RANGE", lab, telemem_status_name(rc));
    } else {
        SOFT(rc == TELEMEM_OK, "%s: the call returned %s", lab,
                  telemem_status_name(rc));
        rc = form == 1 ? telemem_wait(&h) : telemem_quiet();
        SOFT(rc == OOR, "%s: %s returned %s, expected "
                  "TELEMEM_ERR_OUT_OF_RANGE", lab,
                  form == 1 ? "wait" : "quiet", telemem_status_name(rc));
    }
    TT_CHECK(telemem_quiet());
    finish_case(lab); /* checks the whole destination buffer */
}

static void refused_atomic(int form, void *addr, const char *what)
{
    char lab[200];
    uint64_t val = 1, old = 0x5555aaaa5555aaaaull;
    telemem_handle_t h = TELEMEM_HANDLE_NULL;
    snprintf(lab, sizeof lab, "atomic fetch_add %s: %s", form_name[form],
             what);
    int rc = form == 0 ? telemem_atomic_fetch_add(target, addr,
                                                  TELEMEM_UINT64, &val, &old)
           : form == 1 ? telemem_atomic_fetch_add_nb(target, addr,
                                                     TELEMEM_UINT64, &val,
                                                     &old, &h)
                       : telemem_atomic_fetch_add_nbi(target, addr,
                                                      TELEMEM_UINT64, &val,
                                                      &old);
    if (form == 0 || (target == me && rc == OOR)) {
        SOFT(rc == OOR, "%s: returned %s", lab, telemem_status_name(rc));
    } else {
        SOFT(rc == TELEMEM_OK, "%s: the call returned %s", lab,
                  telemem_status_name(rc));
        rc = form == 1 ? telemem_wait(&h) : telemem_quiet();
        SOFT(rc == OOR, "%s: completion returned %s", lab,
                  telemem_status_name(rc));
    }
    TT_CHECK(telemem_quiet());
    SOFT(old == 0x5555aaaa5555aaaaull, "%s: *old was written (%" PRIx64
              ")", lab, old);
    finish_case(lab);
}

static void refused_ops(void)
{
    /* Strided: a small patch whose last rows cross the block's end; one
     * whose first run starts before the block; a 1 MiB+ patch (many
     * fragments) of which only the last 1 KiB run is outside. */
    size_t c_small[2] = {96, 20}, s_small[1] = {128};
    size_t c_big[2] = {1024, 1025}, s_big[1] = {1024};
    size_t s_local[1] = {1024};
    const double sc = 1.0;
    for (int acc = 0; acc < 2; acc++) {
        int k = acc ? K_ACC_STRIDED : K_STRIDED;
        for (int form = 0; form < 3; form++) {
            op_t o = {.kind = k, .type = TELEMEM_DOUBLE, .scale = &sc,
                      .raddr = tb + BN - 1000, .laddr = src, .rst = s_small,
                      .lst = s_small, .count = c_small, .levels = 1};
            refused_put(&o, form, "last rows past the end of the block");
            o.raddr = tb - 64;
            refused_put(&o, form, "first run before the block");
            o = (op_t){.kind = k, .type = TELEMEM_DOUBLE, .scale = &sc,
                       .raddr = tb + (BN >> 1), .laddr = src, .rst = s_big,
                       .lst = s_local, .count = c_big, .levels = 1};
            refused_put(&o, form, "1 MiB + 1 KiB patch, last run outside");
            if (!acc) {
                o.laddr = dst;
                refused_get(&o, form, "1 MiB + 1 KiB patch, last run "
                            "outside");
                o = (op_t){.kind = k, .raddr = tb + BN - 1000, .laddr = dst,
                           .rst = s_small, .lst = s_small, .count = c_small,
                           .levels = 1};
                refused_get(&o, form, "last rows past the end of the block");
            }
        }
    }
    /* Vector and list: 1000 segments of 64 bytes with one outside the
     * block; 129 segments of 16 KiB (2 MiB + 16 KiB) with the last one
     * straddling the end. */
    enum { NS = 1000, NB = 129 };
    void **ra = calloc(NS, sizeof *ra), **la = calloc(NS, sizeof *la);
    telemem_seg_t *segs = calloc(NS, sizeof *segs);
    TT_ASSERT(ra && la && segs, "out of memory");
    for (int big = 0; big < 2; big++) {
        size_t cnt = big ? NB : NS, len = big ? 16384 : 64;
        for (int acc = 0; acc < 2; acc++)
            for (int form = 0; form < 3; form++)
                for (int list = 0; list < 2; list++)
                    for (int get = 0; get < (acc ? 1 : 2); get++) {
                        uint8_t *lb = get ? dst : src;
                        for (size_t i = 0; i < cnt; i++) {
                            ra[i] = tb + (big ? i * len : 128 + i * 80);
                            la[i] = lb + i * (len + 8);
                        }
                        if (big)
                            ra[cnt - 1] = tb + BN - len / 2;
                        else
                            ra[cnt / 2] = tb + BN + 4096; /* the middle one */
                        for (size_t i = 0; i < cnt; i++)
                            segs[i] = (telemem_seg_t){ra[i], la[i], len};
                        op_t o = {.kind = list ? (acc ? K_ACC_LIST : K_LIST)
                                               : (acc ? K_ACC_VECTOR
                                                      : K_VECTOR),
                                  .type = TELEMEM_DOUBLE, .scale = &sc,
                                  .ra = ra, .la = la, .cnt = cnt,
                                  .bytes = len, .segs = segs};
                        const char *w = big ? "129 x 16 KiB, the last one "
                                              "straddles the end"
                                            : "1000 x 64 B, number 500 "
                                              "outside";
                        if (get)
                            refused_get(&o, form, w);
                        else
                            refused_put(&o, form, w);
                    }
    }
    free(ra);
    free(la);
    free(segs);
    /* Contiguous accumulate straddling the end (1 MiB), and atomics. */
    for (int form = 0; form < 3; form++) {
        op_t o = {.kind = K_ACC, .type = TELEMEM_DOUBLE, .scale = &sc,
                  .raddr = tb + BN - (BN >> 2), .laddr = src,
                  .bytes = (size_t)1 << 20};
        refused_put(&o, form, "1 MiB, the second half past the end");
        refused_atomic(form, tb + BN, "just past the block");
        refused_atomic(form, tb - 8, "just before the block");
    }
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "fail_noncontig");
    me = tt_me;
    n = tt_n;
    seed = tt_seed();
    target = (me + 1) % n;
    source = (me + n - 1) % n;
    bases = calloc((size_t)n, sizeof *bases);
    TT_ASSERT(bases, "out of memory");
    TT_CHECK(telemem_malloc_all(BN, bases));
    tb = bases[target];
    src = aligned_alloc(64, LN);
    dst = aligned_alloc(64, LN);
    TT_ASSERT(src && dst, "out of memory");
    fill_all();
    TT_CHECK(telemem_barrier());

    bad_strided_args();
    bad_vector_args();
    bad_acc_args();
    bad_atomic_args();
    refused_ops();
    bad_mutex_calls();

    TT_ASSERT(failures == 0, "%d checks failed (above)", failures);
    if (me == 0)
        tt_log("%d cases refused as documented", ncase);
    TT_CHECK(telemem_free_all(bases[me]));
    free(src);
    free(dst);
    free(bases);
    tt_finalize();
    return 0;
}

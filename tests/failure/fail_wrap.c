/* fail_wrap.c - failure: address arithmetic that wraps (docs/hardening.md,
 * findings 3 and 4).  Every RMA, accumulate, atomic, strided, vector and
 * list entry point (blocking, _nb, _nbi) and the long active message is
 * called on every rank, self included, with remote addresses near 0 and
 * near UINTPTR_MAX, local addresses near UINTPTR_MAX, lengths that wrap
 * (SIZE_MAX - 8) or reach 1 TiB past a 64 KiB block or buffer, and strided
 * extents that overflow.  Each operation, with its completion (wait on its
 * handle, quiet after _nbi), must end in TELEMEM_ERR_OUT_OF_RANGE or
 * TELEMEM_ERR_INVALID_ARG: never OK, never a crash (run it under ASan and
 * UBSan), and the block and the local buffer keep their guard bytes.  Run
 * with TELEMEM_DIRECT=never, auto and always: on one node auto and always
 * take the window (the direct path), which must refuse a transfer running
 * past the block it knows rather than hand it to the driver.  Prints the
 * number of calls tried and refused. */
#include "tt.h"

#define BLK 65536
#define NEAR_MAX(k) ((void *)(UINTPTR_MAX - (uintptr_t)(k)))
#define TT_NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int wraps(const void *p, size_t n)
{
    return n > UINTPTR_MAX - (uintptr_t)p;
}

static long tried, refused;
static int direct_never;

static void expect_refused(const char *what, int rank, int rc)
{
    tried++;
    if (rc == TELEMEM_ERR_OUT_OF_RANGE || rc == TELEMEM_ERR_INVALID_ARG) {
        refused++;
        return;
    }
    TT_FAIL("%s to rank %d returned %s, want OUT_OF_RANGE or INVALID_ARG",
            what, rank, telemem_status_name(rc));
}

/* The completion of an nb call: its wait; of an nbi call: a quiet. */
static int done_nb(int rc, telemem_handle_t *h)
{
    return rc == TELEMEM_OK ? telemem_wait(h) : rc;
}

static int done_nbi(int rc)
{
    int q = telemem_quiet();
    return rc == TELEMEM_OK ? q : rc;
}

/* Contiguous put, get, accumulate of n bytes at remote / local; with
 * rma_only just put and get (what takes the direct path: the rest would
 * read n bytes of local memory before any target could refuse them). */
static void contiguous_(int rank, void *remote, void *local, size_t n,
                        const char *label, int rma_only)
{
    char what[160];
    telemem_handle_t h;
    double scale = 1.0;
    int64_t one = 1;
/* A put-like call may return OK and report the refusal at the next
 * quiet: each call is followed by one. */
#define TRY(call, rc)                                                     \
    do {                                                                  \
        snprintf(what, sizeof(what), "%s %s", call, label);               \
        expect_refused(what, rank, done_nbi(rc));                         \
    } while (0)
    TRY("put", telemem_put(rank, remote, local, n));
    TRY("get", telemem_get(rank, local, remote, n));
    TRY("put_nb", done_nb(telemem_put_nb(rank, remote, local, n, &h), &h));
    TRY("get_nb", done_nb(telemem_get_nb(rank, local, remote, n, &h), &h));
    TRY("put_nbi", done_nbi(telemem_put_nbi(rank, remote, local, n)));
    TRY("get_nbi", done_nbi(telemem_get_nbi(rank, local, remote, n)));
    if (rma_only)
        return;
    size_t an = n & ~(size_t)7;
    TRY("acc", telemem_acc(rank, TELEMEM_INT64, &one, remote, local, an));
    TRY("acc_nb", done_nb(telemem_acc_nb(rank, TELEMEM_DOUBLE, &scale, remote,
                                         local, an, &h), &h));
    TRY("acc_nbi", done_nbi(telemem_acc_nbi(rank, TELEMEM_INT64, &one, remote,
                                            local, an)));
    /* the same as one-segment vectors and lists */
    void *rv[1] = {remote};
    void *lv[1] = {local};
    telemem_seg_t seg = {remote, local, n}, aseg = {remote, local, an};
    TRY("put_vector", telemem_put_vector(rank, rv, (const void *const *)lv,
                                         1, n));
    TRY("get_vector", telemem_get_vector(rank, lv, (const void *const *)rv,
                                         1, n));
    TRY("put_vector_nb",
        done_nb(telemem_put_vector_nb(rank, rv, (const void *const *)lv, 1,
                                      n, &h), &h));
    TRY("get_vector_nbi",
        done_nbi(telemem_get_vector_nbi(rank, lv, (const void *const *)rv, 1,
                                        n)));
    TRY("acc_vector", telemem_acc_vector(rank, TELEMEM_INT64, &one, rv,
                                         (const void *const *)lv, 1, an));
    TRY("put_list", telemem_put_list(rank, &seg, 1));
    TRY("get_list", telemem_get_list(rank, &seg, 1));
    TRY("get_list_nb", done_nb(telemem_get_list_nb(rank, &seg, 1, &h), &h));
    TRY("put_list_nbi", done_nbi(telemem_put_list_nbi(rank, &seg, 1)));
    TRY("acc_list", telemem_acc_list(rank, TELEMEM_INT64, &one, &aseg, 1));
    TRY("acc_list_nbi",
        done_nbi(telemem_acc_list_nbi(rank, TELEMEM_INT64, &one, &aseg, 1)));
    TRY("am_request_long",
        telemem_am_request_long(rank, 0, local, n, remote, NULL, 0));
}

static void contiguous(int rank, void *remote, void *local, size_t n,
                       const char *label)
{
    contiguous_(rank, remote, local, n, label, 0);
}

/* Strided patches of rows x cols bytes at remote / local. */
static void strided(int rank, void *remote, void *local, size_t row,
                    size_t rows, size_t rstride, const char *label)
{
    char what[160];
    telemem_handle_t h;
    int64_t one = 1;
    size_t count[2] = {row, rows}, rs[1] = {rstride}, ls[1] = {row};
    TRY("put_strided",
        telemem_put_strided(rank, remote, rs, local, ls, count, 1));
    TRY("get_strided",
        telemem_get_strided(rank, local, ls, remote, rs, count, 1));
    TRY("put_strided_nb",
        done_nb(telemem_put_strided_nb(rank, remote, rs, local, ls, count, 1,
                                       &h), &h));
    TRY("get_strided_nb",
        done_nb(telemem_get_strided_nb(rank, local, ls, remote, rs, count, 1,
                                       &h), &h));
    TRY("put_strided_nbi",
        done_nbi(telemem_put_strided_nbi(rank, remote, rs, local, ls, count,
                                         1)));
    TRY("get_strided_nbi",
        done_nbi(telemem_get_strided_nbi(rank, local, ls, remote, rs, count,
                                         1)));
    count[0] &= ~(size_t)7;
    ls[0] = count[0];
    TRY("acc_strided", telemem_acc_strided(rank, TELEMEM_INT64, &one, remote,
                                           rs, local, ls, count, 1));
    TRY("acc_strided_nbi",
        done_nbi(telemem_acc_strided_nbi(rank, TELEMEM_INT64, &one, remote,
                                         rs, local, ls, count, 1)));
}

/* Atomics at remote (never a valid address here). */
static void atomics(int rank, void *remote, const char *label)
{
    char what[160];
    telemem_handle_t h;
    int64_t v = 1, c = 0, old = 0;
    int32_t v4 = 1, old4 = 0;
    TRY("fetch_add", telemem_atomic_fetch_add(rank, remote, TELEMEM_INT64, &v,
                                              &old));
    TRY("fetch_add 32", telemem_atomic_fetch_add(rank, remote, TELEMEM_INT32,
                                                 &v4, &old4));
    TRY("swap", telemem_atomic_swap(rank, remote, TELEMEM_INT64, &v, &old));
    TRY("cswap", telemem_atomic_cswap(rank, remote, TELEMEM_UINT64, &c, &v,
                                      &old));
    TRY("fetch_add_nb",
        done_nb(telemem_atomic_fetch_add_nb(rank, remote, TELEMEM_INT64, &v,
                                            &old, &h), &h));
    TRY("swap_nb", done_nb(telemem_atomic_swap_nb(rank, remote, TELEMEM_INT64,
                                                  &v, &old, &h), &h));
    TRY("cswap_nbi",
        done_nbi(telemem_atomic_cswap_nbi(rank, remote, TELEMEM_INT64, &c, &v,
                                          &old)));
    TRY("fetch_add_nbi",
        done_nbi(telemem_atomic_fetch_add_nbi(rank, remote, TELEMEM_INT32,
                                              &v4, &old4)));
}
#undef TRY

static void on_req(telemem_am_token_t tok, void *payload, size_t bytes,
                   const uint32_t *args, unsigned nargs, void *ctx)
{
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "fail_wrap");
    const char *mode = getenv("TELEMEM_DIRECT");
    direct_never = mode && !strcmp(mode, "never");
    void **bases = calloc((size_t)tt_n, sizeof(*bases));
    TT_CHECK(telemem_malloc_all(BLK, bases));
    TT_CHECK(telemem_am_register(0, on_req, NULL));
    memset(bases[tt_me], 0x5c, BLK);
    tt_gbuf_t buf;
    tt_gbuf_alloc(&buf, BLK, 0, 0x3a);
    TT_CHECK(telemem_barrier());
    const size_t TIB = (size_t)1 << 40, WRAP = SIZE_MAX - 8;
    for (int k = 0; k < tt_n; k++) {
        int r = (tt_me + k) % tt_n;
        char *blk = bases[r], *loc = (char *)buf.p;
        /* remote near 0 and near the top, every length */
        void *far[] = {(void *)8, (void *)4096, NEAR_MAX(7), NEAR_MAX(63),
                       NEAR_MAX(4095)};
        size_t lens[] = {8, 64, WRAP, TIB};
        for (size_t a = 0; a < TT_NELEM(far); a++)
            for (size_t l = 0; l < TT_NELEM(lens); l++) {
                char label[96];
                snprintf(label, sizeof(label), "remote %p, %zu bytes",
                         far[a], lens[l]);
                /* a 1 TiB read from a 64 KiB buffer is the caller's bug
                 * when the target is not known to refuse it */
                if (lens[l] == TIB && !wraps(far[a], TIB))
                    continue;
                contiguous(r, far[a], loc, lens[l], label);
            }
        /* inside the block, lengths that wrap or run 1 TiB past it */
        contiguous(r, blk, loc, WRAP, "block, wrapping length");
        contiguous(r, blk + BLK - 8, loc, WRAP, "block end, wrapping length");
        if (!direct_never) /* the initiator knows the block's size */
            contiguous_(r, blk, loc, TIB, "block, 1 TiB", 1);
        /* the local side near the top */
        contiguous(r, blk, NEAR_MAX(63), 128, "local wrapping at UINTPTR_MAX");
        /* strided: near the top, and extents that overflow */
        strided(r, NEAR_MAX(4095), loc, 64, 8, 64, "near UINTPTR_MAX");
        strided(r, (void *)64, loc, 64, 8, 64, "near 0");
        strided(r, blk, loc, 64, 3, SIZE_MAX / 2, "overflowing extent");
        strided(r, blk, loc, 64, 3, TIB, "2 TiB past the block");
        /* atomics near 0, near the top and just past the block */
        void *bad[] = {(void *)8, (void *)64, NEAR_MAX(7), NEAR_MAX(15),
                       NEAR_MAX(63), (void *)1, blk + BLK};
        for (size_t a = 0; a < TT_NELEM(bad); a++) {
            char label[64];
            snprintf(label, sizeof(label), "at %p", bad[a]);
            atomics(r, bad[a], label);
        }
    }
    TT_CHECK(telemem_barrier());
    TT_ASSERT(tt_gbuf_check(&buf, "local buffer") == 0,
              "the local buffer's guards changed");
    for (size_t i = 0; i < BLK; i++)
        TT_ASSERT(((unsigned char *)bases[tt_me])[i] == 0x5c,
                  "block byte %zu changed", i);
    long all[2] = {tried, refused};
    TT_CHECK(telemem_allreduce(all, 2, TELEMEM_INT64, TELEMEM_SUM));
    if (tt_me == 0)
        tt_log("calls tried %ld, refused %ld (OUT_OF_RANGE or INVALID_ARG), "
               "crashes 0, TELEMEM_DIRECT=%s", all[0], all[1],
               mode ? mode : "auto");
    tt_gbuf_free(&buf);
    TT_CHECK(telemem_free_all(bases[tt_me]));
    free(bases);
    tt_finalize();
    tt_log("PASS");
    return 0;
}

/* caf_atomic.c - atomic subroutines (atomic_define, atomic_ref,
 * atomic_cas, atomic_add/and/or/xor with and without fetch) on Telemem's
 * atomics: swap, fetch-add and compare-and-swap of 32- and 64-bit
 * integers and logicals, the bit operations as a compare-and-swap loop. */
#include <string.h>

#include "caf_internal.h"

/* Where the atomic variable is: rank and address; reports errors. */
static int atomic_target(tlm_caf_token_p token, size_t offset, int image,
                         int type, int kind, int *stat, const char *what,
                         int *rank_p, void **addr_p, int *tt_p)
{
    tlm_caf_token_t *t = token;
    int rank;

    tlm_caf_ok(stat);
    rank = image == 0 ? tlm_caf.me : tlm_caf_rank_of(image);
    if (rank < 0) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s: image index %d out of range [1, %d]", what, image,
                       tlm_caf.team->size);
        return 1;
    }
    if ((type != TLM_BT_INTEGER && type != TLM_BT_LOGICAL) ||
        (kind != 4 && kind != 8)) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s: no atomics on type %d kind %d", what, type, kind);
        return 1;
    }
    if (tlm_caf_state(rank) == TLM_CAF_FAILED) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_FAILED_IMAGE,
                       "%s image %d: the image has failed", what, rank + 1);
        return 1;
    }
    *addr_p = tlm_caf_remote(t, rank, (char *)t->mem + offset);
    if (!*addr_p) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "%s image %d: not a coarray other images reach", what,
                       image);
        return 1;
    }
    *rank_p = rank;
    *tt_p = kind == 4 ? TELEMEM_INT32 : TELEMEM_INT64;
    return 0;
}

void _gfortran_caf_atomic_define(tlm_caf_token_p token, size_t offset,
                                 int image, void *value, int *stat, int type,
                                 int kind)
{
    int rank, tt, rc;
    void *addr;

    if (atomic_target(token, offset, image, type, kind, stat,
                      "atomic_define", &rank, &addr, &tt))
        return;
    rc = telemem_atomic_swap(rank, addr, tt, value, NULL);
    tlm_caf_check(rc, stat, NULL, 0, "atomic_define on", rank + 1);
}

void _gfortran_caf_atomic_ref(tlm_caf_token_p token, size_t offset,
                              int image, void *value, int *stat, int type,
                              int kind)
{
    int64_t zero = 0;
    int rank, tt, rc;
    void *addr;

    if (atomic_target(token, offset, image, type, kind, stat, "atomic_ref",
                      &rank, &addr, &tt))
        return;
    rc = telemem_atomic_fetch_add(rank, addr, tt, &zero, value);
    tlm_caf_check(rc, stat, NULL, 0, "atomic_ref on", rank + 1);
}

void _gfortran_caf_atomic_cas(tlm_caf_token_p token, size_t offset,
                              int image, void *old, void *compare,
                              void *new_val, int *stat, int type, int kind)
{
    int rank, tt, rc;
    void *addr;

    if (atomic_target(token, offset, image, type, kind, stat, "atomic_cas",
                      &rank, &addr, &tt))
        return;
    rc = telemem_atomic_cswap(rank, addr, tt, compare, new_val, old);
    tlm_caf_check(rc, stat, NULL, 0, "atomic_cas on", rank + 1);
}

static int64_t load_as(int tt, const void *p)
{
    return tt == TELEMEM_INT32 ? *(const int32_t *)p : *(const int64_t *)p;
}

static void store_as(int tt, void *p, int64_t v)
{
    if (tt == TELEMEM_INT32)
        *(int32_t *)p = (int32_t)v;
    else
        *(int64_t *)p = v;
}

/* AND, OR, XOR: read, then compare-and-swap until no other image came in
 * between. */
static int bit_op(int op, int rank, void *addr, int tt, const void *value,
                  void *old)
{
    char cur[8] = {0}, want[8] = {0}, prev[8] = {0};
    int64_t zero = 0, v = load_as(tt, value), c = 0, n;
    int rc;

    rc = telemem_atomic_fetch_add(rank, addr, tt, &zero, cur);
    while (rc == TELEMEM_OK) {
        c = load_as(tt, cur);
        n = op == TLM_CAF_ATOMIC_AND ? (c & v)
          : op == TLM_CAF_ATOMIC_OR ? (c | v) : (c ^ v);
        store_as(tt, want, n);
        rc = telemem_atomic_cswap(rank, addr, tt, cur, want, prev);
        if (rc != TELEMEM_OK || load_as(tt, prev) == c)
            break;
        memcpy(cur, prev, sizeof cur);
    }
    if (rc == TELEMEM_OK && old)
        store_as(tt, old, c);
    return rc;
}

void _gfortran_caf_atomic_op(int op, tlm_caf_token_p token, size_t offset,
                             int image, void *value, void *old, int *stat,
                             int type, int kind)
{
    int rank, tt, rc;
    void *addr;

    if (atomic_target(token, offset, image, type, kind, stat, "atomic_op",
                      &rank, &addr, &tt))
        return;
    switch (op) {
    case TLM_CAF_ATOMIC_ADD:
        rc = telemem_atomic_fetch_add(rank, addr, tt, value, old);
        break;
    case TLM_CAF_ATOMIC_AND:
    case TLM_CAF_ATOMIC_OR:
    case TLM_CAF_ATOMIC_XOR:
        rc = bit_op(op, rank, addr, tt, value, old);
        break;
    default:
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "atomic_op: unknown operation %d", op);
        return;
    }
    tlm_caf_check(rc, stat, NULL, 0, "atomic_op on", rank + 1);
}

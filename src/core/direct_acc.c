/* direct_acc.c - accumulates the initiator applies itself through a
 * driver that maps the target's memory (a telemem_malloc_all block of a
 * peer on this node, the window driver): no message, no wait for the
 * target's CPU, complete on return.  Both sides apply accumulates with the
 * atomic kernels there (TLM_ACC_ATOMIC), so the two paths mix element by
 * element.  Protocol: docs/direct.md, "Accumulates". */
#define TLM_LOG_SUBSYS "direct"
#include "core/direct_int.h"

struct acc_run {
    int rank;
    tlm_direct_t *d;
    tlm_direct_rkey_t *rk;
    int type;
    const void *scale;
};

static int acc_batch(const tlm_direct_seg_t *segs, int n, void *arg)
{
    const struct acc_run *a = arg;
    return a->d->ops->acc(a->d, a->rank, a->rk, segs, n, a->type, a->scale);
}

/* Every remote scalar of patch d at remote is naturally aligned (atomic
 * instructions need it): the base and every remote stride are multiples
 * of the scalar size (a complex number's component). */
static bool remote_aligned(const tlm_pack_desc_t *d, uintptr_t remote,
                           int type)
{
    size_t sc = tlm_acc_elem_size(type);
    if (type == TLM_ACC_CFLOAT || type == TLM_ACC_CDOUBLE)
        sc /= 2;
    if (!sc || remote % sc)
        return false;
    for (int k = 1; k <= d->levels; k++)
        if (d->stride[TLM_PACK_REMOTE][k - 1] % sc)
            return false;
    return true;
}

int tlm_core_direct_acc(int rank, int type, const void *scale, void *remote,
                        const void *local, const tlm_pack_desc_t *d)
{
    dpeer_t *p = &D.peers[rank];
    if (D.mode == MODE_NEVER || !p->d || !p->d->ops->acc ||
        !remote_aligned(d, (uintptr_t)remote, type))
        return TLM_DIRECT_DECLINED;
    uintptr_t lo = (uintptr_t)remote;
    size_t ext = tlm_pack_extent(d, TLM_PACK_REMOTE);
    /* Only a key this rank holds (blocks, ranges fetched for earlier
     * transfers): an accumulate never waits for a key. */
    rkey_ent_t *e = tlm_core_dx_find(p, lo, ext);
    if (!e || !e->rk)
        return TLM_DIRECT_DECLINED;
    int rc = tlm_core_dx_order(rank, p, lo, ext, &e);
    if (rc != TELEMEM_OK)
        return rc;
    /* No poll runs from here on: the key stays valid. */
    struct acc_run a = {rank, p->d, e->rk, type, scale};
    rc = tlm_core_dx_chain(d, remote, (void *)(uintptr_t)local,
                           p->d->max_segs, acc_batch, &a);
    /* The driver refuses a key kind on the first batch, before any byte
     * changed: the AM path then carries the whole accumulate. */
    return rc == TELEMEM_ERR_UNSUPPORTED ? TLM_DIRECT_DECLINED : rc;
}

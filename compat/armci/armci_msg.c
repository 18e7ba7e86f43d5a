/* armci_msg.c - message.h's point-to-point and data-movement calls: ranks,
 * timer, abort, tagged send / receive (over libarmci's active messages),
 * barriers, broadcasts, the binary tree, address exchange, and the
 * node-scope (cluster) calls, which are local because every rank is its
 * own node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "armci_internal.h"

int armci_msg_me(void)
{
    tlm_armci_check_ready("armci_msg_me");
    return tlm_armci.me;
}

int armci_msg_nproc(void)
{
    tlm_armci_check_ready("armci_msg_nproc");
    return tlm_armci.n;
}

void armci_msg_abort(int code)
{
    fflush(stdout);
    fprintf(stderr, "[armci r%d] armci_msg_abort(%d)\n", tlm_armci.me, code);
    tlm_armci_abort(code);
}

double armci_timer(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------
 * Tagged messages */

static void check_buf(const char *call, const void *buf, int len)
{
    tlm_armci_check_bytes(call, "length", len);
    if (len > 0 && !buf)
        tlm_armci_fail(call, "buffer is NULL (length %d)", len);
}

void armci_msg_snd(int tag, void *buffer, int len, int to)
{
    static const char call[] = "armci_msg_snd";
    tlm_armci_check_proc(call, to);
    check_buf(call, buffer, len);
    uint32_t args[2] = {TLM_ARMCI_AM_MSG, (uint32_t)tag};
    tlm_armci_rc(call,
                 telemem_am_request(to, tlm_armci.am_id, buffer, (size_t)len,
                                    args, 2),
                 "to rank %d, tag %d, %d bytes", to, tag, len);
}

static int receive(const char *call, int tag, void *buffer, int buflen,
                   int *msglen, int from)
{
    check_buf(call, buffer, buflen);
    tlm_armci_msg_t *m =
        tlm_armci_inbox_wait(call, TLM_ARMCI_AM_MSG, (uint32_t)tag, 0, from);
    if (m->bytes > (size_t)buflen)
        tlm_armci_fail(call,
                       "a %zu-byte message from rank %d (tag %d) does not "
                       "fit the %d-byte buffer",
                       m->bytes, m->src, tag, buflen);
    if (m->bytes)
        memcpy(buffer, m->data, m->bytes);
    if (msglen)
        *msglen = (int)m->bytes;
    int src = m->src;
    free(m);
    return src;
}

void armci_msg_rcv(int tag, void *buffer, int buflen, int *msglen, int from)
{
    tlm_armci_check_proc("armci_msg_rcv", from);
    receive("armci_msg_rcv", tag, buffer, buflen, msglen, from);
}

int armci_msg_rcvany(int tag, void *buffer, int buflen, int *msglen)
{
    tlm_armci_check_ready("armci_msg_rcvany");
    return receive("armci_msg_rcvany", tag, buffer, buflen, msglen, -1);
}

/* ------------------------------------------------------------------------
 * Barriers, broadcasts */

void parmci_msg_barrier(void)
{
    tlm_armci_check_ready("armci_msg_barrier");
    tlm_armci_rc("armci_msg_barrier", telemem_barrier(), "barrier");
}
extern __typeof(parmci_msg_barrier) armci_msg_barrier
    __attribute__((weak, alias("parmci_msg_barrier")));

void parmci_msg_group_barrier(ARMCI_Group *group)
{
    static const char call[] = "armci_msg_group_barrier";
    tlm_armci_grp_barrier(call, tlm_armci_grp_get(call, group));
}
extern __typeof(parmci_msg_group_barrier) armci_msg_group_barrier
    __attribute__((weak, alias("parmci_msg_group_barrier")));

static void check_scope(const char *call, int scope)
{
    if (scope != SCOPE_ALL && scope != SCOPE_NODE && scope != SCOPE_MASTERS)
        tlm_armci_fail(call, "unknown scope %d", scope);
}

void armci_msg_group_bcast_scope(int scope, void *buf, int len, int root,
                                 ARMCI_Group *group)
{
    static const char call[] = "armci_msg_group_bcast_scope";
    tlm_armci_grp_t *g = tlm_armci_grp_get(call, group);
    check_scope(call, scope);
    check_buf(call, buf, len);
    if (scope == SCOPE_NODE)
        return; /* this rank alone */
    if (root < 0 || root >= tlm_armci.n || g->abs_to_grp[root] < 0)
        tlm_armci_fail(call, "root %d is not a member of the group", root);
    tlm_armci_grp_bcast(call, g, buf, (size_t)len, g->abs_to_grp[root]);
}

void armci_msg_bcast_scope(int scope, void *buffer, int len, int root)
{
    static const char call[] = "armci_msg_bcast_scope";
    tlm_armci_check_ready(call);
    check_scope(call, scope);
    check_buf(call, buffer, len);
    if (scope == SCOPE_NODE)
        return;
    tlm_armci_grp_bcast(call, tlm_armci.world, buffer, (size_t)len, root);
}

void armci_msg_bcast(void *buffer, int len, int root)
{
    armci_msg_bcast_scope(SCOPE_ALL, buffer, len, root);
}

void armci_msg_brdcst(void *buffer, int len, int root)
{
    armci_msg_bcast_scope(SCOPE_ALL, buffer, len, root);
}

void armci_msg_bintree(int scope, int *Root, int *Up, int *Left, int *Right)
{
    static const char call[] = "armci_msg_bintree";
    tlm_armci_check_ready(call);
    check_scope(call, scope);
    if (!Root || !Up || !Left || !Right)
        tlm_armci_fail(call, "an output pointer is NULL");
    int me = tlm_armci.me, n = tlm_armci.n;
    if (scope == SCOPE_NODE) {
        *Root = me;
        *Up = *Left = *Right = -1;
        return;
    }
    *Root = 0;
    *Up = me == 0 ? -1 : (me - 1) / 2;
    *Left = 2 * me + 1 < n ? 2 * me + 1 : -1;
    *Right = 2 * me + 2 < n ? 2 * me + 2 : -1;
}

/* ------------------------------------------------------------------------
 * Address exchange */

static void exchange(const char *call, tlm_armci_grp_t *g, void *ptr_ar[],
                     int n)
{
    if (!ptr_ar)
        tlm_armci_fail(call, "ptr_ar is NULL");
    if (n != g->size)
        tlm_armci_fail(call, "n %d differs from the number of ranks %d", n,
                       g->size);
    void **all = malloc((size_t)n * sizeof *all);
    if (!all)
        tlm_armci_fail(call, "out of memory");
    void *mine = ptr_ar[g->rank];
    tlm_armci_grp_allgather(call, g, &mine, all, sizeof mine);
    memcpy(ptr_ar, all, (size_t)n * sizeof *all);
    free(all);
}

void armci_exchange_address(void *ptr_ar[], int n)
{
    static const char call[] = "armci_exchange_address";
    tlm_armci_check_ready(call);
    exchange(call, tlm_armci.world, ptr_ar, n);
}

void armci_exchange_address_grp(void *ptr_arr[], int n, ARMCI_Group *group)
{
    static const char call[] = "armci_exchange_address_grp";
    exchange(call, tlm_armci_grp_get(call, group), ptr_arr, n);
}

/* ------------------------------------------------------------------------
 * Node ("cluster") scope: this rank alone. */

void armci_msg_clus_brdcst(void *buf, int len)
{
    (void)buf;
    (void)len;
}

void armci_msg_clus_igop(int *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_NODE, x, n, op, ARMCI_INT);
}

void armci_msg_clus_fgop(float *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_NODE, x, n, op, ARMCI_FLOAT);
}

void armci_msg_clus_lgop(long *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_NODE, x, n, op, ARMCI_LONG);
}

void armci_msg_clus_llgop(long long *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_NODE, x, n, op, ARMCI_LONG_LONG);
}

void armci_msg_clus_dgop(double *x, int n, char *op)
{
    armci_msg_gop_scope(SCOPE_NODE, x, n, op, ARMCI_DOUBLE);
}

void armci_grp_clus_brdcst(void *buf, int len, int grp_master,
                           int grp_clus_nproc, ARMCI_Group *mastergroup)
{
    (void)buf;
    (void)len;
    (void)grp_master;
    (void)grp_clus_nproc;
    (void)mastergroup;
}

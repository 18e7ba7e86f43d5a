/* message.h - ARMCI's message-passing layer (armci_msg_*) in libarmci over
 * Telemem: ranks, timer, tagged send/receive, barriers, broadcasts,
 * reductions (gop), selections and notify, as ARMCI-MPI 0.3.1 declares
 * them plus what Global Arrays' ARMCI tests use (armci_msg_init,
 * armci_msg_finalize, armci_notify, armci_notify_wait).  All of it runs
 * over Telemem, with or without MPI. */
#ifndef HAVE_ARMCI_MSG_H
#define HAVE_ARMCI_MSG_H

#include <armci.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Scopes.  As in ARMCI-MPI every rank is its own node: SCOPE_NODE is the
 *  calling rank alone, SCOPE_MASTERS is every rank (as SCOPE_ALL). */
enum armci_scope_e { SCOPE_ALL, SCOPE_NODE, SCOPE_MASTERS };

/** Element types of the gop / sel / reduce calls. */
enum armci_type_e {
    ARMCI_INT,
    ARMCI_LONG,
    ARMCI_LONG_LONG,
    ARMCI_FLOAT,
    ARMCI_DOUBLE
};

/* Ranks, abort, wall-clock seconds. */
int armci_msg_me(void);
int armci_msg_nproc(void);
void armci_msg_abort(int code);
double armci_timer(void);

/** Start / stop the messaging layer (Telemem, and MPI when started by an
 *  MPI launcher and not yet initialized).  ARMCI_Init does not need it. */
void armci_msg_init(int *argc, char ***argv);
void armci_msg_finalize(void);

/* Tagged messages between absolute ranks (ordered per sender and tag). */
void armci_msg_snd(int tag, void *buffer, int len, int to);
void armci_msg_rcv(int tag, void *buffer, int buflen, int *msglen, int from);
int armci_msg_rcvany(int tag, void *buffer, int buflen, int *msglen);

/* Collectives (roots are absolute ranks). */
void armci_msg_barrier(void);
void armci_msg_group_barrier(ARMCI_Group *group);
void armci_msg_bintree(int scope, int *Root, int *Up, int *Left, int *Right);

void armci_msg_bcast(void *buffer, int len, int root);
void armci_msg_bcast_scope(int scope, void *buffer, int len, int root);
void armci_msg_brdcst(void *buffer, int len, int root);
void armci_msg_group_bcast_scope(int scope, void *buf, int len, int root,
                                 ARMCI_Group *group);

/** Reduction to rank 0 of the scope (the others get the result too). */
void armci_msg_reduce(void *x, int n, char *op, int type);
void armci_msg_reduce_scope(int scope, void *x, int n, char *op, int type);

/** Select: x is n bytes whose first element (of `type`) is compared; every
 *  rank receives the x of the contributing rank with the min / max value
 *  (the lowest such rank on ties). */
void armci_msg_sel(void *x, int n, char *op, int type, int contribute);
void armci_msg_sel_scope(int scope, void *x, int n, char *op, int type,
                         int contribute);

/** Every rank puts its own entry at ptr_ar[me] (group rank for _grp);
 *  afterwards every entry holds its owner's value. */
void armci_exchange_address(void *ptr_ar[], int n);
void armci_exchange_address_grp(void *ptr_arr[], int n, ARMCI_Group *group);

/* Node-scope operations: each rank is its own node, so these are local. */
void armci_msg_clus_brdcst(void *buf, int len);
void armci_msg_clus_igop(int *x, int n, char *op);
void armci_msg_clus_fgop(float *x, int n, char *op);
void armci_msg_clus_lgop(long *x, int n, char *op);
void armci_msg_clus_llgop(long long *x, int n, char *op);
void armci_msg_clus_dgop(double *x, int n, char *op);
void armci_grp_clus_brdcst(void *buf, int len, int grp_master,
                           int grp_clus_nproc, ARMCI_Group *mastergroup);

/* Global operations: x[0..n-1] is replaced by the combination over the
 * scope / group, identical on every rank.  op: "+", "*", "max", "min",
 * "absmax", "absmin" (absolute values), and for integer types "or"
 * (bitwise), "||", "&&" (logical, 0 or 1). */
void armci_msg_gop_scope(int scope, void *x, int n, char *op, int type);
void armci_msg_igop(int *x, int n, char *op);
void armci_msg_lgop(long *x, int n, char *op);
void armci_msg_llgop(long long *x, int n, char *op);
void armci_msg_fgop(float *x, int n, char *op);
void armci_msg_dgop(double *x, int n, char *op);

void armci_msg_group_gop_scope(int scope, void *x, int n, char *op, int type,
                               ARMCI_Group *group);
void armci_msg_group_igop(int *x, int n, char *op, ARMCI_Group *group);
void armci_msg_group_lgop(long *x, int n, char *op, ARMCI_Group *group);
void armci_msg_group_llgop(long long *x, int n, char *op,
                           ARMCI_Group *group);
void armci_msg_group_fgop(float *x, int n, char *op, ARMCI_Group *group);
void armci_msg_group_dgop(double *x, int n, char *op, ARMCI_Group *group);

/** Notify: armci_notify(p) reaches p after this rank's earlier operations
 *  to p and returns the number of notifies sent to p so far;
 *  armci_notify_wait(p, &v) waits for the next notify from p, sets v to
 *  the number waited for so far and returns the number received. */
int armci_notify(int proc);
int armci_notify_wait(int proc, int *pval);

#ifdef __cplusplus
}
#endif

#endif /* HAVE_ARMCI_MSG_H */

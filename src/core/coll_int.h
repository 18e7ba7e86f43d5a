/* coll_int.h - what the files of core's collectives share, and no other
 * file includes: core_coll.c (the public calls: which path each step
 * takes), coll_msg.c (collective messages and the algorithms over them
 * among a group of ranks), coll_node.c (the node area: steps of the
 * ranks of this node through shared memory) and coll_thresholds.c
 * (TELEMEM_COLL*, the calibration profile).  docs/coll.md. */
#ifndef TLM_COLL_INT_H
#define TLM_COLL_INT_H

#include <stdatomic.h>

#include "core/core_engine.h"

/* ---- groups (coll_msg.c) ------------------------------------------------
 * The ranks a message algorithm runs among: every rank (flat), or the
 * node leaders, or a broadcast's node representatives. */
typedef struct tlm_core_coll_grp {
    int n;           /* members */
    int me;          /* this rank's index in it */
    const int *rank; /* member i's rank; NULL: rank i */
} tlm_core_coll_grp_t;

static inline int tlm_core_coll_grp_rank(const tlm_core_coll_grp_t *g, int i)
{
    return g->rank ? g->rank[i] : i;
}

/* Element size of a reducible type (INT32 .. DOUBLE), 0 for others. */
size_t tlm_core_coll_type_size(telemem_type_t t);
/* acc[i] = acc[i] op in[i] for count elements. */
void tlm_core_coll_combine(void *acc, const void *in, size_t count,
                           telemem_type_t type, telemem_op_t op);

/* Start collective number ++coll_seq (what: its name for messages; bytes:
 * the longest message it may send, refused on every rank beyond the
 * reassembly cap) / leave it, freeing what a failed one left behind. */
int tlm_core_coll_enter(const char *what, size_t bytes);
int tlm_core_coll_leave(int rc);
/* One collective message to dst / wait for one from src (round tells the
 * messages of one collective apart; lengths must agree). */
int tlm_core_coll_send(int dst, uint32_t seq, uint16_t round,
                       const void *data, size_t len);
int tlm_core_coll_recv(int src, uint32_t seq, uint16_t round, void *dst,
                       size_t len);

/* Algorithms over messages among g's members (this rank is g->me).
 * Rounds: each uses round, round + 1 (allreduce: and round + 2). */
int tlm_core_coll_msg_barrier(const tlm_core_coll_grp_t *g, uint32_t seq,
                              uint16_t round);
/* Binomial tree from member root. */
int tlm_core_coll_msg_bcast(const tlm_core_coll_grp_t *g, void *buf,
                            size_t bytes, int root, uint32_t seq,
                            uint16_t round);
/* Binomial reduction to member 0 in a fixed order, then its broadcast:
 * the same bits on every member. */
int tlm_core_coll_msg_allreduce(const tlm_core_coll_grp_t *g, void *buf,
                                size_t count, telemem_type_t type,
                                telemem_op_t op, uint32_t seq,
                                uint16_t round);
/* Every member sends its block (bytes[me] at blocks[me]) to every other,
 * into blocks[i] (bytes[i] each). */
int tlm_core_coll_msg_exchange(const tlm_core_coll_grp_t *g, void **blocks,
                               const size_t *bytes, uint32_t seq,
                               uint16_t round);
void tlm_core_coll_msg_init(void);
void tlm_core_coll_msg_fini(void);

/* ---- choices by size (coll_thresholds.c) ----------------------------------
 * TLM_COLL_SPLIT: a piece of an allreduce in the large slots of which the
 * node reduces at least this many bytes (ranks x piece) is reduced by
 * every rank of the node, a stripe each (two node steps), not by the last
 * to arrive alone (one step).
 * TLM_COLL_SPLIT_FIT: the same on a node whose ranks fit its CPUs, where
 * the stripes are reduced side by side (the smaller of the two applies
 * there).
 * TLM_COLL_BCAST_PIECE: on a node whose ranks fit its CPUs, a broadcast
 * goes through the node area in pieces of at most this many bytes, one
 * node step each, so that the readers copy a piece out while the root
 * copies the next in (else a set at a time: fewer steps, fewer
 * wake-ups).
 * TLM_COLL_BCAST_CMA: a broadcast of at least this many bytes on a node
 * whose ranks fit its CPUs and can read each other's memory (node_cma)
 * is copied by each reader straight from the root's buffer with
 * process_vm_readv: one copy where the node area takes two, in two node
 * steps.
 * TLM_COLL_REDUCE_SCATTER: an allreduce of at least this many bytes over
 * messages (the leaders', or flat) sends each member its block of every
 * buffer, which it reduces, then every reduced block to every member,
 * instead of a binomial tree up and down. */
enum { TLM_COLL_SPLIT = 0, TLM_COLL_SPLIT_FIT, TLM_COLL_BCAST_PIECE,
       TLM_COLL_BCAST_CMA, TLM_COLL_REDUCE_SCATTER, TLM_COLL_NT };
extern size_t tlm_core_coll_thr[TLM_COLL_NT];
void tlm_core_coll_thresholds_init(void);

/* ---- the node (coll_node.c) ---------------------------------------------
 * A node step s (1, 2, ...; every rank of the node takes part in the same
 * steps): each rank arrives once; the step's data lies in buffer set
 * s % 2 of the node area.  A rank that writes a set at step s first
 * waits until every rank arrived at step s - 1 (they have read what step
 * s - 2 left there); steps in which every rank waits for all arrivals
 * guarantee that by themselves. */
typedef struct tlm_core_node {
    tlm_transport_t *tp; /* the transport with the node area; NULL: none */
    int nlocal, me;      /* ranks of this node, this rank's local index */
    const int *rank;     /* local index -> rank (ascending) */
    uint64_t step;       /* last step begun */
    size_t small;        /* bytes of a small slot (dense, per rank) */
    size_t slot;         /* bytes of a large slot (page-aligned, per rank) */
    size_t set_bytes;    /* a large set: nlocal + 1 slots (broadcast) */
    size_t bcast_piece;  /* a broadcast's bytes per node step */
    size_t split_at;     /* ranks x piece from which an allreduce piece
                          * is split (TLM_COLL_SPLIT, _SPLIT_FIT) */
    bool cma;            /* broadcasts from the root's buffer (node_cma,
                          * the ranks fit the CPUs) */
} tlm_core_node_t;
extern tlm_core_node_t tlm_core_node;

/* Node-level collectives are possible (a node area of 2+ ranks). */
static inline bool tlm_core_node_on(void)
{
    return tlm_core_node.tp != NULL;
}
/* Bytes of the node area for nlocal ranks (0: none). */
size_t tlm_core_coll_node_bytes(int nlocal);
int tlm_core_node_init(void);
void tlm_core_node_fini(void);

/* Begin the next step; writer: this rank writes into the step's set (so
 * it waits for the arrivals of the step before). */
int tlm_core_node_begin(bool writer, uint64_t *s_p);
/* Arrive at step s; returns whether this rank arrived last (then it
 * wakes the ranks that wait for the step's arrivals). */
bool tlm_core_node_arrive(uint64_t s);
/* Wait until every rank arrived at step s. */
int tlm_core_node_wait_all(uint64_t s);
/* Release step s with status rc (waiters return it), waking every local
 * rank that sleeps. */
void tlm_core_node_release(uint64_t s, int rc);
/* Wait until step s is released: its status. */
int tlm_core_node_wait_release(uint64_t s);
/* Slot of local rank l in step s's set: small (dense) or large. */
uint8_t *tlm_core_node_small(uint64_t s, int l);
uint8_t *tlm_core_node_slot(uint64_t s, int l);
/* The result slot of step s's large set (after the nlocal slots), and the
 * whole set (set_bytes) for a broadcast. */
uint8_t *tlm_core_node_result(uint64_t s);
uint8_t *tlm_core_node_set(uint64_t s);
/* Does a local rank other than except yield or sleep in a node step's
 * wait (a hint: it may start to the next moment)? */
bool tlm_core_node_asleep(int except);
/* Copy n bytes at addr in process pid's memory to dst (node.cma). */
int tlm_core_node_cma_read(int pid, void *dst, uintptr_t addr, size_t n);

#endif

/* core_wait_node.h - the node word's side of the waits (core_wait_node.c),
 * called by core_wait.c's turns; the public part (node_step, node_words,
 * node_wake) is in core_wait.h. */
#ifndef TLM_CORE_WAIT_NODE_H
#define TLM_CORE_WAIT_NODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The calling thread's node step: until *word reaches target (NULL: the
 * step ended). */
void tlm_core_wait_node_begin(_Atomic uint64_t *word, uint64_t target);
/* Ranks of this node sleep on the node word, and the calling thread's
 * wait is not a node step's (they may owe it something). */
bool tlm_core_wait_node_sleepers(void);
/* A wait that may need rank (any rank: -1) asleep on the node word wakes
 * it (a node step's own wait wakes nobody). */
void tlm_core_wait_node_need(int rank);
/* May the calling thread's node step sleep on the node word? */
bool tlm_core_wait_node_sleep_ok(void);
/* Sleep on the node word for at most ms: the messages handled in the last
 * look (> 0: no sleep), 0, or a transport's negative status. */
int tlm_core_wait_node_sleep(int ms);

#endif

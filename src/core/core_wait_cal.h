/* core_wait_cal.h - the start-up measurements of the wait policy
 * (core_wait_cal.c) and the bounds core_wait.c applies to them. */
#ifndef TLM_CORE_WAIT_CAL_H
#define TLM_CORE_WAIT_CAL_H

#include <stdint.h>

/* Bounds of the measured cost of a sleep and wake-up, the spin budget: a
 * loaded machine's measurement (a wake-up that waited for a CPU) must not
 * make a rank spin for milliseconds. */
#define BLOCK_NS_MIN 1000
#define BLOCK_NS_MAX 100000
#define BLOCK_NS_GUESS 10000 /* when it cannot be measured */
/* Bounds of the scheduler's time slice (tlm_core_wait_sched_slice), and
 * the figure when it cannot be read (Linux's EEVDF base slice: 0.75 ms x
 * (1 + log2 CPUs), at most 8 CPUs counted). */
#define SLICE_MIN ((int64_t)100000)
#define SLICE_MAX ((int64_t)10000000)
#define SLICE_GUESS ((int64_t)3000000)
/* How long the sleeper's CPU idles before it is woken when the spin
 * budget is measured; a sleep's wake-up counts as a sample of the same
 * cost only when it came at least this far into the sleep. */
#define CAL_PAUSE_NS 200000

/* Waking a sleeper whose CPU went idle (ns; the spin budget). */
int64_t tlm_core_wait_measure_wake(void);
/* Half a futex ping-pong between two threads (ns; the yield bounds). */
int64_t tlm_core_wait_measure_block(void);
/* The scheduler's time slice for the calling thread (ns). */
int64_t tlm_core_wait_sched_slice(void);
/* Ask for a time slice of ns for the calling thread (SCHED_OTHER,
 * sched_setattr; Linux 6.12+ honours it): 0 or an errno value. */
int tlm_core_wait_set_slice(int64_t ns);
/* qsort comparison of int64_t. */
int tlm_core_wait_cmp_i64(const void *a, const void *b);

#endif

/* core_wait.h - how a waiting thread spends its time (TELEMEM_WAIT): it
 * spins for a measured budget, yields, then sleeps on the transports' wait
 * objects until something arrives; the bounded wait every blocking call
 * uses; and the wake-up of this process's other sleeping threads. */
#ifndef TLM_CORE_WAIT_H
#define TLM_CORE_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "telemem.h"
#include "core/core.h"

/* The public telemem_wait_t, which telemem_wait_poll() steps the same way
 * as the library's own waits.  Its private int `idle` holds the phase of
 * the wait and the empty polls of the current phase. */
typedef telemem_wait_t tlm_wait_t;

/* TELEMEM_WAIT. */
enum { TLM_WAIT_AUTO = 0, TLM_WAIT_SPIN, TLM_WAIT_YIELD, TLM_WAIT_BLOCK };

/* Check a TELEMEM_WAIT value before the job is joined: TELEMEM_OK or
 * TELEMEM_ERR_CONFIG with a message naming the variable. */
int tlm_core_wait_check_config(const char *value);
/* After the transports are open: the policy, the measured cost of a sleep
 * and wake-up (the spin budget), the CPUs of this process and the ranks
 * sharing its node (nlocal), the process-local wake-up.  TELEMEM_OK or
 * TELEMEM_ERR_NO_MEMORY. */
int tlm_core_wait_setup(const char *value, int nlocal);
void tlm_core_wait_fini(void);
/* "wait = auto (spin 12 us, ...)" for TELEMEM_PRINT_CONFIG. */
const char *tlm_core_wait_string(void);

/* Keep polling while waiting, bounded by TELEMEM_TIMEOUT, watching the
 * liveness of rank peer (all ranks when < 0). */
void tlm_core_wait_init(tlm_wait_t *w, int peer);
/* One turn: poll; when nothing came, spin, yield or sleep as the policy
 * says (a sleep ends when something arrives for this process).  Returns
 * to the caller after each turn so that it looks at its condition again.
 * TELEMEM_OK, or TELEMEM_ERR_TIMED_OUT / _PEER_DEAD / a transport error. */
int tlm_core_wait_step(tlm_wait_t *w);
/* The same for a condition in the program's memory (telemem_wait_poll):
 * also made true by direct-path writes, which wake a sleeper only where
 * the transport says so; elsewhere its sleeps are short. */
int tlm_core_wait_user_step(tlm_wait_t *w);
/* The same for a collective's node step (docs/coll.md): until *word
 * reaches target, which a rank of this node makes true, then calls
 * tlm_core_wait_node_wake.  Where the job allows (one node, no threads,
 * no progress thread), the wait sleeps on the node word instead of its
 * doorbell. */
int tlm_core_wait_node_step(tlm_wait_t *w, _Atomic uint64_t *word,
                            uint64_t target);
/* Is w still spinning (polling without pause), not yet yielding or
 * sleeping?  A rank whose waiter it is runs now. */
bool tlm_core_wait_spinning(const tlm_wait_t *w);
/* The node word (NULL, NULL: none): a futex word and the count of its
 * sleepers, in memory every rank of this node maps, for a job whose
 * ranks all share this node. */
void tlm_core_wait_node_words(_Atomic uint32_t *seq,
                              _Atomic uint32_t *sleepers);
/* Wake every rank of this node sleeping on the node word (one system
 * call; a load where none sleeps). */
void tlm_core_wait_node_wake(void);
/* Is peer (every rank when < 0) alive and still in the job (not LEAVE)?
 * TELEMEM_OK or TELEMEM_ERR_PEER_DEAD (logged; remembered for finalize). */
int tlm_core_check_alive(int peer);

/* Progress with the wake-up of other threads: after events, threads of
 * this process sleeping in a wait look at their conditions again. */
void tlm_core_wait_notify(void);
static inline int tlm_core_progress(void)
{
    int n = tlm_am_progress();
    if (TLM_UNLIKELY(n > 0 && tlm_core.locking))
        tlm_core_wait_notify();
    return n;
}

/* The progress thread's turn after a poll that found nothing (n == 0) or
 * something (n > 0): it spins, yields and sleeps as a wait does, but
 * watches no rank and has no timeout.  Called without the lock. */
void tlm_core_wait_thread_turn(tlm_wait_t *w, int n);
/* The progress thread naps: a wait it had armed is disarmed, and it
 * starts over with the spin when it polls again. */
void tlm_core_wait_thread_pause(tlm_wait_t *w);
/* Wake every thread of this process sleeping in a wait (the progress
 * thread's stop). */
void tlm_core_wait_wake_all(void);
/* The futex system call (op: FUTEX_WAIT or FUTEX_WAKE, _PRIVATE for a
 * process-private word; ts a relative timeout or NULL). */
long tlm_core_futex(_Atomic uint32_t *w, int op, uint32_t val,
                    const struct timespec *ts);

#endif

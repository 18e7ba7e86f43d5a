/* core_wait_node.c - the node word: a rank whose collective waits for a
 * step of the node (docs/coll.md) sleeps on a futex word of the node area rather than on its doorbell:
 * the end of the step then wakes every sleeper of the node with one
 * system call, where the doorbells took a datagram each (255 in a row
 * from the releasing rank at 256 ranks, each wake-up a sync wake-up that
 * could hand it the woken rank's turn), and the sleep costs no barrier
 * across the node.  Such a sleeper does not watch its doorbell: a wait
 * of another rank that may need it (its request or its room lies in a
 * ring the sleeper does not read) wakes the node word's sleepers when it
 * stops spinning and whenever it sleeps, and sleeps for at most
 * SHORT_SLEEP_MS, doubling, while they sleep.  Only in jobs of one node
 * (no rank elsewhere reaches it through a network) and single-threaded
 * ranks without a progress thread (tlm_core_wait_node_step). */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "core/core.h"
#include "core/core_wait.h"
#include "core/core_wait_node.h"

static _Atomic uint32_t *nseq, *nsleep; /* tlm_core_wait_node_words */
/* The calling thread's node step (tlm_core_wait_node_begin). */
static _Thread_local _Atomic uint64_t *node_word
    __attribute__((tls_model("initial-exec")));
static _Thread_local uint64_t node_target
    __attribute__((tls_model("initial-exec")));

void tlm_core_wait_node_words(_Atomic uint32_t *seq,
                              _Atomic uint32_t *sleepers)
{
    nseq = seq;
    nsleep = sleepers;
}

void tlm_core_wait_node_begin(_Atomic uint64_t *word, uint64_t target)
{
    node_word = word;
    node_target = target;
}

/* Ranks of this node sleep on the node word, and this wait is not a node
 * step's (they may owe it something). */
bool tlm_core_wait_node_sleepers(void)
{
    return nsleep && !node_word &&
           atomic_load_explicit(nsleep, memory_order_relaxed) > 0;
}

/* Wake the node word's sleepers whose bit is in bits: a sleeper waits
 * with the bit of its rank modulo 32 (the job is one node: a rank is its
 * local index), so that a wait that needs one rank wakes about 1/32 of
 * them, not every sleeper of the node each time it stops spinning. */
static void node_wake_bits(uint32_t bits)
{
    if (!nsleep)
        return;
    /* The store the sleepers wait for, then the count (pairs with the
     * count, then the last look, in node_sleep). */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(nsleep, memory_order_relaxed) == 0)
        return;
    atomic_fetch_add(nseq, 1);
    syscall(SYS_futex, (uint32_t *)(uintptr_t)nseq, FUTEX_WAKE_BITSET,
            INT_MAX, NULL, NULL, bits);
}

void tlm_core_wait_node_wake(void)
{
    node_wake_bits(FUTEX_BITSET_MATCH_ANY);
}

/* A wait that may need a rank sleeping on the node word (its peer's, or
 * any when it waits for several). */
void tlm_core_wait_node_need(int rank)
{
    if (nsleep && !node_word)
        node_wake_bits(rank >= 0 ? 1u << (rank % 32)
                                 : FUTEX_BITSET_MATCH_ANY);
}

/* May this node step's wait sleep on the node word?  Not with requests of
 * its own still queued (the room they wait for would ring the doorbell). */
bool tlm_core_wait_node_sleep_ok(void)
{
    return node_word && nsleep && !tlm_core.locking &&
           !tlm_core.cfg.PROGRESS_THREAD && tlm_am.pending == NULL;
}

/* Sleep on the node word: counted, then the last looks (messages, the
 * step's word), then the futex unless the word moved since the count. */
int tlm_core_wait_node_sleep(int ms)
{
    uint32_t seq = atomic_load(nseq);
    atomic_fetch_add(nsleep, 1);
    int n = tlm_core_progress();
    if (n == 0 && atomic_load_explicit(node_word, memory_order_acquire) <
                      node_target) {
        /* FUTEX_WAIT_BITSET's timeout is absolute (CLOCK_MONOTONIC). */
        int64_t until = tlm_util_now_ns() + (int64_t)ms * 1000000;
        struct timespec ts = {until / 1000000000, until % 1000000000};
        syscall(SYS_futex, (uint32_t *)(uintptr_t)nseq, FUTEX_WAIT_BITSET,
                seq, &ts, NULL, 1u << (tlm_core.rank % 32));
    }
    atomic_fetch_sub(nsleep, 1);
    return n;
}

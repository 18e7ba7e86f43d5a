/* gasnet_local.c - puts, gets and memsets into a segment mapped in this
 * process: the map of where each node's segment lies and where this
 * process maps it (gasnetc_segmap: telemem_ptr, a node on this host
 * reached by Telemem's window driver), long copies, each node's control
 * line after its segment (its threads waiting in GASNET_BLOCKUNTIL, the
 * host's in its first node's line, and whether it should poll: another
 * node's exit notice, a request to itself), the
 * wake-ups (telemem_ptr_wake) owed after stores to nodes that wait, and
 * the poll of inline operations once an exit is under way or a request
 * to this node is pending (gasnetc_tick), and the Medium slots after the
 * control line (claimed by senders, freed after the handler).
 * The inline stores and loads are in the installed
 * gasnet_extended_help_extra.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gasnet_internal.h"

gasnetc_segmap_t *gasnetc_segmap;
uintptr_t gasnetc_segmap_nodes;
/* Without a control line (no segment), this process's own word. */
static uintptr_t own_attention;
const volatile uintptr_t *gasnetc_attention = &own_attention;
static uintptr_t *attention = &own_attention;

/* A node's control line (atomics): how many of its threads wait in
 * GASNET_BLOCKUNTIL, whose condition may be another node's store; in the
 * host's first node's line, how many of the host's; whether another node
 * called gasnet_exit(0). */
typedef struct {
    uint32_t blockwait;
    uint32_t hostwait;
    uintptr_t attention;
    uint32_t incoming; /* Longs other nodes are copying into it now */
} ctrl_t;

static ctrl_t *ctrl_mine;  /* in this node's block */
static ctrl_t **ctrl_of;   /* by node: its line mapped here, or NULL */
static ctrl_t *ctrl_host;  /* the host's first node's line */
static unsigned char *slots_of; /* by node: its Medium slots mapped here */
static unsigned slots_mine;
static unsigned next_slot; /* where the next claim starts looking */
/* A slot's previous filler in this process, for the next one: a slot is
 * filled again only after its target freed it, which it did after the
 * handler, which ran after the previous filler's header; but that chain
 * runs through another process, where ThreadSanitizer cannot follow it.
 * The filler's release store here (before its header) and the claimer's
 * acquire load say the same inside this process (hashed: a shared word
 * only orders more). */
static uint32_t slot_filled[64];
uint32_t *tlm_gasnet_hostwait;
uint32_t *tlm_gasnet_incoming;
/* Below this a Medium fits one of Telemem's shm buffers (16 KiB with its
 * headers) and travels as a message: one copy either way, and the message
 * was as fast or faster from 1 to 16 KiB. */
size_t tlm_gasnet_medium_min = 16384;

static ctrl_t *ctrl_in(void *block, uint64_t segsize)
{
    return (ctrl_t *)(void *)((char *)block + segsize + GASNET_PAGESIZE);
}

/* After the control line, a line of its own (senders claim there; the
 * waits that count themselves in the control line do not pay for it): bit
 * k set while Medium slot k holds a payload.  Then the slots. */
static uint32_t *slots_busy(ctrl_t *c)
{
    return (uint32_t *)(void *)((char *)c + 64);
}

static char *slot_at(ctrl_t *c, unsigned k)
{
    return (char *)c + 128 + (size_t)k * TLM_GASNET_MEDIUM_SLOT;
}

unsigned tlm_gasnet_medium_slots_setting(void)
{
    const char *s = getenv("GASNET_TELEMEM_MEDIUM_SLOTS");
    if (!s || !*s)
        return 8;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 32) {
        fprintf(stderr,
                "*** GASNet WARNING (node %d): "
                "GASNET_TELEMEM_MEDIUM_SLOTS='%s' is not 0-32; 8 taken\n",
                tlm_gasnet.mynode, s);
        return 8;
    }
    return (unsigned)v;
}

void tlm_gasnet_local_attach(void *const *bases, const uint64_t *sizes,
                             const uint64_t *slots)
{
    size_t n = (size_t)tlm_gasnet.nodes;
    gasnetc_segmap_t *m = calloc(n, sizeof *m);
    ctrl_of = calloc(n, sizeof(ctrl_t *));
    slots_of = calloc(n, 1);
    if (!m || !ctrl_of || !slots_of)
        tlm_gasnet_fatal("gasnet_attach", "out of memory for %zu nodes", n);
    for (size_t i = 0; i < n; i++) {
        const gasnet_seginfo_t *s = &tlm_gasnet.seg[i];
        m[i].base = s->addr;
        m[i].other = i != (size_t)tlm_gasnet.mynode;
        if (!s->size)
            continue;
        /* UNSUPPORTED: another host, or TELEMEM_DIRECT=never; puts and
         * gets then go through Telemem's operations. */
        void *l = NULL, *c = NULL;
        unsigned k = slots[i] <= 32 ? (unsigned)slots[i] : 0;
        size_t line = 128 + (size_t)k * TLM_GASNET_MEDIUM_SLOT;
        if (telemem_ptr((int)i, s->addr, s->size, &l) == TELEMEM_OK &&
            telemem_ptr((int)i, ctrl_in(bases[i], sizes[i]), line, &c) ==
                TELEMEM_OK) {
            m[i].local = l;
            m[i].size = s->size; /* 0: not mapped */
            ctrl_of[i] = c;
            if (i != (size_t)tlm_gasnet.mynode)
                slots_of[i] = (unsigned char)k;
        }
    }
    int me = tlm_gasnet.mynode;
    ctrl_mine = sizes[me] ? ctrl_in(bases[me], sizes[me]) : NULL;
    slots_mine = ctrl_mine && slots[me] <= 32 ? (unsigned)slots[me] : 0;
    for (size_t i = 0; i < n && !ctrl_host; i++)
        ctrl_host = ctrl_of[i];
    if (ctrl_host)
        tlm_gasnet_hostwait = &ctrl_host->hostwait;
    if (ctrl_mine) {
        attention = &ctrl_mine->attention;
        gasnetc_attention = attention;
        tlm_gasnet_incoming = &ctrl_mine->incoming;
    }
    gasnetc_segmap = m;
    __atomic_store_n(&gasnetc_segmap_nodes, n, __ATOMIC_RELEASE);
}

void tlm_gasnet_local_fini(void)
{
    gasnetc_segmap_t *m = gasnetc_segmap;
    __atomic_store_n(&gasnetc_segmap_nodes, 0, __ATOMIC_RELEASE);
    gasnetc_segmap = NULL;
    free(m);
    attention = &own_attention;
    gasnetc_attention = attention;
    tlm_gasnet_hostwait = NULL;
    tlm_gasnet_incoming = NULL;
    free(ctrl_of);
    ctrl_of = NULL;
    free(slots_of);
    slots_of = NULL;
    slots_mine = 0;
    ctrl_mine = NULL;
    ctrl_host = NULL;
}

/* Long copies in pieces of 512 KiB, as Telemem's window driver copies
 * (glibc's memcpy switches from rep movsb to a vector loop above 1 MiB
 * on this kind of CPU, which was slower for 2-8 MiB into shared memory). */
#define PIECE ((size_t)512 * 1024)

void gasnetc_copy_long(char *dst, const char *src, size_t n)
{
    while (n > PIECE) {
        memcpy(dst, src, PIECE);
        dst += PIECE;
        src += PIECE;
        n -= PIECE;
    }
    memcpy(dst, src, n);
}

/* Wake the nodes waiting in GASNET_BLOCKUNTIL (the others' waits end by
 * messages).  No fence before the loads of their lines: a waiter counts
 * itself (a locked instruction), then looks at its condition, and
 * Telemem's sleep looks again after its membarrier(), which orders these
 * stores before it; where the kernel lacks membarrier() a store still in
 * this CPU's buffer could be missed, and that waiter then sees it at its
 * next liveness check (TELEMEM_LIVENESS_INTERVAL). */
void tlm_gasnet_local_wake_all(void)
{
    for (uintptr_t i = 0; ctrl_of && i < gasnetc_segmap_nodes; i++)
        if (ctrl_of[i] && (int)i != tlm_gasnet.mynode &&
            __atomic_load_n(&ctrl_of[i]->blockwait, __ATOMIC_RELAXED))
            (void)telemem_ptr_wake((int)i);
}

void tlm_gasnet_local_block_begin(void)
{
    tlm_gasnet_local_flush();
    if (ctrl_mine && ctrl_host) {
        __atomic_fetch_add(&ctrl_host->hostwait, 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&ctrl_mine->blockwait, 1, __ATOMIC_SEQ_CST);
    }
}

void tlm_gasnet_local_block_end(void)
{
    if (ctrl_mine && ctrl_host) {
        __atomic_fetch_sub(&ctrl_mine->blockwait, 1, __ATOMIC_RELEASE);
        __atomic_fetch_sub(&ctrl_host->hostwait, 1, __ATOMIC_RELEASE);
    }
}

void tlm_gasnet_local_attention(void)
{
    for (uintptr_t i = 0; ctrl_of && i < gasnetc_segmap_nodes; i++)
        if (ctrl_of[i] && (int)i != tlm_gasnet.mynode)
            __atomic_store_n(&ctrl_of[i]->attention, 1, __ATOMIC_RELEASE);
}

void tlm_gasnet_local_copy_begin(int node)
{
    if (ctrl_of && ctrl_of[node])
        __atomic_fetch_add(&ctrl_of[node]->incoming, 1, __ATOMIC_RELAXED);
}

/* After the header's send: a wait that sees 0 finds the header. */
void tlm_gasnet_local_copy_end(int node)
{
    if (ctrl_of && ctrl_of[node])
        __atomic_fetch_sub(&ctrl_of[node]->incoming, 1, __ATOMIC_RELEASE);
}

/* A free slot of node's, claimed; NULL when it has none free (or none
 * mapped here): the Medium then travels as a message. */
char *tlm_gasnet_local_slot_claim(int node, unsigned *slot)
{
    unsigned k = slots_of ? slots_of[node] : 0;
    if (!k)
        return NULL;
    ctrl_t *c = ctrl_of[node];
    uint32_t all = k == 32 ? ~(uint32_t)0 : ((uint32_t)1 << k) - 1;
    uint32_t *word = slots_busy(c);
    uint32_t busy = __atomic_load_n(word, __ATOMIC_RELAXED);
    while ((busy & all) != all) {
        /* The first free slot from a turning start: a slot the target has
         * just read (and whose lines the reply's sender just wrote) costs
         * more to fill again than one left alone for a few messages
         * (32-64 KiB ping-pong 1.3x -> 1.0-1.1x GASNet's time). */
        uint32_t fr = ~busy & all;
        unsigned r = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) % k;
        uint32_t up = fr & ~(((uint32_t)1 << r) - 1);
        unsigned b = (unsigned)__builtin_ctz(up ? up : fr);
        if (__atomic_compare_exchange_n(word, &busy, busy | (uint32_t)1 << b,
                                        false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            *slot = b;
            (void)__atomic_load_n(&slot_filled[(node * 32 + (int)b) & 63],
                                  __ATOMIC_ACQUIRE);
            return slot_at(c, b);
        }
    }
    return NULL;
}

/* After the payload's copy into node's slot, before its header. */
void tlm_gasnet_local_slot_filled(int node, unsigned slot)
{
    __atomic_fetch_add(&slot_filled[(node * 32 + (int)slot) & 63], 1,
                       __ATOMIC_RELEASE);
}

/* The header could not be sent: the slot is free again. */
void tlm_gasnet_local_slot_release(int node, unsigned slot)
{
    __atomic_fetch_and(slots_busy(ctrl_of[node]), ~((uint32_t)1 << slot),
                       __ATOMIC_RELEASE);
}

/* This node's slot named by a header, or NULL if it has no such slot. */
char *tlm_gasnet_local_slot_mine(unsigned slot, size_t nbytes)
{
    if (slot >= slots_mine || nbytes > TLM_GASNET_MEDIUM_SLOT)
        return NULL;
    return slot_at(ctrl_mine, slot);
}

/* Its handler has returned: senders may fill the slot again (release:
 * after the handler's reads of it). */
void tlm_gasnet_local_slot_done(unsigned slot)
{
    __atomic_fetch_and(slots_busy(ctrl_mine), ~((uint32_t)1 << slot),
                       __ATOMIC_RELEASE);
}

void tlm_gasnet_local_poll_soon(void)
{
    if (!__atomic_load_n(attention, __ATOMIC_RELAXED))
        __atomic_store_n(attention, 1, __ATOMIC_RELEASE);
}

void gasnetc_tick(void)
{
    if (tlm_gasnet_frame || tlm_gasnet_hsl_held || !tlm_gasnet.attached)
        return; /* a handler's mistake: the library path reports it */
    /* Cleared before the poll: a request that sets it again meanwhile is
     * polled for next time.  A pending exit keeps it set. */
    if (!__atomic_load_n(&tlm_gasnet.exit_pending, __ATOMIC_RELAXED))
        __atomic_store_n(attention, 0, __ATOMIC_RELAXED);
    tlm_gasnet_local_flush();
    (void)telemem_poll();
    if (TLM_GASNET_UNLIKELY(__atomic_load_n(&tlm_gasnet.exit_pending,
                                            __ATOMIC_RELAXED) &&
                            !__atomic_load_n(&tlm_gasnet.exiting,
                                             __ATOMIC_ACQUIRE)))
        tlm_gasnet_maybe_join_exit();
}

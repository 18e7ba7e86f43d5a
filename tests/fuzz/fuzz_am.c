/* fuzz_am.c - libFuzzer target: the active-message wire decoder.  A
 * singleton Telemem (rank 0 of 1) with one registered region between two
 * guard areas receives each input as one or more messages through the
 * transports' deliver upcall, tlm_am_deliver(), then polls (its own answers
 * travel through the loop transport and are decoded too).  Any byte string
 * must be rejected cleanly: no crash, no sanitizer report, nothing written
 * outside the region (guards checked after every input).
 *
 * Input format: messages separated by FUZZ_SEP ("\xa5TLM", also in
 * am.dict), each a raw message whose first byte is its type (1..17).  So
 * that inputs can reach the region without knowing where it is, the harness
 * adds the region's base to every target address before delivery: the
 * 8-byte word at offset 8 of PUT, GET_REQ, long USER, PUTS, GETS_REQ and
 * RMW, and the address word of every list record of PUTV / GETV_REQ.  An
 * address 0 in an input is the region's first byte; any absolute address
 * is still reachable (the sum wraps).
 *
 * Reassembly memory (finding F1, docs/hardening.md): the harness lowers
 * the per-source cap to FUZZ_REASM_MAX (speed under ASan) and checks after
 * every input that what rank 0 holds for itself stays within it.  The
 * collective state is reset after every input (a fuzz process never runs
 * the collective its early messages wait for). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"
#include "am/am.h"
#include "core/core.h"
#include "core/core_am_api.h"

#define REGION 4096
#define GUARD 4096
#define MAX_MSGS 64
#define FUZZ_SEP "\xa5TLM"
#define FUZZ_SEP_LEN 4

static uint8_t *arena;  /* guard | region | guard */
static uint8_t *region; /* arena + GUARD */
static uint8_t guard_want[GUARD];
#define FUZZ_REASM_MAX ((size_t)16 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A user handler that reads its whole payload and arguments (so the
 * sanitizers see any bad pointer or length) and, for handler 1, replies. */
static volatile uint64_t sink;
static void am_handler(telemem_am_token_t token, void *payload, size_t bytes,
                       const uint32_t *args, unsigned nargs, void *ctx)
{
    uint64_t s = 0;
    const uint8_t *p = payload;
    for (size_t i = 0; i < bytes; i++)
        s += p[i];
    for (unsigned i = 0; i < nargs; i++)
        s += args[i];
    sink += s;
    if ((uintptr_t)ctx == 1)
        (void)telemem_am_reply(token, 0, payload, bytes < 64 ? bytes : 64,
                               args, nargs);
}

static void fill_guards(void)
{
    for (size_t i = 0; i < GUARD; i++)
        guard_want[i] = (uint8_t)(0x5a ^ (i * 131u));
    memcpy(arena, guard_want, GUARD);
    memcpy(arena + GUARD + REGION, guard_want, GUARD);
}

static void check_guards(void)
{
    for (int side = 0; side < 2; side++) {
        const uint8_t *g = side ? arena + GUARD + REGION : arena;
        if (memcmp(g, guard_want, GUARD) != 0) {
            size_t i = 0;
            while (g[i] == guard_want[i])
                i++;
            fprintf(stderr, "fuzz_am: guard %s the region changed at byte "
                    "%zu: a message wrote outside registered memory\n",
                    side ? "after" : "before", i);
            abort();
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* No launcher: a singleton.  Refused messages are logged at warn;
     * FUZZ_VERBOSE=1 keeps the log, else it goes to /dev/null (speed). */
    unsetenv("TELEMEM_RANK");
    unsetenv("TELEMEM_NRANKS");
    unsetenv("TELEMEM_KVS");
    unsetenv("TELEMEM_JOBID");
    setenv("TELEMEM_BOOTSTRAP", "singleton", 1);
    if (!getenv("FUZZ_VERBOSE"))
        setenv("TELEMEM_LOG_FILE", "/dev/null", 1);
    int rc = telemem_initialize(NULL, NULL);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "fuzz_am: telemem_initialize: %s\n",
                telemem_strerror(rc));
        exit(1);
    }
    arena = aligned_alloc(4096, 2 * GUARD + REGION);
    if (!arena)
        exit(1);
    region = arena + GUARD;
    memset(region, 0, REGION);
    fill_guards();
    rc = telemem_register(region, REGION);
    int set;
    if (rc == TELEMEM_OK)
        rc = telemem_am_register(0, am_handler, (void *)0);
    if (rc == TELEMEM_OK)
        rc = telemem_am_register(1, am_handler, (void *)1);
    if (rc == TELEMEM_OK)
        rc = telemem_mutexes_create(4, &set);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "fuzz_am: setup: %s\n", telemem_strerror(rc));
        exit(1);
    }
    tlm_core_reasm_set_max(FUZZ_REASM_MAX);
    return 0;
}

static void add_base(uint8_t *p)
{
    uint64_t a;
    memcpy(&a, p, 8);
    a += (uint64_t)(uintptr_t)region;
    memcpy(p, &a, 8);
}

/* Relocate the target addresses of one message (see the top comment). */
static void relocate(uint8_t *m, size_t len)
{
    if (len < 16)
        return;
    tlm_am_frag_hdr_t h;
    memset(&h, 0, sizeof h);
    memcpy(&h, m, len < sizeof h ? len : sizeof h);
    switch (h.h.type) {
    case TLM_AM_PUT:
    case TLM_AM_GET_REQ:
    case TLM_AM_PUTS:
    case TLM_AM_GETS_REQ:
    case TLM_AM_RMW:
        add_base(m + 8);
        return;
    case TLM_AM_USER:
        if (h.h.flags & TLM_AM_F_LONG)
            add_base(m + 8);
        return;
    case TLM_AM_PUTV:
    case TLM_AM_GETV_REQ:
        break;
    default:
        return;
    }
    if (len < sizeof h)
        return;
    size_t hl = sizeof h;
    if (h.h.type == TLM_AM_GETV_REQ)
        hl += 8; /* data total */
    else if (h.h.aux != 0)
        hl += 16; /* accumulate scale */
    if (len < hl || h.offset > ((uint64_t)1 << 40))
        return;
    /* Stream positions [offset, offset + plen) of this fragment; records
     * occupy [0, nrecs * 16) of the stream. */
    uint64_t list_end = h.addr < ((uint64_t)1 << 36) ? h.addr * 16 : 0;
    size_t plen = len - hl;
    uint64_t q = (h.offset + 15) & ~(uint64_t)15;
    for (; q < list_end && q + 8 <= h.offset + plen; q += 16)
        add_base(m + hl + (q - h.offset));
}

static void deliver(const uint8_t *data, size_t len)
{
    /* An exact-size copy, so reads past its end are caught; malloc keeps
     * the 16-byte alignment a transport buffer has. */
    uint8_t *m = malloc(len ? len : 1);
    if (!m)
        abort();
    memcpy(m, data, len);
    relocate(m, len);
    tlm_am_deliver(NULL, 0, m, len);
    free(m);
    /* Answers to ourselves (acks, get replies, user replies). */
    for (int i = 0; i < 16 && telemem_poll() > 0; i++)
        ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    for (int n = 0; n < MAX_MSGS && p <= end; n++) {
        const uint8_t *q = p;
        while (q + FUZZ_SEP_LEN <= end && memcmp(q, FUZZ_SEP, FUZZ_SEP_LEN))
            q++;
        if (q + FUZZ_SEP_LEN > end)
            q = end;
        deliver(p, (size_t)(q - p));
        if (q == end)
            break;
        p = q + FUZZ_SEP_LEN;
    }
    check_guards();
    /* F1: whatever the headers announced, rank 0 holds at most the cap. */
    size_t held = tlm_core_reasm_held(0);
    if (held > FUZZ_REASM_MAX) {
        fprintf(stderr, "fuzz_am: rank 0 holds %zu bytes of reassembly "
                "memory, more than the cap (%zu)\n", held, FUZZ_REASM_MAX);
        abort();
    }
    tlm_core_coll_fini();
    tlm_core_coll_init();
    return 0;
}

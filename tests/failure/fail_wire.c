/* fail_wire.c - failure: malformed messages through the real transport
 * (docs/hardening.md, findings F1 and F2).  Rank 1 builds raw wire messages
 * with the internal AM engine and sends them to rank 0, which must refuse
 * them without keeping memory and go on serving rank 1:
 *   F1  a fragmented active message, a vector put list and a collective
 *       message announcing 16 GiB: refused with a logged protocol error,
 *       nothing held for rank 1 (tlm_core_reasm_held), the requests'
 *       sender learns TELEMEM_ERR_PROTOCOL at its next quiet, rank 0's
 *       collective that needed the refused message fails with
 *       TELEMEM_ERR_PROTOCOL instead of waiting for it, and the next
 *       collectives work again;
 *       a short-form request above the cap is refused by the sender.
 *   F2  fragments that overlap, repeat or leave a gap: the message is
 *       dropped (short form) or the repeat ignored (long form); no handler
 *       runs twice or on bytes that never came, and the next well-formed
 *       message from rank 1 is delivered.
 * Runs with exactly 2 ranks (telemem-run -n 2); links the static library. */
#include "tt.h"

#include "am/am.h"
#include "core/core.h"
#include "core/core_am_api.h"

#define H_DATA 10 /* counts runs, checks the 16-byte pattern */
#define H_DONE 11 /* rank 1: "all crafted messages of this phase sent" */

static long runs, bad_runs, done;
static size_t last_bytes;

static uint8_t pat(size_t i)
{
    return (uint8_t)(i * 7 + 1);
}

static void on_data(telemem_am_token_t t, void *p, size_t b,
                    const uint32_t *a, unsigned na, void *ctx)
{
    const uint8_t *d = p;
    runs++;
    last_bytes = b;
    for (size_t i = 0; i < b; i++)
        if (d[i] != pat(i)) {
            bad_runs++;
            break;
        }
}

static void on_done(telemem_am_token_t t, void *p, size_t b,
                    const uint32_t *a, unsigned na, void *ctx)
{
    done++;
}

/* Rank 1: one raw USER fragment [off, off + len) of a total-byte message. */
static void send_user(uint32_t id, uint8_t flags, uint64_t addr,
                      uint64_t total, uint64_t off, size_t len)
{
    uint8_t payload[64];
    TT_ASSERT(len <= sizeof payload, "fragment too long");
    for (size_t i = 0; i < len; i++)
        payload[i] = pat(off + i);
    tlm_am_frag_hdr_t h = {{TLM_AM_USER, flags, H_DATA, id}, addr, total,
                           off};
    TT_CHECK(tlm_am_send_ctrl(0, &h, sizeof h, payload, len));
}

/* Rank 1 ends a phase; rank 0 waits for it (messages from one rank arrive
 * in order, so everything crafted before it has been handled). */
static void phase_end(long n)
{
    if (tt_me == 1) {
        TT_CHECK(telemem_am_request(0, H_DONE, NULL, 0, NULL, 0));
    } else {
        double t0 = tt_now();
        while (done < n && tt_now() - t0 < 60)
            TT_POLL();
        TT_ASSERT(done == n, "phase %ld: rank 1's end marker never came", n);
    }
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "fail_wire");
    if (tt_n != 2)
        tt_skip("needs exactly 2 ranks");
    TT_CHECK(telemem_am_register(H_DATA, on_data, NULL));
    TT_CHECK(telemem_am_register(H_DONE, on_done, NULL));
    void **bases = calloc(2, sizeof *bases);
    TT_ASSERT(bases, "calloc");
    TT_CHECK(telemem_malloc_all(4096, bases));
    memset(bases[tt_me], 0, 4096);
    TT_CHECK(telemem_barrier());
    const uint64_t huge = (uint64_t)16 << 30;

    /* ---- F1: a 16 GiB fragmented AM and vector list -------------------- */
    if (tt_me == 1) {
        uint8_t dummy[8] = {0};
        /* The sender refuses what a target would refuse. */
        TT_EXPECT(telemem_am_request(0, H_DATA, dummy,
                                     tlm_core_reasm_max() + 1, NULL, 0),
                  TELEMEM_ERR_INVALID_ARG);
        send_user(100, 0, 0, huge, 0, 8);
        send_user(100, 0, 0, huge, 8, 8); /* its rest: dropped quietly */
        uint64_t recs[2] = {(uint64_t)(uintptr_t)bases[0], 8};
        tlm_am_frag_hdr_t v = {{TLM_AM_PUTV, 0, 0, 0}, (uint64_t)1 << 30,
                               huge, 0};
        TT_CHECK(tlm_am_send_ctrl(0, &v, sizeof v, recs, sizeof recs));
        /* Raw sends bypass the flush accounting: let quiet flush rank 0. */
        tlm_core.peers[0].unflushed++;
        TT_EXPECT(telemem_quiet(), TELEMEM_ERR_PROTOCOL);
        TT_CHECK(telemem_quiet());
        /* A well-formed fragmented request still gets through. */
        size_t big = 100000;
        uint8_t *buf = malloc(big);
        TT_ASSERT(buf, "malloc");
        for (size_t i = 0; i < big; i++)
            buf[i] = pat(i);
        TT_CHECK(telemem_am_request(0, H_DATA, buf, big, NULL, 0));
        free(buf);
    }
    phase_end(1);
    if (tt_me == 0) {
        TT_ASSERT(tlm_core_reasm_held(1) == 0, "rank 0 holds %zu bytes for "
                  "rank 1 after refusing", tlm_core_reasm_held(1));
        TT_ASSERT(runs == 1 && bad_runs == 0 && last_bytes == 100000,
                  "after F1: %ld runs (%ld bad), last %zu bytes", runs,
                  bad_runs, last_bytes);
        TT_ASSERT(((uint8_t *)bases[0])[0] == 0, "refused vector put wrote");
    }
    TT_CHECK(telemem_barrier());

    /* ---- F2: overlapping, repeated and gapped fragments ----------------- */
    if (tt_me == 1) {
        /* overlap: [0,8) then [4,16) would "complete" 16 bytes */
        send_user(200, 0, 0, 16, 0, 8);
        send_user(200, 0, 0, 16, 4, 12);
        /* repeated first fragment, then the rest */
        send_user(201, 0, 0, 16, 0, 8);
        send_user(201, 0, 0, 16, 0, 8);
        send_user(201, 0, 0, 16, 8, 8);
        /* gap: [0,8) then [16,24) of 24 */
        send_user(202, 0, 0, 24, 0, 8);
        send_user(202, 0, 0, 24, 16, 8);
        /* well-formed, then its last fragment once more */
        send_user(203, 0, 0, 16, 0, 8);
        send_user(203, 0, 0, 16, 8, 8);
        send_user(203, 0, 0, 16, 8, 8);
        /* long form into rank 0's block: last fragment repeated, and a
         * gap; neither may run the handler again */
        uint64_t dst = (uint64_t)(uintptr_t)bases[0];
        send_user(204, TLM_AM_F_LONG, dst, 16, 0, 8);
        send_user(204, TLM_AM_F_LONG, dst, 16, 8, 8);
        send_user(204, TLM_AM_F_LONG, dst, 16, 8, 8);
        send_user(205, TLM_AM_F_LONG, dst + 64, 24, 0, 8);
        send_user(205, TLM_AM_F_LONG, dst + 64, 24, 16, 8);
    }
    phase_end(2);
    if (tt_me == 0) {
        /* 203 and 204 run once each; 200, 201, 202 and 205 never. */
        TT_ASSERT(runs == 3 && bad_runs == 0, "after F2: %ld handler runs "
                  "(%ld on wrong bytes), expected 3 (F1's + 203 + 204)",
                  runs, bad_runs);
        TT_ASSERT(tlm_core_reasm_held(1) == 0, "rank 0 holds %zu bytes for "
                  "rank 1 after F2", tlm_core_reasm_held(1));
        TT_ASSERT(tlm_am.protocol_errors >= 6, "only %lu protocol errors "
                  "counted", tlm_am.protocol_errors);
    }
    TT_CHECK(telemem_barrier());

    /* ---- F1: a collective message announcing 16 GiB ------------------- */
    if (tt_me == 1) {
        /* for rank 0's next collective (the barrier below, round 0) */
        tlm_am_frag_hdr_t c = {{TLM_AM_COLL, 0, 0, tlm_core.coll_seq + 1},
                               0, huge, 0};
        uint8_t d[8] = {0};
        TT_CHECK(tlm_am_send_ctrl(0, &c, sizeof c, d, sizeof d));
    }
    phase_end(3);
    if (tt_me == 0) {
        TT_ASSERT(tlm_core_reasm_held(1) == 0, "rank 0 holds %zu bytes for "
                  "a refused collective", tlm_core_reasm_held(1));
        /* The hole in rank 1's collective stream: an error, not a hang. */
        TT_EXPECT(telemem_barrier(), TELEMEM_ERR_PROTOCOL);
    } else {
        TT_CHECK(telemem_barrier()); /* rank 0 sent its part first */
    }
    /* Only that collective failed: the next ones work. */
    TT_CHECK(telemem_barrier());
    int v = tt_me + 1;
    TT_CHECK(telemem_allreduce(&v, 1, TELEMEM_INT32, TELEMEM_SUM));
    TT_ASSERT(v == 3, "allreduce after the refused collective: %d", v);
    free(bases);
    tt_finalize();
    tt_log("fail_wire: OK");
    return 0;
}

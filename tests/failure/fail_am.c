/* fail_am.c - failure: an active message for a handler id that the target
 * has not registered is dropped (and logged) there, and the sender's next
 * quiet returns TELEMEM_ERR_NOT_FOUND; the one after returns OK, and once
 * the handler is registered the same request runs.  A long request whose
 * destination is outside the target's memory is refused there: nothing
 * written, the handler does not run, quiet returns
 * TELEMEM_ERR_OUT_OF_RANGE. */
#include "tt.h"

#define ID 200

static long hits;

static void handler(telemem_am_token_t t, void *p, size_t b,
                    const uint32_t *a, unsigned na, void *ctx)
{
    hits++;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "fail_am");
    int me = tt_me, n = tt_n, target = (me + 1) % n;
    uint32_t args[2] = {1, 2};
    uint8_t payload[100] = {0};
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_am_request(target, ID, payload, sizeof payload, args, 2));
    TT_EXPECT(telemem_quiet(), TELEMEM_ERR_NOT_FOUND);
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    TT_ASSERT(hits == 0, "an unregistered handler ran?");
    TT_CHECK(telemem_am_register(ID, handler, NULL));
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_am_request(target, ID, payload, sizeof payload, args, 2));
    TT_CHECK(telemem_quiet());
    double t0 = tt_now();
    while (hits < 1 && tt_now() - t0 < 30)
        TT_POLL();
    TT_ASSERT(hits == 1, "registered handler ran %ld times", hits);
    TT_CHECK(telemem_barrier());

    /* Long request: a range past the end of the target's block. */
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(4096, bases));
    memset(bases[me], 0x5a, 4096);
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_am_request_long(target, ID, payload, sizeof payload,
                                     (uint8_t *)bases[target] + 4096 - 50,
                                     args, 2));
    TT_EXPECT(telemem_quiet(), TELEMEM_ERR_OUT_OF_RANGE);
    TT_CHECK(telemem_barrier());
    TT_ASSERT(hits == 1, "the handler of a refused long request ran (hits %ld)", hits);
    for (int i = 0; i < 4096; i++)
        TT_ASSERT(((uint8_t *)bases[me])[i] == 0x5a, "refused long request "
                  "wrote byte %d", i);
    /* In range, it runs (after everyone checked the refusal). */
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_am_request_long(target, ID, payload, sizeof payload,
                                     bases[target], args, 2));
    TT_CHECK(telemem_quiet());
    t0 = tt_now();
    while (hits < 2 && tt_now() - t0 < 30)
        TT_POLL();
    TT_ASSERT(hits == 2, "long request handler ran %ld times", hits - 1);
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(bases[me]));
    free(bases);
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

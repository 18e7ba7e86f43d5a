/* fail_am.c - failure: an active message for a handler id that the target
 * has not registered is dropped (and logged) there, and the sender's next
 * quiet returns TELEMEM_ERR_NOT_FOUND; the one after returns OK, and once
 * the handler is registered the same request runs. */
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
    tt_finalize();
    if (me == 0)
        tt_log("PASS");
    return 0;
}

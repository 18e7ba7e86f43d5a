/* conf_scale.c - conformance: a job of many ranks (64 in the suite) starts,
 * talks and ends on one node: every rank puts to its right neighbour and
 * gets from its left, then allreduce and barrier; rank 0 reports the
 * shared-memory footprint per process (/dev/shm is empty once started, so
 * it reads its own mappings). */
#include "tt.h"

/* Bytes of this process's mappings of telemem segments (own + peers'). */
static unsigned long long shm_mapped_kib(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    unsigned long long rss = 0;
    int in_seg = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strchr(line, '-') && strstr(line, " "))
            in_seg = strstr(line, "/telemem-") != NULL;
        unsigned long long v;
        if (in_seg && sscanf(line, "Rss: %llu kB", &v) == 1)
            rss += v;
    }
    fclose(f);
    return rss;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "conf_scale");
    int me = tt_me, n = tt_n;
    uint64_t seed = tt_seed();
    void **bases = calloc((size_t)n, sizeof *bases);
    TT_CHECK(telemem_malloc_all(4096, bases));
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint8_t src[1000], got[1000];
    tt_pat_fill(src, sizeof src, tt_key(seed, 80, me, 0), 0);
    TT_CHECK(telemem_put(right, bases[right], src, sizeof src));
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    TT_ASSERT(tt_pat_verify(bases[me], sizeof src, tt_key(seed, 80, left, 0),
                            0, "put from the left") == 0, "put from the left");
    TT_CHECK(telemem_get(left, got, bases[left], sizeof got));
    TT_ASSERT(tt_pat_verify(got, sizeof got, tt_key(seed, 80, (left + n - 1) % n,
                                                   0), 0, "get from the left") == 0,
              "get from the left");
    int64_t sum = me;
    TT_CHECK(telemem_allreduce(&sum, 1, TELEMEM_INT64, TELEMEM_SUM));
    TT_ASSERT(sum == (int64_t)n * (n - 1) / 2, "allreduce %lld", (long long)sum);
    unsigned long long kib = shm_mapped_kib();
    TT_CHECK(telemem_barrier());
    if (me == 0)
        tt_log("PASS: %d ranks; rank 0 has %llu KiB of shared segments "
               "resident (its own and the pages of peers it touched)", n, kib);
    free(bases);
    tt_finalize();
    return 0;
}

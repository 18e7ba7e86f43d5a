/* at_mem.c - memory: ARMCI_Malloc / _Free of many sizes (ranks asking for
 * 0 bytes see NULL, and free with NULL), every rank's block reachable by
 * every rank, allocations freed out of order, ARMCI_Malloc_local,
 * the memdev variants, ARMCI_Access_begin / _end. */
#include "at.h"

static void test_sizes(void)
{
    static const long sizes[] = {1, 8, 104, 4096, 65536, 1 << 22};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        void **p = at_ptrs();
        AT_OK(ARMCI_Malloc(p, sizes[k]));
        for (int i = 0; i < at_n; i++)
            AT_ASSERT(p[i] != NULL, "size %ld: ptr[%d] NULL", sizes[k], i);
        /* Write the last word of every rank's block. */
        long *last = (long *)((char *)p[at_me] + sizes[k]) - 1;
        if (sizes[k] >= (long)sizeof(long))
            *last = 0;
        ARMCI_Barrier();
        if (sizes[k] >= (long)sizeof(long)) {
            int to = (at_me + 1) % at_n;
            long v = 1000 + at_me;
            AT_OK(ARMCI_Put(&v, (long *)((char *)p[to] + sizes[k]) - 1,
                            sizeof v, to));
            ARMCI_Barrier();
            AT_ASSERT(*last == 1000 + (at_me + at_n - 1) % at_n,
                      "size %ld: last word %ld", sizes[k], *last);
        }
        AT_OK(ARMCI_Free(p[at_me]));
        free(p);
    }
}

/* Rank r asks for r * 64 bytes: rank 0 gets NULL everywhere. */
static void test_uneven(void)
{
    void **p = at_ptrs();
    AT_OK(ARMCI_Malloc(p, (armci_size_t)at_me * 64));
    for (int i = 0; i < at_n; i++)
        AT_ASSERT((p[i] == NULL) == (i == 0), "uneven: ptr[%d] = %p", i,
                  p[i]);
    if (at_me > 0)
        memset(p[at_me], at_me, (size_t)at_me * 64);
    ARMCI_Barrier();
    for (int i = 1; i < at_n; i++) {
        unsigned char buf[256];
        AT_OK(ARMCI_Get(p[i], buf, i * 64, i));
        for (int b = 0; b < i * 64; b++)
            AT_ASSERT(buf[b] == (unsigned char)i, "uneven: rank %d byte %d",
                      i, b);
    }
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(p[at_me])); /* NULL on rank 0 */
    free(p);
    /* (0 bytes on every rank: at_extra.c; ARMCI-MPI 0.3.1 corrupts its
     * heap freeing that after another allocation.) */
}

/* Three live allocations freed in another order than made. */
static void test_order(void)
{
    void **a = at_ptrs(), **b = at_ptrs(), **c = at_ptrs();
    AT_OK(ARMCI_Malloc(a, 128));
    AT_OK(ARMCI_Malloc(b, 256));
    AT_OK(ARMCI_Malloc(c, 512));
    int to = (at_me + 1) % at_n;
    int v = 5 + at_me;
    AT_OK(ARMCI_Put(&v, b[to], sizeof v, to));
    AT_OK(ARMCI_Free(a[at_me]));
    AT_OK(ARMCI_Put(&v, c[to], sizeof v, to));
    ARMCI_Barrier();
    int from = (at_me + at_n - 1) % at_n;
    AT_ASSERT(*(int *)b[at_me] == 5 + from && *(int *)c[at_me] == 5 + from,
              "out-of-order frees: %d %d", *(int *)b[at_me],
              *(int *)c[at_me]);
    AT_OK(ARMCI_Free(c[at_me]));
    AT_OK(ARMCI_Free(b[at_me]));
    free(a);
    free(b);
    free(c);
}

static void test_local_memdev_access(void)
{
    char *l = ARMCI_Malloc_local(1000);
    AT_ASSERT(l != NULL, "ARMCI_Malloc_local");
    memset(l, 3, 1000);
    AT_OK(ARMCI_Free_local(l));
    void **p = at_ptrs();
    AT_OK(ARMCI_Malloc_memdev(p, 4096, "host"));
    ARMCI_Access_begin(p[at_me]);
    memset(p[at_me], 9, 4096);
    ARMCI_Access_end(p[at_me]);
    ARMCI_Barrier();
    int to = (at_me + 1) % at_n;
    char buf[16];
    AT_OK(ARMCI_Get((char *)p[to] + 100, buf, sizeof buf, to));
    for (int i = 0; i < 16; i++)
        AT_ASSERT(buf[i] == 9, "memdev get byte %d", i);
    ARMCI_Barrier();
    AT_OK(ARMCI_Free_memdev(p[at_me]));
    ARMCI_Group w;
    ARMCI_Group_get_world(&w);
    AT_OK(ARMCI_Malloc_group_memdev(p, 64, &w, "host"));
    AT_OK(ARMCI_Free_group(p[at_me], &w));
    free(p);
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    test_sizes();
    test_uneven();
    test_order();
    test_local_memdev_access();
    at_finish("mem");
    return 0;
}

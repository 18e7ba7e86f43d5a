/* hello_telemem.c - a client of the installed telemem.h: every rank puts
 * its rank into its right neighbour's block, then checks what it got. */
#include <stdio.h>

#include <telemem.h>

int main(int argc, char **argv)
{
    int rc = telemem_initialize(&argc, &argv);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "telemem_initialize: %s\n", telemem_strerror(rc));
        return 1;
    }
    int me = telemem_rank(), n = telemem_nranks();
    void *bases[4096];
    if (n > 4096 || telemem_malloc_all(sizeof(int), bases) != TELEMEM_OK)
        return 1;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    if (telemem_put(right, bases[right], &me, sizeof(me)) != TELEMEM_OK ||
        telemem_quiet() != TELEMEM_OK || telemem_barrier() != TELEMEM_OK)
        return 1;
    int got = *(int *)bases[me];
    if (got != left) {
        fprintf(stderr, "rank %d: got %d, want %d\n", me, got, left);
        return 1;
    }
    printf("telemem %s: rank %d of %d ok\n", telemem_version(), me, n);
    return telemem_finalize() == TELEMEM_OK ? 0 : 1;
}

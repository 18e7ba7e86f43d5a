/* hello_armci.c - a client of the installed armci.h (libarmci over
 * Telemem): ARMCI_Malloc, a put to the right neighbour, fence, barrier. */
#include <stdio.h>
#include <stdlib.h>

#include <armci.h>

int main(int argc, char **argv)
{
    if (ARMCI_Init_args(&argc, &argv) != 0)
        return 1;
    int me = armci_msg_me(), n = armci_msg_nproc();
    void **bases = malloc(sizeof(void *) * (size_t)n);
    if (!bases || ARMCI_Malloc(bases, sizeof(int)) != 0)
        return 1;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    if (ARMCI_Put(&me, bases[right], sizeof(me), right) != 0)
        return 1;
    ARMCI_AllFence();
    ARMCI_Barrier();
    int got = *(int *)bases[me];
    if (got != left) {
        fprintf(stderr, "rank %d: got %d, want %d\n", me, got, left);
        return 1;
    }
    printf("armci: rank %d of %d ok\n", me, n);
    ARMCI_Barrier();
    ARMCI_Free(bases[me]);
    free(bases);
    ARMCI_Finalize();
    return 0;
}

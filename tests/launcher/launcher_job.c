/* launcher_job.c - a whole Telemem job started by another launcher (srun,
 * MPICH's mpiexec, mpirun): argv[1] is the number of ranks the launcher
 * started.  Checks that Telemem's ranks are the launcher's, then a put /
 * get / barrier exchange around the ring.  On a failure of
 * telemem_initialize it prints the status name and exits 3, so that the
 * refusal tests can check both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemem.h"

#define WORDS 512

static int fail(const char *what, int rc)
{
    fprintf(stderr, "launcher_job: %s: %s\n", what, telemem_status_name(rc));
    return 1;
}

/* The rank the launcher gave this process, -1 when it says none.  The
 * PMI variables first: under MPICH's mpiexec in a Slurm allocation,
 * SLURM_PROCID numbers Hydra's proxies, not the ranks. */
static int launcher_rank(void)
{
    const char *vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                          "PMI_ID", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0])
            return atoi(v);
    }
    return -1;
}

static long word(int from, int i)
{
    return (long)from * 1000003L + i * 7L + 1;
}

static int exchange(int me, int n)
{
    long *bases[1024];
    if (n > 1024)
        return fail("too many ranks", TELEMEM_ERR_INVALID_ARG);
    int rc = telemem_malloc_all(2 * WORDS * sizeof(long), (void **)bases);
    if (rc != TELEMEM_OK)
        return fail("malloc_all", rc);
    long mine[WORDS], got[WORDS];
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < WORDS; i++) {
        mine[i] = word(me, i);
        bases[me][WORDS + i] = word(me, i) ^ 0x5a5a;
    }
    /* put my words into my right neighbour's first half */
    if ((rc = telemem_put(right, bases[right], mine, sizeof(mine))) ||
        (rc = telemem_quiet()) || (rc = telemem_barrier()))
        return fail("put, quiet, barrier", rc);
    for (int i = 0; i < WORDS; i++)
        if (bases[me][i] != word(left, i)) {
            fprintf(stderr, "launcher_job: rank %d word %d from rank %d is "
                    "%ld, want %ld\n", me, i, left, bases[me][i],
                    word(left, i));
            return 1;
        }
    /* get my left neighbour's second half */
    if ((rc = telemem_get(left, got, bases[left] + WORDS, sizeof(got))))
        return fail("get", rc);
    for (int i = 0; i < WORDS; i++)
        if (got[i] != (word(left, i) ^ 0x5a5a)) {
            fprintf(stderr, "launcher_job: rank %d got word %d of rank %d "
                    "wrong\n", me, i, left);
            return 1;
        }
    long ok = 1;
    if ((rc = telemem_barrier()) ||
        (rc = telemem_allreduce(&ok, 1, TELEMEM_INT64, TELEMEM_SUM)))
        return fail("barrier, allreduce", rc);
    if (ok != n) {
        fprintf(stderr, "launcher_job: allreduce of 1s gave %ld, want %d\n",
                ok, n);
        return 1;
    }
    if ((rc = telemem_free_all(bases[me])))
        return fail("free_all", rc);
    return 0;
}

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 0;
    int rc = telemem_initialize(&argc, &argv);
    if (rc != TELEMEM_OK) {
        printf("launcher_job: telemem_initialize: %s\n",
               telemem_status_name(rc));
        return 3;
    }
    int me = telemem_rank(), n = telemem_nranks(), lr = launcher_rank();
    if ((want > 0 && n != want) || (lr >= 0 && lr != me)) {
        fprintf(stderr, "launcher_job: Telemem rank %d of %d, the launcher "
                "says rank %d of %d\n", me, n, lr, want);
        return 1;
    }
    if (exchange(me, n) != 0)
        return 1;
    if ((rc = telemem_finalize()) != TELEMEM_OK)
        return fail("finalize", rc);
    printf("launcher_job: rank %d of %d ok\n", me, n);
    return 0;
}

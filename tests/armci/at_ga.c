/* at_ga.c - a Global-Arrays-style workload: a 2-D array of doubles
 * block-distributed over a process grid (each block with a one-cell ghost
 * frame), written tile by tile from a shared task counter (ARMCI_Rmw),
 * updated with strided accumulates of random patches that span several
 * owners, read back with strided gets, and ghost cells exchanged with
 * ARMCI_PutS_flag (the receiver waits on the flag with plain loads).
 * Prints a checksum that must be the same on every implementation. */
#include "at.h"

#define NR 96
#define NC 80
#define TILE 16
#define NPATCH 20
#define ITERS 3

static int pr, pc;      /* process grid */
static void **base;     /* every rank's block */
static double *expect;  /* NR x NC, the value every cell should hold */

static int row0(int pi)
{
    return pi * NR / pr;
}

static int col0(int pj)
{
    return pj * NC / pc;
}

static int owner_row(int i)
{
    int pi = 0;
    while (row0(pi + 1) <= i)
        pi++;
    return pi;
}

static int owner_col(int j)
{
    int pj = 0;
    while (col0(pj + 1) <= j)
        pj++;
    return pj;
}

/* Leading dimension (in doubles) of rank (pi, pj)'s block. */
static int ld_of(int pj)
{
    return col0(pj + 1) - col0(pj) + 2;
}

static double *cell(int pi, int pj, int li, int lj)
{
    return (double *)base[pi * pc + pj] + (size_t)li * ld_of(pj) + lj;
}

enum { OP_PUT, OP_GET, OP_ACC };

/* Apply op to the global patch [i0, i1) x [j0, j1) with the local buffer
 * buf (leading dimension ldb), one strided call per owner. */
static void patch(int op, int i0, int i1, int j0, int j1, double *buf,
                  int ldb, double scale)
{
    for (int pi = owner_row(i0); pi < pr && row0(pi) < i1; pi++) {
        for (int pj = owner_col(j0); pj < pc && col0(pj) < j1; pj++) {
            int a0 = i0 > row0(pi) ? i0 : row0(pi);
            int a1 = i1 < row0(pi + 1) ? i1 : row0(pi + 1);
            int b0 = j0 > col0(pj) ? j0 : col0(pj);
            int b1 = j1 < col0(pj + 1) ? j1 : col0(pj + 1);
            int owner = pi * pc + pj;
            double *remote =
                cell(pi, pj, a0 - row0(pi) + 1, b0 - col0(pj) + 1);
            double *local = buf + (size_t)(a0 - i0) * ldb + (b0 - j0);
            int count[2] = {(b1 - b0) * (int)sizeof(double), a1 - a0};
            int rs[1] = {ld_of(pj) * (int)sizeof(double)};
            int ls[1] = {ldb * (int)sizeof(double)};
            if (op == OP_PUT)
                AT_OK(ARMCI_PutS(local, ls, remote, rs, count, 1, owner));
            else if (op == OP_GET)
                AT_OK(ARMCI_GetS(remote, rs, local, ls, count, 1, owner));
            else
                AT_OK(ARMCI_AccS(ARMCI_ACC_DBL, &scale, local, ls, remote, rs,
                                 count, 1, owner));
        }
    }
}

static uint32_t rng(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Rank r's k-th random patch and its scale. */
static void random_patch(int r, int k, int *i0, int *i1, int *j0, int *j1,
                         double *scale)
{
    uint32_t s = 12345u + 977u * (uint32_t)r + 31u * (uint32_t)k;
    rng(&s);
    *i0 = (int)(rng(&s) % NR);
    *i1 = *i0 + 1 + (int)(rng(&s) % (uint32_t)(NR - *i0 < 40 ? NR - *i0 : 40));
    *j0 = (int)(rng(&s) % NC);
    *j1 = *j0 + 1 + (int)(rng(&s) % (uint32_t)(NC - *j0 < 40 ? NC - *j0 : 40));
    *scale = 0.5 * (r + 1);
}

static double f(int i, int j)
{
    return i * 1000.0 + j;
}

static double g(int i, int j)
{
    return (double)((i + j) % 7);
}

/* Compare the global patch (fetched with gets) with expect. */
static void check_patch(int i0, int i1, int j0, int j1, double offset,
                        const char *what)
{
    int w = j1 - j0;
    double *buf = malloc((size_t)(i1 - i0) * (size_t)w * sizeof(double));
    patch(OP_GET, i0, i1, j0, j1, buf, w, 0);
    for (int i = i0; i < i1; i++)
        for (int j = j0; j < j1; j++) {
            double want = expect[i * NC + j] + offset;
            double got = buf[(size_t)(i - i0) * w + (j - j0)];
            AT_ASSERT(got == want, "%s: (%d, %d) = %g, expected %g", what, i,
                      j, got, want);
        }
    free(buf);
}

static void phase_tiles(int *counter)
{
    int ntiles = (NR / TILE) * (NC / TILE), done = 0;
    double tile[TILE * TILE];
    for (;;) {
        int t;
        AT_OK(ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &t, counter, 1, 0));
        if (t >= ntiles)
            break;
        int ti = t / (NC / TILE), tj = t % (NC / TILE);
        for (int i = 0; i < TILE; i++)
            for (int j = 0; j < TILE; j++)
                tile[i * TILE + j] = f(ti * TILE + i, tj * TILE + j);
        patch(OP_PUT, ti * TILE, ti * TILE + TILE, tj * TILE,
              tj * TILE + TILE, tile, TILE, 0);
        done++;
    }
    ARMCI_Barrier();
    int all = done;
    armci_msg_igop(&all, 1, "+");
    AT_ASSERT(all == ntiles, "%d tiles written, expected %d", all, ntiles);
    AT_ASSERT(ARMCI_GetValueInt(counter, 0) == ntiles + at_n,
              "task counter %d", ARMCI_GetValueInt(counter, 0));
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NC; j++)
            expect[i * NC + j] = f(i, j);
    check_patch(0, NR, 0, NC, 0, "tiles");
    ARMCI_Barrier(); /* nobody accumulates before everyone has checked */
}

static void phase_acc(void)
{
    for (int k = 0; k < NPATCH; k++) {
        int i0, i1, j0, j1;
        double scale;
        random_patch(at_me, k, &i0, &i1, &j0, &j1, &scale);
        int w = j1 - j0;
        double *buf = malloc((size_t)(i1 - i0) * (size_t)w * sizeof(double));
        for (int i = i0; i < i1; i++)
            for (int j = j0; j < j1; j++)
                buf[(size_t)(i - i0) * w + (j - j0)] = g(i, j);
        patch(OP_ACC, i0, i1, j0, j1, buf, w, scale);
        free(buf);
    }
    ARMCI_Barrier();
    for (int r = 0; r < at_n; r++)
        for (int k = 0; k < NPATCH; k++) {
            int i0, i1, j0, j1;
            double scale;
            random_patch(r, k, &i0, &i1, &j0, &j1, &scale);
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1; j++)
                    expect[i * NC + j] += scale * g(i, j);
        }
    int i0, i1, j0, j1;
    double s;
    random_patch(at_me + 100, 0, &i0, &i1, &j0, &j1, &s);
    check_patch(i0, i1, j0, j1, 0, "accumulated patch");
    check_patch(0, NR, 0, NC, 0, "accumulated array");
    ARMCI_Barrier();
}

/* Ghost exchange: flags at the end of each block, one per direction. */
static void phase_ghosts(int flag_off)
{
    int pi = at_me / pc, pj = at_me % pc;
    int br = row0(pi + 1) - row0(pi), bc = col0(pj + 1) - col0(pj);
    int ld = ld_of(pj);
    double *mine = base[at_me];
    volatile int *flags = (volatile int *)((char *)mine + flag_off);
    /* neighbours: north, south, west, east (-1 at the edges) */
    int nb[4] = {pi > 0 ? at_me - pc : -1, pi < pr - 1 ? at_me + pc : -1,
                 pj > 0 ? at_me - 1 : -1, pj < pc - 1 ? at_me + 1 : -1};
    for (int t = 1; t <= ITERS; t++) {
        for (int li = 1; li <= br; li++)
            for (int lj = 1; lj <= bc; lj++)
                mine[li * ld + lj] += 1.0;
        ARMCI_Barrier();
        for (int d = 0; d < 4; d++) {
            if (nb[d] < 0)
                continue;
            int npi = nb[d] / pc, npj = nb[d] % pc;
            int nbr = row0(npi + 1) - row0(npi);
            int nbc = col0(npj + 1) - col0(npj);
            int nld = ld_of(npj);
            double *dst, *src;
            int count[2], ss[1] = {ld * (int)sizeof(double)};
            int ds[1] = {nld * (int)sizeof(double)};
            if (d < 2) { /* a row: my top row to north's bottom ghost row */
                src = mine + (d == 0 ? 1 : br) * ld + 1;
                dst = cell(npi, npj, d == 0 ? nbr + 1 : 0, 1);
                count[0] = bc * (int)sizeof(double);
                count[1] = 1;
            } else { /* a column */
                src = mine + ld + (d == 2 ? 1 : bc);
                dst = cell(npi, npj, 1, d == 2 ? nbc + 1 : 0);
                count[0] = (int)sizeof(double);
                count[1] = br;
            }
            /* I am the neighbour's south (d = 0), north, east, west. */
            int their = d ^ 1;
            int *flag = (int *)((char *)base[nb[d]] + flag_off) + their;
            /* Not AT_OK: ARMCI-MPI 0.3.1 returns 1 on success here. */
            ARMCI_PutS_flag(src, ss, dst, ds, count, 1, flag, t, nb[d]);
        }
        for (int d = 0; d < 4; d++)
            if (nb[d] >= 0)
                while (flags[d] != t)
                    ; /* plain loads, no ARMCI call */
        /* Ghost cells hold the neighbours' boundary values. */
        int r0 = row0(pi), c0 = col0(pj);
        for (int lj = 1; lj <= bc; lj++) {
            if (nb[0] >= 0)
                AT_ASSERT(mine[lj] == expect[(r0 - 1) * NC + c0 + lj - 1] + t,
                          "iter %d: north ghost col %d", t, lj);
            if (nb[1] >= 0)
                AT_ASSERT(mine[(br + 1) * ld + lj] ==
                              expect[(r0 + br) * NC + c0 + lj - 1] + t,
                          "iter %d: south ghost col %d", t, lj);
        }
        for (int li = 1; li <= br; li++) {
            if (nb[2] >= 0)
                AT_ASSERT(mine[li * ld] ==
                              expect[(r0 + li - 1) * NC + c0 - 1] + t,
                          "iter %d: west ghost row %d", t, li);
            if (nb[3] >= 0)
                AT_ASSERT(mine[li * ld + bc + 1] ==
                              expect[(r0 + li - 1) * NC + c0 + bc] + t,
                          "iter %d: east ghost row %d", t, li);
        }
        ARMCI_Barrier();
    }
    check_patch(0, NR, 0, NC, ITERS, "after ghost iterations");
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    for (pr = 1; (pr + 1) * (pr + 1) <= at_n; pr++)
        ;
    while (at_n % pr)
        pr--;
    pc = at_n / pr;
    expect = calloc((size_t)NR * NC, sizeof(double));
    /* The largest block, its ghost frame, 4 flags and the task counter. */
    int maxb = ((NR + pr - 1) / pr + 2) * ((NC + pc - 1) / pc + 2);
    int flag_off = (int)((size_t)maxb * sizeof(double));
    base = at_ptrs();
    AT_OK(ARMCI_Malloc(base, flag_off + 64));
    memset(base[at_me], 0, (size_t)flag_off + 64);
    ARMCI_Barrier();
    int *counter = (int *)((char *)base[0] + flag_off + 32);
    phase_tiles(counter);
    phase_acc();
    phase_ghosts(flag_off);
    /* Checksum of the interior, from every block, combined. */
    int pi = at_me / pc, pj = at_me % pc;
    double sum = 0;
    for (int li = 1; li <= row0(pi + 1) - row0(pi); li++)
        for (int lj = 1; lj <= col0(pj + 1) - col0(pj); lj++)
            sum += *cell(pi, pj, li, lj);
    armci_msg_dgop(&sum, 1, "+");
    double want = 0;
    for (int i = 0; i < NR * NC; i++)
        want += expect[i] + ITERS;
    AT_ASSERT(sum == want, "checksum %.17g, expected %.17g", sum, want);
    if (at_me == 0)
        at_log("RESULT ga %dx%d grid %dx%d checksum %.17g", NR, NC, pr, pc,
               sum);
    ARMCI_Barrier();
    AT_OK(ARMCI_Free(base[at_me]));
    free(base);
    free(expect);
    at_finish("ga");
    return 0;
}

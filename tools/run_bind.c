/* run_bind.c - where telemem-run pins its ranks on this host: one rank per
 * CPU, on the CPUs of its own affinity set that were idle a moment ago
 * (/proc/stat over 50 ms), and only when every local rank gets one; else
 * the ranks keep the whole set (as mpirun leaves oversubscribed ranks
 * unbound), which -v reports.  --bind core pins rank r to the r-th CPU of
 * the set whatever the load; --bind none never pins. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

/* The sampling window: /proc/stat counts in ticks of 10 ms (USER_HZ 100),
 * so 5 ticks per CPU; a CPU is idle when at least half were idle. */
#define SAMPLE_MS 50

typedef struct {
    unsigned long long idle, total;
} cpu_ticks_t;

/* Ticks of every CPU (index = CPU number); false if unreadable. */
static bool read_ticks(cpu_ticks_t *t, int max)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return false;
    char line[512];
    memset(t, 0, sizeof(*t) * (size_t)max);
    while (fgets(line, sizeof(line), f)) {
        int cpu;
        unsigned long long v[8] = {0};
        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
            continue;
        if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu",
                   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]) < 5 || cpu < 0 || cpu >= max)
            continue;
        t[cpu].idle = v[3] + v[4]; /* idle + iowait */
        for (int i = 0; i < 8; i++)
            t[cpu].total += v[i];
    }
    fclose(f);
    return true;
}

/* The CPUs of J.cpus that were idle during the last SAMPLE_MS. */
static int idle_cpus(cpu_set_t *idle)
{
    static cpu_ticks_t a[CPU_SETSIZE], b[CPU_SETSIZE];
    CPU_ZERO(idle);
    if (!read_ticks(a, CPU_SETSIZE))
        return -1;
    struct timespec ts = {0, SAMPLE_MS * 1000000L};
    nanosleep(&ts, NULL);
    if (!read_ticks(b, CPU_SETSIZE))
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        unsigned long long tot = b[c].total - a[c].total;
        if (CPU_ISSET(c, &J.cpus) && tot > 0 &&
            2 * (b[c].idle - a[c].idle) >= tot)
            CPU_SET(c, idle);
    }
    return CPU_COUNT(idle);
}

/* Ranks this launcher starts on this host. */
static int local_ranks(void)
{
    if (!J.nhosts)
        return J.n;
    int k = 0;
    for (int r = 0; r < J.n; r++)
        k += J.hosts[J.ranks ? J.ranks[r].host : 0].local;
    return k;
}

void run_bind_plan(void)
{
    J.bind_set = J.cpus;
    if (J.bind >= 0 || J.ncpus == 0)
        return; /* --bind core / none */
    int n = local_ranks();
    if (n > J.ncpus) {
        J.bind = 0;
        verbose("%d ranks on %d CPUs: ranks not bound (oversubscribed)", n,
                J.ncpus);
        return;
    }
    cpu_set_t idle;
    int k = idle_cpus(&idle);
    if (k < 0) { /* no /proc/stat: bind as before */
        J.bind = 1;
        return;
    }
    if (k < n) {
        J.bind = 0;
        verbose("%d ranks, %d of %d CPUs idle: ranks not bound (--bind core "
                "binds them)", n, k, J.ncpus);
        return;
    }
    J.bind = 1;
    J.bind_set = idle;
    verbose("%d ranks bound one per CPU to %d idle CPUs", n, k);
}

int run_bind_cpu(int rank)
{
    int nset = CPU_COUNT(&J.bind_set);
    if (nset == 0)
        return -1;
    int want = rank % nset, seen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &J.bind_set) && seen++ == want)
            return c;
    return -1;
}

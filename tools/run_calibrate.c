/* run_calibrate.c - telemem-run --calibrate: runs the phases of
 * telemem-calibrate (tools/calibrate.c) as jobs of this launcher, one
 * after the other, and exits with the status of the first that failed
 * (docs/direct.md, docs/shm.md, docs/coll.md); with -H, the network
 * phases between two hosts. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "util/profile_path.h"

/* How each phase's job is started: this launcher again, and the phases'
 * options (run.h). */
typedef struct phase_env {
    const char *self, *cal, *profile;
    const run_cal_t *o;
    char hosts[2 * 256 + 8]; /* "h1:1,h2:1" from -H, or "" */
    char timeout[32];
} phase_env_t;

/* Run this launcher again: -n np [-H ... --rsh ...] telemem-calibrate
 * [--quick] [--net] args, with TELEMEM_DIRECT=mode, the profile and up to
 * two more NAME=value (or NULL).  Its exit status. */
static int run_phase_n(const phase_env_t *e, const char *np, const char *mode,
                       char *const *args, char *extra, char *extra2)
{
    pid_t pid = fork();
    if (pid < 0)
        return 125;
    if (pid == 0) {
        char *av[24];
        int k = 0;
        av[k++] = (char *)e->self;
        av[k++] = "-n";
        av[k++] = (char *)np;
        av[k++] = "--timeout";
        av[k++] = (char *)e->timeout;
        if (e->hosts[0]) {
            av[k++] = "-H";
            av[k++] = (char *)e->hosts;
            av[k++] = "--rsh";
            av[k++] = (char *)e->o->rsh;
            if (e->o->kvs_addr) {
                av[k++] = "--kvs-addr";
                av[k++] = (char *)e->o->kvs_addr;
            }
        }
        av[k++] = (char *)e->cal;
        if (e->o->quick)
            av[k++] = "--quick";
        if (e->hosts[0])
            av[k++] = "--net";
        for (int i = 0; args[i] && k < 23; i++)
            av[k++] = args[i];
        av[k] = NULL;
        setenv("TELEMEM_DIRECT", mode, 1);
        setenv("TELEMEM_DIRECT_PROFILE", e->profile, 1);
        if (extra)
            putenv(extra);
        if (extra2)
            putenv(extra2);
        execv(e->self, av);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run_phase(const phase_env_t *e, const char *mode, char *const *args,
                     char *extra, char *extra2)
{
    return run_phase_n(e, "2", mode, args, extra, extra2);
}

/* The collectives' phases: 16 ranks per CPU, 8 to 32 (the crossover is
 * over ranks x piece bytes, which needs many ranks on the node). */
static int coll_phases(const phase_env_t *e, const char *tmp, const char *path)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char np[16];
    snprintf(np, sizeof(np), "%ld", cpus * 16 < 8 ? 8 : cpus * 16 > 32
                                                        ? 32 : cpus * 16);
    char *one[] = {"coll-one", (char *)tmp, NULL};
    char *spl[] = {"coll-split", (char *)tmp, (char *)path, NULL};
    char never[] = "TELEMEM_COLL_THRESHOLD=reduce-split:1t";
    char always[] = "TELEMEM_COLL_THRESHOLD=reduce-split:1";
    int st = run_phase_n(e, np, "auto", one, never, NULL);
    if (st == 0)
        st = run_phase_n(e, np, "auto", spl, always, NULL);
    return st;
}

/* This host's phases: the shared-memory copy and pull phases (the pull
 * threshold), the AM phase, then the direct phase, which writes the
 * profile (tools/calibrate.c), then the collectives' phases. */
static int host_phases(const phase_env_t *e, const char *tmp, const char *path)
{
    char *am[] = {"am", (char *)tmp, NULL};
    char *dr[] = {"direct", (char *)tmp, (char *)path, NULL};
    char *cp[] = {"copy", (char *)tmp, NULL};
    char *pl[] = {"pull", (char *)tmp, (char *)path, NULL};
    char *mp[] = {"map", (char *)path, NULL};
    char no_cma[] = "TELEMEM_SHM_CMA=n", all[] = "TELEMEM_SHM_CMA_THRESHOLD=1";
    char mapped[] = "TELEMEM_SHM_MAP_THRESHOLD=1";
    char no_pull[] = "TELEMEM_SHM_CMA_THRESHOLD=1t";
    int st = run_phase(e, "never", cp, no_cma, NULL);
    if (st == 0)
        st = run_phase(e, "never", pl, all, NULL);
    if (st == 0)
        st = run_phase(e, "never", mp, mapped, no_pull);
    if (st == 0)
        st = run_phase(e, "never", am, NULL, NULL);
    if (st == 0)
        st = run_phase(e, "always", dr, NULL, NULL);
    if (st == 0)
        st = coll_phases(e, tmp, path);
    return st;
}

/* telemem-run --calibrate: this host's phases, or with -H the network's:
 * one rank on each of the first two hosts, the AM phase and the direct
 * phase (the network driver's line, keyed by its provider).  The shared
 * memory and collectives' phases measure one node: run them without -H. */
void run_calibrate(const run_cal_t *o)
{
    phase_env_t e = {.o = o};
    char self[4096], cal[4200], path[4096], tmp[64];
    ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (k <= 0) {
        fprintf(stderr, "telemem-run: cannot find myself: %s\n",
                strerror(errno));
        exit(EXIT_INTERNAL);
    }
    self[k] = '\0';
    char *slash = strrchr(self, '/');
    snprintf(cal, sizeof(cal), "%.*s/telemem-calibrate",
             (int)(slash - self), self);
    if (access(cal, X_OK) != 0) {
        fprintf(stderr, "telemem-run: %s: %s\n", cal, strerror(errno));
        exit(EXIT_INTERNAL);
    }
    /* The library's rule (util/profile_path.h), --calibrate=PATH first. */
    const char *given = o->profile && o->profile[0]
                            ? o->profile
                            : getenv("TELEMEM_DIRECT_PROFILE");
    if (!tlm_util_profile_path(given, getenv("XDG_CACHE_HOME"),
                               getenv("HOME"), path, sizeof(path))) {
        fprintf(stderr, "telemem-run: no place for the profile: give "
                "--calibrate=PATH\n");
        exit(2);
    }
    e.self = self;
    e.cal = cal;
    e.profile = path;
    snprintf(e.timeout, sizeof(e.timeout), "%g",
             o->timeout > 0 ? o->timeout : 600);
    if (o->hosts)
        snprintf(e.hosts, sizeof(e.hosts), "%s:1,%s:1", J.hosts[0].name,
                 J.hosts[1].name);
    snprintf(tmp, sizeof(tmp), "/tmp/telemem-calibrate-%d", (int)getpid());
    int st;
    if (o->hosts) {
        char *am[] = {"am", tmp, NULL};
        char *dr[] = {"direct", tmp, path, NULL};
        st = run_phase(&e, "never", am, NULL, NULL);
        if (st == 0)
            st = run_phase(&e, "always", dr, NULL, NULL);
    } else {
        st = host_phases(&e, tmp, path);
    }
    unlink(tmp);
    exit(st);
}

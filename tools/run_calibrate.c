/* run_calibrate.c - telemem-run --calibrate: runs the phases of
 * telemem-calibrate (tools/calibrate.c) as jobs of this launcher, one
 * after the other, and exits with the status of the first that failed
 * (docs/direct.md, docs/shm.md, docs/coll.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "util/profile_path.h"

/* Run this launcher again: -n np telemem-calibrate args, with
 * TELEMEM_DIRECT=mode, the profile and one more NAME=value (or NULL).
 * Its exit status. */
static int run_phase_n(const char *self, const char *cal, const char *np,
                       const char *mode, char *const *args,
                       const char *profile, char *extra, char *extra2)
{
    pid_t pid = fork();
    if (pid < 0)
        return 125;
    if (pid == 0) {
        char *av[12];
        int k = 0;
        av[k++] = (char *)self;
        av[k++] = "-n";
        av[k++] = (char *)np;
        av[k++] = "--timeout";
        av[k++] = "600";
        av[k++] = (char *)cal;
        for (int i = 0; args[i] && k < 11; i++)
            av[k++] = args[i];
        av[k] = NULL;
        setenv("TELEMEM_DIRECT", mode, 1);
        setenv("TELEMEM_DIRECT_PROFILE", profile, 1);
        if (extra)
            putenv(extra);
        if (extra2)
            putenv(extra2);
        execv(self, av);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run_phase(const char *self, const char *cal, const char *mode,
                     char *const *args, const char *profile, char *extra,
                     char *extra2)
{
    return run_phase_n(self, cal, "2", mode, args, profile, extra, extra2);
}

/* The collectives' phases: 16 ranks per CPU, 8 to 32 (the crossover is
 * over ranks x piece bytes, which needs many ranks on the node). */
static int coll_phases(const char *self, const char *cal, const char *tmp,
                       const char *path)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char np[16];
    snprintf(np, sizeof(np), "%ld", cpus * 16 < 8 ? 8 : cpus * 16 > 32
                                                        ? 32 : cpus * 16);
    char *one[] = {"coll-one", (char *)tmp, NULL};
    char *spl[] = {"coll-split", (char *)tmp, (char *)path, NULL};
    char never[] = "TELEMEM_COLL_THRESHOLD=reduce-split:1t";
    char always[] = "TELEMEM_COLL_THRESHOLD=reduce-split:1";
    int st = run_phase_n(self, cal, np, "auto", one, path, never, NULL);
    if (st == 0)
        st = run_phase_n(self, cal, np, "auto", spl, path, always, NULL);
    return st;
}

/* telemem-run --calibrate: the shared-memory copy and pull phases (the
 * pull threshold), the AM phase, then the direct phase, which writes the
 * profile (tools/calibrate.c), then the collectives' phases. */
void run_calibrate(const char *profile)
{
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
    const char *given = profile && profile[0]
                            ? profile : getenv("TELEMEM_DIRECT_PROFILE");
    if (!tlm_util_profile_path(given, getenv("XDG_CACHE_HOME"),
                               getenv("HOME"), path, sizeof(path))) {
        fprintf(stderr, "telemem-run: no place for the profile: give "
                "--calibrate=PATH\n");
        exit(2);
    }
    snprintf(tmp, sizeof(tmp), "/tmp/telemem-calibrate-%d", (int)getpid());
    char *am[] = {"am", tmp, NULL};
    char *dr[] = {"direct", tmp, path, NULL};
    char *cp[] = {"copy", tmp, NULL};
    char *pl[] = {"pull", tmp, path, NULL};
    char *mp[] = {"map", path, NULL};
    char no_cma[] = "TELEMEM_SHM_CMA=n", all[] = "TELEMEM_SHM_CMA_THRESHOLD=1";
    char mapped[] = "TELEMEM_SHM_MAP_THRESHOLD=1";
    char no_pull[] = "TELEMEM_SHM_CMA_THRESHOLD=1t";
    int st = run_phase(self, cal, "never", cp, path, no_cma, NULL);
    if (st == 0)
        st = run_phase(self, cal, "never", pl, path, all, NULL);
    if (st == 0)
        st = run_phase(self, cal, "never", mp, path, mapped, no_pull);
    if (st == 0)
        st = run_phase(self, cal, "never", am, path, NULL, NULL);
    if (st == 0)
        st = run_phase(self, cal, "always", dr, path, NULL, NULL);
    if (st == 0)
        st = coll_phases(self, cal, tmp, path);
    unlink(tmp);
    exit(st);
}

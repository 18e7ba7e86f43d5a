/* proc_wait.h - test helper shared by the conformance, ARMCI and GASNet
 * tests that stop their own ranks (SIGSTOP): wait until a process is in
 * state T (stopped) as /proc reports it.  Framework-free (each test's
 * assertion macro reports a failure). */
#ifndef TT_PROC_WAIT_H
#define TT_PROC_WAIT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 0 once pid is stopped; -1 with the reason in err[0..n) when /proc cannot
 * be read or parsed. */
static inline int tt_proc_wait_stopped(long pid, char *err, size_t n)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    for (;;) {
        FILE *f = fopen(path, "r");
        if (!f) {
            snprintf(err, n, "open %s: %s", path, strerror(errno));
            return -1;
        }
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = '\0';
        const char *p = strrchr(buf, ')'); /* the name may hold spaces */
        if (!p || p[1] != ' ') {
            snprintf(err, n, "cannot parse %s", path);
            return -1;
        }
        if (p[2] == 'T' || p[2] == 't')
            return 0;
        usleep(1000);
    }
}

#endif

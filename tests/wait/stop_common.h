/* stop_common.h - helpers of the compat wait tests (header only, libc):
 * the process CPU time, and a timer thread that resumes stopped ranks
 * (SIGCONT) after a given time. */
#ifndef STOP_COMMON_H
#define STOP_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

static inline double sc_cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

typedef struct {
    const int *pids; /* pids[1..n) are resumed */
    int n;
    double seconds;
    pthread_t th;
} sc_resumer_t;

static inline void *sc_resume_main(void *arg)
{
    sc_resumer_t *r = arg;
    struct timespec ts = {(time_t)r->seconds,
                          (long)((r->seconds - (double)(time_t)r->seconds) *
                                 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    for (int k = 1; k < r->n; k++)
        kill(r->pids[k], SIGCONT);
    return NULL;
}

/* 0 when the thread runs. */
static inline int sc_resume_later(sc_resumer_t *r)
{
    return pthread_create(&r->th, NULL, sc_resume_main, r);
}

static inline void sc_resume_join(sc_resumer_t *r)
{
    pthread_join(r->th, NULL);
}

#endif

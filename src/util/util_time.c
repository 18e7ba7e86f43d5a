/* util_time.c - monotonic clock for timeouts and benchmarks. */
#include <time.h>

#include "util/util.h"

double tlm_util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* util_time.c - monotonic clock for timeouts and benchmarks, and the
 * poll(2) timeout of a deadline on it. */
#include <limits.h>
#include <time.h>

#include "util/util.h"

double tlm_util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t tlm_util_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int tlm_util_poll_ms(double left)
{
    if (!(left > 0))
        return 0;
    double ms = left * 1e3 + 1; /* round up: never wake before the deadline */
    return ms >= (double)INT_MAX ? INT_MAX : (int)ms;
}

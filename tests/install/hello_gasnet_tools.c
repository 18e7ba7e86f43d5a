/* hello_gasnet_tools.c - a client of the installed gasnet_tools.h alone
 * (built from gasnet_tools-<model>.mak): timers, atomics and the
 * version, no gasnet_init. */
#include <stdio.h>

#include <gasnet_tools.h>

int main(void)
{
    gasnett_tick_t t0 = gasnett_ticks_now();
    gasnett_atomic_t a = gasnett_atomic_init(1);
    gasnett_atomic_increment(&a, 0);
    gasnett_tick_t t1 = gasnett_ticks_now();
    if (gasnett_atomic_read(&a, 0) != 2 || t1 < t0) {
        fprintf(stderr, "gasnet_tools: atomics or timers wrong\n");
        return 1;
    }
    printf("gasnet_tools %d.%d.%d: ok\n", GASNETT_RELEASE_VERSION_MAJOR,
           GASNETT_RELEASE_VERSION_MINOR, GASNETT_RELEASE_VERSION_PATCH);
    return 0;
}

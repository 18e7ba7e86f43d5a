/* profile_path.h - where the direct path's calibration profile is: one
 * rule for the library (tlm_config_profile_path) and telemem-run
 * --calibrate, which includes this header.  Each caller reads the
 * environment its own way (in the library only config/config.c does). */
#ifndef TLM_UTIL_PROFILE_PATH_H
#define TLM_UTIL_PROFILE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* given (TELEMEM_DIRECT_PROFILE or a path on the command line), else
 * $XDG_CACHE_HOME/telemem/direct.profile, else
 * $HOME/.cache/telemem/direct.profile (xdg, home: those variables, NULL
 * when unset), written to buf.  False when none can be named or it does
 * not fit in n bytes. */
static inline bool tlm_util_profile_path(const char *given, const char *xdg,
                                         const char *home, char *buf,
                                         size_t n)
{
    int k;
    if (given && given[0])
        k = snprintf(buf, n, "%s", given);
    else if (xdg && xdg[0])
        k = snprintf(buf, n, "%s/telemem/direct.profile", xdg);
    else if (home && home[0])
        k = snprintf(buf, n, "%s/.cache/telemem/direct.profile", home);
    else
        return false;
    return k > 0 && (size_t)k < n;
}

#endif

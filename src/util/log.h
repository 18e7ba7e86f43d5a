/* log.h - logging macros: levels, rank-tagged lines, compile-time ceiling
 * (meson option max_log_level).  Only util_log.c prints. */
#ifndef TLM_LOG_H
#define TLM_LOG_H

#include <stdarg.h>
#include "tlm_build_config.h"

enum { TLM_LOG_ERROR = 0, TLM_LOG_WARN, TLM_LOG_INFO, TLM_LOG_DEBUG,
       TLM_LOG_TRACE, TLM_LOG_DATA };

extern int tlm_log_level; /* runtime level, set by tlm_util_log_init */

void tlm_util_log_init(int level, const char *file_pattern,
                       const char *filter);
void tlm_util_log_set_rank(int rank);
void tlm_util_log_close(void);
int tlm_util_log_level_parse(const char *s, int *level_p);
const char *tlm_util_log_level_name(int level);
/* Counts of error and warning lines printed (tests check them). */
unsigned long tlm_util_log_count(int level);
/* Print a block of text as is (TELEMEM_PRINT_CONFIG), after a title. */
void tlm_util_log_block(const char *title, const char *text);
void tlm_util_log_emit(int level, const char *subsys, const char *file,
                       int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#ifndef TLM_LOG_SUBSYS
#define TLM_LOG_SUBSYS "core"
#endif

#define tlm_log(lvl, ...)                                                  \
    do {                                                                   \
        if ((lvl) <= TLM_MAX_LOG_LEVEL && (lvl) <= tlm_log_level)          \
            tlm_util_log_emit((lvl), TLM_LOG_SUBSYS, __FILE__, __LINE__,   \
                              __VA_ARGS__);                                \
    } while (0)
#define tlm_error(...) tlm_log(TLM_LOG_ERROR, __VA_ARGS__)
#define tlm_warn(...) tlm_log(TLM_LOG_WARN, __VA_ARGS__)
#define tlm_info(...) tlm_log(TLM_LOG_INFO, __VA_ARGS__)
#define tlm_debug(...) tlm_log(TLM_LOG_DEBUG, __VA_ARGS__)
#define tlm_trace(...) tlm_log(TLM_LOG_TRACE, __VA_ARGS__)
#define tlm_trace_data(...) tlm_log(TLM_LOG_DATA, __VA_ARGS__)
#define tlm_warn_once(...)                                                 \
    do {                                                                   \
        static int tlm_once_;                                              \
        if (!tlm_once_) {                                                  \
            tlm_once_ = 1;                                                 \
            tlm_warn(__VA_ARGS__);                                         \
        }                                                                  \
    } while (0)

#endif

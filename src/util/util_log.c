/* util_log.c - the only place that prints: rank-tagged log lines to stderr
 * or TELEMEM_LOG_FILE, filtered by level and subsystem. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/log.h"

int tlm_log_level = TLM_LOG_WARN;
static int log_rank = -1;
static FILE *log_fp;
static char log_filter[256];
static char log_pattern[512];
static unsigned long log_counts[TLM_LOG_DATA + 1];

static const char *const level_names[] = {"error", "warn", "info", "debug",
                                          "trace", "data"};

int tlm_util_log_level_parse(const char *s, int *level_p)
{
    for (int i = 0; i <= TLM_LOG_DATA; i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            *level_p = i;
            return 0;
        }
    }
    return -1;
}

const char *tlm_util_log_level_name(int level)
{
    if (level < 0 || level > TLM_LOG_DATA)
        return "?";
    return level_names[level];
}

static void open_file(void)
{
    char path[600];
    size_t o = 0;
    if (log_fp && log_fp != stderr)
        fclose(log_fp);
    log_fp = stderr;
    if (!log_pattern[0])
        return;
    for (const char *p = log_pattern; *p && o + 16 < sizeof(path); p++) {
        if (p[0] == '%' && p[1] == 'r') {
            o += (size_t)snprintf(path + o, sizeof(path) - o, "%d",
                                  log_rank < 0 ? 0 : log_rank);
            p++;
        } else if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof(path) - o, "%d",
                                  (int)getpid());
            p++;
        } else {
            path[o++] = *p;
        }
    }
    path[o] = '\0';
    FILE *fp = fopen(path, "a");
    if (fp) {
        setvbuf(fp, NULL, _IOLBF, 0);
        log_fp = fp;
    } else {
        fprintf(stderr, "[telemem r%d %d] cannot open log file %s: %s\n",
                log_rank, (int)getpid(), path, strerror(errno));
    }
}

void tlm_util_log_init(int level, const char *file_pattern, const char *filter)
{
    tlm_log_level = level;
    snprintf(log_filter, sizeof(log_filter), "%s", filter ? filter : "");
    snprintf(log_pattern, sizeof(log_pattern), "%s",
             file_pattern ? file_pattern : "");
    open_file();
}

void tlm_util_log_set_rank(int rank)
{
    log_rank = rank;
    if (strstr(log_pattern, "%r"))
        open_file();
}

void tlm_util_log_close(void)
{
    if (log_fp && log_fp != stderr)
        fclose(log_fp);
    log_fp = NULL;
}

unsigned long tlm_util_log_count(int level)
{
    if (level < 0 || level > TLM_LOG_DATA)
        return 0;
    return log_counts[level];
}

/* A filter is a comma-separated list of subsystems; errors always pass. */
static int filtered_out(int level, const char *subsys)
{
    if (!log_filter[0] || level == TLM_LOG_ERROR)
        return 0;
    size_t n = strlen(subsys);
    for (const char *p = log_filter; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, subsys, n) == 0)
            return 0;
        p += len + (e ? 1 : 0);
    }
    return 1;
}

void tlm_util_log_emit(int level, const char *subsys, const char *file,
                       int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    if (filtered_out(level, subsys))
        return;
    if (level >= 0 && level <= TLM_LOG_DATA)
        log_counts[level]++;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    va_start(ap, fmt);
    /* ap is started on the line above (analyzer false positive)
     * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(log_fp ? log_fp : stderr, "[telemem r%d %d] %s:%d %s: %s\n",
            log_rank, (int)getpid(), base, line, level_names[level], msg);
}

void tlm_util_log_block(const char *title, const char *text)
{
    FILE *fp = log_fp ? log_fp : stderr;
    fputs(title, fp);
    fputs(text, fp);
}

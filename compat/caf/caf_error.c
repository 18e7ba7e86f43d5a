/* caf_error.c - how libcaf_telemem reports errors: STAT= and ERRMSG= of
 * the statement when the program gave them, error termination naming the
 * image and the cause when it did not, and STAT= values of Telemem
 * statuses. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caf_internal.h"

/* Below Linux's lowest mapping address (vm.mmap_min_addr, 64 KiB): no
 * variable lives there. */
#define TLM_CAF_MIN_ADDR ((uintptr_t)65536)

static void fill_errmsg(char *errmsg, size_t len, const char *msg)
{
    size_t n;

    /* gfortran 12 passes a fixed-length local variable given as ERRMSG= of
     * a collective by value (copied onto the stack), so the pointer
     * argument holds its length and the length argument garbage: nothing
     * can be written back then (docs/caf.md). */
    if (!errmsg || len == 0 || (uintptr_t)errmsg < TLM_CAF_MIN_ADDR)
        return;
    n = strlen(msg);
    if (n > len)
        n = len;
    memcpy(errmsg, msg, n);
    if (n < len)
        memset(errmsg + n, ' ', len - n);
}

void tlm_caf_die(int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Fortran runtime error on image %d: %s\n",
            tlm_caf.inited ? tlm_caf.me + 1 : 0, msg);
    fflush(NULL);
    /* Error termination: the launcher (telemem-run, mpirun, srun) ends
     * the other images when this one exits with a non-zero status. */
    exit(code ? code : 1);
}

void tlm_caf_report(int *stat, char *errmsg, size_t errmsg_len, int code,
                    const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!stat)
        tlm_caf_die(1, "%s", msg);
    *stat = code;
    fill_errmsg(errmsg, errmsg_len, msg);
}

int tlm_caf_stat_of(int status)
{
    if (status == TELEMEM_OK)
        return 0;
    if (status == TELEMEM_ERR_PEER_DEAD)
        return TLM_CAF_STAT_FAILED_IMAGE;
    return TLM_CAF_STAT_TELEMEM_BASE + (status < 0 ? -status : status);
}

int tlm_caf_status_msg(int rc, const char *what, char *msg, size_t cap)
{
    if (rc == TELEMEM_OK)
        return 0;
    if (rc == TELEMEM_ERR_PEER_DEAD)
        tlm_caf_refresh_dead();
    snprintf(msg, cap, "%s: %s (%s)", what,
             rc == TELEMEM_ERR_PEER_DEAD ? "an image has failed"
                                         : telemem_strerror(rc),
             telemem_status_name(rc));
    return tlm_caf_stat_of(rc);
}

int tlm_caf_check(int rc, int *stat, char *errmsg, size_t errmsg_len,
                  const char *what, int image)
{
    if (rc == TELEMEM_OK)
        return 0;
    if (rc == TELEMEM_ERR_PEER_DEAD)
        tlm_caf_refresh_dead();
    if (image > 0)
        tlm_caf_report(stat, errmsg, errmsg_len, tlm_caf_stat_of(rc),
                       "%s image %d: %s (%s)", what, image,
                       rc == TELEMEM_ERR_PEER_DEAD ? "the image has failed"
                                                   : telemem_strerror(rc),
                       telemem_status_name(rc));
    else {
        char msg[256];
        int code = tlm_caf_status_msg(rc, what, msg, sizeof msg);
        tlm_caf_report(stat, errmsg, errmsg_len, code, "%s", msg);
    }
    return 1;
}

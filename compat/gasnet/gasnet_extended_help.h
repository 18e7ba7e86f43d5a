/* gasnet_extended_help.h - threads and waiting: the threadinfo handles
 * of GASNET_PAR/PARSYNC clients and the wait mode of GASNET_BLOCKUNTIL
 * and GASNet's own waits.  gasnet.h includes it. */
#ifndef GASNET_EXTENDED_HELP_H
#define GASNET_EXTENDED_HELP_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_extended_help.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** @name Threads and waiting */
/**@{*/
/* GASNET_SEQ has no per-thread state: the macros cost nothing.  In
 * GASNET_PAR and GASNET_PARSYNC each thread gets its own non-NULL handle
 * (nothing needs it here; clients compare them). */
GASNETC_API gasnet_threadinfo_t gasnetc_threadinfo(void);
#if GASNETC_THREADMODEL == 0
#define GASNET_GET_THREADINFO() ((gasnet_threadinfo_t)0)
#else
#define GASNET_GET_THREADINFO() gasnetc_threadinfo()
#endif
#define GASNET_POST_THREADINFO(info) ((void)sizeof(info))
#define GASNET_BEGIN_FUNCTION() GASNET_POST_THREADINFO(GASNET_GET_THREADINFO())

#define GASNET_WAIT_SPIN 0      /**< poll without yielding */
#define GASNET_WAIT_BLOCK 1     /**< as SPINBLOCK (TELEMEM_WAIT decides) */
#define GASNET_WAIT_SPINBLOCK 2 /**< wait as Telemem's waits do: spin,
                                     yield, then sleep until something
                                     arrives (TELEMEM_WAIT; the default) */
/**
 * How GASNET_BLOCKUNTIL and GASNet's own waits (barriers, memsets, exit)
 * share the processor: GASNET_WAIT_SPIN polls without pause, the others
 * follow TELEMEM_WAIT, as Telemem's internal waits do.
 * @retval GASNET_OK, GASNET_ERR_BAD_ARG (unknown mode)
 */
GASNETC_API int gasnet_set_waitmode(int wait_mode);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* GASNET_EXTENDED_HELP_H */

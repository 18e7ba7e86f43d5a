/* gasnet.h - the GASNet-1 API (specification v1.8 plus the later GASNet-1
 * additions clients use) implemented over Telemem: the header a GASNet-1
 * client includes.  It sets the thread model and brings the rest in
 * GASNet's order: gasnet_basic.h (with gasnet_config.h), the conduit's
 * gasnet_core_fwd.h, gasnet_extended_fwd.h, gasnet_vis_fwd.h,
 * gasnet_coll_fwd.h, then gasnet_core_help.h, gasnet_core.h,
 * gasnet_extended.h, gasnet_extended_help.h, gasnet_vis.h and
 * gasnet_coll.h (gasnet_tools.h beside it).  All are installed in
 * include/telemem-conduit/. */
#ifndef GASNET_H
#define GASNET_H
#define _INCLUDED_GASNET_H
/* These are the telemem conduit's headers (include/gasnet_config.h tells
 * them from another GASNet's by it). */
#define GASNETC_TELEMEM_H 1

/**
 * @file gasnet.h
 * @brief GASNet-1 core and extended API over Telemem.
 *
 * Model.  A job has gasnet_nodes() nodes (one Telemem rank each).  Every
 * node calls gasnet_init() first, then gasnet_attach(), which registers
 * the client's active-message handlers and allocates this node's
 * remote-access segment (GASNET_SEGMENT_FAST).  Puts, gets, memsets and
 * Long active messages may only address memory inside the target node's
 * segment; gasnet_getSegmentInfo() tells where every segment is.
 *
 * Progress.  Telemem is polling-based: a node runs active-message handlers
 * and serves other nodes' puts and gets only while it is inside a GASNet
 * call.  A node that computes for a long time should call gasnet_AMPoll()
 * now and then.
 *
 * Threads.  GASNET_SEQ (the default), GASNET_PAR and GASNET_PARSYNC, chosen
 * by the client's -D flag (gasnet-seq.pc, gasnet-par.pc, telemem-<model>.mak);
 * one library serves all three: gasnet_init names the model.  Under SEQ and
 * PARSYNC handlers run in the calling thread inside GASNet calls (Telemem's
 * progress thread is refused); under PAR any thread may call anything and
 * handlers run on whichever thread polls, one at a time.
 *
 * Errors.  Core API functions return GASNET_OK or a GASNET_ERR_* code and
 * print the cause on stderr.  As the specification says, errors in the
 * extended API (bad node, address outside the segment, transport failure)
 * and violations of the handler rules are fatal: the call prints a
 * message naming itself and ends the whole job with exit status 1.
 *
 * How each call maps onto Telemem, the limits and the benchmark figures:
 * docs/gasnet.md.
 */

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "gasnet_basic.h"

/* ------------------------------------------------------------------------ */
/* Threading configuration */

#if (defined(GASNET_SEQ) + defined(GASNET_PAR) + defined(GASNET_PARSYNC)) > 1
#error "define at most one of GASNET_SEQ, GASNET_PAR and GASNET_PARSYNC"
#endif
#if !defined(GASNET_PAR) && !defined(GASNET_PARSYNC) && !defined(GASNET_SEQ)
#define GASNET_SEQ 1
#endif
/* The thread model as a number (0 SEQ, 1 PARSYNC, 2 PAR) and a word. */
#if defined(GASNET_PAR)
#define GASNETC_THREADMODEL 2
#define GASNETC_THREADMODEL_STR "PAR"
#elif defined(GASNET_PARSYNC)
#define GASNETC_THREADMODEL 1
#define GASNETC_THREADMODEL_STR "PARSYNC"
#else
#define GASNETC_THREADMODEL 0
#define GASNETC_THREADMODEL_STR "SEQ"
#endif

#if defined(__GNUC__)
#define GASNETC_API __attribute__((visibility("default")))
#define GASNETC_NORETURN __attribute__((noreturn))
#else
#define GASNETC_API
#define GASNETC_NORETURN
#endif

#include "gasnet_core_fwd.h"
#include "gasnet_extended_fwd.h"
#include "gasnet_vis_fwd.h"
#include "gasnet_coll_fwd.h"
#include "gasnet_core_help.h"
#include "gasnet_core.h"
#include "gasnet_extended.h"
#include "gasnet_extended_help.h"
/* As in GASNet-1, gasnet.h brings the VIS and collectives interfaces. */
#include "gasnet_vis.h"
#include "gasnet_coll.h"

#endif /* GASNET_H */

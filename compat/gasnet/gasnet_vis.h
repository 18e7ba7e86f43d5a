/* gasnet_vis.h - GASNet-1's non-contiguous (VIS) interface over Telemem:
 * vector, indexed and strided puts and gets, blocking, _nb and _nbi, each
 * mapped onto one Telemem list or strided transfer (packed by Telemem: one
 * message per buffer, not one per piece); gasnet_memvec_t is in
 * gasnet_vis_fwd.h.  Included by gasnet.h. */
#ifndef GASNET_VIS_H
#define GASNET_VIS_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_vis.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @name VIS: vector, indexed and strided transfers
 *
 * Rules common to all: the remote addresses must lie in the node's
 * segment (fatal otherwise, as for gasnet_put()).  The source and
 * destination sides describe the same number of bytes, taken in order
 * (list order; for strided transfers, the lowest dimension first).  All
 * forms are "bulk": the source must stay unchanged and the destination
 * untouched until the operation is synchronised (the blocking forms
 * return when it is complete).  The address lists may be reused as soon as
 * the call returns.  _nb forms return a handle for the gasnet_*_syncnb*
 * calls; _nbi forms are completed by gasnet_wait_syncnbi_*() or by the
 * access region they were started in.
 */
/**@{*/

/* Vector: dstcount pieces dstlist[] receive srccount pieces srclist[]. */
GASNETC_API gasnet_handle_t
gasnet_putv_nb_bulk(gasnet_node_t dstnode, size_t dstcount,
                    gasnet_memvec_t const dstlist[], size_t srccount,
                    gasnet_memvec_t const srclist[]);
GASNETC_API gasnet_handle_t
gasnet_getv_nb_bulk(size_t dstcount, gasnet_memvec_t const dstlist[],
                    gasnet_node_t srcnode, size_t srccount,
                    gasnet_memvec_t const srclist[]);
GASNETC_API void gasnet_putv_nbi_bulk(gasnet_node_t dstnode, size_t dstcount,
                                      gasnet_memvec_t const dstlist[],
                                      size_t srccount,
                                      gasnet_memvec_t const srclist[]);
GASNETC_API void gasnet_getv_nbi_bulk(size_t dstcount,
                                      gasnet_memvec_t const dstlist[],
                                      gasnet_node_t srcnode, size_t srccount,
                                      gasnet_memvec_t const srclist[]);
GASNETC_API void gasnet_putv_bulk(gasnet_node_t dstnode, size_t dstcount,
                                  gasnet_memvec_t const dstlist[],
                                  size_t srccount,
                                  gasnet_memvec_t const srclist[]);
GASNETC_API void gasnet_getv_bulk(size_t dstcount,
                                  gasnet_memvec_t const dstlist[],
                                  gasnet_node_t srcnode, size_t srccount,
                                  gasnet_memvec_t const srclist[]);

/* Indexed: dstcount pieces of dstlen bytes at dstlist[] receive srccount
 * pieces of srclen bytes at srclist[]. */
GASNETC_API gasnet_handle_t
gasnet_puti_nb_bulk(gasnet_node_t dstnode, size_t dstcount,
                    void *const dstlist[], size_t dstlen, size_t srccount,
                    void *const srclist[], size_t srclen);
GASNETC_API gasnet_handle_t
gasnet_geti_nb_bulk(size_t dstcount, void *const dstlist[], size_t dstlen,
                    gasnet_node_t srcnode, size_t srccount,
                    void *const srclist[], size_t srclen);
GASNETC_API void gasnet_puti_nbi_bulk(gasnet_node_t dstnode, size_t dstcount,
                                      void *const dstlist[], size_t dstlen,
                                      size_t srccount, void *const srclist[],
                                      size_t srclen);
GASNETC_API void gasnet_geti_nbi_bulk(size_t dstcount, void *const dstlist[],
                                      size_t dstlen, gasnet_node_t srcnode,
                                      size_t srccount, void *const srclist[],
                                      size_t srclen);
GASNETC_API void gasnet_puti_bulk(gasnet_node_t dstnode, size_t dstcount,
                                  void *const dstlist[], size_t dstlen,
                                  size_t srccount, void *const srclist[],
                                  size_t srclen);
GASNETC_API void gasnet_geti_bulk(size_t dstcount, void *const dstlist[],
                                  size_t dstlen, gasnet_node_t srcnode,
                                  size_t srccount, void *const srclist[],
                                  size_t srclen);

/* Strided: count[0] contiguous bytes, count[1..stridelevels] repetitions;
 * dststrides/srcstrides[i] is the distance of dimension i+1 (GASNet's and
 * ARMCI's convention).  Any count 0 makes the transfer empty. */
GASNETC_API gasnet_handle_t
gasnet_puts_nb_bulk(gasnet_node_t dstnode, void *dstaddr,
                    const size_t dststrides[], void *srcaddr,
                    const size_t srcstrides[], const size_t count[],
                    size_t stridelevels);
GASNETC_API gasnet_handle_t
gasnet_gets_nb_bulk(void *dstaddr, const size_t dststrides[],
                    gasnet_node_t srcnode, void *srcaddr,
                    const size_t srcstrides[], const size_t count[],
                    size_t stridelevels);
GASNETC_API void gasnet_puts_nbi_bulk(gasnet_node_t dstnode, void *dstaddr,
                                      const size_t dststrides[],
                                      void *srcaddr,
                                      const size_t srcstrides[],
                                      const size_t count[],
                                      size_t stridelevels);
GASNETC_API void gasnet_gets_nbi_bulk(void *dstaddr,
                                      const size_t dststrides[],
                                      gasnet_node_t srcnode, void *srcaddr,
                                      const size_t srcstrides[],
                                      const size_t count[],
                                      size_t stridelevels);
GASNETC_API void gasnet_puts_bulk(gasnet_node_t dstnode, void *dstaddr,
                                  const size_t dststrides[], void *srcaddr,
                                  const size_t srcstrides[],
                                  const size_t count[], size_t stridelevels);
GASNETC_API void gasnet_gets_bulk(void *dstaddr, const size_t dststrides[],
                                  gasnet_node_t srcnode, void *srcaddr,
                                  const size_t srcstrides[],
                                  const size_t count[], size_t stridelevels);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* GASNET_VIS_H */

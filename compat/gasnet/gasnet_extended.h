/* gasnet_extended.h - the extended API of GASNet-1 over Telemem: puts,
 * gets and memsets (blocking, explicit-handle, implicit-handle, access
 * regions), their synchronisation, the register-value forms and the
 * barriers.  gasnet.h includes it. */
#ifndef GASNET_EXTENDED_H
#define GASNET_EXTENDED_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_extended.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** @name Extended API: memory-to-memory transfers
 *
 * Remote addresses must lie in the node's segment (checked: fatal
 * otherwise).  @p node may be this node.  nbytes 0 is allowed and does
 * nothing.
 *
 * Blocking put/get/memset return when the operation is complete at the
 * target.  Non-bulk puts (put, put_nb, put_nbi and the _val forms) let the
 * source be reused at once; bulk puts need it unchanged until the
 * operation is synchronised.
 *
 * Explicit-handle operations return a gasnet_handle_t to complete with
 * one of the gasnet_*_syncnb* calls (exactly once), or
 * GASNET_INVALID_HANDLE when already complete.  Implicit-handle (nbi)
 * operations are completed by gasnet_wait_syncnbi_*() (which complete all
 * of this node's operations, as telemem_quiet() does) or, when started in
 * an access region, by the region's handle.
 */
/**@{*/
GASNETC_API void gasnet_get(void *dest, gasnet_node_t node, void *src,
                            size_t nbytes);
GASNETC_API void gasnet_put(gasnet_node_t node, void *dest, void *src,
                            size_t nbytes);
GASNETC_API void gasnet_get_bulk(void *dest, gasnet_node_t node, void *src,
                                 size_t nbytes);
GASNETC_API void gasnet_put_bulk(gasnet_node_t node, void *dest, void *src,
                                 size_t nbytes);
/** As if @p node ran memset(dest, val, nbytes) (done there by an active
 *  message). */
GASNETC_API void gasnet_memset(gasnet_node_t node, void *dest, int val,
                               size_t nbytes);

GASNETC_API gasnet_handle_t gasnet_get_nb(void *dest, gasnet_node_t node,
                                          void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_put_nb(gasnet_node_t node, void *dest,
                                          void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_get_nb_bulk(void *dest, gasnet_node_t node,
                                               void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_put_nb_bulk(gasnet_node_t node, void *dest,
                                               void *src, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_memset_nb(gasnet_node_t node, void *dest,
                                             int val, size_t nbytes);

/** Wait for one operation (GASNET_INVALID_HANDLE: returns at once).  The
 *  handle is dead afterwards. */
GASNETC_API void gasnet_wait_syncnb(gasnet_handle_t handle);
/** GASNET_OK (handle now dead) or GASNET_ERR_NOT_READY; polls once. */
GASNETC_API int gasnet_try_syncnb(gasnet_handle_t handle);
/** Wait for all; completed entries become GASNET_INVALID_HANDLE. */
GASNETC_API void gasnet_wait_syncnb_all(gasnet_handle_t *handles,
                                        size_t numhandles);
/** GASNET_OK if all are complete, else GASNET_ERR_NOT_READY; completed
 *  entries become GASNET_INVALID_HANDLE either way. */
GASNETC_API int gasnet_try_syncnb_all(gasnet_handle_t *handles,
                                      size_t numhandles);
/** Wait until at least one valid handle completes (returns at once when
 *  none is valid); completed entries become GASNET_INVALID_HANDLE. */
GASNETC_API void gasnet_wait_syncnb_some(gasnet_handle_t *handles,
                                         size_t numhandles);
/** GASNET_OK if at least one valid handle completed (or none is valid),
 *  else GASNET_ERR_NOT_READY. */
GASNETC_API int gasnet_try_syncnb_some(gasnet_handle_t *handles,
                                       size_t numhandles);

GASNETC_API void gasnet_get_nbi(void *dest, gasnet_node_t node, void *src,
                                size_t nbytes);
GASNETC_API void gasnet_put_nbi(gasnet_node_t node, void *dest, void *src,
                                size_t nbytes);
GASNETC_API void gasnet_get_nbi_bulk(void *dest, gasnet_node_t node,
                                     void *src, size_t nbytes);
GASNETC_API void gasnet_put_nbi_bulk(gasnet_node_t node, void *dest,
                                     void *src, size_t nbytes);
GASNETC_API void gasnet_memset_nbi(gasnet_node_t node, void *dest, int val,
                                   size_t nbytes);

/**
 * Complete the implicit-handle operations outside access regions.  Each
 * completes every outstanding operation of this node (telemem_quiet()).
 * The try_ forms poll once without waiting (telemem_quiet_test()):
 * GASNET_OK when every such operation is complete (as after the wait_
 * form), else GASNET_ERR_NOT_READY.  Not allowed inside an access region
 * (fatal).
 */
GASNETC_API void gasnet_wait_syncnbi_gets(void);
GASNETC_API void gasnet_wait_syncnbi_puts(void);
GASNETC_API void gasnet_wait_syncnbi_all(void);
GASNETC_API int gasnet_try_syncnbi_gets(void);
GASNETC_API int gasnet_try_syncnbi_puts(void);
GASNETC_API int gasnet_try_syncnbi_all(void);

/** The _nopoll tries of later GASNet-1 releases: as the try forms (which
 *  poll once; completing sooner is allowed). */
#define gasnet_try_syncnb_nopoll(h) gasnet_try_syncnb(h)
#define gasnet_try_syncnb_some_nopoll(ph, n) gasnet_try_syncnb_some((ph), (n))
#define gasnet_try_syncnb_all_nopoll(ph, n) gasnet_try_syncnb_all((ph), (n))

/** Start an access region: until gasnet_end_nbi_accessregion(), nbi
 *  operations are tracked individually.  Regions do not nest (fatal). */
GASNETC_API void gasnet_begin_nbi_accessregion(void);
/** End the region; the handle completes when all its nbi operations have
 *  (GASNET_INVALID_HANDLE if it had none). */
GASNETC_API gasnet_handle_t gasnet_end_nbi_accessregion(void);
/**@}*/

/** @name Extended API: register-memory operations
 * @p nbytes is 1..SIZEOF_GASNET_REGISTER_VALUE_T; the value is the
 * native-endian integer of that size (low-order bytes of @p value; gets
 * zero-extend). */
/**@{*/
GASNETC_API void gasnet_put_val(gasnet_node_t node, void *dest,
                                gasnet_register_value_t value, size_t nbytes);
GASNETC_API gasnet_handle_t gasnet_put_nb_val(gasnet_node_t node, void *dest,
                                              gasnet_register_value_t value,
                                              size_t nbytes);
GASNETC_API void gasnet_put_nbi_val(gasnet_node_t node, void *dest,
                                    gasnet_register_value_t value,
                                    size_t nbytes);
GASNETC_API gasnet_register_value_t gasnet_get_val(gasnet_node_t node,
                                                   void *src, size_t nbytes);
GASNETC_API gasnet_valget_handle_t gasnet_get_nb_val(gasnet_node_t node,
                                                     void *src, size_t nbytes);
/** Complete a gasnet_get_nb_val() and return its value (exactly once). */
GASNETC_API gasnet_register_value_t
gasnet_wait_syncnb_valget(gasnet_valget_handle_t handle);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Barriers
 *
 * Split-phase barrier over all nodes, carried by active messages (every
 * node tells every other node its value: one message latency).  Each node
 * calls gasnet_barrier_notify() then gasnet_barrier_wait() (or
 * gasnet_barrier_try() until it returns GASNET_OK or a mismatch).  They do
 * not complete outstanding puts or gets.
 *
 * Matching (as GASNet-1 1.20 and later define it): notifies with flags 0
 * are named and contribute @p id; GASNET_BARRIERFLAG_ANONYMOUS notifies
 * match anything.  The result is GASNET_ERR_BARRIER_MISMATCH when a node
 * notified with GASNET_BARRIERFLAG_MISMATCH, when two named notifies
 * differ, when the wait's flags include GASNET_BARRIERFLAG_MISMATCH, or
 * when the wait is named (flags 0), the barrier had a named value, and
 * the wait's @p id differs from it.  The flags of wait may differ from
 * those of notify.
 *
 * Order errors are fatal: notify twice without wait, wait or try without
 * notify, calls from a handler.  Unknown flag bits are fatal.
 */
/**@{*/
#define GASNET_BARRIERFLAG_ANONYMOUS 1
#define GASNET_BARRIERFLAG_MISMATCH 2
/** One image per node: accepted and ignored. */
#define GASNET_BARRIERFLAG_IMAGES 4
/** An anonymous barrier that is known to match only anonymous ones:
 *  treated as ANONYMOUS. */
#define GASNETC_BARRIERFLAG_UNNAMED_ 8
#define GASNET_BARRIERFLAG_UNNAMED                                          \
    (GASNET_BARRIERFLAG_ANONYMOUS | GASNETC_BARRIERFLAG_UNNAMED_)

GASNETC_API void gasnet_barrier_notify(int id, int flags);
/** @retval GASNET_OK, GASNET_ERR_BARRIER_MISMATCH */
GASNETC_API int gasnet_barrier_wait(int id, int flags);
/** @retval GASNET_OK, GASNET_ERR_BARRIER_MISMATCH, GASNET_ERR_NOT_READY
 *  (not every node has notified; the barrier stays open) */
GASNETC_API int gasnet_barrier_try(int id, int flags);
/** notify + wait. */
GASNETC_API int gasnet_barrier(int id, int flags);
/** After the last completed barrier: non-zero if it was anonymous (every
 *  notify anonymous); otherwise 0 and *id = its named value.  Fatal
 *  between notify and wait, or with @p id NULL. */
GASNETC_API int gasnet_barrier_result(int *id);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* GASNET_EXTENDED_H */

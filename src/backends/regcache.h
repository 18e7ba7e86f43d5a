/* regcache.h - the registration cache of the direct-path network drivers
 * (ofi-rma, ucx-rma): which ranges of this process are registered with the
 * network, how many bytes that pins (bounded by TELEMEM_REG_CACHE_MAX), who
 * uses each registration, and which unused one goes first (least recently
 * used).  Pure bookkeeping: the driver's reg/dereg callbacks do the work. */
#ifndef TLM_REGCACHE_H
#define TLM_REGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Register [lo, lo+len) with the network; store the driver's handle.
 * TELEMEM_OK or an error status (passed to the caller of get). */
typedef int (*tlm_regcache_reg_fn_t)(void *arg, uintptr_t lo, size_t len,
                                     void **handle_p);
typedef void (*tlm_regcache_dereg_fn_t)(void *arg, void *handle);

/* One registration: [lo, hi) page-aligned, refs users. */
typedef struct tlm_regcache_entry {
    struct tlm_regcache_entry *prev, *next; /* most recently used first */
    uintptr_t lo, hi;
    void *handle;
    unsigned refs;
} tlm_regcache_entry_t;

typedef struct tlm_regcache {
    tlm_regcache_entry_t *head, *tail;
    size_t cap;          /* most registered bytes at once */
    size_t align;        /* registrations are rounded out to this */
    size_t bytes;        /* registered now */
    size_t peak;         /* most registered at any time */
    size_t entries;
    unsigned long hits, misses, evictions, refused;
    tlm_regcache_reg_fn_t reg;
    tlm_regcache_dereg_fn_t dereg;
    void *arg;
} tlm_regcache_t;

/* Set up an empty cache.  cap: most bytes registered at once (0: none may
 * be registered); align: power of two (the page size; 0 means 4096).
 * TELEMEM_OK or TELEMEM_ERR_INVALID_ARG (NULL callbacks, bad align). */
int tlm_regcache_init(tlm_regcache_t *c, size_t cap, size_t align,
                      tlm_regcache_reg_fn_t reg, tlm_regcache_dereg_fn_t dereg,
                      void *arg);

/* A registration covering [addr, addr+len), taken for use (refs + 1): an
 * existing one if some entry covers the range (a hit), else a new one of
 * the range rounded out to align, after evicting unused entries, least
 * recently used first, as long as the total would pass the cap.
 * TELEMEM_OK (*e_p set), TELEMEM_ERR_INVALID_ARG (len 0 or the range
 * wraps), TELEMEM_ERR_UNSUPPORTED (the range does not fit under the cap
 * even with every unused entry gone: the caller takes another path), or
 * the reg callback's error. */
int tlm_regcache_get(tlm_regcache_t *c, uintptr_t addr, size_t len,
                     tlm_regcache_entry_t **e_p);

/* Give back a registration from get (refs - 1).  An unused entry stays
 * registered (for a later hit) until evicted or flushed. */
void tlm_regcache_put(tlm_regcache_t *c, tlm_regcache_entry_t *e);

/* Deregister every unused entry that overlaps [addr, addr+len) (len 0:
 * every unused entry).  Returns how many were dropped. */
size_t tlm_regcache_flush(tlm_regcache_t *c, uintptr_t addr, size_t len);

/* Deregister everything; returns how many entries were still in use
 * (deregistered all the same: the caller is closing). */
size_t tlm_regcache_fini(tlm_regcache_t *c);

#endif

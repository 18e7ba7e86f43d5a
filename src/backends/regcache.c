/* regcache.c - the direct-path registration cache (regcache.h): a list of
 * registrations, most recently used first, with the pinned total kept under
 * a cap by evicting unused entries from the tail.  A job exposes a handful
 * of ranges and a transfer's local buffers are few, so a list searched
 * from the front (where recent hits are) is enough. */
#define TLM_LOG_SUBSYS "regcache"
#include <stdlib.h>

#include "telemem.h"
#include "backends/regcache.h"
#include "util/log.h"
#include "util/util.h"

int tlm_regcache_init(tlm_regcache_t *c, size_t cap, size_t align,
                      tlm_regcache_reg_fn_t reg, tlm_regcache_dereg_fn_t dereg,
                      void *arg)
{
    if (!c || !reg || !dereg)
        return TELEMEM_ERR_INVALID_ARG;
    if (align == 0)
        align = 4096;
    if (align & (align - 1))
        return TELEMEM_ERR_INVALID_ARG;
    *c = (tlm_regcache_t){.cap = cap, .align = align, .reg = reg,
                          .dereg = dereg, .arg = arg};
    return TELEMEM_OK;
}

static void unlink_entry(tlm_regcache_t *c, tlm_regcache_entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(tlm_regcache_t *c, tlm_regcache_entry_t *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    else
        c->tail = e;
    c->head = e;
}

static void drop(tlm_regcache_t *c, tlm_regcache_entry_t *e)
{
    unlink_entry(c, e);
    c->dereg(c->arg, e->handle);
    c->bytes -= e->hi - e->lo;
    c->entries--;
    free(e);
}

int tlm_regcache_get(tlm_regcache_t *c, uintptr_t addr, size_t len,
                     tlm_regcache_entry_t **e_p)
{
    if (!c || !e_p || len == 0 || tlm_util_range_wraps(addr, len))
        return TELEMEM_ERR_INVALID_ARG;
    uintptr_t end = addr + len;
    for (tlm_regcache_entry_t *e = c->head; e; e = e->next) {
        if (e->lo <= addr && end <= e->hi) {
            e->refs++;
            c->hits++;
            if (e != c->head) {
                unlink_entry(c, e);
                push_front(c, e);
            }
            *e_p = e;
            return TELEMEM_OK;
        }
    }
    uintptr_t lo = addr & ~(uintptr_t)(c->align - 1);
    uintptr_t hi = end + (c->align - 1);
    if (hi < end)
        return TELEMEM_ERR_INVALID_ARG;
    hi &= ~(uintptr_t)(c->align - 1);
    size_t need = hi - lo;
    if (need > c->cap) {
        c->refused++;
        tlm_debug("registration of %zu bytes refused: above the cache's "
                  "cap of %zu bytes (TELEMEM_REG_CACHE_MAX)", need, c->cap);
        return TELEMEM_ERR_UNSUPPORTED;
    }
    /* Make room: unused entries, least recently used first. */
    tlm_regcache_entry_t *v = c->tail;
    while (c->bytes + need > c->cap && v) {
        tlm_regcache_entry_t *prev = v->prev;
        if (v->refs == 0) {
            drop(c, v);
            c->evictions++;
        }
        v = prev;
    }
    if (c->bytes + need > c->cap) {
        c->refused++;
        tlm_debug("registration of %zu bytes refused: %zu bytes in use, "
                  "cap %zu (TELEMEM_REG_CACHE_MAX)", need, c->bytes, c->cap);
        return TELEMEM_ERR_UNSUPPORTED;
    }
    tlm_regcache_entry_t *e = calloc(1, sizeof(*e));
    if (!e)
        return TELEMEM_ERR_NO_MEMORY;
    int rc = c->reg(c->arg, lo, need, &e->handle);
    if (rc != TELEMEM_OK) {
        free(e);
        return rc;
    }
    e->lo = lo;
    e->hi = hi;
    e->refs = 1;
    push_front(c, e);
    c->bytes += need;
    c->entries++;
    c->misses++;
    if (c->bytes > c->peak)
        c->peak = c->bytes;
    *e_p = e;
    return TELEMEM_OK;
}

void tlm_regcache_put(tlm_regcache_t *c, tlm_regcache_entry_t *e)
{
    if (!c || !e)
        return;
    if (e->refs == 0) {
        tlm_warn("registration [%#lx, %#lx) given back more often than "
                 "taken", (unsigned long)e->lo, (unsigned long)e->hi);
        return;
    }
    e->refs--;
}

size_t tlm_regcache_flush(tlm_regcache_t *c, uintptr_t addr, size_t len)
{
    size_t n = 0;
    if (!c)
        return 0;
    tlm_regcache_entry_t *e = c->head;
    while (e) {
        tlm_regcache_entry_t *next = e->next;
        bool hit = len == 0 ||
                   tlm_util_ranges_overlap(e->lo, e->hi - e->lo, addr, len);
        if (e->refs == 0 && hit) {
            drop(c, e);
            n++;
        }
        e = next;
    }
    return n;
}

size_t tlm_regcache_fini(tlm_regcache_t *c)
{
    size_t used = 0;
    if (!c)
        return 0;
    /* Walk with a saved next, as flush does: re-reading c->head after
     * drop() relies on head->prev == NULL, which the analyzer cannot see. */
    tlm_regcache_entry_t *e = c->head;
    while (e) {
        tlm_regcache_entry_t *next = e->next;
        if (e->refs)
            used++;
        drop(c, e);
        e = next;
    }
    return used;
}

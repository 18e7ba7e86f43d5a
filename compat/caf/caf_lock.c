/* caf_lock.c - LOCK / UNLOCK and CRITICAL on Telemem mutex sets (one set
 * per lock coarray, mutex i of rank r being lock element i on image r:
 * a waiting image is queued at the owner and sleeps by the wait policy,
 * nobody spins over the network), and EVENT POST / WAIT / QUERY on
 * 64-bit counters changed with Telemem atomics. */
#include <stdlib.h>

#include "caf_internal.h"

static bool held_find(tlm_caf_token_t *t, uint64_t key, size_t *pos)
{
    size_t i;

    for (i = 0; i < t->nheld; i++)
        if (t->held[i] == key) {
            *pos = i;
            return true;
        }
    return false;
}

static int held_add(tlm_caf_token_t *t, uint64_t key)
{
    if (t->nheld == t->capheld) {
        size_t cap = t->capheld ? 2 * t->capheld : 8;
        uint64_t *p = realloc(t->held, cap * sizeof *p);
        if (!p)
            return TELEMEM_ERR_NO_MEMORY;
        t->held = p;
        t->capheld = cap;
    }
    t->held[t->nheld++] = key;
    return TELEMEM_OK;
}

/* The rank and key of lock element index on image (0: this image). */
static int lock_target(tlm_caf_token_t *t, size_t index, int image,
                       int *stat, char *errmsg, size_t len, const char *what,
                       int *rank_p, uint64_t *key_p)
{
    int rank = image == 0 ? tlm_caf.me : tlm_caf_rank_of(image);

    tlm_caf_ok(stat);
    if (rank < 0) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: image index %d out of range [1, %d]", what, image,
                       tlm_caf.team->size);
        return 1;
    }
    if (!t || t->mutex_set < 0 || index >= t->nlocks) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: not a lock variable (element %zu)", what, index);
        return 1;
    }
    if (tlm_caf_state(rank) == TLM_CAF_FAILED) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_FAILED_IMAGE,
                       "%s: image %d has failed", what, rank + 1);
        return 1;
    }
    *rank_p = rank;
    *key_p = (uint64_t)index * (uint64_t)tlm_caf.n + (uint64_t)rank;
    return 0;
}

void _gfortran_caf_lock(tlm_caf_token_p token, size_t index, int image,
                        int *acquired, int *stat, char *errmsg,
                        size_t errmsg_len)
{
    tlm_caf_token_t *t = token;
    uint64_t key;
    size_t pos;
    int rank, rc, got = 1;

    if (lock_target(t, index, image, stat, errmsg, errmsg_len, "lock",
                    &rank, &key))
        return;
    if (held_find(t, key, &pos)) {
        if (acquired) {
            *acquired = 0;
            return;
        }
        tlm_caf_report(stat, errmsg, errmsg_len, TLM_CAF_STAT_LOCKED,
                       "lock: this image already holds the lock (element "
                       "%zu on image %d)", index, rank + 1);
        return;
    }
    if (acquired)
        rc = telemem_mutex_trylock(t->mutex_set, (int)index, rank, &got);
    else
        rc = telemem_mutex_lock(t->mutex_set, (int)index, rank);
    if (rc == TELEMEM_OK && got)
        rc = held_add(t, key);
    if (acquired && rc == TELEMEM_OK)
        *acquired = got;
    tlm_caf_check(rc, stat, errmsg, errmsg_len, "lock on", rank + 1);
}

void _gfortran_caf_unlock(tlm_caf_token_p token, size_t index, int image,
                          int *stat, char *errmsg, size_t errmsg_len)
{
    tlm_caf_token_t *t = token;
    uint64_t key;
    size_t pos;
    int rank, rc, got = 0;

    if (lock_target(t, index, image, stat, errmsg, errmsg_len, "unlock",
                    &rank, &key))
        return;
    if (!held_find(t, key, &pos)) {
        /* Not ours: free (STAT_UNLOCKED) or another image's. */
        rc = telemem_mutex_trylock(t->mutex_set, (int)index, rank, &got);
        if (rc == TELEMEM_OK && got)
            rc = telemem_mutex_unlock(t->mutex_set, (int)index, rank);
        if (tlm_caf_check(rc, stat, errmsg, errmsg_len, "unlock on",
                          rank + 1))
            return;
        tlm_caf_report(stat, errmsg, errmsg_len,
                       got ? TLM_CAF_STAT_UNLOCKED
                           : TLM_CAF_STAT_LOCKED_OTHER_IMAGE,
                       got ? "unlock: the lock (element %zu on image %d) is "
                             "not locked"
                           : "unlock: the lock (element %zu on image %d) is "
                             "held by another image", index, rank + 1);
        return;
    }
    t->held[pos] = t->held[--t->nheld];
    rc = telemem_mutex_unlock(t->mutex_set, (int)index, rank);
    tlm_caf_check(rc, stat, errmsg, errmsg_len, "unlock on", rank + 1);
}

/* Counter of event element index on rank, checked. */
static int64_t *event_addr(tlm_caf_token_t *t, size_t index, int rank,
                           int *stat, char *errmsg, size_t len,
                           const char *what)
{
    if (!t || !t->mem || index >= t->nlocks) {
        tlm_caf_report(stat, errmsg, len, TLM_CAF_STAT_INVALID,
                       "%s: not an event variable (element %zu)", what,
                       index);
        return NULL;
    }
    return (int64_t *)tlm_caf_remote(t, rank, (int64_t *)t->mem + index);
}

void _gfortran_caf_event_post(tlm_caf_token_p token, size_t index,
                              int image, int *stat, char *errmsg,
                              size_t errmsg_len)
{
    int rank = image == 0 ? tlm_caf.me : tlm_caf_rank_of(image), rc;
    int64_t one = 1, *addr;

    tlm_caf_ok(stat);
    if (rank < 0) {
        tlm_caf_report(stat, errmsg, errmsg_len, TLM_CAF_STAT_INVALID,
                       "event post: image index %d out of range [1, %d]",
                       image, tlm_caf.team->size);
        return;
    }
    if (tlm_caf_state(rank) != TLM_CAF_RUNNING) {
        int f = tlm_caf_state(rank) == TLM_CAF_FAILED;
        tlm_caf_report(stat, errmsg, errmsg_len,
                       f ? TLM_CAF_STAT_FAILED_IMAGE
                         : TLM_CAF_STAT_STOPPED_IMAGE,
                       "event post: image %d has %s", rank + 1,
                       f ? "failed" : "stopped");
        return;
    }
    addr = event_addr(token, index, rank, stat, errmsg, errmsg_len,
                      "event post");
    if (!addr)
        return;
    /* What this image wrote before the post is complete before it. */
    rc = telemem_quiet();
    if (rc == TELEMEM_OK)
        rc = telemem_atomic_fetch_add(rank, addr, TELEMEM_INT64, &one, NULL);
    tlm_caf_check(rc, stat, errmsg, errmsg_len, "event post to", rank + 1);
}

void _gfortran_caf_event_wait(tlm_caf_token_p token, size_t index,
                              int until_count, int *stat, char *errmsg,
                              size_t errmsg_len)
{
    int64_t *addr, want = until_count > 0 ? until_count : 1, neg;
    telemem_wait_t w = TELEMEM_WAIT_INIT(-1);
    int rc = TELEMEM_OK;

    tlm_caf_ok(stat);
    addr = event_addr(token, index, tlm_caf.me, stat, errmsg, errmsg_len,
                      "event wait");
    if (!addr)
        return;
    while (__atomic_load_n(addr, __ATOMIC_ACQUIRE) < want) {
        rc = telemem_wait_poll(&w);
        if (rc != TELEMEM_OK)
            break;
    }
    neg = -want;
    if (rc == TELEMEM_OK)
        rc = telemem_atomic_fetch_add(tlm_caf.me, addr, TELEMEM_INT64, &neg,
                                      NULL);
    tlm_caf_check(rc, stat, errmsg, errmsg_len, "event wait", 0);
}

void _gfortran_caf_event_query(tlm_caf_token_p token, size_t index,
                               int image, int *count, int *stat)
{
    int rank = image == 0 ? tlm_caf.me : tlm_caf_rank_of(image), rc;
    int64_t zero = 0, old = 0, *addr;

    tlm_caf_ok(stat);
    if (rank < 0) {
        tlm_caf_report(stat, NULL, 0, TLM_CAF_STAT_INVALID,
                       "event query: image index %d out of range [1, %d]",
                       image, tlm_caf.team->size);
        return;
    }
    addr = event_addr(token, index, rank, stat, NULL, 0, "event query");
    if (!addr)
        return;
    rc = telemem_atomic_fetch_add(rank, addr, TELEMEM_INT64, &zero, &old);
    if (!tlm_caf_check(rc, stat, NULL, 0, "event query on", rank + 1))
        *count = (int)old;
}

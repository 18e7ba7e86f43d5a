/* gasnet_hsl.c - GASNet handler-safe locks: POSIX mutexes plus the
 * bookkeeping that enforces the specification's rules (no recursion, no
 * communication while held, released before a handler replies or
 * returns). */
#include <errno.h>
#include <string.h>

#include "gasnet_internal.h"

static void check_hsl(const char *what, gasnet_hsl_t *hsl)
{
    if (!hsl)
        tlm_gasnet_fatal(what, "hsl is NULL");
}

void gasnet_hsl_init(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_init", hsl);
    int rc = pthread_mutex_init(&hsl->lock_, NULL);
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_init", "pthread_mutex_init: %s",
                         strerror(rc));
    hsl->held_ = 0;
}

void gasnet_hsl_destroy(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_destroy", hsl);
    if (hsl->held_)
        tlm_gasnet_fatal("gasnet_hsl_destroy", "the lock is held");
    int rc = pthread_mutex_destroy(&hsl->lock_);
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_destroy", "pthread_mutex_destroy: %s",
                         strerror(rc));
}

void gasnet_hsl_lock(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_lock", hsl);
    /* GASNET_SEQ: the only thread that may hold it is this one. */
    if (hsl->held_)
        tlm_gasnet_fatal("gasnet_hsl_lock", "the lock is already held "
                         "(handler-safe locks are not recursive)");
    int rc = pthread_mutex_lock(&hsl->lock_);
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_lock", "pthread_mutex_lock: %s",
                         strerror(rc));
    hsl->held_ = 1;
    tlm_gasnet.hsl_held++;
}

int gasnet_hsl_trylock(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_trylock", hsl);
    if (hsl->held_)
        return GASNET_ERR_NOT_READY;
    int rc = pthread_mutex_trylock(&hsl->lock_);
    if (rc == EBUSY)
        return GASNET_ERR_NOT_READY;
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_trylock", "pthread_mutex_trylock: %s",
                         strerror(rc));
    hsl->held_ = 1;
    tlm_gasnet.hsl_held++;
    return GASNET_OK;
}

void gasnet_hsl_unlock(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_unlock", hsl);
    if (!hsl->held_)
        tlm_gasnet_fatal("gasnet_hsl_unlock", "the lock is not held");
    if (tlm_gasnet.frame &&
        tlm_gasnet.hsl_held <= tlm_gasnet.frame->hsl_at_entry)
        tlm_gasnet_fatal("gasnet_hsl_unlock", "a handler released a lock it "
                         "did not take");
    hsl->held_ = 0;
    tlm_gasnet.hsl_held--;
    int rc = pthread_mutex_unlock(&hsl->lock_);
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_unlock", "pthread_mutex_unlock: %s",
                         strerror(rc));
}

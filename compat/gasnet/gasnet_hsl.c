/* gasnet_hsl.c - GASNet handler-safe locks: POSIX mutexes plus the
 * bookkeeping that enforces the specification's rules (no recursion, no
 * communication while held, released before a handler replies or
 * returns). */
#include <errno.h>
#include <string.h>

#include "gasnet_internal.h"

/* Who holds a lock: the address of the holder's per-thread count. */
static inline void *me(void)
{
    return &tlm_gasnet_hsl_held;
}

static inline void *owner(gasnet_hsl_t *hsl)
{
    return __atomic_load_n(&hsl->owner_, __ATOMIC_RELAXED);
}

static inline void set_owner(gasnet_hsl_t *hsl, void *who)
{
    __atomic_store_n(&hsl->owner_, who, __ATOMIC_RELAXED);
}

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
    set_owner(hsl, NULL);
}

void gasnet_hsl_destroy(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_destroy", hsl);
    if (owner(hsl))
        tlm_gasnet_fatal("gasnet_hsl_destroy", "the lock is held");
    int rc = pthread_mutex_destroy(&hsl->lock_);
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_destroy", "pthread_mutex_destroy: %s",
                         strerror(rc));
}

void gasnet_hsl_lock(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_lock", hsl);
    if (owner(hsl) == me())
        tlm_gasnet_fatal("gasnet_hsl_lock", "the lock is already held "
                         "(handler-safe locks are not recursive)");
    int rc = pthread_mutex_lock(&hsl->lock_);
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_lock", "pthread_mutex_lock: %s",
                         strerror(rc));
    set_owner(hsl, me());
    tlm_gasnet_hsl_held++;
}

int gasnet_hsl_trylock(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_trylock", hsl);
    if (owner(hsl) == me())
        return GASNET_ERR_NOT_READY;
    int rc = pthread_mutex_trylock(&hsl->lock_);
    if (rc == EBUSY)
        return GASNET_ERR_NOT_READY;
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_trylock", "pthread_mutex_trylock: %s",
                         strerror(rc));
    set_owner(hsl, me());
    tlm_gasnet_hsl_held++;
    return GASNET_OK;
}

void gasnet_hsl_unlock(gasnet_hsl_t *hsl)
{
    check_hsl("gasnet_hsl_unlock", hsl);
    if (owner(hsl) != me())
        tlm_gasnet_fatal("gasnet_hsl_unlock", "the lock is not held (by "
                         "this thread)");
    if (tlm_gasnet_frame &&
        tlm_gasnet_hsl_held <= tlm_gasnet_frame->hsl_at_entry)
        tlm_gasnet_fatal("gasnet_hsl_unlock", "a handler released a lock it "
                         "did not take");
    set_owner(hsl, NULL);
    tlm_gasnet_hsl_held--;
    int rc = pthread_mutex_unlock(&hsl->lock_);
    if (rc != 0)
        tlm_gasnet_fatal("gasnet_hsl_unlock", "pthread_mutex_unlock: %s",
                         strerror(rc));
}

/* armci_mutex.c - ARMCI's one set of mutexes (ARMCI_Create_mutexes,
 * _Destroy_mutexes, _Lock, _Unlock) over Telemem's mutex sets: each rank
 * owns its mutexes and grants them first come, first served. */
#include "armci_internal.h"

int PARMCI_Create_mutexes(int count)
{
    static const char call[] = "ARMCI_Create_mutexes";
    tlm_armci_check_ready(call);
    if (count < 0)
        tlm_armci_fail(call, "count %d is negative", count);
    if (tlm_armci.mutex_set >= 0)
        tlm_armci_fail(call, "mutexes exist already (call "
                             "ARMCI_Destroy_mutexes first)");
    int set = -1;
    tlm_armci_rc(call, telemem_mutexes_create(count, &set), "count %d",
                 count);
    tlm_armci.mutex_set = set;
    return 0;
}
TLM_ARMCI_ALIAS(Create_mutexes);

int PARMCI_Destroy_mutexes(void)
{
    static const char call[] = "ARMCI_Destroy_mutexes";
    tlm_armci_check_ready(call);
    if (tlm_armci.mutex_set < 0)
        tlm_armci_fail(call, "no mutexes (ARMCI_Create_mutexes was not "
                             "called)");
    tlm_armci_rc(call, telemem_mutexes_destroy(tlm_armci.mutex_set),
                 "a mutex may still be held");
    tlm_armci.mutex_set = -1;
    return 0;
}
TLM_ARMCI_ALIAS(Destroy_mutexes);

static void check(const char *call, int mutex, int proc)
{
    tlm_armci_check_proc(call, proc);
    if (tlm_armci.mutex_set < 0)
        tlm_armci_fail(call, "no mutexes (call ARMCI_Create_mutexes)");
    if (mutex < 0)
        tlm_armci_fail(call, "mutex %d is negative", mutex);
}

void PARMCI_Lock(int mutex, int proc)
{
    static const char call[] = "ARMCI_Lock";
    check(call, mutex, proc);
    int rc = telemem_mutex_lock(tlm_armci.mutex_set, mutex, proc);
    if (TLM_ARMCI_LIKELY(rc == TELEMEM_OK))
        return;
    /* The hint only where the call itself could be wrong: not after a
     * peer died or the wait timed out. */
    if (rc == TELEMEM_ERR_PEER_DEAD || rc == TELEMEM_ERR_TIMED_OUT ||
        rc == TELEMEM_ERR_TRANSPORT)
        tlm_armci_rc_slow(call, rc, "mutex %d on proc %d", mutex, proc);
    tlm_armci_rc_slow(call, rc,
                      "mutex %d on proc %d (does it exist? is it held "
                      "already?)",
                      mutex, proc);
}
TLM_ARMCI_ALIAS(Lock);

void PARMCI_Unlock(int mutex, int proc)
{
    static const char call[] = "ARMCI_Unlock";
    check(call, mutex, proc);
    tlm_armci_rc(call,
                 telemem_mutex_unlock(tlm_armci.mutex_set, mutex, proc),
                 "mutex %d on proc %d (held by this rank?)", mutex, proc);
}
TLM_ARMCI_ALIAS(Unlock);

/* armci_rmw.c - ARMCI_Rmw over Telemem's atomics: fetch-and-add and swap
 * of int and long, applied by the target in its poll loop (atomic with
 * respect to other Rmw calls and to accumulates). */
#include <stdint.h>

#include "armci_internal.h"

static void check_ptr(const char *call, const char *what, const void *p,
                      size_t align)
{
    if (TLM_ARMCI_UNLIKELY(!p))
        tlm_armci_fail(call, "%s is NULL", what);
    if (TLM_ARMCI_UNLIKELY((uintptr_t)p % align != 0))
        tlm_armci_fail(call, "%s %p is not aligned to %zu bytes", what, p,
                       align);
}

int PARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc)
{
    static const char call[] = "ARMCI_Rmw";
    tlm_armci_check_proc(call, proc);
    bool is_long = op == ARMCI_FETCH_AND_ADD_LONG || op == ARMCI_SWAP_LONG;
    if (op != ARMCI_FETCH_AND_ADD && op != ARMCI_SWAP && !is_long)
        tlm_armci_fail(call,
                       "unknown op %d (use ARMCI_FETCH_AND_ADD, "
                       "ARMCI_FETCH_AND_ADD_LONG, ARMCI_SWAP, "
                       "ARMCI_SWAP_LONG)",
                       op);
    size_t size = is_long ? sizeof(long) : sizeof(int);
    check_ptr(call, "ploc", ploc, 1);
    check_ptr(call, "prem", prem, size);
    telemem_type_t t = size == 8 ? TELEMEM_INT64 : TELEMEM_INT32;
    int rc;
    if (op == ARMCI_FETCH_AND_ADD || op == ARMCI_FETCH_AND_ADD_LONG) {
        int64_t v64 = value;
        int32_t v32 = value;
        rc = telemem_atomic_fetch_add(proc, prem, t,
                                      size == 8 ? (void *)&v64 : (void *)&v32,
                                      ploc);
    } else {
        /* Swap in the caller's *ploc; the old remote value replaces it. */
        unsigned char v[8];
        for (size_t i = 0; i < size; i++)
            v[i] = ((unsigned char *)ploc)[i];
        rc = telemem_atomic_swap(proc, prem, t, v, ploc);
    }
    tlm_armci_rc(call, rc, "op %d, proc %d, prem %p", op, proc, prem);
    return 0;
}
TLM_ARMCI_ALIAS(Rmw);

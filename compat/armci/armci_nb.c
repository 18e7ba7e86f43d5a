/* armci_nb.c - non-blocking contiguous calls and handles.  Every Nb call
 * is a Telemem implicit-handle (nbi) operation; the ARMCI handle records
 * its target (or "several"), and ARMCI_Wait completes it with
 * telemem_fence (one target) or telemem_quiet (several); ARMCI_Test asks
 * telemem_fence_test / telemem_quiet_test.  A NULL handle
 * leaves completion to ARMCI_WaitProc / _WaitAll / fences. */
#include "armci_internal.h"

enum {
    HDL_NONE = -1, /* nothing pending */
    HDL_MANY = -2  /* operations to several targets */
};

void tlm_armci_hdl_add(armci_hdl_t *hdl, int proc)
{
    if (!hdl)
        return;
    int t = hdl->target;
    /* A handle used again before its wait (aggregate or not) covers both
     * targets; anything not a valid target is taken as empty (handles
     * need not be initialized). */
    if (t == proc || t == HDL_MANY)
        return;
    if (t >= 0 && t < tlm_armci.n)
        hdl->target = HDL_MANY;
    else
        hdl->target = proc;
}

void PARMCI_INIT_HANDLE(armci_hdl_t *hdl)
{
    if (!hdl)
        tlm_armci_fail("ARMCI_INIT_HANDLE", "handle is NULL");
    hdl->target = HDL_NONE;
    hdl->aggregate = 0;
}
TLM_ARMCI_ALIAS(INIT_HANDLE);

void PARMCI_SET_AGGREGATE_HANDLE(armci_hdl_t *handle)
{
    if (!handle)
        tlm_armci_fail("ARMCI_SET_AGGREGATE_HANDLE", "handle is NULL");
    handle->aggregate = 1;
}
TLM_ARMCI_ALIAS(SET_AGGREGATE_HANDLE);

void PARMCI_UNSET_AGGREGATE_HANDLE(armci_hdl_t *handle)
{
    if (!handle)
        tlm_armci_fail("ARMCI_UNSET_AGGREGATE_HANDLE", "handle is NULL");
    handle->aggregate = 0;
}
TLM_ARMCI_ALIAS(UNSET_AGGREGATE_HANDLE);

static void nb_check(const char *call, const void *src, const void *dst,
                     int bytes, int proc)
{
    tlm_armci_check_proc(call, proc);
    tlm_armci_check_bytes(call, "bytes", bytes);
    if (TLM_ARMCI_UNLIKELY(bytes > 0 && (!src || !dst)))
        tlm_armci_fail(call, "%s is NULL (%d bytes)", src ? "dst" : "src",
                       bytes);
}

int PARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    static const char call[] = "ARMCI_NbPut";
    nb_check(call, src, dst, bytes, proc);
    tlm_armci_rc(call, telemem_put_nbi(proc, dst, src, (size_t)bytes),
                 "proc %d, dst %p, %d bytes", proc, dst, bytes);
    tlm_armci_hdl_add(hdl, proc);
    return 0;
}
TLM_ARMCI_ALIAS(NbPut);

int PARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    static const char call[] = "ARMCI_NbGet";
    nb_check(call, src, dst, bytes, proc);
    tlm_armci_rc(call, telemem_get_nbi(proc, dst, src, (size_t)bytes),
                 "proc %d, src %p, %d bytes", proc, src, bytes);
    tlm_armci_hdl_add(hdl, proc);
    return 0;
}
TLM_ARMCI_ALIAS(NbGet);

int PARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes,
                 int proc, armci_hdl_t *hdl)
{
    static const char call[] = "ARMCI_NbAcc";
    nb_check(call, src, dst, bytes, proc);
    telemem_type_t t = tlm_armci_acc_type(call, datatype);
    tlm_armci_check_acc(call, datatype, scale, bytes);
    tlm_armci_rc(call,
                 telemem_acc_nbi(proc, t, scale, dst, src, (size_t)bytes),
                 "proc %d, dst %p, %d bytes", proc, dst, bytes);
    tlm_armci_hdl_add(hdl, proc);
    return 0;
}
TLM_ARMCI_ALIAS(NbAcc);

int PARMCI_Wait(armci_hdl_t *hdl)
{
    static const char call[] = "ARMCI_Wait";
    tlm_armci_check_ready(call);
    if (!hdl)
        tlm_armci_fail(call, "handle is NULL");
    int t = hdl->target;
    if (t >= 0 && t < tlm_armci.n)
        tlm_armci_rc(call, telemem_fence(t), "proc %d", t);
    else if (t == HDL_MANY)
        tlm_armci_rc(call, telemem_quiet(), "several targets");
    hdl->target = HDL_NONE;
    return 0;
}
TLM_ARMCI_ALIAS(Wait);

int PARMCI_Test(armci_hdl_t *hdl)
{
    /* ARMCI's convention (ARMCI-MPI's MPI-3 build): 0 = complete, 1 = not
     * yet.  Complete is what ARMCI_Wait would give, and spends the handle
     * the same way. */
    static const char call[] = "ARMCI_Test";
    tlm_armci_check_ready(call);
    if (!hdl)
        tlm_armci_fail(call, "handle is NULL");
    int t = hdl->target, done = 1;
    if (t >= 0 && t < tlm_armci.n)
        tlm_armci_rc(call, telemem_fence_test(t, &done), "proc %d", t);
    else if (t == HDL_MANY)
        tlm_armci_rc(call, telemem_quiet_test(&done), "several targets");
    if (!done)
        return 1;
    hdl->target = HDL_NONE;
    return 0;
}
TLM_ARMCI_ALIAS(Test);

int PARMCI_WaitProc(int proc)
{
    static const char call[] = "ARMCI_WaitProc";
    tlm_armci_check_proc(call, proc);
    tlm_armci_rc(call, telemem_fence(proc), "proc %d", proc);
    return 0;
}
TLM_ARMCI_ALIAS(WaitProc);

int PARMCI_WaitAll(void)
{
    static const char call[] = "ARMCI_WaitAll";
    tlm_armci_check_ready(call);
    tlm_armci_rc(call, telemem_quiet(), "all ranks");
    return 0;
}
TLM_ARMCI_ALIAS(WaitAll);

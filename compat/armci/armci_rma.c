/* armci_rma.c - contiguous one-sided calls (ARMCI_Put, _Get, _Acc,
 * _Put_flag, the value calls, ARMCI_Copy) and completion (ARMCI_Fence,
 * _AllFence, _Barrier), each a thin check-and-call over telemem.h. */
#include <string.h>

#include "armci_internal.h"

telemem_type_t tlm_armci_acc_type(const char *call, int datatype)
{
    switch (datatype) {
    case ARMCI_ACC_INT:
        return sizeof(int) == 4 ? TELEMEM_INT32 : TELEMEM_INT64;
    case ARMCI_ACC_LNG:
        return sizeof(long) == 8 ? TELEMEM_INT64 : TELEMEM_INT32;
    case ARMCI_ACC_FLT:
        return TELEMEM_FLOAT;
    case ARMCI_ACC_DBL:
        return TELEMEM_DOUBLE;
    case ARMCI_ACC_CPL:
        return TELEMEM_COMPLEX_FLOAT;
    case ARMCI_ACC_DCP:
        return TELEMEM_COMPLEX_DOUBLE;
    default:
        tlm_armci_fail(call,
                       "unknown datatype %d (use ARMCI_ACC_INT .. "
                       "ARMCI_ACC_DCP)",
                       datatype);
    }
}

size_t tlm_armci_acc_size(int datatype)
{
    static const size_t sizes[] = {sizeof(int),       sizeof(long),
                                   sizeof(float),     sizeof(double),
                                   2 * sizeof(float), 2 * sizeof(double)};
    return datatype >= 0 && datatype <= ARMCI_ACC_DCP ? sizes[datatype] : 1;
}

static void check_pair(const char *call, const void *src, const void *dst,
                       int bytes)
{
    tlm_armci_check_bytes(call, "size", bytes);
    if (TLM_ARMCI_UNLIKELY(bytes > 0 && (!src || !dst)))
        tlm_armci_fail(call, "%s is NULL (%d bytes)", src ? "dst" : "src",
                       bytes);
}

int PARMCI_Put(void *src, void *dst, int size, int target)
{
    static const char call[] = "ARMCI_Put";
    tlm_armci_check_proc(call, target);
    check_pair(call, src, dst, size);
    tlm_armci_rc(call, telemem_put(target, dst, src, (size_t)size),
                 "proc %d, dst %p, %d bytes", target, dst, size);
    return 0;
}
TLM_ARMCI_ALIAS(Put);

int PARMCI_Get(void *src, void *dst, int size, int target)
{
    static const char call[] = "ARMCI_Get";
    tlm_armci_check_proc(call, target);
    check_pair(call, src, dst, size);
    tlm_armci_rc(call, telemem_get(target, dst, src, (size_t)size),
                 "proc %d, src %p, %d bytes", target, src, size);
    return 0;
}
TLM_ARMCI_ALIAS(Get);

void tlm_armci_check_acc(const char *call, int datatype, const void *scale,
                         long run_bytes)
{
    size_t es = tlm_armci_acc_size(datatype);
    if (TLM_ARMCI_UNLIKELY(!scale))
        tlm_armci_fail(call, "scale is NULL");
    if (TLM_ARMCI_UNLIKELY(run_bytes % (long)es != 0))
        tlm_armci_fail(call,
                       "%ld bytes is not a multiple of the %zu-byte element "
                       "of datatype %d",
                       run_bytes, es, datatype);
}

int PARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes,
               int proc)
{
    static const char call[] = "ARMCI_Acc";
    tlm_armci_check_proc(call, proc);
    telemem_type_t t = tlm_armci_acc_type(call, datatype);
    check_pair(call, src, dst, bytes);
    tlm_armci_check_acc(call, datatype, scale, bytes);
    tlm_armci_rc(call, telemem_acc(proc, t, scale, dst, src, (size_t)bytes),
                 "proc %d, dst %p, %d bytes", proc, dst, bytes);
    return 0;
}
TLM_ARMCI_ALIAS(Acc);

void tlm_armci_put_flag(const char *call, int *flag, int value, int proc)
{
    if (TLM_ARMCI_UNLIKELY(!flag))
        tlm_armci_fail(call, "flag is NULL");
    /* Issued after the data to the same target, so applied after it. */
    tlm_armci_rc(call, telemem_put(proc, flag, &value, sizeof value),
                 "flag %p on proc %d", (void *)flag, proc);
}

int PARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value,
                    int proc)
{
    static const char call[] = "ARMCI_Put_flag";
    tlm_armci_check_proc(call, proc);
    check_pair(call, src, dst, size);
    tlm_armci_rc(call, telemem_put(proc, dst, src, (size_t)size),
                 "proc %d, dst %p, %d bytes", proc, dst, size);
    tlm_armci_put_flag(call, flag, value, proc);
    return 0;
}
TLM_ARMCI_ALIAS(Put_flag);

void PARMCI_Copy(void *src, void *dst, int size)
{
    static const char call[] = "ARMCI_Copy";
    check_pair(call, src, dst, size);
    if (size > 0)
        memmove(dst, src, (size_t)size);
}
TLM_ARMCI_ALIAS(Copy);

/* ------------------------------------------------------------------------
 * Values */

static void put_value(const char *call, const void *v, size_t bytes,
                      void *dst, int proc)
{
    tlm_armci_check_proc(call, proc);
    if (TLM_ARMCI_UNLIKELY(!dst))
        tlm_armci_fail(call, "dst is NULL");
    tlm_armci_rc(call, telemem_put(proc, dst, v, bytes), "proc %d, dst %p",
                 proc, dst);
}

static void get_value(const char *call, void *v, size_t bytes, void *src,
                      int proc)
{
    tlm_armci_check_proc(call, proc);
    if (TLM_ARMCI_UNLIKELY(!src))
        tlm_armci_fail(call, "src is NULL");
    tlm_armci_rc(call, telemem_get(proc, v, src, bytes), "proc %d, src %p",
                 proc, src);
}

#define TLM_ARMCI_VALUE_OPS(Name, T)                                        \
    int PARMCI_PutValue##Name(T src, void *dst, int proc)                   \
    {                                                                       \
        put_value("ARMCI_PutValue" #Name, &src, sizeof src, dst, proc);     \
        return 0;                                                           \
    }                                                                       \
    TLM_ARMCI_ALIAS(PutValue##Name);                                        \
    int PARMCI_NbPutValue##Name(T src, void *dst, int proc,                 \
                                armci_hdl_t *hdl)                           \
    {                                                                       \
        /* src lives on this stack frame: the put must copy it now. */      \
        put_value("ARMCI_NbPutValue" #Name, &src, sizeof src, dst, proc);   \
        tlm_armci_hdl_add(hdl, proc);                                       \
        return 0;                                                           \
    }                                                                       \
    TLM_ARMCI_ALIAS(NbPutValue##Name);                                      \
    T PARMCI_GetValue##Name(void *src, int proc)                            \
    {                                                                       \
        T v;                                                                \
        get_value("ARMCI_GetValue" #Name, &v, sizeof v, src, proc);         \
        return v;                                                           \
    }                                                                       \
    TLM_ARMCI_ALIAS(GetValue##Name)

TLM_ARMCI_VALUE_OPS(Int, int);
TLM_ARMCI_VALUE_OPS(Long, long);
TLM_ARMCI_VALUE_OPS(Float, float);
TLM_ARMCI_VALUE_OPS(Double, double);

/* ------------------------------------------------------------------------
 * Completion */

void PARMCI_Fence(int proc)
{
    static const char call[] = "ARMCI_Fence";
    tlm_armci_check_proc(call, proc);
    tlm_armci_rc(call, telemem_fence(proc), "proc %d", proc);
}
TLM_ARMCI_ALIAS(Fence);

void PARMCI_AllFence(void)
{
    static const char call[] = "ARMCI_AllFence";
    tlm_armci_check_ready(call);
    tlm_armci_rc(call, telemem_quiet(), "all ranks");
}
TLM_ARMCI_ALIAS(AllFence);

void PARMCI_Barrier(void)
{
    static const char call[] = "ARMCI_Barrier";
    tlm_armci_check_ready(call);
    tlm_armci_rc(call, telemem_quiet(), "completing operations");
    tlm_armci_rc(call, telemem_barrier(), "barrier");
}
TLM_ARMCI_ALIAS(Barrier);

/* armci_vector.c - I/O-vector calls (ARMCI_PutV, _GetV, _AccV and their Nb
 * forms): each armci_giov_t descriptor becomes one telemem vector
 * operation (one message stream to the target, checked there as a
 * whole). */
#include "armci_internal.h"

typedef enum vec_kind { VEC_PUT, VEC_GET, VEC_ACC } vec_kind_t;

static void check_iov(const char *call, const armci_giov_t *iov, int iov_len,
                      int datatype, const void *scale, bool acc)
{
    if (TLM_ARMCI_UNLIKELY(iov_len < 0))
        tlm_armci_fail(call, "iov_len %d is negative", iov_len);
    if (TLM_ARMCI_UNLIKELY(iov_len > 0 && !iov))
        tlm_armci_fail(call, "iov is NULL (iov_len %d)", iov_len);
    for (int i = 0; i < iov_len; i++) {
        const armci_giov_t *v = &iov[i];
        if (v->bytes < 0 || v->ptr_array_len < 0)
            tlm_armci_fail(call, "iov[%d]: bytes %d, ptr_array_len %d "
                                 "(negative)",
                           i, v->bytes, v->ptr_array_len);
        if (v->ptr_array_len > 0 && (!v->src_ptr_array || !v->dst_ptr_array))
            tlm_armci_fail(call, "iov[%d].%s is NULL", i,
                           v->src_ptr_array ? "dst_ptr_array"
                                            : "src_ptr_array");
        if (acc)
            tlm_armci_check_acc(call, datatype, scale, v->bytes);
    }
}

static void vec(const char *call, vec_kind_t kind, int datatype, void *scale,
                armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *hdl,
                bool nb)
{
    tlm_armci_check_proc(call, proc);
    telemem_type_t t = TELEMEM_INT32;
    if (kind == VEC_ACC)
        t = tlm_armci_acc_type(call, datatype);
    check_iov(call, iov, iov_len, datatype, scale, kind == VEC_ACC);
    /* A blocking get of several descriptors issues them all, then waits
     * once (the fence also completes earlier puts to proc). */
    bool many_gets = kind == VEC_GET && !nb && iov_len > 1;
    for (int i = 0; i < iov_len; i++) {
        armci_giov_t *v = &iov[i];
        size_t cnt = (size_t)v->ptr_array_len, bytes = (size_t)v->bytes;
        const void *const *src = (const void *const *)v->src_ptr_array;
        void *const *dst = v->dst_ptr_array;
        int rc;
        switch (kind) {
        case VEC_PUT:
            rc = nb ? telemem_put_vector_nbi(proc, dst, src, cnt, bytes)
                    : telemem_put_vector(proc, dst, src, cnt, bytes);
            break;
        case VEC_GET:
            rc = nb || many_gets
                     ? telemem_get_vector_nbi(proc, dst, src, cnt, bytes)
                     : telemem_get_vector(proc, dst, src, cnt, bytes);
            break;
        default:
            rc = nb ? telemem_acc_vector_nbi(proc, t, scale, dst, src, cnt,
                                             bytes)
                    : telemem_acc_vector(proc, t, scale, dst, src, cnt,
                                         bytes);
            break;
        }
        tlm_armci_rc(call, rc, "proc %d, iov[%d]: %d segments of %d bytes",
                     proc, i, v->ptr_array_len, v->bytes);
    }
    if (many_gets)
        tlm_armci_rc(call, telemem_fence(proc), "proc %d", proc);
    if (nb)
        tlm_armci_hdl_add(hdl, proc);
}

int PARMCI_PutV(armci_giov_t *iov, int iov_len, int proc)
{
    vec("ARMCI_PutV", VEC_PUT, 0, NULL, iov, iov_len, proc, NULL, false);
    return 0;
}
TLM_ARMCI_ALIAS(PutV);

int PARMCI_GetV(armci_giov_t *iov, int iov_len, int proc)
{
    vec("ARMCI_GetV", VEC_GET, 0, NULL, iov, iov_len, proc, NULL, false);
    return 0;
}
TLM_ARMCI_ALIAS(GetV);

int PARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len,
                int proc)
{
    vec("ARMCI_AccV", VEC_ACC, datatype, scale, iov, iov_len, proc, NULL,
        false);
    return 0;
}
TLM_ARMCI_ALIAS(AccV);

int PARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc,
                  armci_hdl_t *handle)
{
    vec("ARMCI_NbPutV", VEC_PUT, 0, NULL, iov, iov_len, proc, handle, true);
    return 0;
}
TLM_ARMCI_ALIAS(NbPutV);

int PARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc,
                  armci_hdl_t *handle)
{
    vec("ARMCI_NbGetV", VEC_GET, 0, NULL, iov, iov_len, proc, handle, true);
    return 0;
}
TLM_ARMCI_ALIAS(NbGetV);

int PARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len,
                  int proc, armci_hdl_t *handle)
{
    vec("ARMCI_NbAccV", VEC_ACC, datatype, scale, iov, iov_len, proc, handle,
        true);
    return 0;
}
TLM_ARMCI_ALIAS(NbAccV);

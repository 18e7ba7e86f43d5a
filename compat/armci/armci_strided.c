/* armci_strided.c - strided calls (ARMCI_PutS, _GetS, _AccS, _PutS_flag,
 * their Nb forms) over telemem's strided operations, and the local
 * armci_write_strided / armci_read_strided copies. */
#include <string.h>

#include "armci_internal.h"

void tlm_armci_strides(const char *call, int levels, const int *src_stride,
                       const int *dst_stride, const int *count,
                       size_t *src_s, size_t *dst_s, size_t *cnt)
{
    if (TLM_ARMCI_UNLIKELY(levels < 0 || levels > TELEMEM_MAX_STRIDE_LEVELS))
        tlm_armci_fail(call, "stride_levels %d out of range [0, %d]", levels,
                       TELEMEM_MAX_STRIDE_LEVELS);
    if (TLM_ARMCI_UNLIKELY(!count))
        tlm_armci_fail(call, "count is NULL");
    if (TLM_ARMCI_UNLIKELY(levels > 0 && (!src_stride || !dst_stride)))
        tlm_armci_fail(call, "%s is NULL (stride_levels %d)",
                       src_stride ? "dst_stride_ar" : "src_stride_ar",
                       levels);
    for (int i = 0; i <= levels; i++) {
        if (TLM_ARMCI_UNLIKELY(count[i] < 0))
            tlm_armci_fail(call, "count[%d] = %d is negative", i, count[i]);
        cnt[i] = (size_t)count[i];
    }
    for (int i = 0; i < levels; i++) {
        if (TLM_ARMCI_UNLIKELY(src_stride[i] < 0 || dst_stride[i] < 0))
            tlm_armci_fail(call, "%s[%d] = %d is negative",
                           src_stride[i] < 0 ? "src_stride_ar"
                                             : "dst_stride_ar",
                           i, src_stride[i] < 0 ? src_stride[i]
                                                : dst_stride[i]);
        src_s[i] = (size_t)src_stride[i];
        dst_s[i] = (size_t)dst_stride[i];
    }
}

/* Arrays for the converted strides: stride_levels + 1 entries at most. */
#define TLM_ARMCI_STRIDE_ARRAYS                                             \
    size_t ss[TELEMEM_MAX_STRIDE_LEVELS], ds[TELEMEM_MAX_STRIDE_LEVELS],    \
        cnt[TELEMEM_MAX_STRIDE_LEVELS + 1]

static void check_ptrs(const char *call, const void *src, const void *dst)
{
    if (TLM_ARMCI_UNLIKELY(!src || !dst))
        tlm_armci_fail(call, "%s is NULL", src ? "dst_ptr" : "src_ptr");
}

static void puts_(const char *call, void *src, int *src_stride, void *dst,
                  int *dst_stride, int *count, int levels, int proc,
                  armci_hdl_t *hdl, bool nb)
{
    TLM_ARMCI_STRIDE_ARRAYS;
    tlm_armci_check_proc(call, proc);
    check_ptrs(call, src, dst);
    tlm_armci_strides(call, levels, src_stride, dst_stride, count, ss, ds,
                      cnt);
    int rc = nb ? telemem_put_strided_nbi(proc, dst, ds, src, ss, cnt, levels)
                : telemem_put_strided(proc, dst, ds, src, ss, cnt, levels);
    tlm_armci_rc(call, rc, "proc %d, dst %p, %d levels", proc, dst, levels);
    if (nb)
        tlm_armci_hdl_add(hdl, proc);
}

static void gets_(const char *call, void *src, int *src_stride, void *dst,
                  int *dst_stride, int *count, int levels, int proc,
                  armci_hdl_t *hdl, bool nb)
{
    TLM_ARMCI_STRIDE_ARRAYS;
    tlm_armci_check_proc(call, proc);
    check_ptrs(call, src, dst);
    tlm_armci_strides(call, levels, src_stride, dst_stride, count, ss, ds,
                      cnt);
    int rc = nb ? telemem_get_strided_nbi(proc, dst, ds, src, ss, cnt, levels)
                : telemem_get_strided(proc, dst, ds, src, ss, cnt, levels);
    tlm_armci_rc(call, rc, "proc %d, src %p, %d levels", proc, src, levels);
    if (nb)
        tlm_armci_hdl_add(hdl, proc);
}

static void accs_(const char *call, int datatype, void *scale, void *src,
                  int *src_stride, void *dst, int *dst_stride, int *count,
                  int levels, int proc, armci_hdl_t *hdl, bool nb)
{
    TLM_ARMCI_STRIDE_ARRAYS;
    tlm_armci_check_proc(call, proc);
    telemem_type_t t = tlm_armci_acc_type(call, datatype);
    check_ptrs(call, src, dst);
    tlm_armci_strides(call, levels, src_stride, dst_stride, count, ss, ds,
                      cnt);
    tlm_armci_check_acc(call, datatype, scale, count[0]);
    int rc = nb ? telemem_acc_strided_nbi(proc, t, scale, dst, ds, src, ss,
                                          cnt, levels)
                : telemem_acc_strided(proc, t, scale, dst, ds, src, ss, cnt,
                                      levels);
    tlm_armci_rc(call, rc, "proc %d, dst %p, %d levels", proc, dst, levels);
    if (nb)
        tlm_armci_hdl_add(hdl, proc);
}

int PARMCI_PutS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                int dst_stride_ar[], int count[], int stride_levels, int proc)
{
    puts_("ARMCI_PutS", src_ptr, src_stride_ar, dst_ptr, dst_stride_ar,
          count, stride_levels, proc, NULL, false);
    return 0;
}
TLM_ARMCI_ALIAS(PutS);

int PARMCI_GetS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                int dst_stride_ar[], int count[], int stride_levels, int proc)
{
    gets_("ARMCI_GetS", src_ptr, src_stride_ar, dst_ptr, dst_stride_ar,
          count, stride_levels, proc, NULL, false);
    return 0;
}
TLM_ARMCI_ALIAS(GetS);

int PARMCI_AccS(int datatype, void *scale, void *src_ptr,
                int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                int count[], int stride_levels, int proc)
{
    accs_("ARMCI_AccS", datatype, scale, src_ptr, src_stride_ar, dst_ptr,
          dst_stride_ar, count, stride_levels, proc, NULL, false);
    return 0;
}
TLM_ARMCI_ALIAS(AccS);

int PARMCI_PutS_flag(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                     int dst_stride_ar[], int count[], int stride_levels,
                     int *flag, int value, int proc)
{
    static const char call[] = "ARMCI_PutS_flag";
    puts_(call, src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count,
          stride_levels, proc, NULL, false);
    tlm_armci_put_flag(call, flag, value, proc);
    return 0;
}
TLM_ARMCI_ALIAS(PutS_flag);

int PARMCI_NbPutS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                  int dst_stride_ar[], int count[], int stride_levels,
                  int proc, armci_hdl_t *hdl)
{
    puts_("ARMCI_NbPutS", src_ptr, src_stride_ar, dst_ptr, dst_stride_ar,
          count, stride_levels, proc, hdl, true);
    return 0;
}
TLM_ARMCI_ALIAS(NbPutS);

int PARMCI_NbGetS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                  int dst_stride_ar[], int count[], int stride_levels,
                  int proc, armci_hdl_t *hdl)
{
    gets_("ARMCI_NbGetS", src_ptr, src_stride_ar, dst_ptr, dst_stride_ar,
          count, stride_levels, proc, hdl, true);
    return 0;
}
TLM_ARMCI_ALIAS(NbGetS);

int PARMCI_NbAccS(int datatype, void *scale, void *src_ptr,
                  int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc, armci_hdl_t *hdl)
{
    accs_("ARMCI_NbAccS", datatype, scale, src_ptr, src_stride_ar, dst_ptr,
          dst_stride_ar, count, stride_levels, proc, hdl, true);
    return 0;
}
TLM_ARMCI_ALIAS(NbAccS);

/* ------------------------------------------------------------------------
 * Local strided copies */

/* Walk the patch at ptr run by run, copying each run to (pack) or from
 * (unpack) the next bytes of *buf. */
static void walk(char *ptr, const int *stride, const int *count, int level,
                 char **buf, bool pack)
{
    if (level == 0) {
        if (pack)
            memcpy(*buf, ptr, (size_t)count[0]);
        else
            memcpy(ptr, *buf, (size_t)count[0]);
        *buf += count[0];
        return;
    }
    for (int i = 0; i < count[level]; i++)
        walk(ptr + (size_t)i * (size_t)stride[level - 1], stride, count,
             level - 1, buf, pack);
}

static void local_strided(const char *call, void *ptr, int levels,
                          int stride_arr[], int count[], char *buf, bool pack)
{
    TLM_ARMCI_STRIDE_ARRAYS;
    tlm_armci_strides(call, levels, stride_arr, stride_arr, count, ss, ds,
                      cnt);
    for (int i = 0; i <= levels; i++)
        if (count[i] == 0)
            return;
    if (!ptr || !buf)
        tlm_armci_fail(call, "%s is NULL", ptr ? "buf" : "ptr");
    walk(ptr, stride_arr, count, levels, &buf, pack);
}

void armci_write_strided(void *ptr, int stride_levels, int stride_arr[],
                         int count[], char *buf)
{
    local_strided("armci_write_strided", ptr, stride_levels, stride_arr,
                  count, buf, true);
}

void armci_read_strided(void *ptr, int stride_levels, int stride_arr[],
                        int count[], char *buf)
{
    local_strided("armci_read_strided", ptr, stride_levels, stride_arr,
                  count, buf, false);
}

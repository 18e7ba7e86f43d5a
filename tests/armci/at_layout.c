/* at_layout.c - prints the sizes, member offsets and enum values of the
 * ARMCI types, one "name value" line each.  Built once against libarmci's
 * headers and once against ARMCI-MPI's (/usr/include/armci.h); the test
 * (at_layout.sh) requires identical output, which is what lets objects
 * compiled for ARMCI-MPI (Debian's Global Arrays) link with libarmci. */
#include <stddef.h>
#include <stdio.h>

#include <armci.h>
#include <armcix.h>
#include <message.h>

#define SIZE(T) printf("sizeof %s %zu\n", #T, sizeof(T))
#define ALIGN(T) printf("alignof %s %zu\n", #T, _Alignof(T))
#define OFF(T, m) printf("offsetof %s.%s %zu\n", #T, #m, offsetof(T, m))
#define MSIZE(T, m) printf("sizeof %s.%s %zu\n", #T, #m, sizeof(((T *)0)->m))
#define VAL(e) printf("value %s %ld\n", #e, (long)(e))

int main(void)
{
    SIZE(armci_size_t);
    SIZE(armci_hdl_t);
    ALIGN(armci_hdl_t);
    OFF(armci_hdl_t, target);
    OFF(armci_hdl_t, aggregate);
    SIZE(armci_giov_t);
    ALIGN(armci_giov_t);
    OFF(armci_giov_t, src_ptr_array);
    OFF(armci_giov_t, dst_ptr_array);
    OFF(armci_giov_t, bytes);
    OFF(armci_giov_t, ptr_array_len);
    SIZE(ARMCI_Group);
    ALIGN(ARMCI_Group);
    OFF(ARMCI_Group, comm);
    MSIZE(ARMCI_Group, comm);
    OFF(ARMCI_Group, noncoll_pgroup_comm);
    OFF(ARMCI_Group, grp_to_abs);
    OFF(ARMCI_Group, abs_to_grp);
    OFF(ARMCI_Group, rank);
    OFF(ARMCI_Group, size);
    SIZE(armci_domain_t);
    SIZE(struct armcix_mutex_hdl_s);
    OFF(struct armcix_mutex_hdl_s, my_count);
    OFF(struct armcix_mutex_hdl_s, max_count);
    OFF(struct armcix_mutex_hdl_s, grp);
    OFF(struct armcix_mutex_hdl_s, windows);
    OFF(struct armcix_mutex_hdl_s, bases);
    VAL(ARMCI_MPI);
    VAL(ARMCI_ACC_INT);
    VAL(ARMCI_ACC_LNG);
    VAL(ARMCI_ACC_FLT);
    VAL(ARMCI_ACC_DBL);
    VAL(ARMCI_ACC_CPL);
    VAL(ARMCI_ACC_DCP);
    VAL(ARMCI_FETCH_AND_ADD);
    VAL(ARMCI_FETCH_AND_ADD_LONG);
    VAL(ARMCI_SWAP);
    VAL(ARMCI_SWAP_LONG);
    VAL(ARMCI_DOMAIN_SMP);
    VAL(SCOPE_ALL);
    VAL(SCOPE_NODE);
    VAL(SCOPE_MASTERS);
    VAL(ARMCI_INT);
    VAL(ARMCI_LONG);
    VAL(ARMCI_LONG_LONG);
    VAL(ARMCI_FLOAT);
    VAL(ARMCI_DOUBLE);
    return 0;
}

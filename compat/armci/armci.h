/* armci.h - the ARMCI API of libarmci over Telemem: names, signatures,
 * type layouts and enum values of ARMCI-MPI 0.3.1 (Debian
 * libarmci-mpi-dev), so that programs built for ARMCI-MPI compile against
 * this header and objects built against ARMCI-MPI's header link with this
 * library unchanged.  Semantics and the differences: docs/armci.md. */
#ifndef _ARMCI_H_
#define _ARMCI_H_

#include <armciconf.h>

#if TELEMEM_ARMCI_HAVE_MPI
#include <mpi.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** ARMCI-MPI's version marker (programs test it to use the ARMCI-MPI
 *  API, e.g. ARMCI_Access_begin()); TELEMEM_ARMCI tells the two apart. */
#define ARMCI_MPI 3

/** Element types of the accumulate calls (dst += scale * src). */
enum ARMCI_Acc_e {
    ARMCI_ACC_INT, /**< int */
    ARMCI_ACC_LNG, /**< long */
    ARMCI_ACC_FLT, /**< float */
    ARMCI_ACC_DBL, /**< double */
    ARMCI_ACC_CPL, /**< float complex: (re, im) pairs of float */
    ARMCI_ACC_DCP  /**< double complex: (re, im) pairs of double */
};

/** Size argument of ARMCI_Malloc() and friends. */
typedef long armci_size_t;
#if TELEMEM_ARMCI_HAVE_MPI
#define ARMCII_MPI_SIZE_T MPI_LONG
#endif

/* ------------------------------------------------------------------------
 * Initialization.  Collective.  ARMCI ranks are Telemem ranks (and equal
 * MPI_COMM_WORLD ranks when the program runs MPI over the same job).
 * Every int-returning call returns 0; errors end the job (ARMCI_Error). */
int ARMCI_Init(void);
int ARMCI_Init_args(int *argc, char ***argv);
int ARMCI_Init_thread(int armci_requested);
#if TELEMEM_ARMCI_HAVE_MPI
int ARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm);
#endif
int ARMCI_Initialized(void);
int ARMCI_Finalize(void);
void ARMCI_Cleanup(void);

/** Print "ARMCI_Error: msg (code)" with the rank and end the whole job
 *  with exit status @p code (1 if @p code is 0). */
void ARMCI_Error(const char *msg, int code);

/* ------------------------------------------------------------------------
 * Memory.  ARMCI_Malloc is collective over all ranks (as in ARMCI-MPI,
 * whatever the default group): every rank gives its size, base_ptrs[i]
 * receives rank i's block (NULL where the size is 0).  ARMCI_Free takes
 * this rank's pointer (NULL where the size was 0).  ARMCI_Malloc_group
 * does the same over a group, indexed by group rank. */
int ARMCI_Malloc(void **base_ptrs, armci_size_t size);
int ARMCI_Free(void *ptr);
void *ARMCI_Malloc_local(armci_size_t size);
int ARMCI_Free_local(void *ptr);

/* ------------------------------------------------------------------------
 * Synchronisation.  Fence(p): every earlier operation of this rank to p is
 * complete at p.  AllFence: the same for every rank.  Barrier: AllFence,
 * then a barrier of all ranks. */
void ARMCI_Barrier(void);
void ARMCI_Fence(int proc);
void ARMCI_AllFence(void);
void ARMCI_Access_begin(void *ptr);
void ARMCI_Access_end(void *ptr);
void ARMCI_Copy(void *src, void *dst, int size);

/* ------------------------------------------------------------------------
 * Contiguous transfers.  Blocking: they return when local buffers may be
 * reused (a get: when dst holds the data); a put or accumulate is complete
 * at the target after ARMCI_Fence / ARMCI_AllFence / ARMCI_Barrier. */
int ARMCI_Get(void *src, void *dst, int size, int target);
int ARMCI_Put(void *src, void *dst, int size, int target);
int ARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes,
              int proc);

/* Strided transfers: count[0] bytes per run, count[i] runs at stride
 * stride_ar[i-1] for 1 <= i <= stride_levels (at most 8 levels). */
int ARMCI_PutS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
               void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
               int count[/*stride_levels+1*/], int stride_levels, int proc);
int ARMCI_GetS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
               void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
               int count[/*stride_levels+1*/], int stride_levels, int proc);
int ARMCI_AccS(int datatype, void *scale, void *src_ptr,
               int src_stride_ar[/*stride_levels*/], void *dst_ptr,
               int dst_stride_ar[/*stride_levels*/],
               int count[/*stride_levels+1*/], int stride_levels, int proc);

/* Put, then set *flag = value at proc; the target sees the flag only
 * after the data. */
int ARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value,
                   int proc);
int ARMCI_PutS_flag(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                    void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                    int count[/*stride_levels+1*/], int stride_levels,
                    int *flag, int value, int proc);

/* ------------------------------------------------------------------------
 * Non-blocking transfers.  A handle records the target(s) of its
 * operations; ARMCI_Wait completes them (a get's buffer is filled, a put's
 * buffer may be reused, both are complete at the target).  A NULL handle
 * means implicit completion (ARMCI_WaitProc, ARMCI_WaitAll, fences). */
typedef struct armci_hdl_s {
    int target; /* -1: nothing pending, -2: several targets */
    int aggregate;
} armci_hdl_t;

void ARMCI_INIT_HANDLE(armci_hdl_t *hdl);
void ARMCI_SET_AGGREGATE_HANDLE(armci_hdl_t *handle);
void ARMCI_UNSET_AGGREGATE_HANDLE(armci_hdl_t *handle);

int ARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int ARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int ARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes,
                int proc, armci_hdl_t *hdl);

int ARMCI_Wait(armci_hdl_t *hdl);
/** Polls once without waiting: 0 when the handle's operations are complete
 *  (as after ARMCI_Wait; the handle is then spent), 1 while they are not
 *  (ARMCI-MPI's convention).  A handle with nothing pending tests 0. */
int ARMCI_Test(armci_hdl_t *hdl);
int ARMCI_WaitProc(int proc);
int ARMCI_WaitAll(void);

int ARMCI_NbPutS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                 void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                 int count[/*stride_levels+1*/], int stride_levels, int proc,
                 armci_hdl_t *hdl);
int ARMCI_NbGetS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                 void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                 int count[/*stride_levels+1*/], int stride_levels, int proc,
                 armci_hdl_t *hdl);
int ARMCI_NbAccS(int datatype, void *scale, void *src_ptr,
                 int src_stride_ar[/*stride_levels*/], void *dst_ptr,
                 int dst_stride_ar[/*stride_levels*/],
                 int count[/*stride_levels+1*/], int stride_levels, int proc,
                 armci_hdl_t *hdl);

/** Local strided copies: armci_write_strided packs the patch at ptr into
 *  the contiguous buf; armci_read_strided unpacks buf into the patch. */
void armci_write_strided(void *ptr, int stride_levels, int stride_arr[],
                         int count[], char *buf);
void armci_read_strided(void *ptr, int stride_levels, int stride_arr[],
                        int count[], char *buf);

/* ------------------------------------------------------------------------
 * Generalized I/O vectors: each descriptor moves ptr_array_len segments of
 * `bytes` bytes from src_ptr_array[i] to dst_ptr_array[i]. */
typedef struct {
    void **src_ptr_array; /* source address of each segment */
    void **dst_ptr_array; /* destination address of each segment */
    int bytes;            /* length of every segment */
    int ptr_array_len;    /* number of segments */
} armci_giov_t;

int ARMCI_PutV(armci_giov_t *iov, int iov_len, int proc);
int ARMCI_GetV(armci_giov_t *iov, int iov_len, int proc);
int ARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len,
               int proc);
int ARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc,
                 armci_hdl_t *handle);
int ARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc,
                 armci_hdl_t *handle);
int ARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len,
                 int proc, armci_hdl_t *handle);

/* ------------------------------------------------------------------------
 * Scalar values. */
int ARMCI_PutValueInt(int src, void *dst, int proc);
int ARMCI_PutValueLong(long src, void *dst, int proc);
int ARMCI_PutValueFloat(float src, void *dst, int proc);
int ARMCI_PutValueDouble(double src, void *dst, int proc);
int ARMCI_NbPutValueInt(int src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueLong(long src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueFloat(float src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueDouble(double src, void *dst, int proc,
                           armci_hdl_t *hdl);
int ARMCI_GetValueInt(void *src, int proc);
long ARMCI_GetValueLong(void *src, int proc);
float ARMCI_GetValueFloat(void *src, int proc);
double ARMCI_GetValueDouble(void *src, int proc);

/* ------------------------------------------------------------------------
 * Mutexes: one set at a time, count mutexes per rank (counts may differ);
 * ARMCI_Unlock completes the caller's operations first. */
int ARMCI_Create_mutexes(int count);
int ARMCI_Destroy_mutexes(void);
void ARMCI_Lock(int mutex, int proc);
void ARMCI_Unlock(int mutex, int proc);

/* ------------------------------------------------------------------------
 * Read-modify-write, atomic with respect to other ARMCI_Rmw and
 * accumulates.  FETCH_AND_ADD: *ploc = old *prem, *prem += value (int, or
 * long for _LONG).  SWAP: exchanges *ploc and *prem (value is unused). */
enum ARMCI_Rmw_e {
    ARMCI_FETCH_AND_ADD,
    ARMCI_FETCH_AND_ADD_LONG,
    ARMCI_SWAP,
    ARMCI_SWAP_LONG
};

int ARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc);

/* ------------------------------------------------------------------------
 * Groups.  The layout is ARMCI-MPI's: `comm` is an MPI communicator of the
 * group's ranks when MPI runs over the same job (else MPI_COMM_NULL), and
 * grp_to_abs / abs_to_grp map group ranks to absolute ranks and back.
 * Group calls are collective over the parent group; a rank outside the new
 * group gets rank -1 and size 0. */
typedef struct {
#if TELEMEM_ARMCI_HAVE_MPI
    MPI_Comm comm;
    MPI_Comm noncoll_pgroup_comm;
#else
    void *comm;
    void *noncoll_pgroup_comm;
#endif
    int *grp_to_abs;
    int *abs_to_grp;
    int rank;
    int size;
} ARMCI_Group;

void ARMCI_Group_create(int grp_size, int *pid_list, ARMCI_Group *group_out);
void ARMCI_Group_create_child(int grp_size, int *pid_list,
                              ARMCI_Group *group_out,
                              ARMCI_Group *group_parent);
void ARMCI_Group_free(ARMCI_Group *group);
int ARMCI_Group_rank(ARMCI_Group *group, int *rank);
void ARMCI_Group_size(ARMCI_Group *group, int *size);
void ARMCI_Group_set_default(ARMCI_Group *group);
void ARMCI_Group_get_default(ARMCI_Group *group_out);
void ARMCI_Group_get_world(ARMCI_Group *group_out);
int ARMCI_Absolute_id(ARMCI_Group *group, int group_rank);
int ARMCI_Malloc_group(void **ptr_arr, armci_size_t bytes,
                       ARMCI_Group *group);
int ARMCI_Free_group(void *ptr, ARMCI_Group *group);

/* The message API (armci_msg_*) */
#include <message.h>

/* ------------------------------------------------------------------------
 * Topology.  As in ARMCI-MPI, every rank is its own SMP domain: ARMCI
 * memory of another process is never load/store accessible here. */
enum armci_domain_e { ARMCI_DOMAIN_SMP };
typedef int armci_domain_t;

int armci_domain_nprocs(armci_domain_t domain, int id);
int armci_domain_id(armci_domain_t domain, int glob_proc_id);
int armci_domain_glob_proc_id(armci_domain_t domain, int id, int loc_proc_id);
int armci_domain_my_id(armci_domain_t domain);
int armci_domain_count(armci_domain_t domain);
int armci_domain_same_id(armci_domain_t domain, int proc);
int ARMCI_Same_node(int proc);

int ARMCI_Uses_shm(void);
void ARMCI_Set_shm_limit(unsigned long shmemlimit);
int ARMCI_Uses_shm_grp(ARMCI_Group *group);

/* Device memory (host memory here; device is ignored). */
int ARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes,
                        const char *device);
int ARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes,
                              ARMCI_Group *group, const char *device);
int ARMCI_Free_memdev(void *ptr);

/* ------------------------------------------------------------------------
 * PARMCI: the profiling interface.  Every ARMCI_* function above is a weak
 * alias of its PARMCI_* twin, so a tool may define ARMCI_X and call
 * PARMCI_X. */
int PARMCI_Init(void);
int PARMCI_Init_args(int *argc, char ***argv);
int PARMCI_Init_thread(int armci_requested);
#if TELEMEM_ARMCI_HAVE_MPI
int PARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm);
#endif
int PARMCI_Initialized(void);
int PARMCI_Finalize(void);
void PARMCI_Cleanup(void);
void PARMCI_Error(const char *msg, int code);

int PARMCI_Malloc(void **base_ptrs, armci_size_t size);
int PARMCI_Free(void *ptr);
void *PARMCI_Malloc_local(armci_size_t size);
int PARMCI_Free_local(void *ptr);
int PARMCI_Malloc_group(void **ptr_arr, armci_size_t bytes,
                        ARMCI_Group *group);
int PARMCI_Free_group(void *ptr, ARMCI_Group *group);
int PARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes,
                         const char *device);
int PARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes,
                               ARMCI_Group *group, const char *device);
int PARMCI_Free_memdev(void *ptr);

void PARMCI_Barrier(void);
void PARMCI_Fence(int proc);
void PARMCI_AllFence(void);
void PARMCI_Access_begin(void *ptr);
void PARMCI_Access_end(void *ptr);
void PARMCI_Copy(void *src, void *dst, int size);

int PARMCI_Get(void *src, void *dst, int size, int target);
int PARMCI_Put(void *src, void *dst, int size, int target);
int PARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes,
               int proc);
int PARMCI_PutS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                int dst_stride_ar[], int count[], int stride_levels,
                int proc);
int PARMCI_GetS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                int dst_stride_ar[], int count[], int stride_levels,
                int proc);
int PARMCI_AccS(int datatype, void *scale, void *src_ptr,
                int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                int count[], int stride_levels, int proc);
int PARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value,
                    int proc);
int PARMCI_PutS_flag(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                     int dst_stride_ar[], int count[], int stride_levels,
                     int *flag, int value, int proc);

int PARMCI_PutV(armci_giov_t *iov, int iov_len, int proc);
int PARMCI_GetV(armci_giov_t *iov, int iov_len, int proc);
int PARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len,
                int proc);

void PARMCI_INIT_HANDLE(armci_hdl_t *hdl);
void PARMCI_SET_AGGREGATE_HANDLE(armci_hdl_t *handle);
void PARMCI_UNSET_AGGREGATE_HANDLE(armci_hdl_t *handle);
int PARMCI_Wait(armci_hdl_t *hdl);
int PARMCI_Test(armci_hdl_t *hdl);
int PARMCI_WaitProc(int proc);
int PARMCI_WaitAll(void);

int PARMCI_NbPut(void *src, void *dst, int bytes, int proc,
                 armci_hdl_t *hdl);
int PARMCI_NbGet(void *src, void *dst, int bytes, int proc,
                 armci_hdl_t *hdl);
int PARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes,
                 int proc, armci_hdl_t *hdl);
int PARMCI_NbPutS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                  int dst_stride_ar[], int count[], int stride_levels,
                  int proc, armci_hdl_t *hdl);
int PARMCI_NbGetS(void *src_ptr, int src_stride_ar[], void *dst_ptr,
                  int dst_stride_ar[], int count[], int stride_levels,
                  int proc, armci_hdl_t *hdl);
int PARMCI_NbAccS(int datatype, void *scale, void *src_ptr,
                  int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc,
                  armci_hdl_t *hdl);
int PARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc,
                  armci_hdl_t *handle);
int PARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc,
                  armci_hdl_t *handle);
int PARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len,
                  int proc, armci_hdl_t *handle);

int PARMCI_PutValueInt(int src, void *dst, int proc);
int PARMCI_PutValueLong(long src, void *dst, int proc);
int PARMCI_PutValueFloat(float src, void *dst, int proc);
int PARMCI_PutValueDouble(double src, void *dst, int proc);
int PARMCI_NbPutValueInt(int src, void *dst, int proc, armci_hdl_t *hdl);
int PARMCI_NbPutValueLong(long src, void *dst, int proc, armci_hdl_t *hdl);
int PARMCI_NbPutValueFloat(float src, void *dst, int proc, armci_hdl_t *hdl);
int PARMCI_NbPutValueDouble(double src, void *dst, int proc,
                            armci_hdl_t *hdl);
int PARMCI_GetValueInt(void *src, int proc);
long PARMCI_GetValueLong(void *src, int proc);
float PARMCI_GetValueFloat(void *src, int proc);
double PARMCI_GetValueDouble(void *src, int proc);

int PARMCI_Create_mutexes(int count);
int PARMCI_Destroy_mutexes(void);
void PARMCI_Lock(int mutex, int proc);
void PARMCI_Unlock(int mutex, int proc);
int PARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc);

void PARMCI_Group_create(int grp_size, int *pid_list,
                         ARMCI_Group *group_out);
void PARMCI_Group_create_child(int grp_size, int *pid_list,
                               ARMCI_Group *group_out,
                               ARMCI_Group *group_parent);
void PARMCI_Group_free(ARMCI_Group *group);
int PARMCI_Group_rank(ARMCI_Group *group, int *rank);
void PARMCI_Group_size(ARMCI_Group *group, int *size);
void PARMCI_Group_set_default(ARMCI_Group *group);
void PARMCI_Group_get_default(ARMCI_Group *group_out);
void PARMCI_Group_get_world(ARMCI_Group *group_out);
int PARMCI_Absolute_id(ARMCI_Group *group, int group_rank);

int PARMCI_Same_node(int proc);
int PARMCI_Uses_shm(void);
void PARMCI_Set_shm_limit(unsigned long shmemlimit);
int PARMCI_Uses_shm_grp(ARMCI_Group *group);

void parmci_msg_barrier(void);
void parmci_msg_group_barrier(ARMCI_Group *group);

#ifdef __cplusplus
}
#endif

#endif /* _ARMCI_H_ */

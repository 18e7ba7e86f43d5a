/* armcix.h - ARMCI-MPI's extensions (ARMCIX_*) in libarmci over Telemem:
 * group split and dup, mutex handles over any group, explicit progress.
 * Names, signatures and the mutex-handle layout are ARMCI-MPI 0.3.1's. */
#ifndef _ARMCIX_H_
#define _ARMCIX_H_

#include <stdint.h>

#include <armci.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Collective over @p parent: ranks with the same @p color form a group,
 *  ordered by @p key then by parent rank (as MPI_Comm_split).  A negative
 *  color gives a rank no group (rank -1, size 0).  Returns 0. */
int ARMCIX_Group_split(ARMCI_Group *parent, int color, int key,
                       ARMCI_Group *new_group);
/** Collective over @p parent: a new group with the same ranks.  Returns 0. */
int ARMCIX_Group_dup(ARMCI_Group *parent, ARMCI_Group *new_group);

/** A set of mutexes over a group.  The struct is ARMCI-MPI's layout; the
 *  library owns it (programs hold only the pointer). */
struct armcix_mutex_hdl_s {
    int my_count;  /* mutexes owned by this rank */
    int max_count; /* largest count of any member */
    ARMCI_Group grp;
#if TELEMEM_ARMCI_HAVE_MPI
    MPI_Win *windows; /* unused here (NULL) */
#else
    void *windows; /* unused here (NULL) */
#endif
    uint8_t **bases; /* unused here (NULL) */
};

typedef struct armcix_mutex_hdl_s *armcix_mutex_hdl_t;

/** Collective over @p pgroup: this rank owns @p count mutexes. */
armcix_mutex_hdl_t ARMCIX_Create_mutexes_hdl(int count, ARMCI_Group *pgroup);
/** Collective: no mutex of the set may be held.  Returns 0. */
int ARMCIX_Destroy_mutexes_hdl(armcix_mutex_hdl_t hdl);
/** Lock mutex @p mutex owned by absolute rank @p proc (a group member),
 *  waiting until it is granted (first come, first served). */
void ARMCIX_Lock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc);
/** Returns 0 when the mutex was free and is now held, 1 otherwise. */
int ARMCIX_Trylock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc);
/** Completes the caller's operations, then releases the mutex. */
void ARMCIX_Unlock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc);

/** Serve incoming requests once (Telemem's poll). */
void ARMCIX_Progress(void);

#ifdef __cplusplus
}
#endif

#endif /* _ARMCIX_H_ */

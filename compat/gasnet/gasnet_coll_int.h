/* gasnet_coll_int.h - between the collectives' engine (gasnet_coll.c:
 * teams, messages, barriers, the data movement) and their entry points
 * (gasnet_coll_api.c): the checks of a call and one function per kind of
 * data movement, each for the calling image of the team. */
#ifndef GASNET_COLL_INT_H
#define GASNET_COLL_INT_H

#include <stddef.h>

#include "gasnet_coll.h"

/* Fatal unless the library is attached, team is a team and flags hold
 * exactly one IN_, one OUT_ and one address mode; returns team. */
struct gasnete_coll_team *tlm_gasnet_coll_check(const char *what,
                                                gasnet_team_handle_t team,
                                                int flags);
/* Fatal unless image is a member of t. */
void tlm_gasnet_coll_check_image(const char *what,
                                 const struct gasnete_coll_team *t,
                                 gasnet_image_t image);
/* This image's address in an M form's list (all of the team's with
 * GASNET_COLL_SINGLE, this node's with GASNET_COLL_LOCAL). */
void *tlm_gasnet_coll_mine(const char *what,
                           const struct gasnete_coll_team *t,
                           void *const list[], int flags);

/* The data movement of each collective (gasnet_coll.h says what each
 * does), with the IN_ / OUT_ synchronisation of flags. */
void tlm_gasnet_coll_broadcast(const char *what, gasnet_team_handle_t team,
                               void *dst, gasnet_image_t root, void *src,
                               size_t nbytes, int flags);
void tlm_gasnet_coll_scatter(const char *what, gasnet_team_handle_t team,
                             void *dst, gasnet_image_t root, void *src,
                             size_t nbytes, int flags);
void tlm_gasnet_coll_gather(const char *what, gasnet_team_handle_t team,
                            gasnet_image_t root, void *dst, void *src,
                            size_t nbytes, int flags);
void tlm_gasnet_coll_gather_all(const char *what, gasnet_team_handle_t team,
                                void *dst, void *src, size_t nbytes,
                                int flags);
void tlm_gasnet_coll_exchange(const char *what, gasnet_team_handle_t team,
                              void *dst, void *src, size_t nbytes, int flags);
void tlm_gasnet_coll_reduce(const char *what, gasnet_team_handle_t team,
                            gasnet_image_t root, void *dst, void *src,
                            size_t elem_size, size_t elem_count,
                            gasnet_coll_fn_handle_t func, int func_arg,
                            int flags);
void tlm_gasnet_coll_scan(const char *what, gasnet_team_handle_t team,
                          void *dst, void *src, size_t elem_size,
                          size_t elem_count, gasnet_coll_fn_handle_t func,
                          int func_arg, int flags);

#endif

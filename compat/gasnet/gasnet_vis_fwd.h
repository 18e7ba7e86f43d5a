/* gasnet_vis_fwd.h - the type of GASNet-1's VIS interface that comes
 * before the declarations: gasnet_memvec_t, one piece of a vector
 * transfer (gasnet.h includes it before gasnet_core.h; gasnet_vis.h
 * declares the calls). */
#ifndef GASNET_VIS_FWD_H
#define GASNET_VIS_FWD_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_vis_fwd.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** One piece of a vector transfer. */
typedef struct {
    void *addr;
    size_t len;
} gasnet_memvec_t;

#ifdef __cplusplus
}
#endif

#endif /* GASNET_VIS_FWD_H */

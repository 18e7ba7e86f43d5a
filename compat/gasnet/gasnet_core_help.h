/* gasnet_core_help.h - what gasnet_core.h builds the active-message
 * families with: the parameter lists, argument lists and argument vectors
 * for M = 0..16 arguments, and the macro that defines the seven functions
 * of one M (gasnet.h includes it before gasnet_core.h). */
#ifndef GASNET_CORE_HELP_H
#define GASNET_CORE_HELP_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_core_help.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Parameter lists, argument lists and argument vectors for M = 0..16. */
#define GASNETC_P_0
#define GASNETC_P_1 , gasnet_handlerarg_t gasnetc_a0
#define GASNETC_P_2 GASNETC_P_1, gasnet_handlerarg_t gasnetc_a1
#define GASNETC_P_3 GASNETC_P_2, gasnet_handlerarg_t gasnetc_a2
#define GASNETC_P_4 GASNETC_P_3, gasnet_handlerarg_t gasnetc_a3
#define GASNETC_P_5 GASNETC_P_4, gasnet_handlerarg_t gasnetc_a4
#define GASNETC_P_6 GASNETC_P_5, gasnet_handlerarg_t gasnetc_a5
#define GASNETC_P_7 GASNETC_P_6, gasnet_handlerarg_t gasnetc_a6
#define GASNETC_P_8 GASNETC_P_7, gasnet_handlerarg_t gasnetc_a7
#define GASNETC_P_9 GASNETC_P_8, gasnet_handlerarg_t gasnetc_a8
#define GASNETC_P_10 GASNETC_P_9, gasnet_handlerarg_t gasnetc_a9
#define GASNETC_P_11 GASNETC_P_10, gasnet_handlerarg_t gasnetc_a10
#define GASNETC_P_12 GASNETC_P_11, gasnet_handlerarg_t gasnetc_a11
#define GASNETC_P_13 GASNETC_P_12, gasnet_handlerarg_t gasnetc_a12
#define GASNETC_P_14 GASNETC_P_13, gasnet_handlerarg_t gasnetc_a13
#define GASNETC_P_15 GASNETC_P_14, gasnet_handlerarg_t gasnetc_a14
#define GASNETC_P_16 GASNETC_P_15, gasnet_handlerarg_t gasnetc_a15
#define GASNETC_V_1 gasnetc_a0
#define GASNETC_V_2 GASNETC_V_1, gasnetc_a1
#define GASNETC_V_3 GASNETC_V_2, gasnetc_a2
#define GASNETC_V_4 GASNETC_V_3, gasnetc_a3
#define GASNETC_V_5 GASNETC_V_4, gasnetc_a4
#define GASNETC_V_6 GASNETC_V_5, gasnetc_a5
#define GASNETC_V_7 GASNETC_V_6, gasnetc_a6
#define GASNETC_V_8 GASNETC_V_7, gasnetc_a7
#define GASNETC_V_9 GASNETC_V_8, gasnetc_a8
#define GASNETC_V_10 GASNETC_V_9, gasnetc_a9
#define GASNETC_V_11 GASNETC_V_10, gasnetc_a10
#define GASNETC_V_12 GASNETC_V_11, gasnetc_a11
#define GASNETC_V_13 GASNETC_V_12, gasnetc_a12
#define GASNETC_V_14 GASNETC_V_13, gasnetc_a13
#define GASNETC_V_15 GASNETC_V_14, gasnetc_a14
#define GASNETC_V_16 GASNETC_V_15, gasnetc_a15
#define GASNETC_DECL_N_(M)                                                  \
    const gasnet_handlerarg_t gasnetc_v_[M] = {GASNETC_V_##M};
#define GASNETC_DECL_0
#define GASNETC_DECL_1 GASNETC_DECL_N_(1)
#define GASNETC_DECL_2 GASNETC_DECL_N_(2)
#define GASNETC_DECL_3 GASNETC_DECL_N_(3)
#define GASNETC_DECL_4 GASNETC_DECL_N_(4)
#define GASNETC_DECL_5 GASNETC_DECL_N_(5)
#define GASNETC_DECL_6 GASNETC_DECL_N_(6)
#define GASNETC_DECL_7 GASNETC_DECL_N_(7)
#define GASNETC_DECL_8 GASNETC_DECL_N_(8)
#define GASNETC_DECL_9 GASNETC_DECL_N_(9)
#define GASNETC_DECL_10 GASNETC_DECL_N_(10)
#define GASNETC_DECL_11 GASNETC_DECL_N_(11)
#define GASNETC_DECL_12 GASNETC_DECL_N_(12)
#define GASNETC_DECL_13 GASNETC_DECL_N_(13)
#define GASNETC_DECL_14 GASNETC_DECL_N_(14)
#define GASNETC_DECL_15 GASNETC_DECL_N_(15)
#define GASNETC_DECL_16 GASNETC_DECL_N_(16)
#define GASNETC_ARGV_0 ((const gasnet_handlerarg_t *)0)
#define GASNETC_ARGV_1 gasnetc_v_
#define GASNETC_ARGV_2 gasnetc_v_
#define GASNETC_ARGV_3 gasnetc_v_
#define GASNETC_ARGV_4 gasnetc_v_
#define GASNETC_ARGV_5 gasnetc_v_
#define GASNETC_ARGV_6 gasnetc_v_
#define GASNETC_ARGV_7 gasnetc_v_
#define GASNETC_ARGV_8 gasnetc_v_
#define GASNETC_ARGV_9 gasnetc_v_
#define GASNETC_ARGV_10 gasnetc_v_
#define GASNETC_ARGV_11 gasnetc_v_
#define GASNETC_ARGV_12 gasnetc_v_
#define GASNETC_ARGV_13 gasnetc_v_
#define GASNETC_ARGV_14 gasnetc_v_
#define GASNETC_ARGV_15 gasnetc_v_
#define GASNETC_ARGV_16 gasnetc_v_

/* One family member of each kind for M arguments. */
#define GASNETC_AM_FAMILY_(M)                                               \
    static inline int gasnet_AMRequestShort##M(                             \
        gasnet_node_t dest, gasnet_handler_t handler GASNETC_P_##M)         \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestShortM(dest, handler, M, GASNETC_ARGV_##M); \
    }                                                                       \
    static inline int gasnet_AMRequestMedium##M(                            \
        gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,    \
        size_t nbytes GASNETC_P_##M)                                        \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestMediumM(dest, handler, source_addr, nbytes, \
                                        M, GASNETC_ARGV_##M);               \
    }                                                                       \
    static inline int gasnet_AMRequestLong##M(                              \
        gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,    \
        size_t nbytes, void *dest_addr GASNETC_P_##M)                       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestLongM(dest, handler, source_addr, nbytes,   \
                                      dest_addr, M, GASNETC_ARGV_##M);      \
    }                                                                       \
    static inline int gasnet_AMRequestLongAsync##M(                         \
        gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,    \
        size_t nbytes, void *dest_addr GASNETC_P_##M)                       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMRequestLongAsyncM(dest, handler, source_addr,      \
                                           nbytes, dest_addr, M,            \
                                           GASNETC_ARGV_##M);               \
    }                                                                       \
    static inline int gasnet_AMReplyShort##M(                               \
        gasnet_token_t token, gasnet_handler_t handler GASNETC_P_##M)       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMReplyShortM(token, handler, M, GASNETC_ARGV_##M);  \
    }                                                                       \
    static inline int gasnet_AMReplyMedium##M(                              \
        gasnet_token_t token, gasnet_handler_t handler, void *source_addr,  \
        size_t nbytes GASNETC_P_##M)                                        \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMReplyMediumM(token, handler, source_addr, nbytes,  \
                                      M, GASNETC_ARGV_##M);                 \
    }                                                                       \
    static inline int gasnet_AMReplyLong##M(                                \
        gasnet_token_t token, gasnet_handler_t handler, void *source_addr,  \
        size_t nbytes, void *dest_addr GASNETC_P_##M)                       \
    {                                                                       \
        GASNETC_DECL_##M                                                    \
        return gasnetc_AMReplyLongM(token, handler, source_addr, nbytes,    \
                                    dest_addr, M, GASNETC_ARGV_##M);        \
    }

#ifdef __cplusplus
}
#endif

#endif /* GASNET_CORE_HELP_H */

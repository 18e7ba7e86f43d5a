/* gasnet_extended_fwd.h - the extended API's names that come before its
 * declarations: the implementation's name, the register-value type and
 * the operation handles (gasnet.h includes it before gasnet_core.h). */
#ifndef GASNET_EXTENDED_FWD_H
#define GASNET_EXTENDED_FWD_H

#ifndef GASNETC_TELEMEM_H
#error "include gasnet.h, which includes gasnet_extended_fwd.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Name and version of the extended API implementation. */
#define GASNET_EXTENDED_NAME TELEMEM
#define GASNET_EXTENDED_NAME_STR "TELEMEM"
#define GASNET_EXTENDED_VERSION 1.0
#define GASNET_EXTENDED_VERSION_STR "1.0"

/** Size of gasnet_register_value_t in bytes (a preprocessor literal). */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define SIZEOF_GASNET_REGISTER_VALUE_T 8
#else
#define SIZEOF_GASNET_REGISTER_VALUE_T 4
#endif

/** The largest unsigned integer held in one register. */
#if SIZEOF_GASNET_REGISTER_VALUE_T == 8
typedef uint64_t gasnet_register_value_t;
#else
typedef uint32_t gasnet_register_value_t;
#endif
/** A non-blocking explicit-handle operation; all-zero is
 *  GASNET_INVALID_HANDLE (an operation already complete). */
typedef struct gasnete_op *gasnet_handle_t;
#define GASNET_INVALID_HANDLE ((gasnet_handle_t)0)
/** A non-blocking value get (gasnet_get_nb_val()); not interchangeable with
 *  gasnet_handle_t. */
typedef struct gasnete_valget_op *gasnet_valget_handle_t;

#ifdef __cplusplus
}
#endif

#endif /* GASNET_EXTENDED_FWD_H */

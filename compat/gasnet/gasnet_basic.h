/* gasnet_basic.h - the basic macros GASNet-1's gasnet.h and gasnet_tools.h
 * give their clients before anything else: the C headers they pull in,
 * stringification and branch-prediction helpers, and the compiler
 * identification of the client's own compiler (PLATFORM_COMPILER_*).
 * Included by gasnet.h and gasnet_tools.h; not meant to be included
 * alone. */
#ifndef GASNET_BASIC_H
#define GASNET_BASIC_H

/* GASNet-1 clients rely on these coming with gasnet.h (GASNet-1's and
 * GASNet-EX's bring the same, and <sys/param.h>'s MIN and MAX). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <unistd.h>

#include "gasnet_config.h"

/* Stringification and token pasting (after macro expansion). */
#ifndef _STRINGIFY
#define _STRINGIFY_HELPER(x) #x
#define _STRINGIFY(x) _STRINGIFY_HELPER(x)
#endif
#ifndef _CONCAT
#define _CONCAT_HELPER(a, b) a##b
#define _CONCAT(a, b) _CONCAT_HELPER(a, b)
#endif

/* Branch prediction: "if probably false" / "if probably true". */
#if defined(__GNUC__)
#define GASNETT_PREDICT_TRUE(x) __builtin_expect(!!(x), 1)
#define GASNETT_PREDICT_FALSE(x) __builtin_expect(!!(x), 0)
#else
#define GASNETT_PREDICT_TRUE(x) (x)
#define GASNETT_PREDICT_FALSE(x) (x)
#endif
#ifndef if_pf
#define if_pf(cond) if (GASNETT_PREDICT_FALSE(cond))
#define if_pt(cond) if (GASNETT_PREDICT_TRUE(cond))
#endif

/* The client's compiler, as GASNet's portable_platform.h names it: the
 * family (PLATFORM_COMPILER_GNU or _CLANG), its name and version. */
#undef PLATFORM_COMPILER_GNU
#undef PLATFORM_COMPILER_CLANG
#if defined(__clang__)
#define PLATFORM_COMPILER_CLANG 1
#define PLATFORM_COMPILER_FAMILYNAME CLANG
#define PLATFORM_COMPILER_FAMILYID 19
#define PLATFORM_COMPILER_VERSION                                           \
    ((__clang_major__ << 16) | (__clang_minor__ << 8) | __clang_patchlevel__)
#define PLATFORM_COMPILER_VERSION_STR                                       \
    _STRINGIFY(__clang_major__) "." _STRINGIFY(__clang_minor__) "."         \
    _STRINGIFY(__clang_patchlevel__)
#elif defined(__GNUC__)
#define PLATFORM_COMPILER_GNU 1
#define PLATFORM_COMPILER_FAMILYNAME GNU
#define PLATFORM_COMPILER_FAMILYID 1
#define PLATFORM_COMPILER_VERSION                                           \
    ((__GNUC__ << 16) | (__GNUC_MINOR__ << 8) | __GNUC_PATCHLEVEL__)
#define PLATFORM_COMPILER_VERSION_STR                                       \
    _STRINGIFY(__GNUC__) "." _STRINGIFY(__GNUC_MINOR__) "."                 \
    _STRINGIFY(__GNUC_PATCHLEVEL__)
#else
#define PLATFORM_COMPILER_UNKNOWN 1
#define PLATFORM_COMPILER_FAMILYNAME UNKNOWN
#define PLATFORM_COMPILER_FAMILYID 0
#define PLATFORM_COMPILER_VERSION 0
#define PLATFORM_COMPILER_VERSION_STR "unknown"
#endif
#ifdef __cplusplus
#define PLATFORM_COMPILER_CXX 1
#else
#define PLATFORM_COMPILER_C 1
#endif
#define PLATFORM_COMPILER_ID                                                \
    (PLATFORM_COMPILER_FAMILYID + (PLATFORM_COMPILER_CXX + 0) * 0x10000)
#define PLATFORM_COMPILER_IDSTR                                             \
    _STRINGIFY(PLATFORM_COMPILER_FAMILYNAME) "|"                            \
    PLATFORM_COMPILER_VERSION_STR
#define PLATFORM_COMPILER_VERSION_GT(maj, min, pat)                         \
    (PLATFORM_COMPILER_VERSION > (((maj) << 16) | ((min) << 8) | (pat)))
#define PLATFORM_COMPILER_VERSION_GE(maj, min, pat)                         \
    (PLATFORM_COMPILER_VERSION >= (((maj) << 16) | ((min) << 8) | (pat)))
#define PLATFORM_COMPILER_VERSION_LT(maj, min, pat)                         \
    (PLATFORM_COMPILER_VERSION < (((maj) << 16) | ((min) << 8) | (pat)))
#define PLATFORM_COMPILER_VERSION_LE(maj, min, pat)                         \
    (PLATFORM_COMPILER_VERSION <= (((maj) << 16) | ((min) << 8) | (pat)))
#define PLATFORM_COMPILER_VERSION_EQ(maj, min, pat)                         \
    (PLATFORM_COMPILER_VERSION == (((maj) << 16) | ((min) << 8) | (pat)))

#endif /* GASNET_BASIC_H */

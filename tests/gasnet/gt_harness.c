/* gt_harness.c - what GASNet-1's own test harness takes from gasnet.h and
 * gasnet_tools.h: _STRINGIFY/_CONCAT, if_pf/if_pt, the core and extended
 * names, PLATFORM_COMPILER_* and GASNETT_SYSTEM_TUPLE, GASNETT_PAGESHIFT,
 * the C headers gasnet.h brings, zero-byte counting, rlimits, signal
 * handlers, the UNNAMED and IMAGES barrier flags and the self-test. */
#include <signal.h>

#include <gasnet.h>
#include <gasnet_tools.h>

#include "gt.h"

static volatile sig_atomic_t got_signal;

static void on_usr1(int sig)
{
    got_signal = sig;
}

#define GT_VALUE 42

int main(int argc, char **argv)
{
    gasnet_handlerentry_t *ht = NULL;
    int nht = -1;
    gasnett_diagnostic_gethandlers(&ht, &nht);
    gt_start(&argc, &argv, "gt_harness", ht, nht, 1 << 20);

    /* Strings and pasting after expansion. */
    GT_ASSERT(strcmp(_STRINGIFY(GT_VALUE), "42") == 0, "_STRINGIFY");
    int _CONCAT(gt_, pasted) = 1;
    GT_ASSERT(gt_pasted == 1, "_CONCAT");
    int taken = 0;
    if_pf(gt_me < 0) taken = 1;
    if_pt(gt_me >= 0) taken += 2;
    GT_ASSERT(taken == 2, "if_pf/if_pt");
    GT_ASSERT(strcmp(GASNET_CORE_NAME_STR, _STRINGIFY(GASNET_CORE_NAME)) == 0,
              "GASNET_CORE_NAME");
    GT_ASSERT(strlen(_STRINGIFY(GASNET_CORE_VERSION)) > 0 &&
              strlen(GASNET_EXTENDED_NAME_STR) > 0, "versions");
    GT_ASSERT(strlen(_STRINGIFY(PLATFORM_COMPILER_FAMILYNAME)) > 0 &&
              strlen(PLATFORM_COMPILER_VERSION_STR) > 0, "compiler id");
#if !PLATFORM_COMPILER_GNU && !PLATFORM_COMPILER_CLANG
    GT_FAIL("this compiler is not identified");
#endif
    GT_ASSERT(strchr(GASNETT_SYSTEM_TUPLE, '-') != NULL, "system tuple %s",
              GASNETT_SYSTEM_TUPLE);
    GT_ASSERT((1u << GASNETT_PAGESHIFT) == GASNETT_PAGESIZE, "PAGESHIFT %d",
              GASNETT_PAGESHIFT);
    GT_ASSERT(GASNETT_MAX_THREADS >= 4, "GASNETT_MAX_THREADS");
    GT_ASSERT(strstr(GASNET_CONFIG_STRING, "THREADMODEL=SEQ") != NULL,
              "config string %s", GASNET_CONFIG_STRING);

    /* Zero-byte counting, against a plain loop, every alignment. */
    unsigned char src[96], dst[96 + 16];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)((gt_mix(i ^ gt_seed()) & 3) ? i + 1 : 0);
    for (size_t a = 0; a < 8; a++)
        for (size_t len = 0; len + a <= 64; len++) {
            size_t want = 0;
            for (size_t k = 0; k < len; k++)
                want += src[a + k] == 0;
            memset(dst, 0x5a, sizeof dst);
            GT_ASSERT(gasnett_count0s(src + a, len) == want, "count0s");
            GT_ASSERT(gasnett_count0s_copy(dst + 8 - a % 8, src + a, len) ==
                      want && memcmp(dst + 8 - a % 8, src + a, len) == 0 &&
                      dst[7 - a % 8] == 0x5a && dst[8 - a % 8 + len] == 0x5a,
                      "count0s_copy(%zu, %zu)", a, len);
        }
    GT_ASSERT(gasnett_count0s_uint32_t(0x00ff0001u) == 2, "uint32");
    GT_ASSERT(gasnett_count0s_uint64_t(0) == 8, "uint64");
    GT_ASSERT(gasnett_count0s_uintptr_t((uintptr_t)1) ==
              (int)sizeof(uintptr_t) - 1, "uintptr");

    (void)gasnett_maximize_rlimits();
    gasnett_sighandlerfn_t old = gasnett_reghandler(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    GT_ASSERT(got_signal == SIGUSR1, "reghandler");
    gasnett_reghandler(SIGUSR1, old);

    /* "0 B" as gasnett_format_number writes it parses back. */
    char num[64];
    gasnett_format_number(0, num, sizeof num, 1);
    GT_ASSERT(gasnett_parse_int(num, 1) == 0, "parse '%s'", num);

    /* Barrier flags of later GASNet-1 releases. */
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_UNNAMED);
    GT_SAFE(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_UNNAMED));
    gasnet_barrier_notify(7, GASNET_BARRIERFLAG_IMAGES);
    GT_SAFE(gasnet_barrier_wait(7, GASNET_BARRIERFLAG_IMAGES));
    int id = -1;
    GT_ASSERT(gasnet_barrier_result(&id) == 0 && id == 7, "named result");

    gasnet_seginfo_t si[1024];
    GT_SAFE(gasnet_getSegmentInfo(si, gt_n));
    GT_ASSERT(gasnett_run_diagnostics(3, 1, NULL, si) == 0, "diagnostics");
    gt_finish("gt_harness");
    return 0;
}

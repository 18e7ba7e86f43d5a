/* rmw.h - one atomic read-modify-write of a naturally aligned 32- or 64-bit
 * integer (fetch-and-add, swap, compare-and-swap), shared by core's atomics
 * (applied at the target) and the window driver's direct atomics (applied
 * by the initiator on the shared mapping), so both use the same
 * instructions and stay atomic with respect to each other. */
#ifndef TLM_RMW_H
#define TLM_RMW_H

#include <stdbool.h>
#include <stdint.h>

/* Operations (the wire values of TLM_AM_RMW's op field). */
enum { TLM_RMW_FADD = 0, TLM_RMW_SWAP = 1, TLM_RMW_CSWAP = 2 };

/* Apply op at addr (aligned, width 4 or 8 bytes): FADD adds operand, SWAP
 * stores it, CSWAP stores it when the old value equals compare.  Returns
 * the old value (for CSWAP the value seen, equal to compare on success). */
static inline uint64_t tlm_rmw_apply(int op, unsigned width, void *addr,
                                     uint64_t operand, uint64_t compare)
{
    if (width == 4) {
        uint32_t *p = addr, v = (uint32_t)operand, c = (uint32_t)compare;
        if (op == TLM_RMW_FADD)
            return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
        if (op == TLM_RMW_SWAP)
            return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
        __atomic_compare_exchange_n(p, &c, v, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        return c;
    }
    uint64_t *p = addr, c = compare;
    if (op == TLM_RMW_FADD)
        return __atomic_fetch_add(p, operand, __ATOMIC_SEQ_CST);
    if (op == TLM_RMW_SWAP)
        return __atomic_exchange_n(p, operand, __ATOMIC_SEQ_CST);
    __atomic_compare_exchange_n(p, &c, operand, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return c;
}

#endif

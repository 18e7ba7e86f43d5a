/* util_copy.c - the one copy routine of the message path (into and out of
 * transport buffers), so that a better copy for some machine is one change.
 *
 * It is glibc's memcpy.  An SSE2 loop written to avoid glibc's `rep movsb`
 * (slow on this EPYC for 4 KiB-256 KiB copies between a page-aligned source
 * and a destination that is not; docs/shm.md) made streaming puts 4x slower
 * here: `rep movsb` writes whole lines without reading them first, which
 * matters when the receiver's core holds the buffer's lines.  The slow
 * alignment case does not arise for our buffers: payloads start 32 bytes
 * into a buffer and buffers are 16 KiB + 128 bytes apart, so neither side of
 * a copy is a page-aligned message buffer (measured at offsets 0..4095). */
#include <stdatomic.h>
#include <string.h>

#include "util/util.h"

void tlm_util_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void tlm_util_copy_last(void *dst, const void *src, size_t n)
{
    size_t tail = tlm_util_tail_len(n);
    if (n > tail)
        memcpy(dst, src, n - tail);
    atomic_thread_fence(memory_order_release);
    tlm_util_store_once((char *)dst + n - tail, (const char *)src + n - tail,
                        tail);
}

/* at_lastbyte.c - NetPIPE's ARMCI module (NParmci) as a test: two ranks
 * bounce one ARMCI_Malloc buffer with ARMCI_Put + ARMCI_AllFence, and the
 * receiver spins on a plain load of the buffer's last byte until it shows
 * the new value; then the whole put must be there (stamps at the start,
 * the middle and next to the end are checked).  Each size gets a fresh
 * allocation (as NetPIPE's), sizes 1 B to 16 MiB (powers of two and
 * +-3 bytes around them), then many rounds at 6 MiB.  A spin that sees no
 * change for 10 s fails, naming the size, the round and the byte.
 * usage: at_lastbyte [rounds-at-6MiB (default 2000)] [max size] */
#include "at.h"

#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Spin on a plain load of p[n - 1] until it reads want. */
static void spin(volatile char *p, size_t n, char want, size_t size,
                 long round)
{
    double t0 = 0;
    for (unsigned long i = 0; p[n - 1] != want; i++) {
        if ((i & 0xfffff) != 0)
            continue;
        if (t0 == 0)
            t0 = now();
        else
            AT_ASSERT(now() - t0 < 10.0,
                      "size %zu round %ld: the last byte still reads 0x%02x "
                      "('%c' expected) after 10 s",
                      size, round, (unsigned char)p[n - 1], want);
    }
}

/* Stamps a put carries besides its last byte (sizes of 5 bytes up). */
static void stamp(char *b, size_t n, long round)
{
    if (n < 5)
        return;
    char v = (char)(round * 7 + 1);
    b[0] = v;
    b[n / 2] = (char)(v + 1);
    b[n - 2] = (char)(v + 2);
}

static void check_stamp(const volatile char *b, size_t n, long round)
{
    if (n < 5)
        return;
    char v = (char)(round * 7 + 1);
    AT_ASSERT(b[0] == v && b[n / 2] == (char)(v + 1) &&
                  b[n - 2] == (char)(v + 2),
              "size %zu round %ld: the last byte reads its new value but "
              "the stamps do not (0x%02x 0x%02x 0x%02x, expected 0x%02x "
              "0x%02x 0x%02x): the last byte came early, or an old put "
              "stored it again",
              n, round, (unsigned char)b[0], (unsigned char)b[n / 2],
              (unsigned char)b[n - 2], (unsigned char)v,
              (unsigned char)(v + 1), (unsigned char)(v + 2));
}

/* One size: a fresh buffer, rounds ping-pongs (NetPIPE's cache mode: the
 * buffer is both what a rank sends and where it receives). */
static void bounce(size_t n, long rounds)
{
    void **ptr = at_ptrs();
    AT_OK(ARMCI_Malloc(ptr, (armci_size_t)n));
    int peer = 1 - at_me, tr = at_me == 0;
    volatile char *buf = ptr[at_me];
    memset((char *)buf, 'a', n);
    buf[n - 1] = (char)('a' + tr);
    ARMCI_Barrier();
    for (long r = 0; r < rounds; r++) {
        /* As NParmci: the byte seen is overwritten at once (a put that
         * still stores there after it was seen undoes that, and the next
         * put carries the stale value: the peer then spins forever). */
        if (tr) {
            stamp((char *)buf, n, 2 * r);
            AT_OK(ARMCI_Put((void *)buf, ptr[peer], (int)n, peer));
            ARMCI_AllFence();
            spin(buf, n, 'a', n, r);
            buf[n - 1] = 'b';
            check_stamp(buf, n, 2 * r + 1);
        } else {
            spin(buf, n, 'b', n, r);
            buf[n - 1] = 'a';
            check_stamp(buf, n, 2 * r);
            stamp((char *)buf, n, 2 * r + 1);
            AT_OK(ARMCI_Put((void *)buf, ptr[peer], (int)n, peer));
            ARMCI_AllFence();
        }
    }
    ARMCI_Barrier();
    AT_OK(ARMCI_Free((void *)buf));
    free(ptr);
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    long big_rounds = argc > 1 ? atol(argv[1]) : 2000;
    size_t max = argc > 2 ? (size_t)atol(argv[2]) : (size_t)16 << 20;
    if (at_n != 2) {
        if (at_me == 0)
            at_log("SKIP lastbyte: needs 2 ranks (%d)", at_n);
        at_finish("lastbyte (skipped)");
        return 77;
    }
    double t0 = now();
    size_t sizes = 0;
    for (size_t p = 1; p <= max; p *= 2) {
        for (int d = -3; d <= 3; d += 3) {
            if ((d < 0 && p <= 4) || (d > 0 && p + 3 > max))
                continue;
            size_t n = p + (size_t)(ptrdiff_t)d;
            /* few rounds: each size is mostly about its fresh buffer */
            long rounds = n <= ((size_t)1 << 20) ? 20 : 4;
            bounce(n, rounds);
            sizes++;
        }
    }
    double t1 = now();
    size_t six = (size_t)6 << 20;
    if (six <= max) {
        bounce(six, big_rounds);
        bounce(six + 3, big_rounds / 10);
    }
    if (at_me == 0)
        at_log("%zu sizes up to %zu bytes in %.1f s; %ld rounds at 6 MiB "
               "in %.1f s",
               sizes, max, t1 - t0, big_rounds, now() - t1);
    at_finish("lastbyte");
    return 0;
}

/* gt_headers.c - the C library names a GASNet-1 client finds declared after
 * including gasnet.h alone (GASNet-1's gasnet.h and GASNet-EX's legacy one
 * bring <unistd.h>, <errno.h>, <ctype.h>, <sched.h> and <sys/param.h> with
 * them, and clients rely on it: a public example program calls sleep()
 * with no header of its own).  Built with implicit declarations as errors,
 * so the test is the build; the run only checks a few values. */
#include <gasnet.h>

int main(void)
{
    int bad = 0;
    if (sleep(0) != 0 || usleep(0) != 0 || getpid() <= 0)
        bad |= 1; /* unistd.h */
    errno = EINTR;
    if (errno != EINTR)
        bad |= 2; /* errno.h */
    if (!isdigit('7') || isalpha('7') || toupper('a') != 'A')
        bad |= 4; /* ctype.h */
    if (sched_yield() != 0)
        bad |= 8; /* sched.h */
    if (MIN(3, 4) != 3 || MAX(3, 4) != 4)
        bad |= 16; /* sys/param.h */
    if (bad)
        fprintf(stderr, "gt_headers: FAIL (mask %d)\n", bad);
    return bad ? 1 : 0;
}

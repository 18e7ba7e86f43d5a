/* shm_clean.c - the rank program of shm_clean.sh: joins the job (through
 * telemem-run or PMIx), allocates blocks of different sizes per rank (rank
 * 0 none) and one of the same size, writes a byte into each peer's block,
 * prints "READY <pid> <TELEMEM_KVS>" and waits to be killed.  By then no /dev/shm object
 * of the job may be left with a name: the script checks, kills the job
 * with SIGKILL and checks again.
 * With "squat" (under telemem-run, as root): before anyone joins, rank 0
 * creates, as uid 65534, every /dev/shm name the job would have used when
 * names were made of the job id and the rank alone; the job must still
 * start and map its peers' blocks (the direct path), and leave the
 * squatted objects alone. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "tt.h"

#define SQUAT_NAMES 5 /* the segment and four blocks per rank */

static void squat_name(char *buf, size_t n, const char *job, int r, int k)
{
    if (k == 0)
        snprintf(buf, n, "/telemem-%s-%d", job, r);
    else
        snprintf(buf, n, "/telemem-%s-%d-w%d", job, r, k - 1);
}

static void squat(const char *job, int n, int create)
{
    char name[160];
    for (int r = 0; r < n; r++) {
        for (int k = 0; k < SQUAT_NAMES; k++) {
            squat_name(name, sizeof(name), job, r, k);
            if (!create) {
                struct stat sb;
                char path[200];
                snprintf(path, sizeof(path), "/dev/shm%s", name);
                TT_ASSERT(stat(path, &sb) == 0 && sb.st_uid == 65534,
                          "squatted %s was touched", name);
                shm_unlink(name);
                continue;
            }
            int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0666);
            TT_ASSERT(fd >= 0, "shm_open %s: %s", name, strerror(errno));
            TT_ASSERT(fchown(fd, 65534, 65534) == 0, "fchown: %s",
                      strerror(errno));
            close(fd);
        }
    }
}

/* Does this process map a block of rank r (a window object)? */
static int maps_block_of(const char *job, int r)
{
    char want[160], line[512];
    snprintf(want, sizeof(want), "/dev/shm/telemem-%s-%d-w", job, r);
    FILE *f = fopen("/proc/self/maps", "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof(line), f))
        found = strstr(line, want) != NULL;
    if (f)
        fclose(f);
    return found;
}

static int mode_squat(int argc, char **argv)
{
    const char *job = getenv("TELEMEM_JOBID");
    int n = atoi(getenv("TELEMEM_NRANKS") ? getenv("TELEMEM_NRANKS") : "0");
    int me = atoi(getenv("TELEMEM_RANK") ? getenv("TELEMEM_RANK") : "-1");
    if (!job || geteuid() != 0) {
        tt_proc_line();
        tt_skip("needs telemem-run and root (to squat as another user)");
    }
    if (me == 0)
        squat(job, n, 1);
    tt_init(&argc, &argv, "shm_clean squat");
    void **a = calloc((size_t)tt_n, sizeof(*a));
    TT_CHECK(telemem_malloc_all(4096, a));
    for (int r = 0; r < tt_n; r++)
        TT_ASSERT(r == tt_me || maps_block_of(job, r),
                  "rank %d's block is not mapped here: the direct path was "
                  "lost to a squatted name", r);
    TT_CHECK(telemem_barrier());
    TT_CHECK(telemem_free_all(a[tt_me]));
    free(a);
    if (tt_me == 0)
        squat(job, tt_n, 0);
    tt_finalize();
    tt_log("PASS");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "squat") == 0)
        return mode_squat(argc, argv);
    tt_init(&argc, &argv, "shm_clean");
    void **a = calloc((size_t)tt_n, sizeof(*a));
    void **b = calloc((size_t)tt_n, sizeof(*b));
    TT_ASSERT(a && b, "out of memory");
    TT_CHECK(telemem_malloc_all(tt_me == 0 ? 0 : (size_t)4096 << tt_me, a));
    TT_CHECK(telemem_malloc_all(1 << 20, b));
    char v = (char)tt_me;
    for (int r = 0; r < tt_n; r++) {
        if (r != 0)
            TT_CHECK(telemem_put(r, a[r], &v, 1));
        TT_CHECK(telemem_put(r, (char *)b[r] + tt_me, &v, 1));
    }
    TT_CHECK(telemem_quiet());
    TT_CHECK(telemem_barrier());
    const char *kvs = getenv("TELEMEM_KVS");
    printf("READY %d %s\n", (int)getpid(), kvs && kvs[0] ? kvs : "-");
    fflush(stdout);
    for (;;)
        pause();
}

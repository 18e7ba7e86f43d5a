/* no_cma.c - runs a program where process_vm_readv fails with EPERM, as a
 * container's seccomp filter or Yama would make it: a filter of our own,
 * installed before exec.  With --rank=R only the process whose
 * TELEMEM_RANK is R gets it (the others can pull, it cannot).
 * Usage: no_cma [--rank=R] PROGRAM [ARGS...] */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int deny_cma(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
        perror("no_cma: seccomp");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int a = 1;
    const char *only = NULL;
    if (argc > 1 && strncmp(argv[1], "--rank=", 7) == 0)
        only = argv[a++] + 7;
    if (a >= argc) {
        fprintf(stderr, "usage: no_cma [--rank=R] PROGRAM [ARGS...]\n");
        return 2;
    }
    const char *rank = getenv("TELEMEM_RANK");
    if ((!only || (rank && strcmp(rank, only) == 0)) && deny_cma() != 0)
        return 1;
    execv(argv[a], argv + a);
    perror("no_cma: exec");
    return 127;
}

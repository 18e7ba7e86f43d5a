/* run_hosts.c - telemem-run across hosts: the -H host:slots list, which
 * rank runs where, the address ranks on other hosts use to reach the store,
 * and the remote-shell command line (--rsh) that starts such a rank. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

/* A host name that means this machine (no remote shell needed). */
static int is_local(const char *h)
{
    char me[256] = "";
    gethostname(me, sizeof(me) - 1);
    return strcmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 ||
           strcmp(h, me) == 0;
}

int run_hosts_parse(const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return -1;
    int total = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        long slots = 1;
        if (colon) {
            char *end;
            errno = 0;
            slots = strtol(colon + 1, &end, 10);
            if (errno || end == colon + 1 || *end || slots < 1 ||
                slots > MAX_RANKS) {
                free(copy);
                return -1;
            }
            *colon = '\0';
        }
        if (!*tok || strlen(tok) >= sizeof(J.hosts[0].name) ||
            J.nhosts == MAX_HOSTS) {
            free(copy);
            return -1;
        }
        run_host_t *h = &J.hosts[J.nhosts++];
        snprintf(h->name, sizeof(h->name), "%s", tok);
        h->slots = (int)slots;
        h->local = is_local(tok);
        total += (int)slots;
        if (total > MAX_RANKS) {
            free(copy);
            return -1;
        }
    }
    free(copy);
    return J.nhosts ? total : -1;
}

void run_hosts_assign(void)
{
    /* Block placement: the first host's slots get ranks 0.., and so on. */
    int r = 0;
    for (int h = 0; h < J.nhosts && r < J.n; h++)
        for (int s = 0; s < J.hosts[h].slots && r < J.n; s++)
            J.ranks[r++].host = h;
}

int run_hosts_any_remote(void)
{
    for (int h = 0; h < J.nhosts; h++)
        if (!J.hosts[h].local)
            return 1;
    return 0;
}

int run_hosts_default_addr(char *buf, size_t cap)
{
    /* The first up, non-loopback IPv4 address of this machine. */
    struct ifaddrs *ifs = NULL;
    int rc = -1;
    if (getifaddrs(&ifs) != 0)
        return -1;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
            (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
            continue;
        const struct sockaddr_in *sa = (const void *)i->ifa_addr;
        if (inet_ntop(AF_INET, &sa->sin_addr, buf, (socklen_t)cap)) {
            rc = 0;
            break;
        }
    }
    freeifaddrs(ifs);
    return rc;
}

/* Append s to buf as one POSIX-shell word in single quotes. */
static void quote(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t need = *len + 4 * strlen(s) + 4;
    if (need > *cap) {
        *cap = need * 2;
        *buf = run_xrealloc(*buf, *cap);
    }
    char *d = *buf + *len;
    if (*len)
        *d++ = ' ';
    *d++ = '\'';
    for (; *s; s++) {
        if (*s == '\'') {
            memcpy(d, "'\\''", 4);
            d += 4;
        } else {
            *d++ = *s;
        }
    }
    *d++ = '\'';
    *d = '\0';
    *len = (size_t)(d - *buf);
}

/* Variables a rank on another host must see (a remote shell starts with a
 * fresh environment). */
static int forwarded(const char *e)
{
    static const char *const prefixes[] = {
        "TELEMEM_", "UCX_", "FI_", "TT_", "ASAN_OPTIONS=", "UBSAN_OPTIONS=",
        "TSAN_OPTIONS=", "LSAN_OPTIONS=", "LD_LIBRARY_PATH=", "PATH=",
        "MALLOC_PERTURB_=",
    };
    if (!strncmp(e, "TELEMEM_RANK=", 13) || !strncmp(e, "TELEMEM_NRANKS=", 15) ||
        !strncmp(e, "TELEMEM_KVS=", 12) || !strncmp(e, "TELEMEM_JOBID=", 14) ||
        !strncmp(e, "TELEMEM_KVS_SECRET=", 19))
        return 0; /* this job's own; a secret never goes on a command line */
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (!strncmp(e, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

extern char **environ;

char **run_hosts_rsh_argv(int rank)
{
    /* The command the remote shell runs, one string:
     *   cd 'cwd' && IFS= read -r TELEMEM_KVS_SECRET &&
     *   export TELEMEM_KVS_SECRET && exec env 'TELEMEM_RANK=r' ... 'prog'
     * (the secret comes on stdin: telemem_run.c, secret_to_stdin). */
    char num[32], cwd[4096];
    size_t len = 2, cap = 3;
    char *cmd = run_xrealloc(NULL, cap);
    memcpy(cmd, "cd", 3);
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    quote(&cmd, &len, &cap, cwd);
    const char *mid = " && IFS= read -r TELEMEM_KVS_SECRET && export "
                      "TELEMEM_KVS_SECRET && exec env";
    cap = len + strlen(mid) + 1;
    cmd = run_xrealloc(cmd, cap);
    memcpy(cmd + len, mid, strlen(mid) + 1);
    len += strlen(mid);
    char var[sizeof(J.addr) + 32];
    snprintf(num, sizeof(num), "%d", rank);
    snprintf(var, sizeof(var), "TELEMEM_RANK=%s", num);
    quote(&cmd, &len, &cap, var);
    snprintf(var, sizeof(var), "TELEMEM_NRANKS=%d", J.n);
    quote(&cmd, &len, &cap, var);
    snprintf(var, sizeof(var), "TELEMEM_KVS=%s", J.addr);
    quote(&cmd, &len, &cap, var);
    snprintf(var, sizeof(var), "TELEMEM_JOBID=%s", J.jobid);
    quote(&cmd, &len, &cap, var);
    for (char **e = environ; e && *e; e++)
        if (forwarded(*e))
            quote(&cmd, &len, &cap, *e);
    quote(&cmd, &len, &cap, J.path);
    for (int i = 1; J.argv[i]; i++)
        quote(&cmd, &len, &cap, J.argv[i]);

    /* The remote-shell words, %h replaced by the host (appended when
     * there is no %h), then the command as one word. */
    const char *host = J.hosts[J.ranks[rank].host].name;
    char *rsh = strdup(J.rsh), *save = NULL;
    size_t n = 0;
    char **argv = NULL;
    int had_h = 0;
    for (char *w = strtok_r(rsh, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save)) {
        argv = run_xrealloc(argv, (n + 3) * sizeof(*argv));
        if (strcmp(w, "%h") == 0) {
            argv[n++] = strdup(host);
            had_h = 1;
        } else {
            argv[n++] = strdup(w);
        }
    }
    argv = run_xrealloc(argv, (n + 3) * sizeof(*argv));
    if (!had_h)
        argv[n++] = strdup(host);
    argv[n++] = cmd;
    argv[n] = NULL;
    free(rsh);
    return argv;
}

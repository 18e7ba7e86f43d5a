/* peers_mem.c - white-box harness for per-peer memory of the network
 * transports: opens the ofi or ucx backend as rank 0 of a job of --ranks
 * ranks (1,024 by default) whose address book is complete, contacts
 * --contact of them (8 by default, each a real forked process with its own
 * endpoint) and reports the process's RSS and heap at each step; with
 * --max-peers it checks TELEMEM_NET_MAX_PEERS's first-come-first-served
 * cap instead.
 *
 * Why simulated: 1,024 processes do not fit this machine.  What is real:
 * the transport code, its provider (libfabric / UCX), every connection and
 * buffer it makes, and the contacted peers (separate processes that receive
 * every message).  What is simulated: the ranks never contacted.  Their
 * address-book entries are real addresses (a copy of the first peer's, in
 * the provider's format) published in the bootstrap store exactly as
 * telemem-run or PMIx would; a transport that allocated anything per rank
 * at start-up would show it here.  Each peer opens its endpoint as a job of
 * its own (rank 0 of 1) because it only receives and counts.
 *
 * Output: "key value" lines and one CSV line (prefixed "csv,").  Exit 0 when
 * the peak RSS is within --max-rss MiB (and, with --max-peers, the cap held),
 * 1 otherwise, 77 when the transport is not built in. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "telemem.h"
#include "am/am.h"
#include "backends/transport.h"
#include "core/core.h"
#include "boot/boot.h"
#include "tlm_build_config.h"

#if TLM_HAVE_OFI
extern const tlm_backend_t tlm_ofi_backend;
#endif
#if TLM_HAVE_UCX
extern const tlm_backend_t tlm_ucx_backend;
#endif

#define MAX_CONTACT 64

static struct {
    const char *transport;
    const char *provider;
    int ranks, contact, msgs, max_peers;
    long max_rss_mb;
} opt = {"ofi", "tcp;ofi_rxm", 1024, 8, 64, 0, 64};

static long received;

static void usage(FILE *f)
{
    fprintf(f,
"Usage: peers_mem [options]\n"
"Open the ofi or ucx transport as rank 0 of a job of --ranks ranks, contact\n"
"--contact of them (real forked processes) with --msgs full-size messages\n"
"each, and report RSS and heap before opening, after opening and after the\n"
"contacts.  The ranks never contacted are simulated: their address-book\n"
"entries are real-format addresses in the bootstrap store.\n"
"  --transport T   ofi or ucx (default ofi; UCX_TLS picks UCX's wires)\n"
"  --provider P    libfabric provider for ofi (default tcp;ofi_rxm)\n"
"  --ranks N       job size seen by the transport (default 1024)\n"
"  --contact K     peers contacted, 1..%d (default 8)\n"
"  --msgs M        messages sent to each contacted peer (default 64)\n"
"  --max-peers X   TELEMEM_NET_MAX_PEERS for the transport: contacts past\n"
"                  X must fail with TELEMEM_ERR_UNREACHABLE (default 0)\n"
"  --max-rss MB    fail if the peak RSS exceeds MB MiB (default 64)\n"
"  -h, --help      this text\n", MAX_CONTACT);
}

static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static long heap_kb(void)
{
    struct mallinfo2 m = mallinfo2();
    return (long)((m.uordblks + m.hblkhd) / 1024);
}

static int deliver(void *arg, int src, const void *msg, size_t len)
{
    received++;
    return TELEMEM_OK;
}

static const tlm_backend_t *backend(void)
{
#if TLM_HAVE_OFI
    if (strcmp(opt.transport, "ofi") == 0)
        return &tlm_ofi_backend;
#endif
#if TLM_HAVE_UCX
    if (strcmp(opt.transport, "ucx") == 0)
        return &tlm_ucx_backend;
#endif
    return NULL;
}

static const char *key_prefix(void)
{
    return strcmp(opt.transport, "ofi") == 0 ? "ofi" : "ucx";
}

static tlm_boot_t *singleton(void)
{
    tlm_boot_params_t bp = {.rank = -1, .size = -1, .kvs_addr = "",
                            .jobid = "", .mode = "singleton"};
    tlm_boot_t *b = NULL;
    return tlm_boot_open(&bp, &b) == TELEMEM_OK ? b : NULL;
}

static int open_tp(tlm_boot_t *b, int rank, int size, bool *same,
                   tlm_transport_t **tp)
{
    /* The configuration's transport settings, as core would pass them. */
    static tlm_config_t cfg;
    if (tlm_config_init(&cfg) != TELEMEM_OK)
        return TELEMEM_ERR_CONFIG;
    cfg.OFI_PROVIDER = opt.provider;
    tlm_transport_params_t p = {
        .rank = rank, .size = size, .boot = b,
        .jobid = tlm_boot_jobid(b), .same_node = same, .config = &cfg,
        .net_max_peers = opt.max_peers, .deliver = deliver,
    };
    int rc = backend()->check(&p);
    rc = rc == TELEMEM_OK ? backend()->open(&p, tp) : rc;
    tlm_config_fini();
    return rc;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *c = buf;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
    char *c = buf;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* A contacted peer: its own endpoint (rank 0 of a job of 1: it only
 * receives), its address to the parent, then it counts messages and
 * reports every new total until the parent closes the pipe. */
static int peer_main(int to_parent, int from_parent)
{
    tlm_boot_t *b = singleton();
    bool same = true;
    tlm_transport_t *tp = NULL;
    if (!b || open_tp(b, 0, 1, &same, &tp) != TELEMEM_OK)
        return 1;
    char key[32], addr[4096];
    size_t len = 0;
    snprintf(key, sizeof(key), "%s.0", key_prefix());
    if (tlm_boot_get(b, key, addr, sizeof(addr), &len) != TELEMEM_OK)
        return 1;
    uint32_t l32 = (uint32_t)len;
    if (write_all(to_parent, &l32, 4) || write_all(to_parent, addr, len))
        return 1;
    long reported = 0;
    for (;;) {
        tlm_transport_progress(tp, 64);
        if (received != reported) {
            reported = received;
            if (write_all(to_parent, &reported, sizeof(reported)))
                break;
        }
        struct pollfd pf = {from_parent, POLLIN, 0};
        if (poll(&pf, 1, 0) > 0)
            break; /* EOF: the parent is done */
    }
    tlm_transport_close(tp);
    tlm_boot_close(b);
    return 0;
}

static void report(const char *what, long rss, long heap)
{
    printf("%-28s rss %7ld KiB  heap %7ld KiB\n", what, rss, heap);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--transport") && v) {
            opt.transport = v, i++;
        } else if (!strcmp(a, "--provider") && v) {
            opt.provider = v, i++;
        } else if (!strcmp(a, "--ranks") && v) {
            opt.ranks = atoi(v), i++;
        } else if (!strcmp(a, "--contact") && v) {
            opt.contact = atoi(v), i++;
        } else if (!strcmp(a, "--msgs") && v) {
            opt.msgs = atoi(v), i++;
        } else if (!strcmp(a, "--max-peers") && v) {
            opt.max_peers = atoi(v), i++;
        } else if (!strcmp(a, "--max-rss") && v) {
            opt.max_rss_mb = atol(v), i++;
        } else {
            fprintf(stderr, "peers_mem: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (opt.contact < 1 || opt.contact > MAX_CONTACT ||
        opt.ranks <= opt.contact || opt.msgs < 1 || opt.max_peers < 0) {
        fprintf(stderr, "peers_mem: need 1 <= contact <= %d, ranks > "
                "contact, msgs >= 1, max-peers >= 0\n", MAX_CONTACT);
        return 2;
    }
    if (!backend()) {
        printf("SKIP: transport %s is not built in\n", opt.transport);
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* Peers first: their addresses go into rank 0's address book. */
    int up[MAX_CONTACT], down[MAX_CONTACT];
    pid_t pid[MAX_CONTACT];
    for (int k = 0; k < opt.contact; k++) {
        int a[2], c[2];
        if (pipe(a) || pipe(c))
            return 1;
        pid[k] = fork();
        if (pid[k] == 0) {
            close(a[0]);
            close(c[1]);
            for (int j = 0; j < k; j++) {
                close(up[j]);
                close(down[j]);
            }
            _exit(peer_main(a[1], c[0]));
        }
        close(a[1]);
        close(c[0]);
        up[k] = a[0];
        down[k] = c[1];
    }
    long rss0 = status_kb("VmRSS"), heap0 = heap_kb();
    tlm_boot_t *b = singleton();
    if (!b)
        return 1;
    char key[32];
    static char addr[MAX_CONTACT][4096];
    uint32_t alen[MAX_CONTACT];
    for (int k = 0; k < opt.contact; k++) {
        if (read_all(up[k], &alen[k], 4) || alen[k] > sizeof(addr[k]) ||
            read_all(up[k], addr[k], alen[k])) {
            fprintf(stderr, "peers_mem: peer %d did not start\n", k + 1);
            return 1;
        }
    }
    /* The address book: ranks 1..K are the peers, every other rank a copy
     * of peer 1's address (never contacted). */
    for (int r = 1; r < opt.ranks; r++) {
        int k = r <= opt.contact ? r - 1 : 0;
        snprintf(key, sizeof(key), "%s.%d", key_prefix(), r);
        if (tlm_boot_put(b, key, addr[k], alen[k]) != TELEMEM_OK)
            return 1;
    }
    long rss1 = status_kb("VmRSS"), heap1 = heap_kb();
    bool *same = calloc((size_t)opt.ranks, sizeof(bool));
    same[0] = true;
    tlm_transport_t *tp = NULL;
    int rc = open_tp(b, 0, opt.ranks, same, &tp);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "peers_mem: open %s: %s\n", opt.transport,
                telemem_strerror(rc));
        return 1;
    }
    /* The AM layer's per-rank table, as telemem_initialize makes it. */
    rc = tlm_am_init(0, opt.ranks);
    long rss2 = status_kb("VmRSS"), heap2 = heap_kb();

    size_t payload = tp->max_msg - 8;
    char *buf = malloc(payload);
    memset(buf, 0x5a, payload);
    uint64_t hdr = 0;
    struct iovec iov = {buf, payload};
    int failed = 0, bad = 0;
    time_t give_up = time(NULL) + 90;
    long got[MAX_CONTACT] = {0};
    for (int k = 0; k < opt.contact; k++) {
        int peer = k + 1;
        bool over = opt.max_peers && peer > opt.max_peers;
        for (int m = 0; m < opt.msgs; m++) {
            do {
                rc = tlm_transport_send(tp, peer, &hdr, sizeof(hdr), &iov, 1);
                if (rc == TELEMEM_ERR_AGAIN)
                    tlm_transport_progress(tp, 64);
            } while (rc == TELEMEM_ERR_AGAIN && time(NULL) <= give_up);
            if (rc == TELEMEM_ERR_AGAIN) {
                fprintf(stderr, "peers_mem: stuck: no send buffer for "
                        "peer %d (message %d) after 90 s\n", peer, m);
                bad++;
                break;
            }
            if (rc == TELEMEM_ERR_UNREACHABLE && over) {
                failed++;
                break;
            }
            if (rc != TELEMEM_OK) {
                fprintf(stderr, "peers_mem: send to peer %d: %s\n", peer,
                        telemem_strerror(rc));
                bad++;
                break;
            }
        }
        if (rc == TELEMEM_OK && over) {
            fprintf(stderr, "peers_mem: peer %d is past the cap of %d but "
                    "was contacted\n", peer, opt.max_peers);
            bad++;
        }
    }
    /* Wait until every reachable peer has every message (a stuck run
     * says where it is stuck rather than wait for meson's timeout). */
    for (int k = 0; k < opt.contact && !bad; k++) {
        bool over = opt.max_peers && k + 1 > opt.max_peers;
        while (!over && got[k] < opt.msgs) {
            if (time(NULL) > give_up) {
                fprintf(stderr, "peers_mem: stuck: peer %d has %ld of %d "
                        "messages after 90 s\n", k + 1, got[k], opt.msgs);
                bad++;
                break;
            }
            tlm_transport_progress(tp, 64);
            struct pollfd pf = {up[k], POLLIN, 0};
            if (poll(&pf, 1, 1) > 0 &&
                read_all(up[k], &got[k], sizeof(got[k]))) {
                fprintf(stderr, "peers_mem: peer %d died\n", k + 1);
                bad++;
                break;
            }
        }
    }
    for (int i = 0; i < 100; i++)
        tlm_transport_progress(tp, 64);
    long rss3 = status_kb("VmRSS"), heap3 = heap_kb();
    long hwm = status_kb("VmHWM");

    printf("transport %s%s%s, %d ranks, %d contacted, %d messages of %zu "
           "bytes each\n", opt.transport,
           strcmp(opt.transport, "ofi") ? "" : " provider ",
           strcmp(opt.transport, "ofi") ? "" : opt.provider, opt.ranks,
           opt.contact, opt.msgs, payload + 8);
    report("before open (library only)", rss0, heap0);
    report("address book in the store", rss1, heap1);
    report("transport open", rss2, heap2);
    report("after the contacts", rss3, heap3);
    printf("peak rss %ld KiB; per-rank tables: am %zu B, core %zu B per "
           "rank\n", hwm, sizeof(tlm_am_peer_t), sizeof(tlm_core_peer_t));
    printf("csv,transport,provider,ranks,contacted,rss_before_kb,"
           "rss_open_kb,rss_after_kb,peak_rss_kb,heap_open_kb,"
           "heap_after_kb\n");
    printf("csv,%s,%s,%d,%d,%ld,%ld,%ld,%ld,%ld,%ld\n", opt.transport,
           strcmp(opt.transport, "ofi") ? getenv("UCX_TLS") ? getenv("UCX_TLS")
                                                             : "default"
                                        : opt.provider,
           opt.ranks, opt.contact, rss0, rss2, rss3, hwm, heap2 - heap1,
           heap3 - heap1);
    if (opt.max_peers) {
        int want = opt.contact > opt.max_peers ? opt.contact - opt.max_peers
                                               : 0;
        printf("cap %d: %d contacts refused (expected %d)\n", opt.max_peers,
               failed, want);
        if (failed != want)
            bad++;
    }

    for (int k = 0; k < opt.contact; k++)
        close(down[k]);
    tlm_am_fini(); /* no transports were added to it */
    tlm_transport_close(tp);
    tlm_boot_close(b);
    for (int k = 0; k < opt.contact; k++) {
        int st;
        waitpid(pid[k], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "peers_mem: peer %d exited badly\n", k + 1);
            bad++;
        }
    }
    free(same);
    free(buf);
    if (hwm > opt.max_rss_mb * 1024) {
        printf("FAIL: peak rss %ld KiB over %ld MiB\n", hwm, opt.max_rss_mb);
        bad++;
    }
    return bad ? 1 : 0;
}

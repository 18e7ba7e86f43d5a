/* backend_telemem.c - the Telemem side of the NetPIPE benchmark
 * (telemem-netpipe): netpipe_backend.h over telemem.h, and --path, which
 * sets TELEMEM_DIRECT before telemem_initialize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <telemem.h>

#include "netpipe_backend.h"

static const struct nb_info info = {
    .prog = "telemem-netpipe",
    .impl = "telemem",
    .launch = "telemem-run -n 2",
    .two_sided = 0,
    .poll_default = 1,
    .has_path = 1,
    .ordered = 1, /* telemem.h: a put lands in increasing address order */
};

static void check_rc(int rc, const char *what, int line)
{
    if (rc < 0) {
        fprintf(stderr, "telemem-netpipe: rank %d: %s failed "
                "(backend_telemem.c:%d): %s (%s)\n", telemem_rank(), what,
                line, telemem_strerror(rc), telemem_status_name(rc));
        fflush(stderr);
        exit(1);
    }
}
#define CHECK(call) check_rc((call), #call, __LINE__)

const struct nb_info *nb_info(void)
{
    return &info;
}

int nb_env_rank(void)
{
    const char *r = getenv("TELEMEM_RANK");
    if (!r || !*r)
        r = getenv("PMIX_RANK");
    return r && *r ? atoi(r) : -1;
}

static char g_path[32] = "am";

/* The value telemem_config_string() reports for @p name ("TELEMEM_X"),
 * up to the first blank, or NULL when the library has no such setting. */
static int config_value(const char *name, char *out, size_t len)
{
    const char *cfg = telemem_config_string();
    size_t nl = strlen(name);
    while (cfg && *cfg) {
        size_t line = strcspn(cfg, "\n");
        if (line > nl + 3 && !strncmp(cfg, name, nl) &&
            !strncmp(cfg + nl, " = ", 3)) {
            const char *v = cfg + nl + 3;
            size_t vl = strcspn(v, " \n");
            snprintf(out, len, "%.*s", (int)vl, v);
            return 1;
        }
        cfg += line + (cfg[line] == '\n');
    }
    return 0;
}

void nb_init(int *argc, char ***argv, const char *path)
{
    /* Only telemem_initialize reads the environment (docs/style.md 6). */
    if (path && setenv("TELEMEM_DIRECT", path, 1) != 0) {
        perror("telemem-netpipe: setenv(TELEMEM_DIRECT)");
        exit(1);
    }
    int rc = telemem_initialize(argc, argv);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "telemem-netpipe: telemem_initialize failed: %s "
                "(%s)\n", telemem_strerror(rc), telemem_status_name(rc));
        exit(1);
    }
    /* A library without a direct path has no TELEMEM_DIRECT: every put
     * then travels as active messages. */
    if (!config_value("TELEMEM_DIRECT", g_path, sizeof g_path) ||
        !strcmp(g_path, "never"))
        snprintf(g_path, sizeof g_path, "am");
    else if (!strcmp(g_path, "always"))
        snprintf(g_path, sizeof g_path, "direct");
}

void nb_finalize(void)
{
    CHECK(telemem_finalize());
}

int nb_rank(void)
{
    return telemem_rank();
}

int nb_nranks(void)
{
    return telemem_nranks();
}

void nb_abort(int code)
{
    exit(code);
}

void nb_malloc_all(size_t bytes, void **bases)
{
    CHECK(telemem_malloc_all(bytes, bases));
}

void nb_free_all(void *mine)
{
    CHECK(telemem_free_all(mine));
}

void nb_barrier(void)
{
    CHECK(telemem_barrier());
}

void nb_broadcast(void *buf, size_t bytes, int root)
{
    CHECK(telemem_broadcast(buf, bytes, root));
}

void nb_allgather(const void *in, void *out, size_t bytes_per_rank)
{
    CHECK(telemem_allgather(in, out, bytes_per_rank));
}

void nb_put(int peer, void *remote, const void *local, size_t n)
{
    CHECK(telemem_put(peer, remote, local, n));
}

void nb_recv(int peer, void *local, size_t n)
{
    (void)peer;
    (void)local;
    (void)n;
    fprintf(stderr, "telemem-netpipe: nb_recv called on a one-sided "
            "backend\n");
    exit(1);
}

void nb_quiet(void)
{
    CHECK(telemem_quiet());
}

void nb_fence(int peer)
{
    CHECK(telemem_fence(peer));
}

void nb_poll(void)
{
    CHECK(telemem_poll());
}

const char *nb_path(void)
{
    return g_path;
}

void nb_print_header(FILE *out)
{
    char v[32];
    fprintf(out, "# library = Telemem %s\n", telemem_version());
    fprintf(out, "# transport = %s\n", telemem_transport_name(1));
    if (config_value("TELEMEM_DIRECT", v, sizeof v))
        fprintf(out, "# path = %s (TELEMEM_DIRECT)\n", v);
    else
        fprintf(out, "# path = am (this library has no TELEMEM_DIRECT: "
                "every put travels as active messages)\n");
    fprintf(out, "# config:\n");
    const char *cfg = telemem_config_string();
    while (cfg && *cfg) {
        size_t len = strcspn(cfg, "\n");
        fprintf(out, "#   %.*s\n", (int)len, cfg);
        cfg += len + (cfg[len] == '\n');
    }
}

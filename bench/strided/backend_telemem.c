/* backend_telemem.c - the Telemem side of the strided benchmark
 * (telemem-strided): strided_backend.h over telemem.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <telemem.h>

#include "strided_backend.h"

static void check_rc(int rc, const char *what, int line)
{
    if (rc < 0) {
        fprintf(stderr, "telemem-strided: rank %d: %s failed "
                "(backend_telemem.c:%d): %s (%s)\n", telemem_rank(), what,
                line, telemem_strerror(rc), telemem_status_name(rc));
        fflush(stderr);
        exit(1);
    }
}
#define CHECK(call) check_rc((call), #call, __LINE__)

const char *sb_prog(void)
{
    return "telemem-strided";
}

const char *sb_label(void)
{
    return "telemem";
}

int sb_env_rank(void)
{
    const char *r = getenv("TELEMEM_RANK");
    return r && *r ? atoi(r) : -1;
}

void sb_init(int *argc, char ***argv)
{
    CHECK(telemem_initialize(argc, argv));
}

void sb_finalize(void)
{
    CHECK(telemem_finalize());
}

int sb_rank(void)
{
    return telemem_rank();
}

int sb_nranks(void)
{
    return telemem_nranks();
}

void sb_malloc_all(size_t bytes, void **bases)
{
    CHECK(telemem_malloc_all(bytes, bases));
}

void sb_free_all(void *mine)
{
    CHECK(telemem_free_all(mine));
}

void sb_barrier(void)
{
    CHECK(telemem_barrier());
}

void sb_broadcast(void *buf, size_t bytes, int root)
{
    CHECK(telemem_broadcast(buf, bytes, root));
}

void sb_allgather(const void *in, void *out, size_t bytes_per_rank)
{
    CHECK(telemem_allgather(in, out, bytes_per_rank));
}

void sb_put_strided(int rank, void *remote, const size_t *remote_strides,
                    const void *local, const size_t *local_strides,
                    const size_t *count, int levels)
{
    CHECK(telemem_put_strided(rank, remote, remote_strides, local,
                              local_strides, count, levels));
    CHECK(telemem_fence(rank));
}

void sb_get_strided(int rank, void *local, const size_t *local_strides,
                    const void *remote, const size_t *remote_strides,
                    const size_t *count, int levels)
{
    CHECK(telemem_get_strided(rank, local, local_strides, remote,
                              remote_strides, count, levels));
}

void sb_print_header(FILE *out)
{
    fprintf(out, "# library = Telemem %s\n", telemem_version());
    fprintf(out, "# transport = %s\n", telemem_transport_name(1));
    fprintf(out, "# completion = telemem_put_strided + telemem_fence; "
            "telemem_get_strided (blocking)\n");
    fprintf(out, "# config:\n");
    const char *cfg = telemem_config_string();
    while (cfg && *cfg) {
        size_t len = strcspn(cfg, "\n");
        fprintf(out, "#   %.*s\n", (int)len, cfg);
        cfg += len;
        if (*cfg == '\n')
            cfg++;
    }
}

/* shm_node.c - the shm transport's node area: the memory core lays its
 * node-level collectives out in (transport.h, node_base; docs/coll.md).
 * One POSIX shared-memory object per node,
 * /telemem-<jobid>-<rank>-node-<16 random hex digits>, created (O_EXCL,
 * mode 600) by the node's lowest rank, published in the launcher's store,
 * mapped by the node's other ranks (only if it is this user's mode-600
 * object of the expected size) and unlinked once all have mapped it, as
 * the transport's own segments are (docs/shm.md).  Its pages are the
 * kernel's zero pages until a rank touches them. */
#define _GNU_SOURCE
#define TLM_LOG_SUBSYS "shm"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "telemem.h"
#include "backends/shm/shm_node.h"
#include "util/log.h"
#include "util/util.h"

/* The store's key of the node area led by rank. */
static void node_key(char *buf, size_t n, int rank)
{
    snprintf(buf, n, "shm.node.%d", rank);
}

static int open_new(const tlm_transport_params_t *p, tlm_shm_node_t *nd)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        char rnd[17];
        if (tlm_util_random_hex(rnd, 16) != 0) {
            tlm_error("getrandom: %s", strerror(errno));
            return -1;
        }
        snprintf(nd->name, sizeof(nd->name), "/telemem-%s-%d-node-%s",
                 p->jobid, p->rank, rnd);
        int fd = shm_open(nd->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
        tlm_warn("/dev/shm%s exists already (not created by this job): "
                 "taking another name", nd->name);
    }
    tlm_error("shm_open(%s): %s", nd->name, strerror(errno));
    nd->name[0] = '\0';
    return -1;
}

int tlm_shm_node_create(const tlm_transport_params_t *p, tlm_shm_node_t *nd)
{
    int fd = open_new(p, nd);
    if (fd < 0)
        return TELEMEM_ERR_TRANSPORT;
    int rc = TELEMEM_OK;
    if (ftruncate(fd, (off_t)p->node_bytes) != 0) {
        tlm_error("ftruncate(%s, %zu): %s", nd->name, p->node_bytes,
                  strerror(errno));
        rc = TELEMEM_ERR_NO_MEMORY;
    }
    void *base = rc == TELEMEM_OK
                     ? mmap(NULL, p->node_bytes, PROT_READ | PROT_WRITE,
                            MAP_SHARED, fd, 0)
                     : MAP_FAILED;
    close(fd);
    if (rc == TELEMEM_OK && base == MAP_FAILED) {
        tlm_error("mmap(%s, %zu): %s", nd->name, p->node_bytes,
                  strerror(errno));
        rc = TELEMEM_ERR_NO_MEMORY;
    }
    if (rc == TELEMEM_OK) {
        nd->base = base;
        nd->len = p->node_bytes;
        char key[32];
        node_key(key, sizeof(key), p->rank);
        rc = tlm_boot_put(p->boot, key, nd->name, strlen(nd->name) + 1);
    }
    return rc;
}

int tlm_shm_node_private(const tlm_transport_params_t *p,
                         tlm_shm_node_t *nd)
{
    void *base = mmap(NULL, p->node_bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        tlm_error("mmap(%zu bytes): %s", p->node_bytes, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    nd->base = base;
    nd->len = p->node_bytes;
    return TELEMEM_OK;
}

int tlm_shm_node_map(const tlm_transport_params_t *p, int leader,
                     tlm_shm_node_t *nd)
{
    char name[128], key[32];
    size_t len;
    node_key(key, sizeof(key), leader);
    int rc = tlm_boot_get(p->boot, key, name, sizeof(name), &len);
    if (rc != TELEMEM_OK || len < 2 || name[len - 1] != '\0' ||
        name[0] != '/' || strchr(name + 1, '/')) {
        tlm_error("rank %d published no usable node area name (%s)", leader,
                  telemem_strerror(rc));
        return rc != TELEMEM_OK ? rc : TELEMEM_ERR_TRANSPORT;
    }
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
    if (fd < 0) {
        tlm_error("shm_open(%s) of rank %d: %s", name, leader,
                  strerror(errno));
        return TELEMEM_ERR_TRANSPORT;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size != p->node_bytes ||
        sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        tlm_error("node area %s of rank %d is not this user's mode-600 "
                  "object of %zu bytes: refused (mixed Telemem versions or "
                  "settings?)", name, leader, p->node_bytes);
        close(fd);
        return TELEMEM_ERR_TRANSPORT;
    }
    void *base = mmap(NULL, p->node_bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        tlm_error("mmap(%s): %s", name, strerror(errno));
        return TELEMEM_ERR_NO_MEMORY;
    }
    nd->base = base;
    nd->len = p->node_bytes;
    return TELEMEM_OK;
}

void tlm_shm_node_unlink(tlm_shm_node_t *nd)
{
    if (nd->name[0]) {
        shm_unlink(nd->name);
        nd->name[0] = '\0';
    }
}

void tlm_shm_node_unmap(tlm_shm_node_t *nd)
{
    tlm_shm_node_unlink(nd);
    if (nd->base)
        munmap(nd->base, nd->len);
    nd->base = NULL;
}

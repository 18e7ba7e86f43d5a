/* core_init.c - the runtime: initialize/finalize, ranks, node detection and
 * transport choice, telemem_poll, telemem_rank_alive, and the bounded
 * polling wait every blocking call uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_am_api.h"
#include "core/core_direct.h"
#include "core/core_engine.h"
#include "core/core_region.h"
#include "tlm_build_config.h"

tlm_core_t tlm_core;

const char *telemem_version(void)
{
    return TLM_VERSION;
}

int telemem_rank(void)
{
    return tlm_core.initialized ? tlm_core.rank : TELEMEM_ERR_NOT_INITIALIZED;
}

int telemem_nranks(void)
{
    return tlm_core.initialized ? tlm_core.nranks
                                : TELEMEM_ERR_NOT_INITIALIZED;
}

const char *telemem_transport_name(int rank)
{
    if (!tlm_core.initialized || rank < 0 || rank >= tlm_core.nranks ||
        !tlm_am.peers[rank].tp)
        return "none";
    return tlm_am.peers[rank].tp->name;
}

const char *telemem_config_string(void)
{
    return tlm_core.initialized ? tlm_config_string() : "";
}

/* ---- waiting (core_wait.c) ---------------------------------------------- */

int telemem_poll(void)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    return tlm_core_progress();
}

int telemem_wait_poll(telemem_wait_t *w)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!w || w->rank < -1 || w->rank >= tlm_core.nranks) {
        tlm_error("wait_poll: %s", !w ? "w is NULL" : "rank out of range");
        return TELEMEM_ERR_INVALID_ARG;
    }
    return tlm_core_wait_user_step(w);
}

/* No lock: the wake-up is atomics and eventfd writes (core_wait.c). */
int telemem_wait_wake(void)
{
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    tlm_core_wait_notify();
    return TELEMEM_OK;
}

int telemem_rank_alive(int rank)
{
    TLM_API_GUARD();
    if (!tlm_core.initialized)
        return TELEMEM_ERR_NOT_INITIALIZED;
    int rc = tlm_core_check_rank("rank_alive", rank);
    if (rc != TELEMEM_OK)
        return rc;
    if (rank == tlm_core.rank)
        return TELEMEM_OK;
    return !tlm_core.peers[rank].dead && tlm_am_peer_alive(rank) == TELEMEM_OK
               ? TELEMEM_OK
               : TELEMEM_ERR_PEER_DEAD;
}

/* ---- start-up ------------------------------------------------------------- */

/* An identifier of this node: hostname, the kernel's boot id and the
 * network namespace (processes in different network namespaces, as in
 * containers or the multi-host tests, count as different nodes). */
static void host_id(char *buf, size_t n)
{
    char host[256] = "";
    char boot[64] = "";
    gethostname(host, sizeof(host) - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof(boot), f))
            boot[0] = '\0';
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    char ns[64] = "";
    ssize_t k = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
    ns[k > 0 ? k : 0] = '\0';
    snprintf(buf, n, "%s/%s/%s", host, boot, ns);
}

/* A rank's host id and its position, sorted by id (node_leaders). */
typedef struct {
    uint64_t hash;
    int rank;
} host_key_t;

static int cmp_host(const void *a, const void *b)
{
    const host_key_t *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

/* tlm_core.node_leader from the ranks' host ids (hashed: keys[r] is rank
 * r's); every rank of this node (same[]) gets this node's lowest rank,
 * whatever the hashes say. */
static int node_leaders(host_key_t *keys, const bool *same)
{
    int n = tlm_core.nranks;
    tlm_core.node_leader = malloc((size_t)n * sizeof(int));
    if (!tlm_core.node_leader)
        return TELEMEM_ERR_NO_MEMORY;
    qsort(keys, (size_t)n, sizeof(*keys), cmp_host);
    for (int i = 0, lead = 0; i < n; i++) {
        if (i == 0 || keys[i].hash != keys[i - 1].hash)
            lead = keys[i].rank;
        tlm_core.node_leader[keys[i].rank] = lead;
    }
    int mine = tlm_core.rank;
    for (int r = 0; r < n; r++)
        if (same[r]) {
            mine = r;
            break;
        }
    for (int r = 0; r < n; r++)
        if (same[r])
            tlm_core.node_leader[r] = mine;
    return TELEMEM_OK;
}

/* Which ranks share this node (same host, boot and network namespace),
 * each node's lowest rank (tlm_core.node_leader), and whether any rank of
 * the job may use the direct path (tlm_core.job_direct): each rank
 * publishes "<host id>#<0|1>", 1 when its own setting (direct) allows the
 * direct path. */
static int find_same_node(bool *same, bool direct)
{
    char me[400], other[400], key[64];
    size_t len;
    int rc;
    host_key_t *keys = malloc((size_t)tlm_core.nranks * sizeof(*keys));
    if (!keys)
        return TELEMEM_ERR_NO_MEMORY;
    host_id(me, sizeof(me) - 2);
    size_t hl = strlen(me);
    snprintf(me + hl, sizeof(me) - hl, "#%d", direct);
    snprintf(key, sizeof(key), "host.%d", tlm_core.rank);
    rc = tlm_boot_put(tlm_core.boot, key, me, strlen(me) + 1);
    if (rc == TELEMEM_OK)
        rc = tlm_boot_fence(tlm_core.boot);
    for (int r = 0; rc == TELEMEM_OK && r < tlm_core.nranks; r++) {
        snprintf(key, sizeof(key), "host.%d", r);
        rc = tlm_boot_get(tlm_core.boot, key, other, sizeof(other), &len);
        const char *flag = rc == TELEMEM_OK ? strrchr(other, '#') : NULL;
        same[r] = flag && (size_t)(flag - other) == hl &&
                  strncmp(me, other, hl) == 0;
        if (flag && strcmp(flag, "#1") == 0)
            tlm_core.job_direct = true;
        keys[r] = (host_key_t){
            fnv1a(other, flag ? (size_t)(flag - other) : strlen(other)), r};
    }
    if (rc == TELEMEM_OK)
        rc = node_leaders(keys, same);
    free(keys);
    return rc;
}

/* Transport settings from the configuration; the job part is filled once
 * the job is joined. */
static tlm_transport_params_t transport_params(void)
{
    tlm_transport_params_t p = {
        .config = &tlm_core.cfg,
        .profile = &tlm_core.profile,
        .direct = strcmp(tlm_core.cfg.DIRECT, "never") != 0,
        .direct_cma = tlm_core.cfg.DIRECT_CMA,
        .reg_cache_max = tlm_core.cfg.REG_CACHE_MAX,
        .net_max_peers = tlm_core.cfg.NET_MAX_PEERS,
        .deliver = tlm_am_deliver,
        .deliver_arg = NULL,
        .place = tlm_am_place,
        .placed = tlm_am_placed,
    };
    return p;
}

static int open_transports(void)
{
    int n = tlm_core.nranks;
    bool *same = calloc((size_t)n, sizeof(bool));
    int rc = same ? TELEMEM_OK : TELEMEM_ERR_NO_MEMORY;
    tlm_transport_params_t p = transport_params();
    tlm_core.job_direct = p.direct;
    if (rc == TELEMEM_OK && n > 1) {
        rc = find_same_node(same, p.direct);
    } else if (rc == TELEMEM_OK) {
        same[0] = true;
        tlm_core.node_leader = calloc(1, sizeof(int));
        if (!tlm_core.node_leader)
            rc = TELEMEM_ERR_NO_MEMORY;
    }
    int nlocal = 0;
    for (int r = 0; same && r < n; r++)
        nlocal += same[r];
    p.node_bytes = tlm_core_coll_node_bytes(nlocal);
    p.rank = tlm_core.rank;
    p.size = n;
    p.boot = tlm_core.boot;
    p.jobid = tlm_boot_jobid(tlm_core.boot);
    p.same_node = same;
    if (rc == TELEMEM_OK)
        rc = tlm_backend_open_all(tlm_core.cfg.TRANSPORT, &p,
                                  tlm_am_add_transport);
    if (rc == TELEMEM_OK)
        rc = tlm_am_check_reach();
    free(same);
    if (rc == TELEMEM_OK)
        rc = tlm_core_wait_setup(tlm_core.cfg.WAIT, nlocal);
    return rc;
}

/* This process has been a rank of a launched job: it does not join
 * again (telemem.h, telemem_initialize). */
static bool left_launched_job;

static void teardown(void)
{
    if (tlm_core.boot && tlm_boot_launched(tlm_core.boot))
        left_launched_job = true;
    tlm_core_am_fini();
    tlm_core_direct_fini();
    tlm_core_vector_fini();
    tlm_core_mutex_fini();
    tlm_core_coll_fini();
    tlm_core_mem_fini();
    tlm_am_fini();
    tlm_core_ops_fini();
    tlm_core_region_fini();
    free(tlm_core.peers);
    free(tlm_core.node_leader);
    if (tlm_core.boot)
        tlm_boot_close(tlm_core.boot);
    tlm_core_wait_fini();
    tlm_config_fini();
    tlm_util_profile_free(&tlm_core.profile);
    memset(&tlm_core, 0, sizeof(tlm_core));
}

static int initialize(int level, bool progress_thread);

/* The calibration profile, read here once (path: TELEMEM_DIRECT_PROFILE or
 * its default), and every setting checked. */
static int check_settings(const tlm_config_t *c)
{
    char path[512];
    if (!tlm_config_profile_path(c, path, sizeof(path)))
        path[0] = '\0';
    if (tlm_util_profile_load(&tlm_core.profile, path) < 0)
        return TELEMEM_ERR_NO_MEMORY;
    tlm_transport_params_t tp = transport_params();
    int rc = tlm_backend_check_config(c->TRANSPORT, &tp);
    if (rc == TELEMEM_OK)
        rc = tlm_core_direct_check_config(c);
    if (rc == TELEMEM_OK)
        rc = tlm_core_coll_check_config(c);
    if (rc == TELEMEM_OK)
        rc = tlm_core_wait_check_config(c->WAIT);
    if (rc == TELEMEM_OK)
        rc = tlm_core_thread_check_config(c);
    return rc;
}

int telemem_initialize(int *argc, char ***argv)
{
    return initialize(TELEMEM_THREAD_SINGLE, false);
}

int telemem_initialize_thread(int *argc, char ***argv, int required,
                              int *provided)
{
    int level = required & ~TELEMEM_INIT_PROGRESS_THREAD;
    if (!provided || level < TELEMEM_THREAD_SINGLE ||
        level > TELEMEM_THREAD_MULTIPLE) {
        tlm_error("initialize_thread: %s", !provided
                  ? "provided is NULL" : "unknown thread level");
        return TELEMEM_ERR_INVALID_ARG;
    }
    int rc = initialize(level,
                        (required & TELEMEM_INIT_PROGRESS_THREAD) != 0);
    if (rc == TELEMEM_OK)
        *provided = level;
    return rc;
}

/* Threads: the lock under THREAD_MULTIPLE; with a progress thread beside
 * one application thread at a time, the biased guard (core.h) where
 * membarrier() allows, else the lock.  The guard is held until initialize
 * returns (the progress thread starts before). */
static int start_threads(int level, const tlm_config_t *c)
{
    if (level != TELEMEM_THREAD_MULTIPLE && !c->PROGRESS_THREAD)
        return TELEMEM_OK;
    tlm_guard_t g = {TLM_GUARD_LOCK};
    if (level != TELEMEM_THREAD_MULTIPLE && tlm_core_bias_setup()) {
        tlm_core.biased = true;
        g.held = TLM_GUARD_BIAS;
        tlm_core_bias_enter();
    } else {
        tlm_core.locking = true;
        tlm_core_lock_slow();
    }
    int rc = c->PROGRESS_THREAD ? tlm_core_thread_start() : TELEMEM_OK;
    tlm_guard_leave(&g);
    if (rc != TELEMEM_OK)
        tlm_core.locking = tlm_core.biased = false;
    tlm_core.guard = tlm_core.locking  ? TLM_GUARD_LOCK
                     : tlm_core.biased ? TLM_GUARD_BIAS
                                       : TLM_GUARD_NONE;
    return rc;
}

static int initialize(int level, bool progress_thread)
{
    if (tlm_core.initialized)
        return TELEMEM_ERR_ALREADY_INITIALIZED;
    if (left_launched_job) {
        tlm_error("initialize: this process has left its job (telemem_"
                  "finalize); a process started by a launcher joins its job "
                  "once");
        return TELEMEM_ERR_STATE;
    }
    memset(&tlm_core, 0, sizeof(tlm_core));
    int rc = tlm_config_init(&tlm_core.cfg);
    if (rc != TELEMEM_OK) {
        tlm_config_fini();
        return rc;
    }
    tlm_config_t *c = &tlm_core.cfg;
    if (progress_thread)
        c->PROGRESS_THREAD = true;
    tlm_core.thread_level = level;
    tlm_util_log_init(c->LOG_LEVEL, c->LOG_FILE, c->LOG_FILTER);
    /* Every setting is checked before the job is joined: a configuration
     * error leaves nothing behind, and initialize may be called again. */
    rc = check_settings(c);
    if (rc != TELEMEM_OK) {
        tlm_util_profile_free(&tlm_core.profile);
        tlm_config_fini();
        return rc;
    }
    tlm_boot_params_t bp = {
        .rank = (int)c->RANK,
        .size = (int)c->NRANKS,
        .kvs_addr = c->KVS,
        .jobid = c->JOBID,
        .secret = c->KVS_SECRET,
        .timeout = c->TIMEOUT,
        .mode = c->BOOTSTRAP,
        .env = tlm_config_launcher_env,
    };
    rc = tlm_boot_open(&bp, &tlm_core.boot);
    if (rc != TELEMEM_OK) {
        tlm_core.boot = NULL;
        goto err;
    }
    tlm_core.rank = tlm_boot_rank(tlm_core.boot);
    tlm_core.nranks = tlm_boot_size(tlm_core.boot);
    tlm_util_log_set_rank(tlm_core.rank);
    tlm_core.peers = calloc((size_t)tlm_core.nranks, sizeof(tlm_core_peer_t));
    if (!tlm_core.peers) {
        rc = TELEMEM_ERR_NO_MEMORY;
        goto err;
    }
    rc = tlm_am_init(tlm_core.rank, tlm_core.nranks);
    if (rc == TELEMEM_OK)
        rc = open_transports();
    if (rc != TELEMEM_OK)
        goto err;
    tlm_core_engine_init();
    tlm_core_rma_init();
    tlm_core_strided_init();
    tlm_core_vector_init();
    tlm_core_atomic_init();
    tlm_core_mutex_init();
    rc = tlm_core_coll_init();
    if (rc == TELEMEM_OK)
        rc = tlm_core_direct_init();
    if (rc == TELEMEM_OK) {
        tlm_config_append(tlm_core_direct_string());
        tlm_config_append(tlm_core_coll_string());
        tlm_config_append(tlm_core_wait_string());
        rc = tlm_core_am_init();
    }
    if (rc != TELEMEM_OK)
        goto err;
    tlm_core.initialized = true;
    rc = start_threads(level, c);
    if (rc != TELEMEM_OK) {
        tlm_core.initialized = false;
        goto err;
    }
    if (c->PRINT_CONFIG && tlm_core.rank == 0)
        tlm_util_log_block("telemem " TLM_VERSION " configuration:\n",
                           tlm_config_string());
    tlm_debug("initialized: rank %d of %d", tlm_core.rank, tlm_core.nranks);
    return TELEMEM_OK;
err:
    teardown();
    return rc;
}

/* Finalize gives up on the job (a peer died or left): tell every peer we
 * are gone, so that none waits for us -- in a collective it may have
 * entered before it heard of the death, or in its own finalize -- and hand
 * the notices to the transports (bounded: a dead peer takes none). */
static void leave(int status)
{
    tlm_am_hdr_t h = {TLM_AM_LEAVE, 0, (uint16_t)(int16_t)status, 0};
    for (int r = 0; r < tlm_core.nranks; r++)
        if (r != tlm_core.rank && tlm_am_peer_alive(r) == TELEMEM_OK)
            tlm_am_send_ctrl(r, &h, sizeof(h), NULL, 0); /* best effort */
    double until = tlm_util_now() + 0.5;
    while (tlm_am.pending && tlm_util_now() < until &&
           tlm_am_progress() >= 0)
        ;
}

int telemem_finalize(void)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    rc = telemem_quiet();
    int brc;
    if (tlm_core.peer_gone || tlm_core_check_alive(-1) != TELEMEM_OK) {
        /* A rank died or left: the job cannot meet again, and a barrier
         * after failed collectives may not even agree on which one it is
         * (each rank counts the collectives it entered). */
        brc = TELEMEM_ERR_PEER_DEAD;
    } else {
        tlm_core.finalizing = true;
        brc = telemem_barrier();
    }
    if (rc == TELEMEM_OK)
        rc = brc;
    if (brc != TELEMEM_OK) {
        leave(brc);
    } else {
        /* The barrier's last messages may still be queued here (a full
         * ring): hand them to the transport before it closes, or a peer
         * still in the barrier waits for them and then finds this process
         * gone. */
        tlm_wait_t w;
        tlm_core_wait_init(&w, -1);
        while (tlm_am.pending && tlm_core_wait_step(&w) == TELEMEM_OK)
            ;
    }
    tlm_core_thread_stop();
    teardown(); /* locking off; this call's guard still unlocks */
    return rc;
}

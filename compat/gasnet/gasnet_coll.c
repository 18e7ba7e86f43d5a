/* gasnet_coll.c - the GASNet-1 collectives over Telemem active messages:
 * teams (GASNET_TEAM_ALL and gasnet_coll_team_split()), team barriers,
 * and the data movement of broadcast, scatter, gather, gather_all,
 * exchange, reduce and scan (their entry points, with the M and _nb forms,
 * are in gasnet_coll_api.c).  Every collective is a set of point-to-point
 * messages between team members (one active message each, tagged with the
 * team and the collective's sequence number); a message that arrives
 * before its receiver reached the collective waits in a pending list, so
 * the IN_NOSYNC / MYSYNC modes need no extra synchronisation.  _nb forms
 * complete before returning. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gasnet_coll.h"
#include "gasnet_coll_int.h"
#include "gasnet_internal.h"

/* Per image of this node: its collectives' sequence numbers and its
 * split-phase team barrier. */
typedef struct {
    uint32_t seq;  /* collectives this image started on the team */
    int bar_inside;
    uint32_t bar_seq;
    int bar_named; /* result of the last team barrier */
    int32_t bar_value;
} img_t;

/* A team's members are images: one per node, or (gasnet_coll_init with
 * images) several per node, each a thread of a GASNET_PAR client. */
struct gasnete_coll_team {
    uint32_t id;
    int size, myrank;     /* members; this node's (single-image teams) */
    int multi;            /* several images per node */
    int first_local, nlocal; /* this node's images */
    gasnet_node_t *nodes; /* member -> node; NULL: the identity */
    img_t *img;           /* nlocal entries */
    uint32_t nsplits;     /* splits of this team (for new ids) */
    void *clientdata;
    struct gasnete_coll_team *next;
};
static struct gasnete_coll_team team_all = {0};
static img_t team_all_img1;

/* This thread's image (gasnet_coll_init's my_image) in a team of
 * several images per node. */
static TLM_GASNET_TLS int tls_image;

static inline int me_of(const struct gasnete_coll_team *t)
{
    return t->multi ? tls_image : t->myrank;
}

static inline img_t *img_of(const struct gasnete_coll_team *t)
{
    return &t->img[t->multi ? tls_image - t->first_local : 0];
}

static inline uint32_t next_seq(const struct gasnete_coll_team *t)
{
    return img_of(t)->seq++;
}
gasnet_team_handle_t gasnete_coll_team_all = &team_all;

/* A message that arrived for (team id, seq) from member src to dst. */
typedef struct pend {
    uint32_t team, seq;
    int src, dst;
    size_t len;
    struct pend *next;
    unsigned char data[];
} pend_t;

static struct {
    bool inited;
    gasnet_coll_fn_entry_t *fns;
    size_t nfns;
    struct gasnete_coll_team *teams; /* made by split */
    pend_t *pending;
} C;
static pthread_mutex_t C_lock = PTHREAD_MUTEX_INITIALIZER;

void tlm_gasnet_coll_fini(void)
{
    pthread_mutex_lock(&C_lock);
    free(C.fns);
    C.fns = NULL;
    C.nfns = 0;
    C.inited = false;
    while (C.teams) {
        struct gasnete_coll_team *t = C.teams;
        C.teams = t->next;
        free(t->nodes);
        free(t->img);
        free(t);
    }
    if (team_all.multi) {
        free(team_all.nodes);
        free(team_all.img);
        team_all.nodes = NULL;
        team_all.img = &team_all_img1;
        team_all.multi = 0;
    }
    while (C.pending) {
        pend_t *p = C.pending;
        C.pending = p->next;
        free(p);
    }
    pthread_mutex_unlock(&C_lock);
}

/* ---- messages ------------------------------------------------------------ */

static void pend_add(uint32_t team, uint32_t seq, int src, int dst,
                     const void *data, size_t len)
{
    pend_t *p = malloc(sizeof *p + (len ? len : 1));
    if (!p)
        tlm_gasnet_fatal("gasnet_coll", "out of memory for a %zu-byte "
                         "message", len);
    p->team = team;
    p->seq = seq;
    p->src = src;
    p->dst = dst;
    p->len = len;
    if (len)
        memcpy(p->data, data, len);
    pthread_mutex_lock(&C_lock);
    p->next = C.pending;
    C.pending = p;
    pthread_mutex_unlock(&C_lock);
}

static void on_coll(telemem_am_token_t tok, void *payload, size_t bytes,
                    const uint32_t *args, unsigned nargs, void *ctx)
{
    if (nargs != 4)
        tlm_gasnet_fatal("gasnet_coll", "malformed collective message");
    pend_add(args[0], args[1], (int)args[2], (int)args[3], payload, bytes);
}

int tlm_gasnet_coll_init(void)
{
    return telemem_am_register(TLM_GASNET_AM_COLL, on_coll, NULL);
}

static void team_ready(void)
{
    if (__atomic_load_n(&team_all.size, __ATOMIC_ACQUIRE) == 0) {
        pthread_mutex_lock(&C_lock);
        if (team_all.size == 0) {
            team_all.myrank = tlm_gasnet.mynode;
            team_all.first_local = tlm_gasnet.mynode;
            team_all.nlocal = 1;
            team_all.img = &team_all_img1;
            __atomic_store_n(&team_all.size, tlm_gasnet.nodes,
                             __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&C_lock);
    }
}

static inline gasnet_node_t node_of(const struct gasnete_coll_team *t, int r)
{
    return t->nodes ? t->nodes[r] : (gasnet_node_t)r;
}

static void send_to(const char *what, struct gasnete_coll_team *t, int rank,
                    uint32_t seq, const void *data, size_t len)
{
    if (node_of(t, rank) == (gasnet_node_t)tlm_gasnet.mynode) {
        pend_add(t->id, seq, me_of(t), rank, data, len);
        /* The image that takes it is another thread of this process: no
         * message wakes it where it sleeps in a wait. */
        telemem_wait_wake();
        return;
    }
    uint32_t args[4] = {t->id, seq, (uint32_t)me_of(t), (uint32_t)rank};
    int rc = telemem_am_request((int)node_of(t, rank), TLM_GASNET_AM_COLL,
                                len ? data : NULL, len, args, 4);
    if (rc != TELEMEM_OK)
        tlm_gasnet_fatal(what, "cannot send to node %u: %s",
                         (unsigned)node_of(t, rank), telemem_strerror(rc));
}

/* Take the message (t, seq, src) to this image if it is there. */
static pend_t *take(const struct gasnete_coll_team *t, uint32_t seq, int src)
{
    int me = me_of(t);
    pthread_mutex_lock(&C_lock);
    pend_t **pp = &C.pending;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->team == t->id && (*pp)->seq == seq &&
            (*pp)->src == src && (*pp)->dst == me)
            break;
    pend_t *p = *pp;
    if (p)
        *pp = p->next;
    pthread_mutex_unlock(&C_lock);
    return p;
}

static pend_t *recv_msg(const char *what, const struct gasnete_coll_team *t,
                        int src, uint32_t seq)
{
    unsigned idle = 0;
    pend_t *p;
    while (!(p = take(t, seq, src)))
        tlm_gasnet_wait_step(what, &idle);
    return p;
}

static void recv_into(const char *what, const struct gasnete_coll_team *t,
                      int src, uint32_t seq, void *dst, size_t len)
{
    pend_t *p = recv_msg(what, t, src, seq);
    if (p->len != len)
        tlm_gasnet_fatal(what, "team rank %d sent %zu bytes, %zu expected "
                         "(arguments differ between nodes?)", src, p->len,
                         len);
    if (len)
        memmove(dst, p->data, len);
    free(p);
}

/* ---- checks -------------------------------------------------------------- */

#define KNOWN_COLL_FLAGS                                                    \
    (GASNET_COLL_SYNC_FLAG_MASK | GASNET_COLL_SINGLE | GASNET_COLL_LOCAL |  \
     GASNET_COLL_REDUCE_OP_SUM | GASNET_COLL_REDUCE_OP_MAX |                \
     GASNET_COLL_REDUCE_OP_MIN | GASNET_COLL_REDUCE_OP_CUSTOM |             \
     GASNET_COLL_INCLUSIVE_SCAN | GASNET_COLL_EXCLUSIVE_SCAN |              \
     GASNET_COLL_AGGREGATE | GASNET_COLL_FIXED_THREADS_PER_NODE |           \
     GASNET_COLL_DST_IN_SEGMENT | GASNET_COLL_SRC_IN_SEGMENT |              \
     GASNET_COLL_DISABLE_AUTOTUNE | GASNET_COLL_NO_IMAGES)

static int one_bit(int v)
{
    return v && !(v & (v - 1));
}

struct gasnete_coll_team *
tlm_gasnet_coll_check(const char *what, gasnet_team_handle_t team, int flags)
{
    if (!tlm_gasnet.attached)
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    tlm_gasnet_check_context(what);
    if (!team)
        tlm_gasnet_fatal(what, "team is NULL");
    team_ready();
    int in = flags & (GASNET_COLL_IN_NOSYNC | GASNET_COLL_IN_MYSYNC |
                      GASNET_COLL_IN_ALLSYNC);
    int out = flags & (GASNET_COLL_OUT_NOSYNC | GASNET_COLL_OUT_MYSYNC |
                       GASNET_COLL_OUT_ALLSYNC);
    int addr = flags & (GASNET_COLL_SINGLE | GASNET_COLL_LOCAL);
    if (flags & ~KNOWN_COLL_FLAGS)
        tlm_gasnet_fatal(what, "unknown flags 0x%x", (unsigned)flags);
    if (!one_bit(in) || !one_bit(out) || !one_bit(addr))
        tlm_gasnet_fatal(what, "flags 0x%x need exactly one "
                         "GASNET_COLL_IN_*, one GASNET_COLL_OUT_* and one of "
                         "GASNET_COLL_SINGLE/LOCAL", (unsigned)flags);
    return team;
}

void tlm_gasnet_coll_check_image(const char *what,
                                 const struct gasnete_coll_team *t,
                                 gasnet_image_t image)
{
    if (image >= (gasnet_image_t)t->size)
        tlm_gasnet_fatal(what, "image %u out of range [0, %d)",
                         (unsigned)image, t->size);
}

/* This node's address of an M form's list. */
void *tlm_gasnet_coll_mine(const char *what, const struct gasnete_coll_team *t,
                           void *const list[], int flags)
{
    if (!list)
        tlm_gasnet_fatal(what, "address list is NULL");
    return (flags & GASNET_COLL_SINGLE) ? list[me_of(t)]
                                        : list[me_of(t) - t->first_local];
}

static void team_sync(const char *what, struct gasnete_coll_team *t);

/* IN_ALLSYNC: other members may still be writing this collective's
 * sources (with puts) until they enter it. */
static void sync_in(const char *what, struct gasnete_coll_team *t, int flags)
{
    if (flags & GASNET_COLL_IN_ALLSYNC)
        team_sync(what, t);
}

static void sync_out(const char *what, struct gasnete_coll_team *t,
                     int flags)
{
    if (flags & GASNET_COLL_OUT_ALLSYNC)
        team_sync(what, t);
    tlm_gasnet_check_exit();
}

/* ---- set-up and teams ---------------------------------------------------- */

/* gasnet_coll_init with several images per node: GASNET_TEAM_ALL's
 * members become the images (node-major), each calling thread one of this
 * node's.  Every thread of the node calls it; the first sets the team up
 * (before any collective, so no message of the team is pending yet). */
static void multi_images(const char *what, const gasnet_image_t images[],
                         gasnet_image_t my_image)
{
    pthread_mutex_lock(&C_lock);
    if (!team_all.multi) {
        int total = 0, first = 0;
        for (int i = 0; i < tlm_gasnet.nodes; i++) {
            if (i == tlm_gasnet.mynode)
                first = total;
            total += (int)images[i];
        }
        gasnet_node_t *map = malloc((size_t)total * sizeof *map);
        img_t *img = calloc(images[tlm_gasnet.mynode], sizeof *img);
        if (!map || !img)
            tlm_gasnet_fatal(what, "out of memory for %d images", total);
        for (int i = 0, k = 0; i < tlm_gasnet.nodes; i++)
            for (gasnet_image_t j = 0; j < images[i]; j++)
                map[k++] = (gasnet_node_t)i;
        team_all.nodes = map;
        team_all.img = img;
        team_all.first_local = first;
        team_all.nlocal = (int)images[tlm_gasnet.mynode];
        team_all.multi = 1;
        __atomic_store_n(&team_all.size, total, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&C_lock);
    if (my_image < (gasnet_image_t)team_all.first_local ||
        my_image >= (gasnet_image_t)(team_all.first_local + team_all.nlocal))
        tlm_gasnet_fatal(what, "my_image %u is not one of this node's "
                         "images [%d, %d)", (unsigned)my_image,
                         team_all.first_local,
                         team_all.first_local + team_all.nlocal);
    tls_image = (int)my_image;
}

void gasnet_coll_init(const gasnet_image_t images[], gasnet_image_t my_image,
                      gasnet_coll_fn_entry_t fn_tbl[], size_t fn_count,
                      int init_flags)
{
    static const char what[] = "gasnet_coll_init";
    (void)my_image;
    if (!tlm_gasnet.attached)
        tlm_gasnet_fatal(what, "called before gasnet_attach()");
    if (init_flags != 0)
        tlm_gasnet_fatal(what, "init_flags must be 0");
    int multi = 0;
    if (images)
        for (int i = 0; i < tlm_gasnet.nodes; i++) {
            if (images[i] == 0)
                tlm_gasnet_fatal(what, "node %d has no image", i);
            if (images[i] != 1)
                multi = 1;
        }
    if (fn_count && !fn_tbl)
        tlm_gasnet_fatal(what, "fn_tbl is NULL with fn_count %zu", fn_count);
    team_ready();
    if (multi)
        multi_images(what, images, my_image);
    pthread_mutex_lock(&C_lock);
    if (!C.inited) {
        C.fns = fn_count ? malloc(fn_count * sizeof *C.fns) : NULL;
        if (fn_count && !C.fns)
            tlm_gasnet_fatal(what, "out of memory");
        if (fn_count)
            memcpy(C.fns, fn_tbl, fn_count * sizeof *C.fns);
        C.nfns = fn_count;
        C.inited = true;
    }
    pthread_mutex_unlock(&C_lock);
}

gasnet_node_t gasnet_coll_team_size(gasnet_team_handle_t team)
{
    team_ready();
    return (gasnet_node_t)team->size;
}

gasnet_node_t gasnet_coll_team_myrank(gasnet_team_handle_t team)
{
    team_ready();
    return (gasnet_node_t)me_of(team);
}

gasnet_node_t gasnet_coll_team_rank2node(gasnet_team_handle_t team, int rank)
{
    team_ready();
    if (rank < 0 || rank >= team->size)
        tlm_gasnet_fatal("gasnet_coll_team_rank2node", "rank %d out of "
                         "range [0, %d)", rank, team->size);
    return node_of(team, rank);
}

gasnet_node_t gasnet_coll_team_node2rank(gasnet_team_handle_t team,
                                         gasnet_node_t node)
{
    team_ready();
    for (int r = 0; r < team->size; r++)
        if (node_of(team, r) == node)
            return (gasnet_node_t)r;
    tlm_gasnet_fatal("gasnet_coll_team_node2rank", "node %u is not in the "
                     "team", (unsigned)node);
}

gasnet_team_handle_t gasnet_coll_team_split(gasnet_team_handle_t parent,
                                            gasnet_node_t color,
                                            gasnet_node_t relrank,
                                            void *clientdata)
{
    static const char what[] = "gasnet_coll_team_split";
    struct gasnete_coll_team *p = tlm_gasnet_coll_check(
        what, parent,
        GASNET_COLL_IN_NOSYNC | GASNET_COLL_OUT_NOSYNC | GASNET_COLL_LOCAL);
    if (p->multi)
        tlm_gasnet_fatal(what, "splitting a team of several images per "
                         "node is not provided");
    uint32_t seq = next_seq(p);
    uint32_t mine_cr[2] = {color, relrank};
    for (int r = 0; r < p->size; r++)
        send_to(what, p, r, seq, mine_cr, sizeof mine_cr);
    uint32_t *all = malloc((size_t)p->size * sizeof mine_cr);
    struct gasnete_coll_team *t = calloc(1, sizeof *t);
    if (!all || !t)
        tlm_gasnet_fatal(what, "out of memory");
    for (int r = 0; r < p->size; r++)
        recv_into(what, p, r, seq, all + 2 * (size_t)r, sizeof mine_cr);
    /* Members: parent ranks of this color, by (relrank, parent rank). */
    int n = 0;
    for (int r = 0; r < p->size; r++)
        n += all[2 * (size_t)r] == color;
    if (n < 1) /* this rank is a member of its own colour */
        tlm_gasnet_fatal(what, "team split lost this rank");
    t->nodes = malloc((size_t)n * sizeof *t->nodes);
    int *pr = malloc((size_t)n * sizeof *pr);
    if (!t->nodes || !pr)
        tlm_gasnet_fatal(what, "out of memory");
    int k = 0;
    for (int r = 0; r < p->size; r++)
        if (all[2 * (size_t)r] == color)
            pr[k++] = r;
    for (int i = 1; i < n; i++) /* insertion sort by relrank */
        for (int j = i; j > 0 && all[2 * pr[j] + 1] < all[2 * pr[j - 1] + 1];
             j--) {
            int x = pr[j];
            pr[j] = pr[j - 1];
            pr[j - 1] = x;
        }
    for (int i = 0; i < n; i++) {
        t->nodes[i] = node_of(p, pr[i]);
        if (pr[i] == me_of(p))
            t->myrank = i;
    }
    t->size = n;
    t->first_local = t->myrank;
    t->nlocal = 1;
    t->img = calloc(1, sizeof *t->img);
    if (!t->img)
        tlm_gasnet_fatal(what, "out of memory");
    /* The same id on every member: parent id, split number and colour. */
    uint32_t h = 2166136261u;
    uint32_t parts[3] = {p->id, p->nsplits++, color};
    for (int i = 0; i < 3; i++) {
        h = (h ^ parts[i]) * 16777619u;
        h = (h ^ (parts[i] >> 16)) * 16777619u;
    }
    t->id = h ? h : 1;
    t->clientdata = clientdata;
    free(all);
    free(pr);
    pthread_mutex_lock(&C_lock);
    t->next = C.teams;
    C.teams = t;
    pthread_mutex_unlock(&C_lock);
    return t;
}

/* ---- team barriers ------------------------------------------------------- */

static void team_notify(const char *what, struct gasnete_coll_team *t,
                        int id, int flags)
{
    img_t *im = img_of(t);
    if (im->bar_inside)
        tlm_gasnet_fatal(what, "called twice without a wait");
    im->bar_seq = next_seq(t);
    im->bar_inside = 1;
    int32_t v[2] = {id, flags};
    for (int r = 0; r < t->size; r++)
        send_to(what, t, r, im->bar_seq, v, sizeof v);
}

/* All notifies there?  Merge them as gasnet_barrier_wait() does. */
static int team_finish(const char *what, struct gasnete_coll_team *t,
                       int id, int flags, int block)
{
    img_t *im = img_of(t);
    if (!im->bar_inside)
        tlm_gasnet_fatal(what, "called without a matching notify");
    if (!block) {
        unsigned idle = 0;
        tlm_gasnet_wait_step(what, &idle);
        int have = 0;
        pthread_mutex_lock(&C_lock);
        for (pend_t *p = C.pending; p; p = p->next)
            have += p->team == t->id && p->seq == im->bar_seq &&
                    p->dst == me_of(t);
        pthread_mutex_unlock(&C_lock);
        if (have < t->size)
            return GASNET_ERR_NOT_READY;
    }
    int named = 0, mismatch = 0;
    int32_t value = 0;
    for (int r = 0; r < t->size; r++) {
        int32_t v[2];
        recv_into(what, t, r, im->bar_seq, v, sizeof v);
        if (v[1] & GASNET_BARRIERFLAG_MISMATCH)
            mismatch = 1;
        else if (!(v[1] & GASNET_BARRIERFLAG_ANONYMOUS)) {
            if (named && value != v[0])
                mismatch = 1;
            named = 1;
            value = v[0];
        }
    }
    im->bar_inside = 0;
    im->bar_named = named;
    im->bar_value = value;
    if (mismatch || (flags & GASNET_BARRIERFLAG_MISMATCH) ||
        (!(flags & GASNET_BARRIERFLAG_ANONYMOUS) && named && value != id))
        return GASNET_ERR_BARRIER_MISMATCH;
    return GASNET_OK;
}

static void team_sync(const char *what, struct gasnete_coll_team *t)
{
    team_notify(what, t, 0, GASNET_BARRIERFLAG_ANONYMOUS);
    (void)team_finish(what, t, 0, GASNET_BARRIERFLAG_ANONYMOUS, 1);
}

static struct gasnete_coll_team *check_team(const char *what,
                                            gasnet_team_handle_t team)
{
    if (!team)
        tlm_gasnet_fatal(what, "team is NULL");
    team_ready();
    return team;
}

void gasnet_coll_barrier_notify(gasnet_team_handle_t team, int id, int flags)
{
    static const char what[] = "gasnet_coll_barrier_notify";
    if (check_team(what, team) == &team_all && !team_all.multi) {
        gasnet_barrier_notify(id, flags);
        return;
    }
    tlm_gasnet_check_context(what);
    team_notify(what, team, id, flags);
}

int gasnet_coll_barrier_try(gasnet_team_handle_t team, int id, int flags)
{
    static const char what[] = "gasnet_coll_barrier_try";
    if (check_team(what, team) == &team_all && !team_all.multi)
        return gasnet_barrier_try(id, flags);
    tlm_gasnet_check_context(what);
    return team_finish(what, team, id, flags, 0);
}

int gasnet_coll_barrier_wait(gasnet_team_handle_t team, int id, int flags)
{
    static const char what[] = "gasnet_coll_barrier_wait";
    if (check_team(what, team) == &team_all && !team_all.multi)
        return gasnet_barrier_wait(id, flags);
    tlm_gasnet_check_context(what);
    return team_finish(what, team, id, flags, 1);
}

int gasnet_coll_barrier(gasnet_team_handle_t team, int id, int flags)
{
    gasnet_coll_barrier_notify(team, id, flags);
    return gasnet_coll_barrier_wait(team, id, flags);
}

int gasnet_coll_barrier_result(gasnet_team_handle_t team, int *id)
{
    static const char what[] = "gasnet_coll_barrier_result";
    if (check_team(what, team) == &team_all && !team_all.multi)
        return gasnet_barrier_result(id);
    if (!id)
        tlm_gasnet_fatal(what, "id is NULL");
    img_t *im = img_of(team);
    if (im->bar_inside)
        tlm_gasnet_fatal(what, "called between notify and wait");
    if (!im->bar_named)
        return 1;
    *id = (int)im->bar_value;
    return 0;
}

/* ---- data movement ------------------------------------------------------- */

void tlm_gasnet_coll_broadcast(const char *what, gasnet_team_handle_t team,
                               void *dst, gasnet_image_t root, void *src,
                               size_t nbytes, int flags)
{
    struct gasnete_coll_team *t = team;
    sync_in(what, t, flags);
    uint32_t seq = next_seq(t);
    if ((int)root == me_of(t))
        for (int r = 0; r < t->size; r++)
            send_to(what, t, r, seq, src, nbytes);
    recv_into(what, t, (int)root, seq, dst, nbytes);
    sync_out(what, t, flags);
}

void tlm_gasnet_coll_scatter(const char *what, gasnet_team_handle_t team,
                             void *dst, gasnet_image_t root, void *src,
                             size_t nbytes, int flags)
{
    struct gasnete_coll_team *t = team;
    sync_in(what, t, flags);
    uint32_t seq = next_seq(t);
    if ((int)root == me_of(t))
        for (int r = 0; r < t->size; r++)
            send_to(what, t, r, seq, (char *)src + (size_t)r * nbytes,
                    nbytes);
    recv_into(what, t, (int)root, seq, dst, nbytes);
    sync_out(what, t, flags);
}

void tlm_gasnet_coll_gather(const char *what, gasnet_team_handle_t team,
                            gasnet_image_t root, void *dst, void *src,
                            size_t nbytes, int flags)
{
    struct gasnete_coll_team *t = team;
    sync_in(what, t, flags);
    uint32_t seq = next_seq(t);
    send_to(what, t, (int)root, seq, src, nbytes);
    if ((int)root == me_of(t))
        for (int r = 0; r < t->size; r++)
            recv_into(what, t, r, seq, (char *)dst + (size_t)r * nbytes,
                      nbytes);
    sync_out(what, t, flags);
}

void tlm_gasnet_coll_gather_all(const char *what, gasnet_team_handle_t team,
                                void *dst, void *src, size_t nbytes, int flags)
{
    struct gasnete_coll_team *t = team;
    sync_in(what, t, flags);
    uint32_t seq = next_seq(t);
    for (int r = 0; r < t->size; r++)
        send_to(what, t, r, seq, src, nbytes);
    for (int r = 0; r < t->size; r++)
        recv_into(what, t, r, seq, (char *)dst + (size_t)r * nbytes, nbytes);
    sync_out(what, t, flags);
}

void tlm_gasnet_coll_exchange(const char *what, gasnet_team_handle_t team,
                              void *dst, void *src, size_t nbytes, int flags)
{
    struct gasnete_coll_team *t = team;
    sync_in(what, t, flags);
    uint32_t seq = next_seq(t);
    for (int r = 0; r < t->size; r++)
        send_to(what, t, r, seq, (char *)src + (size_t)r * nbytes, nbytes);
    for (int r = 0; r < t->size; r++)
        recv_into(what, t, r, seq, (char *)dst + (size_t)r * nbytes, nbytes);
    sync_out(what, t, flags);
}

void tlm_gasnet_coll_reduce(const char *what, gasnet_team_handle_t team,
                            gasnet_image_t root, void *dst, void *src,
                            size_t elem_size, size_t elem_count,
                            gasnet_coll_fn_handle_t func, int func_arg,
                            int flags)
{
    struct gasnete_coll_team *t = team;
    sync_in(what, t, flags);
    size_t nbytes = elem_size * elem_count;
    if (func < 0 || (size_t)func >= C.nfns || !C.fns[func].fnptr)
        tlm_gasnet_fatal(what, "no reduction function %d (gasnet_coll_init "
                         "registered %zu)", (int)func, C.nfns);
    uint32_t seq = next_seq(t);
    send_to(what, t, (int)root, seq, src, nbytes);
    if ((int)root == me_of(t)) {
        recv_into(what, t, 0, seq, dst, nbytes);
        for (int r = 1; r < t->size; r++) {
            pend_t *p = recv_msg(what, t, r, seq);
            if (p->len != nbytes)
                tlm_gasnet_fatal(what, "team rank %d sent %zu bytes, %zu "
                                 "expected", r, p->len, nbytes);
            C.fns[func].fnptr(dst, elem_count, dst, elem_count, p->data,
                              elem_size, (int)C.fns[func].flags, func_arg);
            free(p);
        }
    }
    sync_out(what, t, flags);
}

void tlm_gasnet_coll_scan(const char *what, gasnet_team_handle_t team,
                          void *dst, void *src, size_t elem_size,
                          size_t elem_count, gasnet_coll_fn_handle_t func,
                          int func_arg, int flags)
{
    struct gasnete_coll_team *t = team;
    sync_in(what, t, flags);
    size_t nbytes = elem_size * elem_count;
    if (func < 0 || (size_t)func >= C.nfns || !C.fns[func].fnptr)
        tlm_gasnet_fatal(what, "no reduction function %d (gasnet_coll_init "
                         "registered %zu)", (int)func, C.nfns);
    int me = me_of(t);
    int last = (flags & GASNET_COLL_EXCLUSIVE_SCAN) ? me - 1 : me;
    uint32_t seq = next_seq(t);
    for (int r = me + ((flags & GASNET_COLL_EXCLUSIVE_SCAN) ? 1 : 0);
         r < t->size; r++)
        send_to(what, t, r, seq, src, nbytes);
    for (int r = 0; r <= last; r++) {
        pend_t *p = recv_msg(what, t, r, seq);
        if (p->len != nbytes)
            tlm_gasnet_fatal(what, "team rank %d sent %zu bytes, %zu "
                             "expected", r, p->len, nbytes);
        if (r == 0)
            memcpy(dst, p->data, nbytes);
        else
            C.fns[func].fnptr(dst, elem_count, dst, elem_count, p->data,
                              elem_size, (int)C.fns[func].flags, func_arg);
        free(p);
    }
    sync_out(what, t, flags);
}

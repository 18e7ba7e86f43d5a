/* caf_tflat.c - the first step of every collective subroutine inside
 * CHANGE TEAM (and in the initial team once Telemem's collectives fail):
 * each image of the team puts a 64-byte slot (its statement, size,
 * source image, and the argument when it has at most TLM_CAF_JC_DATA
 * bytes) into the control block of the team's first image, which waits
 * for them all (watching each image it waits for), folds the small
 * arguments in image order and puts one result (a STAT= code and the
 * data) back into each image's control block.  Two one-way puts per
 * image instead of the trees' 2 log2(size) hops, each of which waits for
 * an image to be scheduled; on one node the puts are stores.  A larger
 * argument then moves on caf_tcoll.c's trees, once every image agreed. */
#include <stdio.h>
#include <string.h>

#include "caf_internal.h"

/* A slot or a result in a control block: the data first, the key last
 * (a put is applied in increasing address order: once the key is there,
 * so is the rest). */
typedef struct {
    unsigned char data[TLM_CAF_JC_DATA];
    int64_t a;      /* slot: bytes; result: STAT= code */
    int64_t b;      /* slot: statement; result: the image it names */
    int64_t c;      /* slot: source image (team index) */
    uint64_t key;   /* the team's tag and collective number, never 0 */
} flat_t;

_Static_assert(sizeof(flat_t) == 64, "one cache line");

static flat_t *slot_at(int hub, int rank)
{
    return (flat_t *)((int64_t *)tlm_caf.ctl_bases[hub] +
                      TLM_CAF_CTL_FLAT(tlm_caf.n)) + rank;
}

static volatile flat_t *my_result(void)
{
    return (volatile flat_t *)((int64_t *)tlm_caf.ctl_block +
                               TLM_CAF_CTL_FLAT(tlm_caf.n)) + tlm_caf.n;
}

static flat_t *result_at(int rank)
{
    return slot_at(rank, tlm_caf.n);
}

static uint64_t key_of(const volatile flat_t *f)
{
    return __atomic_load_n(&((volatile flat_t *)f)->key, __ATOMIC_ACQUIRE);
}

/* Wait until *f carries key, watching rank r: 0, or a STAT= code. */
static int await_key(const volatile flat_t *f, uint64_t key, int r,
                     int image, const char *name, char *msg, size_t cap)
{
    telemem_wait_t w = TELEMEM_WAIT_INIT(r);

    while (key_of(f) != key) {
        int s = tlm_caf_state(r), rc;
        if (s != TLM_CAF_RUNNING) {
            snprintf(msg, cap, "%s: image %d has %s", name, image,
                     s == TLM_CAF_FAILED ? "failed" : "stopped");
            return s == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                       : TLM_CAF_STAT_STOPPED_IMAGE;
        }
        rc = telemem_wait_poll(&w);
        if (rc != TELEMEM_OK) {
            if (rc == TELEMEM_ERR_PEER_DEAD) {
                tlm_caf_refresh_dead();
                snprintf(msg, cap, "%s: image %d has failed", name, image);
                return TLM_CAF_STAT_FAILED_IMAGE;
            }
            snprintf(msg, cap, "%s: waiting for image %d: %s (%s)", name,
                     image, telemem_strerror(rc), telemem_status_name(rc));
            return tlm_caf_stat_of(rc);
        }
    }
    return 0;
}

/* On the first image: wait for every image's slot of key and compare it
 * with this image's size, statement and source (a mismatch is
 * STAT_INVALID naming the first such image; a failed image outranks a
 * stopped one, which outranks the rest).  A STAT= code, *image the
 * image it names. */
static int gather(const tlm_caf_team_t *t, uint64_t key, size_t bytes,
                  int what, int root, const char *name, int *image,
                  char *msg, size_t cap)
{
    int i, code = 0;

    *image = 0;
    for (i = 1; i < t->size; i++) {
        const volatile flat_t *s = slot_at(tlm_caf.me, t->ranks[i]);
        int c = await_key(s, key, t->ranks[i], i + 1, name, msg, cap);
        if (c && (!code || (c == TLM_CAF_STAT_FAILED_IMAGE &&
                            code != TLM_CAF_STAT_FAILED_IMAGE))) {
            code = c;
            *image = i + 1;
        }
        if (!c && !code && (s->a != (int64_t)bytes || s->b != what ||
                            s->c != root)) {
            snprintf(msg, cap, "%s: the argument of image %d differs in "
                     "size or type from the others' (%lld bytes, image "
                     "1's %zu)%s", name, i + 1, (long long)s->a, bytes,
                     s->b != what ? ", or its statement"
                     : s->c != root ? ", or its source_image" : "");
            code = TLM_CAF_STAT_INVALID;
            *image = i + 1;
        }
    }
    return code;
}

/* On the first image, once gather() has seen every slot of res->key: the
 * result into each image's control block.  Only then: an image puts its
 * next slot after it has read this result, so a result is never written
 * over one its image has not read yet. */
static void post(const tlm_caf_team_t *t, const flat_t *res)
{
    int i;

    for (i = 1; i < t->size; i++) {
        int r = t->ranks[i];
        if (tlm_caf_state(r) == TLM_CAF_FAILED)
            continue;
        (void)telemem_put(r, result_at(r), res, sizeof *res);
    }
}

/* The first image's part: every slot, the outcome, the results. */
static int hub(tlm_caf_team_t *t, const tlm_caf_jc_t *op, uint64_t key,
               char *msg, size_t cap)
{
    flat_t res;
    int i, code, image;

    memset(&res, 0, sizeof res);
    code = gather(t, key, op->bytes, op->what, op->root, op->name, &image,
                  msg, cap);
    if (!code && op->bytes <= TLM_CAF_JC_DATA && op->bytes > 0) {
        if (op->what == TLM_CAF_JC_BCAST && op->root != 0)
            memcpy(op->buf,
                   (const void *)slot_at(tlm_caf.me, t->ranks[op->root])
                       ->data, op->bytes);
        for (i = 1; op->what == TLM_CAF_JC_REDUCE && i < t->size; i++)
            if (op->fold(op->buf,
                         (const void *)slot_at(tlm_caf.me, t->ranks[i])->data,
                         op->bytes, op->ctx) != 0) {
                snprintf(msg, cap, "%s: no such reduction of this type",
                         op->name);
                code = TLM_CAF_STAT_INVALID;
                break;
            }
        if (!code)
            memcpy(res.data, op->buf, op->bytes);
    }
    res.a = code;
    res.b = image;
    res.key = key;
    /* The message travels as the code: the others rebuild it. */
    post(t, &res);
    return code;
}

/* The message of code (naming image) on an image that is not the hub. */
static void describe(const tlm_caf_jc_t *op, int code, int image,
                     char *msg, size_t cap)
{
    if (code == TLM_CAF_STAT_FAILED_IMAGE ||
        code == TLM_CAF_STAT_STOPPED_IMAGE)
        snprintf(msg, cap, "%s: image %d has %s", op->name, image,
                 code == TLM_CAF_STAT_FAILED_IMAGE ? "failed" : "stopped");
    else if (code == TLM_CAF_STAT_INVALID)
        snprintf(msg, cap, "%s: the argument of image %d differs in size "
                 "or type from the others'", op->name, image);
    else
        snprintf(msg, cap, "%s: image %d: %s", op->name, image,
                 telemem_strerror(TLM_CAF_STAT_TELEMEM_BASE - code));
}

uint64_t tlm_caf_tflat_key(const tlm_caf_team_t *t, uint32_t seq)
{
    return ((uint64_t)t->cid << 32) | seq;
}

int tlm_caf_tflat(tlm_caf_team_t *t, const tlm_caf_jc_t *op, char *msg,
                  size_t cap)
{
    uint64_t key = tlm_caf_tflat_key(t, ++t->seq);
    int h = t->ranks[0], code;
    flat_t mine;

    if (t->size == 1)
        return 0;
    if (t->me == 0)
        return hub(t, op, key, msg, cap);
    memset(&mine, 0, sizeof mine);
    if (op->bytes <= TLM_CAF_JC_DATA && op->bytes > 0)
        memcpy(mine.data, op->buf, op->bytes);
    mine.a = (int64_t)op->bytes;
    mine.b = op->what;
    mine.c = op->root;
    mine.key = key;
    code = telemem_put(h, slot_at(h, tlm_caf.me), &mine, sizeof mine);
    if (code != TELEMEM_OK) {
        if (code == TELEMEM_ERR_PEER_DEAD)
            tlm_caf_refresh_dead();
        snprintf(msg, cap, "%s: image 1 of the team: %s", op->name,
                 code == TELEMEM_ERR_PEER_DEAD ? "has failed"
                                               : telemem_strerror(code));
        return tlm_caf_stat_of(code);
    }
    code = await_key(my_result(), key, h, 1, op->name, msg, cap);
    if (code)
        return code;
    code = (int)my_result()->a;
    if (code) {
        describe(op, code, (int)my_result()->b, msg, cap);
        return code;
    }
    if (op->bytes <= TLM_CAF_JC_DATA && op->bytes > 0)
        memcpy(op->buf, (const void *)my_result()->data, op->bytes);
    return 0;
}

void tlm_caf_tflat_announce(const tlm_caf_team_t *t, uint64_t key,
                            size_t bytes)
{
    flat_t mine;
    int h = t->ranks[0];

    memset(&mine, 0, sizeof mine);
    mine.a = (int64_t)bytes;
    mine.b = TLM_CAF_JC_REDUCE;
    mine.key = key;
    (void)telemem_put(h, slot_at(h, tlm_caf.me), &mine, sizeof mine);
}

int tlm_caf_tflat_check(const tlm_caf_team_t *t, uint64_t key, size_t bytes,
                        int *image)
{
    int i;

    if (t->me != 0) {
        volatile flat_t *res = my_result();
        if (key_of(res) != key)
            return 0;
        *image = (int)res->b;
        return (int)res->a;
    }
    /* A slot of another size: the reduction fails.  The others' slots
     * are awaited before the result goes out (post()): an image whose
     * slot has not come yet may not have read the previous result, and
     * would wait for it forever once this one replaced it. */
    for (i = 1; i < t->size; i++) {
        const volatile flat_t *s = slot_at(tlm_caf.me, t->ranks[i]);
        if (key_of(s) == key && (s->a != (int64_t)bytes ||
                                 s->b != TLM_CAF_JC_REDUCE || s->c != 0)) {
            flat_t res;
            char msg[256];
            memset(&res, 0, sizeof res);
            res.a = gather(t, key, bytes, TLM_CAF_JC_REDUCE, 0, "reduction",
                           image, msg, sizeof msg);
            res.b = *image;
            res.key = key;
            post(t, &res);
            return (int)res.a;
        }
    }
    return 0;
}

/* caf_jcoll.c - the initial team's SYNC ALL, collective subroutines and
 * coarray ALLOCATE / DEALLOCATE on Telemem's node-aware collectives: each
 * begins with one telemem_allgather of a 64-byte slot per image (what
 * the image is doing, its argument's size, and the argument itself when
 * it fits), the same call of the same size whatever the statement, so
 * that an image
 * that has stopped or failed can take part in it too, from
 * tlm_caf_terminate until every image has ended.  Every image sees every
 * slot: all agree on the outcome (STAT=, a size that differs), reduce an
 * argument that fits in image order (the same bits on every image), and
 * only when every image runs and agrees do they move a larger argument
 * with telemem_broadcast, telemem_allreduce or the team's trees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

/* One image's slot: 32 bytes of header, then the argument when it fits
 * (16-byte aligned: integer(16), real(16) and complex folds read it in
 * place). */
typedef struct {
    int32_t state;  /* TLM_CAF_RUNNING, _STOPPED, _FAILED */
    int32_t what;   /* tlm_caf_jc_what_t; 0 for an image that ended */
    int32_t root;   /* TLM_CAF_JC_BCAST: the source's rank */
    int32_t pad;
    uint64_t bytes; /* the argument's size */
    uint64_t pad2;
    unsigned char data[TLM_CAF_JC_DATA];
} slot_t;

_Static_assert(sizeof(slot_t) == 64, "one cache line per image");

static slot_t *slots; /* every image's, after the allgather */

int tlm_caf_jc_setup(void)
{
    slots = aligned_alloc(64, (size_t)tlm_caf.n * sizeof *slots);
    return slots ? TELEMEM_OK : TELEMEM_ERR_NO_MEMORY;
}

/* Exchange the slots; false when Telemem's collectives no longer work (a
 * process died): from then on every statement takes the pairwise posts
 * and the trees, which watch each image. */
static bool exchange(const slot_t *mine)
{
    int rc = telemem_allgather(mine, slots, sizeof *mine);

    if (rc == TELEMEM_OK)
        return true;
    tlm_caf.coll_broken = true;
    tlm_caf_refresh_dead();
    return false;
}

static const char *what_name(int what)
{
    switch (what) {
    case TLM_CAF_JC_SYNC: return "sync all";
    case TLM_CAF_JC_BCAST: return "co_broadcast";
    case TLM_CAF_JC_ALLOC: return "allocate coarray";
    case TLM_CAF_JC_DEALLOC: return "deallocate coarray";
    default: return "a reduction";
    }
}

/* The STAT= code every image derives from the same slots: an image that
 * ended (a failed one outranks a stopped one), then one whose statement,
 * size or source differs from the first image's. */
static int judge(const tlm_caf_jc_t *op, char *msg, size_t cap)
{
    const slot_t *ref = &slots[0];
    int r, code = 0;

    for (r = 0; r < tlm_caf.n && code != TLM_CAF_STAT_FAILED_IMAGE; r++) {
        if (slots[r].state == TLM_CAF_RUNNING ||
            (code && slots[r].state != TLM_CAF_FAILED))
            continue;
        code = slots[r].state == TLM_CAF_FAILED ? TLM_CAF_STAT_FAILED_IMAGE
                                                : TLM_CAF_STAT_STOPPED_IMAGE;
        snprintf(msg, cap, "%s: image %d has %s", op->name, r + 1,
                 code == TLM_CAF_STAT_FAILED_IMAGE ? "failed" : "stopped");
    }
    if (code)
        return code;
    for (r = 1; r < tlm_caf.n; r++) {
        const slot_t *s = &slots[r];
        if (s->what != ref->what) {
            snprintf(msg, cap, "%s: image %d is in %s, image 1 in %s",
                     op->name, r + 1, what_name(s->what),
                     what_name(ref->what));
            return TLM_CAF_STAT_INVALID;
        }
        if (s->bytes != ref->bytes || s->root != ref->root) {
            snprintf(msg, cap, "%s: the argument of image %d differs in "
                     "size or type from the others' (%llu bytes, image "
                     "1's %llu)%s", op->name, r + 1,
                     (unsigned long long)s->bytes,
                     (unsigned long long)ref->bytes,
                     s->root != ref->root ? ", or its source_image" : "");
            return TLM_CAF_STAT_INVALID;
        }
    }
    return 0;
}

/* Fold the slots' arguments in image order into op->buf. */
static int fold_slots(const tlm_caf_jc_t *op, char *msg, size_t cap)
{
    int r;

    memcpy(op->buf, slots[0].data, op->bytes);
    for (r = 1; r < tlm_caf.n; r++)
        if (op->fold(op->buf, slots[r].data, op->bytes, op->ctx) != 0) {
            snprintf(msg, cap, "%s: no such reduction of this type",
                     op->name);
            return TLM_CAF_STAT_INVALID;
        }
    return 0;
}

int tlm_caf_jc(const tlm_caf_jc_t *op, char *msg, size_t cap)
{
    slot_t mine;
    int code;

    if (tlm_caf.coll_broken || tlm_caf.team != &tlm_caf.initial)
        return -1;
    memset(&mine, 0, sizeof mine);
    mine.state = TLM_CAF_RUNNING;
    mine.what = op->what;
    mine.root = op->what == TLM_CAF_JC_BCAST ? op->root : 0;
    mine.bytes = op->bytes;
    if (op->buf && op->bytes <= TLM_CAF_JC_DATA && op->bytes > 0)
        memcpy(mine.data, op->buf, op->bytes);
    if (!exchange(&mine))
        return -1;
    code = judge(op, msg, cap);
    /* SYNC ALL, ALLOCATE and DEALLOCATE need only the agreement: the
     * allocation's own Telemem collective follows when every image runs
     * and is in the same statement. */
    if (code || !op->buf || op->what == TLM_CAF_JC_SYNC || op->bytes == 0)
        return code;
    if (op->bytes <= TLM_CAF_JC_DATA) {
        if (op->what == TLM_CAF_JC_BCAST) {
            memcpy(op->buf, slots[op->root].data, op->bytes);
            return 0;
        }
        return fold_slots(op, msg, cap);
    }
    /* Every image runs and brought the same size: the argument itself. */
    return op->big(op, msg, cap);
}

/* tlm_caf_terminate's part: slots that say this image ended, until every
 * image's says so.  Returns false when the collectives failed (the caller
 * then watches each image). */
bool tlm_caf_jc_ended(int st)
{
    slot_t mine;
    int r;

    memset(&mine, 0, sizeof mine);
    mine.state = st;
    for (;;) {
        if (tlm_caf.coll_broken || !exchange(&mine))
            return false;
        for (r = 0; r < tlm_caf.n; r++)
            if (slots[r].state == TLM_CAF_RUNNING)
                break;
        if (r == tlm_caf.n)
            return true;
    }
}

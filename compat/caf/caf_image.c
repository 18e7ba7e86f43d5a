/* caf_image.c - what an image knows of the images: this_image,
 * num_images, image indices of the current team, image_status,
 * failed_images, stopped_images, and random_init across images. */
#include <stdlib.h>
#include <string.h>

#include "caf_internal.h"

int _gfortran_caf_this_image(int distance)
{
    (void)distance;
    tlm_caf_need_init();
    return tlm_caf.team->me + 1;
}

int _gfortran_caf_num_images(int distance, int failed)
{
    int r, k = 0;

    (void)distance;
    tlm_caf_need_init();
    /* failed: -1 absent, 0 the non-failed images, 1 the failed ones. */
    if (failed < 0)
        return tlm_caf.team->size;
    tlm_caf_refresh_dead();
    for (r = 0; r < tlm_caf.team->size; r++) {
        int f = tlm_caf_state(tlm_caf.team->ranks[r]) == TLM_CAF_FAILED;
        k += failed ? f : !f;
    }
    return k;
}

int tlm_caf_rank_of(int image)
{
    if (image < 1 || image > tlm_caf.team->size)
        return -1;
    return tlm_caf.team->ranks[image - 1];
}

void tlm_caf_refresh_dead(void)
{
    int r;

    for (r = 0; r < tlm_caf.n; r++)
        if (r != tlm_caf.me && tlm_caf.ctl.state[r] != TLM_CAF_FAILED &&
            telemem_rank_alive(r) == TELEMEM_ERR_PEER_DEAD)
            tlm_caf.ctl.state[r] = TLM_CAF_FAILED;
}

int tlm_caf_state(int rank)
{
    int64_t s = __atomic_load_n(&tlm_caf.ctl.state[rank], __ATOMIC_ACQUIRE);
    return (int)s;
}

int _gfortran_caf_image_status(int image, tlm_caf_team_p *team)
{
    int r;

    (void)team;
    tlm_caf_need_init();
    r = tlm_caf_rank_of(image);
    if (r < 0)
        tlm_caf_die(1, "image_status: image %d out of range [1, %d]", image,
                    tlm_caf.team->size);
    tlm_caf_refresh_dead();
    switch (tlm_caf_state(r)) {
    case TLM_CAF_STOPPED:
        return TLM_CAF_STAT_STOPPED_IMAGE;
    case TLM_CAF_FAILED:
        return TLM_CAF_STAT_FAILED_IMAGE;
    default:
        return 0;
    }
}

/* An allocated rank-1 INTEGER(kind) array of the images in state st. */
static void images_in_state(tlm_gfc_desc_t *array, int *kind, int st)
{
    int k = kind ? *kind : 4, r, count = 0;
    char *p;

    tlm_caf_need_init();
    tlm_caf_refresh_dead();
    if (k != 1 && k != 2 && k != 4 && k != 8)
        tlm_caf_die(1, "failed_images/stopped_images: unsupported KIND=%d",
                    k);
    p = malloc((size_t)tlm_caf.team->size * (size_t)k + 1);
    if (!p)
        tlm_caf_die(1, "failed_images/stopped_images: out of memory");
    for (r = 0; r < tlm_caf.team->size; r++) {
        int64_t img = r + 1;
        if (tlm_caf_state(tlm_caf.team->ranks[r]) != st)
            continue;
        switch (k) {
        case 1: ((int8_t *)p)[count] = (int8_t)img; break;
        case 2: ((int16_t *)p)[count] = (int16_t)img; break;
        case 4: ((int32_t *)p)[count] = (int32_t)img; break;
        default: ((int64_t *)p)[count] = img; break;
        }
        count++;
    }
    array->base_addr = p;
    array->offset = (size_t)-1;
    array->dtype.elem_len = (size_t)k;
    array->dtype.rank = 1;
    array->dtype.type = TLM_BT_INTEGER;
    array->dtype.version = 0;
    array->dtype.attribute = 0;
    array->span = k;
    array->dim[0].lbound = 1;
    array->dim[0].ubound = count;
    array->dim[0].stride = 1;
}

void _gfortran_caf_failed_images(tlm_gfc_desc_t *array, tlm_caf_team_p *team,
                                 int *kind)
{
    (void)team;
    images_in_state(array, kind, TLM_CAF_FAILED);
}

void _gfortran_caf_stopped_images(tlm_gfc_desc_t *array,
                                  tlm_caf_team_p *team, int *kind)
{
    (void)team;
    images_in_state(array, kind, TLM_CAF_STOPPED);
}

/* libgfortran's RANDOM_SEED for default integers (weak: a C test may not
 * link libgfortran). */
extern void _gfortran_random_seed_i4(int32_t *size, tlm_gfc_desc_t *put,
                                     tlm_gfc_desc_t *get)
    __attribute__((weak));

static void seed_desc(tlm_gfc_desc_t *d, int32_t *seed, int32_t n)
{
    memset(d, 0, sizeof *d);
    d->base_addr = seed;
    d->offset = (size_t)-1;
    d->dtype.elem_len = sizeof(int32_t);
    d->dtype.rank = 1;
    d->dtype.type = TLM_BT_INTEGER;
    d->span = sizeof(int32_t);
    d->dim[0].lbound = 1;
    d->dim[0].ubound = n;
    d->dim[0].stride = 1;
}

/* Image 1's seed to every image of the current team: through the slots
 * in the initial team (an image that has stopped takes part in those),
 * on the trees inside CHANGE TEAM or once a process has died. */
static bool bcast_seed(void *seed, size_t bytes)
{
    char msg[256];
    tlm_caf_jc_t op = {.what = TLM_CAF_JC_BCAST, .name = "random_init",
                       .buf = seed, .bytes = bytes, .root = 0,
                       .big = tlm_caf_jc_bcast_big};
    int code = tlm_caf_jc(&op, msg, sizeof msg);

    if (code < 0)
        code = tlm_caf_tcoll_bcast(tlm_caf.team, seed, bytes, 0,
                                   "random_init", msg, sizeof msg);
    return code == 0;
}

/* RANDOM_INIT: REPEATABLE seeds come from a fixed number (and the image
 * index when IMAGE_DISTINCT) through splitmix64; otherwise the processor's
 * own random seed, drawn on every image (IMAGE_DISTINCT) or on image 1
 * and broadcast (the images call it together then). */
void _gfortran_caf_random_init(bool repeatable, bool image_distinct)
{
    tlm_gfc_desc_t d;
    int32_t n = 0, i, *seed;
    uint64_t x;

    tlm_caf_need_init();
    if (!_gfortran_random_seed_i4)
        return;
    _gfortran_random_seed_i4(&n, NULL, NULL);
    seed = calloc((size_t)n + 1, sizeof *seed);
    if (!seed)
        tlm_caf_die(1, "random_init: out of memory");
    seed_desc(&d, seed, n);
    if (repeatable) {
        x = 0x5eed5eedULL + (image_distinct ? (uint64_t)tlm_caf.me + 1 : 0);
        for (i = 0; i < n; i++) {
            uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            seed[i] = (int32_t)((z ^ (z >> 31)) | 1);
        }
        _gfortran_random_seed_i4(NULL, &d, NULL);
    } else {
        _gfortran_random_seed_i4(NULL, NULL, NULL);
        if (!image_distinct) {
            _gfortran_random_seed_i4(NULL, NULL, &d);
            if (!bcast_seed(seed, (size_t)n * sizeof *seed))
                tlm_caf_die(1, "random_init: broadcast of the seed failed");
            _gfortran_random_seed_i4(NULL, &d, NULL);
        }
    }
    free(seed);
}

/* unit_pack_vec.c - unit_pack's vector cases: gather / scatter /
 * scatter-acc / list encoding in the three list forms from random
 * cursors, and tlm_vec_total's error cases (unit_pack.c says what the
 * test covers). */
#include "unit_pack.h"

/* ---- vectors ------------------------------------------------------------- */

#define MAXSEG 48

typedef struct {
    size_t n;
    size_t len[MAXSEG];
    size_t loff[MAXSEG], roff[MAXSEG]; /* offsets in the two buffers */
    size_t prefix[MAXSEG + 1];         /* stream offset of each segment */
    size_t lsize, rsize;
    tt_gbuf_t lbuf, rbuf;
    void *lp[MAXSEG], *rp[MAXSEG];
    tlm_vec_seg3_t seg3[MAXSEG];
    uint64_t recs[2 * MAXSEG];
} vlist_t;

/* Lays n segments out in each buffer in a shuffled order with gaps. */
static void layout(size_t n, const size_t *len, size_t *off, size_t *size)
{
    size_t order[MAXSEG], pos = (size_t)rnd(16);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rnd(i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        off[order[i]] = pos;
        pos += len[order[i]] + (size_t)rnd(24);
    }
    *size = pos + 1;
}

/* A list: giov (one common length) or free lengths; elem: lengths are
 * multiples of it. */
static void make_vlist(vlist_t *v, bool giov, size_t elem)
{
    v->n = (size_t)rnd(MAXSEG + 1);
    size_t common = elem * (size_t)rnd_range(0, 200 / elem + 1);
    v->prefix[0] = 0;
    for (size_t i = 0; i < v->n; i++) {
        size_t l;
        if (giov)
            l = common;
        else if (rnd(6) == 0)
            l = 0;
        else if (rnd(8) == 0)
            l = (size_t)rnd_range(1, 5000);
        else
            l = (size_t)rnd_range(1, 70);
        v->len[i] = l / elem * elem;
        v->prefix[i + 1] = v->prefix[i] + v->len[i];
    }
    layout(v->n, v->len, v->loff, &v->lsize);
    layout(v->n, v->len, v->roff, &v->rsize);
    gb_alloc(&v->lbuf, v->lsize, 31);
    gb_alloc(&v->rbuf, v->rsize, 32);
    for (size_t i = 0; i < v->n; i++) {
        v->lp[i] = v->lbuf.p + v->loff[i];
        v->rp[i] = v->rbuf.p + v->roff[i];
        v->seg3[i] = (tlm_vec_seg3_t){v->rp[i], v->lp[i], v->len[i]};
        v->recs[2 * i] = (uint64_t)(uintptr_t)v->rp[i];
        v->recs[2 * i + 1] = v->len[i];
    }
}

static void free_vlist(vlist_t *v)
{
    tt_gbuf_free(&v->lbuf);
    tt_gbuf_free(&v->rbuf);
}

/* The three forms of one list (records carry the remote side only). */
static tlm_vec_t vform(const vlist_t *v, int form)
{
    tlm_vec_t x;
    memset(&x, 0, sizeof x);
    x.n = v->n;
    if (form == 0) {
        x.local = v->lp;
        x.remote = v->rp;
        x.bytes = v->n ? v->len[0] : 0;
    } else if (form == 1) {
        x.segs = v->seg3;
    } else {
        x.recs = v->recs;
    }
    return x;
}

static size_t cur_pos(const vlist_t *v, const tlm_vec_cursor_t *c)
{
    return v->prefix[c->seg < v->n ? c->seg : v->n] + c->off;
}

/* A random cursor: any segment, any offset within it (its end too),
 * element-aligned. */
static tlm_vec_cursor_t rand_cursor(const vlist_t *v, size_t elem)
{
    tlm_vec_cursor_t c = {0, 0};
    if (v->n == 0 || rnd(4) == 0)
        return c;
    c.seg = (size_t)rnd(v->n + 1);
    if (c.seg < v->n)
        c.off = (size_t)rnd(v->len[c.seg] / elem + 1) * elem;
    return c;
}

static const char *const fname[3] = {"giov", "triples", "records"};

static void test_vec_one(int form, int it)
{
    vlist_t v;
    bool acc = it % 3 == 2;
    int type = acc ? (int)rnd(TLM_ACC_NTYPES) : 0;
    size_t es = acc ? tlm_acc_elem_size(type) : 1;
    make_vlist(&v, form == 0, es);
    tlm_vec_t x = vform(&v, form);
    size_t total = v.prefix[v.n], got_total = 12345;
    snprintf(what, sizeof what, "vector %s, %zu segments, %zu bytes%s%s",
             fname[form], v.n, total, acc ? ", acc " : "",
             acc ? tname[type] : "");
    CHECK(tlm_vec_total(&x, &got_total) == 0 && got_total == total,
          "tlm_vec_total gave %zu, expected %zu", got_total, total);
    int side = form == 2 ? REMOTE : (int)rnd(2);
    tt_gbuf_t *mb = side == REMOTE ? &v.rbuf : &v.lbuf;
    const size_t *moff = side == REMOTE ? v.roff : v.loff;
    size_t msize = side == REMOTE ? v.rsize : v.lsize;
    uint8_t *stream = xmalloc(total), *img = xmalloc(msize);
    tt_gbuf_t out;

    /* Gather from a random cursor in random chunks. */
    tt_pat_fill(mb->p, msize, 41, 0);
    for (size_t i = 0; i < v.n; i++)
        memcpy(stream + v.prefix[i], mb->p + moff[i], v.len[i]);
    tlm_vec_cursor_t c = rand_cursor(&v, es), c0 = c;
    size_t start = cur_pos(&v, &c), pos = start;
    gb_alloc(&out, total - start, 42);
    while (pos < total) {
        size_t len = (size_t)rnd_range(1, rnd(2) ? 40 : total - pos);
        if (len > total - pos)
            len = total - pos;
        tlm_vec_gather(&x, side, &c, out.p + (pos - start), len);
        pos += len;
        CHECK(cur_pos(&v, &c) == pos, "gather cursor at %zu, expected %zu",
              cur_pos(&v, &c), pos);
    }
    CMP(out.p, stream + start, total - start, "gather");
    GB_CHECK(&out, "gather out");
    GB_CHECK(mb, "gather source");
    tt_gbuf_free(&out);

    /* Scatter (or scatter-acc) from the same cursor. */
    tt_gbuf_t in;
    gb_alloc(&in, total, 43);
    uint8_t a[16];
    if (acc) {
        rand_scale(type, a, rnd(2));
        for (size_t i = 0; i < v.n; i++)
            rand_elems(type, mb->p + moff[i], v.len[i] / es);
        rand_elems(type, in.p, total / es);
    } else {
        tt_pat_fill(in.p, total, 44, 0);
    }
    memcpy(img, mb->p, msize);
    for (size_t i = 0; i < v.n; i++) {
        size_t lo = v.prefix[i] > start ? 0 : start - v.prefix[i];
        if (lo >= v.len[i])
            continue;
        if (acc)
            ref_acc(type, img + moff[i] + lo, in.p + v.prefix[i] + lo,
                    (v.len[i] - lo) / es, a);
        else
            memcpy(img + moff[i] + lo, in.p + v.prefix[i] + lo, v.len[i] - lo);
    }
    c = c0;
    pos = start;
    while (pos < total) {
        size_t len = es * (size_t)rnd_range(1, rnd(2) ? 10 : total / es);
        if (len > total - pos)
            len = total - pos;
        if (acc)
            tlm_vec_scatter_acc(&x, side, &c, in.p + pos, len, type, a);
        else
            tlm_vec_scatter(&x, side, &c, in.p + pos, len);
        pos += len;
        CHECK(cur_pos(&v, &c) == pos, "scatter cursor at %zu, expected %zu",
              cur_pos(&v, &c), pos);
    }
    CMP(mb->p, img, msize, acc ? "scatter_acc" : "scatter");
    GB_CHECK(mb, "scatter target");
    GB_CHECK(&in, "scatter source");
    tt_gbuf_free(&in);

    /* The wire list: whole records from a random segment on. */
    tlm_vec_cursor_t e = {v.n ? (size_t)rnd(v.n + 1) : 0, 0};
    size_t first = e.seg;
    uint8_t lbuf[16 * MAXSEG + 64];
    size_t used = 0;
    while (e.seg < v.n) {
        size_t room = (size_t)rnd(16 * 6 + 1), before = e.seg;
        memset(lbuf + used, 0xd7, sizeof lbuf - used);
        if (room > sizeof lbuf - used)
            room = sizeof lbuf - used;
        size_t w = tlm_vec_encode_list(&x, &e, lbuf + used, room);
        CHECK(w % 16 == 0 && w <= room && w / 16 == e.seg - before,
              "encode_list wrote %zu of room %zu, cursor %zu -> %zu", w, room,
              before, e.seg);
        CHECK(room < 16 || w > 0, "encode_list made no progress");
        CHECK(e.off == 0, "encode_list cursor off %zu", e.off);
        for (size_t i = used + w; i < sizeof lbuf; i++)
            CHECK(lbuf[i] == 0xd7, "encode_list wrote past its records");
        used += w;
    }
    CHECK(used == 16 * (v.n - first),
          "encode_list wrote %zu bytes for %zu "
          "segments",
          used, v.n - first);
    for (size_t i = first; i < v.n; i++) {
        uint64_t r[2];
        memcpy(r, lbuf + 16 * (i - first), 16);
        CHECK(r[0] == (uint64_t)(uintptr_t)v.rp[i] && r[1] == v.len[i],
              "record %zu: {%#" PRIx64 ", %" PRIu64 "}", i, r[0], r[1]);
    }
    CHECK(tlm_vec_encode_list(&x, &e, lbuf, sizeof lbuf) == 0,
          "encode_list past the end wrote records");

    /* The decoded list gathers what the triples gather. */
    if (form != 2 && total) {
        tlm_vec_t rx;
        memset(&rx, 0, sizeof rx);
        rx.n = v.n;
        rx.recs = (const uint64_t *)(const void *)v.recs;
        tlm_vec_cursor_t c1 = {0, 0}, c2 = {0, 0};
        uint8_t *g1 = xmalloc(total), *g2 = xmalloc(total);
        tlm_vec_gather(&x, REMOTE, &c1, g1, total);
        tlm_vec_gather(&rx, REMOTE, &c2, g2, total);
        CMP(g2, g1, total, "gather through records");
        free(g1);
        free(g2);
    }
    free(stream);
    free(img);
    free_vlist(&v);
}

static void test_vec_total_errors(void)
{
    char b1[8], b2[8];
    void *l[3] = {b1, b2, b1}, *r[3] = {b2, b1, b2};
    void *ln[3] = {b1, NULL, b1};
    tlm_vec_t x;
    size_t t;
#define TOTAL_FAILS(why)                                                       \
    do {                                                                       \
        t = 777;                                                               \
        snprintf(what, sizeof what, "tlm_vec_total: %s", why);                 \
        CHECK(tlm_vec_total(&x, &t) == -1, "accepted");                        \
        CHECK(t == 777, "output set on error");                                \
    } while (0)
#define TOTAL_IS(why, want)                                                    \
    do {                                                                       \
        snprintf(what, sizeof what, "tlm_vec_total: %s", why);                 \
        CHECK(tlm_vec_total(&x, &t) == 0 && t == (want), "gave %zu", t);       \
    } while (0)

    memset(&x, 0, sizeof x);
    TOTAL_IS("empty list, no arrays", 0);
    x.n = 3;
    TOTAL_FAILS("giov arrays NULL");
    x.local = l;
    TOTAL_FAILS("giov remote array NULL");
    x.remote = r;
    x.bytes = 8;
    TOTAL_IS("giov", 24);
    x.bytes = 0;
    x.local = ln;
    TOTAL_IS("giov NULL address, 0 bytes", 0);
    x.bytes = 8;
    TOTAL_FAILS("giov NULL local address");
    x.local = l;
    x.remote = ln;
    TOTAL_FAILS("giov NULL remote address");
    void *hi[3] = {(void *)(UINTPTR_MAX - 3), b1, b2};
    x.remote = hi;
    TOTAL_FAILS("giov wrapping range");
    x.remote = r;
    x.bytes = SIZE_MAX / 2;
    void *lo[3] = {(void *)4096, (void *)8192, (void *)4096};
    x.local = lo;
    x.remote = lo;
    TOTAL_FAILS("giov sum overflows");

    tlm_vec_seg3_t s[3] = {{b1, b2, 8}, {NULL, NULL, 0}, {b2, b1, 5}};
    memset(&x, 0, sizeof x);
    x.n = 3;
    x.segs = s;
    TOTAL_IS("triples with an empty NULL segment", 13);
    s[1].local = b1;
    s[1].bytes = 1;
    TOTAL_FAILS("triple NULL remote");
    s[1].remote = b1;
    s[1].local = NULL;
    TOTAL_FAILS("triple NULL local");
    s[1].local = (void *)(UINTPTR_MAX - 6);
    s[1].bytes = 7;
    TOTAL_IS("triple ending at the top of the address space", 20);
    s[1].bytes = 8;
    TOTAL_FAILS("triple wrapping range");
    s[1] = (tlm_vec_seg3_t){(void *)1, (void *)1, SIZE_MAX - 2};
    TOTAL_FAILS("triple sum overflows");

    uint64_t rec[6] = {(uintptr_t)b1, 8, 0, 0, (uintptr_t)b2, 3};
    memset(&x, 0, sizeof x);
    x.n = 3;
    x.recs = rec;
    TOTAL_IS("records", 11);
    rec[3] = 4;
    TOTAL_FAILS("record NULL address");
    rec[2] = UINT64_MAX - 2;
    TOTAL_FAILS("record wrapping range");
    rec[2] = 1;
    rec[3] = UINT64_MAX - 5;
    TOTAL_FAILS("record sum overflows");
    snprintf(what, sizeof what, "tlm_vec_total: NULL");
    CHECK(tlm_vec_total(NULL, &t) == -1 && tlm_vec_total(&x, NULL) == -1,
          "NULL accepted");
#undef TOTAL_FAILS
#undef TOTAL_IS
}

void test_vec(void)
{
    test_vec_total_errors();
    for (int it = 0; it < 300; it++)
        test_vec_one(it % 3, it / 3);
}

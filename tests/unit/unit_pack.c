/* unit_pack.c - unit: the pack engine (src/pack).  Strided pack / unpack /
 * unpack-accumulate of random shapes (0-4 levels, some 8; runs of 1..4096+
 * bytes; strides contiguous on one side, both or neither; zero counts and
 * counts of 1) against a naive nested loop over the user's description,
 * for the whole stream and for fragments in and out of order, with guard
 * bytes around every buffer; normalisation and extent on hand-made and
 * random shapes; the wire form (round trip, every truncation, malformed
 * words, 100k random byte strings); the accumulate kernels of every type
 * against a serial loop written with the same expressions; vector gather /
 * scatter / scatter-acc / list encoding in the three list forms from random
 * cursors; tlm_vec_total's error cases.  UNIT_SEED=<n> changes the seed.
 * This file: the state, the checks, the reference, random shapes and
 * fragments, and main; the cases are in unit_pack_strided.c,
 * unit_pack_acc.c and unit_pack_vec.c (unit_pack.h). */
#include "unit_pack.h"

uint64_t seed;
tt_rng_t rng;
long nchecks;
long nempty, nshapes, nfrags, nlevels[MAXL + 1], naccepted;
double nbytes;
char what[1024];

void fail_at(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr,
            "FAIL %s:%d: %s\n  case: %s\n  seed 0x%" PRIx64
            " (rerun with UNIT_SEED=0x%" PRIx64 ")\n",
            strrchr(file, '/') ? strrchr(file, '/') + 1 : file, line, msg,
            what, seed, seed);
    exit(1);
}

uint64_t rnd(uint64_t n) /* [0, n), n > 0 */ { return tt_rng_below(&rng, n);
}

uint64_t rnd_range(uint64_t lo, uint64_t hi)
{
    return tt_rng_range(&rng, lo, hi);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "FAIL: malloc(%zu)\n", n);
        exit(1);
    }
    return p;
}

/* A buffer with guards; the usable part starts off (0..63) bytes past a
 * 64-byte boundary. */
void gb_alloc(tt_gbuf_t *b, size_t n, uint64_t key)
{
    tt_gbuf_alloc(b, n, (size_t)rnd(64), key);
}

void gb_check(const tt_gbuf_t *b, const char *name, const char *file,
              int line)
{
    nchecks++;
    if (tt_gbuf_check(b, name) != 0)
        fail_at(file, line, "%s: guard bytes changed", name);
}

void cmp_at(const void *got, const void *want, size_t n, const char *name,
            const char *file, int line)
{
    nchecks++;
    if (tt_cmp(got, want, n, name) != 0)
        fail_at(file, line, "%s: wrong bytes", name);
}

/* ---- the user's description and the naive reference ------------------- */

void describe(const ushape_t *u, const char *tag)
{
    int k = snprintf(what, sizeof what, "%s levels %d count {", tag, u->levels);
    for (int i = 0; i <= u->levels && k < 900; i++)
        k += snprintf(what + k, sizeof what - (size_t)k, "%s%zu", i ? "," : "",
                      u->count[i]);
    for (int s = 0; s < 2 && k < 900; s++) {
        k += snprintf(what + k, sizeof what - (size_t)k, "} %s {",
                      s ? "remote" : "local");
        for (int i = 0; i < u->levels && k < 900; i++)
            k += snprintf(what + k, sizeof what - (size_t)k, "%s%zu",
                          i ? "," : "", u->stride[s][i]);
    }
    if (k < 1000)
        snprintf(what + k, sizeof what - (size_t)k, "}");
}

size_t *roffs;
static size_t roffs_cap;

/* Offsets of every run on one side in stream order, by nested loops over
 * the description as given (dimension 1 fastest); returns the count. */
size_t ref_runs(const ushape_t *u, int side)
{
    size_t n = 1, idx[MAXL + 1] = {0};
    for (int k = 0; k <= u->levels; k++)
        if (u->count[k] == 0)
            return 0;
    for (int k = 1; k <= u->levels; k++)
        n *= u->count[k];
    if (n > roffs_cap) {
        free(roffs);
        roffs_cap = n;
        roffs = xmalloc(n * sizeof *roffs);
    }
    for (size_t r = 0; r < n; r++) {
        size_t o = 0;
        for (int k = 1; k <= u->levels; k++)
            o += idx[k] * u->stride[side][k - 1];
        roffs[r] = o;
        for (int k = 1; k <= u->levels; k++) {
            if (++idx[k] < u->count[k])
                break;
            idx[k] = 0;
        }
    }
    return n;
}

size_t ref_total(const ushape_t *u)
{
    size_t t = 1;
    for (int k = 0; k <= u->levels; k++)
        t *= u->count[k];
    return t;
}

size_t ref_extent(const ushape_t *u, int side)
{
    size_t n = ref_runs(u, side), e = 0;
    for (size_t r = 0; r < n; r++)
        if (roffs[r] + u->count[0] > e)
            e = roffs[r] + u->count[0];
    return e;
}

/* ---- random shapes ------------------------------------------------------ */

size_t pick_run(void)
{
    static const size_t runs[] = {1,  1,  2,  3,  4,  7,  8,  8,   12,  16,
                                  16, 24, 32, 63, 64, 64, 65, 100, 4096};
    switch (rnd(4)) {
    case 0:
        return (size_t)rnd_range(1, 300);
    default:
        return runs[rnd(sizeof runs / sizeof runs[0])];
    }
}

static size_t pick_gap(size_t run)
{
    size_t cap = run < 64 ? 64 : run;
    switch (rnd(3)) {
    case 0:
        return (size_t)rnd_range(1, 8);
    case 1:
        return (size_t)rnd_range(1, 64);
    default:
        return (size_t)rnd_range(1, cap);
    }
}

/* Counts with a product of at most max_total (before zero counts), strides
 * that never overlap runs: per dimension both sides continue the block
 * below (mergeable, pmerge percent), one side does, or neither; a
 * dimension of count 1 (one in p1) gets a junk stride.  Retries until each
 * side's extent fits. */
int pmerge = 15, p1 = 6;

void gen_shape(ushape_t *u, int levels, size_t run, size_t max_total,
               size_t max_extent, size_t max_count)
{
    for (;;) {
        memset(u, 0, sizeof *u);
        u->levels = levels;
        u->count[0] = run;
        size_t total = run;
        for (int k = 1; k <= levels; k++) {
            size_t room = max_total / total, c;
            if (room < 2 || rnd((uint64_t)p1) == 0)
                c = 1;
            else
                c = (size_t)rnd_range(2, room < max_count ? room : max_count);
            u->count[k] = c;
            total *= c;
        }
        size_t ext[2] = {run, run}, last_s[2] = {1, 1}, last_c = run;
        for (int k = 1; k <= levels; k++) {
            size_t c = u->count[k];
            if (c == 1) {
                for (int s = 0; s < 2; s++)
                    u->stride[s][k - 1] = rnd(4) == 0
                                              ? (size_t)tt_rng_next(&rng)
                                              : (size_t)rnd(1000);
                continue;
            }
            int mode = (int)rnd(100) - pmerge;
            for (int s = 0; s < 2; s++) {
                bool cont = mode < 0 || (mode < 15 && s == LOCAL) ||
                            (mode < 30 && mode >= 15 && s == REMOTE);
                size_t st;
                if (cont)
                    st = last_s[s] * last_c; /* merges on this side */
                else if (mode >= 30 && mode < 40)
                    st = ext[s]; /* touches the block below, no merge
                                    unless that block is contiguous */
                else
                    st = ext[s] + pick_gap(run);
                u->stride[s][k - 1] = st;
                ext[s] += (c - 1) * st;
                last_s[s] = st;
            }
            last_c = c;
        }
        if (ext[0] <= max_extent && ext[1] <= max_extent)
            break;
    }
    if (rnd(30) == 0)
        u->count[rnd((uint64_t)levels + 1)] = 0;
}

/* ---- fragments ---------------------------------------------------------- */

/* Cuts [0, total) into fragments of random sizes, multiples of unit
 * (total is one too); returns how many. */
size_t make_frags(size_t total, size_t unit, frag_t *f)
{
    size_t n = 0, off = 0, units = total / unit;
    if (total == 0)
        return 0;
    size_t base = units / (size_t)rnd_range(1, 64);
    if (rnd(4) == 0)
        base = (size_t)rnd_range(1, 20); /* tiny: cuts through runs */
    if (base == 0)
        base = 1;
    while (off < units) {
        size_t len = (size_t)rnd_range(1, 2 * base);
        if (len > units - off || n == MAXFRAG - 1)
            len = units - off;
        f[n].off = off * unit;
        f[n].len = len * unit;
        n++;
        off += len;
    }
    return n;
}

void shuffle(frag_t *f, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rnd(i);
        frag_t t = f[i - 1];
        f[i - 1] = f[j];
        f[j] = t;
    }
}

frag_t frags[MAXFRAG];

int main(void)
{
    const char *s = getenv("UNIT_SEED");
    seed = s && *s ? strtoull(s, NULL, 0) : 0x5eed9ac4ull;
    printf("unit_pack: seed 0x%" PRIx64 " (set UNIT_SEED to change)\n", seed);
    fflush(stdout);
    tt_rng_seed(&rng, seed);
    double t0 = tt_now();

    test_normalize_cases();
    test_shapes();
    test_wire_malformed();
    test_wire_fuzz();
    test_acc_kernels();
    test_unpack_acc();
    test_vec();

    free(roffs);
    printf("strided: %ld shapes (normalised levels", nshapes);
    for (int k = 0; k <= MAXL; k++)
        printf(" %d:%ld", k, nlevels[k]);
    printf(
        "), %ld empty, %.1f MB, %ld packed fragments; wire fuzz: %ld of 100000 "
        "accepted\n",
        nempty, nbytes / 1e6, nfrags, naccepted);
    printf("PASS: %ld checks in %.1f s\n", nchecks, tt_now() - t0);
    return 0;
}

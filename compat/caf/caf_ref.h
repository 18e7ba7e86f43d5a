/* caf_ref.h - the reference chains of the *_by_ref calls, shared by the
 * caller's side (caf_byref.c) and the owning image's (caf_ref.c): wire
 * form, operations, answers (not installed). */
#ifndef TLM_CAF_REF_H
#define TLM_CAF_REF_H

#include "caf_internal.h"

enum { TLM_CAF_REF_OP_GET = 0, TLM_CAF_REF_OP_SEND = 1,
       TLM_CAF_REF_OP_PRESENT = 2 };
enum { TLM_CAF_REF_OK = 0, TLM_CAF_REF_ABSENT = 1, TLM_CAF_REF_ERR = 2 };

/* What a chain names: rank and extents of the result (references with
 * SINGLE subscripts leave no dimension), element size, element count. */
typedef struct {
    int rank;
    size_t ext[TLM_CAF_MAX_DIM];
    size_t elem, count;
} tlm_caf_rshape_t;

/* Encode refs into int64 words (out NULL: only count them). */
size_t tlm_caf_ref_encode(const tlm_caf_ref_t *refs, int64_t *out);
/* Words of an encoded chain. */
size_t tlm_caf_ref_words(const int64_t *refs);
/* On the owning image: walk the encoded chain from token t and get
 * (*out: a new buffer of the elements), send (count elements of data, or
 * one repeated) or test presence.  Returns TLM_CAF_REF_OK, _ABSENT
 * (presence only) or _ERR with a message in err. */
int tlm_caf_ref_apply(tlm_caf_token_t *t, int op, const int64_t *refs,
                      const char *data, size_t count, tlm_caf_rshape_t *sh,
                      char **out, char *err, size_t errcap);

/* On the caller: when the chain goes through no allocatable or pointer
 * component of a coarray every image allocated alike (a collective
 * token), its elements are at the same offsets on every image: walk it
 * here and return this image's addresses of them (*addrs, a new array)
 * and the shape.  Returns 0, or -1 when the chain needs the owner. */
int tlm_caf_ref_local(tlm_caf_token_t *t, const int64_t *refs,
                      char ***addrs, tlm_caf_rshape_t *sh);

#endif /* TLM_CAF_REF_H */

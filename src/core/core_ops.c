/* core_ops.c - the table of operations in flight (handles of nb calls, gets
 * waiting for data): chunks that never move, a free list, generations so a
 * spent handle is recognised, and telemem_wait/telemem_test. */
#include <stdlib.h>
#include <string.h>

#include "core/core_ops.h"
#include "core/core_wait.h"

static int grow(void)
{
    uint32_t c = tlm_core.nop_chunks;
    /* A wire id carries TLM_OP_ID_BITS of slot: a larger table would let
     * one op's answer complete another (docs/hardening.md, limits). */
    if ((uint64_t)(c + 1) * TLM_OP_CHUNK > (uint64_t)TLM_OP_MAX + 1) {
        tlm_error("more than %u operations in flight (handles not yet "
                  "waited for, gets): complete some first", TLM_OP_MAX);
        return TELEMEM_ERR_NO_MEMORY;
    }
    /* an array of chunk pointers: sizeof(*nc) is meant
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    tlm_op_t **nc = realloc(tlm_core.op_chunks, (c + 1) * sizeof(*nc));
    if (!nc)
        return TELEMEM_ERR_NO_MEMORY;
    tlm_core.op_chunks = nc;
    tlm_op_t *chunk = calloc(TLM_OP_CHUNK, sizeof(tlm_op_t));
    if (!chunk)
        return TELEMEM_ERR_NO_MEMORY;
    nc[c] = chunk;
    tlm_core.nop_chunks = c + 1;
    /* Index 0 stays unused: it is TELEMEM_HANDLE_NULL. */
    for (uint32_t i = TLM_OP_CHUNK; i-- > 0;) {
        uint32_t idx = c * TLM_OP_CHUNK + i;
        if (idx == 0)
            continue;
        chunk[i].gen = 1;
        chunk[i].next_free = tlm_core.op_free;
        tlm_core.op_free = idx;
    }
    return TELEMEM_OK;
}

int tlm_core_op_alloc(uint32_t *idx_p)
{
    if (tlm_core.op_free == 0) {
        int rc = grow();
        if (rc != TELEMEM_OK) {
            if (tlm_core.nop_chunks * TLM_OP_CHUNK <= TLM_OP_MAX)
                tlm_error("no memory for more operations in flight (%u)",
                          tlm_core.nop_chunks * TLM_OP_CHUNK);
            return rc;
        }
    }
    uint32_t idx = tlm_core.op_free;
    tlm_op_t *op = tlm_core_op(idx);
    tlm_core.op_free = op->next_free;
    op->state = TLM_OP_ACTIVE;
    op->status = TELEMEM_OK;
    op->nbi = false;
    op->got = 0;
    op->unpack = TLM_UNPACK_COPY;
    op->src.owned = NULL;
    op->dst = NULL;
    op->result = NULL;
    *idx_p = idx;
    return TELEMEM_OK;
}

void tlm_core_op_free(uint32_t idx)
{
    tlm_op_t *op = tlm_core_op(idx);
    op->state = TLM_OP_FREE;
    op->gen++;
    if (op->gen == 0)
        op->gen = 1;
    op->next_free = tlm_core.op_free;
    tlm_core.op_free = idx;
}

tlm_op_t *tlm_core_op_lookup(uint32_t idx, int kind)
{
    if (idx == 0 || idx / TLM_OP_CHUNK >= tlm_core.nop_chunks)
        return NULL;
    tlm_op_t *op = tlm_core_op(idx);
    if (op->state != TLM_OP_ACTIVE || op->kind != kind)
        return NULL;
    return op;
}

void tlm_core_op_complete(uint32_t idx, int status)
{
    tlm_op_t *op = tlm_core_op(idx);
    op->status = status;
    free(op->src.owned); /* a copied vector list */
    op->src.owned = NULL;
    if (op->nbi) {
        tlm_core_peer_t *p = &tlm_core.peers[op->rank];
        TLM_RLX_SET(p->nbi_gets, p->nbi_gets - 1);
        if (status != TELEMEM_OK && p->error == TELEMEM_OK)
            p->error = status;
        tlm_core_op_free(idx);
    } else {
        op->state = TLM_OP_DONE;
    }
}

void tlm_core_ops_fini(void)
{
    /* Ops abandoned by a failed wait (a dead peer, a timeout) may still own
     * a copied vector list. */
    for (uint32_t c = 0; c < tlm_core.nop_chunks; c++) {
        for (uint32_t i = 0; i < TLM_OP_CHUNK; i++)
            free(tlm_core.op_chunks[c][i].src.owned);
        free(tlm_core.op_chunks[c]);
    }
    free(tlm_core.op_chunks);
    tlm_core.op_chunks = NULL;
    tlm_core.nop_chunks = 0;
    tlm_core.op_free = 0;
}

/* The op behind a handle, or NULL if the handle is spent / null. */
static tlm_op_t *handle_op(const telemem_handle_t *h)
{
    uint32_t idx = h->index_;
    if (idx == 0 || idx / TLM_OP_CHUNK >= tlm_core.nop_chunks)
        return NULL;
    tlm_op_t *op = tlm_core_op(idx);
    if (op->gen != h->generation_ || op->state == TLM_OP_FREE)
        return NULL;
    return op;
}

static int spend(telemem_handle_t *h, tlm_op_t *op)
{
    int status = op->status;
    tlm_core_op_free(h->index_);
    *h = TELEMEM_HANDLE_NULL;
    return status;
}

int telemem_wait(telemem_handle_t *h)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!h)
        return TELEMEM_ERR_INVALID_ARG;
    tlm_op_t *op = handle_op(h);
    if (!op)
        return TELEMEM_OK;
    tlm_wait_t w;
    tlm_core_wait_init(&w, op->rank);
    while (op->state != TLM_OP_DONE) {
        rc = tlm_core_wait_step(&w);
        if (rc != TELEMEM_OK)
            return rc;
    }
    return spend(h, op);
}

int telemem_test(telemem_handle_t *h, int *done)
{
    TLM_API_GUARD();
    int rc = tlm_core_check_comm();
    if (rc != TELEMEM_OK)
        return rc;
    if (!h || !done)
        return TELEMEM_ERR_INVALID_ARG;
    tlm_op_t *op = handle_op(h);
    if (op && op->state != TLM_OP_DONE) {
        rc = tlm_core_progress();
        if (rc < 0)
            return rc;
    }
    if (!op) {
        *done = 1;
        return TELEMEM_OK;
    }
    if (op->state != TLM_OP_DONE) {
        *done = 0;
        return TELEMEM_OK;
    }
    *done = 1;
    return spend(h, op);
}

/* shm_node.h - the shm transport's node area (transport.h, node_base):
 * one shared-memory object per node, created by the node's lowest rank
 * and mapped by every rank of the node at open (shm_node.c). */
#ifndef TLM_SHM_NODE_H
#define TLM_SHM_NODE_H

#include <stddef.h>

#include "backends/transport.h"

typedef struct tlm_shm_node {
    void *base;      /* this process's mapping, NULL: none */
    size_t len;
    char name[128];  /* the object's name until it is unlinked */
} tlm_shm_node_t;

/* The node's lowest rank: create the object of p->node_bytes, map it and
 * publish its name (before the fence after which peers map it). */
int tlm_shm_node_create(const tlm_transport_params_t *p,
                        tlm_shm_node_t *nd);
/* A node of one rank: the area is this process's own memory (the same
 * offer on every node, so that every rank of the job lays its
 * collectives out alike). */
int tlm_shm_node_private(const tlm_transport_params_t *p,
                         tlm_shm_node_t *nd);
/* Every other rank of the node, after that fence: map the object leader
 * published. */
int tlm_shm_node_map(const tlm_transport_params_t *p, int leader,
                     tlm_shm_node_t *nd);
/* After every rank of the node has mapped it: no name left in /dev/shm. */
void tlm_shm_node_unlink(tlm_shm_node_t *nd);
void tlm_shm_node_unmap(tlm_shm_node_t *nd);

#endif

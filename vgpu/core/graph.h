// Graph structures shared by graph.c (building) and graph_exec.c
// (instantiating, updating, launching).
#ifndef VGPU_GRAPH_H_
#define VGPU_GRAPH_H_

#include "internal.h"

typedef struct vgpu_graph vgpu_graph;

// A node: its work and the indexes of the nodes it depends on. Nodes only
// depend on nodes created before them, so creation order is a valid
// dependency order.
typedef struct vgpu_node {
  vgpu_object base;
  vgpu_graph* graph;  // borrowed: a node handle dies with its graph
  uint32_t index;
  vgpu_work work;
  uint32_t* deps;
  uint32_t dep_count;
} vgpu_node;

struct vgpu_graph {
  vgpu_object base;
  pthread_mutex_t mu;  // guards the node list
  vgpu_node** nodes;   // each holds the registry's reference
  uint32_t count, cap;
};

vgpu_status vgpu_graph_get(uint64_t handle, vgpu_graph** out);

#endif  // VGPU_GRAPH_H_

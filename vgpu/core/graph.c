// Graphs: building a dependency graph of nodes.
//
// A graph is a template: instantiating copies it (graph_exec.c), so a graph
// can be edited or destroyed while its executable graphs run. Node
// parameters are checked when a node is added (kernel arguments are captured
// then, as the vendors do) and memory ranges again at every launch.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

static void node_free(vgpu_object* obj) {
  vgpu_node* n = (vgpu_node*)obj;
  vgpu_work_clear(&n->work);
  free(n->deps);
  free(n);
}

static void graph_free(vgpu_object* obj) {
  vgpu_graph* g = (vgpu_graph*)obj;
  free(g->nodes);
  pthread_mutex_destroy(&g->mu);
  free(g);
}

vgpu_status vgpu_graph_get(uint64_t handle, vgpu_graph** out) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_GRAPH, &obj);
  *out = (vgpu_graph*)obj;
  return st;
}

vgpu_status vgpu_graph_create(uint64_t* out) {
  vgpu_graph* g = calloc(1, sizeof(*g));
  if (g == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  vgpu_object_init(&g->base, VGPU_KIND_GRAPH, graph_free);
  pthread_mutex_init(&g->mu, NULL);
  vgpu_status st = vgpu_handle_register(&g->base);
  if (st != VGPU_OK) {
    vgpu_object_release(&g->base);
    return st;
  }
  *out = g->base.handle;
  return VGPU_OK;
}

vgpu_status vgpu_graph_destroy(uint64_t handle) {
  vgpu_graph* g = NULL;
  vgpu_status st = vgpu_graph_get(handle, &g);
  if (st != VGPU_OK)
    return st;
  pthread_mutex_lock(&g->mu);
  vgpu_node** nodes = g->nodes;
  uint32_t count = g->count;
  g->nodes = NULL;
  g->count = g->cap = 0;
  pthread_mutex_unlock(&g->mu);
  for (uint32_t i = 0; i < count; ++i)
    vgpu_handle_unregister(&nodes[i]->base);
  free(nodes);
  vgpu_handle_unregister(&g->base);
  vgpu_object_release(&g->base);
  return VGPU_OK;
}

// Fills |w| from |desc|, checking the parameters.
static vgpu_status work_from_desc(const vgpu_node_desc* desc, vgpu_work* w) {
  memset(w, 0, sizeof(*w));
  switch (desc->type) {
    case VGPU_NODE_EMPTY:
      w->type = VGPU_WORK_EMPTY;
      return VGPU_OK;
    case VGPU_NODE_COPY:
      w->type = VGPU_WORK_COPY;
      w->copy = desc->copy;
      return vgpu_copy_check(&w->copy, NULL);
    case VGPU_NODE_FILL:
      w->type = VGPU_WORK_FILL;
      w->fill = desc->fill;
      return vgpu_fill_check(&w->fill, NULL);
    case VGPU_NODE_KERNEL:
      w->type = VGPU_WORK_KERNEL;
      return vgpu_launch_create(&desc->launch, &w->launch);
    case VGPU_NODE_HOST:
      if (desc->host.invoke == NULL || desc->host.fn == NULL)
        return VGPU_ERR_INVALID_VALUE;
      w->type = VGPU_WORK_HOST;
      w->host = desc->host;
      return VGPU_OK;
  }
  return VGPU_ERR_INVALID_VALUE;
}

// Resolves |deps| to node indexes of |g|. Called with g->mu held.
static vgpu_status resolve_deps_locked(vgpu_graph* g, const uint64_t* deps,
                                       size_t count, uint32_t* out) {
  for (size_t i = 0; i < count; ++i) {
    vgpu_object* obj = NULL;
    vgpu_status st = vgpu_handle_lookup(deps[i], VGPU_KIND_NODE, &obj);
    if (st != VGPU_OK)
      return st;
    vgpu_node* n = (vgpu_node*)obj;
    bool ours = n->graph == g;
    out[i] = n->index;
    vgpu_object_release(obj);
    if (!ours) {
      return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                         "dependency 0x%" PRIx64 " belongs to another graph",
                         deps[i]);
    }
    for (size_t j = 0; j < i; ++j) {
      if (out[j] == out[i])
        return VGPU_ERR_INVALID_VALUE;  // duplicate
    }
  }
  return VGPU_OK;
}

vgpu_status vgpu_graph_add_node(uint64_t graph, const uint64_t* deps,
                                size_t dep_count, const vgpu_node_desc* desc,
                                uint64_t* out) {
  if (out == NULL || desc == NULL || (dep_count > 0 && deps == NULL) ||
      dep_count > UINT32_MAX)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_graph* g = NULL;
  vgpu_status st = vgpu_graph_get(graph, &g);
  if (st != VGPU_OK)
    return st;
  vgpu_node* n = calloc(1, sizeof(*n));
  uint32_t* dep_idx = calloc(dep_count ? dep_count : 1, sizeof(uint32_t));
  if (n == NULL || dep_idx == NULL) {
    free(n);
    free(dep_idx);
    vgpu_object_release(&g->base);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  vgpu_object_init(&n->base, VGPU_KIND_NODE, node_free);
  n->graph = g;
  n->deps = dep_idx;
  n->dep_count = (uint32_t)dep_count;
  st = work_from_desc(desc, &n->work);
  if (st != VGPU_OK)
    goto fail_node;

  pthread_mutex_lock(&g->mu);
  st = resolve_deps_locked(g, deps, dep_count, dep_idx);
  if (st == VGPU_OK && g->count == g->cap) {
    uint32_t cap = g->cap ? g->cap * 2 : 16;
    vgpu_node** nodes = realloc(g->nodes, cap * sizeof(*nodes));
    if (nodes == NULL) {
      st = VGPU_ERR_OUT_OF_MEMORY;
    } else {
      g->nodes = nodes;
      g->cap = cap;
    }
  }
  if (st == VGPU_OK)
    st = vgpu_handle_register(&n->base);
  if (st == VGPU_OK) {
    n->index = g->count;
    g->nodes[g->count++] = n;
    *out = n->base.handle;
  }
  pthread_mutex_unlock(&g->mu);
  if (st != VGPU_OK)
    goto fail_node;
  vgpu_object_release(&g->base);
  return VGPU_OK;

fail_node:
  vgpu_object_release(&n->base);
  vgpu_object_release(&g->base);
  return st;
}

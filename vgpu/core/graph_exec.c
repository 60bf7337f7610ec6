// Executable graphs: instantiate, update, launch, destroy.
//
// An executable graph points at an immutable, reference-counted state (the
// nodes' work and dependencies, copied from the graph). A launch takes a
// reference to the current state, so an update (which swaps in a new state)
// affects later launches only, and a destroyed executable graph stays valid
// for launches already queued.
//
// Launches of one executable graph are serialized, on one stream or many:
// each launch waits for the mark that the previous launch completes. That
// mark is completed by a MARK operation after the graph's, as its stream
// retires it (stream.c): once an event recorded after the launch, or the
// stream, is seen complete, destroy finds the launch done, and so does the
// stream's own destroy.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

struct vgpu_exec_state {
  atomic_int refs;
  uint32_t count;
  vgpu_work* works;
  uint32_t** deps;
  uint32_t* dep_counts;
};

typedef struct vgpu_exec {
  vgpu_object base;
  pthread_mutex_t mu;      // guards the fields below
  vgpu_exec_state* state;  // current state
  vgpu_mark* last;         // completed by the latest launch, or NULL
  uint64_t launches;
} vgpu_exec;

void vgpu_exec_state_release(vgpu_exec_state* s) {
  if (s == NULL)
    return;
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
    return;
  for (uint32_t i = 0; i < s->count; ++i) {
    vgpu_work_clear(&s->works[i]);
    free(s->deps[i]);
  }
  free(s->works);
  free(s->deps);
  free(s->dep_counts);
  free(s);
}

// Copies the nodes of |g| into a new state. Called with g->mu held.
static vgpu_status state_from_graph_locked(vgpu_graph* g,
                                           vgpu_exec_state** out) {
  vgpu_exec_state* s = calloc(1, sizeof(*s));
  if (s == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  atomic_init(&s->refs, 1);
  uint32_t n = g->count;
  s->works = calloc(n ? n : 1, sizeof(*s->works));
  s->deps = calloc(n ? n : 1, sizeof(*s->deps));
  s->dep_counts = calloc(n ? n : 1, sizeof(*s->dep_counts));
  if (s->works == NULL || s->deps == NULL || s->dep_counts == NULL) {
    vgpu_exec_state_release(s);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const vgpu_node* node = g->nodes[i];
    s->deps[i] =
        malloc((node->dep_count ? node->dep_count : 1) * sizeof(uint32_t));
    if (s->deps[i] == NULL) {
      vgpu_exec_state_release(s);
      return VGPU_ERR_OUT_OF_MEMORY;
    }
    memcpy(s->deps[i], node->deps, node->dep_count * sizeof(uint32_t));
    s->dep_counts[i] = node->dep_count;
    vgpu_work_copy_from(&s->works[i], &node->work);
    s->count = i + 1;
  }
  s->count = n;
  *out = s;
  return VGPU_OK;
}

static void exec_free(vgpu_object* obj) {
  vgpu_exec* e = (vgpu_exec*)obj;
  vgpu_exec_state_release(e->state);
  vgpu_mark_release(e->last);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

static vgpu_status exec_get(uint64_t handle, vgpu_exec** out) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_EXEC, &obj);
  *out = (vgpu_exec*)obj;
  return st;
}

vgpu_status vgpu_graph_instantiate(uint64_t graph, uint64_t* out) {
  if (out == NULL)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_graph* g = NULL;
  vgpu_status st = vgpu_graph_get(graph, &g);
  if (st != VGPU_OK)
    return st;
  vgpu_exec* e = calloc(1, sizeof(*e));
  if (e == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto out_graph;
  }
  vgpu_object_init(&e->base, VGPU_KIND_EXEC, exec_free);
  pthread_mutex_init(&e->mu, NULL);
  pthread_mutex_lock(&g->mu);
  st = state_from_graph_locked(g, &e->state);
  pthread_mutex_unlock(&g->mu);
  if (st == VGPU_OK)
    st = vgpu_handle_register(&e->base);
  if (st != VGPU_OK) {
    vgpu_object_release(&e->base);
    goto out_graph;
  }
  *out = e->base.handle;
out_graph:
  vgpu_object_release(&g->base);
  return st;
}

static bool same_deps(const vgpu_exec_state* a, const vgpu_exec_state* b,
                      uint32_t i) {
  if (a->dep_counts[i] != b->dep_counts[i])
    return false;
  for (uint32_t j = 0; j < a->dep_counts[i]; ++j) {
    bool found = false;
    for (uint32_t k = 0; k < b->dep_counts[i] && !found; ++k)
      found = a->deps[i][j] == b->deps[i][k];
    if (!found)
      return false;
  }
  return true;
}

// Compares the topology of |old| and |next|; returns the index of the
// first offending node in |*bad| (UINT32_MAX if none).
static vgpu_update_result compare_states(const vgpu_exec_state* old,
                                         const vgpu_exec_state* next,
                                         uint32_t* bad) {
  *bad = UINT32_MAX;
  if (old->count != next->count)
    return VGPU_UPDATE_TOPOLOGY_CHANGED;
  for (uint32_t i = 0; i < old->count; ++i) {
    *bad = i;
    if (old->works[i].type != next->works[i].type)
      return VGPU_UPDATE_NODE_TYPE_CHANGED;
    if (!same_deps(old, next, i))
      return VGPU_UPDATE_TOPOLOGY_CHANGED;
    const vgpu_fill* f0 = &old->works[i].fill;
    const vgpu_fill* f1 = &next->works[i].fill;
    // Like CUDA: only 1D memsets may change shape.
    if (old->works[i].type == VGPU_WORK_FILL &&
        (f0->height > 1 || f1->height > 1) &&
        (f0->elem != f1->elem || f0->width != f1->width ||
         f0->height != f1->height || f0->pitch != f1->pitch))
      return VGPU_UPDATE_PARAMETERS_CHANGED;
  }
  *bad = UINT32_MAX;
  return VGPU_UPDATE_OK;
}

vgpu_status vgpu_graph_exec_update(uint64_t exec, uint64_t graph,
                                   vgpu_update_result* result,
                                   uint64_t* error_node, uint64_t* error_from) {
  *result = VGPU_UPDATE_ERROR;
  *error_node = 0;
  *error_from = 0;
  vgpu_exec* e = NULL;
  vgpu_status st = exec_get(exec, &e);
  if (st != VGPU_OK)
    return st;
  vgpu_graph* g = NULL;
  st = vgpu_graph_get(graph, &g);
  if (st != VGPU_OK)
    goto out_exec;
  vgpu_exec_state* next = NULL;
  pthread_mutex_lock(&g->mu);
  st = state_from_graph_locked(g, &next);
  uint32_t bad = UINT32_MAX;
  if (st == VGPU_OK) {
    pthread_mutex_lock(&e->mu);
    *result = compare_states(e->state, next, &bad);
    if (*result == VGPU_UPDATE_OK) {
      vgpu_exec_state* old = e->state;
      e->state = next;
      next = old;  // released below
    }
    pthread_mutex_unlock(&e->mu);
    if (bad != UINT32_MAX && bad < g->count) {
      *error_node = g->nodes[bad]->base.handle;
      if (*result == VGPU_UPDATE_TOPOLOGY_CHANGED &&
          g->nodes[bad]->dep_count > 0)
        *error_from = g->nodes[g->nodes[bad]->deps[0]]->base.handle;
    }
    if (*result != VGPU_UPDATE_OK)
      st = VGPU_ERR_GRAPH_UPDATE;
  }
  pthread_mutex_unlock(&g->mu);
  vgpu_exec_state_release(next);
  vgpu_object_release(&g->base);
out_exec:
  vgpu_object_release(&e->base);
  return st;
}

vgpu_status vgpu_graph_launch(uint64_t exec, uint64_t stream, int ordinal) {
  vgpu_exec* e = NULL;
  vgpu_status st = exec_get(exec, &e);
  if (st != VGPU_OK)
    return st;
  vgpu_stream* s = NULL;
  st = vgpu_stream_get(stream, ordinal, &s);
  if (st != VGPU_OK)
    goto out_exec;
  vgpu_op* op = vgpu_op_new(VGPU_OP_GRAPH);
  vgpu_mark* done = vgpu_mark_create(s->device);
  if (op == NULL || done == NULL) {
    free(op);
    vgpu_mark_release(done);
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto out_stream;
  }
  pthread_mutex_lock(&e->mu);
  vgpu_exec_state* state = e->state;
  atomic_fetch_add(&state->refs, 1);
  pthread_mutex_unlock(&e->mu);
  op->graph = state;
  // Memory every node uses, checked now (it may have been freed since the
  // graph was built).
  for (uint32_t i = 0; i < state->count && st == VGPU_OK; ++i) {
    st = vgpu_work_uses(&state->works[i], &op->uses);
    if (st != VGPU_OK)
      vgpu_misuse(st,
                  "node %u of executable graph 0x%" PRIx64
                  " uses memory that is not valid any more",
                  i, exec);
  }
  if (st != VGPU_OK) {
    vgpu_op_free(op);
    vgpu_mark_release(done);
    goto out_stream;
  }
  // Serialize with the previous launch of this executable graph.
  pthread_mutex_lock(&e->mu);
  vgpu_mark* prev = e->last;
  e->last = done;
  op->graph_launch = ++e->launches;
  pthread_mutex_unlock(&e->mu);
  if (prev != NULL) {
    st = vgpu_stream_wait_mark(s, prev);
    vgpu_mark_release(prev);
  }
  if (st == VGPU_OK) {
    st = vgpu_stream_enqueue(s, op);
  } else {
    vgpu_op_free(op);
  }
  if (st == VGPU_OK)
    st = vgpu_stream_signal_mark(s, done);
  // Never leave the next launch waiting on a mark nobody completes.
  if (st != VGPU_OK)
    vgpu_mark_complete(done, VGPU_OK);
out_stream:
  vgpu_object_release(&s->base);
out_exec:
  vgpu_object_release(&e->base);
  return st;
}

vgpu_status vgpu_graph_exec_destroy(uint64_t exec) {
  vgpu_exec* e = NULL;
  vgpu_status st = exec_get(exec, &e);
  if (st != VGPU_OK)
    return st;
  pthread_mutex_lock(&e->mu);
  bool pending = e->last != NULL && !vgpu_mark_done(e->last);
  pthread_mutex_unlock(&e->mu);
  if (pending && vgpu_cfg.strict) {
    vgpu_object_release(&e->base);
    return vgpu_misuse(VGPU_ERR_IN_USE,
                       "destroying executable graph 0x%" PRIx64
                       " with a launch still pending; synchronize first",
                       exec);
  }
  vgpu_handle_unregister(&e->base);
  vgpu_object_release(&e->base);
  return VGPU_OK;
}

void vgpu_exec_state_run(vgpu_exec_state* s, uint64_t launch,
                         vgpu_status status) {
  if (vgpu_cfg.jitter_us == 0 || s->count < 2) {
    // Creation order is a dependency order.
    for (uint32_t i = 0; i < s->count; ++i)
      vgpu_work_run(&s->works[i], status);
    return;
  }
  // Shaking: a seeded random dependency order, so a missing edge shows.
  uint32_t n = s->count;
  uint32_t* missing = calloc(n, sizeof(uint32_t));  // unmet dependencies
  uint32_t* ready = calloc(n, sizeof(uint32_t));
  if (missing == NULL || ready == NULL) {
    free(missing);
    free(ready);
    for (uint32_t i = 0; i < n; ++i)
      vgpu_work_run(&s->works[i], status);
    return;
  }
  uint32_t ready_count = 0;
  for (uint32_t i = 0; i < n; ++i) {
    missing[i] = s->dep_counts[i];
    if (missing[i] == 0)
      ready[ready_count++] = i;
  }
  for (uint32_t step = 0; step < n && ready_count > 0; ++step) {
    uint32_t pick = (uint32_t)(vgpu_hash(0x96a9, launch, step) % ready_count);
    uint32_t node = ready[pick];
    ready[pick] = ready[--ready_count];
    vgpu_work_run(&s->works[node], status);
    for (uint32_t j = node + 1; j < n; ++j) {
      for (uint32_t k = 0; k < s->dep_counts[j]; ++k) {
        if (s->deps[j][k] == node && --missing[j] == 0)
          ready[ready_count++] = j;
      }
    }
  }
  free(missing);
  free(ready);
}

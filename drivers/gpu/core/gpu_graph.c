// Copyright 2026 The HAL Authors.
//
// The graph strategy: at end() a command buffer's recorded ops become a
// vendor graph, instantiated once and launched at every issue.
//
// Graph shape. Ops between two barriers are independent nodes (they may run
// concurrently, as the HAL allows). A barrier becomes an empty "join" node
// depending on every node since the previous join; every node after it
// depends on that join. So `fill A | barrier | copy A->B, fill C | barrier |
// ...` is fill -> join -> {copy, fill} -> join -> ...
//
// Reuse. A REUSABLE command buffer is launched again and again from the
// same executable graph. When it is re-recorded, the new graph is first
// offered to the existing executable as an in-place update
// (cuGraphExecUpdate / hipGraphExecUpdate); if the vendor refuses (another
// topology, or no update support), the executable is instantiated anew.
//
// Collectives. The collective library enqueues on a stream; a recording
// with collectives is split around them: each run of other ops between
// collectives is a graph of its own, and an issue launches the graphs and
// enqueues the collectives in recording order on the queue's stream (so a
// collective waits for everything before it and everything after waits for
// it, as a barrier on each side). Such a recording is instantiated anew at
// each re-record (no in-place update).
//
// Concurrent submissions of one command buffer (several queues at once) all
// launch the same executable: the vendors order launches of one executable
// graph behind each other, across streams, so they are correct and simply
// serialized. We rely on that rather than instantiating one executable per
// queue (documented in docs/drivers.md).

#include <string.h>

#include "gpu_core.h"

// A piece of a recording split around its collectives: ops [first, first +
// count) of the recording, a run of collectives or a graph of other ops.
typedef struct gpu_graph_segment_t {
  size_t first;
  size_t count;
  bool collectives;
  gpu_graph_t graph;      // NULL for collectives or no node ops
  gpu_graph_exec_t exec;  // likewise
} gpu_graph_segment_t;

typedef struct gpu_graph_state_t {
  gpu_buffer_set_t queue_ordered;  // first: gpu_recording_queue_ordered
  gpu_device_t* device;
  gpu_graph_t graph;      // the graph the executable was made from
  gpu_graph_exec_t exec;  // NULL when the recording has no ops
  // A recording with collectives (gpu_graph_is_split): its pieces,
  // launched in order (|graph| and |exec| are NULL then). |built| says they
  // were made.
  gpu_graph_segment_t* segments;
  size_t segment_count;
  bool built;
  // With queue-ordered buffers in |queue_ordered|, the graph is built at
  // the first issue, when their allocas were reached and their addresses
  // are known (under |build_mutex|: several queues may issue the command
  // buffer at once), and each issue checks that none was deallocated.
  // The executable of an earlier recording stays until then, so that the
  // build offers it the new graph as an update, as end() does.
  bool deferred;       // the recording uses queue-ordered buffers
  bool build_pending;  // deferred, and the first issue has not built yet
  pthread_mutex_t build_mutex;
  // hal_command_buffer_query_info(): how end() produced |exec|, counted.
  // Atomic: a query from any thread may meet the build of a first issue.
  _Atomic uint32_t instantiate_count;
  _Atomic uint32_t update_count;
} gpu_graph_state_t;

// Nodes since the last join, and the join itself.
typedef struct gpu_graph_builder_t {
  gpu_adapter_t* adapter;
  gpu_graph_t graph;
  gpu_graph_node_t join;  // NULL before the first barrier
  gpu_graph_node_t* pending;
  size_t pending_count;
  size_t pending_capacity;
  hal_allocator_t allocator;
} gpu_graph_builder_t;

static hal_status_t gpu_graph_builder_add_pending(gpu_graph_builder_t* builder,
                                                  gpu_graph_node_t node) {
  if (builder->pending_count == builder->pending_capacity) {
    size_t capacity =
        builder->pending_capacity ? builder->pending_capacity * 2 : 32;
    HAL_RETURN_IF_ERROR(hal_allocator_realloc(
        builder->allocator, capacity * sizeof(gpu_graph_node_t),
        (void**)&builder->pending));
    builder->pending_capacity = capacity;
  }
  builder->pending[builder->pending_count++] = node;
  return HAL_OK;
}

// Adds the node for |op| (not a barrier), depending on the current join.
static hal_status_t gpu_graph_builder_add_op(gpu_graph_builder_t* builder,
                                             const hal_op_t* op) {
  gpu_adapter_t* adapter = builder->adapter;
  const gpu_graph_node_t* dependencies = builder->join ? &builder->join : NULL;
  size_t dependency_count = builder->join ? 1 : 0;
  gpu_graph_node_t node = NULL;
  gpu_device_ptr_t target = 0, source = 0;
  switch (op->kind) {
    case HAL_OP_FILL:
      HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(
          op->fill.target, op->fill.target_offset, &target));
      HAL_RETURN_IF_ERROR(adapter->ops->graph_add_memset_node(
          adapter, builder->graph, dependencies, dependency_count, target,
          op->fill.pattern, op->fill.pattern_length,
          op->fill.length / op->fill.pattern_length, &node));
      break;
    case HAL_OP_UPDATE:
      // The source bytes live in the recording for as long as the graph.
      HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(
          op->update.target, op->update.target_offset, &target));
      HAL_RETURN_IF_ERROR(adapter->ops->graph_add_memcpy_node(
          adapter, builder->graph, dependencies, dependency_count, target,
          gpu_host_address(op->update.data), op->update.length, &node));
      break;
    case HAL_OP_COPY:
      HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(
          op->copy.target, op->copy.target_offset, &target));
      HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(
          op->copy.source, op->copy.source_offset, &source));
      HAL_RETURN_IF_ERROR(adapter->ops->graph_add_memcpy_node(
          adapter, builder->graph, dependencies, dependency_count, target,
          source, op->copy.length, &node));
      break;
    case HAL_OP_DISPATCH: {
      gpu_dispatch_args_t dispatch;
      HAL_RETURN_IF_ERROR(gpu_dispatch_prepare(op, &dispatch));
      HAL_RETURN_IF_ERROR(adapter->ops->graph_add_kernel_node(
          adapter, builder->graph, dependencies, dependency_count,
          &dispatch.launch, &node));
      break;
    }
    case HAL_OP_BARRIER:
      return hal_make_status(HAL_STATUS_INTERNAL, "barrier is not an op node");
    case HAL_OP_COLLECTIVE:
      return hal_make_status(HAL_STATUS_INTERNAL,
                             "a collective is not a graph node (the "
                             "recording is split around it)");
  }
  return gpu_graph_builder_add_pending(builder, node);
}

// A barrier: one empty node joining everything since the previous join.
static hal_status_t gpu_graph_builder_add_join(gpu_graph_builder_t* builder) {
  if (builder->pending_count == 0)
    return HAL_OK;  // nothing to order
  gpu_graph_node_t join = NULL;
  HAL_RETURN_IF_ERROR(builder->adapter->ops->graph_add_empty_node(
      builder->adapter, builder->graph, builder->pending,
      builder->pending_count, &join));
  builder->join = join;
  builder->pending_count = 0;
  return HAL_OK;
}

// Builds a graph of |ops| into |*out_graph| (NULL for no ops).
static hal_status_t gpu_graph_build(gpu_device_t* device, const hal_op_t* ops,
                                    size_t count, gpu_graph_t* out_graph) {
  *out_graph = NULL;
  size_t node_ops = 0;
  for (size_t i = 0; i < count; ++i)
    node_ops += ops[i].kind != HAL_OP_BARRIER;
  if (node_ops == 0)
    return HAL_OK;
  gpu_graph_builder_t builder;
  memset(&builder, 0, sizeof(builder));
  builder.adapter = device->adapter;
  builder.allocator = device->base.host_allocator;
  HAL_RETURN_IF_ERROR(
      device->adapter->ops->graph_create(device->adapter, &builder.graph));
  hal_status_t status = HAL_OK;
  for (size_t i = 0; i < count && status == HAL_OK; ++i) {
    status = ops[i].kind == HAL_OP_BARRIER
                 ? gpu_graph_builder_add_join(&builder)
                 : gpu_graph_builder_add_op(&builder, &ops[i]);
    if (status != HAL_OK) {
      status = hal_status_annotatef(status, "adding op %zu of %zu to a graph",
                                    i, count);
    }
  }
  hal_allocator_free(builder.allocator, builder.pending);
  if (status != HAL_OK) {
    gpu_device_note_release(device, device->adapter->ops->graph_destroy(
                                        device->adapter, builder.graph));
    return status;
  }
  *out_graph = builder.graph;
  return HAL_OK;
}

// Whether the recording (as collected at end()) has collectives, and so is
// split around them.
static bool gpu_graph_is_split(const gpu_graph_state_t* state) {
  return state->queue_ordered.channel_count > 0;
}

static void gpu_graph_segments_clear(gpu_graph_state_t* state) {
  gpu_device_t* device = state->device;
  gpu_adapter_t* adapter = device->adapter;
  for (size_t i = 0; i < state->segment_count; ++i) {
    gpu_graph_segment_t* segment = &state->segments[i];
    if (segment->exec) {
      gpu_device_note_release(
          device, adapter->ops->graph_exec_destroy(adapter, segment->exec));
    }
    if (segment->graph) {
      gpu_device_note_release(
          device, adapter->ops->graph_destroy(adapter, segment->graph));
    }
  }
  hal_allocator_free(state->device->base.host_allocator, state->segments);
  state->segments = NULL;
  state->segment_count = 0;
  state->built = false;
}

static void gpu_graph_state_clear(gpu_graph_state_t* state) {
  gpu_device_t* device = state->device;
  gpu_adapter_t* adapter = device->adapter;
  if (state->exec) {
    gpu_device_note_release(
        device, adapter->ops->graph_exec_destroy(adapter, state->exec));
  }
  if (state->graph) {
    gpu_device_note_release(device,
                            adapter->ops->graph_destroy(adapter, state->graph));
  }
  state->exec = NULL;
  state->graph = NULL;
  gpu_graph_segments_clear(state);
}

// Splits |ops| around their collectives and makes each other run's graph
// executable. Context current.
static hal_status_t gpu_graph_build_segments(gpu_graph_state_t* state,
                                             const hal_op_t* ops,
                                             size_t count) {
  gpu_graph_segments_clear(state);
  gpu_device_t* device = state->device;
  gpu_adapter_t* adapter = device->adapter;
  size_t segment_count = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i == 0 || (ops[i].kind == HAL_OP_COLLECTIVE) !=
                      (ops[i - 1].kind == HAL_OP_COLLECTIVE)) {
      ++segment_count;
    }
  }
  HAL_RETURN_IF_ERROR(hal_allocator_malloc_array(
      device->base.host_allocator, segment_count, sizeof(gpu_graph_segment_t),
      (void**)&state->segments));
  memset(state->segments, 0, segment_count * sizeof(gpu_graph_segment_t));
  state->segment_count = segment_count;
  size_t next = 0;
  uint32_t instantiated = 0;  // counted once every run is built
  for (size_t i = 0; i < count;) {
    gpu_graph_segment_t* segment = &state->segments[next++];
    segment->first = i;
    segment->collectives = ops[i].kind == HAL_OP_COLLECTIVE;
    while (i < count &&
           (ops[i].kind == HAL_OP_COLLECTIVE) == segment->collectives) {
      ++i;
    }
    segment->count = i - segment->first;
    if (segment->collectives)
      continue;
    hal_status_t status = gpu_graph_build(device, &ops[segment->first],
                                          segment->count, &segment->graph);
    if (status == HAL_OK && segment->graph) {
      status = adapter->ops->graph_instantiate(adapter, segment->graph,
                                               &segment->exec);
      if (status == HAL_OK)
        ++instantiated;
    }
    if (status != HAL_OK) {
      // The clear frees |segment|: what the message says is read first.
      size_t first = segment->first;
      gpu_graph_segments_clear(state);
      return hal_status_annotatef(status, "the graph of ops %zu to %zu of %zu",
                                  first, i - 1, count);
    }
  }
  state->built = true;
  atomic_fetch_add_explicit(&state->instantiate_count, instantiated,
                            memory_order_relaxed);
  return HAL_OK;
}

// Builds the graph of |command_buffer|, then updates the executable in
// place or instantiates. Context current.
static hal_status_t gpu_graph_build_exec(gpu_graph_state_t* state,
                                         hal_command_buffer_t* command_buffer) {
  gpu_device_t* device = state->device;
  gpu_adapter_t* adapter = device->adapter;
  size_t count = 0;
  const hal_op_t* ops =
      hal_recording_command_buffer_ops(command_buffer, &count);
  if (gpu_graph_is_split(state)) {
    gpu_graph_state_clear(state);
    return gpu_graph_build_segments(state, ops, count);
  }
  gpu_graph_segments_clear(state);
  gpu_graph_t graph = NULL;
  HAL_RETURN_IF_ERROR(gpu_graph_build(device, ops, count, &graph));
  if (!graph) {
    gpu_graph_state_clear(state);
    return HAL_OK;
  }
  if (state->exec) {
    bool accepted = false;
    hal_status_t status =
        adapter->ops->graph_exec_update(adapter, state->exec, graph, &accepted);
    if (status != HAL_OK) {
      gpu_device_note_release(device,
                              adapter->ops->graph_destroy(adapter, graph));
      return status;
    }
    if (accepted) {
      // The executable now runs |graph|'s parameters; keep the newest graph
      // as the base for the next update.
      gpu_device_note_release(
          device, adapter->ops->graph_destroy(adapter, state->graph));
      state->graph = graph;
      atomic_fetch_add_explicit(&state->update_count, 1, memory_order_relaxed);
      return HAL_OK;
    }
    gpu_graph_state_clear(state);  // refused: instantiate anew below
  }
  gpu_graph_exec_t exec = NULL;
  hal_status_t status = adapter->ops->graph_instantiate(adapter, graph, &exec);
  if (status != HAL_OK) {
    gpu_device_note_release(device,
                            adapter->ops->graph_destroy(adapter, graph));
    return status;
  }
  gpu_graph_state_clear(state);
  state->graph = graph;
  state->exec = exec;
  atomic_fetch_add_explicit(&state->instantiate_count, 1, memory_order_relaxed);
  return HAL_OK;
}

// end(): build the graph now, unless it uses queue-ordered buffers (their
// addresses come when their allocas are reached: the first issue builds
// it). Errors surface here, never at submit.
static hal_status_t gpu_graph_end(void* user,
                                  hal_command_buffer_t* command_buffer) {
  gpu_graph_state_t* state = user;
  gpu_device_t* device = state->device;
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  size_t count = 0;
  const hal_op_t* ops =
      hal_recording_command_buffer_ops(command_buffer, &count);
  HAL_RETURN_IF_ERROR(
      gpu_buffer_set_collect(&state->queue_ordered, ops, count));
  state->deferred = state->queue_ordered.count > 0;
  state->build_pending = state->deferred;
  if (state->deferred)
    return HAL_OK;
  // The graph's build and instantiation are vendor calls of the device: a
  // loss they report is recorded (Q5).
  return gpu_device_note(device, gpu_graph_build_exec(state, command_buffer));
}

static void gpu_graph_destroy(void* user,
                              hal_command_buffer_t* command_buffer) {
  gpu_graph_state_t* state = user;
  if (!state)
    return;
  hal_status_ignore(gpu_device_make_current(state->device));
  gpu_graph_state_clear(state);
  pthread_mutex_destroy(&state->build_mutex);
  gpu_buffer_set_deinitialize(&state->queue_ordered);
  hal_allocator_free(state->device->base.host_allocator, state);
}

static void gpu_graph_query_info(void* user,
                                 const hal_command_buffer_t* command_buffer,
                                 hal_command_buffer_info_t* out_info) {
  const gpu_graph_state_t* state = user;
  out_info->native_build_count =
      atomic_load_explicit(&state->instantiate_count, memory_order_relaxed);
  out_info->native_update_count =
      atomic_load_explicit(&state->update_count, memory_order_relaxed);
}

static hal_status_t gpu_graph_create_command_buffer(
    gpu_device_t* device, hal_command_buffer_mode_t mode,
    hal_command_buffer_t** out_command_buffer) {
  gpu_graph_state_t* state = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(device->base.host_allocator,
                                           sizeof(*state), (void**)&state));
  memset(state, 0, sizeof(*state));
  atomic_init(&state->instantiate_count, 0);
  atomic_init(&state->update_count, 0);
  state->queue_ordered.allocator = device->base.host_allocator;
  state->device = device;
  pthread_mutex_init(&state->build_mutex, NULL);
  const hal_recording_hooks_t hooks = {
      // A re-record keeps the executable (end() may update it in place);
      // it holds its own copy of every parameter, so the old ops may go.
      // begin() is refused while a submission is in flight, so end() never
      // updates or destroys an executable with a pending launch.
      .end = gpu_graph_end,
      .destroy = gpu_graph_destroy,
      .query_info = gpu_graph_query_info,
  };
  hal_status_t status = hal_recording_command_buffer_create(
      &device->base, mode, &hooks, state, out_command_buffer);
  if (status != HAL_OK) {
    pthread_mutex_destroy(&state->build_mutex);
    hal_allocator_free(device->base.host_allocator, state);
  }
  return status;
}

// One launch: its device span is the command buffer's (the core's).
static hal_status_t gpu_graph_issue(gpu_queue_t* queue,
                                    hal_command_buffer_t* command_buffer,
                                    gpu_trace_spans_t* trace) {
  (void)trace;
  gpu_graph_state_t* state = hal_recording_command_buffer_user(command_buffer);
  gpu_adapter_t* adapter = queue->device->adapter;
  if (HAL_UNLIKELY(state->deferred)) {
    // Every queue-ordered buffer must be alive for this launch; the first
    // issue also builds the graph with their addresses.
    for (size_t i = 0; i < state->queue_ordered.count; ++i) {
      gpu_device_ptr_t address = 0;
      HAL_RETURN_IF_ERROR(
          gpu_buffer_issue_address(state->queue_ordered.items[i], 0, &address));
    }
    pthread_mutex_lock(&state->build_mutex);
    hal_status_t status = HAL_OK;
    if (state->build_pending) {
      status = gpu_graph_build_exec(state, command_buffer);
      state->build_pending = status != HAL_OK;  // a failed build is retried
    }
    pthread_mutex_unlock(&state->build_mutex);
    HAL_RETURN_IF_ERROR(status);
  }
  if (gpu_graph_is_split(state)) {
    size_t count = 0;
    const hal_op_t* ops =
        hal_recording_command_buffer_ops(command_buffer, &count);
    for (size_t i = 0; i < state->segment_count; ++i) {
      const gpu_graph_segment_t* segment = &state->segments[i];
      hal_status_t status =
          segment->collectives
              ? gpu_collectives_issue(queue, &ops[segment->first],
                                      segment->count)
          : segment->exec ? adapter->ops->graph_launch(adapter, segment->exec,
                                                       queue->stream)
                          : HAL_OK;
      HAL_RETURN_IF_ERROR(hal_status_annotatef(
          status, "piece %zu of %zu (ops %zu to %zu)", i, state->segment_count,
          segment->first, segment->first + segment->count - 1));
    }
    return HAL_OK;
  }
  if (!state->exec)
    return HAL_OK;  // no ops
  return adapter->ops->graph_launch(adapter, state->exec, queue->stream);
}

// What every recording is built from: graphs (create, destroy, empty nodes
// for barriers, instantiate, launch, exec destroy), memset nodes (fills),
// memcpy nodes (updates and copies) and kernel nodes (dispatches). Host
// nodes are not used; exec update is optional (a refused update
// instantiates anew).
const gpu_strategy_t gpu_graph_strategy = {
    .name = "graph",
    .required_capabilities =
        GPU_ADAPTER_CAP_GRAPH | GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE |
        GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE | GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE,
    .create_command_buffer = gpu_graph_create_command_buffer,
    .issue = gpu_graph_issue,
};

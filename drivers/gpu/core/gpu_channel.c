// Copyright 2026 The HAL Authors.
//
// Channels (hal/channel.h) over the vendor's collective library: NCCL beside
// CUDA, RCCL beside HIP (drivers/gpu/adapter/ccl.h), loaded by the driver
// the first time a device asks for it. A channel is one communicator rank.
//
// Issue: a collective op is enqueued on the queue's stream
// (gpu_collectives_issue), after the work before it; a run of consecutive
// sends and receives is one group, so exchanges in a ring do not wait for
// each other. The library orders the rest. Completion: a submission whose
// command buffers used channels checks each (gpu_channels_check) once the
// device is done with it: a collective whose ranks disagreed, or an abort,
// fails the submission's signals with the library's message.

#include <inttypes.h>
#include <string.h>

#include "gpu_core.h"

#if defined(GPU_CORE_HAVE_CCL)

#include "adapter/ccl.h"

_Static_assert(sizeof(hal_channel_id_t) == sizeof(gpu_ccl_unique_id_t),
               "a channel id is the library's unique id");
// A recorded kind is passed to ccl.h as it is.
_Static_assert(HAL_COLLECTIVE_ALL_REDUCE == (int)GPU_CCL_ALL_REDUCE &&
                   HAL_COLLECTIVE_BROADCAST == (int)GPU_CCL_BROADCAST &&
                   HAL_COLLECTIVE_REDUCE == (int)GPU_CCL_REDUCE &&
                   HAL_COLLECTIVE_ALL_GATHER == (int)GPU_CCL_ALL_GATHER &&
                   HAL_COLLECTIVE_REDUCE_SCATTER ==
                       (int)GPU_CCL_REDUCE_SCATTER &&
                   HAL_COLLECTIVE_SEND == (int)GPU_CCL_SEND &&
                   HAL_COLLECTIVE_RECV == (int)GPU_CCL_RECV,
               "hal_collective_kind_t and gpu_ccl_kind_t agree");

typedef struct gpu_channel_t {
  hal_channel_t base;
  gpu_driver_t* driver;  // whose watch it is on
  gpu_ccl_t* ccl;        // the driver's
  // Under the watch's mutex: submissions issued with its collectives and
  // not retired, when one last retired (or the first was issued), and its
  // link on the watch's list while any is in flight.
  uint32_t in_flight;
  uint64_t progress_ns;
  struct gpu_channel_t* watch_next;
  // The library's calls on the communicator, from any queue's threads: a
  // communicator is not thread-safe, and an abort frees it.
  pthread_mutex_t mutex;
  gpu_ccl_comm_t comm;   // NULL once aborted
  hal_status_t aborted;  // why the HAL aborted it (OK: it did not)
} gpu_channel_t;

static const hal_channel_vtable_t gpu_channel_vtable;
static hal_status_t gpu_channel_watch_create(gpu_driver_t* driver);
static void gpu_channel_watch_destroy(gpu_driver_t* driver);

static gpu_channel_t* gpu_channel_cast(hal_channel_t* channel) {
  return HAL_RESOURCE_CAST(gpu_channel_t, channel, &gpu_channel_vtable);
}

// The driver's collective library, loaded by the first call. A failed load
// is not kept: a later call tries again (a fixed HAL_NCCL_LIBRARY).
static hal_status_t gpu_driver_ccl(gpu_driver_t* driver, gpu_ccl_t** out_ccl) {
  pthread_mutex_lock(&driver->ccl_mutex);
  hal_status_t status = HAL_OK;
  if (!driver->ccl) {
    gpu_ccl_vendor_t vendor =
        driver->adapter->info.vendor == GPU_ADAPTER_VENDOR_HIP
            ? GPU_CCL_VENDOR_RCCL
            : GPU_CCL_VENDOR_NCCL;
    status = gpu_ccl_create(vendor, NULL, driver->base.host_allocator,
                            (gpu_ccl_t**)&driver->ccl);
  }
  if (status == HAL_OK)
    status = gpu_channel_watch_create(driver);
  *out_ccl = driver->ccl;
  pthread_mutex_unlock(&driver->ccl_mutex);
  return status;
}

void gpu_driver_ccl_destroy(gpu_driver_t* driver) {
  gpu_channel_watch_destroy(driver);
  gpu_ccl_destroy(driver->ccl);
  driver->ccl = NULL;
}

static gpu_driver_t* gpu_device_driver(gpu_device_t* device) {
  return (gpu_driver_t*)device->base.driver;
}

static hal_status_t gpu_channel_wrap(gpu_device_t* device, gpu_ccl_t* ccl,
                                     gpu_ccl_comm_t comm, int32_t rank,
                                     int32_t rank_count,
                                     hal_channel_t** out_channel) {
  gpu_channel_t* channel = NULL;
  hal_status_t status = hal_allocator_malloc(
      device->base.host_allocator, sizeof(*channel), (void**)&channel);
  if (status != HAL_OK) {
    gpu_ccl_comm_destroy(ccl, comm, /*abort=*/true);
    return status;
  }
  memset(channel, 0, sizeof(*channel));
  hal_channel_initialize(&gpu_channel_vtable, &device->base, rank, rank_count,
                         &channel->base);
  channel->driver = gpu_device_driver(device);
  channel->ccl = ccl;
  channel->comm = comm;
  pthread_mutex_init(&channel->mutex, NULL);
  *out_channel = &channel->base;
  return HAL_OK;
}

static void gpu_channel_destroy(hal_channel_t* base) {
  gpu_channel_t* channel = gpu_channel_cast(base);
  gpu_device_t* device = gpu_device_cast(base->device);
  hal_status_ignore(gpu_device_make_current(device));
  // No submission uses it any more (each keeps its command buffers, which
  // keep their channels): the library has nothing of ours left to run.
  if (channel->comm)
    gpu_ccl_comm_destroy(channel->ccl, channel->comm, /*abort=*/false);
  hal_status_free(channel->aborted);
  pthread_mutex_destroy(&channel->mutex);
  hal_allocator_free(device->base.host_allocator, channel);
}

static void gpu_channel_abort(gpu_channel_t* channel, hal_status_t reason);

// A check that fails, the library's report of a failed communicator or the
// failure of its query (the communicator's state then unknown), aborts the
// channel as the watch does when it finds one (below), whichever finds it
// first: the failure is what the channel reports from then on, and the
// peers' collectives end instead of waiting.
static hal_status_t gpu_channel_check(hal_channel_t* base) {
  gpu_channel_t* channel = gpu_channel_cast(base);
  pthread_mutex_lock(&channel->mutex);
  hal_status_t aborted = hal_status_clone(channel->aborted);
  hal_status_t failure =
      aborted ? HAL_OK : gpu_ccl_comm_check(channel->ccl, channel->comm);
  pthread_mutex_unlock(&channel->mutex);
  if (failure != HAL_OK) {
    gpu_channel_abort(
        channel,
        hal_status_annotatef(failure,
                             "the communicator was aborted on this rank for "
                             "this failure, found by a check"));
    pthread_mutex_lock(&channel->mutex);
    aborted = hal_status_clone(channel->aborted);
    pthread_mutex_unlock(&channel->mutex);
  }
  return hal_status_annotatef(
      aborted, "channel rank %" PRId32 " of %" PRId32 " on device '%s'",
      base->rank, base->rank_count, base->device->info.name);
}

// Aborts the communicator (once) and keeps |reason| (taken) as what every
// later use of the channel reports. Under the channel's mutex.
static void gpu_channel_abort_locked(gpu_channel_t* channel,
                                     hal_status_t reason) {
  if (channel->aborted) {
    hal_status_free(reason);
    return;
  }
  channel->aborted = reason;
  hal_status_ignore(
      gpu_device_make_current(gpu_device_cast(channel->base.device)));
  gpu_ccl_comm_destroy(channel->ccl, channel->comm, /*abort=*/true);
  channel->comm = NULL;
}

static void gpu_channel_abort(gpu_channel_t* channel, hal_status_t reason) {
  pthread_mutex_lock(&channel->mutex);
  gpu_channel_abort_locked(channel, reason);
  pthread_mutex_unlock(&channel->mutex);
}

// What a use of an aborted channel (a split, a collective's issue) fails
// with: ABORTED whatever aborted it (channel.h). This rank's own stopped
// work is ABORTED already; a failure a check or the watch found (ranks
// that disagreed, a peer's abort, a peer gone) keeps its code and message
// as the cause. Called with the channel's mutex held.
static hal_status_t gpu_channel_aborted_status(const gpu_channel_t* channel) {
  if (hal_status_code(channel->aborted) == HAL_STATUS_ABORTED)
    return hal_status_clone(channel->aborted);
  char cause[1024];
  hal_status_format(channel->aborted, cause, sizeof(cause));
  return hal_make_status(HAL_STATUS_ABORTED, "the channel was aborted: %s",
                         cause);
}

// Holds the channel's mutex while the library splits (every rank's call
// blocks until its new communicator is joined): an abort must not free the
// communicator under it, and the library takes one call on a communicator
// at a time. A collective the caller submitted before the split, which is
// enqueued at its issue, goes first: a peer may wait for its result before
// it splits. So the split first waits until the work of the device's
// queues that was ready when it was called is issued (what is still
// parked goes after it, as its issue may wait for the split's return).
static hal_status_t gpu_channel_split(hal_channel_t* base, int32_t color,
                                      int32_t key,
                                      hal_channel_t** out_channel) {
  gpu_channel_t* channel = gpu_channel_cast(base);
  gpu_device_t* device = gpu_device_cast(base->device);
  gpu_ccl_comm_t made = NULL;
  // A device released already has no queues (and took no more work).
  if (!atomic_load_explicit(&device->shut_down, memory_order_acquire)) {
    for (uint32_t i = 0; i < device->queue_count; ++i)
      hal_sync_queue_await_ready_issued(device->queues[i].sync_queue);
  }
  pthread_mutex_lock(&channel->mutex);
  hal_status_t status = HAL_OK;
  if (channel->aborted) {
    status = gpu_channel_aborted_status(channel);
  } else {
    status = gpu_device_make_current(device);
  }
  if (status == HAL_OK) {
    status = gpu_ccl_comm_split(channel->ccl, channel->comm, (int)color,
                                (int)key, &made);
  }
  pthread_mutex_unlock(&channel->mutex);
  HAL_RETURN_IF_ERROR(hal_status_annotatef(
      status,
      "splitting channel rank %" PRId32 " of %" PRId32
      " on device '%s' (color %" PRId32 ", key %" PRId32 ")",
      base->rank, base->rank_count, base->device->info.name, color, key));
  if (!made)
    return HAL_OK;  // no color: no channel
  // The new rank and count are the library's.
  int rank = 0, count = 0;
  status = gpu_ccl_comm_rank(channel->ccl, made, &rank, &count);
  if (status != HAL_OK) {
    gpu_ccl_comm_destroy(channel->ccl, made, /*abort=*/true);
    return status;
  }
  return gpu_channel_wrap(device, channel->ccl, made, rank, count, out_channel);
}

static const hal_channel_vtable_t gpu_channel_vtable = {
    .destroy = gpu_channel_destroy,
    .check = gpu_channel_check,
    .split = gpu_channel_split,
};

hal_status_t gpu_device_channel_id_generate(hal_device_t* base,
                                            hal_channel_id_t* out_id) {
  gpu_ccl_t* ccl = NULL;
  HAL_RETURN_IF_ERROR(
      gpu_driver_ccl(gpu_device_driver(gpu_device_cast(base)), &ccl));
  return gpu_ccl_unique_id(ccl, (gpu_ccl_unique_id_t*)out_id);
}

hal_status_t gpu_device_create_channel(hal_device_t* base,
                                       const hal_channel_id_t* id, int32_t rank,
                                       int32_t rank_count,
                                       hal_channel_t** out_channel) {
  gpu_device_t* device = gpu_device_cast(base);
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  gpu_ccl_t* ccl = NULL;
  HAL_RETURN_IF_ERROR(gpu_driver_ccl(gpu_device_driver(device), &ccl));
  // ncclCommInitRank joins on the calling thread's current device.
  HAL_RETURN_IF_ERROR(gpu_device_make_current(device));
  gpu_ccl_comm_t comm = NULL;
  HAL_RETURN_IF_ERROR(hal_status_annotatef(
      gpu_ccl_comm_init_rank(ccl, rank_count, (const gpu_ccl_unique_id_t*)id,
                             rank, &comm),
      "channel rank %" PRId32 " of %" PRId32 " on device '%s'", rank,
      rank_count, base->info.name));
  return gpu_channel_wrap(device, ccl, comm, rank, rank_count, out_channel);
}

hal_status_t gpu_device_create_channel_group(hal_device_t* base, size_t count,
                                             hal_device_t* const* devices,
                                             hal_channel_t** out_channels) {
  gpu_device_t* device = gpu_device_cast(base);
  for (size_t i = 0; i < count; ++i)
    HAL_RETURN_IF_ERROR(gpu_device_check_lost(gpu_device_cast(devices[i])));
  gpu_ccl_t* ccl = NULL;
  HAL_RETURN_IF_ERROR(gpu_driver_ccl(gpu_device_driver(device), &ccl));
  hal_allocator_t allocator = base->host_allocator;
  int* ordinals = NULL;
  gpu_ccl_comm_t* comms = NULL;
  hal_status_t status = hal_allocator_malloc_array(
      allocator, count, sizeof(int), (void**)&ordinals);
  if (status == HAL_OK) {
    status = hal_allocator_malloc_array(allocator, count, sizeof(*comms),
                                        (void**)&comms);
  }
  if (status == HAL_OK) {
    for (size_t i = 0; i < count; ++i)
      ordinals[i] = gpu_device_cast(devices[i])->ordinal;
    memset(comms, 0, count * sizeof(*comms));
    status = hal_status_annotatef(
        gpu_ccl_comm_init_all(ccl, (int)count, ordinals, comms),
        "a group of %zu channels", count);
  }
  bool comms_made = status == HAL_OK;
  size_t made = 0;
  while (status == HAL_OK && made < count) {
    // Each channel keeps its own device's driver's library (devices of one
    // driver made through different instances of it: the same library,
    // loaded once more), so it never outlives the library it calls.
    gpu_device_t* each = gpu_device_cast(devices[made]);
    gpu_ccl_t* own = ccl;
    status = gpu_driver_ccl(gpu_device_driver(each), &own);
    if (status != HAL_OK) {
      gpu_ccl_comm_destroy(ccl, comms[made], /*abort=*/true);
      break;
    }
    status = gpu_channel_wrap(each, own, comms[made], (int32_t)made,
                              (int32_t)count, &out_channels[made]);
    if (status == HAL_OK)
      ++made;
  }
  if (status != HAL_OK) {
    // The wrap that failed dropped its communicator; the ones after it
    // were never wrapped.
    for (size_t i = made + 1; comms_made && i < count; ++i)
      gpu_ccl_comm_destroy(ccl, comms[i], /*abort=*/true);
    for (size_t i = 0; i < made; ++i) {
      hal_channel_release(out_channels[i]);
      out_channels[i] = NULL;
    }
  }
  hal_allocator_free(allocator, comms);
  hal_allocator_free(allocator, ordinals);
  return status;
}

static bool gpu_collective_is_pair(const hal_op_t* op) {
  return op->collective.params.kind == HAL_COLLECTIVE_SEND ||
         op->collective.params.kind == HAL_COLLECTIVE_RECV;
}

//===----------------------------------------------------------------------===//
// The watch: channels with collectives in flight
//===----------------------------------------------------------------------===//

typedef struct gpu_channel_watch_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;     // the list changed, or stop
  gpu_channel_t* watched;  // channels with in_flight > 0
  bool running, stop;
  pthread_t thread;
  uint64_t bound_ns;  // HAL_SYNC_MAX_WAIT_MS (0: none)
} gpu_channel_watch_t;

enum { GPU_CHANNEL_WATCH_NAP_MS = 50 };

static uint64_t gpu_channel_now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// Under the watch's mutex: the first failure found on the watched
// channels aborts that channel; a channel whose submissions made no
// progress within the bound is aborted too. A channel whose mutex is held
// (a split waiting for its peers, which may be waiting for the issue or
// retirement of collectives of other channels, which take the watch's
// mutex) is looked at in a later poll: waiting for it here would stop
// every channel of the driver behind it.
static void gpu_channel_watch_poll(gpu_channel_watch_t* watch) {
  uint64_t now = gpu_channel_now_ns();
  for (gpu_channel_t* c = watch->watched; c != NULL; c = c->watch_next) {
    if (pthread_mutex_trylock(&c->mutex) != 0)
      continue;
    hal_status_t failure =
        c->aborted ? HAL_OK : gpu_ccl_comm_check(c->ccl, c->comm);
    if (failure != HAL_OK) {
      // The library's failure stays what the channel reports; the abort
      // ends the collectives still waiting on it.
      gpu_channel_abort_locked(
          c, hal_status_annotatef(failure,
                                  "the communicator was aborted on this rank "
                                  "for this failure, found with collectives "
                                  "in flight"));
    } else if (watch->bound_ns && now - c->progress_ns > watch->bound_ns) {
      gpu_channel_abort_locked(
          c, hal_make_status(
                 HAL_STATUS_ABORTED,
                 "the communicator was aborted on this rank: its collectives "
                 "in flight made no progress for HAL_SYNC_MAX_WAIT_MS=%" PRIu64
                 " ms (a peer that stalls or died?)",
                 watch->bound_ns / 1000000u));
      c->progress_ns = now;  // aborted once; later polls find it so
    }
    pthread_mutex_unlock(&c->mutex);
  }
}

static void* gpu_channel_watch_main(void* arg) {
  gpu_channel_watch_t* watch = arg;
  pthread_mutex_lock(&watch->mutex);
  while (!watch->stop) {
    if (watch->watched != NULL)
      gpu_channel_watch_poll(watch);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += GPU_CHANNEL_WATCH_NAP_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec += 1;
      until.tv_nsec -= 1000000000L;
    }
    if (watch->watched != NULL) {
      pthread_cond_timedwait(&watch->cond, &watch->mutex, &until);
    } else {
      pthread_cond_wait(&watch->cond, &watch->mutex);
    }
  }
  pthread_mutex_unlock(&watch->mutex);
  return NULL;
}

// Under |driver|'s ccl_mutex, with its library loaded.
static hal_status_t gpu_channel_watch_create(gpu_driver_t* driver) {
  if (driver->ccl_watch)
    return HAL_OK;
  gpu_channel_watch_t* watch = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(driver->base.host_allocator,
                                           sizeof(*watch), (void**)&watch));
  memset(watch, 0, sizeof(*watch));
  uint64_t ms = 0;
  hal_status_ignore(
      hal_env_uint("HAL_SYNC_MAX_WAIT_MS", 0, 86400000, &ms, NULL));
  watch->bound_ns = ms * 1000000u;
  pthread_mutex_init(&watch->mutex, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&watch->cond, &attr);
  pthread_condattr_destroy(&attr);
  driver->ccl_watch = watch;
  return HAL_OK;
}

static void gpu_channel_watch_destroy(gpu_driver_t* driver) {
  gpu_channel_watch_t* watch = driver->ccl_watch;
  if (!watch)
    return;
  pthread_mutex_lock(&watch->mutex);
  watch->stop = true;
  pthread_cond_broadcast(&watch->cond);
  pthread_mutex_unlock(&watch->mutex);
  if (watch->running)
    pthread_join(watch->thread, NULL);
  pthread_cond_destroy(&watch->cond);
  pthread_mutex_destroy(&watch->mutex);
  hal_allocator_free(driver->base.host_allocator, watch);
  driver->ccl_watch = NULL;
}

void gpu_channels_issued(const gpu_buffer_set_t* set) {
  for (size_t i = 0; i < set->channel_count; ++i) {
    gpu_channel_t* channel = gpu_channel_cast(set->channels[i]);
    gpu_channel_watch_t* watch = channel->driver->ccl_watch;
    pthread_mutex_lock(&watch->mutex);
    if (channel->in_flight++ == 0) {
      channel->progress_ns = gpu_channel_now_ns();
      channel->watch_next = watch->watched;
      watch->watched = channel;
      // Without a thread the channels go unwatched, as before it existed.
      if (!watch->running && !watch->stop) {
        watch->running = pthread_create(&watch->thread, NULL,
                                        gpu_channel_watch_main, watch) == 0;
      }
      pthread_cond_broadcast(&watch->cond);
    }
    pthread_mutex_unlock(&watch->mutex);
  }
}

void gpu_channels_retired(const gpu_buffer_set_t* set) {
  for (size_t i = 0; i < set->channel_count; ++i) {
    gpu_channel_t* channel = gpu_channel_cast(set->channels[i]);
    gpu_channel_watch_t* watch = channel->driver->ccl_watch;
    pthread_mutex_lock(&watch->mutex);
    channel->progress_ns = gpu_channel_now_ns();
    if (--channel->in_flight == 0) {
      for (gpu_channel_t** p = &watch->watched; *p != NULL;
           p = &(*p)->watch_next) {
        if (*p == channel) {
          *p = channel->watch_next;
          break;
        }
      }
    }
    pthread_mutex_unlock(&watch->mutex);
  }
}

static hal_status_t gpu_collective_enqueue(gpu_queue_t* queue,
                                           const hal_op_t* op) {
  gpu_channel_t* channel = gpu_channel_cast(op->collective.channel);
  gpu_ccl_collective_t collective;
  memset(&collective, 0, sizeof(collective));
  const hal_collective_params_t* params = &op->collective.params;
  collective.kind = (gpu_ccl_kind_t)params->kind;
  collective.count = (size_t)params->count;
  collective.type = (int)params->element_type;
  collective.reduction = (int)params->reduction;
  collective.peer = (int)params->root_or_peer;
  if (op->collective.send) {
    HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(
        op->collective.send, op->collective.send_offset, &collective.send));
  }
  if (op->collective.recv) {
    HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(
        op->collective.recv, op->collective.recv_offset, &collective.recv));
  }
  pthread_mutex_lock(&channel->mutex);
  hal_status_t status = channel->aborted
                            ? gpu_channel_aborted_status(channel)
                            : gpu_ccl_enqueue(channel->ccl, channel->comm,
                                              &collective, queue->stream);
  pthread_mutex_unlock(&channel->mutex);
  return hal_status_annotatef(
      status, "channel rank %" PRId32 " of %" PRId32 " on device '%s'",
      channel->base.rank, channel->base.rank_count,
      channel->base.device->info.name);
}

void gpu_channels_abort(const gpu_buffer_set_t* set, const char* why) {
  for (size_t i = 0; i < set->channel_count; ++i)
    gpu_channel_abort(
        gpu_channel_cast(set->channels[i]),
        hal_make_status(HAL_STATUS_ABORTED,
                        "the communicator was aborted on this rank: %s, so "
                        "its peers would have waited for them forever",
                        why));
}

hal_status_t gpu_collectives_issue(gpu_queue_t* queue, const hal_op_t* ops,
                                   size_t count) {
  size_t i = 0;
  while (i < count) {
    if (!gpu_collective_is_pair(&ops[i])) {
      HAL_RETURN_IF_ERROR(gpu_collective_enqueue(queue, &ops[i]));
      ++i;
      continue;
    }
    size_t end = i;
    while (end < count && gpu_collective_is_pair(&ops[end]))
      ++end;
    gpu_ccl_t* ccl = gpu_channel_cast(ops[i].collective.channel)->ccl;
    HAL_RETURN_IF_ERROR(gpu_ccl_group_start(ccl));
    hal_status_t status = HAL_OK;
    for (; i < end && status == HAL_OK; ++i)
      status = gpu_collective_enqueue(queue, &ops[i]);
    hal_status_t ended = gpu_ccl_group_end(ccl);
    if (status == HAL_OK) {
      status = ended;
    } else {
      hal_status_free(ended);
    }
    HAL_RETURN_IF_ERROR(status);
    i = end;
  }
  return HAL_OK;
}

#else  // !GPU_CORE_HAVE_CCL

void gpu_driver_ccl_destroy(gpu_driver_t* driver) {
  (void)driver;
}

hal_status_t gpu_collectives_issue(gpu_queue_t* queue, const hal_op_t* ops,
                                   size_t count) {
  (void)queue;
  (void)ops;
  (void)count;
  // No channel can exist without the library, so no op names one.
  return hal_make_status(HAL_STATUS_INTERNAL,
                         "a collective in a build without collectives");
}

void gpu_channels_abort(const gpu_buffer_set_t* set, const char* why) {
  (void)set;
  (void)why;
}

void gpu_channels_issued(const gpu_buffer_set_t* set) {
  (void)set;
}

void gpu_channels_retired(const gpu_buffer_set_t* set) {
  (void)set;
}

#endif  // GPU_CORE_HAVE_CCL

hal_status_t gpu_channels_check(const gpu_buffer_set_t* set) {
  for (size_t i = 0; i < set->channel_count; ++i)
    HAL_RETURN_IF_ERROR(hal_channel_check(set->channels[i]));
  return HAL_OK;
}

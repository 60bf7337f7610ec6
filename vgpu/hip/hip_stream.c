// HIP facade: streams, events and host functions.
#include "hip_facade.h"

void vgpu_hip_invoke_host_fn(const vgpu_host_call* call, vgpu_status status) {
  (void)status;
  ((hipHostFn_t)call->fn)(call->user);
}

static void invoke_stream_callback(const vgpu_host_call* call,
                                   vgpu_status status) {
  ((hipStreamCallback_t)call->fn)((hipStream_t)(uintptr_t)call->stream,
                                  vgpu_hip_result(status), call->user);
}

static hipError_t stream_create(hipStream_t* stream, unsigned flags,
                                int priority) {
  if (stream == NULL || (flags & ~(unsigned)hipStreamNonBlocking) != 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_stream_create(
      vgpu_hip_device(), (flags & hipStreamNonBlocking) != 0, priority, &h));
  *stream = (hipStream_t)(uintptr_t)h;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipStreamCreate(hipStream_t* stream) {
  VGPU_HIP_ENTER("hipStreamCreate");
  return stream_create(stream, hipStreamDefault, 0);
}

VGPU_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t* stream,
                                                unsigned int flags) {
  VGPU_HIP_ENTER("hipStreamCreateWithFlags");
  return stream_create(stream, flags, 0);
}

VGPU_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t* stream,
                                                   unsigned int flags,
                                                   int priority) {
  VGPU_HIP_ENTER("hipStreamCreateWithPriority");
  return stream_create(stream, flags, priority);
}

VGPU_EXPORT hipError_t hipStreamDestroy(hipStream_t stream) {
  VGPU_HIP_ENTER("hipStreamDestroy");
  VGPU_HIP_RETURN_ST(vgpu_stream_destroy(vgpu_hip_h(stream)));
}

VGPU_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) {
  VGPU_HIP_ENTER_SYNC("hipStreamSynchronize", fault);
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  vgpu_status st = vgpu_stream_synchronize(vgpu_hip_h(stream), dev);
  if (fault)
    VGPU_HIP_RETURN((hipError_t)fault);
  VGPU_HIP_RETURN_ST(st);
}

VGPU_EXPORT hipError_t hipStreamQuery(hipStream_t stream) {
  VGPU_HIP_ENTER("hipStreamQuery");
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  VGPU_HIP_RETURN_ST(vgpu_stream_query(vgpu_hip_h(stream), dev));
}

VGPU_EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event,
                                          unsigned int flags) {
  VGPU_HIP_ENTER("hipStreamWaitEvent");
  if (flags != 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  VGPU_HIP_RETURN_ST(
      vgpu_stream_wait_event(vgpu_hip_h(stream), dev, vgpu_hip_h(event)));
}

VGPU_EXPORT hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn,
                                         void* userData) {
  VGPU_HIP_ENTER("hipLaunchHostFunc");
  if (fn == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  vgpu_host_call call = {vgpu_hip_invoke_host_fn, (void (*)(void))fn, userData,
                         vgpu_hip_h(stream)};
  VGPU_HIP_RETURN_ST(vgpu_stream_host_call(vgpu_hip_h(stream), dev, &call));
}

VGPU_EXPORT hipError_t hipStreamAddCallback(hipStream_t stream,
                                            hipStreamCallback_t callback,
                                            void* userData,
                                            unsigned int flags) {
  VGPU_HIP_ENTER("hipStreamAddCallback");
  if (callback == NULL || flags != 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  vgpu_host_call call = {invoke_stream_callback, (void (*)(void))callback,
                         userData, vgpu_hip_h(stream)};
  VGPU_HIP_RETURN_ST(vgpu_stream_host_call(vgpu_hip_h(stream), dev, &call));
}

static hipError_t event_create(hipEvent_t* event, unsigned flags) {
  const unsigned known = hipEventBlockingSync | hipEventDisableTiming |
                         hipEventInterprocess | hipEventReleaseToDevice |
                         hipEventReleaseToSystem;
  if (event == NULL || (flags & ~known) != 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_event_create(vgpu_hip_device(), flags, &h));
  *event = (hipEvent_t)(uintptr_t)h;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipEventCreate(hipEvent_t* event) {
  VGPU_HIP_ENTER("hipEventCreate");
  return event_create(event, 0);
}

VGPU_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t* event,
                                               unsigned flags) {
  VGPU_HIP_ENTER("hipEventCreateWithFlags");
  return event_create(event, flags);
}

VGPU_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  VGPU_HIP_ENTER("hipEventRecord");
  int dev = 0;
  uint64_t s = vgpu_hip_h(stream);
  if (!VGPU_STREAM_IS_DEFAULT(s))
    VGPU_HIP_TRY(vgpu_stream_device(s, 0, &dev));
  VGPU_HIP_RETURN_ST(vgpu_event_record(vgpu_hip_h(event), s, dev));
}

VGPU_EXPORT hipError_t hipEventQuery(hipEvent_t event) {
  VGPU_HIP_ENTER("hipEventQuery");
  VGPU_HIP_RETURN_ST(vgpu_event_query(vgpu_hip_h(event)));
}

VGPU_EXPORT hipError_t hipEventSynchronize(hipEvent_t event) {
  VGPU_HIP_ENTER_SYNC("hipEventSynchronize", fault);
  vgpu_status st = vgpu_event_synchronize(vgpu_hip_h(event));
  if (fault)
    VGPU_HIP_RETURN((hipError_t)fault);
  VGPU_HIP_RETURN_ST(st);
}

VGPU_EXPORT hipError_t hipEventDestroy(hipEvent_t event) {
  VGPU_HIP_ENTER("hipEventDestroy");
  VGPU_HIP_RETURN_ST(vgpu_event_destroy(vgpu_hip_h(event)));
}

VGPU_EXPORT hipError_t hipEventElapsedTime(float* ms, hipEvent_t start,
                                           hipEvent_t stop) {
  VGPU_HIP_ENTER("hipEventElapsedTime");
  if (ms == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  VGPU_HIP_RETURN_ST(
      vgpu_event_elapsed_ms(vgpu_hip_h(start), vgpu_hip_h(stop), ms));
}

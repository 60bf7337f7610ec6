// CUDA facade: streams, events and host functions.
#include "cuda_facade.h"

void vgpu_cu_invoke_host_fn(const vgpu_host_call* call, vgpu_status status) {
  (void)status;
  ((CUhostFn)call->fn)(call->user);
}

static void invoke_stream_callback(const vgpu_host_call* call,
                                   vgpu_status status) {
  ((CUstreamCallback)call->fn)((CUstream)(uintptr_t)call->stream,
                               vgpu_cu_result(status), call->user);
}

static CUresult stream_create(CUstream* ph, unsigned int flags, int prio) {
  if (ph == NULL || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  uint64_t h = 0;
  VGPU_CU_TRY(
      vgpu_stream_create(dev, flags & CU_STREAM_NON_BLOCKING, prio, &h));
  *ph = (CUstream)(uintptr_t)h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream* phStream,
                                            unsigned int Flags) {
  VGPU_CU_ENTER("cuStreamCreate");
  return stream_create(phStream, Flags, 0);
}

VGPU_EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream,
                                                        unsigned int flags,
                                                        int priority) {
  VGPU_CU_ENTER("cuStreamCreateWithPriority");
  return stream_create(phStream, flags, priority);
}

VGPU_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  VGPU_CU_ENTER("cuStreamDestroy");
  return vgpu_cu_result(vgpu_stream_destroy(vgpu_cu_h(hStream)));
}

#undef cuStreamDestroy
VGPU_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream hStream);
VGPU_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  return cuStreamDestroy_v2(hStream);
}

VGPU_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  VGPU_CU_ENTER_SYNC("cuStreamSynchronize", fault);
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  vgpu_status st = vgpu_stream_synchronize(vgpu_cu_h(hStream), dev);
  return fault ? (CUresult)fault : vgpu_cu_result(st);
}

VGPU_EXPORT CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
  VGPU_CU_ENTER("cuStreamQuery");
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  return vgpu_cu_result(vgpu_stream_query(vgpu_cu_h(hStream), dev));
}

VGPU_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
                                               unsigned int Flags) {
  VGPU_CU_ENTER("cuStreamWaitEvent");
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  return vgpu_cu_result(
      vgpu_stream_wait_event(vgpu_cu_h(hStream), dev, vgpu_cu_h(hEvent)));
}

VGPU_EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn,
                                              void* userData) {
  VGPU_CU_ENTER("cuLaunchHostFunc");
  if (fn == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  vgpu_host_call call = {vgpu_cu_invoke_host_fn, (void (*)(void))fn, userData,
                         vgpu_cu_h(hStream)};
  return vgpu_cu_result(vgpu_stream_host_call(vgpu_cu_h(hStream), dev, &call));
}

VGPU_EXPORT CUresult CUDAAPI cuStreamAddCallback(CUstream hStream,
                                                 CUstreamCallback callback,
                                                 void* userData,
                                                 unsigned int flags) {
  VGPU_CU_ENTER("cuStreamAddCallback");
  if (callback == NULL || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  vgpu_host_call call = {invoke_stream_callback, (void (*)(void))callback,
                         userData, vgpu_cu_h(hStream)};
  return vgpu_cu_result(vgpu_stream_host_call(vgpu_cu_h(hStream), dev, &call));
}

VGPU_EXPORT CUresult CUDAAPI cuEventCreate(CUevent* phEvent,
                                           unsigned int Flags) {
  VGPU_CU_ENTER("cuEventCreate");
  const unsigned known =
      CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (phEvent == NULL || (Flags & ~known) != 0 ||
      ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_event_create(dev, Flags, &h));
  *phEvent = (CUevent)(uintptr_t)h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  VGPU_CU_ENTER("cuEventRecord");
  int dev = 0;
  uint64_t s = vgpu_cu_h(hStream);
  if (!VGPU_STREAM_IS_DEFAULT(s))
    VGPU_CU_TRY(vgpu_stream_device(s, 0, &dev));
  return vgpu_cu_result(vgpu_event_record(vgpu_cu_h(hEvent), s, dev));
}

VGPU_EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  VGPU_CU_ENTER("cuEventQuery");
  return vgpu_cu_result(vgpu_event_query(vgpu_cu_h(hEvent)));
}

VGPU_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  VGPU_CU_ENTER_SYNC("cuEventSynchronize", fault);
  vgpu_status st = vgpu_event_synchronize(vgpu_cu_h(hEvent));
  return fault ? (CUresult)fault : vgpu_cu_result(st);
}

VGPU_EXPORT CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
  VGPU_CU_ENTER("cuEventDestroy");
  return vgpu_cu_result(vgpu_event_destroy(vgpu_cu_h(hEvent)));
}

#undef cuEventDestroy
VGPU_EXPORT CUresult CUDAAPI cuEventDestroy(CUevent hEvent);
VGPU_EXPORT CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
  return cuEventDestroy_v2(hEvent);
}

VGPU_EXPORT CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds,
                                                CUevent hStart, CUevent hEnd) {
  VGPU_CU_ENTER("cuEventElapsedTime");
  if (pMilliseconds == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  return vgpu_cu_result(
      vgpu_event_elapsed_ms(vgpu_cu_h(hStart), vgpu_cu_h(hEnd), pMilliseconds));
}

#undef cuEventElapsedTime
VGPU_EXPORT CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds,
                                                CUevent hStart, CUevent hEnd);
VGPU_EXPORT CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds,
                                                CUevent hStart, CUevent hEnd) {
  return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

// kevolve-cuda-worker: the GPU worker (gpu_worker.h) on the CUDA runtime.
//
// Timing: the kernel gets the legacy default stream (cudaStreamLegacy) and
// each call is bracketed by events recorded on it, so the end event completes
// only after every blocking stream's work, the per-thread default stream's
// included (creating other streams is refused statically); a batch ends with
// cudaDeviceSynchronize before replying. An event pair on a stream of its own
// would add a cross-stream dependency of several microseconds to every call.
// L2 persistence is reset before every timed batch; the evaluator's input
// rotation (sets larger than the L2) does the flushing.
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "eval/backends/gpu_worker.h"

namespace {

struct cuda_rt {
  using stream_t = cudaStream_t;
  using event_t = cudaEvent_t;
  using error_t = cudaError_t;
  static constexpr const char* kName = "kevolve-cuda-worker";
  static constexpr const char* kErrorPrefix = "CUDA error ";
  static constexpr size_t flush_bytes = 0;
  static bool ok(error_t e) { return e == cudaSuccess; }
  static std::string describe(error_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }
  static error_t device_count(int* n) { return cudaGetDeviceCount(n); }
  static error_t use_device(int d) { return cudaSetDevice(d); }
  static error_t create_context() { return cudaFree(nullptr); }
  static error_t malloc(void** p, size_t n) { return cudaMalloc(p, n); }
  static error_t free(void* p) { return cudaFree(p); }
  static error_t upload(void* dev, const void* host, size_t n) { return cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice); }
  static error_t download(void* host, const void* dev, size_t n) { return cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost); }
  static bool host_register(void* p, size_t n) {
    if (cudaHostRegister(p, n, cudaHostRegisterDefault) == cudaSuccess) return true;
    (void)cudaGetLastError();
    return false;
  }
  static error_t memset_async(void* p, int v, size_t n) { return cudaMemsetAsync(p, v, n, nullptr); }
  static error_t event_create(event_t* e) { return cudaEventCreate(e); }
  static error_t event_record(event_t e) { return cudaEventRecord(e, nullptr); }
  static error_t elapsed_ms(float* ms, event_t a, event_t b) { return cudaEventElapsedTime(ms, a, b); }
  static error_t synchronize() { return cudaDeviceSynchronize(); }
  static error_t last_error() { return cudaGetLastError(); }
  static stream_t kernel_stream() { return cudaStreamLegacy; }
  // No L2 lines kept persistent by anyone before a timed batch.
  static void before_batch() {
    cudaStreamAttrValue v;
    std::memset(&v, 0, sizeof v);
    v.accessPolicyWindow.num_bytes = 0;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
    v.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
    cudaStreamSetAttribute(cudaStreamLegacy, cudaStreamAttributeAccessPolicyWindow, &v);
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    (void)cudaGetLastError();  // unsupported on some devices: not an error of the kernel
  }
};

}  // namespace

int main(int argc, char** argv) { return kevolve::eval::gpu_worker::run<cuda_rt>(argc, argv); }

// kevolve-hip-worker: the GPU worker (gpu_worker.h) on the HIP runtime, for
// nodes with an AMD GPU. UNVERIFIED ON AMD HARDWARE: it is built and its
// protocol is the one kevolve-cuda-worker runs on NVIDIA GPUs, but no AMD
// GPU was available to run it.
//
// Timing: the kernel gets the null stream and each call is bracketed by
// hipEvents recorded on it; the batch ends with hipDeviceSynchronize. Before
// every timed call (outside its events) a 512 MiB buffer is rewritten, which
// evicts the L2s and the 256 MB Infinity Cache of an MI300X that the input
// rotation alone would not.
#include <hip/hip_runtime_api.h>

#include <string>

#include "eval/backends/gpu_worker.h"

namespace {

struct hip_rt {
  using stream_t = hipStream_t;
  using event_t = hipEvent_t;
  using error_t = hipError_t;
  static constexpr const char* kName = "kevolve-hip-worker";
  static constexpr const char* kErrorPrefix = "HIP error ";
  static constexpr size_t flush_bytes = size_t(512) << 20;
  static bool ok(error_t e) { return e == hipSuccess; }
  static std::string describe(error_t e) { return std::string(hipGetErrorName(e)) + ": " + hipGetErrorString(e); }
  static error_t device_count(int* n) { return hipGetDeviceCount(n); }
  static error_t use_device(int d) { return hipSetDevice(d); }
  static error_t create_context() { return hipFree(nullptr); }
  static error_t malloc(void** p, size_t n) { return hipMalloc(p, n); }
  static error_t free(void* p) { return hipFree(p); }
  static error_t upload(void* dev, const void* host, size_t n) { return hipMemcpy(dev, host, n, hipMemcpyHostToDevice); }
  static error_t download(void* host, const void* dev, size_t n) { return hipMemcpy(host, dev, n, hipMemcpyDeviceToHost); }
  static bool host_register(void* p, size_t n) {
    if (hipHostRegister(p, n, hipHostRegisterDefault) == hipSuccess) return true;
    (void)hipGetLastError();
    return false;
  }
  static error_t memset_async(void* p, int v, size_t n) { return hipMemsetAsync(p, v, n, nullptr); }
  static error_t event_create(event_t* e) { return hipEventCreate(e); }
  static error_t event_record(event_t e) { return hipEventRecord(e, nullptr); }
  static error_t elapsed_ms(float* ms, event_t a, event_t b) { return hipEventElapsedTime(ms, a, b); }
  static error_t synchronize() { return hipDeviceSynchronize(); }
  static error_t last_error() { return hipGetLastError(); }
  static stream_t kernel_stream() { return nullptr; }
  static void before_batch() {}
};

}  // namespace

int main(int argc, char** argv) { return kevolve::eval::gpu_worker::run<hip_rt>(argc, argv); }

// kevolve-hip-probe: what `kevolve doctor` and the hip backend ask of an AMD
// GPU. UNVERIFIED ON AMD HARDWARE (none was available): it is built and run
// here only to see that hipGetDeviceCount reports no device.
//
//   kevolve-hip-probe --count   "devices N" (exit 0), or the HIP error (exit 77)
//   kevolve-hip-probe           name, arch, CUs, clock, device-to-device copy
//                               bandwidth and the FP32 peak from CUs and clock,
//                               as "key value" lines (exit 77 without a device)
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int no_device(hipError_t e) {
  std::printf("hipGetDeviceCount: %s (%s)\n", hipGetErrorName(e), hipGetErrorString(e));
  return 77;
}

bool ok(hipError_t e, const char* what) {
  if (e == hipSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, hipGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  const hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess) return no_device(e);
  if (n == 0) return no_device(hipErrorNoDevice);
  if (argc > 1 && std::strcmp(argv[1], "--count") == 0) {
    std::printf("devices %d\n", n);
    return 0;
  }
  hipDeviceProp_t p;
  if (!ok(hipGetDeviceProperties(&p, 0), "hipGetDeviceProperties")) return 1;
  std::printf("name %s\narch %s\ncompute_units %d\nclock_mhz %d\n", p.name, p.gcnArchName, p.multiProcessorCount,
              p.clockRate / 1000);
  // CDNA: 128 FP32 lanes per CU issue an FMA (2 flops) per clock with packed FP32.
  std::printf("fp32_gflops %.1f\n", double(p.multiProcessorCount) * 256.0 * p.clockRate / 1e6);
  const size_t bytes = size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  if (!ok(hipMalloc(&a, bytes), "hipMalloc") || !ok(hipMalloc(&b, bytes), "hipMalloc")) return 1;
  hipEvent_t t0, t1;
  if (!ok(hipEventCreate(&t0), "hipEventCreate") || !ok(hipEventCreate(&t1), "hipEventCreate")) return 1;
  std::vector<float> ms;
  for (int i = 0; i < 12; ++i) {
    float x = 0;
    if (!ok(hipEventRecord(t0, nullptr), "hipEventRecord") ||
        !ok(hipMemcpyAsync(b, a, bytes, hipMemcpyDeviceToDevice, nullptr), "copy") ||
        !ok(hipEventRecord(t1, nullptr), "hipEventRecord") || !ok(hipEventSynchronize(t1), "copy") ||
        !ok(hipEventElapsedTime(&x, t0, t1), "hipEventElapsedTime"))
      return 1;
    if (i >= 2) ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("copy_gbs %.1f\n", 2.0 * double(bytes) / (double(ms[ms.size() / 2]) * 1e-3) / 1e9);
  return 0;
}

// Times compiled gemm_bias_relu kernels (shared libraries exporting the cuda
// kevolve_kernel, as the evaluator builds them) side by side on one GPU in
// bf16/fp16: inputs drawn like the operator's first generators (A uniform
// [-1, 1), B normal-ish std 0.05, bias std 0.5), rotated over sets larger
// than twice the L2, CUDA events around each call, the median of REPS calls.
// The first library is the yardstick (the operator's cuda baseline): every
// other library's output on set 0 is compared with its output
// (|x - y| <= 2 (atol + rtol |y|), the operator's tolerance doubled for two
// roundings); a mismatch is reported as WRONG, an error as ERR.
//
// usage: gemm16_time DTYPE(bf16|fp16) MxKxN[,MxKxN...] REPS LIB.so...
// prints one line per (shape, library): dtype shape lib median_us tflops status
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kevolve/abi.h"

typedef int (*kernel_fn)(const kv_args*, cudaStream_t);

__device__ uint32_t hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return uint32_t(x);
}
// kind 0: uniform [-1, 1); 1: sum of 4 uniforms scaled to std 0.05; 2: std 0.5.
__global__ void fill(uint16_t* p, int64_t n, uint64_t seed, int kind, int dt) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v;
    if (kind == 0) {
      v = hash(seed * 0x9e3779b97f4a7c15ull + i) * (2.f / 4294967296.f) - 1.f;
    } else {
      float s = 0.f;
      for (int j = 0; j < 4; ++j) s += hash((seed + j) * 0x9e3779b97f4a7c15ull + i * 4 + j) * (1.f / 4294967296.f) - 0.5f;
      v = s * (kind == 1 ? 0.05f / 0.57735f : 0.5f / 0.57735f);
    }
    p[i] = dt == KV_BF16 ? kv_f32_to_bf16(v) : kv_f32_to_f16(v);
  }
}

static float to_f(int dt, uint16_t h) { return dt == KV_BF16 ? kv_bf16_to_f32(h) : kv_f16_to_f32(h); }

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

static kv_tensor tensor(void* p, int dt, int64_t r, int64_t c) {
  kv_tensor t;
  std::memset(&t, 0, sizeof(t));
  t.data = p;
  t.dtype = dt;
  if (r < 0) {
    t.rank = 1;
    t.dims[0] = c;
    t.strides[0] = 1;
  } else {
    t.rank = 2;
    t.dims[0] = r;
    t.dims[1] = c;
    t.strides[0] = c;
    t.strides[1] = 1;
  }
  return t;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: gemm16_time bf16|fp16 MxKxN[,...] REPS LIB.so...\n");
    return 2;
  }
  const int dt = std::strcmp(argv[1], "bf16") == 0 ? KV_BF16 : KV_F16;
  const float atol = dt == KV_BF16 ? 1e-2f : 2e-3f, rtol = dt == KV_BF16 ? 1.6e-2f : 2e-3f;
  const int reps = std::atoi(argv[3]);
  std::vector<kernel_fn> fns;
  std::vector<std::string> names;
  for (int i = 4; i < argc; ++i) {
    void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "dlopen %s: %s\n", argv[i], dlerror());
      return 1;
    }
    fns.push_back(reinterpret_cast<kernel_fn>(dlsym(h, "kevolve_kernel")));
    std::string n = argv[i];
    n = n.substr(n.rfind('/') + 1);
    names.push_back(n.substr(0, n.size() - 3));
  }
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  std::string shapes = argv[2];
  size_t pos = 0;
  while (pos < shapes.size()) {
    size_t e = shapes.find(',', pos);
    if (e == std::string::npos) e = shapes.size();
    long long M, K, N;
    if (std::sscanf(shapes.substr(pos, e - pos).c_str(), "%lldx%lldx%lld", &M, &K, &N) != 3) return 2;
    pos = e + 1;
    const int64_t elems = M * K + K * N + N + M * N;
    const int sets = int(std::max<int64_t>(2, std::min<int64_t>(64, (2 * int64_t(l2) + 2 * elems) / (2 * elems) + 1)));
    std::vector<uint16_t*> a(sets), b(sets), bias(sets), c(sets);
    for (int s = 0; s < sets; ++s) {
      CK(cudaMalloc(&a[s], M * K * 2));
      CK(cudaMalloc(&b[s], K * N * 2));
      CK(cudaMalloc(&bias[s], N * 2));
      CK(cudaMalloc(&c[s], M * N * 2));
      fill<<<1024, 256>>>(a[s], M * K, 11 + s, 0, dt);
      fill<<<1024, 256>>>(b[s], K * N, 1000 + s, 1, dt);
      fill<<<64, 256>>>(bias[s], N, 5000 + s, 2, dt);
    }
    CK(cudaDeviceSynchronize());
    std::vector<uint16_t> ref(M * N), out(M * N);
    cudaEvent_t e0[512], e1[512];
    for (int i = 0; i < reps && i < 512; ++i) {
      CK(cudaEventCreate(&e0[i]));
      CK(cudaEventCreate(&e1[i]));
    }
    for (size_t l = 0; l < fns.size(); ++l) {
      auto args_for = [&](int s) {
        kv_args x;
        std::memset(&x, 0, sizeof(x));
        x.abi_version = KV_ABI_VERSION;
        x.num_inputs = 3;
        x.num_outputs = 1;
        x.inputs[0] = tensor(a[s], dt, M, K);
        x.inputs[1] = tensor(b[s], dt, K, N);
        x.inputs[2] = tensor(bias[s], dt, -1, N);
        x.outputs[0] = tensor(c[s], dt, M, N);
        x.num_threads = 1;
        return x;
      };
      const char* status = "ok";
      CK(cudaMemsetAsync(c[0], 0xff, M * N * 2, stream));
      kv_args x0 = args_for(0);
      int rc = fns[l](&x0, stream);
      cudaError_t ce = cudaStreamSynchronize(stream);
      if (rc != KV_OK || ce != cudaSuccess) {
        std::printf("%s %lldx%lldx%lld %s ERR rc=%d %s\n", argv[1], M, K, N, names[l].c_str(), rc,
                    cudaGetErrorString(ce));
        std::fflush(stdout);
        if (ce != cudaSuccess) return 1;
        continue;
      }
      CK(cudaMemcpy(l == 0 ? ref.data() : out.data(), c[0], M * N * 2, cudaMemcpyDeviceToHost));
      double worst = 0;
      if (l > 0) {
        for (int64_t i = 0; i < M * N; ++i) {
          const float y = to_f(dt, ref[i]), v = to_f(dt, out[i]);
          const double r = std::fabs(double(v) - y) / (2 * (atol + rtol * std::fabs(y)));
          if (!(r <= worst)) worst = std::isnan(r) ? 1e30 : r;
        }
        if (worst > 1) status = "WRONG";
      }
      for (int w = 0; w < 3; ++w) {
        kv_args x = args_for(w % sets);
        fns[l](&x, stream);
      }
      std::vector<float> ms(reps);
      for (int i = 0; i < reps; ++i) {
        kv_args x = args_for((i + 1) % sets);
        CK(cudaEventRecord(e0[i], stream));
        fns[l](&x, stream);
        CK(cudaEventRecord(e1[i], stream));
      }
      CK(cudaStreamSynchronize(stream));
      for (int i = 0; i < reps; ++i) CK(cudaEventElapsedTime(&ms[i], e0[i], e1[i]));
      std::sort(ms.begin(), ms.end());
      const double us = ms[reps / 2] * 1e3;
      std::printf("%s %lldx%lldx%lld %s %.2f %.1f %s %.3f\n", argv[1], M, K, N, names[l].c_str(), us,
                  2.0 * M * N * K / (us * 1e-6) / 1e12, status, worst);
      std::fflush(stdout);
    }
    for (int i = 0; i < reps && i < 512; ++i) {
      cudaEventDestroy(e0[i]);
      cudaEventDestroy(e1[i]);
    }
    for (int s = 0; s < sets; ++s) {
      cudaFree(a[s]);
      cudaFree(b[s]);
      cudaFree(bias[s]);
      cudaFree(c[s]);
    }
  }
  return 0;
}

/* kevolve kernel ABI: the one contract between a candidate kernel and the
 * evaluator, for every backend. Plain C so that C++, CUDA, HIP and the MTIA
 * emulator's toolchain all include the same file.
 *
 * A candidate is one self-contained source file that exports exactly one
 * symbol with C linkage:
 *
 *   cpu       int kevolve_kernel(const kv_args* args);
 *   cuda      int kevolve_kernel(const kv_args* args, cudaStream_t stream);
 *   hip       int kevolve_kernel(const kv_args* args, hipStream_t stream);
 *   mtia_emu  int kevolve_kernel(const kv_args* args, kv_mtia_device* device);
 *
 * It returns 0 on success and a non-zero kv_status otherwise. It may launch
 * several kernels (on GPUs only on the given stream), allocates nothing but
 * args->workspace, keeps no state across calls (no static or global mutable
 * data), calls no vendor library unless the operator allows it and never
 * synchronizes the device. The evaluator enforces all of this.
 *
 * Tensors arrive in the order the operator's YAML lists them: inputs first,
 * then outputs. Scalars arrive in the order of the operator's `params`.
 */
#ifndef KEVOLVE_ABI_H
#define KEVOLVE_ABI_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KV_ABI_VERSION 1
#define KV_MAX_RANK 8
#define KV_MAX_TENSORS 16
#define KV_MAX_PARAMS 16

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KV_HOST_DEVICE __host__ __device__
#else
#define KV_HOST_DEVICE
#endif

typedef enum kv_dtype {
  KV_F32 = 0,
  KV_F16 = 1,  /* IEEE binary16, stored as uint16_t */
  KV_BF16 = 2, /* bfloat16, stored as uint16_t */
  KV_I32 = 3,
  KV_I64 = 4,
  KV_F64 = 5, /* used by references and by float64 operators */
  KV_U8 = 6
} kv_dtype;

typedef enum kv_status {
  KV_OK = 0,
  KV_ERR_UNSUPPORTED = 1, /* dtype/shape this kernel does not handle */
  KV_ERR_WORKSPACE = 2,   /* workspace too small */
  KV_ERR_INTERNAL = 3
} kv_status;

typedef struct kv_tensor {
  void* data;                   /* host or device pointer, per backend */
  int32_t dtype;                /* kv_dtype */
  int32_t rank;
  int64_t dims[KV_MAX_RANK];    /* extents, outermost first */
  int64_t strides[KV_MAX_RANK]; /* in elements, outermost first */
} kv_tensor;

typedef struct kv_param {
  const char* name; /* as in the operator's `params` */
  int64_t i;        /* integer value (also set for float params, truncated) */
  double f;         /* floating value (also set for int params) */
} kv_param;

typedef struct kv_args {
  int32_t abi_version;
  int32_t num_inputs;
  int32_t num_outputs;
  int32_t num_params;
  kv_tensor inputs[KV_MAX_TENSORS];
  kv_tensor outputs[KV_MAX_TENSORS];
  kv_param params[KV_MAX_PARAMS];
  void* workspace; /* scratch memory owned by the evaluator */
  int64_t workspace_bytes;
  int32_t num_threads; /* CPU threads the kernel may use */
  int32_t reserved;
} kv_args;

/* Handle to an emulated MTIA-like device (backend mtia_emu); defined, with
 * the intrinsics a kernel calls through it, in <kevolve/mtia.h>
 * (src/emu/mtia/include). */
typedef struct kv_mtia_device kv_mtia_device;

static inline int64_t kv_numel(const kv_tensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i) n *= t->dims[i];
  return n;
}

/* ---- half-precision helpers (round to nearest even) ------------------- */
static inline KV_HOST_DEVICE float kv_bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline KV_HOST_DEVICE uint32_t kv_f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline KV_HOST_DEVICE float kv_bf16_to_f32(uint16_t h) {
  return kv_bits_to_f32((uint32_t)h << 16);
}
static inline KV_HOST_DEVICE uint16_t kv_f32_to_bf16(float f) {
  uint32_t u = kv_f32_to_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) /* NaN */
    return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static inline KV_HOST_DEVICE float kv_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    if (man == 0) return kv_bits_to_f32(sign);
    /* subnormal: value = man * 2^-24 */
    float v = (float)man * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return kv_bits_to_f32(sign | 0x7f800000u | (man << 13));
  return kv_bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
}
static inline KV_HOST_DEVICE uint16_t kv_f32_to_f16(float f) {
  uint32_t u = kv_f32_to_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t absu = u & 0x7fffffffu;
  if (absu >= 0x7f800000u) /* Inf or NaN */
    return (uint16_t)(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
  if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow */
  if (absu < 0x38800000u) { /* subnormal or zero in half */
    float a = kv_bits_to_f32(absu);
    /* round(a / 2^-24) with ties to even via float magic */
    float scaled = a * 16777216.0f;
    uint32_t m = (uint32_t)scaled;
    float frac = scaled - (float)m;
    if (frac > 0.5f || (frac == 0.5f && (m & 1u))) ++m;
    return (uint16_t)(sign | m);
  }
  uint32_t mant_odd = (absu >> 13) & 1u;
  absu += 0xc8000fffu + mant_odd; /* rebias exponent (-112<<23) and round */
  return (uint16_t)(sign | (absu >> 13));
}

/* Integer and float scalar parameters by position. */
static inline int64_t kv_param_i(const kv_args* a, int32_t i) { return a->params[i].i; }
static inline double kv_param_f(const kv_args* a, int32_t i) { return a->params[i].f; }

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KEVOLVE_ABI_H */

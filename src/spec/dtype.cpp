#include "spec/dtype.h"

namespace kevolve::spec {

const char* dtype_name(dtype t) {
  switch (t) {
    case dtype::f32: return "fp32";
    case dtype::f16: return "fp16";
    case dtype::bf16: return "bf16";
    case dtype::i32: return "int32";
    case dtype::i64: return "int64";
    case dtype::f64: return "fp64";
  }
  return "?";
}

std::optional<dtype> parse_dtype(const std::string& name) {
  for (dtype t : {dtype::f32, dtype::f16, dtype::bf16, dtype::i32, dtype::i64, dtype::f64})
    if (name == dtype_name(t)) return t;
  return std::nullopt;
}

size_t dtype_size(dtype t) {
  switch (t) {
    case dtype::f16:
    case dtype::bf16: return 2;
    case dtype::f32:
    case dtype::i32: return 4;
    case dtype::f64:
    case dtype::i64: return 8;
  }
  return 0;
}

bool is_float(dtype t) { return t == dtype::f32 || t == dtype::f16 || t == dtype::bf16 || t == dtype::f64; }

const char* dtype_names_list() { return "fp32, fp16, bf16, fp64, int32, int64"; }

}  // namespace kevolve::spec

// Element types of operator tensors; values match kv_dtype in kevolve/abi.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "kevolve/abi.h"

namespace kevolve::spec {

enum class dtype : int {
  f32 = KV_F32,
  f16 = KV_F16,
  bf16 = KV_BF16,
  i32 = KV_I32,
  i64 = KV_I64,
  f64 = KV_F64,
};

// YAML spelling: fp32 fp16 bf16 fp64 int32 int64.
const char* dtype_name(dtype t);
std::optional<dtype> parse_dtype(const std::string& name);
size_t dtype_size(dtype t);
bool is_float(dtype t);

// The list of accepted spellings, for error messages.
const char* dtype_names_list();

}  // namespace kevolve::spec

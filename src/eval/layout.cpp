#include "eval/layout.h"

#include <unistd.h>

#include <cstring>

#include "eval/worker_protocol.h"

namespace kevolve::eval {

size_t page_size() {
  static const size_t p = size_t(::sysconf(_SC_PAGESIZE));
  return p;
}

size_t page_round(size_t bytes) { return (bytes + page_size() - 1) / page_size() * page_size(); }

region_plan::region_plan() {
  guards_.push_back(0);
  size_ = page_size();
}

size_t region_plan::add(size_t bytes) {
  const size_t off = size_;
  size_ += page_round(bytes == 0 ? 1 : bytes);
  guards_.push_back(size_);
  size_ += page_size();
  return off;
}

spec::dtype reference_dtype(spec::dtype t) { return spec::is_float(t) ? spec::dtype::f64 : t; }

kv_tensor make_tensor(const spec::tensor_instance& t, spec::dtype as_type, uint64_t encoded) {
  kv_tensor k;
  std::memset(&k, 0, sizeof k);
  k.data = reinterpret_cast<void*>(encoded);
  k.dtype = int32_t(as_type);
  k.rank = int32_t(t.dims.size());
  int64_t stride = 1;
  for (int i = k.rank - 1; i >= 0; --i) {
    k.dims[i] = t.dims[size_t(i)];
    k.strides[i] = stride;
    stride *= t.dims[size_t(i)];
  }
  return k;
}

kv_args make_args(const spec::problem_instance& p, const std::vector<uint64_t>& inputs,
                  const std::vector<uint64_t>& outputs, bool as_fp64, int threads) {
  kv_args a;
  std::memset(&a, 0, sizeof a);
  a.abi_version = KV_ABI_VERSION;
  a.num_inputs = int32_t(p.inputs.size());
  a.num_outputs = int32_t(p.outputs.size());
  a.num_params = int32_t(p.params.size());
  for (size_t i = 0; i < p.inputs.size(); ++i)
    a.inputs[i] = make_tensor(p.inputs[i], as_fp64 ? reference_dtype(p.inputs[i].type) : p.inputs[i].type, inputs[i]);
  for (size_t i = 0; i < p.outputs.size(); ++i)
    a.outputs[i] = make_tensor(p.outputs[i], as_fp64 ? reference_dtype(p.outputs[i].type) : p.outputs[i].type, outputs[i]);
  for (size_t i = 0; i < p.params.size(); ++i) {
    a.params[i].name = nullptr;  // set by the worker from the names table
    a.params[i].f = p.params[i].value;
    a.params[i].i = int64_t(p.params[i].value);
  }
  a.num_threads = threads;
  return a;
}

std::vector<char> make_setup_payload(const std::vector<std::vector<kv_args>>& args_per_lib,
                                     const std::vector<uint64_t>& guards, size_t workspace_bytes,
                                     const std::vector<std::string>& param_names) {
  wire::setup_header h;
  h.num_libs = uint32_t(args_per_lib.size());
  h.num_sets = args_per_lib.empty() ? 0 : uint32_t(args_per_lib.front().size());
  h.num_guards = uint32_t(guards.size());
  h.workspace_bytes = workspace_bytes;
  std::string names;
  for (const auto& n : param_names) names += n + '\0';
  h.names_bytes = uint32_t(names.size());
  std::vector<char> out(sizeof h + guards.size() * 8 + size_t(h.num_libs) * h.num_sets * sizeof(kv_args) + names.size());
  char* p = out.data();
  std::memcpy(p, &h, sizeof h);
  p += sizeof h;
  std::memcpy(p, guards.data(), guards.size() * 8);
  p += guards.size() * 8;
  for (const auto& lib : args_per_lib) {
    std::memcpy(p, lib.data(), lib.size() * sizeof(kv_args));
    p += lib.size() * sizeof(kv_args);
  }
  std::memcpy(p, names.data(), names.size());
  return out;
}

}  // namespace kevolve::eval

// Where tensors live in shared memory, and the SETUP message that tells a
// worker about them. Every buffer starts on a page and is followed by a guard
// page (PROT_NONE in the worker); the bytes between the end of a tensor and
// its page end hold a canary that the evaluator checks after each call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kevolve/abi.h"
#include "spec/operator_spec.h"

namespace kevolve::eval {

size_t page_size();
size_t page_round(size_t bytes);

// Builds a region: a leading guard page, then buffers each followed by one.
class region_plan {
 public:
  region_plan();
  size_t add(size_t bytes);  // returns the buffer's offset
  size_t size() const { return size_; }
  const std::vector<size_t>& guards() const { return guards_; }

 private:
  size_t size_ = 0;
  std::vector<size_t> guards_;
};

struct buffer_ref {
  size_t offset = 0;
  size_t bytes = 0;
};

// One shape's buffers: inputs and candidate outputs in region A (mapped by
// the candidate and the baseline workers), baseline outputs in region B
// (baseline worker only).
struct shape_buffers {
  int num_sets = 0;
  std::vector<std::vector<buffer_ref>> inputs;      // [set][input]
  std::vector<std::vector<buffer_ref>> cand_out;    // [set][output]
  std::vector<std::vector<buffer_ref>> base_out;    // [set][output]
};

// The reference worker's scratch (region C): fp64 copies for the reference
// and native copies for the trusted baseline, one set.
struct reference_buffers {
  std::vector<buffer_ref> ref_in, ref_out;
  std::vector<buffer_ref> native_in, native_out;
};

// How a kernel sees a tensor: dtype and dims of the instance, data = the
// encoded (region << 56 | offset) position, contiguous strides.
kv_tensor make_tensor(const spec::tensor_instance& t, spec::dtype as_type, uint64_t encoded);

kv_args make_args(const spec::problem_instance& p, const std::vector<uint64_t>& inputs,
                  const std::vector<uint64_t>& outputs, bool as_fp64, int threads);

// The dtype the reference sees: fp64 for floating types, unchanged otherwise.
spec::dtype reference_dtype(spec::dtype t);

std::vector<char> make_setup_payload(const std::vector<std::vector<kv_args>>& args_per_lib,
                                     const std::vector<uint64_t>& guards, size_t workspace_bytes,
                                     const std::vector<std::string>& param_names);

}  // namespace kevolve::eval

// Deterministic input generation (counter-based, so the same seed gives the
// same tensor on any machine), dtype conversion and output poisoning.
#pragma once

#include <cstdint>

#include "common/error.h"
#include "spec/operator_spec.h"

namespace kevolve::eval {

// Fills `dst` (t.numel() elements of t.type) from distribution `d`, whose
// argument expressions are evaluated over `symbols`.
expected<void> generate_tensor(const spec::distribution& d, const spec::tensor_instance& t,
                               const symbol_table& symbols, uint64_t seed, void* dst);

// Element access as double, for any dtype.
double load_as_double(const void* base, spec::dtype t, int64_t i);
void store_from_double(void* base, spec::dtype t, int64_t i, double v);

// Copies n elements converting from one dtype to another (exact when widening).
void convert_elements(const void* src, spec::dtype from, void* dst, spec::dtype to, int64_t n);

// Seed of one trial: mixes the user's seed, the shape and the trial index.
uint64_t trial_seed(uint64_t user_seed, const std::string& shape, uint32_t trial);

// Bytes used to fill outputs before a call, per trial: NaN-ish and a large
// finite pattern, so that an unwritten element never matches by accident.
uint8_t poison_byte(uint32_t trial);
constexpr uint8_t kCanaryByte = 0xC5;

}  // namespace kevolve::eval

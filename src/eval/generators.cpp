#include "eval/generators.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "common/hash.h"

namespace kevolve::eval {
namespace {

using spec::dtype;

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Counter-based stream: element i's k-th random word.
struct stream {
  uint64_t seed;
  uint64_t word(int64_t i, uint64_t k = 0) const { return splitmix64(seed ^ splitmix64(uint64_t(i) * 4 + k)); }
  double unit(int64_t i, uint64_t k = 0) const { return double(word(i, k) >> 11) * 0x1.0p-53; }  // [0,1)
};

expected<double> arg(const spec::distribution& d, const char* name, const symbol_table& symbols) {
  auto it = d.args.find(name);
  if (it == d.args.end()) return make_error(errc::invalid_input, std::string("distribution '") + d.dist + "' needs '" + name + "'");
  return evaluate_expression(it->second, symbols);
}

uint64_t gcd(uint64_t a, uint64_t b) { return b == 0 ? a : gcd(b, a % b); }

}  // namespace

double load_as_double(const void* base, dtype t, int64_t i) {
  switch (t) {
    case dtype::f32: return static_cast<const float*>(base)[i];
    case dtype::f64: return static_cast<const double*>(base)[i];
    case dtype::f16: return kv_f16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case dtype::bf16: return kv_bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case dtype::i32: return static_cast<const int32_t*>(base)[i];
    case dtype::i64: return double(static_cast<const int64_t*>(base)[i]);
  }
  return 0.0;
}

void store_from_double(void* base, dtype t, int64_t i, double v) {
  switch (t) {
    case dtype::f32: static_cast<float*>(base)[i] = float(v); break;
    case dtype::f64: static_cast<double*>(base)[i] = v; break;
    case dtype::f16: static_cast<uint16_t*>(base)[i] = kv_f32_to_f16(float(v)); break;
    case dtype::bf16: static_cast<uint16_t*>(base)[i] = kv_f32_to_bf16(float(v)); break;
    case dtype::i32: static_cast<int32_t*>(base)[i] = int32_t(std::floor(v)); break;
    case dtype::i64: static_cast<int64_t*>(base)[i] = int64_t(std::floor(v)); break;
  }
}

void convert_elements(const void* src, dtype from, void* dst, dtype to, int64_t n) {
  if (from == to) {
    std::memcpy(dst, src, size_t(n) * spec::dtype_size(from));
    return;
  }
  if (to == dtype::i64 && from == dtype::i32) {
    for (int64_t i = 0; i < n; ++i) static_cast<int64_t*>(dst)[i] = static_cast<const int32_t*>(src)[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) store_from_double(dst, to, i, load_as_double(src, from, i));
}

uint64_t trial_seed(uint64_t user_seed, const std::string& shape, uint32_t trial) {
  return splitmix64(user_seed ^ hash_bytes(shape.data(), shape.size(), 0x6b65766f) ^ splitmix64(trial + 1));
}

uint8_t poison_byte(uint32_t trial) { return trial % 2 == 0 ? 0xFF : 0x7E; }

expected<void> generate_tensor(const spec::distribution& d, const spec::tensor_instance& t,
                               const symbol_table& symbols, uint64_t seed, void* dst) {
  const stream rng{seed};
  const int64_t n = t.numel();
  const std::string where = "generator '" + d.dist + "' for input '" + t.name + "'";
  if (d.dist == "uniform" || d.dist == "sorted_uniform") {
    auto lo = arg(d, "low", symbols), hi = arg(d, "high", symbols);
    if (!lo || !hi) return make_error(errc::invalid_input, where + ": " + (!lo ? lo.error() : hi.error()).message);
    if (d.dist == "uniform") {
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) store_from_double(dst, t.type, i, *lo + (*hi - *lo) * rng.unit(i));
    } else {
      std::vector<double> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[size_t(i)] = *lo + (*hi - *lo) * rng.unit(i);
      std::sort(v.begin(), v.end());
      for (int64_t i = 0; i < n; ++i) store_from_double(dst, t.type, i, v[size_t(i)]);
      // Rounding to a narrow dtype may break the order by ties only: keep it sorted.
      for (int64_t i = 1; i < n; ++i)
        if (load_as_double(dst, t.type, i) < load_as_double(dst, t.type, i - 1))
          store_from_double(dst, t.type, i, load_as_double(dst, t.type, i - 1));
    }
    return {};
  }
  if (d.dist == "normal") {
    auto mean = arg(d, "mean", symbols), sd = arg(d, "std", symbols);
    if (!mean || !sd) return make_error(errc::invalid_input, where + ": " + (!mean ? mean.error() : sd.error()).message);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const double u1 = 1.0 - rng.unit(i, 0), u2 = rng.unit(i, 1);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      store_from_double(dst, t.type, i, *mean + *sd * z);
    }
    return {};
  }
  if (d.dist == "randint") {
    auto lo = arg(d, "low", symbols), hi = arg(d, "high", symbols);
    if (!lo || !hi) return make_error(errc::invalid_input, where + ": " + (!lo ? lo.error() : hi.error()).message);
    const int64_t a = int64_t(*lo), span = int64_t(*hi) - a;
    if (span <= 0) return make_error(errc::invalid_input, where + ": 'high' must be greater than 'low'");
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) store_from_double(dst, t.type, i, double(a + int64_t(rng.word(i) % uint64_t(span))));
    return {};
  }
  if (d.dist == "zipf") {
    auto nn = arg(d, "n", symbols), s = arg(d, "s", symbols);
    if (!nn || !s) return make_error(errc::invalid_input, where + ": " + (!nn ? nn.error() : s.error()).message);
    const uint64_t range = uint64_t(*nn);
    if (range == 0 || *s <= 0) return make_error(errc::invalid_input, where + ": needs n >= 1 and s > 0");
    uint64_t mul = 2654435761ull % range;
    if (mul == 0) mul = 1;
    while (gcd(mul, range) != 1) ++mul;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const double u = rng.unit(i);
      double x;  // continuous power law on [1, n+1), inverted
      if (std::fabs(*s - 1.0) < 1e-9) x = std::pow(double(range) + 1.0, u);
      else x = std::pow((std::pow(double(range) + 1.0, 1.0 - *s) - 1.0) * u + 1.0, 1.0 / (1.0 - *s));
      uint64_t rank = std::min<uint64_t>(uint64_t(x) - 1, range - 1);
      // Scatter hot ids over the table, as in production traces.
      store_from_double(dst, t.type, i, double((rank * mul + 7919) % range));
    }
    return {};
  }
  if (d.dist == "offsets") {
    auto total_v = arg(d, "total", symbols), max_v = arg(d, "max_len", symbols);
    if (!total_v || !max_v) return make_error(errc::invalid_input, where + ": " + (!total_v ? total_v.error() : max_v.error()).message);
    const int64_t rows = n - 1, total = int64_t(*total_v), max_len = int64_t(*max_v);
    if (rows < 1 || t.dims.size() != 1) return make_error(errc::invalid_input, where + ": offsets need a 1-D tensor of length rows+1");
    if (total < 0 || max_len < 0 || rows * max_len < total)
      return make_error(errc::invalid_input, where + ": total " + std::to_string(total) + " cannot fit in " +
                                                 std::to_string(rows) + " rows of at most " + std::to_string(max_len));
    std::vector<int64_t> len(size_t(rows), total / rows);
    for (int64_t i = 0; i < total % rows; ++i) ++len[size_t(i)];
    for (int64_t k = 0; k < 4 * rows; ++k) {
      const size_t a = size_t(rng.word(k, 0) % uint64_t(rows)), b = size_t(rng.word(k, 1) % uint64_t(rows));
      const int64_t room = std::min(len[a], max_len - len[b]);
      if (a == b || room <= 0) continue;
      const int64_t amount = int64_t(rng.word(k, 2) % uint64_t(room + 1));
      len[a] -= amount;
      len[b] += amount;
    }
    int64_t acc = 0;
    store_from_double(dst, t.type, 0, 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      acc += len[size_t(i)];
      if (t.type == dtype::i64) static_cast<int64_t*>(dst)[i + 1] = acc;
      else store_from_double(dst, t.type, i + 1, double(acc));
    }
    return {};
  }
  return make_error(errc::invalid_input, where + ": unknown distribution");
}

}  // namespace kevolve::eval

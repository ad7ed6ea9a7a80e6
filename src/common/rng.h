// A small seeded random generator (xoshiro256**) whose whole state is four
// integers, so that a search can be checkpointed and resumed exactly.
#pragma once

#include <array>
#include <cstdint>

namespace kevolve {

class rng {
 public:
  explicit rng(uint64_t seed = 1) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) {  // splitmix64 expands the seed
      x += 0x9E3779B97F4A7C15ull;
      uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      w = z ^ (z >> 31);
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n) { return next() % n; }

  using state_type = std::array<uint64_t, 4>;
  const state_type& state() const { return s_; }
  void set_state(const state_type& s) { s_ = s; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  state_type s_{};
};

}  // namespace kevolve

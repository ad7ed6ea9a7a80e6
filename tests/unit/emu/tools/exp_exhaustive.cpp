// One-off check, not part of CI (about 10-20 s of one core): exp_row gives
// the bits of libm's expf for every one of the 2^32 fp32 inputs. Run it on a
// new host or glibc before trusting its vector path there:
//   cmake --build build --target kevolve-emu-exp-exhaustive && ./build/kevolve-emu-exp-exhaustive
// Exit status 0: identical everywhere; 1: a difference (printed) or no
// vector path on this host (then exp_row is libm itself).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "emu/mtia/host_kernels.h"

int main() {
  using namespace kevolve::emu::mtia;
  if (!exp_row_vectorised()) {
    std::printf("exp_row has no vector path on this host (it calls libm): nothing to check\n");
    return 1;
  }
  constexpr int chunk = 1 << 16;
  std::vector<float> in(chunk), out(chunk);
  uint64_t differ = 0;
  for (uint64_t base = 0; base < (uint64_t(1) << 32); base += chunk) {
    for (int j = 0; j < chunk; ++j) {
      const uint32_t bits = static_cast<uint32_t>(base + j);
      std::memcpy(&in[j], &bits, 4);
    }
    out = in;
    exp_row(out.data(), chunk);
    for (int j = 0; j < chunk; ++j) {
      const float want = std::exp(in[j]);
      if (std::memcmp(&want, &out[j], 4) != 0 && differ++ < 10) {
        uint32_t a, w, g;
        std::memcpy(&a, &in[j], 4), std::memcpy(&w, &want, 4), std::memcpy(&g, &out[j], 4);
        std::printf("input %08x: libm %08x, exp_row %08x\n", a, w, g);
      }
    }
  }
  std::printf("%llu of 2^32 inputs differ from libm's expf\n", static_cast<unsigned long long>(differ));
  return differ == 0 ? 0 : 1;
}

#include "common/hash.h"

#include <cstdio>

#include <xxhash.h>

namespace kevolve {

namespace {

template <class Parts>
std::string hash_parts(const Parts& parts) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (std::string_view p : parts) {
    const uint64_t n = p.size();  // length-prefix so ("ab","c") != ("a","bc")
    XXH3_128bits_update(state, &n, sizeof n);
    XXH3_128bits_update(state, p.data(), p.size());
  }
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace

std::string content_hash(std::initializer_list<std::string_view> parts) { return hash_parts(parts); }

std::string content_hash(const std::vector<std::string>& parts) { return hash_parts(parts); }

uint64_t hash_bytes(const void* data, size_t size, uint64_t seed) {
  return XXH3_64bits_withSeed(data, size, seed);
}

}  // namespace kevolve

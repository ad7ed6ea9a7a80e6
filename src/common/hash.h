// Content hashing (xxHash XXH3-128): compile-cache keys, input checksums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kevolve {

// 32 hex digits of XXH3-128 over the concatenation of the parts.
std::string content_hash(std::initializer_list<std::string_view> parts);
// The same over a list whose length is known only at run time.
std::string content_hash(const std::vector<std::string>& parts);

// 64-bit hash of a memory range (input checksums).
uint64_t hash_bytes(const void* data, size_t size, uint64_t seed = 0);

}  // namespace kevolve

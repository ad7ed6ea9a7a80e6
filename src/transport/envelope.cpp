#include "transport/envelope.h"

#include <cstring>

namespace kevolve::transport {
namespace {

template <class T>
void put(std::vector<char>& out, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out[at + i] = char((uint64_t(v) >> (8 * i)) & 0xff);
}

template <class T>
T get(const std::vector<char>& in, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return T(v);
}

}  // namespace

std::vector<char> frame(std::string_view payload, uint16_t version) {
  std::vector<char> out(kHeaderBytes + payload.size());
  put<uint32_t>(out, 0, kMagic);
  put<uint16_t>(out, 4, version);
  put<uint16_t>(out, 6, 0);
  put<uint32_t>(out, 8, uint32_t(payload.size()));
  if (!payload.empty()) std::memcpy(out.data() + kHeaderBytes, payload.data(), payload.size());
  return out;
}

expected<std::string_view> unframe(const std::vector<char>& bytes, int source) {
  const std::string from = "message from rank " + std::to_string(source);
  if (bytes.size() < kHeaderBytes || get<uint32_t>(bytes, 0) != kMagic)
    return make_error(errc::invalid_input, from + " is not a kevolve message (" + std::to_string(bytes.size()) + " bytes)");
  const uint16_t version = get<uint16_t>(bytes, 4);
  if (version != kProtocolVersion)
    return make_error(errc::invalid_input, from + " speaks protocol version " + std::to_string(version) +
                                               ", this kevolve speaks version " + std::to_string(kProtocolVersion) +
                                               ": run the same kevolve build on every rank");
  const uint32_t length = get<uint32_t>(bytes, 8);
  if (bytes.size() != kHeaderBytes + length)
    return make_error(errc::invalid_input, from + " is truncated: header says " + std::to_string(length) +
                                               " payload bytes, got " + std::to_string(bytes.size() - kHeaderBytes));
  return std::string_view(bytes.data() + kHeaderBytes, length);
}

}  // namespace kevolve::transport

// The frame around every message between ranks: a magic number, the protocol
// version and the payload's length. A rank that speaks another version is
// refused with a message that says so, never misread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace kevolve::transport {

constexpr uint32_t kMagic = 0x4f56454b;  // "KEVO" in little-endian bytes
// Bump on any change to a message type or the frame. 2: shape_measurement
// carries the profile line and the metrics.
constexpr uint16_t kProtocolVersion = 2;
constexpr size_t kHeaderBytes = 12;  // magic u32, version u16, reserved u16, length u32

std::vector<char> frame(std::string_view payload, uint16_t version = kProtocolVersion);

// The payload of a frame from `source` (a rank, for the message), or why it
// cannot be read: not a kevolve frame, a truncated one, another version.
expected<std::string_view> unframe(const std::vector<char>& bytes, int source);

}  // namespace kevolve::transport

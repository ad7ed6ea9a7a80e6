#include "actors/codec.h"

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "transport/envelope.h"

namespace kevolve::actors {

expected<std::vector<char>> encode(caf::actor_system& sys, const caf::message& m) {
  std::vector<char> payload;
  caf::binary_serializer sink{sys, payload};
  caf::message copy = m;
  if (auto err = sink(copy))
    return make_error(errc::internal, "cannot serialize message " + to_string(m) + ": " + sys.render(err));
  if (payload.empty())
    return make_error(errc::internal, "message " + to_string(m) + " serialized to nothing: a type is not registered");
  return transport::frame(std::string_view(payload.data(), payload.size()));
}

expected<caf::message> decode(caf::actor_system& sys, const std::vector<char>& bytes, int source) {
  auto payload = transport::unframe(bytes, source);
  if (!payload) return tl::unexpected(payload.error());
  caf::binary_deserializer src{sys, payload->data(), payload->size()};
  caf::message m;
  if (auto err = src(m))
    return make_error(errc::invalid_input, "message from rank " + std::to_string(source) + " cannot be read: " + sys.render(err));
  if (src.remaining() != 0)
    return make_error(errc::invalid_input, "message from rank " + std::to_string(source) + " has " +
                                               std::to_string(src.remaining()) + " bytes past its end");
  return m;
}

}  // namespace kevolve::actors

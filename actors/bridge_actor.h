// The MPI bridge of a rank. Outgoing: local actors send the bridge
// (route_atom, dest rank, message); it encodes the message (codec.h) and
// queues it on the transport, which never blocks. Incoming: the transport's
// thread decodes each frame and delivers it to the rank's receiving actor
// (the coordinator on rank 0, the rank actor elsewhere); a frame that cannot
// be read arrives as codec_failure.
#pragma once

#include <caf/fwd.hpp>

#include "transport/transport.h"

namespace kevolve::actors {

caf::actor spawn_bridge(caf::actor_system& sys, transport::transport& t);
// Starts the transport, delivering what arrives to `receiver`.
void start_delivery(caf::actor_system& sys, transport::transport& t, caf::actor receiver);

}  // namespace kevolve::actors

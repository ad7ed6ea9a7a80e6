// Writes checkpoints on its own thread (detached: HDF5 I/O blocks), so the
// coordinator never waits on the disk. Replies checkpoint_done to the sender.
#pragma once

#include <filesystem>

#include <caf/fwd.hpp>

namespace kevolve::actors {

caf::actor spawn_store_actor(caf::actor_system& sys, std::filesystem::path store);

}  // namespace kevolve::actors

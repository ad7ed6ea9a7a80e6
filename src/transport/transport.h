// Moves framed byte messages between the ranks of a job. Implementations:
// mpi_transport (Open MPI, the only MPI user) and loopback_network (ranks
// inside one process, for tests). Sends never block the caller; received
// messages are handed to a callback on the transport's own thread.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace kevolve::transport {

class transport {
 public:
  using receiver = std::function<void(int source, std::vector<char> bytes)>;
  virtual ~transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Queues `bytes` for rank `dest`. Thread-safe; never blocks.
  virtual void send(int dest, std::vector<char> bytes) = 0;
  // Starts delivering incoming messages to `on_message`.
  virtual void start(receiver on_message) = 0;
  // Waits up to `drain` for queued sends to complete, then stops delivering.
  // False when some sends did not complete (a peer is gone or hung).
  virtual bool stop(std::chrono::milliseconds drain) = 0;
};

}  // namespace kevolve::transport

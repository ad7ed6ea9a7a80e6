// Ranks inside one process: a network of `size` endpoints whose messages go
// through in-memory queues, each endpoint delivering on its own thread, as
// MPI would. For tests of the runtime without MPI; `cut(rank)` makes a rank
// unreachable (its messages dropped both ways), as a dead node would be.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "transport/transport.h"

namespace kevolve::transport {

class loopback_network {
 public:
  explicit loopback_network(int size);
  ~loopback_network();
  transport& endpoint(int rank);
  void cut(int rank);
  bool is_cut(int rank) const;

 private:
  class endpoint_impl;
  std::vector<std::unique_ptr<endpoint_impl>> endpoints_;
  mutable std::mutex mutex_;
  std::set<int> cut_;
  friend class endpoint_impl;
};

}  // namespace kevolve::transport

// The MPI transport: one progress thread per rank owns every MPI call after
// MPI_Init_thread (so MPI_THREAD_SERIALIZED suffices). It posts queued sends
// with MPI_Isend, tests them, and polls for messages with MPI_Iprobe; when
// there is nothing to do it sleeps with a growing backoff (50 us to 5 ms) and
// wakes at once when a send is queued, so an idle rank costs well under 5% of
// a core (see ../shared/STACK.md on why blocking probes are worse).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "transport/transport.h"

namespace kevolve::transport {

class mpi_transport final : public transport {
 public:
  // MPI_Init_thread; errors when MPI cannot start or lacks the thread level.
  static expected<std::unique_ptr<mpi_transport>> init();
  ~mpi_transport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int dest, std::vector<char> bytes) override;
  void start(receiver on_message) override;
  bool stop(std::chrono::milliseconds drain) override;

  // Ends MPI: MPI_Finalize when every peer is known to be alive and drained
  // (`clean`); otherwise the caller must leave without it (Open MPI's
  // finalize waits for every rank, so a hung peer would hang this one).
  void finalize(bool clean);

 private:
  mpi_transport() = default;
  void progress_loop();

  int rank_ = 0;
  int size_ = 1;
  receiver on_message_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<int, std::vector<char>>> outbox_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> unfinished_{0};  // queued + posted, not yet completed
  bool finalized_ = false;
};

}  // namespace kevolve::transport

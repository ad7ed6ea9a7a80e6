#include "transport/mpi_transport.h"

#include <mpi.h>

#include <algorithm>

namespace kevolve::transport {
namespace {

constexpr int kTag = 17;

struct posted_send {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<char> bytes;  // kept alive until the send completes
};

// Buffers of sends that never completed (a peer gone or hung): MPI may still
// read them, so they live until the process exits.
std::vector<std::vector<char>>& abandoned_buffers() {
  static auto* buffers = new std::vector<std::vector<char>>();
  return *buffers;
}

}  // namespace

expected<std::unique_ptr<mpi_transport>> mpi_transport::init() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    return make_error(errc::io_error, "MPI_Init_thread failed");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    return make_error(errc::io_error, "the MPI library grants thread level " + std::to_string(provided) +
                                          "; kevolve needs MPI_THREAD_SERIALIZED");
  }
  std::unique_ptr<mpi_transport> t(new mpi_transport());
  MPI_Comm_rank(MPI_COMM_WORLD, &t->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &t->size_);
  return t;
}

mpi_transport::~mpi_transport() {
  if (thread_.joinable()) stop(std::chrono::milliseconds(0));
}

void mpi_transport::send(int dest, std::vector<char> bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    outbox_.emplace_back(dest, std::move(bytes));
    ++unfinished_;
  }
  wake_.notify_one();
}

void mpi_transport::start(receiver on_message) {
  on_message_ = std::move(on_message);
  thread_ = std::thread([this] { progress_loop(); });
}

bool mpi_transport::stop(std::chrono::milliseconds drain) {
  const auto until = std::chrono::steady_clock::now() + drain;
  while (unfinished_ > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool drained = unfinished_ == 0;
  stopping_ = true;
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  return drained;
}

void mpi_transport::finalize(bool clean) {
  if (finalized_) return;
  finalized_ = true;
  if (clean) MPI_Finalize();
}

void mpi_transport::progress_loop() {
  std::vector<posted_send> posted;
  std::vector<char> incoming;
  auto backoff = std::chrono::microseconds(50);
  while (!stopping_) {
    bool busy = false;
    // Post what was queued.
    std::deque<std::pair<int, std::vector<char>>> batch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batch.swap(outbox_);
    }
    for (auto& [dest, bytes] : batch) {
      posted.push_back(posted_send{MPI_REQUEST_NULL, std::move(bytes)});
      posted_send& p = posted.back();
      MPI_Isend(p.bytes.data(), int(p.bytes.size()), MPI_BYTE, dest, kTag, MPI_COMM_WORLD, &p.request);
      busy = true;
    }
    // Retire completed sends.
    for (size_t i = 0; i < posted.size();) {
      int done = 0;
      MPI_Test(&posted[i].request, &done, MPI_STATUS_IGNORE);
      if (done) {
        posted[i] = std::move(posted.back());
        posted.pop_back();
        --unfinished_;
      } else {
        ++i;
      }
    }
    // Receive everything that has arrived.
    for (;;) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &status);
      if (!flag) break;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      incoming.assign(size_t(count), 0);
      MPI_Recv(incoming.data(), count, MPI_BYTE, status.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (on_message_) on_message_(status.MPI_SOURCE, std::move(incoming));
      busy = true;
    }
    if (busy) {
      backoff = std::chrono::microseconds(50);
      continue;
    }
    // Idle, or only waiting on posted sends: sleep, waking for new sends.
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, backoff, [this] { return stopping_ || !outbox_.empty(); });
    backoff = std::min(backoff * 2, std::chrono::microseconds(5000));
  }
  // Sends to a peer that never receives stay posted (their buffers leak with
  // this thread's exit); the caller then leaves without MPI_Finalize.
  for (auto& p : posted) abandoned_buffers().push_back(std::move(p.bytes));
}

}  // namespace kevolve::transport

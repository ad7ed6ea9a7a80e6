#include "transport/loopback.h"

#include <condition_variable>
#include <deque>
#include <thread>

namespace kevolve::transport {

class loopback_network::endpoint_impl final : public transport {
 public:
  endpoint_impl(loopback_network& net, int rank) : net_(net), rank_(rank) {}
  ~endpoint_impl() override { stop(std::chrono::milliseconds(0)); }

  int rank() const override { return rank_; }
  int size() const override { return int(net_.endpoints_.size()); }
  void send(int dest, std::vector<char> bytes) override {
    if (net_.is_cut(rank_) || net_.is_cut(dest) || dest < 0 || dest >= size()) return;
    net_.endpoints_[size_t(dest)]->deliver(rank_, std::move(bytes));
  }
  void start(receiver on_message) override {
    on_message_ = std::move(on_message);
    thread_ = std::thread([this] { loop(); });
  }
  bool stop(std::chrono::milliseconds) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
    return true;
  }
  void deliver(int source, std::vector<char> bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      inbox_.emplace_back(source, std::move(bytes));
    }
    wake_.notify_one();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !inbox_.empty(); });
      if (stopping_) return;
      auto [source, bytes] = std::move(inbox_.front());
      inbox_.pop_front();
      lock.unlock();
      if (!net_.is_cut(rank_) && on_message_) on_message_(source, std::move(bytes));
      lock.lock();
    }
  }

  loopback_network& net_;
  int rank_;
  receiver on_message_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<int, std::vector<char>>> inbox_;
  bool stopping_ = false;
};

loopback_network::loopback_network(int size) {
  for (int r = 0; r < size; ++r) endpoints_.push_back(std::make_unique<endpoint_impl>(*this, r));
}

loopback_network::~loopback_network() {
  for (auto& e : endpoints_) e->stop(std::chrono::milliseconds(0));
}

transport& loopback_network::endpoint(int rank) { return *endpoints_.at(size_t(rank)); }

void loopback_network::cut(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  cut_.insert(rank);
}

bool loopback_network::is_cut(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cut_.count(rank) > 0;
}

}  // namespace kevolve::transport

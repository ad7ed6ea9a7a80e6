// A binary min-heap for the timing model's event queues. Its keys are a
// strict total order (time, then a unique sequence number), so it pops in
// exactly the order std::priority_queue would; unlike it, a pushed value is
// never copied through a temporary in memory (the host stalls reloading a
// just-written struct), only moved along the hole.
#pragma once

#include <cstddef>
#include <vector>

namespace kevolve::emu::mtia {

template <class T>  // T: bool before(const T&) const, a strict total order
class min_heap {
 public:
  bool empty() const { return v_.empty(); }
  const T& top() const { return v_.front(); }

  void push(const T x) {
    std::size_t i = v_.size();
    v_.emplace_back();
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!x.before(v_[parent])) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = x;
  }

  void pop() {
    const std::size_t n = v_.size() - 1;
    if (n == 0) return v_.pop_back();
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && v_[child + 1].before(v_[child])) ++child;
      if (!v_[child].before(v_[n])) break;
      v_[i] = v_[child];
      i = child;
    }
    v_[i] = v_[n];
    v_.pop_back();
  }

 private:
  std::vector<T> v_;
};

}  // namespace kevolve::emu::mtia

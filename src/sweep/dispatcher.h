// Keeps every evaluator busy and no candidate lost: ready requests wait per
// backend; each evaluator holds up to `queue_depth` of them (one running,
// the rest waiting on the rank, so it never idles between two); a request
// whose evaluator misses the deadline, or whose evaluator falls silent, goes
// back to the front of the queue for another evaluator. The first verdict
// for a request wins; a late second one is dropped, so nothing is counted
// twice. A plain class: times are passed in, nothing waits.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sweep/work.h"

namespace kevolve::sweep {

struct dispatch_config {
  int queue_depth = 2;
  double deadline_seconds = 900;
  double silence_seconds = 60;
};

// Something the coordinator should tell the user about.
struct dispatch_event {
  int rank = 0;
  std::string what;  // "missed the deadline of request 7 (task ...): its 2 requests go elsewhere"
};

class dispatcher {
 public:
  explicit dispatcher(dispatch_config c) : config_(c) {}

  void add_evaluator(int rank, const std::string& backend, const std::string& host, double now);
  // A request ready to evaluate (`front`: before the others).
  void enqueue(eval_request request, bool front = false);
  // What to send now: (rank, request) for every free slot that a ready
  // request of its backend can fill, preferring the task it did last.
  std::vector<std::pair<int, eval_request>> assign(double now);
  // How many more requests `backend` could take now: free slots of its
  // active evaluators minus the requests already waiting.
  int wanted(const std::string& backend) const;

  // A verdict from `rank`: the request it answers, or nothing when that
  // request was answered already (a late duplicate) or is unknown.
  std::optional<eval_request> complete(int rank, uint64_t id, double now);
  void heard_from(int rank, double now);
  // Deadlines and silence at `now`: late evaluators become suspect, silent
  // ones are retired; their requests are re-queued in front.
  std::vector<dispatch_event> check(double now);
  // Takes a rank out of service (it said it cannot serve, or it is gone).
  void retire(int rank);

  bool has_live(const std::string& backend) const;  // an evaluator not retired
  size_t outstanding() const { return requests_.size(); }
  size_t held() const;  // sent to an evaluator and not yet answered
  size_t ready(const std::string& backend) const;
  // Per rank: state, deadline misses, requests held.
  struct rank_view {
    std::string backend, host, state;
    int64_t deadline_misses = 0;
    int queue_depth = 0;
  };
  std::map<int, rank_view> ranks() const;

 private:
  struct evaluator {
    std::string backend, host;
    std::string state = "active";  // active | suspect | retired
    std::deque<uint64_t> held;     // in the order the rank works on them
    double head_since = 0;         // when the head request started (or was sent)
    double last_heard = 0;
    int64_t misses = 0;
    std::string last_task;
  };
  struct request_state {
    eval_request request;
    int rank = -1;  // holder, -1 while waiting in `ready_`
  };
  void requeue_held(evaluator& e);
  void drop_from_holders(uint64_t id, double now);

  dispatch_config config_;
  std::map<int, evaluator> evaluators_;
  std::map<uint64_t, request_state> requests_;           // not yet answered
  std::map<std::string, std::deque<uint64_t>> ready_;    // per backend
};

}  // namespace kevolve::sweep

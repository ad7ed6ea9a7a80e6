#include "sweep/dispatcher.h"

#include <algorithm>

namespace kevolve::sweep {

void dispatcher::add_evaluator(int rank, const std::string& backend, const std::string& host, double now) {
  evaluator& e = evaluators_[rank];
  e.backend = backend;
  e.host = host;
  e.last_heard = now;
}

void dispatcher::enqueue(eval_request request, bool front) {
  const uint64_t id = request.id;
  auto& q = ready_[request.backend];
  requests_[id] = request_state{std::move(request), -1};
  if (front) q.push_front(id);
  else q.push_back(id);
}

std::vector<std::pair<int, eval_request>> dispatcher::assign(double now) {
  std::vector<std::pair<int, eval_request>> out;
  // Fill the emptiest evaluators first: an idle rank gets work before a
  // busy one gets its next request.
  std::vector<std::pair<size_t, int>> order;
  for (const auto& [rank, e] : evaluators_)
    if (e.state == "active") order.emplace_back(e.held.size(), rank);
  for (int level = 0; level < config_.queue_depth; ++level)
    for (const auto& [held, rank] : order) {
      evaluator& e = evaluators_.at(rank);
      if (int(e.held.size()) > level) continue;
      auto& q = ready_[e.backend];
      if (q.empty()) continue;
      // The task this rank did last keeps its evaluator warm there.
      auto pick = q.begin();
      for (auto it = q.begin(); it != q.end() && it - q.begin() < 16; ++it)
        if (requests_.at(*it).request.task_id == e.last_task) {
          pick = it;
          break;
        }
      const uint64_t id = *pick;
      q.erase(pick);
      request_state& r = requests_.at(id);
      r.rank = rank;
      if (e.held.empty()) e.head_since = now;
      e.held.push_back(id);
      e.last_task = r.request.task_id;
      out.emplace_back(rank, r.request);
    }
  return out;
}

int dispatcher::wanted(const std::string& backend) const {
  int free = 0;
  for (const auto& [rank, e] : evaluators_)
    if (e.backend == backend && e.state == "active") free += config_.queue_depth - int(e.held.size());
  return free - int(ready(backend));
}

size_t dispatcher::ready(const std::string& backend) const {
  const auto it = ready_.find(backend);
  return it == ready_.end() ? 0 : it->second.size();
}

void dispatcher::drop_from_holders(uint64_t id, double now) {
  for (auto& [rank, e] : evaluators_) {
    auto it = std::find(e.held.begin(), e.held.end(), id);
    if (it == e.held.end()) continue;
    const bool head = it == e.held.begin();
    e.held.erase(it);
    if (head) e.head_since = now;
  }
  for (auto& [backend, q] : ready_) q.erase(std::remove(q.begin(), q.end(), id), q.end());
}

std::optional<eval_request> dispatcher::complete(int rank, uint64_t id, double now) {
  heard_from(rank, now);
  auto it = requests_.find(id);
  if (it == requests_.end()) return std::nullopt;
  eval_request r = std::move(it->second.request);
  requests_.erase(it);
  drop_from_holders(id, now);
  if (auto e = evaluators_.find(rank); e != evaluators_.end() && e->second.state == "suspect") e->second.state = "active";
  return r;
}

void dispatcher::heard_from(int rank, double now) {
  if (auto e = evaluators_.find(rank); e != evaluators_.end()) e->second.last_heard = now;
}

void dispatcher::requeue_held(evaluator& e) {
  // Back to the front, in the order they were held.
  for (auto it = e.held.rbegin(); it != e.held.rend(); ++it) {
    request_state& r = requests_.at(*it);
    r.rank = -1;
    ready_[r.request.backend].push_front(*it);
  }
  e.held.clear();
}

std::vector<dispatch_event> dispatcher::check(double now) {
  std::vector<dispatch_event> events;
  for (auto& [rank, e] : evaluators_) {
    if (e.state == "retired") continue;
    if (now - e.last_heard > config_.silence_seconds) {
      const size_t n = e.held.size();
      requeue_held(e);
      e.state = "retired";
      events.push_back({rank, "has not been heard from for " + std::to_string(int(now - e.last_heard)) +
                                  " s: retired; its " + std::to_string(n) + " request(s) go to other ranks"});
      continue;
    }
    if (e.state == "active" && !e.held.empty() && now - e.head_since > config_.deadline_seconds) {
      const eval_request& late = requests_.at(e.held.front()).request;
      const std::string what = "missed the " + std::to_string(int(config_.deadline_seconds)) + " s deadline of node " +
                               std::to_string(late.node) + " of " + late.task_id + ": suspect; its " +
                               std::to_string(e.held.size()) + " request(s) go to other ranks";
      requeue_held(e);
      e.state = "suspect";
      ++e.misses;
      events.push_back({rank, what});
    }
  }
  return events;
}

void dispatcher::retire(int rank) {
  auto it = evaluators_.find(rank);
  if (it == evaluators_.end()) return;
  requeue_held(it->second);
  it->second.state = "retired";
}

size_t dispatcher::held() const {
  size_t n = 0;
  for (const auto& [id, r] : requests_) n += r.rank != -1;
  return n;
}

bool dispatcher::has_live(const std::string& backend) const {
  for (const auto& [rank, e] : evaluators_)
    if (e.backend == backend && e.state != "retired") return true;
  return false;
}

std::map<int, dispatcher::rank_view> dispatcher::ranks() const {
  std::map<int, rank_view> out;
  for (const auto& [rank, e] : evaluators_) out[rank] = rank_view{e.backend, e.host, e.state, e.misses, int(e.held.size())};
  return out;
}

}  // namespace kevolve::sweep

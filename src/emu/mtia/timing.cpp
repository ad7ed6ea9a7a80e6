#include "emu/mtia/timing.h"

#include <algorithm>
#include <limits>

#include "emu/mtia/flows.h"
#include "emu/mtia/memory.h"
#include "emu/mtia/min_heap.h"

namespace kevolve::emu::mtia {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
// Commands fetched into the host's cache ahead of their replay: the traces
// of a launch are far larger than the cache, and 64 PEs' interleaved streams
// are more than the hardware prefetcher follows.
constexpr uint32_t prefetch_ahead = 8;

struct pe_clock {
  uint32_t issue_pos = 0;
  double issue_clock = 0, issue_busy = 0, last_end = 0;
  std::array<uint32_t, n_engines> head{};
  std::array<double, n_engines> free{};
  std::array<bool, n_engines> dma_busy{};
  std::array<double, n_engines> busy{};
  std::array<double, n_engines> dma_start{};
  // End time of a dependency the engine's head command found unfinished
  // (nullptr if none): while it stays -1 the head is not ready.
  std::array<const double*, n_engines> blocked{};
  std::array<const uint32_t*, n_engines> queue{};  // the PE's engine queues (fixed during the replay)
  std::array<uint32_t, n_engines> queued{};
  bool at_barrier = false, dirty = false;
  double arrival = 0;
  uint32_t waiting = 0;  // bit e: engine e has commands left and no DMA in flight
};

struct pending {
  double t;
  uint64_t seq;
  uint32_t pe, idx;
  bool before(const pending& o) const { return t != o.t ? t < o.t : seq < o.seq; }
};

class replayer {
 public:
  replayer(const params& p, std::vector<pe_state>& pes, int active, run_result& out)
      : p_(p), pes_(pes), active_(active), out_(out), flows_(p), st_(static_cast<size_t>(active)) {
    for (pe_state& pe : pes_) trace_.push_back(pe.trace.data());
    for (int i = 0; i < active_; ++i)
      for (int e = 0; e < n_engines; ++e) {
        st_[i].queue[e] = pes_[i].queue[e].data();
        st_[i].queued[e] = static_cast<uint32_t>(pes_[i].queue[e].size());
      }
  }

  bool run(std::string* error) {
    for (int i = 0; i < active_; ++i) {
      const pre_issue& pre = pes_[i].pre;
      st_[i].issue_pos = pre.count;
      st_[i].issue_clock = pre.clock;
      st_[i].issue_busy = pre.busy;
      out_.issued += pre.issued;
      for (int e = 0; e < n_engines; ++e)
        if (!pes_[i].queue[e].empty()) st_[i].waiting |= 1u << e;
      mark(i);
    }
    std::vector<flow_done> done;
    for (;;) {
      while (!dirty_.empty()) {
        const uint32_t i = dirty_.back();
        dirty_.pop_back();
        st_[i].dirty = false;
        advance(i);
      }
      const double t_start = starts_.empty() ? inf : starts_.top().t;
      const double t_done = flows_.next_done(now_);
      if (t_start == inf && t_done == inf) break;
      if (t_start <= t_done) {
        pass_time(t_start);
        const pending s = starts_.top();
        starts_.pop();
        begin_flow(s.pe, s.idx);
      } else {
        pass_time(t_done);
        done.clear();
        flows_.complete_next(&done);
        for (const flow_done& d : done) finish_flow(d.pe, d.idx);
      }
    }
    return finish(error);
  }

 private:
  // Moves the clock to t, counting the memory bandwidth left unused (in
  // cycles of the busiest level's peak).
  void pass_time(double t) {
    unused_ += (1.0 - flows_.busy_share()) * (t - now_);
    flows_.advance(t - now_);
    now_ = t;
  }

  void mark(uint32_t i) {
    if (i < st_.size() && !st_[i].dirty) st_[i].dirty = true, dirty_.push_back(i);
  }

  bool dma(const command& c) const { return (c.eng == fi_in || c.eng == fi_out) && c.op != op_pop; }

  // Every command before issue_pos has completed.
  bool drained(uint32_t i) const {
    const pe_clock& s = st_[i];
    for (int e = 0; e < n_engines; ++e)
      if (s.dma_busy[e] || s.head[e] < pes_[i].queue[e].size()) {
        const auto& q = pes_[i].queue[e];
        if (s.dma_busy[e] || q[s.head[e]] < s.issue_pos) return false;
      }
    return true;
  }

  void issue(uint32_t i, bool* progress) {
    pe_clock& s = st_[i];
    auto& tr = pes_[i].trace;
    while (s.issue_pos < tr.size() && !s.at_barrier) {
      if (s.issue_pos + prefetch_ahead < tr.size()) __builtin_prefetch(&tr[s.issue_pos + prefetch_ahead], 1);
      command& c = tr[s.issue_pos];
      if (c.kind == cmd_kind::engine_op) {
        c.issue = s.issue_clock;
        if (!c.free_issue) {
          s.issue_clock += p_.issue_cycles;
          s.issue_busy += p_.issue_cycles;
          ++out_.issued;
        }
        ++s.issue_pos;
        *progress = true;
        continue;
      }
      if (c.kind == cmd_kind::scalar) {  // a peek or push: in order, after its deps
        if (!scalar_ready(c, &s.issue_clock)) return;
        c.issue = s.issue_clock;
        c.end = s.issue_clock += c.work;
        s.issue_busy += c.work;
        s.last_end = std::max(s.last_end, c.end);
        ++s.issue_pos;
        *progress = true;
        continue;
      }
      if (!drained(i)) return;
      const double t = std::max(s.issue_clock, s.last_end);
      c.issue = t;
      if (c.kind == cmd_kind::fence) {
        c.end = t + c.work;
        out_.stalls[stall_barrier] += c.work;
        s.issue_clock = s.last_end = c.end;
        ++s.issue_pos;
        *progress = true;
        continue;
      }
      s.at_barrier = true;  // barrier: released when every PE has arrived
      s.arrival = t;
      max_arrival_ = std::max(max_arrival_, t);
      if (++arrived_ == active_) release_barrier();
      return;
    }
  }

  // Moves *clock to the end of every dep of a scalar-core command; false
  // while one of them has not finished.
  bool scalar_ready(const command& c, double* clock) const {
    double t = *clock;
    for (const cmd_ref& r : c.dep) {
      if (r.none()) continue;
      const double end = r.pe < pes_.size() ? pes_[r.pe].trace[r.idx].end : -1;
      if (end < 0) return false;
      t = std::max(t, end);
    }
    *clock = t;
    return true;
  }

  void release_barrier() {
    const double release = max_arrival_ + p_.barrier_cycles;
    for (int j = 0; j < active_; ++j) {
      pe_clock& s = st_[j];
      command& c = pes_[j].trace[s.issue_pos];
      c.end = release;
      out_.stalls[stall_barrier] += release - s.arrival;
      s.issue_clock = s.last_end = release;
      s.at_barrier = false;
      ++s.issue_pos;
      mark(j);
    }
    arrived_ = 0;
    max_arrival_ = 0;
  }

  void charge(double efree, double start, double t_issue, double t_in, double t_out, double t_lat) {
    const double gap = start - efree;
    if (gap <= 0) return;
    int why = stall_issue;
    double t = t_issue;
    if (t_in > t) t = t_in, why = stall_input;
    if (t_out > t) t = t_out, why = stall_output;
    if (t_lat > t) why = stall_dma_latency;
    out_.stalls[why] += gap;
  }

  void advance(uint32_t i) {
    pe_clock& s = st_[i];
    command* const tr = trace_[i];
    bool progress = true;
    while (progress) {
      progress = false;
      issue(i, &progress);
      // Engines in order, skipping those with nothing to start.
      for (uint32_t m = s.waiting; m; m &= m - 1) {
        const int e = __builtin_ctz(m);
        const uint32_t* const q = s.queue[e];
        const uint32_t qn = s.queued[e];
        while (s.head[e] < qn && !s.dma_busy[e]) {
          const uint32_t idx = q[s.head[e]];
          if (idx >= s.issue_pos) break;
          if (s.blocked[e] && *s.blocked[e] < 0) break;
          if (s.head[e] + 4 * prefetch_ahead < qn) __builtin_prefetch(&q[s.head[e] + 4 * prefetch_ahead]);
          if (s.head[e] + prefetch_ahead < qn) __builtin_prefetch(&tr[q[s.head[e] + prefetch_ahead]], 1);
          command& c = tr[idx];
          double t_in = 0, t_out = 0;
          const double* blocked = nullptr;
          for (int d = 0; d < n_deps && !blocked; ++d) {
            const cmd_ref r = c.dep[d];
            if (r.none()) continue;
            const double* end = r.pe < trace_.size() ? &trace_[r.pe][r.idx].end : &never_;
            if (*end < 0) blocked = end;
            else if (d == dep_out) t_out = std::max(t_out, *end);
            else t_in = std::max(t_in, *end);
          }
          s.blocked[e] = blocked;
          if (blocked) break;
          double efree = s.free[e];
          if (c.eng2 != no_engine) efree = std::max(efree, s.free[c.eng2]);
          const double base = std::max({c.issue, t_in, t_out});
          if (++s.head[e] == qn) s.waiting &= ~(1u << e);
          progress = true;
          if (dma(c)) {
            const double lat = (c.lvl == uint8_t(level::dram) ? p_.dram_latency_cycles : p_.sram_latency_cycles) +
                               p_.dma_descriptor_cycles;
            const double start = std::max({base + lat, efree, now_});
            charge(efree, start, c.issue, t_in, t_out, base + lat);
            s.dma_busy[e] = true;
            s.waiting &= ~(1u << e);
            s.dma_start[e] = start;
            if (start <= now_) begin_flow(i, idx);
            else starts_.push(pending{start, seq_++, i, idx});
            break;
          }
          const double start = std::max(base, efree);
          charge(efree, start, c.issue, t_in, t_out, 0);
          c.end = start + c.work;
          s.free[e] = c.end;
          s.busy[e] += c.work;
          if (c.eng2 != no_engine) s.free[c.eng2] = c.end, s.busy[c.eng2] += c.work;
          s.last_end = std::max(s.last_end, c.end);
          if (c.wake_pe != UINT16_MAX) mark(c.wake_pe);
        }
      }
    }
  }

  void begin_flow(uint32_t i, uint32_t idx) {
    const command& c = pes_[i].trace[idx];
    const bool dram = c.lvl == uint8_t(level::dram);
    const float weight = c.weight();
    const double charged = c.work * weight;
    if (dram) (c.write ? out_.dram_write : out_.dram_read) += charged;
    else (c.write ? out_.sram_write : out_.sram_read) += charged;
    out_.noc_bytes += charged;
    flows_.start(flow_model::class_of(dram, c.write), c.work, weight, i, idx);
    if (first_flow_ < 0) first_flow_ = now_;
  }

  void finish_flow(uint32_t i, uint32_t idx) {
    pe_clock& s = st_[i];
    command& c = pes_[i].trace[idx];
    const int e = c.eng;
    c.end = now_;
    const double took = now_ - s.dma_start[e];
    s.busy[e] += took;
    out_.stalls[stall_bandwidth] += std::max(0.0, took - c.work / p_.fi_bytes_per_cycle);
    s.free[e] = now_;
    s.dma_busy[e] = false;
    if (s.head[e] < pes_[i].queue[e].size()) s.waiting |= 1u << e;
    s.last_end = std::max(s.last_end, now_);
    if (!c.write) unused_at_last_read_ = unused_, read_ = true;
    mark(i);
  }

  bool finish(std::string* error) {
    double end = 0, max_issue = 0, max_dpe = 0;
    std::vector<double> pe_end(static_cast<std::size_t>(active_), 0.0);
    for (int i = 0; i < active_; ++i) {
      const pe_clock& s = st_[i];
      const auto& tr = pes_[i].trace;
      out_.commands += tr.size();
      if (s.issue_pos < tr.size() || !drained(static_cast<uint32_t>(i))) {
        uint32_t stuck = s.issue_pos;
        for (int e = 0; e < n_engines; ++e)
          if (s.head[e] < pes_[i].queue[e].size()) stuck = std::min(stuck, pes_[i].queue[e][s.head[e]]);
        const command& c = tr[std::min<size_t>(stuck, tr.size() - 1)];
        *error = "pe " + std::to_string(i) + ": command " + std::to_string(stuck) + " on " + engine_name(c.eng) +
                 " waits forever (a circular buffer slot nobody frees, or a buffer read and written by one engine)";
        return false;
      }
      pe_end[static_cast<std::size_t>(i)] = std::max(s.last_end, s.issue_clock);
      end = std::max(end, pe_end[static_cast<std::size_t>(i)]);
      max_issue = std::max(max_issue, s.issue_busy);
      max_dpe = std::max(max_dpe, s.busy[dpe]);
      for (int e = 0; e < n_engines; ++e) out_.busy[e] += s.busy[e];
    }
    for (const double e : pe_end) out_.pe_done_cycles += end - e;
    unused_ += std::max(0.0, end - now_);  // no transfer after the last event
    out_.mem_unused_cycles += unused_;
    out_.mem_head_cycles += first_flow_ < 0 ? end : first_flow_;
    out_.mem_tail_cycles += read_ ? unused_ - unused_at_last_read_ : 0.0;
    out_.pe_cycles += double(active_) * end;
    out_.cycles += end + p_.launch_cycles;
    out_.max_issue_cycles += max_issue;
    out_.dpe_max_pe_busy += max_dpe;
    ++out_.launches;
    return true;
  }

  const params& p_;
  std::vector<pe_state>& pes_;
  int active_;
  run_result& out_;
  flow_model flows_;
  std::vector<pe_clock> st_;
  std::vector<command*> trace_;  // pes_[i].trace.data() (fixed during the replay)
  static constexpr double never_ = -1;  // end of an unresolved dependency
  std::vector<uint32_t> dirty_;
  min_heap<pending> starts_;
  double now_ = 0;
  uint64_t seq_ = 0;
  int arrived_ = 0;
  double max_arrival_ = 0;
  // Memory bandwidth unused (cycles of the busiest level's peak), when the
  // first transfer began, and the unused cycles counted when the last read
  // (a transfer into a PE) ended.
  double unused_ = 0, first_flow_ = -1, unused_at_last_read_ = 0;
  bool read_ = false;
};

}  // namespace

bool replay_launch(const params& p, std::vector<pe_state>& pes, int active, run_result& out, std::string* error) {
  replayer r(p, pes, active, out);
  return r.run(error);
}

}  // namespace kevolve::emu::mtia

// Shared-bandwidth arbitration for DMA transfers: processor sharing per
// class (SRAM/DRAM x read/write). Every flow of a class moves at
//   min(PE port, level bandwidth / weight on that level, NoC / weight on the NoC)
// and the rates are recomputed at every start and finish. Each class keeps a
// virtual clock (bytes a flow of the class has moved since the start), so an
// event costs O(classes + log flows).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "emu/mtia/min_heap.h"
#include "emu/mtia/params.h"

namespace kevolve::emu::mtia {

struct flow_done {
  uint32_t pe, idx;
};

class flow_model {
 public:
  static constexpr int n_classes = 4;  // (dram ? 2 : 0) + write
  explicit flow_model(const params& p);

  static int class_of(bool dram, bool write) { return (dram ? 2 : 0) + (write ? 1 : 0); }
  // Adds a flow at the current time.
  void start(int cls, double bytes, float weight, uint32_t pe, uint32_t idx);
  // Time of the next completion (infinity if none).
  double next_done(double now) const;
  // Moves every class forward by dt cycles.
  void advance(double dt);
  // Completes the flows of the class that finishes first; appends them.
  void complete_next(std::vector<flow_done>* done);
  bool idle() const { return active_ == 0; }
  // The busiest level's share of its bandwidth in use now (SRAM, DRAM or the
  // NoC; 0 when idle, 1 when a level moves at its peak).
  double busy_share() const;

 private:
  struct entry {
    double finish_v;
    uint64_t seq;
    uint32_t pe, idx;
    float weight;
    bool before(const entry& o) const { return finish_v != o.finish_v ? finish_v < o.finish_v : seq < o.seq; }
  };
  struct klass {
    double vtime = 0, rate = 0, weight = 0;
    min_heap<entry> heap;
  };
  void recompute();
  std::array<klass, n_classes> cls_;
  double port_, sram_bw_, dram_bw_, noc_bw_;
  uint64_t seq_ = 0;
  int active_ = 0;
};

}  // namespace kevolve::emu::mtia

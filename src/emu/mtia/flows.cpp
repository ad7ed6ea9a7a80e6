#include "emu/mtia/flows.h"

#include <algorithm>
#include <limits>

namespace kevolve::emu::mtia {

flow_model::flow_model(const params& p)
    : port_(p.fi_bytes_per_cycle),
      sram_bw_(p.sram_bytes_per_cycle),
      dram_bw_(p.dram_effective_bytes_per_cycle()),
      noc_bw_(p.noc_bytes_per_cycle) {}

void flow_model::recompute() {
  const double w_sram = cls_[0].weight + cls_[1].weight;
  const double w_dram = cls_[2].weight + cls_[3].weight;
  const double w_noc = w_sram + w_dram;
  for (int c = 0; c < n_classes; ++c) {
    klass& k = cls_[c];
    if (k.heap.empty()) {
      k.rate = 0;
      continue;
    }
    const double lvl = c < 2 ? sram_bw_ / w_sram : dram_bw_ / w_dram;
    k.rate = std::min({port_, lvl, noc_bw_ / w_noc});
  }
}

double flow_model::busy_share() const {
  if (active_ == 0) return 0;
  const double sram = cls_[0].rate * cls_[0].weight + cls_[1].rate * cls_[1].weight;
  const double dram = cls_[2].rate * cls_[2].weight + cls_[3].rate * cls_[3].weight;
  return std::min(1.0, std::max({sram / sram_bw_, dram / dram_bw_, (sram + dram) / noc_bw_}));
}

void flow_model::start(int c, double bytes, float weight, uint32_t pe, uint32_t idx) {
  klass& k = cls_[c];
  k.heap.push(entry{k.vtime + bytes, seq_++, pe, idx, weight});
  k.weight += weight;
  ++active_;
  recompute();
}

double flow_model::next_done(double now) const {
  double best = std::numeric_limits<double>::infinity();
  for (const klass& k : cls_)
    if (!k.heap.empty()) best = std::min(best, now + (k.heap.top().finish_v - k.vtime) / k.rate);
  return best;
}

void flow_model::advance(double dt) {
  if (dt <= 0) return;
  for (klass& k : cls_)
    if (!k.heap.empty()) k.vtime += k.rate * dt;
}

void flow_model::complete_next(std::vector<flow_done>* done) {
  int best = -1;
  double best_t = std::numeric_limits<double>::infinity();
  for (int c = 0; c < n_classes; ++c) {
    const klass& k = cls_[c];
    if (k.heap.empty()) continue;
    const double t = (k.heap.top().finish_v - k.vtime) / k.rate;
    if (t < best_t) best_t = t, best = c;
  }
  if (best < 0) return;
  klass& k = cls_[best];
  k.vtime = std::max(k.vtime, k.heap.top().finish_v);  // exact, whatever rounding advance() did
  const double eps = 1e-9 * std::max(1.0, k.vtime);
  while (!k.heap.empty() && k.heap.top().finish_v <= k.vtime + eps) {
    const entry e = k.heap.top();
    k.heap.pop();
    k.weight -= e.weight;
    --active_;
    done->push_back(flow_done{e.pe, e.idx});
  }
  if (k.heap.empty()) k.weight = 0;  // no drift from float sums
  recompute();
}

}  // namespace kevolve::emu::mtia

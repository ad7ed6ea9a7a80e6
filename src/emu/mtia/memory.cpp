#include "emu/mtia/memory.h"

#include <algorithm>

namespace kevolve::emu::mtia {

const char* to_string(level l) {
  switch (l) {
    case level::sram: return "sram";
    case level::dram: return "dram";
    default: return "none";
  }
}

void memory::configure(double dram_capacity, double sram_capacity) {
  clear();
  dram_cap_ = static_cast<uint64_t>(dram_capacity);
  sram_cap_ = static_cast<uint64_t>(sram_capacity);
}

void memory::clear() {
  regions_.clear();
  dram_used_ = sram_used_ = 0;
}

uint64_t memory::alloc(level where, uint64_t bytes, std::string* error) {
  if (where == level::none) {
    if (error) *error = "allocation needs a memory level (dram or sram)";
    return 0;
  }
  const bool dram = where == level::dram;
  uint64_t& used = dram ? dram_used_ : sram_used_;
  const uint64_t cap = dram ? dram_cap_ : sram_cap_;
  const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 4095) & ~uint64_t(4095);
  if (used + rounded > cap) {
    if (error)
      *error = std::string(dram ? "dram" : "sram") + " overflow: " + std::to_string(used + rounded) +
               " bytes needed, capacity is " + std::to_string(cap);
    return 0;
  }
  region r;
  r.addr = (dram ? dram_base : sram_base) + used;
  r.bytes = bytes;
  r.data.assign(bytes, 0);
  used += rounded;
  const uint64_t addr = r.addr;
  auto pos = std::upper_bound(regions_.begin(), regions_.end(), addr,
                              [](uint64_t a, const region& x) { return a < x.addr; });
  regions_.insert(pos, std::move(r));
  return addr;
}

uint8_t* memory::resolve(uint64_t addr, uint64_t len, level* where) const {
  // The last region starting at or before addr: one of the two found last
  // (kernels alternate between a few buffers), else a binary search.
  auto holds = [&](std::size_t i) {
    return i < regions_.size() && regions_[i].addr <= addr && (i + 1 == regions_.size() || addr < regions_[i + 1].addr);
  };
  std::vector<region>::const_iterator it;
  if (holds(recent_[0])) {
    it = regions_.begin() + static_cast<std::ptrdiff_t>(recent_[0]);
  } else if (holds(recent_[1])) {
    it = regions_.begin() + static_cast<std::ptrdiff_t>(recent_[1]);
    std::swap(recent_[0], recent_[1]);
  } else {
    it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                          [](uint64_t a, const region& x) { return a < x.addr; });
    if (it == regions_.begin()) return nullptr;
    --it;
    recent_[1] = recent_[0];
    recent_[0] = static_cast<std::size_t>(it - regions_.begin());
  }
  if (addr - it->addr > it->bytes || len > it->bytes - (addr - it->addr)) return nullptr;
  if (where) *where = it->addr >= sram_base ? level::sram : level::dram;
  return const_cast<uint8_t*>(it->data.data()) + (addr - it->addr);
}

}  // namespace kevolve::emu::mtia

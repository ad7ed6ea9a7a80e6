// Device memory of the emulated chip: DRAM and the SRAM scratch (LLS), each a
// list of allocations backed by host memory. Device addresses live in
// non-canonical x86-64 ranges, so a kernel that dereferences one on the host
// faults instead of reading data without a DMA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kevolve::emu::mtia {

enum class level : uint8_t { none = 0, sram = 1, dram = 2 };
const char* to_string(level l);

class memory {
 public:
  static constexpr uint64_t dram_base = 0xD000000000000000ull;
  static constexpr uint64_t sram_base = 0xE000000000000000ull;

  void configure(double dram_capacity, double sram_capacity);
  // Device address of a new zeroed allocation, or 0 with `error` set
  // (capacity exceeded).
  uint64_t alloc(level where, uint64_t bytes, std::string* error);
  // Host bytes behind [addr, addr+len) if it lies inside one allocation, else nullptr.
  uint8_t* resolve(uint64_t addr, uint64_t len, level* where) const;
  void clear();
  uint64_t used(level where) const { return where == level::dram ? dram_used_ : sram_used_; }

 private:
  struct region {
    uint64_t addr;
    uint64_t bytes;
    std::vector<uint8_t> data;
  };
  std::vector<region> regions_;  // sorted by addr (bump allocation)
  mutable std::size_t recent_[2] = {0, 0};  // regions resolve() found last (checked before use)
  uint64_t dram_cap_ = 0, sram_cap_ = 0;
  uint64_t dram_used_ = 0, sram_used_ = 0;
};

}  // namespace kevolve::emu::mtia

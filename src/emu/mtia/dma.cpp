// DMA intrinsics: fabric interface transfers between device memory (DRAM or
// the SRAM scratch) and circular buffers, with the alignment rules.
#include <cstring>

#include "emu/mtia/device.h"
#include "emu/mtia/numerics.h"

namespace kevolve::emu::mtia {

namespace {
// v mod g and v rounded up to a multiple of g; a mask when g is a power of
// two (the profiles' alignment and granule), a division otherwise.
uint64_t mod(uint64_t v, uint64_t g) { return (g & (g - 1)) == 0 ? v & (g - 1) : v % g; }
uint64_t round_up(uint64_t v, uint64_t g) { return (g & (g - 1)) == 0 ? (v + g - 1) & ~(g - 1) : (v + g - 1) / g * g; }
std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}
}  // namespace

int device::check_view(const kv_mtia_view& v, const char* what, level* lvl, uint8_t** host, double* charged) {
  auto at = [&] { return "pe " + std::to_string(current_) + ": " + what + ": "; };
  if (v.rows < 1 || v.row_bytes < 1 || (v.rows > 1 && v.stride_bytes < v.row_bytes))
    return fail(KV_MTIA_ERR_ARG, at() + "a view needs rows >= 1, row_bytes >= 1 and stride_bytes >= row_bytes, got " +
                                     std::to_string(v.rows) + " x " + std::to_string(v.row_bytes) + " stride " +
                                     std::to_string(v.stride_bytes));
  const uint64_t align = static_cast<uint64_t>(p_.dma_align_bytes);
  if (align > 1 && (mod(v.addr, align) != 0 || (v.rows > 1 && mod(uint64_t(v.stride_bytes), align) != 0)))
    return fail(KV_MTIA_ERR_ALIGN, at() + "address " + hex(v.addr) + " and stride " + std::to_string(v.stride_bytes) +
                                       " must be multiples of " + std::to_string(align) + " bytes on " + p_.name);
  const uint64_t extent = uint64_t(v.rows - 1) * uint64_t(v.stride_bytes) + uint64_t(v.row_bytes);
  *host = mem_.resolve(v.addr, extent, lvl);
  if (!*host)
    return fail(KV_MTIA_ERR_ADDRESS, at() + "[" + hex(v.addr) + ", +" + std::to_string(extent) +
                                         ") is not inside one device allocation");
  const uint64_t g = static_cast<uint64_t>(p_.dma_granule_bytes);
  const uint64_t per_row = mod(uint64_t(v.stride_bytes), g) == 0 || v.rows == 1
                               ? round_up(uint64_t(v.row_bytes) + mod(v.addr, g), g)
                               : round_up(uint64_t(v.row_bytes), g) + g;
  *charged = static_cast<double>(per_row * uint64_t(v.rows));
  return KV_MTIA_OK;
}

int device::dma_in(int32_t cb, const kv_mtia_view& v, bool bcast) {
  const char* what = bcast ? "kv_mtia_dma_in_bcast" : "kv_mtia_dma_in";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  level lvl = level::none;
  uint8_t* src = nullptr;
  double charged = 0;
  if (check_view(v, what, &lvl, &src, &charged)) return result_.status;
  command* c = record(*pe, op_dma_in, fi_in, charged);
  if (!c) return result_.status;
  c->lvl = static_cast<uint8_t>(lvl);
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  uint8_t* dst = cb_write(*pe, cb, fi_in, v.rows * v.row_bytes, idx, what);
  if (failed()) return result_.status;
  if (dst && v.stride_bytes == v.row_bytes) {
    std::memcpy(dst, src, size_t(v.rows * v.row_bytes));  // rows back to back: one copy
  } else if (dst) {
    for (int64_t r = 0; r < v.rows; ++r) std::memcpy(dst + r * v.row_bytes, src + r * v.stride_bytes, v.row_bytes);
  }
  if (bcast)
    pe->bcasts.push_back(bcast_record{static_cast<uint32_t>(pe->bcasts.size()), idx, v.addr, uint64_t(v.rows),
                                      uint64_t(v.row_bytes), uint64_t(v.stride_bytes)});
  return KV_MTIA_OK;
}

int device::dma_out(const kv_mtia_view& v, int32_t cb, uint32_t flags) {
  const char* what = "kv_mtia_dma_out";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  level lvl = level::none;
  uint8_t* dst = nullptr;
  double charged = 0;
  if (check_view(v, what, &lvl, &dst, &charged)) return result_.status;
  command* c = record(*pe, op_dma_out, fi_out, charged);
  if (!c) return result_.status;
  c->lvl = static_cast<uint8_t>(lvl);
  c->write = 1;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* src = cb_read(*pe, cb, fi_out, v.rows * v.row_bytes, flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  if (src && v.stride_bytes == v.row_bytes) {
    std::memcpy(dst, src, size_t(v.rows * v.row_bytes));
  } else if (src) {
    for (int64_t r = 0; r < v.rows; ++r) std::memcpy(dst + r * v.stride_bytes, src + r * v.row_bytes, v.row_bytes);
  }
  return KV_MTIA_OK;
}

int device::dma_gather(int32_t cb, uint64_t table, int64_t table_rows, int64_t row_bytes, int64_t row_stride,
                       int32_t idx_cb, int32_t n_idx, int32_t idx_dtype, uint32_t flags) {
  const char* what = "kv_mtia_dma_gather";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (idx_dtype != KV_I32 && idx_dtype != KV_I64)
    return fail(KV_MTIA_ERR_ARG, std::string(what) + ": indices must be KV_I32 or KV_I64");
  if (n_idx < 1 || table_rows < 1)
    return fail(KV_MTIA_ERR_ARG, std::string(what) + ": needs n_idx >= 1 and table_rows >= 1");
  const bool pad = flags & KV_GATHER_ZERO_NEG;
  if (pad && need_functional(what)) return result_.status;  // the bytes moved depend on the indices
  level lvl = level::none;
  uint8_t* base = nullptr;
  double table_charge = 0;
  // Rows need not start on the alignment: the engine fetches the granules
  // that cover each row (charged as check_view charges an unaligned stride).
  if (row_stride < row_bytes && table_rows > 1)
    return fail(KV_MTIA_ERR_ARG, std::string(what) + ": row_stride must be >= row_bytes");
  const kv_mtia_view head{table, 1, row_bytes, row_bytes};  // alignment: the table's start only
  if (check_view(head, what, &lvl, &base, &table_charge)) return result_.status;
  if (!mem_.resolve(table, uint64_t(table_rows - 1) * uint64_t(row_stride) + uint64_t(row_bytes), nullptr))
    return fail(KV_MTIA_ERR_ADDRESS, std::string(what) + ": the table is not inside one device allocation");
  const uint64_t g = static_cast<uint64_t>(p_.dma_granule_bytes);
  const double per_row = static_cast<double>(uint64_t(row_stride) % g == 0 || table_rows == 1
                                                 ? round_up(uint64_t(row_bytes), g)
                                                 : round_up(uint64_t(row_bytes), g) + g);
  double charged = per_row * n_idx;
  command* c = record(*pe, op_gather, fi_in, charged);
  if (!c) return result_.status;
  c->lvl = static_cast<uint8_t>(lvl);
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const int isz = idx_dtype == KV_I32 ? 4 : 8;
  const uint8_t* ids = cb_read(*pe, idx_cb, fi_in, int64_t(n_idx) * isz, flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  uint8_t* dst = cb_write(*pe, cb, fi_in, int64_t(n_idx) * row_bytes, idx, what);
  if (failed() || !dst || !ids) return result_.status;
  for (int32_t i = 0; i < n_idx; ++i) {
    int64_t r;
    if (isz == 4) {
      r = load_i(ids, i);
    } else {
      std::memcpy(&r, ids + 8 * i, 8);
    }
    if (r < 0 && pad) {
      std::memset(dst + int64_t(i) * row_bytes, 0, row_bytes);
      charged -= per_row;
      continue;
    }
    if (r < 0 || r >= table_rows)
      return fail(KV_MTIA_ERR_ADDRESS, "pe " + std::to_string(pe->id) + ": " + what + ": index " + std::to_string(r) +
                                           " at position " + std::to_string(i) + " is outside the table's " +
                                           std::to_string(table_rows) + " rows");
    std::memcpy(dst + int64_t(i) * row_bytes, base + r * row_stride, row_bytes);
  }
  pe->trace[idx].work = charged;  // padding rows move nothing
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia

// Integer ops, compares and the local-memory gather: functional results of
// a 64-bit hash with a Barrett remainder and of a branch-free binary search
// against plain CPU references, their failure modes, and the timing
// invariants (roofline floor, monotonicity) on kernels that use them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

struct hash_ctx {
  uint64_t ids, out;
  int per_program, engine_vec;
  uint64_t salt, table;
  bool barrett;  // else KV_IOP_REM_U
};

// out = fmix64(ids ^ salt) mod table with one buffer per step.
void hash_program(kv_mtia_device* d, const void* u) {
  const hash_ctx& c = *static_cast<const hash_ctx*>(u);
  const int n = c.per_program, e = c.engine_vec, bytes = n * 8;
  const uint64_t off = uint64_t(kv_mtia_program_id(d)) * bytes;
  int cb[24];
  for (int& b : cb) b = kv_mtia_cb_alloc(d, bytes, 1);
  int k = 0;
  kv_mtia_dma_in(d, cb[0], kv_mtia_rows(c.ids + off, 1, bytes, bytes));
  auto op = [&](int iop, uint64_t imm, int y = -1) {
    kv_mtia_int_op(d, e, iop, cb[k], y >= 0 ? KV_CB_KEEP : KV_CB_POP, y, 0, cb[k + 1], n, KV_I64, imm);
    ++k;
  };
  op(KV_IOP_XOR, c.salt);
  for (uint64_t m : {0xff51afd7ed558ccdULL, 0xc4ceb9fe1a85ec53ULL, 0ULL}) {
    // k ^= k >> 33 needs k twice: shift a copy (OR 0), then XOR the copy back
    const int src = k;
    kv_mtia_int_op(d, e, KV_IOP_OR, cb[src], KV_CB_KEEP, -1, 0, cb[k + 1], n, KV_I64, 0);
    ++k;
    op(KV_IOP_SHR_U, 33);
    kv_mtia_int_op(d, e, KV_IOP_XOR, cb[k], KV_CB_POP, cb[src], KV_CB_POP, cb[k + 1], n, KV_I64, 0);
    ++k;
    if (m) op(KV_IOP_MUL, m);
  }
  if (!c.barrett) {
    op(KV_IOP_REM_U, c.table);
  } else {
    // q = mulhi(h, floor((2^64-1)/T)); r = h - q*T (< 3T); two conditional subtracts
    const int h = k;
    kv_mtia_int_op(d, e, KV_IOP_MULHI_U, cb[h], KV_CB_KEEP, -1, 0, cb[k + 1], n, KV_I64, ~0ULL / c.table);
    ++k;
    op(KV_IOP_MUL, c.table);
    kv_mtia_int_op(d, e, KV_IOP_SUB, cb[h], KV_CB_POP, cb[k], KV_CB_POP, cb[k + 1], n, KV_I64, 0);
    ++k;
    for (int i = 0; i < 2; ++i) {
      const int r = k;
      kv_mtia_int_op(d, e, KV_IOP_GE_U, cb[r], KV_CB_KEEP, -1, 0, cb[k + 1], n, KV_I64, c.table);
      ++k;
      kv_mtia_int_op(d, e, KV_IOP_ADD_IF, cb[r], KV_CB_POP, cb[k], KV_CB_POP, cb[k + 1], n, KV_I64, 0 - c.table);
      ++k;
    }
  }
  kv_mtia_dma_out(d, kv_mtia_rows(c.out + off, 1, bytes, bytes), cb[k], 0);
}

run_result run_hash(device& dev, hash_ctx c, const std::vector<int64_t>& ids, std::vector<uint64_t>* out) {
  const int64_t n = int64_t(ids.size());
  const kv_tensor ti = device_tensor(dev, level::sram, {n}, KV_I64, ids.data());
  const kv_tensor to = device_tensor(dev, level::sram, {n}, KV_I64);
  c.ids = addr_of(ti);
  c.out = addr_of(to);
  c.per_program = int(n / 64);
  dev.begin_run();
  kv_mtia_launch(dev.handle(), 64, hash_program, &c);
  run_result r = dev.end_run();
  EXPECT_TRUE(c.table == 0 || r.ok()) << r.message;
  if (out) {
    out->resize(size_t(n));
    std::memcpy(out->data(), dev.host(c.out, uint64_t(n) * 8), size_t(n) * 8);
  }
  return r;
}

std::vector<int64_t> random_ids(int64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> u(-(int64_t(1) << 40), int64_t(1) << 40);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  v[0] = std::numeric_limits<int64_t>::min();
  v[1] = -1;
  return v;
}

TEST(emu_int_vec, hash_with_barrett_or_rem_matches_reference_on_se_and_vector_core) {
  const std::vector<int64_t> ids = random_ids(64 * 40, 3);
  for (uint64_t table : {uint64_t(10000019), uint64_t(1), uint64_t(3), uint64_t(1) << 52, uint64_t(4294967311)})
    for (int e : {0, 1})
      for (bool barrett : {true, false}) {
        device dev(mtia2i());
        std::vector<uint64_t> out;
        const run_result r = run_hash(dev, hash_ctx{0, 0, 0, e, 2654435761ULL, table, barrett}, ids, &out);
        ASSERT_TRUE(r.ok()) << r.message;
        for (size_t i = 0; i < ids.size(); ++i)
          ASSERT_EQ(out[i], fmix64(uint64_t(ids[i]) ^ 2654435761ULL) % table)
              << "table " << table << " engine " << e << " barrett " << barrett << " i " << i;
      }
}

TEST(emu_int_vec, remainder_by_zero_fails_with_a_message) {
  device dev(mtia2i());
  const run_result r = run_hash(dev, hash_ctx{0, 0, 0, 0, 0, 0, false}, random_ids(64, 1), nullptr);
  EXPECT_EQ(r.status, KV_MTIA_ERR_ARG);
  EXPECT_NE(r.message.find("KV_IOP_REM_U"), std::string::npos) << r.message;
}

struct search_ctx {
  uint64_t x, bnd, out;
  int per_program, nb, engine_vec;
  int bad_offset;  // added to the first level's offset: a kernel reading past its table
};

// Branch-free lower_bound: boundaries padded with +inf to 2^L - 1 entries in
// local memory, then L levels of gather, compare and conditional add.
void search_program(kv_mtia_device* d, const void* u) {
  const search_ctx& c = *static_cast<const search_ctx*>(u);
  const int n = c.per_program, e = c.engine_vec, nb = c.nb;
  int levels = 0;
  while ((1 << levels) - 1 < nb) ++levels;
  const int padded = (1 << levels) - 1, pad = padded - nb;
  const uint64_t off = uint64_t(kv_mtia_program_id(d)) * n * 4;
  const int tab = kv_mtia_cb_alloc(d, padded * 4, 1);
  if (pad > 0) {
    const int b0 = kv_mtia_cb_alloc(d, nb * 4, 1), b1 = kv_mtia_cb_alloc(d, nb * 4, 1);
    const int inf = kv_mtia_cb_alloc(d, pad * 4, 1);
    kv_mtia_dma_in(d, b0, kv_mtia_rows(c.bnd, 1, nb * 4, nb * 4));
    kv_mtia_dma_in(d, b1, kv_mtia_rows(c.bnd, 1, nb * 4, nb * 4));
    kv_mtia_se_unary(d, KV_OP_COPY, b1, 0, inf, 1, pad, KV_F32, KV_F32, 0.0f, INFINITY);  // 0*b + inf
    kv_mtia_mlu_concat(d, b0, inf, 0, 1, nb * 4, pad * 4, tab);
  } else {
    kv_mtia_dma_in(d, tab, kv_mtia_rows(c.bnd, 1, nb * 4, nb * 4));
  }
  const int cx = kv_mtia_cb_alloc(d, n * 4, 1);
  int pos[2] = {kv_mtia_cb_alloc(d, n * 4, 1), kv_mtia_cb_alloc(d, n * 4, 1)};
  const int g = kv_mtia_cb_alloc(d, n * 4, 1), m = kv_mtia_cb_alloc(d, n * 4, 1);
  const int res = kv_mtia_cb_alloc(d, n * 4, 1);  // read by the DMA engine
  kv_mtia_dma_in(d, cx, kv_mtia_rows(c.x + off, 1, n * 4, n * 4));
  kv_mtia_int_op(d, e, KV_IOP_AND, cx, KV_CB_KEEP, -1, 0, pos[0], n, KV_I32, 0);  // zeros
  int cur = 0;
  for (int l = levels - 1; l >= 0; --l) {
    const int step = 1 << l;
    kv_mtia_lm_gather(d, e, tab, KV_CB_KEEP, padded, KV_F32, pos[cur], KV_CB_KEEP, g, n,
                      step - 1 + (l == levels - 1 ? c.bad_offset : 0));
    kv_mtia_cmp(d, e, KV_CMP_LT, g, 0, cx, l == 0 ? 0 : KV_CB_KEEP, m, n, KV_F32);
    kv_mtia_int_op(d, e, KV_IOP_ADD_IF, pos[cur], 0, m, 0, l == 0 ? res : pos[1 - cur], n, KV_I32, uint64_t(step));
    cur = 1 - cur;
  }
  kv_mtia_dma_out(d, kv_mtia_rows(c.out + off, 1, n * 4, n * 4), res, 0);
}

struct search_run {
  run_result r;
  std::vector<int32_t> out;
  std::vector<float> x, b;
};

search_run run_search(const params& p, int per_program, int nb, int engine_vec, int bad_offset = 0) {
  device dev(p);
  search_run s;
  const int n = 64 * per_program;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.25f, 1.25f), ub(-1.0f, 1.0f);
  s.x.resize(size_t(n));
  for (auto& v : s.x) v = u(rng);
  s.b.resize(size_t(nb));
  for (auto& v : s.b) v = ub(rng);
  std::sort(s.b.begin(), s.b.end());
  s.x[0] = s.b[0];  // ties land left of the boundary
  s.x[1] = INFINITY;
  s.x[2] = -INFINITY;
  const kv_tensor tx = device_tensor(dev, level::sram, {n}, KV_F32, s.x.data());
  const kv_tensor tb = device_tensor(dev, level::sram, {nb}, KV_F32, s.b.data());
  const kv_tensor to = device_tensor(dev, level::sram, {n}, KV_I32);
  search_ctx c{addr_of(tx), addr_of(tb), addr_of(to), per_program, nb, engine_vec, bad_offset};
  dev.begin_run();
  kv_mtia_launch(dev.handle(), 64, search_program, &c);
  s.r = dev.end_run();
  EXPECT_TRUE(bad_offset != 0 || s.r.ok()) << s.r.message;
  s.out.resize(size_t(n));
  if (s.r.ok()) std::memcpy(s.out.data(), dev.host(c.out, uint64_t(n) * 4), size_t(n) * 4);
  return s;
}

TEST(emu_int_vec, branch_free_search_matches_lower_bound) {
  for (int nb : {1, 3, 64, 100, 1023, 1024})
    for (int e : {0, 1}) {
      const search_run s = run_search(mtia2i(), 40, nb, e);
      ASSERT_TRUE(s.r.ok()) << s.r.message;
      for (size_t i = 0; i < s.x.size(); ++i)
        ASSERT_EQ(s.out[i], std::lower_bound(s.b.begin(), s.b.end(), s.x[i]) - s.b.begin())
            << "nb " << nb << " engine " << e << " x " << s.x[i];
    }
}

TEST(emu_int_vec, a_gather_past_its_table_fails_instead_of_reading_neighbouring_memory) {
  const search_run s = run_search(mtia2i(), 8, 64, 0, /*bad_offset=*/64);
  EXPECT_EQ(s.r.status, KV_MTIA_ERR_ADDRESS);
  EXPECT_NE(s.r.message.find("outside the table"), std::string::npos) << s.r.message;
}

TEST(emu_int_vec, search_and_hash_never_beat_the_roofline_floor) {
  const params p = mtia2i();
  for (int e : {0, 1}) {
    const search_run s = run_search(p, 512, 1024, e);
    ASSERT_TRUE(s.r.ok()) << s.r.message;
    const double bytes = 8.0 * s.x.size() + 4.0 * s.b.size();  // x in, out, boundaries
    EXPECT_GE(s.r.cycles, bytes / p.sram_bytes_per_cycle + p.launch_cycles);
    EXPECT_GE(s.r.cycles, s.r.lower_bound_cycles(p));
    // every element passes 10 gathers (1023 boundaries: 10 levels) on one engine per PE
    const double gather = e ? p.vec_gather_elems_per_cycle : p.se_gather_elems_per_cycle;
    EXPECT_GE(s.r.cycles, 10.0 * 512 / gather);
    device dev(p);
    const run_result h = run_hash(dev, hash_ctx{0, 0, 0, e, 1, 10000019, true}, random_ids(64 * 256, 5), nullptr);
    ASSERT_TRUE(h.ok()) << h.message;
    EXPECT_GE(h.cycles, 16.0 * 64 * 256 / p.sram_bytes_per_cycle + p.launch_cycles);
    EXPECT_GE(h.cycles, h.lower_bound_cycles(p));
  }
}

TEST(emu_int_vec, more_work_is_never_faster_and_faster_engines_never_slower) {
  const params p = mtia2i();
  for (int e : {0, 1}) {
    const double base = run_search(p, 256, 255, e).r.cycles;
    EXPECT_LE(run_search(p, 128, 255, e).r.cycles, base);   // fewer elements
    EXPECT_LE(base, run_search(p, 256, 1023, e).r.cycles);  // more levels
    params fast = p;
    fast.se_gather_elems_per_cycle *= 2;
    fast.vec_gather_elems_per_cycle *= 2;
    fast.se_elems_per_cycle *= 2;
    fast.vec_bytes_per_cycle *= 2;
    EXPECT_LE(run_search(fast, 256, 255, e).r.cycles, base);
    params slow = p;
    slow.int64_mul_cost *= 2;
    slow.int_div_cost *= 2;
    device d1(p), d2(slow), d3(p);
    const auto ids = random_ids(64 * 64, 9);
    const double h = run_hash(d1, hash_ctx{0, 0, 0, e, 1, 10000019, true}, ids, nullptr).cycles;
    EXPECT_LE(h, run_hash(d2, hash_ctx{0, 0, 0, e, 1, 10000019, true}, ids, nullptr).cycles);
    // the iterative remainder is slower than the Barrett sequence at these costs
    EXPECT_LT(h, run_hash(d3, hash_ctx{0, 0, 0, e, 1, 10000019, false}, ids, nullptr).cycles);
  }
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing

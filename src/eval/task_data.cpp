#include "eval/task_data.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "common/hash.h"
#include "common/paths.h"
#include "eval/backends/backend.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "eval/generators.h"
#include "eval/torch_process.h"

namespace kevolve::eval {
namespace {

size_t tensors_bytes(const std::vector<spec::tensor_instance>& ts) {
  size_t n = 0;
  for (const auto& t : ts) n += t.bytes();
  return n;
}

// Checksum of a large buffer, hashed in parallel chunks (same result for any
// thread count).
uint64_t checksum(const char* p, size_t n, uint64_t seed) {
  constexpr size_t chunk = size_t(4) << 20;
  const size_t chunks = (n + chunk - 1) / chunk;
  if (chunks <= 1) return hash_bytes(p, n, seed);
  std::vector<uint64_t> parts(chunks);
#pragma omp parallel for schedule(static)
  for (size_t c = 0; c < chunks; ++c) parts[c] = hash_bytes(p + c * chunk, std::min(chunk, n - c * chunk), seed);
  return hash_bytes(parts.data(), parts.size() * sizeof(uint64_t), seed);
}

void fill_tail(char* buffer, size_t bytes, uint8_t value) {
  const size_t end = page_round(bytes == 0 ? 1 : bytes);
  std::memset(buffer + bytes, value, end - bytes);
}

std::string tail_damage(const char* buffer, size_t bytes) {
  const size_t end = page_round(bytes == 0 ? 1 : bytes);
  const int64_t at = find_changed_byte(buffer + bytes, end - bytes, kCanaryByte);
  if (at < 0) return {};
  return std::to_string(at + 1) + "+ bytes past its end";
}

}  // namespace

task_data::~task_data() {
  if (base_worker_) base_worker_->shutdown();
  if (ref_worker_) ref_worker_->shutdown();
}

expected<std::unique_ptr<task_data>> task_data::create(const spec::operator_spec& op, const spec::variant& v,
                                                       const evaluator_options& o,
                                                       const std::filesystem::path& reference_lib,
                                                       const std::filesystem::path& baseline_lib,
                                                       const std::filesystem::path& timed_baseline_lib,
                                                       const backend& timed_backend,
                                                       const torch_reference_settings& torch_ref) {
  std::unique_ptr<task_data> d(new task_data());
  d->has_cpp_reference_ = !reference_lib.empty();
  d->torch_ref_ = torch_ref;
  d->options_ = &o;
  d->op_ = &op;
  d->variant_ = &v;
  d->threads_ = o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));

  // Every holdout shape first (small: a wrong kernel fails fast), then the
  // timed shapes (all, or those asked for), so that the candidate's worker
  // can be released after its last timed call.
  std::vector<std::pair<const spec::shape_point*, bool>> chosen;
  for (const auto& s : op.holdout_shapes) chosen.push_back({&s, true});
  for (const auto& s : op.shapes)
    if (o.holdout_only) continue;
    else if (o.shapes.empty() || std::find(o.shapes.begin(), o.shapes.end(), s.name) != o.shapes.end()) chosen.push_back({&s, false});
  for (const auto& name : o.shapes) {
    bool found = false;
    for (const auto& s : op.shapes) found |= s.name == name;
    for (const auto& s : op.holdout_shapes) found |= s.name == name;
    if (!found) {
      std::string known;
      for (const auto& s : op.shapes) known += (known.empty() ? "" : ", ") + s.name;
      return make_error(errc::invalid_input, "operator '" + op.name + "' has no shape '" + name + "' (shapes: " + known + ")");
    }
  }

  size_t c_size = 0;
  const int trials = std::max(1, o.verify_trials);
  for (const auto& [shape, holdout] : chosen) {
    auto inst = spec::resolve(op, v, *shape, holdout);
    if (!inst) return tl::unexpected(inst.error());
    problem_state ps;
    ps.inst = std::move(*inst);
    ps.baseline_is_reference = ps.inst.flops > op.reference_max_flops;
    const size_t set_bytes = tensors_bytes(ps.inst.inputs) + tensors_bytes(ps.inst.outputs);
    int sets = trials;
    if (!holdout) {
      const double want = o.rotation_bytes / double(std::max<size_t>(set_bytes, 1));
      sets = std::clamp(int(want + 0.999), trials, std::max(trials, o.max_sets));
    }
    ps.buf.num_sets = sets;
    for (int s = 0; s < sets; ++s) {
      std::vector<buffer_ref> in, out, base;
      for (const auto& t : ps.inst.inputs) in.push_back({d->plan_a_.add(t.bytes()), t.bytes()});
      for (const auto& t : ps.inst.outputs) out.push_back({d->plan_a_.add(t.bytes()), t.bytes()});
      if (!holdout)
        for (const auto& t : ps.inst.outputs) base.push_back({d->plan_b_.add(t.bytes()), t.bytes()});
      ps.buf.inputs.push_back(std::move(in));
      ps.buf.cand_out.push_back(std::move(out));
      ps.buf.base_out.push_back(std::move(base));
    }
    region_plan c;
    for (const auto& t : ps.inst.inputs) {
      const size_t rb = size_t(t.numel()) * spec::dtype_size(reference_dtype(t.type));
      ps.ref.ref_in.push_back({c.add(rb), rb});
      ps.ref.native_in.push_back({c.add(t.bytes()), t.bytes()});
    }
    for (const auto& t : ps.inst.outputs) {
      const size_t rb = size_t(t.numel()) * spec::dtype_size(reference_dtype(t.type));
      ps.ref.ref_out.push_back({c.add(rb), rb});
      ps.ref.native_out.push_back({c.add(t.bytes()), t.bytes()});
    }
    ps.c_guards = c.guards();
    c_size = std::max(c_size, c.size());
    ps.content_seed.assign(size_t(sets), 0);
    ps.checksum.assign(size_t(sets), 0);
    d->problems_.push_back(std::move(ps));
  }

  auto a = shared_region::create("kevolve-inputs", d->plan_a_.size());
  auto b = shared_region::create("kevolve-baseline", d->plan_b_.size());
  auto c = shared_region::create("kevolve-reference", c_size);
  if (!a) return tl::unexpected(a.error());
  if (!b) return tl::unexpected(b.error());
  if (!c) return tl::unexpected(c.error());
  d->a_ = std::move(*a);
  d->b_ = std::move(*b);
  d->c_ = std::move(*c);

  for (size_t p = 0; p < d->problems_.size(); ++p)
    for (int s = 0; s < d->problems_[p].buf.num_sets; ++s) {
      if (auto r = d->ensure_inputs(p, s, d->set_seed(p, s), s); !r) return tl::unexpected(r.error());
      d->poison_outputs(p, s, 0xFF);  // also lays the canaries every later check reads
    }

  // The timed baseline runs where candidates run; the reference on the CPU.
  if (!timed_baseline_lib.empty()) {
    const worker_options bo = timed_backend.worker(d->threads_, o.sandbox,
                                                   d->a_.size() + d->b_.size() + o.memory_limit_bytes + (uint64_t(4) << 30));
    auto bw = worker_client::spawn(bo, {&d->a_, &d->b_}, {timed_baseline_lib});
    if (!bw) return tl::unexpected(bw.error());
    d->base_worker_ = std::move(*bw);
  }
  d->base_setup_timeout_ = timed_backend.keeps_device_copies()
                               ? std::max(o.call_timeout, std::chrono::milliseconds(60000))
                               : o.call_timeout;
  worker_options wo;
  wo.executable = worker_executable();
  wo.threads = d->threads_;
  wo.sandbox = o.sandbox;
  wo.address_space_bytes = d->c_.size() + o.memory_limit_bytes + (uint64_t(4) << 30);
  // Library 0 is the C++ reference, 1 the host baseline. Without a C++
  // reference (PyTorch is it) slot 0 repeats the baseline and is never
  // called; without either there is no reference worker.
  if (reference_lib.empty() && baseline_lib.empty()) return d;
  const std::filesystem::path lib0 = reference_lib.empty() ? baseline_lib : reference_lib;
  auto rw = worker_client::spawn(wo, {&d->c_}, {lib0, baseline_lib.empty() ? lib0 : baseline_lib});
  if (!rw) return tl::unexpected(rw.error());
  d->ref_worker_ = std::move(*rw);
  return d;
}

size_t task_data::host_bytes() const {
  size_t n = a_.size() + b_.size() + c_.size();
  for (const auto& [key, ref] : ref_cache_)
    for (const auto& o : ref.outputs) n += o.size();
  for (const auto& ps : problems_)
    for (const auto& [seed, snap] : ps.set0_snapshots) n += snap.bytes.size();
  return n;
}

uint64_t task_data::set_seed(size_t p, int set) const {
  return trial_seed(options_->seed, problems_[p].inst.shape_name, uint32_t(set)) | 1;
}

uint64_t task_data::reseed_seed(size_t p) const {
  return trial_seed(options_->seed, problems_[p].inst.shape_name, 100000u) | 1;
}

double problem_state::roofline_bytes() const {
  if (set_bytes.empty()) return inst.bytes;
  std::vector<double> v = set_bytes;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

expected<void> task_data::count_set_bytes(size_t p, int s) {
  problem_state& ps = problems_[p];
  if (ps.inst.counted.empty()) return {};
  auto b = spec::set_bytes(*op_, ps.inst, [&](size_t i) -> const void* { return at_a(ps.buf.inputs[size_t(s)][i]); });
  if (!b) return tl::unexpected(b.error());
  ps.set_bytes.resize(size_t(ps.buf.num_sets), ps.inst.bytes);
  ps.set_bytes[size_t(s)] = *b;
  return {};
}

expected<void> task_data::ensure_inputs(size_t p, int s, uint64_t seed, int dist) {
  problem_state& ps = problems_[p];
  if (ps.content_seed[size_t(s)] == seed) return {};
  uint64_t sum = 0;
  if (s == 0) {
    if (auto it = ps.set0_snapshots.find(seed); it != ps.set0_snapshots.end()) {
      const char* src = it->second.bytes.data();
      for (size_t i = 0; i < ps.inst.inputs.size(); ++i) {
        const size_t n = ps.inst.inputs[i].bytes();
        char* dst = at_a(ps.buf.inputs[0][i]);
        std::memcpy(dst, src, n);
        fill_tail(dst, n, kCanaryByte);
        src += n;
      }
      ps.content_seed[0] = seed;
      ps.checksum[0] = it->second.checksum;
      return count_set_bytes(p, 0);
    }
  }
  for (size_t i = 0; i < ps.inst.inputs.size(); ++i) {
    const auto& t = ps.inst.inputs[i];
    const auto& dists = op_->generators.at(t.name);
    const auto& d = dists[size_t(dist) % dists.size()];
    char* dst = at_a(ps.buf.inputs[size_t(s)][i]);
    if (auto r = generate_tensor(d, t, ps.inst.symbols, seed ^ hash_bytes(t.name.data(), t.name.size()), dst); !r)
      return make_error(errc::invalid_input, op_->file.string() + ": shape '" + ps.inst.shape_name + "': " + r.error().message);
    fill_tail(dst, t.bytes(), kCanaryByte);
    sum = checksum(dst, t.bytes(), sum);
  }
  ps.content_seed[size_t(s)] = seed;
  ps.checksum[size_t(s)] = sum;
  if (s == 0 && ps.set0_snapshots.size() < 2) {
    problem_state::snapshot& snap = ps.set0_snapshots[seed];
    snap.checksum = sum;
    for (size_t i = 0; i < ps.inst.inputs.size(); ++i) {
      const char* src = at_a(ps.buf.inputs[0][i]);
      snap.bytes.insert(snap.bytes.end(), src, src + ps.inst.inputs[i].bytes());
    }
  }
  return count_set_bytes(p, s);
}

expected<void> task_data::begin_candidate(size_t p) {
  problem_state& ps = problems_[p];
  if (ps.tainted) {
    for (int s = 0; s < ps.buf.num_sets; ++s)
      if (!check_inputs(p, s).empty()) {
        const uint64_t seed = ps.content_seed[size_t(s)];
        ps.content_seed[size_t(s)] = 0;
        const int dist = seed == reseed_seed(p) ? options_->verify_trials : s;
        if (auto r = ensure_inputs(p, s, seed, dist); !r) return r;
      }
  }
  ps.tainted = true;
  return {};
}

std::string task_data::finish_candidate(size_t p) {
  problem_state& ps = problems_[p];
  for (int s = 0; s < ps.buf.num_sets; ++s) {
    std::string damage = check_inputs(p, s);
    if (damage.empty()) damage = check_output_canaries(p, s);
    if (!damage.empty()) return damage;
  }
  ps.tainted = false;
  return {};
}

std::string task_data::check_inputs(size_t p, int s) const {
  const problem_state& ps = problems_[p];
  uint64_t sum = 0;
  std::string damage;
  for (size_t i = 0; i < ps.inst.inputs.size(); ++i) {
    const char* src = at_a(ps.buf.inputs[size_t(s)][i]);
    sum = checksum(src, ps.inst.inputs[i].bytes(), sum);
    if (damage.empty()) {
      const std::string t = tail_damage(src, ps.inst.inputs[i].bytes());
      if (!t.empty()) damage = "wrote " + t + " of input '" + ps.inst.inputs[i].name + "'";
    }
  }
  if (!damage.empty()) return damage;
  if (sum != ps.checksum[size_t(s)]) {
    // Name the first input that changed.
    for (size_t i = 0; i < ps.inst.inputs.size(); ++i) return "modified its inputs (input '" + ps.inst.inputs[i].name + "' or a later one changed)";
  }
  return {};
}

void task_data::poison_outputs(size_t p, int s, uint8_t poison) {
  const problem_state& ps = problems_[p];
  for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
    char* dst = at_a(ps.buf.cand_out[size_t(s)][i]);
    std::memset(dst, poison, ps.inst.outputs[i].bytes());
    fill_tail(dst, ps.inst.outputs[i].bytes(), kCanaryByte);
  }
}

std::string task_data::check_output_canaries(size_t p, int s) const {
  const problem_state& ps = problems_[p];
  for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
    const std::string t = tail_damage(at_a(ps.buf.cand_out[size_t(s)][i]), ps.inst.outputs[i].bytes());
    if (!t.empty()) return "wrote " + t + " of output '" + ps.inst.outputs[i].name + "'";
  }
  return {};
}

std::vector<uint64_t> task_data::guards(const region_plan& plan, uint32_t region) const {
  std::vector<uint64_t> g;
  for (size_t off : plan.guards()) g.push_back(wire::encode(region, off));
  return g;
}

std::vector<char> task_data::candidate_setup(size_t p) const {
  const problem_state& ps = problems_[p];
  std::vector<kv_args> sets;
  for (int s = 0; s < ps.buf.num_sets; ++s) {
    std::vector<uint64_t> in, out;
    for (const auto& b : ps.buf.inputs[size_t(s)]) in.push_back(wire::encode(0, b.offset));
    for (const auto& b : ps.buf.cand_out[size_t(s)]) out.push_back(wire::encode(0, b.offset));
    sets.push_back(make_args(ps.inst, in, out, false, threads_));
  }
  std::vector<std::string> names;
  for (const auto& prm : ps.inst.params) names.push_back(prm.name);
  return make_setup_payload({sets}, guards(plan_a_, 0), ps.inst.workspace_bytes, names);
}

expected<void> task_data::setup_baseline_worker(size_t p) {
  if (base_worker_problem_ == long(p)) return {};
  const problem_state& ps = problems_[p];
  std::vector<kv_args> sets;
  for (int s = 0; s < ps.buf.num_sets; ++s) {
    std::vector<uint64_t> in, out;
    for (const auto& b : ps.buf.inputs[size_t(s)]) in.push_back(wire::encode(0, b.offset));
    for (const auto& b : ps.buf.base_out[size_t(s)]) out.push_back(wire::encode(1, b.offset));
    sets.push_back(make_args(ps.inst, in, out, false, threads_));
  }
  std::vector<std::string> names;
  for (const auto& prm : ps.inst.params) names.push_back(prm.name);
  auto g = guards(plan_a_, 0);
  for (uint64_t x : guards(plan_b_, 1)) g.push_back(x);
  auto r = base_worker_->setup(make_setup_payload({sets}, g, ps.inst.workspace_bytes, names), base_setup_timeout_);
  if (!r.ok()) return make_error(errc::internal, "baseline worker setup failed: " + r.detail);
  base_worker_problem_ = long(p);
  return {};
}

expected<void> task_data::setup_reference_worker(size_t p) {
  if (ref_worker_problem_ == long(p)) return {};
  const problem_state& ps = problems_[p];
  auto enc = [](const std::vector<buffer_ref>& v) {
    std::vector<uint64_t> e;
    for (const auto& b : v) e.push_back(wire::encode(0, b.offset));
    return e;
  };
  std::vector<kv_args> ref = {make_args(ps.inst, enc(ps.ref.ref_in), enc(ps.ref.ref_out), true, 1)};
  std::vector<kv_args> base = {make_args(ps.inst, enc(ps.ref.native_in), enc(ps.ref.native_out), false, threads_)};
  std::vector<std::string> names;
  for (const auto& prm : ps.inst.params) names.push_back(prm.name);
  std::vector<uint64_t> g;
  for (size_t off : ps.c_guards) g.push_back(wire::encode(0, off));
  auto r = ref_worker_->setup(make_setup_payload({ref, base}, g, ps.inst.workspace_bytes, names), options_->call_timeout);
  if (!r.ok()) return make_error(errc::internal, "reference worker setup failed: " + r.detail);
  ref_worker_problem_ = long(p);
  return {};
}

expected<const reference_result*> task_data::reference(size_t p, int s) {
  const problem_state& ps = problems_[p];
  const uint64_t seed = ps.content_seed[size_t(s)];
  auto key = std::make_pair(p, seed);
  if (auto it = ref_cache_.find(key); it != ref_cache_.end()) return &it->second;
  if (!has_cpp_reference_) {
    auto rr = torch_outputs(p, s, ps.baseline_is_reference ? torch_precision::fp32 : torch_precision::fp64, 1, nullptr);
    if (!rr) return tl::unexpected(rr.error());
    return &(ref_cache_[key] = std::move(*rr));
  }
  if (!ref_worker_ || !ref_worker_->alive()) return make_error(errc::internal, "the reference worker is not running");
  if (auto r = setup_reference_worker(p); !r) return tl::unexpected(r.error());
  for (size_t i = 0; i < ps.inst.inputs.size(); ++i) {
    const auto& t = ps.inst.inputs[i];
    const char* src = at_a(ps.buf.inputs[size_t(s)][i]);
    std::memcpy(c_.data() + ps.ref.native_in[i].offset, src, t.bytes());
    convert_elements(src, t.type, c_.data() + ps.ref.ref_in[i].offset, reference_dtype(t.type), t.numel());
  }
  for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
    std::memset(c_.data() + ps.ref.ref_out[i].offset, 0xFF, ps.ref.ref_out[i].bytes);
    std::memset(c_.data() + ps.ref.native_out[i].offset, 0xFF, ps.ref.native_out[i].bytes);
  }
  const uint32_t lib = ps.baseline_is_reference ? 1 : 0;
  auto out = ref_worker_->call(lib, 0, options_->reference_timeout);
  if (!out.ok())
    return make_error(errc::invalid_input, "the " + std::string(lib ? "baseline" : "reference") + " of operator '" +
                                               op_->name + "' failed at shape '" + ps.inst.shape_name + "': " +
                                               (out.what == call_outcome::kind::kernel_error ? "returned " + std::to_string(out.rc) : out.detail));
  reference_result rr;
  rr.tol_scale = ps.baseline_is_reference ? 2.0 : 1.0;
  for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
    const auto& o = ps.inst.outputs[i];
    const buffer_ref& b = lib ? ps.ref.native_out[i] : ps.ref.ref_out[i];
    const char* src = c_.data() + b.offset;
    const spec::dtype from = lib ? o.type : reference_dtype(o.type);
    // An fp64 result kept as fp32 for a narrower float output: the rounding
    // (2^-24 relative) is below 6% of any tolerance with rtol >= 1e-6, and
    // checking it then reads a third less memory.
    const bool narrow = from == spec::dtype::f64 && o.type != spec::dtype::f64 && spec::is_float(o.type) &&
                        op_->tolerances.at(o.type).rtol >= 1e-6;
    if (narrow) {
      std::vector<char> f32(size_t(o.numel()) * sizeof(float));
      convert_elements(src, from, f32.data(), spec::dtype::f32, o.numel());
      rr.outputs.push_back(std::move(f32));
      rr.types.push_back(spec::dtype::f32);
    } else {
      rr.outputs.emplace_back(src, src + b.bytes);
      rr.types.push_back(from);
    }
  }
  return &(ref_cache_[key] = std::move(rr));
}

namespace {

template <typename At>
task_data::output_check compare_all(const problem_state& ps, const spec::operator_spec& op, const reference_result& ref,
                                    At at) {
  task_data::output_check check;
  for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
    const auto& o = ps.inst.outputs[i];
    const spec::tolerance tol = spec::is_float(o.type) ? op.tolerances.at(o.type) : spec::tolerance{};
    compare_result r = compare_tensor(o.name, at(i), o.type, ref.outputs[i].data(), ref.types[i], o.numel(), tol,
                                      ref.tol_scale);
    r.max_abs_error = std::max(r.max_abs_error, check.result.max_abs_error);
    r.max_error_ratio = std::max(r.max_error_ratio, check.result.max_error_ratio);
    check.result = r;
    check.elements = o.numel();
    if (!r.ok) break;
  }
  return check;
}

}  // namespace

task_data::output_check task_data::compare_outputs(size_t p, int s, const reference_result& ref) const {
  const problem_state& ps = problems_[p];
  return compare_all(ps, *op_, ref, [&](size_t i) { return at_a(ps.buf.cand_out[size_t(s)][i]); });
}

void task_data::poison_baseline_outputs(size_t p, int s, uint8_t poison) {
  const problem_state& ps = problems_[p];
  for (size_t i = 0; i < ps.inst.outputs.size(); ++i)
    std::memset(at_b(ps.buf.base_out[size_t(s)][i]), poison, ps.inst.outputs[i].bytes());
}

task_data::output_check task_data::compare_baseline_outputs(size_t p, int s, const reference_result& ref) const {
  const problem_state& ps = problems_[p];
  return compare_all(ps, *op_, ref, [&](size_t i) { return at_b(ps.buf.base_out[size_t(s)][i]); });
}

task_data::output_check task_data::compare_outside_outputs(size_t p, const std::vector<const char*>& outs,
                                                           const reference_result& ref) const {
  return compare_all(problems_[p], *op_, ref, [&](size_t i) { return outs.at(i); });
}

expected<void> task_data::validate_baseline(const spec::operator_spec& op) {
  if (op.baseline.source.empty()) return {};  // PyTorch-only operator
  for (size_t p = 0; p < problems_.size(); ++p) {
    const problem_state& ps = problems_[p];
    if (!ps.inst.holdout) continue;
    ref_cache_.erase({p, ps.content_seed[0]});  // recompute: region C must hold these inputs
    auto ref = reference(p, 0);
    if (!ref) return tl::unexpected(ref.error());
    // PyTorch as the reference sets no worker up: the baseline's is set up here.
    if (auto r = setup_reference_worker(p); !r) return tl::unexpected(r.error());
    auto out = ref_worker_->call(1, 0, options_->reference_timeout);  // inputs still in place
    if (!out.ok())
      return make_error(errc::invalid_input, "the baseline of operator '" + op.name + "' failed at holdout shape '" +
                                                 ps.inst.shape_name + "': " + out.detail);
    for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
      const auto& t = ps.inst.outputs[i];
      const spec::tolerance tol = spec::is_float(t.type) ? op.tolerances.at(t.type) : spec::tolerance{};
      auto cmp = compare_tensor(t.name, c_.data() + ps.ref.native_out[i].offset, t.type, (*ref)->outputs[i].data(),
                                (*ref)->types[i], t.numel(), tol, 1.0);
      if (!cmp.ok)
        return make_error(errc::invalid_input, "the baseline of operator '" + op.name + "' disagrees with its reference at shape '" +
                                                   ps.inst.shape_name + "': " + cmp.first_mismatch + " (" +
                                                   std::to_string(cmp.mismatches) + " elements)");
    }
  }
  return {};
}

}  // namespace kevolve::eval

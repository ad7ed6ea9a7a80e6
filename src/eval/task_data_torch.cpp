// task_data's PyTorch half: the reference of an operator without a C++ one
// (fp64; fp32 as the stand-in at large shapes) from its `torch`, in a
// trusted process of its own (torch_process.h), and `ops validate`'s checks
// of that version.
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "eval/generators.h"
#include "eval/task_data.h"
#include "eval/torch_process.h"

namespace kevolve::eval {

expected<reference_result> task_data::torch_outputs(size_t p, int s, torch_precision precision, int repeat,
                                                    bool* deterministic) {
  const bool stand_in = precision == torch_precision::fp32, native = precision == torch_precision::native;
  const problem_state& ps = problems_[p];
  size_t total = 0;
  for (const auto& t : ps.inst.inputs) total += t.bytes() * 8;
  if (!torch_proc_ || !torch_proc_->alive()) {
    auto tp = torch_process::start(torch_ref_.python, threads_, total);
    if (!tp) return tl::unexpected(tp.error());
    torch_proc_ = std::move(*tp);
  }
  const std::filesystem::path dir = torch_proc_->dir();
  // Float inputs widened exactly (fp64; fp32 for the stand-in), integers as
  // they are. Region C gets the native copies too: the host baseline reads
  // them there (validate_baseline).
  const spec::dtype wide = stand_in ? spec::dtype::f32 : spec::dtype::f64;
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  std::vector<char> buf;
  for (size_t i = 0; i < ps.inst.inputs.size(); ++i) {
    const auto& t = ps.inst.inputs[i];
    const char* src = at_a(ps.buf.inputs[size_t(s)][i]);
    std::memcpy(c_.data() + ps.ref.native_in[i].offset, src, t.bytes());
    const spec::dtype as = spec::is_float(t.type) && !native ? wide : t.type;
    buf.resize(size_t(t.numel()) * spec::dtype_size(as));
    convert_elements(src, t.type, buf.data(), as, t.numel());
    const std::string file = "in_" + std::to_string(i) + ".bin";
    std::ofstream f(dir / file, std::ios::binary | std::ios::trunc);
    f.write(buf.data(), std::streamsize(buf.size()));
    if (!f) return make_error(errc::io_error, "cannot write the PyTorch reference's inputs to " + (dir / file).string());
    inputs.push_back({{"name", t.name}, {"dtype", spec::dtype_name(as)}, {"shape", t.dims}, {"file", file}});
  }
  for (const auto& t : ps.inst.outputs)
    outputs.push_back({{"name", t.name}, {"dtype", spec::dtype_name(t.type)}, {"shape", t.dims}});
  nlohmann::json params = nlohmann::json::object();
  for (const auto& prm : ps.inst.params)
    if (prm.is_float) params[prm.name] = prm.value;
    else params[prm.name] = int64_t(prm.value);
  const nlohmann::json req = {{"op", "run"},          {"torch", nlohmann::json::parse(op_->torch_entry)},
                              {"device", torch_ref_.device}, {"dtype", native ? "native" : stand_in ? "fp32" : "fp64"},
                              {"inputs", inputs},     {"outputs", outputs},
                              {"params", params},     {"repeat", repeat},
                              {"threads", threads_}};
  const std::string what = op_->file.string() + ": the PyTorch reference of operator '" + op_->name + "' (" +
                           (native ? "in the variant's dtypes" : stand_in ? "fp32 stand-in" : "fp64") + ") at shape '" +
                           ps.inst.shape_name + "'";
  auto answer = torch_proc_->request(req, options_->reference_timeout);
  if (!answer) return make_error(errc::invalid_input, what + ": " + answer.error().message);
  if (!answer->value("ok", false))
    return make_error(errc::invalid_input, what + " failed: " + answer->value("reason", std::string("no reason given")));
  if (deterministic) *deterministic = answer->value("deterministic", false);
  const auto files = answer->value("outputs", std::vector<std::string>{});
  reference_result rr;
  rr.tol_scale = stand_in ? 2.0 : 1.0;
  for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
    const auto& o = ps.inst.outputs[i];
    const spec::dtype from = spec::is_float(o.type) && !native ? wide : o.type;
    auto data = i < files.size() ? read_file(dir / std::filesystem::path(files[i]).filename()) : expected<std::string>{};
    const size_t want = size_t(o.numel()) * spec::dtype_size(from);
    if (!data || data->size() != want)
      return make_error(errc::invalid_input, what + ": output '" + o.name + "' has " +
                                                 (data ? std::to_string(data->size()) : std::string("no")) +
                                                 " bytes, expected " + std::to_string(want));
    // As the C++ reference's: fp64 kept as fp32 where the tolerance allows.
    const bool narrow = from == spec::dtype::f64 && o.type != spec::dtype::f64 && op_->tolerances.at(o.type).rtol >= 1e-6;
    if (narrow) {
      std::vector<char> f32(size_t(o.numel()) * sizeof(float));
      convert_elements(data->data(), from, f32.data(), spec::dtype::f32, o.numel());
      rr.outputs.push_back(std::move(f32));
      rr.types.push_back(spec::dtype::f32);
    } else {
      rr.outputs.emplace_back(data->begin(), data->end());
      rr.types.push_back(from);
    }
  }
  return rr;
}

expected<void> task_data::validate_torch(const spec::operator_spec& op) {
  if (!op.has_torch()) return {};
  for (size_t p = 0; p < problems_.size(); ++p) {
    const problem_state& ps = problems_[p];
    if (!ps.inst.holdout) continue;
    // In the variant's own dtypes: the outputs' shapes and dtypes as the YAML says.
    if (auto n = torch_outputs(p, 0, torch_precision::native, 1, nullptr); !n) return tl::unexpected(n.error());
    bool same = false;
    auto rr = torch_outputs(p, 0, torch_precision::fp64, 2, &same);
    if (!rr) return tl::unexpected(rr.error());
    if (!same)
      return make_error(errc::invalid_input, op.file.string() + ": the PyTorch version of operator '" + op.name +
                                                 "' is non-deterministic: two runs on the same inputs at shape '" +
                                                 ps.inst.shape_name + "' differ (expected the same outputs every run)");
    if (!has_cpp_reference_) continue;
    ref_cache_.erase({p, ps.content_seed[0]});
    auto ref = reference(p, 0);  // the C++ one
    if (!ref) return tl::unexpected(ref.error());
    for (size_t i = 0; i < ps.inst.outputs.size(); ++i) {
      const auto& t = ps.inst.outputs[i];
      const spec::tolerance tol = spec::is_float(t.type) ? op.tolerances.at(t.type) : spec::tolerance{};
      const auto cmp = compare_tensor(t.name, rr->outputs[i].data(), rr->types[i], (*ref)->outputs[i].data(),
                                      (*ref)->types[i], t.numel(), tol, 1.0);
      if (!cmp.ok)
        return make_error(errc::invalid_input, op.file.string() + ": the PyTorch version of operator '" + op.name +
                                                   "' disagrees with its C++ reference at shape '" + ps.inst.shape_name +
                                                   "': " + cmp.first_mismatch + " (" + std::to_string(cmp.mismatches) +
                                                   " elements)");
    }
  }
  return {};
}

}  // namespace kevolve::eval

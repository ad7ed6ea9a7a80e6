#include "eval/torch_baseline.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/backend.h"
#include "eval/evaluator.h"
#include "eval/stats.h"
#include "eval/task_data.h"

namespace kevolve::eval {
namespace {
namespace fs = std::filesystem;

fs::path runner() { return data_root() / "src" / "eval" / "torch_baseline.py"; }

// The last line of a runner's output: its error, when it died before writing a result.
std::string last_line(const std::string& s) {
  size_t end = s.find_last_not_of("\n ");
  if (end == std::string::npos) return "no output";
  const size_t begin = s.rfind('\n', end);
  return s.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

std::string failure(const subprocess_result& r, std::chrono::milliseconds limit) {
  if (r.timed_out) return "took longer than " + std::to_string(limit.count() / 1000) + " s";
  if (r.signal) return "the runner was killed by signal " + std::to_string(r.signal);
  return "the runner exited with " + std::to_string(r.exit_code) + ": " + last_line(r.output);
}

bool write_bytes(const fs::path& p, const char* data, size_t n) {
  std::ofstream f(p, std::ios::binary);
  f.write(data, std::streamsize(n));
  return bool(f);
}

// Large shapes go through tmpfs: their inputs are written and read once per shape.
fs::path scratch_root(size_t bytes) {
  std::error_code ec;
  if (bytes > (size_t(64) << 20) && fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return {};
}

// One mode's run: its time, or a note saying why it has none.
side_baseline run_mode(const torch_settings& s, const fs::path& dir, const std::string& mode,
                       const spec::problem_instance& inst, const output_checker& check) {
  side_baseline b;
  const auto limit = mode == "compile" ? s.compile_timeout : s.eager_timeout;
  subprocess_options o = timeout_options(limit);
  o.env = torch_environment(s.python, dir, s.threads);
  o.cwd = dir.string();
  auto r = run_subprocess({s.python.string(), runner().string(), dir.string(), mode}, o);
  if (!r) {
    b.note = "unavailable: " + r.error().message;
    return b;
  }
  auto text = read_file(dir / (mode + ".json"));
  if (!r->ok() || !text) {
    b.note = "unavailable: " + failure(*r, limit);
    return b;
  }
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    b.note = "unavailable: the runner wrote no valid result";
    return b;
  }
  if (!j.value("ok", false)) {
    // An expression that does not run eagerly is a broken operator file; a
    // failed compile is PyTorch's limitation.
    b.note = std::string(mode == "eager" ? "wrong: the torch expression failed: " : "unavailable: ") +
             j.value("reason", std::string("no reason given"));
    return b;
  }
  std::vector<std::string> bytes;
  std::vector<const char*> outs;
  const auto files = j.value("outputs", std::vector<std::string>{});
  for (size_t i = 0; i < inst.outputs.size(); ++i) {
    auto data = i < files.size() ? read_file(dir / fs::path(files[i]).filename()) : expected<std::string>{};
    if (!data || data->size() != inst.outputs[i].bytes()) {
      b.note = "wrong: output '" + inst.outputs[i].name + "' has " + (data ? std::to_string(data->size()) : "no") +
               " bytes, expected " + std::to_string(inst.outputs[i].bytes());
      return b;
    }
    bytes.push_back(std::move(*data));
  }
  for (const auto& d : bytes) outs.push_back(d.data());
  if (const std::string bad = check(outs); !bad.empty()) {
    b.note = "wrong: the torch expression disagrees with the reference: " + bad;
    return b;
  }
  const auto ns = j.value("ns", std::vector<int64_t>{});
  b.time = summarize_ns(ns);
  if (!b.measured()) b.note = "unavailable: the runner timed no calls";
  else if (const int64_t n = j.value("dispatch_in_time", int64_t(0)); n > 0)
    b.note = std::to_string(n) + " of " + std::to_string(ns.size()) +
             " timed calls may include PyTorch's dispatch on the host (it outlasted the GPU work queued ahead of it)";
  return b;
}

}  // namespace

std::vector<std::string> torch_environment(const fs::path& python, const fs::path& dir, int threads) {
  const std::string n = std::to_string(threads);
  const fs::path cache = cache_root() / "torch";
  const std::string bin = python.has_parent_path() ? python.parent_path().string() + ":" : "";
  std::vector<std::string> env = {"PATH=" + bin + "/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + dir.string(),
                                  "TMPDIR=" + dir.string(), "OMP_NUM_THREADS=" + n,
                                  "TORCHINDUCTOR_CACHE_DIR=" + (cache / "inductor").string(),
                                  "TRITON_CACHE_DIR=" + (cache / "triton").string()};
  // Where PyTorch and CUDA live, and the GPU this process was given. Not
  // LD_LIBRARY_PATH: PyTorch loads the CUDA libraries it was built with, and
  // those carried for kevolve's workers may be other versions.
  for (const char* pass : {"CUDA_VISIBLE_DEVICES", "PYTHONPATH", "CUDA_HOME"})
    if (const char* v = std::getenv(pass)) env.push_back(std::string(pass) + "=" + v);
  return env;
}

std::string probe_torch(const fs::path& python, const std::string& device, bool gpu) {
  static std::mutex m;
  static std::map<std::pair<std::string, std::string>, std::string> known;
  std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_pair(python.string(), device);
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::string why;
  auto dir = temp_dir::create("kevolve-torch-");
  subprocess_options o = timeout_options(std::chrono::seconds(120));
  if (dir) o.env = torch_environment(python, dir->path(), 1);
  auto r = dir ? run_subprocess({python.string(), runner().string(), dir->path().string(), "probe"}, o)
               : expected<subprocess_result>(tl::unexpected(dir.error()));
  if (!r) why = python.string() + " cannot be run: " + r.error().message;
  else if (!r->ok()) why = python.string() + " cannot import torch: " + failure(*r, o.timeout);
  else if (gpu && r->output.find(device + " 1") == std::string::npos)
    why = "PyTorch (" + last_line(r->output) + ") sees no GPU";
  return known[key] = why;
}

torch_times measure_torch(const torch_settings& s, const spec::operator_spec& op, const spec::problem_instance& inst,
                          const std::vector<const char*>& inputs, const output_checker& check) {
  torch_times t;
  size_t total = 0;
  for (const auto& in : inst.inputs) total += in.bytes();
  auto dir = temp_dir::create("kevolve-torch-", scratch_root(total));
  if (!dir) {
    t.eager.note = t.compile.note = "unavailable: " + dir.error().message;
    return t;
  }
  auto tensors = [](const std::vector<spec::tensor_instance>& ts, bool files) {
    nlohmann::json a = nlohmann::json::array();
    for (size_t i = 0; i < ts.size(); ++i) {
      nlohmann::json e = {{"name", ts[i].name}, {"dtype", spec::dtype_name(ts[i].type)}, {"shape", ts[i].dims}};
      if (files) e["file"] = "in_" + std::to_string(i) + ".bin";
      a.push_back(std::move(e));
    }
    return a;
  };
  nlohmann::json params = nlohmann::json::object();
  for (const auto& p : inst.params)
    if (p.is_float) params[p.name] = p.value;
    else params[p.name] = int64_t(p.value);
  const nlohmann::json manifest = {{"expression", op.torch},         {"device", s.device},
                                   {"threads", s.threads},           {"rotation_bytes", s.rotation_bytes},
                                   {"max_sets", s.max_sets},         {"budget_seconds", s.budget_seconds},
                                   {"min_runs", s.min_runs},         {"inputs", tensors(inst.inputs, true)},
                                   {"outputs", tensors(inst.outputs, false)}, {"params", params}};
  const std::string text = manifest.dump();
  bool written = write_bytes(dir->path() / "manifest.json", text.data(), text.size());
  for (size_t i = 0; i < inst.inputs.size() && written; ++i)
    written = write_bytes(dir->path() / ("in_" + std::to_string(i) + ".bin"), inputs[i], inst.inputs[i].bytes());
  if (!written) {
    t.eager.note = t.compile.note = "unavailable: cannot write the inputs to " + dir->path().string();
    return t;
  }
  t.eager = run_mode(s, dir->path(), "eager", inst, check);
  if (s.compile) t.compile = run_mode(s, dir->path(), "compile", inst, check);
  return t;
}

// --- the evaluator's side ----------------------------------------------------

void evaluator::configure_torch() {
  const backend_descriptor& be = backend_->descriptor();
  // Where the backend has a PyTorch (not the emulator, not hip: no PyTorch for
  // ROCm in Debian), and never for correctness checks on another device
  // (hip_on_cuda: nothing is timed).
  if (be.torch_device.empty() || options_.verify_only || !options_.torch_baselines.value_or(be.torch_by_default)) return;
  if (op_.torch.empty()) {
    torch_note_ = "unavailable: " + op_.file.string() + " has no 'torch' expression";
    return;
  }
  torch_.python = options_.python.empty() ? python_executable() : fs::path(options_.python);
  torch_.device = be.torch_device;
  if (const std::string why = probe_torch(torch_.python, torch_.device, be.traits.uses_device); !why.empty()) {
    torch_note_ = "unavailable: " + why;
    log::info("PyTorch baselines of {} {}", op_.name, torch_note_);
    return;
  }
  torch_.compile = be.torch_compile;  // CPU: eager only
  torch_.threads = data_->threads();
  torch_.rotation_bytes = options_.rotation_bytes;
  torch_.max_sets = options_.max_sets;
  torch_.budget_seconds = options_.time_budget_seconds;
  torch_.min_runs = options_.min_runs;
  torch_on_ = true;
}

void evaluator::measure_torch_once(size_t p) {
  if (!torch_on_ || torch_once_.count(p)) return;
  // Set 0 holds verified inputs with a known reference; a candidate that
  // changed them fails its own verdict, and the next one measures.
  if (!data_->check_inputs(p, 0).empty()) return;
  auto ref = data_->reference(p, 0);
  if (!ref) return;
  const problem_state& ps = data_->problem(p);
  std::vector<const char*> inputs;
  for (const auto& b : ps.buf.inputs[0]) inputs.push_back(data_->at_a(b));
  const torch_times t = measure_torch(torch_, op_, ps.inst, inputs, [&](const std::vector<const char*>& outs) {
    const auto c = data_->compare_outside_outputs(p, outs, **ref);
    if (c.result.ok) return std::string();
    return std::to_string(c.result.mismatches) + " of " + std::to_string(c.elements) + " elements wrong; first " +
           c.result.first_mismatch;
  });
  for (const side_baseline* b : {&t.eager, &t.compile})
    if (b->note.rfind("wrong", 0) == 0) log::warn("{} at shape '{}': {}", op_.file.string(), ps.inst.shape_name, b->note);
  torch_once_[p] = t;
}

void evaluator::attach_torch(size_t p, shape_verdict& sv) const {
  if (!torch_on_) {
    sv.torch_eager.note = torch_note_;
    return;
  }
  auto it = torch_once_.find(p);
  if (it == torch_once_.end()) return;
  sv.torch_eager = it->second.eager;
  sv.torch_compile = it->second.compile;
  for (side_baseline* b : {&sv.torch_eager, &sv.torch_compile})
    if (b->measured()) b->speedup = b->time.median_s / sv.candidate.median_s;
}

}  // namespace kevolve::eval

#include "eval/torch_baseline.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/backend.h"
#include "eval/evaluator.h"
#include "eval/stats.h"
#include "eval/task_data.h"
#include "eval/torch_process.h"

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


// One mode's result (the runner wrote <mode>.json): its time, or a note
// saying why it has none.
side_baseline read_mode(const fs::path& dir, const std::string& mode,
                        const spec::problem_instance& inst, const output_checker& check, const std::string& run_failure) {
  side_baseline b;
  auto text = read_file(dir / (mode + ".json"));
  if (!text) {
    b.note = run_failure.empty() ? "unavailable: the runner wrote no " + mode + " result" : run_failure;
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

// The timing process of (interpreter, device): started at the first
// request, restarted after one died or timed out.
struct shared_timer {
  std::mutex m;
  std::unique_ptr<torch_process> proc;
};

torch_times time_in_shared_process(const torch_settings& s, const nlohmann::json& manifest, const fs::path& inputs_dir,
                                   const spec::problem_instance& inst, const output_checker& check) {
  static std::mutex registry_mutex;
  static std::map<std::string, std::unique_ptr<shared_timer>> timers;
  shared_timer* timer = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto& slot = timers[s.python.string() + "|" + s.device];
    if (!slot) slot = std::make_unique<shared_timer>();
    timer = slot.get();
  }
  std::lock_guard<std::mutex> lock(timer->m);
  torch_times t;
  if (!timer->proc || !timer->proc->alive()) {
    auto p = torch_process::start(s.python, s.threads, size_t(-1));  // every shape: tmpfs
    if (!p) {
      t.eager.note = t.compile.note = "unavailable: " + p.error().message;
      return t;
    }
    timer->proc = std::move(*p);
  }
  // The inputs stay where they were written; the answers come back in the
  // process's own directory.
  nlohmann::json req = manifest;
  req["op"] = "time";
  for (auto& in : req["inputs"]) in["file"] = (inputs_dir / in["file"].get<std::string>()).string();
  const auto limit = s.compile ? s.compile_timeout : s.eager_timeout;
  auto answer = timer->proc->request(req, limit);
  if (!answer) {
    t.eager.note = t.compile.note = "unavailable: " + answer.error().message;
    return t;
  }
  if (!answer->value("ok", false)) {
    t.eager.note = t.compile.note = "unavailable: " + answer->value("reason", std::string("no reason given"));
    return t;
  }
  t.eager = read_mode(timer->proc->dir(), "eager", inst, check, "");
  if (s.compile) t.compile = read_mode(timer->proc->dir(), "compile", inst, check, t.eager.note);
  return t;
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

namespace {
std::mutex probe_mutex;
std::map<std::string, std::string> probed_versions;  // python -> torch version
}  // namespace

std::string torch_version(const fs::path& python) {
  std::lock_guard<std::mutex> lock(probe_mutex);
  auto it = probed_versions.find(python.string());
  return it == probed_versions.end() ? std::string() : it->second;
}

std::string probe_torch(const fs::path& python, const std::string& device, bool gpu) {
  static std::map<std::pair<std::string, std::string>, std::string> known;
  std::lock_guard<std::mutex> lock(probe_mutex);
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
  if (r && r->ok()) {
    const std::string line = last_line(r->output);  // "torch <version> cuda <0|1>"
    const size_t a = line.find("torch "), b = line.find(" cuda ");
    if (a != std::string::npos && b != std::string::npos && b > a + 6) probed_versions[python.string()] = line.substr(a + 6, b - a - 6);
  }
  return known[key] = why;
}

torch_times measure_torch(const torch_settings& s, const spec::operator_spec& op, const spec::problem_instance& inst,
                          const std::vector<const char*>& inputs, const output_checker& check) {
  torch_times t;
  size_t total = 0;
  for (const auto& in : inst.inputs) total += in.bytes();
  auto dir = temp_dir::create("kevolve-torch-", torch_scratch_root(total));
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
  const nlohmann::json manifest = {{"torch", nlohmann::json::parse(op.torch_entry)}, {"device", s.device},
                                   {"compile", s.compile},
                                   {"threads", s.threads},           {"rotation_bytes", s.rotation_bytes},
                                   {"max_sets", s.max_sets},         {"budget_seconds", s.budget_seconds},
                                   {"min_runs", s.min_runs},         {"inputs", tensors(inst.inputs, true)},
                                   {"outputs", tensors(inst.outputs, false)}, {"params", params}};
  bool written = true;
  for (size_t i = 0; i < inst.inputs.size() && written; ++i)
    written = write_bytes(dir->path() / ("in_" + std::to_string(i) + ".bin"), inputs[i], inst.inputs[i].bytes());
  if (!written) {
    t.eager.note = t.compile.note = "unavailable: cannot write the inputs to " + dir->path().string();
    return t;
  }
  // One long-lived process per (interpreter, device) times every shape of
  // every task (torch and inductor start once), one request at a time.
  t = time_in_shared_process(s, manifest, dir->path(), inst, check);
  return t;
}

// --- the evaluator's side ----------------------------------------------------

void evaluator::configure_torch() {
  const backend_descriptor& be = backend_->descriptor();
  // Where the backend has a PyTorch (not the emulator, not hip: no PyTorch for
  // ROCm in Debian), and never for correctness checks on another device
  // (hip_on_cuda: nothing is timed).
  if (be.torch_device.empty() || options_.verify_only || !options_.torch_baselines.value_or(be.torch_by_default)) return;
  if (!op_.has_torch()) {
    torch_note_ = "unavailable: " + op_.file.string() + " has no 'torch'";
    return;
  }
  torch_.python = options_.python.empty() ? python_executable() : fs::path(options_.python);
  torch_.device = be.torch_device;
  if (const std::string why = probe_torch(torch_.python, torch_.device, be.traits.uses_device); !why.empty()) {
    torch_note_ = "unavailable: " + why;
    log::info("PyTorch baselines of {} {}", op_.name, torch_note_);
    return;
  }
  torch_.compile = options_.torch_compile.value_or(be.torch_compile);
  torch_.threads = data_->threads();
  torch_version_ = torch_version(torch_.python) + ", " + torch_.device;
  torch_.rotation_bytes = options_.rotation_bytes;
  torch_.max_sets = options_.max_sets;
  torch_.budget_seconds = options_.time_budget_seconds;
  torch_.min_runs = options_.min_runs;
  torch_on_ = true;
}

expected<void> evaluator::choose_fitness() {
  const std::string& want = options_.fitness;
  if (want != "" && want != "torch" && want != "baseline")
    return make_error(errc::invalid_input, "fitness: must be torch or baseline, got '" + want + "'");
  if (options_.verify_only) return {};  // nothing is timed
  const bool has_base = data_ && data_->has_timed_baseline();
  if (want == "baseline" || (want.empty() && !torch_on_)) {
    if (data_ && !has_base)
      return make_error(errc::invalid_input, op_.file.string() + ": operator '" + op_.name + "' has no baseline for " +
                                                 backend_->name() + " and PyTorch is not timed (" + torch_note_ +
                                                 "): nothing to time candidates against");
    fitness_torch_ = false;
    if (want.empty() && !backend_->descriptor().torch_device.empty() && !options_.verify_only) {
      fitness_note_ = "the fitness is × baseline: PyTorch is not timed (" +
                      (torch_note_.empty() ? std::string("off") : torch_note_) + ")";
      log::info("{}/{}/{}: {}", op_.name, variant_->name, backend_->name(), fitness_note_);
    }
    return {};
  }
  if (!torch_on_ && !options_.verify_only)
    return make_error(errc::invalid_input, "fitness: torch, but PyTorch is not timed for " + op_.name + " on " +
                                               backend_->name() + " (" + torch_note_ + ")");
  fitness_torch_ = torch_on_;
  return {};
}

// The disk cache of PyTorch times: one file per (operator, its PyTorch
// version, variant, shape, device, torch version, machine, threads).
static fs::path torch_cache_file(const spec::operator_spec& op, const std::string& variant, const spec::problem_instance& inst,
                          const torch_settings& s, const std::string& version, const std::string& hardware) {
  std::string key = op.name + "|" + op.torch_entry + "|" + variant + "|" + inst.shape_name + "|" + s.device + "|" +
                    version + "|" + hardware + "|" + std::to_string(s.threads) + "|" + std::to_string(s.compile);
  if (!op.torch_file.empty()) {
    auto text = read_file(op.torch_file);
    key += "|" + (text ? content_hash({*text}) : std::string("unreadable"));
  }
  for (const auto& t : inst.inputs) {
    key += "|" + t.name + ":" + spec::dtype_name(t.type);
    for (auto d : t.dims) key += "," + std::to_string(d);
  }
  for (const auto& prm : inst.params) key += "|" + prm.name + "=" + std::to_string(prm.value);
  return cache_root() / "torch" / "times" / (content_hash({key}).substr(0, 32) + ".json");
}

namespace {
nlohmann::json side_to_json(const side_baseline& b) {
  return {{"runs", b.time.runs}, {"median_s", b.time.median_s}, {"p10_s", b.time.p10_s}, {"p90_s", b.time.p90_s},
          {"note", b.note}};
}
side_baseline side_from_json(const nlohmann::json& j) {
  side_baseline b;
  b.time.runs = j.value("runs", 0);
  b.time.median_s = j.value("median_s", 0.0);
  b.time.p10_s = j.value("p10_s", 0.0);
  b.time.p90_s = j.value("p90_s", 0.0);
  b.note = j.value("note", std::string());
  return b;
}
}  // namespace

void evaluator::measure_torch_once(size_t p) {
  if (!torch_on_ || torch_once_.count(p)) return;
  const problem_state& pst = data_->problem(p);
  const fs::path cached = torch_cache_file(op_, variant_->name, pst.inst, torch_, torch_version_, hw_.name + " " + hw_.model);
  if (auto text = read_file(cached)) {
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_object() && j.contains("eager") && j.contains("compile")) {
      torch_once_[p] = {side_from_json(j["eager"]), side_from_json(j["compile"])};
      return;
    }
  }
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
  bool keep = t.eager.measured() || t.compile.measured();
  for (const side_baseline* b : {&t.eager, &t.compile})
    if (b->note.rfind("wrong", 0) == 0) {
      log::warn("{} at shape '{}': {}", op_.file.string(), ps.inst.shape_name, b->note);
      keep = false;
    }
  torch_once_[p] = t;
  // Kept when right (a wrong or failed run is tried again by the next task).
  if (keep) {
    std::error_code ec;
    fs::create_directories(cached.parent_path(), ec);
    const std::string text = nlohmann::json{{"eager", side_to_json(t.eager)}, {"compile", side_to_json(t.compile)}}.dump();
    const fs::path tmp = cached.string() + ".tmp" + std::to_string(::getpid());
    if (write_bytes(tmp, text.data(), text.size())) fs::rename(tmp, cached, ec);
    if (ec) fs::remove(tmp, ec);
  }
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

#include <cstdio>

#include <fmt/format.h>

#include "app/commands.h"
#include "common/fs.h"
#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/evaluator.h"
#include "eval/torch_baseline.h"
#include "spec/operator_loader.h"

namespace kevolve::app {
namespace {

int list_operators() {
  auto ops = spec::load_catalog(spec::default_operator_dir());
  if (!ops) return report_error(ops.error());
  std::printf("%-24s %-14s %-16s %-7s %-8s %s\n", "operator", "class", "variants", "shapes", "holdout", "baseline");
  for (const auto& op : *ops) {
    std::string variants;
    for (const auto& v : op.variants) variants += (variants.empty() ? "" : ",") + v.name;
    std::printf("%-24s %-14s %-16s %-7zu %-8zu %s\n", op.name.c_str(), op.op_class.c_str(), variants.c_str(),
                op.shapes.size(), op.holdout_shapes.size(), op.baseline.name.c_str());
  }
  std::printf("%zu operators in %s\n", ops->size(), spec::default_operator_dir().c_str());
  return exit_ok;
}

// Compiles the reference and the baseline in a throwaway cache, so that a
// rejected file leaves nothing behind.
expected<void> compile_sources(const spec::operator_spec& op) {
  auto scratch = temp_dir::create("kevolve-validate-");
  if (!scratch) return tl::unexpected(scratch.error());
  eval::cpu_compiler compiler(scratch->path(), std::chrono::seconds(120));
  for (const auto& [path, libs, what] :
       {std::tuple{op.reference, std::vector<std::string>{}, "reference"},
        std::tuple{op.baseline.source, op.baseline.libraries, "baseline.source"}}) {
    if (path.empty()) continue;  // an operator from PyTorch has neither
    auto text = read_file(path);
    if (!text) return tl::unexpected(text.error());
    auto k = compiler.compile(*text, libs, path.string());
    if (!k) return tl::unexpected(k.error());
    if (!k->ok)
      return make_error(errc::invalid_input, op.file.string() + ": '" + what + "' (" + path.string() +
                                                 ") does not compile:\n" + k->report.diagnostics);
  }
  return {};
}

// The operator's PyTorch version at every holdout shape of every variant, on
// the CPU: it runs, returns the outputs' shapes and dtypes (eager, native
// dtypes), gives the same bits twice (fp64), agrees with the C++ reference
// where there is one, and the plain baseline agrees with the reference.
expected<void> check_torch(const spec::operator_spec& op) {
  if (!op.has_torch()) return {};
  const std::string why = eval::probe_torch(python_executable(), "cpu");
  if (!why.empty()) return make_error(errc::toolchain_error, op.file.string() + ": cannot check its 'torch': " + why);
  spec::hardware_profile hw;  // nothing is timed
  hw.backend = "cpu";
  hw.name = "validation";
  for (const auto& v : op.variants) {
    eval::evaluator_options o;
    o.threads = 1;
    o.holdout_only = true;
    o.validate_torch = true;
    o.torch_baselines = false;
    o.fitness = op.baseline.source.empty() ? "" : "baseline";
    o.verify_only = true;
    auto e = eval::evaluator::create(op, v.name, o, hw);
    if (!e) {
      std::string m = e.error().message;
      return make_error(errc::invalid_input, m + " (variant '" + v.name + "')");
    }
  }
  return {};
}

}  // namespace

int run_ops(const cli::ops_command& cmd) {
  if (cmd.action == "list") return list_operators();
  int rc = exit_ok;
  for (const auto& f : cmd.files) {
    auto op = spec::load_operator(f);
    if (op && cmd.compile) {
      if (auto c = compile_sources(*op); !c) op = tl::unexpected(c.error());
    }
    if (op && cmd.compile) {
      if (auto c = check_torch(*op); !c) op = tl::unexpected(c.error());
    }
    if (!op) {
      for (size_t start = 0; start < op.error().message.size();) {
        size_t end = op.error().message.find('\n', start);
        if (end == std::string::npos) end = op.error().message.size();
        std::fprintf(stderr, "error: %s\n", op.error().message.substr(start, end - start).c_str());
        start = end + 1;
        if (op.error().message.find("does not compile") != std::string::npos) {
          std::fprintf(stderr, "%s\n", op.error().message.substr(start).c_str());
          break;
        }
      }
      rc = exit_bad_input;
      continue;
    }
    std::printf("ok: %s (%s, %zu variants, %zu shapes, %zu holdout shapes)\n", f.c_str(), op->name.c_str(),
                op->variants.size(), op->shapes.size(), op->holdout_shapes.size());
  }
  return rc;
}

}  // namespace kevolve::app

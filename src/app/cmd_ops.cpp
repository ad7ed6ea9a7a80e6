#include <cstdio>

#include <fmt/format.h>

#include "app/commands.h"
#include "common/fs.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/cpu_backend.h"
#include "eval/evaluator.h"
#include "eval/torch_baseline.h"
#include "spec/operator_loader.h"

namespace kevolve::app {
namespace {
namespace fs = std::filesystem;

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
    o.prestart_worker = false;
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

// Loads and (with compile) compiles one operator file, as `ops validate`.
expected<spec::operator_spec> validate(const std::string& file, bool compile) {
  auto op = spec::load_operator(file);
  if (op && compile) {
    if (auto c = compile_sources(*op); !c) return tl::unexpected(c.error());
    if (auto c = check_torch(*op); !c) return tl::unexpected(c.error());
  }
  return op;
}

void print_validation_error(const error& e) {
  for (size_t start = 0; start < e.message.size();) {
    size_t end = e.message.find('\n', start);
    if (end == std::string::npos) end = e.message.size();
    std::fprintf(stderr, "error: %s\n", e.message.substr(start, end - start).c_str());
    start = end + 1;
    if (e.message.find("does not compile") != std::string::npos) {
      std::fprintf(stderr, "%s\n", e.message.substr(start).c_str());
      break;
    }
  }
}

// `ops import`: src/torchio/import_operator.py writes each operator into a
// staging folder inside DIR (all files in one Python process: PyTorch loads
// once), where it is validated like `ops validate`; only then are
// <name>.yaml and <name>.py renamed into DIR. A refused file leaves DIR as
// it was for that file and does not stop the others; a DIR this command
// created and nothing went into is removed.
int import_operator(const cli::ops_command& cmd) {
  const fs::path out_dir = fs::absolute(cmd.out).lexically_normal();
  std::error_code ec;
  const bool created = !fs::exists(out_dir, ec) && fs::create_directories(out_dir, ec);
  if (ec) return report_error({errc::invalid_input, out_dir.string() + ": cannot create the output directory: " + ec.message()});
  int rc = exit_ok;
  size_t imported = 0;
  {
    auto stage = temp_dir::create(".kevolve-import-", out_dir);
    if (!stage) {
      if (created) fs::remove(out_dir, ec);
      return report_error(stage.error());
    }
    const fs::path staged = stage->path() / "op";
    std::vector<std::string> argv = {python_executable().string(),
                                     (data_root() / "src" / "torchio" / "import_operator.py").string()};
    argv.insert(argv.end(), cmd.files.begin(), cmd.files.end());
    argv.insert(argv.end(), {"--out", staged.string()});
    if (!cmd.name.empty()) argv.insert(argv.end(), {"--name", cmd.name});
    if (cmd.scale > 0) argv.insert(argv.end(), {"--scale", fmt::format("{}", cmd.scale)});
    if (cmd.eval_mode) argv.push_back("--eval-mode");
    // The script prints `imported<TAB>FILE<TAB>YAML` per file it wrote into
    // the stage; every other line (its refusals) goes to stderr as it comes.
    std::vector<std::pair<std::string, fs::path>> written;
    std::string partial;
    auto line = [&](const std::string& l) {
      const size_t t1 = l.find('\t'), t2 = t1 == std::string::npos ? t1 : l.find('\t', t1 + 1);
      if (l.rfind("imported\t", 0) == 0 && t2 != std::string::npos) {
        const fs::path yaml = l.substr(t2 + 1);
        if (yaml.parent_path() == staged && yaml.extension() == ".yaml") {
          written.emplace_back(l.substr(t1 + 1, t2 - t1 - 1), yaml);
          return;
        }
      }
      std::fprintf(stderr, "%s\n", l.c_str());
    };
    subprocess_options options = timeout_options(std::chrono::minutes(10) * static_cast<int>(cmd.files.size()));
    options.on_output = [&](std::string_view piece) {
      partial.append(piece);
      for (size_t nl; (nl = partial.find('\n')) != std::string::npos; partial.erase(0, nl + 1)) line(partial.substr(0, nl));
    };
    auto r = run_subprocess(argv, options);
    if (!partial.empty()) line(partial);
    const bool refused = r && !r->timed_out && r->signal == 0 && r->exit_code == exit_bad_input;
    if (!r) {
      rc = report_error(r.error());
    } else if (refused) {
      rc = exit_bad_input;
    } else if (!r->ok()) {
      rc = report_error({errc::internal, "ops import: " + argv[1] + " failed (" +
                                             (r->timed_out ? std::string("timed out")
                                                           : r->signal ? "signal " + std::to_string(r->signal)
                                                                       : "exit " + std::to_string(r->exit_code)) +
                                             "); the files it imported before are kept"});
    }
    for (const auto& [file, yaml] : written) {
      auto op = validate(yaml.string(), true);
      if (!op) {
        std::fprintf(stderr, "error: %s: the imported operator does not validate:\n", file.c_str());
        print_validation_error(op.error());
        if (rc == exit_ok) rc = exit_bad_input;
        continue;
      }
      bool moved = true;
      for (const char* ext : {".py", ".yaml"}) {
        fs::rename(staged / (op->name + ext), out_dir / (op->name + ext), ec);
        if (ec) {
          rc = report_error({errc::internal, (out_dir / (op->name + ext)).string() + ": cannot write: " + ec.message()});
          moved = false;
          break;
        }
      }
      if (!moved) continue;
      ++imported;
      std::printf("imported: %s (%s, class %s, %zu inputs, %zu shapes, %zu holdout shapes) from %s\n",
                  (out_dir / (op->name + ".yaml")).c_str(), op->name.c_str(), op->op_class.c_str(), op->inputs.size(),
                  op->shapes.size(), op->holdout_shapes.size(), file.c_str());
      std::fflush(stdout);
    }
    if (cmd.files.size() > 1)
      std::printf("imported %zu of %zu files into %s\n", imported, cmd.files.size(), out_dir.c_str());
  }
  // Only while empty: another import may have written into it meanwhile.
  if (imported == 0 && created) fs::remove(out_dir, ec);
  return rc;
}

}  // namespace

int run_ops(const cli::ops_command& cmd) {
  if (cmd.action == "list") return list_operators();
  if (cmd.action == "import") return import_operator(cmd);
  int rc = exit_ok;
  for (const auto& f : cmd.files) {
    auto op = validate(f, cmd.compile);
    if (!op) {
      print_validation_error(op.error());
      rc = exit_bad_input;
      continue;
    }
    std::printf("ok: %s (%s, %zu variants, %zu shapes, %zu holdout shapes)\n", f.c_str(), op->name.c_str(),
                op->variants.size(), op->shapes.size(), op->holdout_shapes.size());
  }
  return rc;
}

}  // namespace kevolve::app

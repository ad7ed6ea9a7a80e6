#include "cli/options.h"

#include <set>
#include <sstream>

#include <boost/program_options.hpp>

#include "eval/backends/registry.h"

namespace kevolve::cli {
namespace po = boost::program_options;

namespace {

const char* kUsage =
    "usage: kevolve [--log-level LEVEL] COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  run      run a sweep from YAML (kevolve run CONFIG [--store PATH | --resume STORE])\n"
    "  report   the summary of a sweep's store (kevolve report STORE [--markdown | --csv] [--html OUT.html])\n"
    "  status   where a sweep stands, also while it runs (kevolve status STORE)\n"
    "  merge    combine the stores of a split sweep (kevolve merge OUT STORE...)\n"
    "  split    split a sweep into one config per operator or backend (kevolve split CONFIG --by operator --out DIR)\n"
    "  eval     evaluate one kernel file against one operator\n"
    "  ops      list operators (ops list), validate operator files (ops validate FILE...) or import\n"
    "           KernelBench-style PyTorch files as operators (ops import FILE.py... [--name N] [--scale S] [--out DIR])\n"
    "  doctor   report what this machine has and measure its roofline\n"
    "  kb       the knowledge base: kb list, kb search QUERY [--backend B] [--trigger T...], kb promote STORE,\n"
    "           kb render OPERATOR --backend B [--template T] [--params JSON] (a builtin template's kernel)\n"
    "  export   training data from a store: export STORE --format sft|dpo|trajectory [--out FILE]\n"
    "\n"
    "exit codes: 0 ok, 1 verdict other than ok, 2 bad input or usage, 3 internal error\n"
    "run 'kevolve COMMAND --help' for a command's options\n";

// "backend: cpu, cuda, hip, hip_on_cuda or mtia_emu"
std::string backend_help() {
  std::string names = eval::backend_names();
  if (const size_t last = names.rfind(", "); last != std::string::npos) names.replace(last, 2, " or ");
  return "backend: " + names;
}

std::string render(const po::options_description& d, const std::string& head) {
  std::ostringstream s;
  s << head << "\n" << d;
  return s.str();
}

}  // namespace

expected<command_line> parse_command_line(int argc, const char* const* argv) {
  command_line cl;
  po::options_description global("global options");
  global.add_options()("help,h", "show help")("version", "show the version")(
      "log-level", po::value<std::string>(&cl.log_level)->default_value("warn"), "trace|debug|info|warn|error|off")(
      "command", po::value<std::string>(), "command")("args", po::value<std::vector<std::string>>(), "arguments");
  po::positional_options_description pos;
  pos.add("command", 1).add("args", -1);
  try {
    po::variables_map vm;
    po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(global).positional(pos).allow_unregistered().run();
    po::store(parsed, vm);
    po::notify(vm);
    if (vm.count("version")) {
      cl.command = "version";
      return cl;
    }
    if (!vm.count("command")) {
      cl.command = "help";
      cl.help_text = kUsage;
      if (!vm.count("help")) return make_error(errc::invalid_input, std::string("no command given\n") + kUsage);
      return cl;
    }
    static const std::set<std::string> levels = {"trace", "debug", "info", "warn", "error", "off"};
    if (!levels.count(cl.log_level))
      return make_error(errc::invalid_input, "--log-level: expected one of trace, debug, info, warn, error, off, got '" + cl.log_level + "'");
    cl.command = vm["command"].as<std::string>();
    std::vector<std::string> rest = po::collect_unrecognized(parsed.options, po::include_positional);
    rest.erase(rest.begin());  // the command itself
    const bool help = vm.count("help") > 0;

    if (cl.command == "run") {
      run_command& r = cl.run;
      po::options_description d("kevolve run options");
      d.add_options()("help,h", "show help")("config", po::value<std::string>(&r.config), "sweep YAML")(
          "store", po::value<std::string>(&r.store), "the store to create (default: <config>-<UTC time>.h5 here)")(
          "resume", po::value<std::string>(&r.resume), "continue the sweep kept in this store")(
          "seed-from", po::value<std::vector<std::string>>(&r.seed_from)->multitoken(),
          "stores whose best kernels start each task");
      po::positional_options_description p;
      p.add("config", 1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve run CONFIG [--store PATH] [--resume STORE] [--seed-from STORE...]");
        return cl;
      }
      po::variables_map rvm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), rvm);
      po::notify(rvm);
      if (r.config.empty()) return make_error(errc::invalid_input, "run: expected a sweep YAML file (kevolve run CONFIG)");
      if (!r.store.empty() && !r.resume.empty())
        return make_error(errc::invalid_input, "run: --store and --resume name the same thing; give one");
      return cl;
    }
    if (cl.command == "report") {
      po::options_description d("kevolve report options");
      d.add_options()("help,h", "show help")("store", po::value<std::string>(&cl.report.store), "a sweep's store")(
          "html", po::value<std::string>(&cl.report.html), "write a self-contained HTML report to this file")(
          "markdown", po::bool_switch(&cl.report.markdown), "print the summary as Markdown")(
          "csv", po::bool_switch(&cl.report.csv), "print the summary as CSV");
      po::positional_options_description p;
      p.add("store", 1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve report STORE [--markdown | --csv] [--html OUT.html]");
        return cl;
      }
      po::variables_map rvm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), rvm);
      po::notify(rvm);
      if (cl.report.store.empty()) return make_error(errc::invalid_input, "report: expected a store (kevolve report STORE)");
      if (cl.report.markdown && cl.report.csv)
        return make_error(errc::invalid_input, "report: --markdown and --csv both choose the summary's format; give one");
      if (rvm.count("html") && cl.report.html.empty())
        return make_error(errc::invalid_input, "report: --html expects the path of the HTML file to write");
      return cl;
    }
    if (cl.command == "status") {
      po::options_description d("kevolve status options");
      d.add_options()("help,h", "show help")("store", po::value<std::string>(&cl.status.store), "a sweep's store");
      po::positional_options_description p;
      p.add("store", 1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve status STORE");
        return cl;
      }
      po::variables_map svm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), svm);
      po::notify(svm);
      if (cl.status.store.empty()) return make_error(errc::invalid_input, "status: expected a store (kevolve status STORE)");
      return cl;
    }
    if (cl.command == "merge") {
      po::options_description d("kevolve merge options");
      d.add_options()("help,h", "show help")("force", po::bool_switch(&cl.merge.force), "replace OUT if it exists")(
          "paths", po::value<std::vector<std::string>>(), "OUT STORE...");
      po::positional_options_description p;
      p.add("paths", -1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve merge OUT STORE... [--force]");
        return cl;
      }
      po::variables_map mvm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), mvm);
      po::notify(mvm);
      std::vector<std::string> paths;
      if (mvm.count("paths")) paths = mvm["paths"].as<std::vector<std::string>>();
      if (paths.size() < 2)
        return make_error(errc::invalid_input, "merge: expected the store to write and at least one store to merge (kevolve merge OUT STORE...)");
      cl.merge.out = paths[0];
      cl.merge.stores.assign(paths.begin() + 1, paths.end());
      return cl;
    }
    if (cl.command == "split") {
      po::options_description d("kevolve split options");
      d.add_options()("help,h", "show help")("config", po::value<std::string>(&cl.split.config), "sweep YAML")(
          "by", po::value<std::string>(&cl.split.by)->default_value("operator"), "operator | backend")(
          "out", po::value<std::string>(&cl.split.out), "directory for the pieces (piece-000.yaml, ...)");
      po::positional_options_description p;
      p.add("config", 1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve split CONFIG --by operator|backend --out DIR");
        return cl;
      }
      po::variables_map svm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), svm);
      po::notify(svm);
      if (cl.split.config.empty()) return make_error(errc::invalid_input, "split: expected a sweep YAML file (kevolve split CONFIG --out DIR)");
      if (cl.split.by != "operator" && cl.split.by != "backend")
        return make_error(errc::invalid_input, "split: --by must be operator or backend, got '" + cl.split.by + "'");
      if (cl.split.out.empty()) return make_error(errc::invalid_input, "split: --out expects the directory to write the pieces to");
      return cl;
    }
    if (cl.command == "eval") {
      eval_command& e = cl.eval;
      po::options_description d("kevolve eval options");
      d.add_options()("help,h", "show help")("op", po::value<std::string>(&e.op)->required(), "operator name or YAML file")(
          "backend", po::value<std::string>(&e.backend)->default_value("cpu"), backend_help().c_str())(
          "kernel", po::value<std::string>(&e.kernel)->required(), "kernel source file")(
          "variant", po::value<std::string>(&e.variant), "dtype variant (default: the operator's first)")(
          "shapes", po::value<std::vector<std::string>>()->multitoken(), "all, or names of shape points")(
          "json", po::bool_switch(&e.json), "print one JSON object instead of a table")(
          "seed", po::value<uint64_t>(&e.seed)->default_value(1), "seed of the verification inputs")(
          "threads", po::value<int>(&e.threads)->default_value(0), "threads for kernels (0: all)")(
          "timeout-ms", po::value<int>(&e.timeout_ms)->default_value(10000), "hard limit of one kernel call")(
          "budget", po::value<double>(&e.budget_seconds)->default_value(0.4), "timing seconds per shape and side")(
          "trials", po::value<int>(&e.trials)->default_value(3), "verification trials per shape")(
          "torch", po::value<std::string>(&e.torch)->default_value("auto"),
          "PyTorch eager and torch.compile, timed once per shape and cached: auto (on for cpu and cuda), on, off")(
          "fitness", po::value<std::string>(&e.fitness),
          "what the fitness is a speedup over: torch (the faster of eager and torch.compile) or baseline; "
          "default: torch where PyTorch is timed")(
          "ncu", po::value<std::string>(&e.ncu)->default_value("auto"),
          "cuda: Nsight Compute counters of the largest timed shape: auto (when ncu is found), on, off");
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve eval --op NAME --backend " + eval::backend_names({}, "|") + " --kernel FILE [options]");
        return cl;
      }
      po::variables_map evm;
      po::store(po::command_line_parser(rest).options(d).run(), evm);
      po::notify(evm);
      if (evm.count("shapes")) {
        for (const auto& s : evm["shapes"].as<std::vector<std::string>>())
          if (s != "all") e.shapes.push_back(s);
      }
      if (!eval::find_backend(e.backend))
        return make_error(errc::invalid_input, "--backend: '" + e.backend + "' is not available in this build (available: " +
                                                   eval::backend_names() + ")");
      if (e.torch != "auto" && e.torch != "on" && e.torch != "off")
        return make_error(errc::invalid_input, "--torch: must be auto, on or off, got '" + e.torch + "'");
      if (!e.fitness.empty() && e.fitness != "torch" && e.fitness != "baseline")
        return make_error(errc::invalid_input, "--fitness: must be torch or baseline, got '" + e.fitness + "'");
      if (e.ncu != "auto" && e.ncu != "on" && e.ncu != "off")
        return make_error(errc::invalid_input, "--ncu: must be auto, on or off, got '" + e.ncu + "'");
      if (e.timeout_ms <= 0 || e.budget_seconds <= 0 || e.trials < 1 || e.threads < 0)
        return make_error(errc::invalid_input, "--timeout-ms, --budget and --trials must be positive, --threads >= 0");
      return cl;
    }
    if (cl.command == "ops") {
      ops_command& o = cl.ops;
      po::options_description d("kevolve ops options");
      d.add_options()("help,h", "show help")("no-compile", "validate: skip compiling reference and baseline")(
          "name", po::value<std::string>(&o.name), "import: the operator's name (default: from the file name, "
                                                   "kb<level>_<stem> in a folder level<level>, else kb_<stem>)")(
          "scale", po::value<double>(&o.scale), "import: 0 < S <= 1: the timed shape is the file's sizes above 64 "
                                                "times S (instead of the file's own sizes)")(
          "out", po::value<std::string>(&o.out)->default_value("."), "import: the directory of <name>.yaml and <name>.py")(
          "eval-mode", po::bool_switch(&o.eval_mode), "import: the module in eval mode (dropout off, BatchNorm's "
                                                      "running statistics); without it such modules are refused")(
          "action", po::value<std::string>(&o.action), "list | validate | import")(
          "files", po::value<std::vector<std::string>>(&o.files), "files");
      po::positional_options_description p;
      p.add("action", 1).add("files", -1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve ops list\n       kevolve ops validate FILE... [--no-compile]\n"
                                 "       kevolve ops import FILE.py... [--name N] [--scale S] [--out DIR] [--eval-mode]");
        return cl;
      }
      po::variables_map ovm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), ovm);
      po::notify(ovm);
      o.compile = !ovm.count("no-compile");
      if (o.action != "list" && o.action != "validate" && o.action != "import")
        return make_error(errc::invalid_input,
                          "ops: expected 'list', 'validate FILE...' or 'import FILE.py...', got '" + o.action + "'");
      if (o.action != "import" && (ovm.count("name") || ovm.count("scale") || !ovm["out"].defaulted() || o.eval_mode))
        return make_error(errc::invalid_input, "ops " + o.action + ": --name, --scale, --out and --eval-mode belong to 'ops import'");
      if (o.action == "import" && o.files.empty())
        return make_error(errc::invalid_input, "ops import: expected KernelBench-style Python files (FILE.py...)");
      if (o.action == "import" && ovm.count("name") && o.files.size() != 1)
        return make_error(errc::invalid_input, "ops import: --name names one file's operator; got " +
                                                   std::to_string(o.files.size()) + " files");
      if (o.action == "import" && ovm.count("scale") && !(o.scale > 0 && o.scale <= 1))
        return make_error(errc::invalid_input, "ops import: --scale must be in (0, 1], got " + std::to_string(o.scale));
      if (o.action == "validate" && o.files.empty())
        return make_error(errc::invalid_input, "ops validate: expected at least one operator YAML file");
      return cl;
    }
    if (cl.command == "doctor") {
      po::options_description d("kevolve doctor options");
      d.add_options()("help,h", "show help")("remeasure", po::bool_switch(&cl.doctor.remeasure), "measure the roofline again")(
          "json", po::bool_switch(&cl.doctor.json), "print JSON")(
          "threads", po::value<int>(&cl.doctor.threads)->default_value(0), "threads (0: all)");
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve doctor [--remeasure] [--json]");
        return cl;
      }
      po::variables_map dvm;
      po::store(po::command_line_parser(rest).options(d).run(), dvm);
      po::notify(dvm);
      return cl;
    }
    if (cl.command == "kb") {
      kb_command& k = cl.kb;
      po::options_description d("kevolve kb options");
      d.add_options()("help,h", "show help")("action", po::value<std::string>(&k.action), "list | search")(
          "query", po::value<std::vector<std::string>>()->multitoken(), "search: words")(
          "backend", po::value<std::string>(&k.backend), "only documents for this backend")(
          "hardware", po::value<std::string>(&k.hardware), "only documents for this hardware profile")(
          "class", po::value<std::string>(&k.op_class), "only documents for this operator class")(
          "trigger", po::value<std::vector<std::string>>(&k.triggers)->multitoken(),
          "diagnosis triggers (memory_bound, compile_error, ...)")(
          "limit", po::value<int>(&k.limit)->default_value(5), "search: at most this many documents")(
          "min-speedup", po::value<double>(&k.min_speedup)->default_value(1.05), "promote: tasks at least this fast")(
          "dir", po::value<std::string>(&k.dir), "promote: write skills here (default: knowledge/skills)")(
          "variant", po::value<std::string>(&k.variant), "render: dtype variant (default: the operator's first)")(
          "template", po::value<std::string>(&k.template_name), "render: template <backend>/<name> (default: the preferred one)")(
          "params", po::value<std::string>(&k.params), "render: JSON object of parameters over the template's defaults");
      po::positional_options_description p;
      p.add("action", 1).add("query", -1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve kb list\n       kevolve kb search QUERY... [--backend B] [--hardware H] [--trigger T...]\n"
                                 "       kevolve kb promote STORE [--min-speedup X] [--dir DIR]\n"
                                 "       kevolve kb render OPERATOR --backend B [--variant V] [--template T] [--params JSON]");
        return cl;
      }
      po::variables_map kvm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), kvm);
      po::notify(kvm);
      if (k.action != "list" && k.action != "search" && k.action != "promote" && k.action != "render")
        return make_error(errc::invalid_input,
                          "kb: expected 'list', 'search QUERY', 'promote STORE' or 'render OPERATOR', got '" + k.action + "'");
      if (kvm.count("query")) {
        const auto words = kvm["query"].as<std::vector<std::string>>();
        if (k.action == "promote") {
          if (words.size() != 1) return make_error(errc::invalid_input, "kb promote: expected one store (kevolve kb promote STORE)");
          k.store = words[0];
        } else if (k.action == "render") {
          if (words.size() != 1)
            return make_error(errc::invalid_input, "kb render: expected one operator (kevolve kb render OPERATOR --backend B)");
          k.op = words[0];
        } else {
          for (const auto& w : words) k.query += (k.query.empty() ? "" : " ") + w;
        }
      }
      if (k.action == "render" && (k.op.empty() || k.backend.empty()))
        return make_error(errc::invalid_input, "kb render: expected an operator and --backend (kevolve kb render OPERATOR --backend B)");
      if (k.action == "promote" && k.store.empty())
        return make_error(errc::invalid_input, "kb promote: expected a store (kevolve kb promote STORE)");
      if (k.action == "search" && k.query.empty() && k.triggers.empty())
        return make_error(errc::invalid_input, "kb search: expected a query or --trigger");
      if (k.limit < 1) return make_error(errc::invalid_input, "kb search: --limit must be at least 1");
      return cl;
    }
    if (cl.command == "export") {
      export_command& x = cl.exp;
      po::options_description d("kevolve export options");
      d.add_options()("help,h", "show help")("store", po::value<std::string>(&x.store), "a sweep's store")(
          "format", po::value<std::string>(&x.format), "sft | dpo | trajectory")(
          "out", po::value<std::string>(&x.out), "write JSONL here (default: stdout)")(
          "min-fitness", po::value<double>(&x.min_fitness)->default_value(0), "keep kernels (tasks) at least this fit")(
          "operator", po::value<std::string>(&x.op), "only this operator")(
          "backend", po::value<std::string>(&x.backend), "only this backend");
      po::positional_options_description p;
      p.add("store", 1);
      if (help) {
        cl.command = "help";
        cl.help_text = render(d, "usage: kevolve export STORE --format sft|dpo|trajectory [--out FILE] [filters]");
        return cl;
      }
      po::variables_map xvm;
      po::store(po::command_line_parser(rest).options(d).positional(p).run(), xvm);
      po::notify(xvm);
      if (x.store.empty()) return make_error(errc::invalid_input, "export: expected a store (kevolve export STORE --format F)");
      if (x.format != "sft" && x.format != "dpo" && x.format != "trajectory")
        return make_error(errc::invalid_input, "export: --format must be sft, dpo or trajectory, got '" + x.format + "'");
      return cl;
    }
    return make_error(errc::invalid_input, "unknown command '" + cl.command + "'\n" + kUsage);
  } catch (const po::error& e) {
    return make_error(errc::invalid_input, std::string(e.what()));
  }
}

}  // namespace kevolve::cli

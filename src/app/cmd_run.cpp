#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "actors/runtime.h"
#include "app/commands.h"
#include "app/run_display.h"
#include "app/store_skills.h"
#include "common/fs.h"
#include "eval/compile_pool.h"
#include "report/summary.h"
#include "spec/sweep_spec.h"
#include "sweep/evaluation_service.h"
#include "sweep/scheduler.h"
#include "synth/builtin_synthesizer.h"
#include "synth/factory.h"
#include "transport/launch.h"
#include "transport/mpi_transport.h"

namespace kevolve::app {
namespace fs = std::filesystem;

namespace {

// SIGTERM, SIGINT, SIGUSR1 on any rank: rank 0 drains, writes a final
// checkpoint and stops the job (Slurm sends SIGTERM on preemption and, with
// --signal, SIGUSR1 before the time limit).
std::atomic<int> received_signal{0};
void on_signal(int signo) { received_signal = signo; }

void install_signal_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) ::sigaction(s, &sa, nullptr);
}

std::string default_store(const fs::path& config) {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::gmtime(&t));
  return config.stem().string() + "-" + buf + ".h5";
}

// Every evaluator of this process shares one compile-ahead pool (one thread
// per core but one).
std::shared_ptr<sweep::evaluation_service> real_service(int rank, const std::string&) {
  static const auto pool = std::make_shared<eval::compile_pool>(eval::compile_pool::default_workers(), std::chrono::seconds(120));
  return std::make_shared<sweep::task_evaluators>(rank, 4, pool);
}

// Ends this rank: MPI_Finalize with the others when all are alive, else
// leave without it (Open MPI's finalize would wait for a hung rank forever).
int leave(transport::mpi_transport* link, bool finalize, int status) {
  std::fflush(nullptr);
  if (!link) return status;
  link->finalize(finalize);
  if (!finalize) ::_exit(status);
  return status;
}

int evaluator_main(const spec::sweep_spec& spec, const transport::launch_info& launch, transport::mpi_transport& link) {
  actors::evaluator_run run;
  run.link = &link;
  run.launch = launch;
  run.spec = &spec;
  run.make_service = real_service;
  run.signal = &received_signal;
  const auto [status, finalize] = actors::run_evaluator_rank(run);
  return leave(&link, finalize, status);
}

int write_summaries(const store::sweep_record& record, const std::string& store) {
  const auto summary = report::summarize(record);
  std::printf("\n%s", report::summary_text(summary).c_str());
  print_rank_table(record);
  const fs::path base = fs::path(store).replace_extension("");
  for (const auto& [ext, text] : {std::pair{".summary.md", report::summary_markdown(summary)},
                                  std::pair{".summary.csv", report::summary_csv(summary)}}) {
    const fs::path out = base.string() + ext;
    if (auto w = write_file_atomic(out, text); !w) return report_error(w.error());
    std::printf("wrote %s\n", out.c_str());
  }
  return exit_ok;
}

}  // namespace

int run_sweep(const cli::run_command& cmd) {
  auto spec = spec::load_sweep(cmd.config);
  if (!spec) return report_error(spec.error());
  install_signal_handlers();
  const transport::launch_info launch = transport::detect_launch();
  std::unique_ptr<transport::mpi_transport> link;
  if (launch.under_launcher) {
    auto t = transport::mpi_transport::init();
    if (!t) return report_error(t.error());
    link = std::move(*t);
  }
  if (link && link->rank() != 0) return evaluator_main(*spec, launch, *link);

  sweep::run_options options;
  options.resume = !cmd.resume.empty();
  options.store = options.resume ? cmd.resume : !cmd.store.empty() ? cmd.store : default_store(cmd.config);
  for (const auto& s : cmd.seed_from) options.seed_from.push_back(s);
  auto scheduler = sweep::scheduler::create(*spec, options);
  if (!scheduler) {
    const int code = report_error(scheduler.error());
    if (link && link->size() > 1) actors::stop_evaluator_ranks(*link);
    return leave(link.get(), true, code);
  }
  // The skills of the --seed-from stores: priors and retrieved notes for
  // every synthesizer, as if promoted (nothing is written to knowledge/).
  std::vector<synth::seed_skill> seed_skills;
  for (size_t i = 0; i < options.seed_from.size(); ++i)
    for (auto& d : store_skills((*scheduler)->seed_stores()[i], 0.0, options.seed_from[i].string()))
      seed_skills.push_back({options.seed_from[i].string() + "#" + d.file, std::move(d.text)});
  const size_t seed_skill_count = seed_skills.size();
  if (auto r = synth::set_seed_skills(std::move(seed_skills)); !r) {
    const int code = report_error(r.error());
    if (link && link->size() > 1) actors::stop_evaluator_ranks(*link);
    return leave(link.get(), true, code);
  }
  // A builtin sweep ends a task no template serves when it starts, saying
  // why once, rather than growing children that are all skipped.
  if (spec->synthesizer == "builtin") {
    auto builtin = synth::make_builtin_synthesizer();
    if (!builtin) {
      const int code = report_error(builtin.error());
      if (link && link->size() > 1) actors::stop_evaluator_ranks(*link);
      return leave(link.get(), true, code);
    }
    std::shared_ptr<const synth::builtin_synthesizer> check = std::move(*builtin);
    (*scheduler)->set_unserved_check([check](const spec::operator_spec& op, const spec::variant& v, const std::string& backend) {
      return check->unserved(op, &v, backend);
    });
  }
  const int ranks = link ? link->size() : 1;
  std::printf("sweep %s -> %s (%zu operators, %s, %s)\n", cmd.config.c_str(), options.store.c_str(), spec->operators.size(),
              options.resume ? "resumed" : "new",
              ranks > 1 ? (std::to_string(ranks - 1) + " evaluator ranks").c_str() : "one process");
  if (!options.seed_from.empty())
    std::printf("%zu skill(s) from the --seed-from stores start the synthesizers\n", seed_skill_count);
  std::fflush(stdout);

  actors::coordinator_run run;
  if (spec->synthesizer == "llm") {
    // One client for the whole synthesizer pool; spending of earlier
    // sessions counts against the budgets.
    std::shared_ptr<llm::http_llm_client> client;
    if (!spec->llm.endpoints.empty()) {
      client = std::make_shared<llm::http_llm_client>(spec->llm);
      for (const auto& t : (*scheduler)->snapshot().tasks)
        for (const auto& x : t.llm) client->add_spent(t.id, {x.prompt_tokens, x.completion_tokens, x.cost, 1});
    }
    auto resources = synth::make_llm_resources(spec->llm, {}, client);
    if (!resources) {
      const int code = report_error(resources.error());
      if (link && link->size() > 1) actors::stop_evaluator_ranks(*link);
      return leave(link.get(), true, code);
    }
    synth::set_llm_resources(std::move(*resources));
    run.synthesizers = spec->llm.max_in_flight;
  }
  run.scheduler = std::move(*scheduler);
  run.link = ranks > 1 ? link.get() : nullptr;
  run.make_service = real_service;
  run_display display;
  run.on_progress = [&display](const sweep::coordinator& c) { display.progress(c); };
  run.on_notice = [&display](const std::string& n) { display.notice(n); };
  run.signal = &received_signal;
  auto outcome = actors::run_coordinator(std::move(run));
  display.end();
  if (!outcome) return leave(link.get(), false, report_error(outcome.error()));

  switch (outcome->how) {
    case sweep::outcome::kind::completed:
      return leave(link.get(), outcome->finalize, write_summaries(outcome->record, options.store.string()));
    case sweep::outcome::kind::interrupted:
      std::printf("stopped (%s); everything so far is in %s: continue with\n  kevolve run %s --resume %s\n",
                  outcome->interrupted_by.c_str(), options.store.c_str(), cmd.config.c_str(), options.store.c_str());
      return leave(link.get(), outcome->finalize, 128 + SIGTERM);
    case sweep::outcome::kind::failed:
      break;
  }
  const int code = report_error(outcome->failure);
  std::error_code ec;
  if (fs::exists(options.store, ec))
    std::fprintf(stderr, "what was done so far is in %s (continue with --resume once the cause is fixed)\n", options.store.c_str());
  return leave(link.get(), outcome->finalize, code);
}

}  // namespace kevolve::app

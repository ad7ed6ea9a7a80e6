#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "app/commands.h"
#include "report/status.h"
#include "spec/sweep_yaml.h"
#include "store/hdf5_store.h"

namespace kevolve::app {
namespace fs = std::filesystem;

namespace {

// The stop rules of the stored config (search.stop.*); unset rules stay 0.
search::stop_config stop_rules(const store::sweep_record& r, const std::string& store) {
  search::stop_config stop;
  auto flat = spec::flatten_sweep_yaml(r.config_yaml, store + " (its config_yaml)");
  if (!flat) return stop;
  auto number = [&](const char* key, auto& out) {
    auto it = flat->find(std::string("search.stop.") + key);
    if (it == flat->end()) return;
    try {
      out = static_cast<std::remove_reference_t<decltype(out)>>(std::stod(it->second));
    } catch (const std::exception&) {
    }
  };
  number("max_evaluations", stop.max_evaluations);
  number("max_seconds", stop.max_seconds);
  number("stagnation", stop.stagnation);
  number("target_fitness", stop.target_fitness);
  return stop;
}

}  // namespace

// A checkpoint is written to "<store>.tmp-<pid>" and renamed over the store,
// so the store is always a complete checkpoint; the temporary never is.
expected<void> refuse_temporary(const std::string& path) {
  static const std::regex tmp(R"(.*\.tmp-[0-9]+$)");
  if (std::regex_match(path, tmp))
    return make_error(errc::invalid_input, path + ": is a checkpoint still being written (or left by a killed writer); give the store itself (" +
                                               path.substr(0, path.rfind(".tmp-")) + ")");
  return {};
}

int run_status(const cli::status_command& cmd) {
  if (auto t = refuse_temporary(cmd.store); !t) return report_error(t.error());
  auto record = store::read_store(cmd.store);
  if (!record) return report_error(record.error());
  double age = -1;
  std::error_code ec;
  const auto mtime = fs::last_write_time(cmd.store, ec);
  if (!ec) age = std::chrono::duration<double>(fs::file_time_type::clock::now() - mtime).count();
  const auto status = report::compute_status(*record, stop_rules(*record, cmd.store));
  std::fputs(report::status_text(status, *record, cmd.store, age).c_str(), stdout);
  return exit_ok;
}

}  // namespace kevolve::app

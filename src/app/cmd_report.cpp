#include <cstdio>

#include "app/commands.h"
#include "report/summary.h"
#include "store/hdf5_store.h"

namespace kevolve::app {

int run_report(const cli::report_command& cmd) {
  auto record = store::read_store(cmd.store);
  if (!record) return report_error(record.error());
  std::printf("sweep %s (kevolve %s, created %s)\n\n", cmd.store.c_str(), record->kevolve_version.c_str(),
              record->created_at.c_str());
  std::fputs(report::summary_text(report::summarize(*record)).c_str(), stdout);
  return exit_ok;
}

}  // namespace kevolve::app

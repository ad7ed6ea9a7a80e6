#include <cstdio>

#include "app/commands.h"
#include "common/fs.h"
#include "report/html_report.h"
#include "report/summary.h"
#include "store/hdf5_store.h"

namespace kevolve::app {

int run_report(const cli::report_command& cmd) {
  auto record = store::read_store(cmd.store);
  if (!record) return report_error(record.error());
  const auto summary = report::summarize(*record);
  if (cmd.csv) {
    std::fputs(report::summary_csv(summary).c_str(), stdout);
  } else if (cmd.markdown) {
    std::fputs(report::summary_markdown(summary).c_str(), stdout);
  } else {
    std::printf("sweep %s (kevolve %s, created %s)\n\n", cmd.store.c_str(), record->kevolve_version.c_str(),
                record->created_at.c_str());
    std::fputs(report::summary_text(summary).c_str(), stdout);
  }
  if (!cmd.html.empty()) {
    if (auto w = write_file_atomic(cmd.html, report::html_report(*record, cmd.store)); !w) return report_error(w.error());
    // stderr, so that --csv and --markdown output stays clean on stdout
    std::fprintf(stderr, "wrote %s\n", cmd.html.c_str());
  }
  return exit_ok;
}

}  // namespace kevolve::app

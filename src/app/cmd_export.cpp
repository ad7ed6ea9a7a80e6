#include <cstdio>

#include "app/commands.h"
#include "common/fs.h"
#include "report/export.h"
#include "store/hdf5_store.h"

namespace kevolve::app {

int run_export(const cli::export_command& cmd) {
  auto record = store::read_store(cmd.store);
  if (!record) return report_error(record.error());
  report::export_filter f;
  f.min_fitness = cmd.min_fitness;
  f.op = cmd.op;
  f.backend = cmd.backend;
  auto text = report::export_jsonl(*record, cmd.format, f);
  if (!text) return report_error(text.error());
  if (cmd.out.empty()) {
    std::fputs(text->c_str(), stdout);
    return exit_ok;
  }
  if (auto w = write_file_atomic(cmd.out, *text); !w) return report_error(w.error());
  size_t lines = 0;
  for (char c : *text) lines += c == '\n';
  std::fprintf(stderr, "wrote %zu %s records to %s\n", lines, cmd.format.c_str(), cmd.out.c_str());
  return exit_ok;
}

}  // namespace kevolve::app

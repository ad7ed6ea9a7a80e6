// kevolve merge OUT STORE... and kevolve split CONFIG --by ... --out DIR:
// a sweep larger than one job, split into pieces and combined again.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "app/commands.h"
#include "common/fs.h"
#include "report/summary.h"
#include "spec/sweep_spec.h"
#include "spec/sweep_yaml.h"
#include "store/hdf5_store.h"
#include "sweep/merge.h"

namespace kevolve::app {
namespace fs = std::filesystem;

expected<void> refuse_temporary(const std::string& path);  // cmd_status.cpp

int run_merge(const cli::merge_command& cmd) {
  std::error_code ec;
  if (auto t = refuse_temporary(cmd.out); !t) return report_error(t.error());
  if (fs::exists(cmd.out, ec) && !cmd.force)
    return report_error({errc::invalid_input, cmd.out + ": already exists; choose another OUT, or give --force to replace it"});
  std::vector<sweep::merge_piece> pieces;
  for (const auto& s : cmd.stores) {
    if (auto t = refuse_temporary(s); !t) return report_error(t.error());
    auto record = store::read_store(s);
    if (!record) return report_error(record.error());
    pieces.push_back({s, std::move(*record)});
  }
  auto merged = sweep::merge_records(pieces);
  if (!merged) return report_error(merged.error());
  if (auto w = store::write_store(cmd.out, *merged); !w) return report_error(w.error());
  // What a report sees: the merged store as read back from the file.
  auto back = store::read_store(cmd.out);
  if (!back) return report_error(back.error());
  size_t unfinished = 0;
  for (const auto& t : back->tasks) unfinished += t.stop_reason.empty();
  std::printf("merged %zu stores into %s: %zu tasks%s\n\n", pieces.size(), cmd.out.c_str(), back->tasks.size(),
              unfinished ? fmt::format(" ({} not finished: resume their pieces, then merge again)", unfinished).c_str() : "");
  std::fputs(report::summary_text(report::summarize(*back)).c_str(), stdout);
  return exit_ok;
}

int run_split(const cli::split_command& cmd) {
  auto spec = spec::load_sweep(cmd.config);
  if (!spec) return report_error(spec.error());
  auto pieces = spec::split_sweep(*spec, cmd.by);
  if (!pieces) return report_error(pieces.error());
  std::error_code ec;
  fs::create_directories(cmd.out, ec);
  if (ec) return report_error({errc::io_error, cmd.out + ": cannot create the directory: " + ec.message()});
  for (const auto& e : fs::directory_iterator(cmd.out, ec))
    if (e.path().filename().string().rfind("piece-", 0) == 0)
      return report_error({errc::invalid_input, cmd.out + ": already holds pieces (" + e.path().filename().string() +
                                                    "); split into an empty directory"});
  for (size_t i = 0; i < pieces->size(); ++i) {
    const fs::path f = fs::path(cmd.out) / fmt::format("piece-{:03}.yaml", i);
    if (auto w = write_file_atomic(f, (*pieces)[i].yaml); !w) return report_error(w.error());
    std::printf("%s  %s\n", f.c_str(), (*pieces)[i].name.c_str());
  }
  return exit_ok;
}

}  // namespace kevolve::app

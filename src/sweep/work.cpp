#include "sweep/work.h"

#include "common/fs.h"
#include "common/hash.h"

namespace kevolve::sweep {

std::string operator_files_hash(const spec::operator_spec& op) {
  std::string parts;
  for (const auto& f : {op.file, op.reference, op.baseline.source, op.torch_file}) {
    if (f.empty()) continue;
    auto text = read_file(f);
    parts += f.filename().string() + ":" + (text ? content_hash({*text}) : "unreadable") + ";";
  }
  return content_hash({parts});
}

}  // namespace kevolve::sweep

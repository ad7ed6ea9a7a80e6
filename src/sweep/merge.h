// Combines the stores of a sweep split into pieces (kevolve split, the Slurm
// job array) into one store for reports and export: `kevolve merge OUT STORE...`.
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "store/sweep_record.h"

namespace kevolve::sweep {

struct merge_piece {
  std::string name;  // the store's path, for messages
  store::sweep_record record;
};

// The pieces' tasks in order (piece by piece), their rank tables with the
// sessions renumbered so that each piece's sessions follow the previous
// piece's, the earliest created_at, and a config whose sweep.operators and
// sweep.backends are the union of the pieces' (the first piece's config
// otherwise). config_hash is that config's compatibility hash when its
// operators can be found here (then `kevolve run MERGED.yaml --resume OUT`
// accepts it), else a hash of the pieces' hashes.
//
// Refused (invalid_input, naming both stores): no pieces; a task id found in
// two pieces (or twice in one); configs that differ in anything but
// sweep.operators, sweep.backends, sweep.priorities, runtime and checkpoint
// (the first differing key and both values).
expected<store::sweep_record> merge_records(const std::vector<merge_piece>& pieces);

}  // namespace kevolve::sweep

// The skills of a finished sweep's store, as knowledge documents: what
// `kevolve kb promote` writes to knowledge/skills/ and what `kevolve run
// --seed-from` hands to the synthesizers without writing anything.
#pragma once

#include <string>
#include <vector>

#include "knowledge/skills.h"
#include "store/sweep_record.h"

namespace kevolve::app {

// knowledge::distill_skills with operator classes from the catalog or from
// the operator files the store's config named. `name` is quoted as the
// evidence's source.
std::vector<knowledge::skill_doc> store_skills(const store::sweep_record& record, double min_speedup,
                                               const std::string& name);

}  // namespace kevolve::app

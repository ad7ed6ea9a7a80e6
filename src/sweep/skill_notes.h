// Skill notes of an llm sweep: when a child improves on its task's best and
// was written from another node, the scheduler has the synthesizer pool ask
// the LLM for a short note about the decisive change (synth::note_request);
// the reply, checked for length, is kept in the task's record as a
// store::skill_note with its evidence.
#pragma once

#include <optional>
#include <string>

#include "search/tree.h"
#include "spec/operator_spec.h"
#include "store/sweep_record.h"
#include "synth/synthesizer.h"

namespace kevolve::sweep {

// What the LLM is shown about `child` (an evaluated, correct node whose
// parent is not the root) and its parent: code, verdicts, per-shape timings.
synth::note_request make_note_request(const store::task_record& task, const search::tree& tree, search::node_id child,
                                      const spec::operator_spec& op, const spec::variant* variant);

// The note as the store keeps it, or nothing when no reply came back (the
// request itself, if one was made, is kept with the task's exchanges).
// `exchange`: the row of the task's `llm` that asked for it.
std::optional<store::skill_note> make_skill_note(const store::task_record& task, const search::tree& tree,
                                                 search::node_id child, const spec::operator_spec& op,
                                                 const synth::note_result& result, int64_t exchange);

}  // namespace kevolve::sweep

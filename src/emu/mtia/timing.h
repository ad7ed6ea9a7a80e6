// The timing model: replays the command traces of one launch, event by
// event, and adds time, busy cycles, bytes and stalls to a run_result.
//
// Rules (mtia.md 6.4): the scalar core issues in program order at
// issue_cycles each (looped instructions free); each engine runs its queue in
// order; a command starts at max(issue, engine free, inputs produced, output
// slot freed); compute commands take their cycle count; a DMA waits its
// request latency (overlappable with the previous transfer on the engine)
// and then moves its bytes at min(PE port, fair share of SRAM or DRAM, fair
// share of the NoC), shares recomputed at every start and finish; broadcast
// members count as 1/g of a transfer on the shared resources.
#pragma once

#include <string>
#include <vector>

#include "emu/mtia/params.h"
#include "emu/mtia/pe_state.h"
#include "emu/mtia/result.h"

namespace kevolve::emu::mtia {

// Replays pes[0..active) (every trace fully recorded); false with `error` on
// a deadlock. Adds the launch's cycles (launch cost included) and counters to `out`.
bool replay_launch(const params& p, std::vector<pe_state>& pes, int active, run_result& out, std::string* error);

}  // namespace kevolve::emu::mtia

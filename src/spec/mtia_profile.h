// Hardware profiles of the mtia_emu backend (config/hardware/<name>.yaml):
// every emulator parameter with its value, provenance and source, loaded
// strictly into the emulator's params struct.
#pragma once

#include <filesystem>

#include "common/error.h"
#include "emu/mtia/params.h"

namespace kevolve::spec {

// Every parameter of emu::mtia::param_table() is required; unknown keys,
// values outside the table's limits, non-integers where integers are needed
// and provenances other than published/derived/assumed are errors naming
// file:line and key.
expected<emu::mtia::params> load_mtia_profile(const std::filesystem::path& file);

}  // namespace kevolve::spec

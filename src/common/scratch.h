// Where this process keeps its temporary directories, and the clean-up of
// those whose process was killed before it could remove them.
#pragma once

#include <filesystem>
#include <string>

#include "common/error.h"

namespace kevolve {

// $TMPDIR/kevolve-<pid>@<host>-XXXXXX (else the system's temporary
// directory), created on first use with mode 0711, so that a sandboxed worker
// running as another user reaches its own directory inside it without
// listing the others. Removed when the process exits normally. A process
// that is killed (SIGKILL from mpirun or a batch system, the OOM killer)
// leaves it behind: creating it removes every such directory of this host
// whose process no longer exists.
expected<std::filesystem::path> process_scratch_root();

// Removes, in `dir`, the scratch roots of host `host` whose process is gone;
// returns how many. Another host's (a $TMPDIR shared between nodes) and a
// live process's are kept.
size_t remove_orphaned_scratch(const std::filesystem::path& dir, const std::string& host);

// This host's name as scratch roots spell it (characters other than letters,
// digits, '.' and '_' become '_').
std::string scratch_host_name();

}  // namespace kevolve

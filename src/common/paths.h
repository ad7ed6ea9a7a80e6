// Where kevolve finds its data (operators, ABI header, knowledge) and keeps
// its caches. Environment overrides: KEVOLVE_HOME, KEVOLVE_CACHE_DIR,
// KEVOLVE_WORKER, KEVOLVE_PYTHON.
#pragma once

#include <filesystem>
#include <string>

namespace kevolve {

// The project root holding config/, knowledge/, data/ and src/abi/.
std::filesystem::path data_root();

// $KEVOLVE_CACHE_DIR, else $XDG_CACHE_HOME/kevolve, else ~/.cache/kevolve.
std::filesystem::path cache_root();

// The kevolve-worker executable: $KEVOLVE_WORKER, else beside this binary.
std::filesystem::path worker_executable();

// The Python that runs PyTorch (references, yardsticks, import):
// $KEVOLVE_PYTHON, else the project virtualenv <data_root>/.venv (made by
// scripts/install-python.sh), else python3 found on PATH (an absolute
// path), else "python3".
std::filesystem::path python_executable();

const char* kevolve_version();

}  // namespace kevolve

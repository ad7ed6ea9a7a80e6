#include "transport/launch.h"

#include <cstdlib>

namespace kevolve::transport {
namespace {

bool read_int(const env_lookup& env, const char* name, int& out) {
  const char* v = env(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0) return false;
  out = int(x);
  return true;
}

}  // namespace

launch_info detect_launch(const env_lookup& env) {
  launch_info info;
  if (read_int(env, "OMPI_COMM_WORLD_RANK", info.rank)) {
    info.under_launcher = true;
    info.launcher = "open-mpi";
    read_int(env, "OMPI_COMM_WORLD_SIZE", info.size);
    read_int(env, "OMPI_COMM_WORLD_LOCAL_RANK", info.local_rank);
    return info;
  }
  if (read_int(env, "PMIX_RANK", info.rank) || read_int(env, "PMI_RANK", info.rank)) {
    info.under_launcher = true;
    info.launcher = env("SLURM_PROCID") ? "slurm" : "pmix";
    if (!read_int(env, "SLURM_NTASKS", info.size)) read_int(env, "PMI_SIZE", info.size);
    read_int(env, "SLURM_LOCALID", info.local_rank);
    return info;
  }
  return info;  // alone (a bare srun without PMI also lands here: one process)
}

launch_info detect_launch() {
  return detect_launch([](const char* name) { return std::getenv(name); });
}

}  // namespace kevolve::transport

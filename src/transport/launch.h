// Where this process was started: alone, or as one rank of a job that an MPI
// launcher (mpirun, srun --mpi=pmix) started. Read from the environment the
// launchers set, before MPI is touched, so that a plain `kevolve run` never
// initializes MPI.
#pragma once

#include <functional>
#include <string>

namespace kevolve::transport {

struct launch_info {
  bool under_launcher = false;  // started by mpirun/srun: MPI must be initialized
  int rank = 0;
  int size = 1;
  int local_rank = 0;           // among the ranks of this node
  std::string launcher;         // "open-mpi", "pmix", "slurm" or ""
};

using env_lookup = std::function<const char*(const char*)>;

// From OMPI_COMM_WORLD_*, PMIX_RANK, PMI_RANK/PMI_SIZE and SLURM_PROCID/
// SLURM_LOCALID/SLURM_NTASKS (the last only with a PMI of the others).
launch_info detect_launch(const env_lookup& env);
launch_info detect_launch();

}  // namespace kevolve::transport

#pragma once
// Where this process sits in a data-parallel job, read from the launcher's environment:
//   torchrun      RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
//                 TORCHELASTIC_USE_AGENT_STORE=True (its static rendezvous, the default: the
//                 agent serves the TCPStore) with TORCHELASTIC_RESTART_COUNT
//   Open MPI      OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE (+ MASTER_ADDR/PORT,
//                 e.g. mpirun -x MASTER_ADDR=node0 -x MASTER_PORT=29500)
//   Slurm (srun)  SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE (+ MASTER_ADDR,
//                 e.g. export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -1))
//
//   auto env = gpuperf::read_launch_env();   // nullopt: not launched as part of a job
//   if (env) std::cout << "rank " << env->rank << " of " << env->world_size << "\n";

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gpuperf {

/// This process's place in a data-parallel job.
struct LaunchEnv {
  std::string launcher;  ///< "torchrun", "mpi", "slurm" or "gpuperf" (its own launcher)
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;        ///< index on this machine: the GPU it uses
  int local_world_size = 1;  ///< processes on this machine; 0 when the launcher does not say
  std::string master_addr;   ///< where rank 0's TCPStore listens (or torchrun's agent's)
  int master_port = 29500;
  /// torchrun's agent serves the TCPStore at master_addr:master_port: every rank, rank 0 too,
  /// joins it as a client, under store_prefix.
  bool agent_store = false;
  /// The agent store's key prefix for this attempt ("/worker/attempt_<restart count>", as
  /// torch.distributed's env:// rendezvous uses it); empty without the agent store.
  std::string store_prefix;
  /// The launcher's name for this job, where it gives one (GPUPERF_JOB_ID, set by gpuperf's
  /// own launcher; TORCHELASTIC_RUN_ID; SLURM_JOB_ID.SLURM_STEP_ID; Open MPI's job id): a
  /// rank of another job that reaches this job's store is refused. Empty: unknown.
  std::string job_id;
};

/// Reads a variable; nullptr when unset. The default reads the process environment.
using EnvironmentReader = std::function<const char*(const char* name)>;

/// The launch environment, or nullopt when no launcher variable says this process is one of
/// several (a single process, or a one-task Slurm job). Throws ConfigError naming the variables
/// when they are missing, malformed or contradict each other.
[[nodiscard]] std::optional<LaunchEnv> read_launch_env(const EnvironmentReader& getenv = {});

}  // namespace gpuperf

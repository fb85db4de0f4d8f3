#pragma once
// A data-parallel training benchmark: every rank of the job runs the same TrainingRun on its own
// device and its own synthetic data, gradients averaged through DataParallelSync; the record
// keeps the per-GPU figures and adds the job's (record.distributed).
//
//   // started by torchrun with 2 processes per node (or mpirun, srun, or a gpuperf program)
//   auto env = gpuperf::read_launch_env();
//   gpuperf::TrainingRun run;
//   run.model = "resnet50";
//   gpuperf::RunRecord record = gpuperf::run_data_parallel_training(run, *env);
//   if (env->rank == 0) gpuperf::write_json_file(record, "dp.json");

#include <limits>

#include "gpuperf/distributed/data_parallel.h"
#include "gpuperf/comm/launch_env.h"
#include "gpuperf/comm/process_group.h"
#include "gpuperf/train/training_run.h"

namespace gpuperf {

/// How the ranks cooperate.
struct DataParallelRun {
  ProcessGroupOptions group;  ///< backend and timeout
  DataParallelOptions sync;   ///< bucketing and overlap
  /// The single-process throughput (samples/s per GPU) that scaling is judged against; NaN: none
  /// given, no scaling efficiency.
  double baseline_throughput = std::numeric_limits<double>::quiet_NaN();

  /// Throws ConfigError naming the first bad field (the group's, the sync's, a baseline that is
  /// neither NaN nor finite and > 0).
  void validate() const;
};

/// Throws ConfigError for a run that no rank could run: a bad field of `run` or `options`,
/// adaptive stopping, a device other than auto, cuda or cpu. What a launcher checks once before
/// it starts the ranks; each rank checks it again.
void check_data_parallel_run(const TrainingRun& run, const DataParallelRun& options);

/// Runs `run` as this rank of the job `env` describes and returns the record: per-GPU
/// throughput in record.throughput (this rank's), the job's in record.distributed (the same on
/// every rank). `run.device` auto or cuda means cuda:LOCAL_RANK when CUDA is present. ConfigError
/// before anything runs for options a data-parallel run cannot take (adaptive stopping, an
/// explicit cuda:N, more local ranks than GPUs).
[[nodiscard]] RunRecord run_data_parallel_training(const TrainingRun& run, const LaunchEnv& env,
                                                   const DataParallelRun& options = {});

}  // namespace gpuperf

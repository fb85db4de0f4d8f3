#pragma once
// What the specs and advise tests share (torch-free): the shipped datasheet database and a
// ResNet-50 training record on an H200 at a given median rate.
#include <string>

#include "gpuperf/results/run_record.h"
#include "gpuperf/specs/specs.h"
#include "gpuperf/timing/statistics.h"

namespace gpuperf::testing {

/// libgpuperf/data/gpu_specs.json, loaded once.
inline const SpecDatabase& shipped_specs() {
  static const SpecDatabase db =
      SpecDatabase::load_file(std::string(GPUPERF_TEST_DATA_DIR) + "/gpu_specs.json");
  return db;
}

/// A ResNet-50 fp16 training record of batch 256 on an H200 whose windows ran at median x 0.99,
/// median and median x 1.01 images/s.
inline RunRecord resnet_run(double median) {
  RunRecord r;
  r.device.name = "NVIDIA H200";
  r.device.sm_count = 132;
  r.device.memory_bytes = 150e9;
  r.config.model = "resnet50";
  r.config.workload = "train";
  r.config.precision = "fp16";
  r.config.batch_size = 256;
  r.throughput = summarize({median * 0.99, median, median * 1.01});
  r.window_throughput = {median * 0.99, median, median * 1.01};
  r.overall_throughput = median;
  return r;
}

}  // namespace gpuperf::testing

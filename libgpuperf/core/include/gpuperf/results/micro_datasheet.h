#pragma once
// Microbenchmark results beside the datasheet: which peak each rate compares with.

#include <string>
#include <vector>

#include "gpuperf/results/micro_result.h"

namespace gpuperf {

struct GpuSpec;

/// Sets each result's datasheet figure and percentage from `spec` (null: clears them and keeps
/// the report's datasheet fields empty). GEMM rates compare with the dense peak of their dtype
/// (fp64 with the FP64 tensor-core peak where the datasheet has one: cuBLAS uses DMMA); device
/// memory with the memory bandwidth; host transfers with PCIe x16 per direction; P2P copies and
/// collective bus bandwidths with the link's per-direction figure (half the datasheet's
/// bidirectional total), bidirectional copies with the total; over PCIe (no pair on NVLink),
/// with PCIe x16 per direction.
void apply_datasheet(MicroReport& report, const GpuSpec* spec);

/// Header of the seeds' table: GPU | FP32 | TF32 | FP16 | BF16 | INT8 | FP8 | memory GB/s | link
/// GB/s.
[[nodiscard]] const std::vector<std::string>& seeds_table_columns();
/// One row of the seeds' table for `report`: each cell "measured / datasheet" ("-" where a side
/// is missing, "n/a" where the datasheet lists no such path). Memory is the device copy; link is
/// the fastest one-way P2P copy against the link's per-direction datasheet figure.
[[nodiscard]] std::vector<std::string> seeds_table_row(const MicroReport& report);

}  // namespace gpuperf

#pragma once
// Microbenchmark results as plain data and their JSON. Torch-free: the measuring side is
// gpuperf/micro/micro.h. Beside it, by job: results/micro_parse.h (option text),
// results/micro_math.h (FLOPs, bytes, rates), results/micro_datasheet.h (% of the datasheet) and
// report/micro_markdown.h (the seeds' table and every measurement).
//
//   gpuperf::MicroReport report = gpuperf::run_micro(run);   // gpuperf/micro/micro_run.h
//   gpuperf::apply_datasheet(report, match.spec);           // results/micro_datasheet.h
//   gpuperf::write_markdown(std::cout, report);             // report/micro_markdown.h
//   gpuperf::write_json_file(report, "micro.json");

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/results/run_record.h"
#include "gpuperf/timing/statistics.h"

namespace gpuperf {

/// Data types of the GEMM benchmark. kTf32 is fp32 storage with TF32 tensor-core math allowed;
/// kFp32 forbids it. kInt8 accumulates in int32 (_int_mm); kFp8 is e4m3 with bf16 output.
enum class GemmDtype { kFp64, kFp32, kTf32, kFp16, kBf16, kInt8, kFp8 };

/// Every GemmDtype, in report order.
[[nodiscard]] const std::vector<GemmDtype>& all_gemm_dtypes();
/// "fp64", "fp32", "tf32", "fp16", "bf16", "int8", "fp8".
[[nodiscard]] std::string to_string(GemmDtype dtype);
/// Shape of one GEMM: C[M,N] = A[M,K] * B[K,N].
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  /// "MxNxK".
  [[nodiscard]] std::string str() const;
};

/// The memory operations timed. Device ops run on the GPU's memory, host ops on host memory (the
/// CPU variant), transfers cross PCIe (or the CPU-GPU link) from or to pinned or pageable memory.
enum class MemoryOp {
  kDeviceCopy,
  kDeviceRead,
  kDeviceWrite,
  kHostToDevicePinned,
  kDeviceToHostPinned,
  kHostToDevicePageable,
  kDeviceToHostPageable,
  kHostCopy,
  kHostRead,
  kHostWrite,
};
/// "device-copy", "device-read", "device-write", "h2d-pinned", "d2h-pinned", "h2d-pageable",
/// "d2h-pageable", "host-copy", "host-read", "host-write".
[[nodiscard]] std::string to_string(MemoryOp op);
/// One measurement: what ran, how often, the rate over timed windows and the datasheet beside it.
struct MicroResult {
  std::string name;             ///< stable key: "gemm/bf16", "memory/device-copy", "p2p/copy/0->1",
                                ///< "collective/all-reduce/1MiB"
  std::string category;         ///< "gemm", "memory", "p2p" or "collective"
  std::string variant;          ///< the dtype ("bf16"), the memory op ("h2d-pinned"), the P2P kind
                                ///< ("copy", "bidirectional", "latency") or the collective
  std::string shape;            ///< "8192x8192x8192" (GEMM) or the buffer size ("1024 MiB")
  double buffer_bytes = 0;      ///< memory: size of one buffer; GEMM: bytes of one operand set
  double work_per_call = 0;     ///< FLOPs (OPs for int8) or bytes counted per call
  std::string unit;             ///< "TFLOP/s", "TOP/s" or "GB/s"
  double unit_scale = 1;        ///< base units per unit: 1e12 or 1e9
  Summary summary;              ///< over windows, in `unit`
  std::vector<double> windows;  ///< rate of each timed window, in `unit`
  int warmup_calls = 0;
  int calls_per_window = 0;
  int operand_sets = 0;       ///< GEMM input pairs rotated so that consecutive calls miss in L2
  std::string datasheet_key;  ///< the spec field compared with: "bf16", "memory_bandwidth", ...
  double datasheet = kNotAvailable;  ///< datasheet figure in `unit`; NaN unknown, 0 "none"
  double percent_of_datasheet = kNotAvailable;
  std::string status = "ok";  ///< "ok" or "unsupported: <reason>"
  std::string note;           ///< how it was run (op, layout) or why a figure is missing
  /// Further figures of the measurement, in order: a collective's "algbw_gb_s", "time_us",
  /// "bus_factor" and "ranks" beside its bus bandwidth (the value).
  std::vector<std::pair<std::string, double>> figures;

  /// True when the measurement ran (status "ok").
  [[nodiscard]] bool ok() const { return status == "ok"; }
  /// The median rate in `unit`; NaN when it did not run.
  [[nodiscard]] double value() const { return ok() ? summary.median : kNotAvailable; }
  /// The figure named `key` (see figures), or NaN.
  [[nodiscard]] double figure(const std::string& key) const;
};

/// One ordered pair of GPUs of a P2P measurement, and how they are connected.
struct PeerLink {
  int src = 0;
  int dst = 0;
  bool p2p_access = false;       ///< CUDA peer access from src to dst (enabled for the copies)
  std::string type = "unknown";  ///< "NVLink", "NVLink (NVSwitch)", "PCIe", "unknown" (NVML)
  int nvlinks = 0;               ///< direct NVLinks between the two
  std::string detail;            ///< "NVLink x18, direct", "PCIe, through a host bridge (PHB)"
};

/// All microbenchmarks of one run, with the machine they ran on.
struct MicroReport {
  static constexpr const char* kSchema = "gpuperf.micro/1";
  std::string schema = kSchema;
  std::string timestamp_utc;
  std::string command;
  DeviceFingerprint device;
  std::string variant;         ///< "gpu", or "cpu" (the CPU variant: host memory, CPU GEMMs)
  std::string timer;           ///< "cuda-event" or "steady-clock"
  std::string datasheet_id;    ///< spec entry compared with; empty when none matched
  std::string datasheet_name;  ///< its display name
  double datasheet_link_gb_s = kNotAvailable;  ///< NVLink (or other) total, per the datasheet
  std::vector<MicroResult> results;
  std::vector<PeerLink> peer_links;  ///< GPU pairs of the P2P measurements (empty: none ran)
  std::string interconnect;  ///< what the collectives ran over: "NCCL, 2 GPUs", "CPU, Gloo ..."
  std::vector<std::string> warnings;

  /// The result with this name, or null.
  [[nodiscard]] const MicroResult* find(const std::string& name) const;
  /// The device's name as tables print it, "(CPU variant)" after a CPU report's.
  [[nodiscard]] std::string label() const;
};

/// The report as JSON text (indented; NaN as null).
[[nodiscard]] std::string to_json(const MicroReport& report);

}  // namespace gpuperf

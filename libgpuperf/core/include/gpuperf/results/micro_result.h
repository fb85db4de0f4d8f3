#pragma once
// Microbenchmark results as plain data, the arithmetic that turns calls and seconds into rates,
// and the reporters (Markdown, JSON). Torch-free: the measuring side is gpuperf/micro/micro.h.
//
//   gpuperf::MicroReport report = gpuperf::run_micro(run);   // gpuperf/micro/micro_run.h
//   gpuperf::apply_datasheet(report, match.spec);           // % of the dense datasheet peak
//   gpuperf::write_markdown(std::cout, report);       // seeds' table + every measurement
//   gpuperf::write_json_file(report, "micro.json");

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/results/run_record.h"
#include "gpuperf/timing/statistics.h"

namespace gpuperf {

struct GpuSpec;

/// Data types of the GEMM benchmark. kTf32 is fp32 storage with TF32 tensor-core math allowed;
/// kFp32 forbids it. kInt8 accumulates in int32 (_int_mm); kFp8 is e4m3 with bf16 output.
enum class GemmDtype { kFp64, kFp32, kTf32, kFp16, kBf16, kInt8, kFp8 };

/// Every GemmDtype, in report order.
[[nodiscard]] const std::vector<GemmDtype>& all_gemm_dtypes();
/// "fp64", "fp32", "tf32", "fp16", "bf16", "int8", "fp8".
[[nodiscard]] std::string to_string(GemmDtype dtype);
/// Parses one name (case-insensitive). Throws ConfigError naming `option` and the value.
[[nodiscard]] GemmDtype parse_gemm_dtype(const std::string& text, const std::string& option);
/// Parses a comma-separated list ("fp32,bf16"); duplicates collapse, order follows the list.
/// Throws ConfigError naming `option` and the bad item (an empty list or item is bad too).
[[nodiscard]] std::vector<GemmDtype> parse_gemm_dtypes(const std::string& list,
                                                       const std::string& option);

/// Shape of one GEMM: C[M,N] = A[M,K] * B[K,N].
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  /// "MxNxK".
  [[nodiscard]] std::string str() const;
};
/// Parses "N" (square) or "MxNxK". Throws ConfigError naming `option` and the value.
[[nodiscard]] GemmShape parse_gemm_shape(const std::string& text, const std::string& option);

/// Floating-point (or integer) operations of one GEMM: 2*M*N*K, a multiply and an add per term.
[[nodiscard]] double gemm_flops(const GemmShape& shape);

/// How many operand sets to rotate through so that each call finds its inputs outside the cache:
/// enough that together they exceed `cache_multiple` x `cache_bytes`, and at least `min_sets`.
/// Throws ConfigError when set_bytes is not positive or min_sets < 1.
[[nodiscard]] int rotation_sets(double set_bytes, double cache_bytes, double cache_multiple,
                                int min_sets);

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
/// Bytes one call moves through memory for a buffer of `buffer_bytes`: a copy reads the source
/// and writes the destination (2x); a read, a write or a transfer counts the buffer once.
[[nodiscard]] double memory_bytes_per_call(MemoryOp op, double buffer_bytes);

/// work_per_call * calls / seconds, in the unit `unit_scale` (1e12 for TFLOP/s, 1e9 for GB/s).
/// Throws ConfigError when seconds is not positive.
[[nodiscard]] double rate(double work_per_call, std::int64_t calls, double seconds,
                          double unit_scale);

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
};

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
/// The seeds' table for one or more reports (one row each), as Markdown.
void write_seeds_table_markdown(std::ostream& out, const std::vector<MicroReport>& reports);
/// The seeds' table for `report` followed by a table of every measurement, as Markdown.
void write_markdown(std::ostream& out, const MicroReport& report);

/// The report as JSON text (indented; NaN as null).
[[nodiscard]] std::string to_json(const MicroReport& report);

}  // namespace gpuperf

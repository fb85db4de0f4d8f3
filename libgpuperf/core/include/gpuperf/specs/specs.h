#pragma once
// The GPU datasheet database: dense peaks per data type, memory, bandwidth, links, power and
// price, each entry with its source. Shipped as data/gpu_specs.json and extensible by user files.
//
//   auto db = gpuperf::SpecDatabase::load_default();           // GPUPERF_SPECS, build, install
//   db.merge_file("my_gpus.json");                             // add or override entries
//   auto match = db.match_device("NVIDIA H200", 132, 150e9);   // -> "h200-sxm-141gb"
//   if (match.spec) std::cout << match.spec->peak("bf16") << " FLOP/s\n";
//   else std::cout << match.reason << "\n";                   // "no datasheet entry for ..."

#include <optional>
#include <string>
#include <vector>

#include "gpuperf/base/fingerprint.h"

namespace gpuperf {

/// Data types with a datasheet peak, in the order reports list them. fp16 and bf16 are tensor
/// rates with FP32 accumulation; fp16_acc16 / fp8_acc16 accumulate in FP16 (GeForce: 2x rate).
inline const std::vector<std::string>& peak_keys() {
  static const std::vector<std::string> keys = {"fp64", "fp64_tensor", "fp32", "tf32",      "fp16",
                                                "bf16", "fp16_acc16",  "fp8",  "fp8_acc16", "int8"};
  return keys;
}

/// Schema tag of a spec file.
inline constexpr const char* kSpecSchema = "gpuperf.specs/1";

/// One GPU's datasheet. Numbers are in base units; NaN = not confirmed; a peak or link of 0
/// means the datasheet lists no such path ("none").
struct GpuSpec {
  std::string id;                    ///< stable key, e.g. "h200-sxm-141gb"
  std::string name;                  ///< display name, e.g. "H200 SXM 141GB"
  std::string vendor;                ///< "NVIDIA", "AMD"
  std::string segment;               ///< "datacenter" or "geforce"
  std::vector<std::string> match;    ///< token sets; one must all appear in a device name
  std::vector<std::string> exclude;  ///< tokens that rule a device name out
  bool reference_only = false;       ///< listed for comparison; gpuperf does not measure it
  std::string architecture;
  std::string compute_capability;  ///< "9.0"; empty when not CUDA
  double sm_count = 0;             ///< SMs (compute units for AMD); NaN when unknown
  double cuda_cores = 0;
  double tensor_cores = 0;
  double memory_bytes = 0;
  std::string memory_type;
  double memory_bandwidth_bytes_per_s = 0;
  double l2_bytes = 0;
  std::string link_name;        ///< "NVLink4", "NVLink bridge", "none"
  double link_bytes_per_s = 0;  ///< bidirectional total, as NVIDIA quotes it; 0 = none
  std::string pcie;             ///< "Gen3", "Gen4", "Gen5"
  double tdp_watts = 0;
  double price_usd = 0;  ///< launch price; NaN when not confirmed
  std::string price_note;
  std::vector<std::pair<std::string, double>> peaks;  ///< (key, FLOP/s or OP/s), dense
  std::vector<std::string> approximate;  ///< fields the sources give as "~", derived or a range
  std::string source;

  /// Dense peak for `key` in FLOP/s (OP/s for int8): NaN unknown, 0 no such path.
  [[nodiscard]] double peak(const std::string& key) const;
  /// PCIe x16 bandwidth per direction in bytes/s from `pcie` (Gen3 16, Gen4 32, Gen5 64 GB/s).
  [[nodiscard]] double pcie_bytes_per_s_per_direction() const;
  /// True when `field` (e.g. "peak_tflops.fp64") is marked approximate.
  [[nodiscard]] bool is_approximate(const std::string& field) const;
};

/// The outcome of matching a running device against the database.
struct SpecMatch {
  const GpuSpec* spec = nullptr;  ///< null: no datasheet entry
  std::string reason;             ///< why it matched, or why nothing did
};

/// A set of GpuSpec entries, loaded from one file and optionally extended by others.
class SpecDatabase {
 public:
  /// An empty database.
  SpecDatabase() = default;

  /// Parses spec JSON text. Throws IoError "<origin>: field '<path>' <problem>" when it is
  /// malformed (the database is then unchanged).
  [[nodiscard]] static SpecDatabase from_json(const std::string& text, const std::string& origin);
  /// Loads a spec file. Throws IoError, naming the file, when it is unreadable or malformed.
  [[nodiscard]] static SpecDatabase load_file(const std::string& path);
  /// Loads the shipped database found by default_specs_path(explicit_path).
  [[nodiscard]] static SpecDatabase load_default(const std::string& explicit_path = "");

  /// Adds entries of another spec file; an entry whose id exists patches only the fields it
  /// gives (JSON merge patch), so a user file can correct one price or add one GPU. A malformed
  /// file throws IoError naming `origin` and leaves the database as it was.
  void merge_json(const std::string& text, const std::string& origin);
  /// merge_json on a file's contents.
  void merge_file(const std::string& path);

  /// All entries, in file order (new ids from merged files last).
  [[nodiscard]] const std::vector<GpuSpec>& gpus() const { return gpus_; }
  /// The entry with this id, or null.
  [[nodiscard]] const GpuSpec* find_id(const std::string& id) const;
  /// Resolves a user-given GPU name: id, display name (case-insensitive) or a unique
  /// device-name match. Throws ConfigError naming `what` and listing known ids otherwise.
  [[nodiscard]] const GpuSpec& resolve(const std::string& name, const std::string& what) const;
  /// Matches a running device by name tokens, then checks SM count and memory size (within
  /// 15%: drivers report usable memory in bytes, datasheets marketing GB). 0 or NaN skips a check.
  [[nodiscard]] SpecMatch match_device(const std::string& device_name, double sm_count,
                                       double memory_bytes) const;
  /// The files the entries came from, in load order.
  [[nodiscard]] const std::vector<std::string>& origins() const { return origins_; }

 private:
  void rebuild();

  std::vector<std::string> raw_;  // per entry: its merged JSON text, so patches can apply
  std::vector<GpuSpec> gpus_;
  std::vector<std::string> origins_;
};

/// Where the shipped spec file is: `explicit_path` if given, else $GPUPERF_SPECS, else the build
/// tree, else the install tree (<datadir>/gpuperf), else <exe>/../share/gpuperf. Throws IoError
/// listing the places tried when none exists.
[[nodiscard]] std::string default_specs_path(const std::string& explicit_path = "");

/// The datasheet entry of the GPU a measurement ran on, from the database at `specs_path` ("":
/// the shipped one): the one place every run type matches its device. nullopt for a CPU, for a
/// GPU the database does not know and for a database that cannot be read, the reason for the
/// last two appended to `warnings`: figures that need a datasheet are lost, never the run.
[[nodiscard]] std::optional<GpuSpec> datasheet_entry(const DeviceFingerprint& device,
                                                     const std::string& specs_path,
                                                     std::vector<std::string>& warnings);

/// Finds a data file shipped with gpuperf (e.g. "published_results.json") in the build tree,
/// the install tree or beside the executable; throws IoError listing the places tried.
[[nodiscard]] std::string find_data_file(const std::string& file_name);

}  // namespace gpuperf

// The GPU datasheet database: parsing, merging user files, locating the shipped file, and
// matching a running device. Torch-free.
#include "gpuperf/specs/specs.h"

#include "gpuperf/base/files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "base/json.h"

namespace gpuperf {
namespace {

using detail::JsonReader;
using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Upper-cases and splits on anything that is not a letter or digit, so "NVIDIA A100-SXM4-80GB"
// and the pattern "a100 sxm4" compare token by token ("L4" must not match "L40S").
std::vector<std::string> tokens(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      out.push_back(current);
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string executable_dir() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  std::string path(buffer, static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::vector<std::string> data_dirs() {
  std::vector<std::string> dirs;
#ifdef GPUPERF_BUILD_DATA_DIR
  dirs.emplace_back(GPUPERF_BUILD_DATA_DIR);
#endif
#ifdef GPUPERF_INSTALL_DATA_DIR
  dirs.emplace_back(GPUPERF_INSTALL_DATA_DIR);
#endif
  // A relocated install: <prefix>/bin/program next to <prefix>/share/gpuperf.
  const std::string exe = executable_dir();
  if (!exe.empty()) dirs.push_back(exe + "/../share/gpuperf");
  return dirs;
}

GpuSpec parse_entry(const json& entry, const std::string& origin, const std::string& path) {
  const JsonReader f(entry, origin, path);
  GpuSpec s;
  s.id = f.string("id");
  if (s.id.empty()) f.fail(f.field("id"), "is empty");
  s.name = f.string("name");
  if (s.name.empty()) f.fail(f.field("name"), "is empty");
  s.vendor = f.optional_string("vendor");
  s.segment = f.optional_string("segment");
  s.match = f.strings("match", false);
  for (const auto& m : s.match) {
    if (tokens(m).empty()) f.fail(f.field("match"), "holds a pattern with no letters or digits");
  }
  s.exclude = f.strings("exclude", false);
  s.reference_only = f.optional_bool("reference_only");
  s.architecture = f.optional_string("architecture");
  s.compute_capability = f.optional_string("compute_capability");
  s.sm_count = f.figure("sm_count", false);
  s.cuda_cores = f.figure("cuda_cores", false);
  s.tensor_cores = f.figure("tensor_cores", false);
  s.memory_bytes = f.figure("memory_gb", true) * 1e9;
  s.memory_type = f.optional_string("memory_type");
  s.memory_bandwidth_bytes_per_s = f.figure("bandwidth_gb_s", true) * 1e9;
  // Every GPU has memory and bandwidth: unknown (null) is allowed, "none" or 0 is not.
  if (s.memory_bytes == 0) f.fail(f.field("memory_gb"), "is 0: a GPU has memory");
  if (s.memory_bandwidth_bytes_per_s == 0) {
    f.fail(f.field("bandwidth_gb_s"), "is 0: a GPU's memory has bandwidth");
  }
  s.l2_bytes = f.figure("l2_mb", false) * 1e6;
  s.link_name = f.optional_string("link_name");
  s.link_bytes_per_s = f.figure("link_gb_s", false) * 1e9;
  s.pcie = f.optional_string("pcie");
  if (!s.pcie.empty() && s.pcie != "Gen3" && s.pcie != "Gen4" && s.pcie != "Gen5") {
    f.fail(f.field("pcie"), "is '" + s.pcie + "', expected Gen3, Gen4 or Gen5");
  }
  s.tdp_watts = f.figure("tdp_w", false);
  s.price_usd = f.figure("price_usd", false);
  s.price_note = f.optional_string("price_note");
  const JsonReader peaks = f.child("peak_tflops");
  for (const auto& [key, value] : peaks.object().items()) {
    const auto& known = peak_keys();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      peaks.fail(peaks.field(key),
                 "is not a known data type (known: fp64, fp64_tensor, fp32, tf32, fp16, bf16, "
                 "fp16_acc16, fp8, fp8_acc16, int8)");
    }
    s.peaks.emplace_back(key, peaks.figure_value(value, key) * 1e12);
  }
  s.approximate = f.strings("approximate", false);
  s.source = f.string("source");
  if (s.source.empty()) f.fail(f.field("source"), "is empty: every entry needs a source note");
  return s;
}

// Returns the entries array of a spec document after checking its schema tag.
const json& entries_of(const json& doc, const std::string& origin) {
  const JsonReader top(doc, origin, "");
  top.expect_schema(kSpecSchema);
  const json& gpus = top.at("gpus");
  if (!gpus.is_array()) top.fail(top.field("gpus"), "is not an array");
  return gpus;
}

}  // namespace

double GpuSpec::peak(const std::string& key) const {
  for (const auto& [k, v] : peaks) {
    if (k == key) return v;
  }
  return kNaN;
}

double GpuSpec::pcie_bytes_per_s_per_direction() const {
  if (pcie == "Gen3") return 16e9;
  if (pcie == "Gen4") return 32e9;
  if (pcie == "Gen5") return 64e9;
  return kNaN;
}

bool GpuSpec::is_approximate(const std::string& field) const {
  return std::find(approximate.begin(), approximate.end(), field) != approximate.end();
}

SpecDatabase SpecDatabase::from_json(const std::string& text, const std::string& origin) {
  SpecDatabase db;
  db.merge_json(text, origin);
  // The entries are checked by now: only the reader's message is wanted.
  if (db.gpus_.empty()) JsonReader(json::object(), origin, "").fail("gpus", "is empty");
  return db;
}

SpecDatabase SpecDatabase::load_file(const std::string& path) {
  return from_json(read_text_file(path), path);
}

SpecDatabase SpecDatabase::load_default(const std::string& explicit_path) {
  return load_file(default_specs_path(explicit_path));
}

void SpecDatabase::merge_json(const std::string& text, const std::string& origin) {
  const json doc = detail::parse_json(text, origin);
  const json& entries = entries_of(doc, origin);
  // Work on copies so that a bad file leaves the database as it was.
  std::vector<std::string> raw = raw_;
  std::vector<GpuSpec> parsed = gpus_;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string path = "gpus[" + std::to_string(i) + "]";
    const json& entry = entries[i];
    const JsonReader f(entry, origin, path);
    const std::string id = f.string("id");
    if (!seen.insert(id).second) f.fail(f.field("id"), "'" + id + "' appears twice in this file");
    auto existing =
        std::find_if(parsed.begin(), parsed.end(), [&](const GpuSpec& s) { return s.id == id; });
    if (existing == parsed.end()) {
      std::string named = path;
      named += " (";
      named += id;
      named += ")";
      parsed.push_back(parse_entry(entry, origin, named));
      raw.push_back(entry.dump());
    } else {
      const auto index = static_cast<std::size_t>(existing - parsed.begin());
      json merged = json::parse(raw[index]);
      merged.merge_patch(entry);
      std::string named = path;
      named += " (";
      named += id;
      named += ", merged)";
      *existing = parse_entry(merged, origin, named);
      raw[index] = merged.dump();
    }
  }
  raw_ = std::move(raw);
  gpus_ = std::move(parsed);
  origins_.push_back(origin);
}

void SpecDatabase::merge_file(const std::string& path) { merge_json(read_text_file(path), path); }

const GpuSpec* SpecDatabase::find_id(const std::string& id) const {
  for (const auto& s : gpus_) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

const GpuSpec& SpecDatabase::resolve(const std::string& name, const std::string& what) const {
  if (const GpuSpec* s = find_id(lower(name))) return *s;
  for (const auto& s : gpus_) {
    if (lower(s.name) == lower(name)) return s;
  }
  const SpecMatch m = match_device(name, 0, 0);
  if (m.spec != nullptr) return *m.spec;
  std::string known;
  for (const auto& s : gpus_) known += (known.empty() ? "" : ", ") + s.id;
  throw ConfigError(what,
                    "unknown GPU '" + name + "' (" + m.reason + "; known ids: " + known + ")");
}

SpecMatch SpecDatabase::match_device(const std::string& device_name, double sm_count,
                                     double memory_bytes) const {
  const std::vector<std::string> name_tokens = tokens(device_name);
  auto has_token = [&](const std::string& t) {
    return std::find(name_tokens.begin(), name_tokens.end(), t) != name_tokens.end();
  };
  struct Candidate {
    const GpuSpec* spec;
    std::size_t score;  // tokens in the best matching pattern: more specific patterns win
    double memory_error;
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> rejected;
  for (const auto& spec : gpus_) {
    std::size_t best = 0;
    for (const auto& pattern : spec.match) {
      const auto wanted = tokens(pattern);
      if (std::all_of(wanted.begin(), wanted.end(), has_token))
        best = std::max(best, wanted.size());
    }
    if (best == 0) continue;
    const bool excluded = std::any_of(spec.exclude.begin(), spec.exclude.end(), [&](const auto& e) {
      const auto ex = tokens(e);
      return !ex.empty() && std::all_of(ex.begin(), ex.end(), has_token);
    });
    if (excluded) {
      rejected.push_back(spec.id + ": name has an excluded word");
      continue;
    }
    if (sm_count > 0 && spec.sm_count > 0 && std::lround(sm_count) != std::lround(spec.sm_count)) {
      std::ostringstream why;
      why << spec.id << ": " << sm_count << " SMs, datasheet " << spec.sm_count;
      rejected.push_back(why.str());
      continue;
    }
    double memory_error = 0;
    if (memory_bytes > 0 && spec.memory_bytes > 0) {
      memory_error = std::abs(memory_bytes - spec.memory_bytes) / spec.memory_bytes;
      if (memory_error > 0.15) {
        rejected.push_back(spec.id + ": memory " + format_gb(memory_bytes) + ", datasheet " +
                           format_gb(spec.memory_bytes));
        continue;
      }
    }
    candidates.push_back({&spec, best, memory_error});
  }
  if (candidates.empty()) {
    std::string reason = "no datasheet entry for '" + device_name + "'";
    if (!rejected.empty()) {
      reason += " (names matched but ";
      for (std::size_t i = 0; i < rejected.size(); ++i) reason += (i ? "; " : "") + rejected[i];
      reason += ")";
    }
    return {nullptr, reason};
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.memory_error < b.memory_error;
  });
  const Candidate& best = candidates.front();
  std::ostringstream reason;
  reason << "'" << device_name << "' matched datasheet entry " << best.spec->id << " by name";
  if (sm_count > 0 && best.spec->sm_count > 0) reason << ", " << sm_count << " SMs";
  if (memory_bytes > 0)
    reason << ", " << format_gb(memory_bytes) << " ~ " << format_gb(best.spec->memory_bytes);
  if (candidates.size() > 1) {
    const Candidate& second = candidates[1];
    if (second.score == best.score && second.memory_error == best.memory_error) {
      reason << " (ambiguous with " << second.spec->id << ": first in the file wins)";
    }
  }
  return {best.spec, reason.str()};
}

std::string default_specs_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) {
    if (!file_exists(explicit_path)) throw IoError("spec file '" + explicit_path + "' not found");
    return explicit_path;
  }
  if (const char* env = std::getenv("GPUPERF_SPECS"); env != nullptr && *env != '\0') {
    if (!file_exists(env)) {
      throw IoError(std::string("GPUPERF_SPECS: spec file '") + env + "' not found");
    }
    return env;
  }
  return find_data_file("gpu_specs.json");
}

std::string find_data_file(const std::string& file_name) {
  std::string tried;
  for (const auto& dir : data_dirs()) {
    std::string path = dir;
    path += '/';
    path += file_name;
    if (file_exists(path)) return path;
    tried += (tried.empty() ? "" : ", ") + path;
  }
  throw IoError("data file '" + file_name + "' not found (tried " + tried +
                "); pass its path explicitly");
}

std::optional<GpuSpec> datasheet_entry(const DeviceFingerprint& device,
                                       const std::string& specs_path,
                                       std::vector<std::string>& warnings) {
  if (device.kind != "cuda") return std::nullopt;
  try {
    const SpecDatabase db = SpecDatabase::load_default(specs_path);
    const SpecMatch match = db.match_device(device.name, device.sm_count, device.memory_bytes);
    if (match.spec == nullptr) {
      warnings.push_back(match.reason);
      return std::nullopt;
    }
    return *match.spec;
  } catch (const Error& e) {
    warnings.push_back(std::string("datasheet figures unavailable: ") + e.what());
    return std::nullopt;
  }
}

}  // namespace gpuperf

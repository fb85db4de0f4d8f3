#pragma once
// Typed errors. Programs map them to exit codes (apps/support/program.h): ConfigError and
// IoError (bad usage or input) -> 2, OutOfMemoryError -> 3, any other -> 1.

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "gpuperf/base/format.h"

namespace gpuperf {

/// Base of every error gpuperf throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad setting, value or input. An error about a setting names it as the library spells it
/// (`field()`, e.g. "TrainingRun::batch_size") and says what is wrong (`problem()`); what()
/// reads "TrainingRun::batch_size: must be > 0, got 0". A problem may name another setting as
/// "{min_windows}": what() writes it as `min_windows`. The programs print the flag that sets the
/// field instead (apps/support/program.cpp).
class ConfigError : public Error {
 public:
  /// An error that names no single setting (a file's contents, a combination of settings).
  explicit ConfigError(const std::string& message) : Error(message), problem_(message) {}
  /// An error about the setting `field` ("batch_size" or "Owner::field").
  ConfigError(std::string field, std::string problem)
      : ConfigError(std::move(field), std::string(), std::move(problem)) {}
  /// An error about the value `value` of the setting `field`: what() reads "<field> <value>:
  /// <problem>" ("device cuda:9: only 1 CUDA device(s)").
  ConfigError(std::string field, std::string value, std::string problem)
      : Error(render(field, value, problem, [](const std::string& name) { return name; })),
        field_(std::move(field)),
        value_(std::move(value)),
        problem_(std::move(problem)) {}

  /// The setting, "Owner::field" or "field"; empty when the error names none.
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  /// The value the error is about, when it names one ("cuda:9"); often empty.
  [[nodiscard]] const std::string& value() const noexcept { return value_; }
  /// What is wrong, with other settings written "{name}"; the whole message without a field.
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

  /// "<field>[ <value>]: <problem>" with every setting (the field and each "{name}" in the
  /// problem) written by `spell`, which gets the field as named ("TrainingRun::batch_size", or a
  /// bare "min_windows" from the problem).
  template <typename Spell>
  static std::string render(const std::string& field, const std::string& value,
                            const std::string& problem, Spell spell) {
    std::string out;
    if (!field.empty()) out = spell(field) + (value.empty() ? "" : " " + value) + ": ";
    for (std::size_t i = 0; i < problem.size(); ++i) {
      const std::size_t close = problem[i] == '{' ? problem.find('}', i) : std::string::npos;
      if (close == std::string::npos) {
        out += problem[i];
        continue;
      }
      out += spell(problem.substr(i + 1, close - i - 1));
      i = close;
    }
    return out;
  }
  /// "batch_size" of "TrainingRun::batch_size".
  static std::string bare(const std::string& field) {
    const std::size_t colon = field.rfind("::");
    return colon == std::string::npos ? field : field.substr(colon + 2);
  }

 private:
  std::string field_;
  std::string value_;
  std::string problem_;
};

/// A CUDA call or a CUDA-only feature failed (no GPU, out of memory, ...).
class CudaError : public Error {
 public:
  using Error::Error;
};

/// The device ran out of memory: the message gives the settings and the memory figures.
class OutOfMemoryError : public CudaError {
 public:
  using CudaError::CudaError;
};

/// An NVML call failed for a reason other than "not supported": the message names the call.
class NvmlError : public Error {
 public:
  /// `code` is NVML's return code (nvmlReturn_t).
  NvmlError(const std::string& message, int code) : Error(message), code_(code) {}
  /// NVML's return code.
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// An I/O failure: unwritable output, unreadable or malformed file.
class IoError : public Error {
 public:
  using Error::Error;
};

/// Throws ConfigError(field, "must be <rule>, got <value>") unless `ok`: how every check of a
/// setting reads. `field` as the library spells it ("TrainingRun::batch_size").
template <typename T>
void require_setting(bool ok, const std::string& field, const T& value, const std::string& rule) {
  static_assert(std::is_arithmetic_v<T>, "require_setting prints numbers");
  if (ok) return;
  // Integers as they are; other numbers as %g writes them ("0.5", "1e+300", not "0.500000").
  const std::string text =
      std::is_integral_v<T> ? std::to_string(value) : format_number(static_cast<double>(value), 6);
  throw ConfigError(field, "must be " + rule + ", got " + text);
}

}  // namespace gpuperf

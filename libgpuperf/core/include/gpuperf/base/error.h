#pragma once
// Typed errors. Programs map them to exit codes (examples/support/program.h): ConfigError and
// IoError (bad usage or input) -> 2, OutOfMemoryError -> 3, any other -> 1.

#include <stdexcept>
#include <string>
#include <type_traits>

namespace gpuperf {

/// Base of every error gpuperf throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad option, value or input: the message names the option and the value.
class ConfigError : public Error {
 public:
  using Error::Error;
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

/// Throws ConfigError "--<option>: must be <rule>, got <value>" unless `ok`: how every check of
/// a run's options reads, in the library and in the programs.
template <typename T>
void require_option(bool ok, const std::string& option, const T& value, const std::string& rule) {
  static_assert(std::is_arithmetic_v<T>, "require_option prints numbers");
  if (!ok) throw ConfigError("--" + option + ": must be " + rule + ", got " + std::to_string(value));
}

}  // namespace gpuperf

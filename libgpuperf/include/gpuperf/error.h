#pragma once
// Typed errors. Programs map them to exit codes: ConfigError (bad usage or input) -> 2.

#include <stdexcept>
#include <string>

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

/// Exit code for bad usage or input, as the programs report it.
inline constexpr int kExitUsage = 2;

}  // namespace gpuperf

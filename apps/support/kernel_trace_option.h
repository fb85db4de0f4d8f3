#pragma once
// --kernel-trace for the benchmark programs (they link LibTorch; the tools do not).

#include <CLI/CLI.hpp>

#include <string>

namespace gpuperf::program {

/// --kernel-trace PATH: the option, with `what` saying which calls are traced.
void add_kernel_trace_option(CLI::App& app, std::string& path, const std::string& what);

/// Refuses a --kernel-trace path before the run (ConfigError): standard output, a place that
/// cannot be written, or a LibTorch without the Kineto profiler. Nothing for "".
void check_kernel_trace(const std::string& path);

}  // namespace gpuperf::program

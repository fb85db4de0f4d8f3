#pragma once
// --version for the programs that run LibTorch: gpuperf's version, then LibTorch's, CUDA's,
// cuDNN's and the driver's.

#include <CLI/CLI.hpp>

namespace gpuperf::program {

/// Sets `app`'s --version flag to version_text(name, software_versions()); call before
/// run_program().
void add_torch_version_flag(CLI::App& app);

}  // namespace gpuperf::program

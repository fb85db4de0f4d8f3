#pragma once
// Where a step's GPU time goes: runs some work under LibTorch's profiler (Kineto, which reads
// the GPU's kernel records through CUPTI, kernels replayed from a CUDA graph included) and writes
// the Chrome trace that torch.profiler's export_chrome_trace writes, so that one classifier
// (benchmarks/python/profile_step.py) reads gpuperf's traces and a PyTorch peer's alike.
//
//   gpuperf::write_kernel_trace("step.trace.json", [&] { for (int i = 0; i < 5; ++i) step(batch);
//   });

#include <functional>
#include <string>

namespace gpuperf {

/// Whether this LibTorch can write kernel traces (it has Kineto): probed once, by profiling
/// nothing.
[[nodiscard]] bool kernel_traces_supported();

/// Runs `work` with LibTorch's profiler recording CPU operators and (on a CUDA build) GPU
/// kernels, then writes the trace to `path` (through a gpuperf::TemporaryFile beside it, renamed
/// when whole). `work` should end with a device synchronisation, so that its kernels are in the
/// trace. Throws Error when this LibTorch has no Kineto (Debian's CPU LibTorch 1.13 has none) and
/// IoError when the file cannot be written.
void write_kernel_trace(const std::string& path, const std::function<void()>& work);

}  // namespace gpuperf

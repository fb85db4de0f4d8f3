#pragma once
// Decoding a CpuLoader's LoaderOutput::kEncoded batches on a CUDA device (private to train/):
// nvJPEG decodes the files (batched, on the GPU's hardware JPEG decoder where it has one, A100,
// H100, H200; nvJPEG's GPU backend for what the hardware does not take and on other GPUs), then
// one kernel (image_kernels.h) crops, resizes, flips and normalises every sample of the batch.
// Samples the loader's threads decoded themselves (grayscale, CMYK, progressive, damaged files)
// are copied from the batch's host buffer. A file nvJPEG refuses is decoded by libjpeg on the
// calling thread with the same draws; a file libjpeg refuses too is skipped: its slot takes
// another sample of the batch (with that sample's label) and the file is counted and named (in
// strict mode it is an error naming it instead).
// Built only with nvJPEG (GPUPERF_WITH_NVJPEG).

#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/input/cpu_loader.h"

namespace gpuperf::detail {

/// What the GPU decoder did so far.
struct GpuDecodeStats {
  std::int64_t hardware_decoded = 0;       ///< files decoded by the hardware decoder
  std::int64_t gpu_decoded = 0;            ///< files decoded by nvJPEG's GPU (hybrid) backend
  std::int64_t host_decoded = 0;           ///< samples the loader's threads decoded (copied)
  std::int64_t libjpeg_fallbacks = 0;      ///< files nvJPEG refused, decoded by libjpeg here
  std::int64_t skipped = 0;                ///< files both refused (slots filled from the batch)
  std::vector<SkippedFile> first_skipped;  ///< the first few of them, by path
  double gpu_seconds = 0;              ///< decode stream busy: decoding, resizing, copying (events)
  double kernel_seconds = 0;           ///< of which the resize kernel (on the SMs)
  std::int64_t peak_buffer_bytes = 0;  ///< the largest batch's decoded images + output
  double call_seconds = 0;             ///< host time in decode() in all
  double submit_seconds = 0;           ///< of which in nvJPEG's decode calls (parsing, submitting)
  double wait_seconds = 0;  ///< host time waiting for the decode stream to finish a batch
};

/// Host seconds from `start` to now (the decode thread's own timings).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// One device's nvJPEG handles and the resize kernel's launch (see the file comment).
class GpuImageDecoder {
 public:
  /// For CUDA device `device`; the transform gives the output size, type, geometry and
  /// normalisation. `strict`: decode() throws BadImageError naming a file that nvJPEG and
  /// libjpeg both refuse, instead of skipping it. Throws Error when nvJPEG cannot start.
  GpuImageDecoder(c10::DeviceIndex device, const ImageTransformOptions& transform, bool strict);
  ~GpuImageDecoder();
  GpuImageDecoder(const GpuImageDecoder&) = delete;
  GpuImageDecoder& operator=(const GpuImageDecoder&) = delete;

  /// Decodes `batch` into [size, crop, crop, 3] samples (the transform's type) and the labels
  /// (int64) on the device, working on `stream` (a cudaStream_t of `device`); returns when the
  /// stream has finished the batch, so that the loader may reuse its memory. The tensors'
  /// memory belongs to `stream` in the caching allocator.
  std::pair<torch::Tensor, torch::Tensor> decode(const ImageBatch& batch, void* stream);

  /// "hardware" (nvJPEG's hardware backend) or "GPU" (its default backend).
  [[nodiscard]] std::string backend() const;
  /// What it did so far.
  [[nodiscard]] const GpuDecodeStats& stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpuperf::detail

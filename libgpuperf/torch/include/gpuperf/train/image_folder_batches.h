#pragma once
// Training batches decoded from JPEG files on the CPU (gpuperf's CpuLoader: libjpeg-turbo on a
// thread pool, torchvision's RandomResizedCrop + flip or resize + centre crop, ImageNet
// normalisation) as a BatchSource, for run_training() and for your own loop:
//
//   gpuperf::ImageFolderBatchOptions options;
//   options.folder = "/data/imagenet/train";   // one sub-folder per class
//   options.batch_size = 256;
//   options.device = torch::kCUDA;
//   gpuperf::ImageFolderBatches batches(options);
//   for (int i = 0; i < steps; ++i) step(batches.next());  // NCHW channels_last float, labels
//
// With a CUDA device and a build with nvJPEG, the files are decoded on the GPU by default (its
// hardware JPEG decoder where it has one): the threads only read the files and their headers, a
// thread of the loader's own hands each batch to nvJPEG and one kernel crops, resizes, flips and
// normalises it on a stream of its own, a few batches ahead; grayscale, CMYK, progressive and
// damaged files are decoded by libjpeg on the threads as on the CPU path.
//
// Epochs follow each other without end (a new shuffle each); each data-parallel rank reads its own
// share. Bad files are skipped and counted (stats()), never given a wrong label. For a CUDA device
// the loader's batch buffers are page-locked and each batch copies on a stream of its own, which
// the caller's current stream waits for (the host does not).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/choices.h"
#include "gpuperf/input/cpu_loader.h"
#include "gpuperf/train/batch_source.h"

namespace gpuperf {

/// Whether this build decodes JPEGs on the GPU (it found nvJPEG).
[[nodiscard]] bool gpu_decode_available();

/// Where files are decoded for `decode` on `device`: kGpu for gpu, and for auto on a CUDA device
/// when gpu_decode_available(); kCpu otherwise.
[[nodiscard]] ImageDecode resolve_decode(ImageDecode decode, const torch::Device& device);

/// Options of ImageFolderBatches.
struct ImageFolderBatchOptions {
  std::string folder;  ///< an ImageNet-style folder (one sub-folder per class)
  std::int64_t batch_size = 256;
  int threads = 0;           ///< decoding threads; 0: every core
  int prefetch_batches = 2;  ///< batches decoded ahead
  bool training = true;      ///< RandomResizedCrop(224) + flip; false: resize 256, crop 224
  bool strict = false;       ///< the first bad file is an error (BadImageError) instead
  std::uint64_t seed = 0;    ///< the shuffle and the crops follow from it
  int rank = 0;              ///< data-parallel rank
  int world_size = 1;        ///< ranks sharing each epoch
  torch::Device device = torch::kCPU;       ///< where next() puts the batch
  ImageDecode decode = ImageDecode::kAuto;  ///< where the files are decoded
  /// Decoding on the GPU: the share of each batch (0..1) the CPU threads decode instead, so
  /// that the host's cores and the GPU's decoder each take part of the batch
  /// (CpuLoaderOptions::host_share). 0: the GPU decodes every file it can.
  double host_decode_share = 0;
  /// Decoding on the GPU: host_decode_share is where the share starts, and it moves with the
  /// pace of the threads and of training (CpuLoaderOptions::adaptive_host_share, late batches
  /// reported by next()): the threads decode as much of each batch as they can without the GPU
  /// running out of work, nvJPEG the rest (start from 1). Which samples the
  /// threads decode then depends on timing (a pixel may differ by the decoders' few levels
  /// between runs, and a file only the GPU path decodes may be replaced by the next good file on
  /// the host: CpuLoaderOptions::adaptive_host_share). With decode kCpu: refused.
  bool adaptive_host_share = false;
  /// CPU decoding at 1/2, 1/4 or 1/8 size where the crop allows (ImageTransformOptions::
  /// dct_scaling): faster, a few levels from PIL's pixels; false: PIL's pixels exactly.
  bool dct_scaling = true;
  /// Decoding on the GPU: loader batches nvJPEG decodes in one call (1..16), copied into one
  /// and split again; up to max(prefetch_batches, 2 x this x gpu_decode_threads) batches are
  /// kept ready or in flight. Two per call measured slower beside ResNet-50 training on the
  /// H200 than one (0.82-0.89 of the synthetic rate against 0.90-0.91). Above 1 with decode
  /// kCpu: refused.
  int gpu_batches_per_call = 1;
  /// Decoding on the GPU: threads (1..8) each with nvJPEG handles and a stream of their own,
  /// taking the loader's batches in turn (delivered in the loader's order). On the H200 beside
  /// ResNet-50 training the hardware decoder's calls do not overlap: with two or three threads
  /// each call took two or three times as long and training ran at 0.73-0.78 of its synthetic
  /// rate against 0.90-0.91 with one. Other than 1 with decode kCpu: refused.
  int gpu_decode_threads = 1;

  /// Throws ConfigError naming the first bad field (decode kGpu without a CUDA device or
  /// without nvJPEG in the build among them).
  void validate() const;
};

/// Batches of an image folder (see the file comment).
class ImageFolderBatches final : public BatchSource {
 public:
  /// Scans the folder and starts the decoding threads. ConfigError for bad options or a folder
  /// without JPEG files (naming it).
  explicit ImageFolderBatches(ImageFolderBatchOptions options);
  ~ImageFolderBatches() override;
  /// The next batch: input [batch, 3, 224, 224] float32 in channels_last memory, target int64,
  /// on options.device (an epoch's last, smaller batch is left out).
  Batch next() override;
  [[nodiscard]] std::int64_t batch_size() const override { return options_.batch_size; }
  [[nodiscard]] std::string name() const override;
  /// Classes in the folder (its sub-folders).
  [[nodiscard]] std::int64_t num_classes() const { return classes_; }
  /// JPEG files found.
  [[nodiscard]] std::int64_t files() const { return files_; }
  /// What the loader did so far: images decoded, skipped files, decode seconds per thread. On
  /// the GPU path `skipped` and `first_skipped` include the files the GPU decoder skipped.
  [[nodiscard]] CpuLoaderStats stats() const;
  /// Decoding threads running (file reading only, when the GPU decodes).
  [[nodiscard]] int threads() const { return threads_; }
  /// Where the files are decoded: kCpu or kGpu (kAuto resolved).
  [[nodiscard]] ImageDecode decode() const { return decode_; }
  /// The GPU path's figures, as record metrics (empty on the CPU path): files decoded by the
  /// hardware decoder, by nvJPEG's GPU backend, by libjpeg; skipped files; seconds the decode
  /// stream was busy and of them the resize kernel's; the largest batch's device buffers.
  [[nodiscard]] std::vector<std::pair<std::string, double>> gpu_figures() const;
  /// Calls of next() on a CUDA device whose batch came late: the caller's stream had work when
  /// the call began and none when the batch came, so the GPU ran out of work waiting for it
  /// (a stream the caller had synchronised first does not count). On the GPU path each is
  /// reported to the loader's adaptive host share (CpuLoader::device_ran_dry()).
  [[nodiscard]] std::int64_t late_batches() const { return late_batches_; }

 private:
  ImageFolderBatchOptions options_;
  std::unique_ptr<CpuLoader> loader_;
  std::int64_t classes_ = 0;
  std::int64_t files_ = 0;
  int threads_ = 0;
  std::int64_t crop_ = 0;  ///< output height and width (the transform's crop)
  [[nodiscard]] std::string gpu_backend() const;  ///< " by nvJPEG's ... backend" or ""
  ImageDecode decode_ = ImageDecode::kCpu;
  struct DeviceCopy;  ///< the copy stream and its last copy (CUDA devices)
  std::unique_ptr<DeviceCopy> copy_;
  struct GpuDecode;  ///< the decode thread, nvJPEG and the batches ready (kGpu)
  std::unique_ptr<GpuDecode> gpu_;
  std::int64_t late_batches_ = 0;
  Batch next_batch();  ///< next() without the late-batch count
};

}  // namespace gpuperf

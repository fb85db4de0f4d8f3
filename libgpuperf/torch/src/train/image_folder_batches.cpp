// ImageFolderBatches: CpuLoader's NHWC batches as channels_last NCHW tensors.
#include "gpuperf/train/image_folder_batches.h"

#include <algorithm>
#include <thread>

#include "gpuperf/base/error.h"

namespace gpuperf {

void ImageFolderBatchOptions::validate() const {
  if (folder.empty()) throw ConfigError("ImageFolderBatchOptions::folder", "must not be empty");
  require_setting(batch_size >= 1 && batch_size <= (1 << 20), "ImageFolderBatchOptions::batch_size",
                  batch_size, ">= 1 and <= 1048576");
  require_setting(threads >= 0 && threads <= 1024, "ImageFolderBatchOptions::threads", threads,
                  ">= 0 and <= 1024 (0: every core)");
  require_setting(prefetch_batches >= 1 && prefetch_batches <= 64,
                  "ImageFolderBatchOptions::prefetch_batches", prefetch_batches, ">= 1 and <= 64");
  require_setting(world_size >= 1, "ImageFolderBatchOptions::world_size", world_size, ">= 1");
  require_setting(rank >= 0 && rank < world_size, "ImageFolderBatchOptions::rank", rank,
                  ">= 0 and < {world_size}");
}

ImageFolderBatches::ImageFolderBatches(ImageFolderBatchOptions options)
    : options_(std::move(options)) {
  options_.validate();
  ImageFolder folder = scan_image_folder(options_.folder);
  classes_ = folder.num_classes();
  files_ = static_cast<std::int64_t>(folder.samples.size());
  CpuLoaderOptions loader;
  loader.batch_size = static_cast<int>(options_.batch_size);
  threads_ = options_.threads > 0
                 ? options_.threads
                 : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  loader.threads = threads_;
  loader.prefetch_batches = options_.prefetch_batches;
  loader.seed = options_.seed;
  loader.epochs = std::int64_t{1} << 40;  // without end: a benchmark stops when it has timed
  loader.rank = options_.rank;
  loader.world_size = options_.world_size;
  loader.drop_last_batch = true;  // every step the same shape (a CUDA graph replays it)
  loader.strict = options_.strict;
  loader.transform.kind = options_.training ? TransformKind::kTrain : TransformKind::kValidation;
  crop_ = loader.transform.crop_size;
  loader_ = std::make_unique<CpuLoader>(std::move(folder.samples), loader);
}

ImageFolderBatches::~ImageFolderBatches() = default;

Batch ImageFolderBatches::next() {
  const ImageBatch* batch = loader_->next();
  if (batch == nullptr) throw Error("ImageFolderBatches: the loader ended");
  const std::int64_t n = batch->size;
  const std::int64_t crop = crop_;
  // NHWC in memory is NCHW in channels_last: a view, copied once to the device (or, on the
  // CPU, out of the loader's buffer, which the next call reuses).
  const torch::Tensor images =
      torch::from_blob(batch->images, {n, crop, crop, 3}, torch::kFloat).permute({0, 3, 1, 2});
  const torch::Tensor labels = torch::from_blob(batch->labels, {n}, torch::kLong);
  if (options_.device.is_cpu())
    return {images.clone(at::MemoryFormat::ChannelsLast), labels.clone()};
  return {images.to(options_.device), labels.to(options_.device)};
}

std::string ImageFolderBatches::name() const {
  return "image folder " + options_.folder + " (" + std::to_string(files_) + " JPEG files, " +
         std::to_string(classes_) + " classes, " + (options_.training ? "training" : "validation") +
         " transform, " + std::to_string(threads_) + " CPU threads)";
}

CpuLoaderStats ImageFolderBatches::stats() const { return loader_->stats(); }

}  // namespace gpuperf

// ImageFolderBatches: CpuLoader's NHWC batches as channels_last NCHW tensors; for a GPU, the
// loader's buffers are pinned and each batch copies on a stream of its own.
#include "gpuperf/train/image_folder_batches.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpuperf/base/error.h"

#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif
#if GPUPERF_WITH_NVJPEG
#include "train/gpu_image_decoder.h"
#endif

namespace gpuperf {

#if GPUPERF_WITH_CUDA

namespace {

// Page-locked batch buffers (portable: any GPU of a data-parallel process may read them), so that
// a batch copies to the device without staging and without holding the host. Allocation and
// release run on the loader's threads, whose current device is not the training device: both
// switch to `index` first, so that no thread makes a context on another GPU.
HostAllocator pinned_allocator(c10::DeviceIndex index) {
  HostAllocator pinned;
  pinned.allocate = [index](std::size_t bytes) {
    const c10::cuda::CUDAGuard guard(index);
    void* pointer = nullptr;
    const cudaError_t status = cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw Error("ImageFolderBatches: cudaHostAlloc of " + std::to_string(bytes) +
                  " bytes: " + cudaGetErrorString(status));
    }
    return pointer;
  };
  pinned.release = [index](void* pointer, std::size_t /*bytes*/) {
    const c10::cuda::CUDAGuard guard(index);
    (void)cudaFreeHost(pointer);
  };
  return pinned;
}

}  // namespace

// The copy stream and the event of the last batch's copy: the loader reuses that batch's buffer
// once next() is called again, so the copy must have finished by then.
struct ImageFolderBatches::DeviceCopy {
  explicit DeviceCopy(c10::DeviceIndex index)
      : stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index)) {}
  c10::cuda::CUDAStream stream;
  at::cuda::CUDAEvent copied;
  bool pending = false;

  void wait() {
    if (pending) copied.synchronize();
    pending = false;
  }

  // images and labels (views of a pinned buffer) on the device: copied on `stream`, which the
  // caller's current stream waits for; the device memory is marked as used by that stream, so
  // the allocator gives it back to the copy stream only after the caller's work on it.
  Batch to_device(const torch::Tensor& images, const torch::Tensor& labels,
                  const torch::Device& device) {
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(stream.device_index());
    torch::Tensor x;
    torch::Tensor y;
    {
      const c10::cuda::CUDAStreamGuard guard(stream);
      x = images.to(device, /*non_blocking=*/true);
      y = labels.to(device, /*non_blocking=*/true);
      copied.record(stream);
    }
    pending = true;
    copied.block(current);
    c10::cuda::CUDACachingAllocator::recordStream(x.storage().data_ptr(), current);
    c10::cuda::CUDACachingAllocator::recordStream(y.storage().data_ptr(), current);
    return {x, y};
  }
};

#else

struct ImageFolderBatches::DeviceCopy {};

#endif

#if GPUPERF_WITH_NVJPEG

// The GPU path: `workers` threads, each with nvJPEG handles and a high-priority stream of its own,
// take the loader's encoded batches in turn (`per_call` at a time), decode them and queue them in
// the loader's order, up to `depth` batches ready or in flight. A call of nvJPEG's hardware
// decoder holds its thread ~28 ms a batch of 256 beside ResNet-50 training; on the H200 calls from
// two threads do not overlap (each takes twice as long), so one thread is the default. The
// hardware decoder runs without its pipeline (NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE in
// gpu_image_decoder.cpp). The streams have high priority: the resize kernel is short and would
// otherwise wait behind every training kernel for the SMs. next() makes the caller's stream wait
// for none of the batches (each is finished when it is queued) and hands the memory over to the
// caller's stream.
struct ImageFolderBatches::GpuDecode {
  // One decode thread: its decoder and stream, and its copy of the batches it took (the loader
  // reuses a batch's memory at its next call, which another worker may make meanwhile).
  struct Worker {
    Worker(c10::DeviceIndex index, const ImageTransformOptions& transform, bool strict)
        : decoder(index, transform, strict),
          stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, index)) {}
    detail::GpuImageDecoder decoder;
    c10::cuda::CUDAStream stream;
    ImageBatch merged;
    std::vector<char> merged_images;
    std::vector<std::int64_t> merged_labels;
    std::thread thread;
    detail::GpuDecodeStats published;  // its decoder's figures after its last batch queued
  };

  GpuDecode(c10::DeviceIndex index, const ImageTransformOptions& transform, bool strict, int depth_,
            int per_call_, int workers_)
      : device(index),
        depth(static_cast<std::size_t>(std::max(depth_, 2 * per_call_ * workers_))),
        sample_bytes(transform.sample_bytes()),
        per_call(per_call_) {
    for (int w = 0; w < workers_; ++w)
      workers.push_back(std::make_unique<Worker>(index, transform, strict));
  }
  ~GpuDecode() { stop(); }
  GpuDecode(const GpuDecode&) = delete;
  GpuDecode& operator=(const GpuDecode&) = delete;
  GpuDecode(GpuDecode&&) = delete;
  GpuDecode& operator=(GpuDecode&&) = delete;

  c10::DeviceIndex device;
  std::size_t depth;
  std::size_t sample_bytes;
  int per_call;  // loader batches per nvJPEG call
  std::vector<std::unique_ptr<Worker>> workers;
  std::mutex loader_mutex;      // one worker at a time takes (and copies) the loader's batches
  std::int64_t next_taken = 0;  // the next call's place in the loader's order (loader_mutex)
  mutable std::mutex mutex;     // the rest
  std::condition_variable changed;
  std::deque<std::pair<torch::Tensor, torch::Tensor>> ready;
  std::size_t in_flight = 0;     // calls taken, not yet queued
  std::int64_t next_queued = 0;  // the place of the next call to queue
  bool stopping = false;
  std::exception_ptr error;
  double full_seconds = 0;     // the threads waiting for room among the ready batches
  double starved_seconds = 0;  // the threads waiting for (and copying) the loader's batches

  // Copies `batch` behind the samples already in `w.merged` (emptied before each call; the
  // copies reuse the memory of earlier calls: no allocation once warm).
  void append(Worker& w, const ImageBatch& batch) const {
    for (int i = 0; i < batch.size; ++i) {
      const auto slot = static_cast<std::size_t>(w.merged.size);
      const EncodedSample& sample = batch.encoded[static_cast<std::size_t>(i)];
      if (slot < w.merged.encoded.size()) {
        w.merged.encoded[slot] = sample;
        w.merged.sample_ids[slot] = batch.sample_ids[static_cast<std::size_t>(i)];
        w.merged_labels[slot] = batch.labels[i];
      } else {
        w.merged.encoded.push_back(sample);
        w.merged.sample_ids.push_back(batch.sample_ids[static_cast<std::size_t>(i)]);
        w.merged_labels.push_back(batch.labels[i]);
      }
      if (sample.on_host) {
        w.merged_images.resize(std::max(w.merged_images.size(), sample_bytes * (slot + 1)));
        std::memcpy(w.merged_images.data() + sample_bytes * slot,
                    static_cast<const char*>(batch.images) + sample_bytes * i, sample_bytes);
      }
      ++w.merged.size;
    }
    w.merged.images = w.merged_images.data();
    w.merged.labels = w.merged_labels.data();
  }

  void start(CpuLoader& loader) {
    for (auto& w : workers) {
      Worker* worker = w.get();
      worker->thread = std::thread([this, worker, &loader] { run(*worker, loader); });
    }
  }

  void run(Worker& w, CpuLoader& loader) {
    // One worker alone with one batch a call decodes the loader's batch in place.
    const bool copy = per_call > 1 || workers.size() > 1;
    try {
      const c10::cuda::CUDAGuard guard(device);
      while (true) {
        auto start = std::chrono::steady_clock::now();
        {
          std::unique_lock<std::mutex> lock(mutex);
          changed.wait(lock, [&] {
            return stopping || error || ready.size() + in_flight * per_call < depth;
          });
          if (stopping || error) return;
          ++in_flight;
        }
        const double full = detail::seconds_since(start);
        start = std::chrono::steady_clock::now();
        std::vector<int> sizes;
        const ImageBatch* batch = nullptr;
        std::int64_t place = 0;
        {
          const std::lock_guard<std::mutex> lock(loader_mutex);
          place = next_taken++;
          w.merged.size = 0;
          for (int k = 0; k < per_call; ++k) {
            const ImageBatch* next = loader.next();
            if (next == nullptr) {
              if (k == 0) throw Error("ImageFolderBatches: the loader ended");
              break;
            }
            batch = next;
            if (copy) append(w, *next);
            sizes.push_back(next->size);
          }
        }
        if (copy) batch = &w.merged;
        const double starved = detail::seconds_since(start);
        auto decoded = w.decoder.decode(*batch, w.stream.stream());
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stopping || error || next_queued == place; });
        if (stopping || error) return;
        if (sizes.size() == 1) {
          ready.push_back(std::move(decoded));
        } else {
          std::int64_t offset = 0;
          for (int size : sizes) {
            ready.emplace_back(decoded.first.narrow(0, offset, size),
                               decoded.second.narrow(0, offset, size));
            offset += size;
          }
        }
        ++next_queued;
        --in_flight;
        w.published = w.decoder.stats();
        full_seconds += full;
        starved_seconds += starved;
        changed.notify_all();
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      changed.notify_all();
    }
  }

  Batch next() {
    std::pair<torch::Tensor, torch::Tensor> batch;
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return !ready.empty() || error; });
      if (ready.empty()) std::rethrow_exception(error);
      batch = std::move(ready.front());
      ready.pop_front();
      changed.notify_all();
    }
    // Finished on a decode stream before it was queued; from here the caller's stream uses
    // the memory, and the allocator gives it back only after that stream's work on it.
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device);
    c10::cuda::CUDACachingAllocator::recordStream(batch.first.storage().data_ptr(), current);
    c10::cuda::CUDACachingAllocator::recordStream(batch.second.storage().data_ptr(), current);
    return {batch.first.permute({0, 3, 1, 2}), batch.second};
  }

  // The workers' figures, summed (the caller holds `mutex`).
  [[nodiscard]] detail::GpuDecodeStats total() const {
    detail::GpuDecodeStats sum;
    for (const auto& w : workers) {
      const detail::GpuDecodeStats& s = w->published;
      sum.hardware_decoded += s.hardware_decoded;
      sum.gpu_decoded += s.gpu_decoded;
      sum.host_decoded += s.host_decoded;
      sum.libjpeg_fallbacks += s.libjpeg_fallbacks;
      sum.skipped += s.skipped;
      sum.first_skipped.insert(sum.first_skipped.end(), s.first_skipped.begin(),
                               s.first_skipped.end());
      sum.gpu_seconds += s.gpu_seconds;
      sum.kernel_seconds += s.kernel_seconds;
      sum.peak_buffer_bytes += s.peak_buffer_bytes;
      sum.call_seconds += s.call_seconds;
      sum.submit_seconds += s.submit_seconds;
      sum.wait_seconds += s.wait_seconds;
    }
    return sum;
  }

  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    for (auto& w : workers) {
      if (w->thread.joinable()) w->thread.join();
    }
  }
};

#else

struct ImageFolderBatches::GpuDecode {};

#endif

bool gpu_decode_available() {
#if GPUPERF_WITH_NVJPEG
  return true;
#else
  return false;
#endif
}

ImageDecode resolve_decode(ImageDecode decode, const torch::Device& device) {
  return decode == ImageDecode::kGpu ||
                 (decode == ImageDecode::kAuto && device.is_cuda() && gpu_decode_available())
             ? ImageDecode::kGpu
             : ImageDecode::kCpu;
}

namespace {

// The settings of decoding on the GPU, refused (ConfigError with `why`) where the files are
// decoded on the CPU: set there they would be silently ignored.
void refuse_gpu_decode_settings(const ImageFolderBatchOptions& o, const std::string& why) {
  if (o.adaptive_host_share) {  // first: host_decode_share is then only where it starts
    throw ConfigError("ImageFolderBatchOptions::adaptive_host_share", "true", why);
  }
  if (o.host_decode_share > 0) {
    throw ConfigError("ImageFolderBatchOptions::host_decode_share",
                      std::to_string(o.host_decode_share), why);
  }
  if (o.gpu_batches_per_call > 1) {
    throw ConfigError("ImageFolderBatchOptions::gpu_batches_per_call",
                      std::to_string(o.gpu_batches_per_call), why);
  }
  if (o.gpu_decode_threads != 1) {
    throw ConfigError("ImageFolderBatchOptions::gpu_decode_threads",
                      std::to_string(o.gpu_decode_threads), why);
  }
}

}  // namespace

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
  require_setting(gpu_batches_per_call >= 1 && gpu_batches_per_call <= 16,
                  "ImageFolderBatchOptions::gpu_batches_per_call", gpu_batches_per_call,
                  ">= 1 and <= 16");
  require_setting(gpu_decode_threads >= 1 && gpu_decode_threads <= 8,
                  "ImageFolderBatchOptions::gpu_decode_threads", gpu_decode_threads,
                  ">= 1 and <= 8");
  require_setting(host_decode_share >= 0 && host_decode_share <= 1,
                  "ImageFolderBatchOptions::host_decode_share", host_decode_share, "in 0..1");
  if (decode == ImageDecode::kCpu) {
    refuse_gpu_decode_settings(
        *this, "applies to decoding on the GPU ({ImageFolderBatchOptions::decode} is cpu)");
  }
  if (decode == ImageDecode::kGpu && !device.is_cuda()) {
    throw ConfigError(
        "ImageFolderBatchOptions::decode", "gpu",
        "needs a CUDA device ({ImageFolderBatchOptions::device} is " + device.str() + ")");
  }
  if (decode == ImageDecode::kGpu && !gpu_decode_available()) {
    throw ConfigError("ImageFolderBatchOptions::decode", "gpu",
                      "needs nvJPEG, which this build did not find (decode cpu or auto)");
  }
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
  loader.transform.dct_scaling = options_.dct_scaling;
  crop_ = loader.transform.crop_size;
  decode_ = resolve_decode(options_.decode, options_.device);
  if (decode_ == ImageDecode::kCpu && options_.decode == ImageDecode::kAuto) {
    // validate() refuses these with decode cpu; auto that decodes on the CPU refuses them alike.
    const std::string why =
        "applies to decoding on the GPU ({ImageFolderBatchOptions::decode} "
        "auto decodes on the CPU here: " +
        std::string(options_.device.is_cuda() ? "no nvJPEG in this build"
                                              : "the device is the CPU") +
        ")";
    refuse_gpu_decode_settings(options_, why);
  }
#if GPUPERF_WITH_CUDA
  if (options_.device.is_cuda()) {
    const c10::DeviceIndex index =
        options_.device.has_index() ? options_.device.index() : c10::cuda::current_device();
    options_.device = torch::Device(torch::kCUDA, index);
    loader.allocator = pinned_allocator(index);
    if (decode_ == ImageDecode::kCpu) copy_ = std::make_unique<DeviceCopy>(index);
  }
#endif
#if GPUPERF_WITH_NVJPEG
  if (decode_ == ImageDecode::kGpu) {
    loader.output = LoaderOutput::kEncoded;
    loader.host_share = options_.host_decode_share;
    loader.adaptive_host_share = options_.adaptive_host_share;
    gpu_ = std::make_unique<GpuDecode>(options_.device.index(), loader.transform, loader.strict,
                                       options_.prefetch_batches, options_.gpu_batches_per_call,
                                       options_.gpu_decode_threads);
  }
#endif
  loader_ = std::make_unique<CpuLoader>(std::move(folder.samples), loader);
#if GPUPERF_WITH_NVJPEG
  if (gpu_) gpu_->start(*loader_);
#endif
}

// NOLINTNEXTLINE(modernize-use-equals-default): empty only without CUDA
ImageFolderBatches::~ImageFolderBatches() {
#if GPUPERF_WITH_NVJPEG
  if (gpu_) gpu_->stop();  // before the loader it reads from goes
#endif
#if GPUPERF_WITH_CUDA
  // The loader frees its buffers: no copy may still read one.
  if (copy_) copy_->wait();
#endif
}

Batch ImageFolderBatches::next() {
#if GPUPERF_WITH_CUDA
  if (options_.device.is_cuda()) {
    // query(): true when the stream has nothing queued or running.
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(options_.device.index());
    const bool busy = !stream.query();
    Batch batch = next_batch();
    if (busy && stream.query()) {
      ++late_batches_;
      loader_->device_ran_dry();
    }
    return batch;
  }
#endif
  return next_batch();
}

Batch ImageFolderBatches::next_batch() {
#if GPUPERF_WITH_NVJPEG
  if (gpu_) return gpu_->next();
#endif
#if GPUPERF_WITH_CUDA
  if (copy_) copy_->wait();  // the previous batch's buffer goes back to the loader below
#endif
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
#if GPUPERF_WITH_CUDA
  if (copy_) return copy_->to_device(images, labels, options_.device);
#endif
  return {images.to(options_.device), labels.to(options_.device)};
}

std::string ImageFolderBatches::name() const {
  return "image folder " + options_.folder + " (" + std::to_string(files_) + " JPEG files, " +
         std::to_string(classes_) + " classes, " + (options_.training ? "training" : "validation") +
         " transform, " + std::to_string(threads_) + " CPU threads" +
         (gpu_    ? ", decoded on the GPU" + gpu_backend() + ")"
          : copy_ ? ", pinned buffers, copies on their own stream)"
                  : ")");
}

// NOLINTNEXTLINE(readability-convert-member-functions-to-static): reads gpu_ with nvJPEG
std::string ImageFolderBatches::gpu_backend() const {
#if GPUPERF_WITH_NVJPEG
  if (gpu_) {
    const std::size_t count = gpu_->workers.size();
    return " by nvJPEG's " + gpu_->workers.front()->decoder.backend() + " backend, " +
           std::to_string(count) + (count == 1 ? " decode thread" : " decode threads");
  }
#endif
  return "";
}

// NOLINTNEXTLINE(readability-convert-member-functions-to-static): reads gpu_ with nvJPEG
std::vector<std::pair<std::string, double>> ImageFolderBatches::gpu_figures() const {
  std::vector<std::pair<std::string, double>> figures;
#if GPUPERF_WITH_NVJPEG
  if (!gpu_) return figures;
  const std::lock_guard<std::mutex> lock(gpu_->mutex);
  const detail::GpuDecodeStats s = gpu_->total();
  figures = {{"loader_gpu_hardware_decoded", static_cast<double>(s.hardware_decoded)},
             {"loader_gpu_backend_decoded", static_cast<double>(s.gpu_decoded)},
             {"loader_gpu_host_decoded", static_cast<double>(s.host_decoded)},
             {"loader_gpu_libjpeg_fallbacks", static_cast<double>(s.libjpeg_fallbacks)},
             {"loader_gpu_skipped_files", static_cast<double>(s.skipped)},
             {"loader_gpu_stream_seconds", s.gpu_seconds},
             {"loader_gpu_kernel_seconds", s.kernel_seconds},
             {"loader_gpu_peak_buffer_bytes", static_cast<double>(s.peak_buffer_bytes)},
             {"loader_gpu_batches_per_call", static_cast<double>(gpu_->per_call)},
             {"loader_gpu_decode_threads", static_cast<double>(gpu_->workers.size())},
             {"loader_gpu_thread_decode_seconds", s.call_seconds},
             {"loader_gpu_thread_submit_seconds", s.submit_seconds},
             {"loader_gpu_thread_stream_wait_seconds", s.wait_seconds},
             {"loader_gpu_thread_loader_wait_seconds", gpu_->starved_seconds},
             {"loader_gpu_thread_full_wait_seconds", gpu_->full_seconds}};
#endif
  return figures;
}

CpuLoaderStats ImageFolderBatches::stats() const {
  CpuLoaderStats stats = loader_->stats();
#if GPUPERF_WITH_NVJPEG
  // The files the GPU decoder skipped (nvJPEG and libjpeg both refused them) count too.
  if (gpu_) {
    const std::lock_guard<std::mutex> lock(gpu_->mutex);
    const detail::GpuDecodeStats s = gpu_->total();
    stats.skipped += s.skipped;
    stats.first_skipped.insert(stats.first_skipped.end(), s.first_skipped.begin(),
                               s.first_skipped.end());
  }
#endif
  return stats;
}

}  // namespace gpuperf

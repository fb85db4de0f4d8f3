// nvJPEG's batched decode and the resize kernel (gpu_image_decoder.h). One decode a batch: the
// files the hardware takes go to it in one call, written as YCbCr planes (the chroma as the file
// stores it; the resize kernel upsamples and converts as libjpeg does); the rest one by one to
// nvJPEG's default backend as interleaved RGB; the samples' jobs travel to the device in one copy
// and one kernel writes the batch.
// Compiled only where the build found nvJPEG (GPUPERF_WITH_NVJPEG).
#if GPUPERF_WITH_NVJPEG
#include "train/gpu_image_decoder.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "train/image_kernels.h"

namespace gpuperf::detail {
namespace {

void check(nvjpegStatus_t status, const char* what) {
  if (status != NVJPEG_STATUS_SUCCESS) {
    throw Error(std::string("nvJPEG: ") + what + " failed (status " +
                std::to_string(static_cast<int>(status)) + ")");
  }
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(std::string("GpuImageDecoder: ") + what + ": " + cudaGetErrorString(status));
  }
}

NhwcDtype dtype_of(SampleType type) {
  switch (type) {
    case SampleType::kFloat16:
      return NhwcDtype::kHalf;
    case SampleType::kBFloat16:
      return NhwcDtype::kBFloat16;
    case SampleType::kFloat32:
      break;
  }
  return NhwcDtype::kFloat;
}

torch::ScalarType scalar_type_of(SampleType type) {
  switch (type) {
    case SampleType::kFloat16:
      return torch::kHalf;
    case SampleType::kBFloat16:
      return torch::kBFloat16;
    case SampleType::kFloat32:
      break;
  }
  return torch::kFloat;
}

// Decoded images start on 256-byte boundaries within the batch's buffer.
constexpr std::int64_t kImageAlignment = 256;
constexpr int kMaxReportedSkips = 16;

// nvJPEG's device memory from PyTorch's caching allocator, in the order of the stream nvJPEG
// names: its buffers count in the run's memory figures, and no cudaFree (which waits for the
// whole device, every training kernel queued) when nvJPEG resizes one. No change in speed beside
// training was measured against the default allocators.
int device_malloc(void* /*context*/, void** pointer, std::size_t size, cudaStream_t stream) {
  try {
    *pointer = c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(size, stream);
    return 0;
  } catch (...) {
    return 1;
  }
}

int device_free(void* /*context*/, void* pointer, std::size_t /*size*/, cudaStream_t /*stream*/) {
  try {
    c10::cuda::CUDACachingAllocator::raw_delete(pointer);
    return 0;
  } catch (...) {
    return 1;
  }
}

// nvJPEG's page-locked host memory: blocks are kept and reused once the stream that last used
// them has passed the point where they were given back (cudaFreeHost, like cudaFree, would wait
// for the whole device). Freed with the decoder.
class PinnedPool {
 public:
  PinnedPool() = default;
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;
  PinnedPool(PinnedPool&&) = delete;
  PinnedPool& operator=(PinnedPool&&) = delete;
  ~PinnedPool() {
    for (auto& [pointer, block] : blocks_) {
      if (block.released != nullptr) (void)cudaEventDestroy(block.released);
      (void)cudaFreeHost(pointer);
    }
  }

  static int allocate(void* context, void** pointer, std::size_t size, cudaStream_t /*stream*/) {
    auto& pool = *static_cast<PinnedPool*>(context);
    const std::lock_guard<std::mutex> lock(pool.mutex_);
    // The smallest free block that fits and whose last use has finished.
    auto best = pool.blocks_.end();
    for (auto it = pool.blocks_.begin(); it != pool.blocks_.end(); ++it) {
      const Block& block = it->second;
      if (block.in_use || block.size < size) continue;
      if (block.released != nullptr && cudaEventQuery(block.released) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
      if (best == pool.blocks_.end() || block.size < best->second.size) best = it;
    }
    if (best == pool.blocks_.end()) {
      void* fresh = nullptr;
      if (cudaHostAlloc(&fresh, size, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
      }
      best = pool.blocks_.emplace(fresh, Block{size}).first;
    }
    best->second.in_use = true;
    *pointer = best->first;
    return 0;
  }

  static int release(void* context, void* pointer, std::size_t /*size*/, cudaStream_t stream) {
    auto& pool = *static_cast<PinnedPool*>(context);
    const std::lock_guard<std::mutex> lock(pool.mutex_);
    const auto found = pool.blocks_.find(pointer);
    if (found == pool.blocks_.end()) return 1;
    Block& block = found->second;
    if (block.released == nullptr &&
        cudaEventCreateWithFlags(&block.released, cudaEventDisableTiming) != cudaSuccess) {
      (void)cudaGetLastError();
      block.released = nullptr;
    }
    if (block.released != nullptr) (void)cudaEventRecord(block.released, stream);
    block.in_use = false;
    return 0;
  }

 private:
  struct Block {
    std::size_t size = 0;
    bool in_use = false;
    cudaEvent_t released = nullptr;  // recorded on the stream nvJPEG gave the block back on
  };
  std::mutex mutex_;  // nvJPEG may allocate from threads of its own
  std::map<void*, Block> blocks_;
};

// Where one file of a batch is decoded, and in what form.
struct Placement {
  bool hardware = false;          // by the hardware decoder (else nvJPEG's default backend)
  bool planar = false;            // as YCbCr planes (else interleaved RGB)
  std::int32_t chroma_width = 0;  // the chroma planes' samples (planar only)
  std::int32_t chroma_height = 0;
  std::int32_t h_factor = 1;
  std::int32_t v_factor = 1;
};

std::int64_t aligned(std::int64_t bytes) {
  return (bytes + kImageAlignment - 1) / kImageAlignment * kImageAlignment;
}

// The bytes a decoded image takes in the batch's buffer, each part aligned: interleaved RGB
// (`first` only), or the luma plane (`first`) followed by two chroma planes of `chroma` each.
struct ImageBytes {
  std::int64_t first = 0;
  std::int64_t chroma = 0;
  [[nodiscard]] std::int64_t total() const { return first + 2 * chroma; }
};

ImageBytes image_bytes(const JpegHeader& header, const Placement& where) {
  const std::int64_t pixels = static_cast<std::int64_t>(header.width) * header.height;
  if (!where.planar) return {aligned(pixels * 3), 0};
  return {aligned(pixels),
          aligned(static_cast<std::int64_t>(where.chroma_width) * where.chroma_height)};
}

}  // namespace

struct GpuImageDecoder::State {
  c10::DeviceIndex device = 0;
  ImageTransformOptions transform;
  PinnedPool pinned_pool;  // outlives the handles below (declared first, destroyed last)
  nvjpegDevAllocatorV2_t device_allocator{&device_malloc, &device_free, nullptr};
  nvjpegPinnedAllocatorV2_t pinned_allocator{&PinnedPool::allocate, &PinnedPool::release,
                                             &pinned_pool};
  ImageTransformer fallback;          // libjpeg, for what nvJPEG refuses
  nvjpegHandle_t hardware = nullptr;  // NVJPEG_BACKEND_HARDWARE; null where the GPU has none
  nvjpegJpegState_t hardware_state = nullptr;
  nvjpegHandle_t general = nullptr;  // NVJPEG_BACKEND_DEFAULT
  nvjpegJpegState_t general_state = nullptr;
  nvjpegJpegStream_t parsed = nullptr;  // header parsing for the hardware's verdict
  int initialized_batch = -1;           // the hardware state's batch size
  bool strict = false;                  // a file both decoders refuse is an error
  GpuDecodeStats stats;

  State(c10::DeviceIndex index, const ImageTransformOptions& options, bool strict_files)
      : device(index), transform(options), fallback(options), strict(strict_files) {}

  ~State() {
    if (parsed != nullptr) (void)nvjpegJpegStreamDestroy(parsed);
    if (hardware_state != nullptr) (void)nvjpegJpegStateDestroy(hardware_state);
    if (general_state != nullptr) (void)nvjpegJpegStateDestroy(general_state);
    if (hardware != nullptr) (void)nvjpegDestroy(hardware);
    if (general != nullptr) (void)nvjpegDestroy(general);
  }

  State(const State&) = delete;
  State& operator=(const State&) = delete;
  State(State&&) = delete;
  State& operator=(State&&) = delete;

  // Where the hardware decoder takes this file (baseline, a sampling it knows), and how: its
  // YCbCr planes, when the resize kernel converts that chroma sampling as libjpeg does. A file it
  // takes with another sampling (4:1:1, 4:1:0) goes to the default backend.
  Placement place(const std::vector<std::uint8_t>& bytes) {
    Placement where;
    if (hardware == nullptr) return where;
    if (nvjpegJpegStreamParseHeader(hardware, bytes.data(), bytes.size(), parsed) !=
        NVJPEG_STATUS_SUCCESS) {
      return where;
    }
    int supported = -1;
    if (nvjpegDecodeBatchedSupported(hardware, parsed, &supported) != NVJPEG_STATUS_SUCCESS ||
        supported != 0) {
      return where;
    }
    nvjpegChromaSubsampling_t sampling = NVJPEG_CSS_UNKNOWN;
    unsigned components = 0;
    unsigned width = 0;
    unsigned height = 0;
    if (nvjpegJpegStreamGetComponentsNum(parsed, &components) != NVJPEG_STATUS_SUCCESS ||
        components != 3 ||
        nvjpegJpegStreamGetChromaSubsampling(parsed, &sampling) != NVJPEG_STATUS_SUCCESS ||
        nvjpegJpegStreamGetComponentDimensions(parsed, 1, &width, &height) !=
            NVJPEG_STATUS_SUCCESS) {
      return where;
    }
    switch (sampling) {
      case NVJPEG_CSS_444:
        break;
      case NVJPEG_CSS_422:
        where.h_factor = 2;
        break;
      case NVJPEG_CSS_420:
        where.h_factor = 2;
        where.v_factor = 2;
        break;
      case NVJPEG_CSS_440:
        where.v_factor = 2;
        break;
      default:
        return where;
    }
    where.hardware = true;
    where.planar = true;
    where.chroma_width = static_cast<std::int32_t>(width);
    where.chroma_height = static_cast<std::int32_t>(height);
    return where;
  }
};

GpuImageDecoder::GpuImageDecoder(c10::DeviceIndex device, const ImageTransformOptions& transform,
                                 bool strict)
    : state_(std::make_unique<State>(device, transform, strict)) {
  const c10::cuda::CUDAGuard guard(device);
  State& s = *state_;
  const auto create = [&](nvjpegBackend_t backend, nvjpegHandle_t* handle) {
    // The hardware decoder's pipeline keeps a batch's files on streams of nvJPEG's own and waits
    // on the host for each file's colour conversion, which queues behind the training kernels:
    // without it, ResNet-50 training on the files ran at 0.90-0.92 of its synthetic rate against
    // 0.61-0.74 (H200, docs/results/2026-12-04-h200-nvjpeg-planar).
    const unsigned flags = backend == NVJPEG_BACKEND_HARDWARE ? NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE
                                                              : NVJPEG_FLAGS_DEFAULT;
    return nvjpegCreateExV2(backend, &s.device_allocator, &s.pinned_allocator, flags, handle);
  };
  if (create(NVJPEG_BACKEND_HARDWARE, &s.hardware) == NVJPEG_STATUS_SUCCESS) {
    check(nvjpegJpegStateCreate(s.hardware, &s.hardware_state), "the hardware decoder's state");
    check(nvjpegJpegStreamCreate(s.hardware, &s.parsed), "a stream parser");
  } else {
    s.hardware = nullptr;
  }
  check(create(NVJPEG_BACKEND_DEFAULT, &s.general), "starting the decoder");
  check(nvjpegJpegStateCreate(s.general, &s.general_state), "the decoder's state");
}

GpuImageDecoder::~GpuImageDecoder() {
  if (state_) {
    const c10::cuda::CUDAGuard guard(state_->device);
    state_.reset();
  }
}

std::string GpuImageDecoder::backend() const {
  return state_->hardware != nullptr ? "hardware" : "GPU";
}

const GpuDecodeStats& GpuImageDecoder::stats() const { return state_->stats; }

std::pair<torch::Tensor, torch::Tensor> GpuImageDecoder::decode(const ImageBatch& batch,
                                                                void* stream_pointer) {
  State& s = *state_;
  const auto call_start = std::chrono::steady_clock::now();
  const c10::cuda::CUDAGuard guard(s.device);
  auto* stream = static_cast<cudaStream_t>(stream_pointer);
  const c10::cuda::CUDAStream torch_stream = c10::cuda::getStreamFromExternal(stream, s.device);
  const c10::cuda::CUDAStreamGuard stream_guard(torch_stream);
  const int n = batch.size;
  const std::int64_t crop = s.transform.crop_size;
  const std::size_t sample_bytes = s.transform.sample_bytes();
  const auto device = torch::Device(torch::kCUDA, s.device);
  const auto host_samples = [&](int i) {
    return static_cast<const char*>(batch.images) + sample_bytes * static_cast<std::size_t>(i);
  };

  // Where each file goes, and the decoded images' places in one buffer: interleaved RGB, or the
  // luma plane followed by the two chroma planes.
  std::vector<int> to_hardware;
  std::vector<int> to_general;
  std::vector<Placement> placement(static_cast<std::size_t>(n));
  std::vector<std::int64_t> offset(static_cast<std::size_t>(n), -1);
  std::int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const EncodedSample& e = batch.encoded[static_cast<std::size_t>(i)];
    if (e.on_host) continue;
    Placement& where = placement[static_cast<std::size_t>(i)];
    where = s.place(e.bytes);
    offset[static_cast<std::size_t>(i)] = total;
    total += image_bytes(e.header, where).total();
    (where.hardware ? to_hardware : to_general).push_back(i);
  }
  const torch::Tensor decoded =
      torch::empty({std::max<std::int64_t>(total, 1)}, torch::dtype(torch::kByte).device(device));
  torch::Tensor images = torch::empty(
      {n, crop, crop, 3}, torch::dtype(scalar_type_of(s.transform.type)).device(device));
  std::vector<std::int64_t> labels(batch.labels, batch.labels + n);
  s.stats.peak_buffer_bytes = std::max<std::int64_t>(
      s.stats.peak_buffer_bytes, total + static_cast<std::int64_t>(sample_bytes) * n);
  auto* base = static_cast<std::uint8_t*>(decoded.data_ptr());
  const auto image_of = [&](int i) {
    const EncodedSample& e = batch.encoded[static_cast<std::size_t>(i)];
    const Placement& where = placement[static_cast<std::size_t>(i)];
    nvjpegImage_t image{};
    image.channel[0] = base + offset[static_cast<std::size_t>(i)];
    if (!where.planar) {
      image.pitch[0] = static_cast<std::size_t>(e.header.width) * 3;
      return image;
    }
    image.pitch[0] = static_cast<std::size_t>(e.header.width);
    const ImageBytes bytes = image_bytes(e.header, where);
    image.channel[1] = image.channel[0] + bytes.first;
    image.channel[2] = image.channel[1] + bytes.chroma;
    image.pitch[1] = static_cast<std::size_t>(where.chroma_width);
    image.pitch[2] = static_cast<std::size_t>(where.chroma_width);
    return image;
  };

  at::cuda::CUDAEvent started(cudaEventDefault);
  at::cuda::CUDAEvent kernel_started(cudaEventDefault);
  at::cuda::CUDAEvent finished(cudaEventDefault);
  started.record(torch_stream);
  const auto submit_start = std::chrono::steady_clock::now();

  // The hardware's share in one call; if the call fails, those files go one by one.
  if (!to_hardware.empty()) {
    std::vector<const unsigned char*> data;
    std::vector<std::size_t> lengths;
    std::vector<nvjpegImage_t> outputs;
    for (int i : to_hardware) {
      const EncodedSample& e = batch.encoded[static_cast<std::size_t>(i)];
      data.push_back(e.bytes.data());
      lengths.push_back(e.bytes.size());
      outputs.push_back(image_of(i));
    }
    const int count = static_cast<int>(to_hardware.size());
    bool ok = true;
    if (count != s.initialized_batch) {
      ok = nvjpegDecodeBatchedInitialize(s.hardware, s.hardware_state, count, 1,
                                         NVJPEG_OUTPUT_YUV) == NVJPEG_STATUS_SUCCESS;
      s.initialized_batch = ok ? count : -1;
    }
    ok = ok && nvjpegDecodeBatched(s.hardware, s.hardware_state, data.data(), lengths.data(),
                                   outputs.data(), stream) == NVJPEG_STATUS_SUCCESS;
    if (ok) {
      s.stats.hardware_decoded += count;
    } else {
      to_general.insert(to_general.end(), to_hardware.begin(), to_hardware.end());
    }
  }

  // The rest one by one on the GPU backend; what it refuses, by libjpeg here; what libjpeg
  // refuses, replaced below.
  std::vector<char> bad(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<char>> host_decoded;  // libjpeg's samples, kept alive until the copy
  std::vector<std::pair<int, const char*>> host_copies;
  for (int i = 0; i < n; ++i) {
    if (batch.encoded[static_cast<std::size_t>(i)].on_host) {
      host_copies.emplace_back(i, host_samples(i));
      ++s.stats.host_decoded;
    }
  }
  for (int i : to_general) {
    const EncodedSample& e = batch.encoded[static_cast<std::size_t>(i)];
    nvjpegImage_t image = image_of(i);
    // libjpeg's fallback below is counted too: it is the decode thread's host work.
    // A file laid out for the hardware's planes (its batched call failed) keeps that layout.
    const nvjpegOutputFormat_t format =
        placement[static_cast<std::size_t>(i)].planar ? NVJPEG_OUTPUT_YUV : NVJPEG_OUTPUT_RGBI;
    if (nvjpegDecode(s.general, s.general_state, e.bytes.data(), e.bytes.size(), format, &image,
                     stream) == NVJPEG_STATUS_SUCCESS) {
      ++s.stats.gpu_decoded;
      continue;
    }
    try {
      std::vector<char> sample(sample_bytes);
      (void)s.fallback.transform(e.bytes.data(), e.bytes.size(), e.random, sample.data());
      host_decoded.push_back(std::move(sample));
      host_copies.emplace_back(i, host_decoded.back().data());
      offset[static_cast<std::size_t>(i)] = -1;
      ++s.stats.libjpeg_fallbacks;
    } catch (const BadImageError& error) {
      if (s.strict) throw error.with_path(e.path);
      bad[static_cast<std::size_t>(i)] = 1;
      offset[static_cast<std::size_t>(i)] = -1;
      ++s.stats.skipped;
      if (static_cast<int>(s.stats.first_skipped.size()) < kMaxReportedSkips) {
        s.stats.first_skipped.push_back({e.path, error.reason(), error.detail()});
      }
    }
  }

  s.stats.submit_seconds += seconds_since(submit_start);

  // One job per sample decoded on the GPU.
  std::vector<ImageResizeJob> jobs;
  jobs.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (offset[static_cast<std::size_t>(i)] < 0) continue;
    const EncodedSample& e = batch.encoded[static_cast<std::size_t>(i)];
    const Placement& where = placement[static_cast<std::size_t>(i)];
    const nvjpegImage_t image = image_of(i);
    ImageResizeJob job;
    job.pixels = image.channel[0];
    job.pitch = static_cast<std::int32_t>(image.pitch[0]);
    if (where.planar) {
      job.planar = 1;
      job.blue = image.channel[1];
      job.red = image.channel[2];
      job.chroma_pitch = static_cast<std::int32_t>(image.pitch[1]);
      job.chroma_width = where.chroma_width;
      job.chroma_height = where.chroma_height;
      job.chroma_h_factor = where.h_factor;
      job.chroma_v_factor = where.v_factor;
    }
    job.region_top = e.plan.source.top;
    job.region_left = e.plan.source.left;
    job.region_height = e.plan.source.height;
    job.region_width = e.plan.source.width;
    job.resized_height = e.plan.resized.height;
    job.resized_width = e.plan.resized.width;
    job.window_top = e.plan.crop.top;
    job.window_left = e.plan.crop.left;
    job.flip = e.plan.flip ? 1 : 0;
    job.sample = i;
    jobs.push_back(job);
  }
  const auto job_count = static_cast<std::int64_t>(jobs.size());
  const torch::Tensor host_jobs = torch::empty(
      {std::max<std::int64_t>(job_count, 1) * static_cast<std::int64_t>(sizeof(ImageResizeJob))},
      torch::dtype(torch::kByte).pinned_memory(true));
  if (job_count > 0) {
    std::memcpy(host_jobs.data_ptr(), jobs.data(), jobs.size() * sizeof(ImageResizeJob));
  }
  const torch::Tensor device_jobs = host_jobs.to(device, /*non_blocking=*/true);
  ImageNormalization normalization{};
  for (int c = 0; c < 3; ++c) {
    normalization.mean[c] = s.transform.mean[static_cast<std::size_t>(c)];
    normalization.std[c] = s.transform.std[static_cast<std::size_t>(c)];
  }
  kernel_started.record(torch_stream);
  check(resize_normalize_images(static_cast<const ImageResizeJob*>(device_jobs.data_ptr()),
                                static_cast<int>(job_count), static_cast<int>(crop), normalization,
                                dtype_of(s.transform.type), images.data_ptr(), stream),
        "the resize kernel");
  for (const auto& [i, source] : host_copies) {
    check(cudaMemcpyAsync(
              static_cast<char*>(images.data_ptr()) + sample_bytes * static_cast<std::size_t>(i),
              source, sample_bytes, cudaMemcpyHostToDevice, stream),
          "copying a sample decoded on the host");
  }
  // A skipped file's slot repeats the nearest good sample of the batch, with its label.
  for (int i = 0; i < n; ++i) {
    if (bad[static_cast<std::size_t>(i)] == 0) continue;
    int from = -1;
    for (int d = 1; d < n && from < 0; ++d) {
      for (int j : {i + d, i - d}) {
        if (j >= 0 && j < n && bad[static_cast<std::size_t>(j)] == 0) {
          from = j;
          break;
        }
      }
    }
    if (from < 0) throw Error("GpuImageDecoder: no file of the batch decodes");
    images[i].copy_(images[from], /*non_blocking=*/true);
    labels[static_cast<std::size_t>(i)] = labels[static_cast<std::size_t>(from)];
  }
  const torch::Tensor device_labels =
      torch::from_blob(labels.data(), {n}, torch::kLong).pin_memory().to(device, true);
  finished.record(torch_stream);
  const auto wait_start = std::chrono::steady_clock::now();
  finished.synchronize();  // the loader may reuse the batch's memory once this returns
  s.stats.wait_seconds += seconds_since(wait_start);
  s.stats.gpu_seconds += started.elapsed_time(finished) / 1000.0;
  s.stats.kernel_seconds += kernel_started.elapsed_time(finished) / 1000.0;
  s.stats.call_seconds += seconds_since(call_start);
  return {images, device_labels};
}

}  // namespace gpuperf::detail

#endif  // GPUPERF_WITH_NVJPEG

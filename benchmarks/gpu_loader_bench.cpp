// gpu_loader_bench: the input pipeline alone on a CUDA device (ImageFolderBatches, the batches
// as training takes them: normalised float32 NCHW channels_last on the GPU), decoded by nvJPEG
// on the GPU or by libjpeg-turbo on the CPU threads. Images per second over the wall clock, the
// device synchronised at the end; the GPU path's figures (decoders used, decode stream seconds).
// The peer is benchmarks/python/gpu_loader_peer.py (torchvision.io.decode_jpeg on the GPU).
//
//   gpu_loader_bench --data /tmp/fake-imagenet --decode gpu --threads 4 --batches 40
#include <CLI/CLI.hpp>
#include <torch/cuda.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

#include "gpuperf/base/choices.h"
#include "gpuperf/base/error.h"
#include "gpuperf/train/image_folder_batches.h"
#include "program.h"

int main(int argc, char** argv) try {
  CLI::App app("Measures the JPEG input pipeline feeding a GPU", "gpu_loader_bench");
  gpuperf::ImageFolderBatchOptions options;
  options.threads = 4;
  std::int64_t batches = 40;
  std::string decode = "gpu";
  bool validation = false;
  app.add_option("--data", options.folder, "An ImageNet-style folder (one sub-folder per class)")
      ->required();
  app.add_option("--decode", decode, "gpu (nvJPEG) or cpu (libjpeg-turbo on the threads)")
      ->capture_default_str();
  app.add_option("--threads", options.threads,
                 "Loader threads: read files (gpu) or decode them (cpu); 0: one per core")
      ->capture_default_str();
  app.add_option("--batch-size", options.batch_size, "Samples per batch")->capture_default_str();
  app.add_option("--batches", batches, "Batches to time (after two untimed batches)")
      ->capture_default_str();
  app.add_option("--prefetch-batches", options.prefetch_batches, "Batches prepared ahead")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Shuffle and crop seed")->capture_default_str();
  std::string host_share = "0";
  app.add_option("--host-decode-share", host_share,
                 "--decode gpu: the share of each batch the threads decode instead (0..1), or "
                 "auto (from 0.5, moved after each batch with the threads' and decoder's pace)")
      ->capture_default_str();
  app.add_option("--gpu-batches-per-call", options.gpu_batches_per_call,
                 "--decode gpu: loader batches nvJPEG decodes in one call (1..16)")
      ->capture_default_str();
  app.add_option("--gpu-decode-threads", options.gpu_decode_threads,
                 "--decode gpu: threads with nvJPEG handles of their own (1..8)")
      ->capture_default_str();
  app.add_flag("--val", validation, "Validation transform (Resize 256 + CenterCrop 224)");
  return gpuperf::program::run_program(app, argc, argv, [&] {
    gpuperf::require_setting(batches >= 1, "batches", batches, ">= 1");
    options.decode = gpuperf::parse_image_decode(decode, "decode");
    const auto share =
        gpuperf::program::parse_number_or_word(host_share, "auto", "host-decode-share");
    if (!share && options.decode == gpuperf::ImageDecode::kCpu) {
      throw gpuperf::ConfigError("host-decode-share", "auto", "applies to --decode gpu");
    }
    options.host_decode_share = share.value_or(gpuperf::program::kAutoHostShareStart);
    options.adaptive_host_share = !share;
    options.training = !validation;
    options.device = torch::Device(torch::kCUDA, 0);
    options.validate();  // a bad setting is named first, on any machine
    if (!torch::cuda::is_available()) throw gpuperf::ConfigError("this program needs a CUDA GPU");
    gpuperf::ImageFolderBatches loader(options);
    // Two untimed batches: threads and decoder started, files in the page cache.
    for (int i = 0; i < 2; ++i) (void)loader.next();
    torch::cuda::synchronize();
    const auto start = std::chrono::steady_clock::now();
    std::int64_t images = 0;
    double checksum = 0;
    for (std::int64_t b = 0; b < batches; ++b) {
      const gpuperf::Batch batch = loader.next();
      images += batch.input.size(0);
      if (b + 1 == batches) checksum = batch.input.sum().item<double>();  // and synchronises
    }
    torch::cuda::synchronize();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << loader.name() << "\n";
    std::cout << images << " images in " << wall << " s: " << static_cast<double>(images) / wall
              << " img/s; " << options.batch_size << " a batch, " << loader.threads()
              << " thread(s), last batch sum " << checksum << "\n";
    for (const auto& [name, value] : loader.gpu_figures()) {
      std::cout << "  " << name << " " << value << "\n";
    }
    const gpuperf::CpuLoaderStats stats = loader.stats();
    std::cout << "  loader_images_produced " << stats.images_decoded << ", handed over encoded "
              << stats.images_encoded << ", skipped " << stats.skipped << "\n";
    if (stats.samples_delivered > 0 && options.decode != gpuperf::ImageDecode::kCpu) {
      std::cout << "  loader_host_decode_share "
                << static_cast<double>(stats.host_share_slots) /
                       static_cast<double>(stats.samples_delivered)
                << " (last " << stats.host_share_now << ")\n";
    }
    return 0;
  });
} catch (...) {
  return gpuperf::program::setup_failed("gpu_loader_bench");
}

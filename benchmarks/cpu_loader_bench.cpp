// cpu_loader_bench: decode + transform throughput of the CPU input pipeline (input/cpu_loader.h)
// on a JPEG folder (e.g. one written by make_jpeg_folder): images per second over the wall clock
// and per busy core (images / the decode seconds summed over threads). Torch-free.
//
//   cpu_loader_bench --data /tmp/fake-imagenet --threads 1 --batches 20
//   cpu_loader_bench --data /tmp/fake-imagenet --threads 2 --val --no-dct-scaling
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <string>

#include "gpuperf/base/error.h"
#include "gpuperf/input/cpu_loader.h"
#include "gpuperf/input/image_folder.h"
#include "program.h"

int main(int argc, char** argv) try {
  CLI::App app("Measures the CPU JPEG input pipeline's throughput", "cpu_loader_bench");
  std::string data;
  gpuperf::CpuLoaderOptions options;
  options.threads = 1;
  options.batch_size = 64;
  std::int64_t batches = 20;
  bool validation = false;
  bool dct_scaling = true;
  std::string type = "float32";
  app.add_option("--data", data, "An ImageNet-style folder (one sub-folder per class)")->required();
  app.add_option("--threads", options.threads, "Decoding threads (0: one per core)")
      ->capture_default_str();
  app.add_option("--batch-size", options.batch_size, "Samples per batch")->capture_default_str();
  app.add_option("--batches", batches, "Batches to time (after one untimed batch)")
      ->capture_default_str();
  app.add_option("--prefetch-batches", options.prefetch_batches, "Batches prepared ahead")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Shuffle and crop seed")->capture_default_str();
  app.add_option("--type", type, "Output element type: float32|float16|bfloat16")
      ->capture_default_str();
  app.add_flag("--val", validation, "Validation transform (Resize 256 + CenterCrop 224)");
  app.add_flag("--strict", options.strict,
               "The first bad file is an error (exit 2) instead of being skipped and replaced");
  gpuperf::program::add_switch(app, "dct-scaling", dct_scaling,
                               "libjpeg decodes at 1/2, 1/4, 1/8 size where the crop allows");
  return gpuperf::program::run_program(app, argc, argv, [&] {
    gpuperf::require_setting(batches >= 1, "batches", batches, ">= 1");
    if (type == "float32") {
      options.transform.type = gpuperf::SampleType::kFloat32;
    } else if (type == "float16") {
      options.transform.type = gpuperf::SampleType::kFloat16;
    } else if (type == "bfloat16") {
      options.transform.type = gpuperf::SampleType::kBFloat16;
    } else {
      throw gpuperf::ConfigError("type", type, "must be float32, float16 or bfloat16");
    }
    options.transform.kind =
        validation ? gpuperf::TransformKind::kValidation : gpuperf::TransformKind::kTrain;
    options.transform.dct_scaling = dct_scaling;
    const gpuperf::ImageFolder folder = gpuperf::scan_image_folder(data);
    options.epochs =
        (batches + 1) /
            std::max<std::int64_t>(
                1, (static_cast<std::int64_t>(folder.samples.size()) / options.batch_size)) +
        1;
    options.validate();
    gpuperf::CpuLoader loader(folder.samples, options);
    // One untimed batch: threads started, files in the page cache for later epochs.
    if (loader.next() == nullptr) throw gpuperf::Error("no batch");
    const gpuperf::CpuLoaderStats before = loader.stats();
    const auto start = std::chrono::steady_clock::now();
    std::int64_t images = 0;
    for (std::int64_t b = 0; b < batches; ++b) {
      const gpuperf::ImageBatch* batch = loader.next();
      if (batch == nullptr) break;
      images += batch->size;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const gpuperf::CpuLoaderStats after = loader.stats();
    const double busy = std::accumulate(after.decode_seconds_per_thread.begin(),
                                        after.decode_seconds_per_thread.end(), 0.0) -
                        std::accumulate(before.decode_seconds_per_thread.begin(),
                                        before.decode_seconds_per_thread.end(), 0.0);
    const std::int64_t decoded = after.images_decoded - before.images_decoded;
    std::cout << folder.samples.size() << " files, " << folder.class_names.size() << " classes; "
              << (validation ? "validation" : "training") << " transform, " << type
              << ", DCT scaling " << (dct_scaling ? "on" : "off") << ", "
              << loader.stats().decode_seconds_per_thread.size() << " thread(s)\n";
    const auto images_d = static_cast<double>(images);
    const auto decoded_d = static_cast<double>(decoded);
    const auto decoded_total = static_cast<double>(after.images_decoded);
    std::cout << images << " images in " << wall << " s: " << images_d / wall
              << " img/s; per busy core " << decoded_d / busy << " img/s ("
              << 1e3 * busy / decoded_d << " ms per image)\n";
    std::cout << "mean file " << static_cast<double>(after.bytes_read) / decoded_total
              << " bytes, mean decoded pixels "
              << static_cast<double>(after.decoded_pixels) / decoded_total << "; host buffers "
              << static_cast<double>(after.host_bytes) / (1024.0 * 1024.0) << " MiB; skipped "
              << after.skipped << ", warnings " << after.warnings << "\n";
    for (const gpuperf::SkippedFile& f : after.first_skipped) {
      std::cout << "  skipped " << f.path << ": " << gpuperf::to_string(f.reason)
                << (f.detail.empty() ? "" : " (" + f.detail + ")") << "\n";
    }
    return 0;
  });
} catch (...) {
  return gpuperf::program::setup_failed("cpu_loader_bench");
}

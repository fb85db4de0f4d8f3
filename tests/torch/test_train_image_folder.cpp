#include "testing.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <thread>
#include <utility>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/input/cpu_loader.h"
#include "gpuperf/input/image_folder.h"
#include "gpuperf/input/jpeg_encoder.h"
#include "gpuperf/input/synthetic_data.h"
#include "gpuperf/train/image_folder_batches.h"
#include "gpuperf/train/training_run.h"

namespace {

// A fresh generated ImageNet-like folder under the temporary directory.
std::string make_folder(const std::string& name, int classes, int per_class, bool bad = false) {
  const auto root = std::filesystem::temp_directory_path() / ("gpuperf_test_" + name);
  std::filesystem::remove_all(root);
  gpuperf::SyntheticFolderOptions options;
  options.out = root.string();
  options.classes = classes;
  options.images_per_class = per_class;
  options.seed = 3;
  options.bad_files = bad;
  (void)gpuperf::write_synthetic_folder(options);
  return root.string();
}

// A quiet ResNet-50 run on `root` with SGD at lr 0.01 (TrainingRun's other defaults).
gpuperf::TrainingRun files_run(const std::string& device, const std::string& root,
                               std::int64_t batch_size, int loader_threads) {
  gpuperf::TrainingRun run;
  run.device = device;
  run.model = "resnet50";
  run.batch_size = batch_size;
  run.data = root;
  run.loader_threads = loader_threads;
  run.optimizer = gpuperf::OptimizerKind::kSgd;
  run.learning_rate = 0.01;
  run.quiet = true;
  return run;
}

// |GPU sample - CPU sample| per element in 8-bit levels: x * std * 255 undoes Normalize's scale.
torch::Tensor level_differences(const gpuperf::Batch& gpu, const gpuperf::Batch& cpu) {
  const torch::Tensor level =
      torch::tensor({0.229, 0.224, 0.225}, torch::kDouble).view({1, 3, 1, 1}) * 255.0;
  return ((gpu.input.cpu().to(torch::kDouble) - cpu.input.to(torch::kDouble)) * level).abs();
}

// The per-element differences `d` (8-bit levels) as the GPU decode tests judge them: the mean,
// the 99.9th percentile and the largest.
struct LevelDifferences {
  double mean = 0;
  double p999 = 0;
  double largest = 0;
};

LevelDifferences summarize(const torch::Tensor& differences) {
  const torch::Tensor d = differences.flatten();
  const auto k = static_cast<std::int64_t>(0.999 * static_cast<double>(d.numel()));
  return {d.mean().item<double>(),
          std::get<0>(d.kthvalue(std::max<std::int64_t>(k, 1))).item<double>(),
          d.max().item<double>()};
}

// A fresh folder under `root`: one class per chroma sampling, each with a file of every size
// (gpuperf's encoder, synthetic pictures seeded seed_step x class + file).
void write_chroma_folder(const std::filesystem::path& root,
                         const std::vector<gpuperf::JpegChroma>& samplings,
                         const std::vector<std::pair<int, int>>& sizes, std::uint64_t seed_step) {
  std::filesystem::remove_all(root);
  for (std::size_t c = 0; c < samplings.size(); ++c) {
    const auto folder = root / ("class_" + std::to_string(c));
    std::filesystem::create_directories(folder);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      gpuperf::JpegEncodeOptions encode;
      encode.chroma = samplings[c];
      const auto bytes = gpuperf::encode_jpeg(
          gpuperf::synthetic_image(sizes[k].first, sizes[k].second, seed_step * c + k), encode);
      std::ofstream(folder / ("image_" + std::to_string(k) + ".jpg"), std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()),
                 static_cast<std::streamsize>(bytes.size()));
    }
  }
}

// The same folder through libjpeg on the CPU (no DCT scaling: PIL's pixels), the reference, and
// through nvJPEG on the GPU.
struct DecoderPair {
  gpuperf::ImageFolderBatches reference;
  gpuperf::ImageFolderBatches decoded;
};

DecoderPair decoder_pair(const std::string& root, bool training, int batch_size,
                         std::uint64_t seed) {
  gpuperf::ImageFolderBatchOptions options;
  options.folder = root;
  options.batch_size = batch_size;
  options.threads = 2;
  options.seed = seed;
  options.training = training;
  options.decode = gpuperf::ImageDecode::kCpu;
  options.dct_scaling = false;
  gpuperf::ImageFolderBatchOptions on_gpu = options;
  on_gpu.device = torch::Device(torch::kCUDA, 0);
  on_gpu.decode = gpuperf::ImageDecode::kGpu;
  return {gpuperf::ImageFolderBatches(options), gpuperf::ImageFolderBatches(on_gpu)};
}

// The first `batches` batches of `root` decoded by nvJPEG on the GPU against libjpeg's on the CPU,
// the same files in the same slots: the differences in levels, summarised and printed after
// `what`.
LevelDifferences gpu_against_cpu(const std::string& root, bool training, int batch_size,
                                 std::uint64_t seed, int batches, const std::string& what) {
  auto [reference, decoded] = decoder_pair(root, training, batch_size, seed);
  CHECK(decoded.decode() == gpuperf::ImageDecode::kGpu);
  CHECK(decoded.name().find("decoded on the GPU by nvJPEG") != std::string::npos);
  std::vector<torch::Tensor> differences;
  for (int i = 0; i < batches; ++i) {
    const gpuperf::Batch c = reference.next();
    const gpuperf::Batch g = decoded.next();
    REQUIRE(g.input.is_cuda());
    CHECK(g.input.is_contiguous(at::MemoryFormat::ChannelsLast));
    REQUIRE(torch::equal(g.target.cpu(), c.target));  // the same files in the same slots
    CHECK(torch::isfinite(g.input).all().item<bool>());
    differences.push_back(level_differences(g, c));
  }
  const LevelDifferences d = summarize(torch::cat(differences));
  std::cout << what << " (" << (training ? "training" : "validation") << "): mean " << d.mean
            << " levels, 99.9th percentile " << d.p999 << ", largest " << d.largest << "\n";
  return d;
}

}  // namespace

TEST_CASE("image folder batches are channels_last float images with the folder's labels",
          "[train][data]") {
  const std::string root = make_folder("batches", 3, 4);
  gpuperf::ImageFolderBatchOptions options;
  options.folder = root;
  options.batch_size = 5;
  options.threads = 2;
  options.seed = 11;
  gpuperf::ImageFolderBatches batches(options);
  CHECK(batches.num_classes() == 3);
  CHECK(batches.files() == 12);
  CHECK(batches.name().find("12 JPEG files, 3 classes, training transform") != std::string::npos);
  for (int i = 0; i < 4; ++i) {  // past the first epoch's two full batches: epochs go on
    const gpuperf::Batch b = batches.next();
    REQUIRE(b.input.sizes() == torch::IntArrayRef({5, 3, 224, 224}));
    CHECK(b.input.is_contiguous(at::MemoryFormat::ChannelsLast));
    CHECK(b.input.scalar_type() == torch::kFloat);
    CHECK(b.target.min().item<std::int64_t>() >= 0);
    CHECK(b.target.max().item<std::int64_t>() < 3);
    // Normalised with ImageNet's mean and std: values of a few units around 0, not [0, 255].
    CHECK(b.input.abs().max().item<double>() < 3.0);
    CHECK(b.input.abs().max().item<double>() > 0.5);
  }
  CHECK(batches.stats().images_decoded >= 20);
  // The same seed gives the same batches (another loader, another thread count).
  options.threads = 1;
  gpuperf::ImageFolderBatches again(options);
  const gpuperf::Batch a = again.next();
  options.threads = 2;
  gpuperf::ImageFolderBatches other_threads(options);
  const gpuperf::Batch b = other_threads.next();
  CHECK(torch::equal(a.input, b.input));
  CHECK(torch::equal(a.target, b.target));
}

TEST_CASE("image folder batches on a GPU are the CPU's, copied from pinned buffers on a stream",
          "[train][data][gpu]") {
  GPUPERF_REQUIRE_GPU();
  const std::string root = make_folder("gpu_batches", 3, 6);
  gpuperf::ImageFolderBatchOptions options;
  options.folder = root;
  options.batch_size = 4;
  options.threads = 2;
  options.prefetch_batches = 1;  // two buffers: each is reused every other batch
  options.seed = 5;
  options.decode = gpuperf::ImageDecode::kCpu;
  gpuperf::ImageFolderBatches on_cpu(options);
  options.device = torch::Device(torch::kCUDA, 0);
  gpuperf::ImageFolderBatches on_gpu(options);
  CHECK(on_gpu.name().find("pinned buffers") != std::string::npos);
  // Work queued on the current stream ahead of each batch, and a copy of the batch made on that
  // stream right away: it must see the batch's bytes (the stream waits for the copy), and the
  // loader must not refill a buffer a copy still reads (next() waits for the last copy).
  const torch::Tensor busy = torch::randn({2048, 2048}, torch::device(options.device));
  std::vector<gpuperf::Batch> device_batches;
  for (int i = 0; i < 8; ++i) {  // past the first epoch's four batches
    for (int k = 0; k < 4; ++k) (void)busy.matmul(busy);
    const gpuperf::Batch b = on_gpu.next();
    REQUIRE(b.input.is_cuda());
    CHECK(b.input.is_contiguous(at::MemoryFormat::ChannelsLast));
    device_batches.push_back({b.input.clone(), b.target.clone()});
  }
  for (const gpuperf::Batch& d : device_batches) {
    const gpuperf::Batch c = on_cpu.next();
    CHECK(torch::equal(d.input.cpu(), c.input));
    CHECK(torch::equal(d.target.cpu(), c.target));
  }
}

TEST_CASE("JPEGs decoded by nvJPEG on the GPU match libjpeg's samples", "[train][data][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // A CUDA build without nvJPEG: SKIPPED too (the message matches the skip expression).
  if (!gpuperf::gpu_decode_available()) FAIL("SKIPPED: this test needs 1 CUDA GPU and nvJPEG");
  const std::string root = make_folder("gpu_decode", 3, 8);
  for (const bool training : {true, false}) {
    INFO((training ? "training" : "validation") << " transform");
    // Two epochs: every file twice, with other crops.
    const LevelDifferences d = gpu_against_cpu(root, training, 6, 7, 8, "nvJPEG vs libjpeg");
    // The same crop, flip, resampling and (from the YCbCr planes) chroma upsampling: a wrong box
    // or a mirrored sample would move the mean by tens of levels, nvJPEG's own RGB (0.39 and 11
    // on these files) the 99.9th percentile past 8. What remains is the decoders' IDCT.
    CHECK(d.mean <= 0.5);
    CHECK(d.p999 <= 8.0);
  }
}

TEST_CASE("nvJPEG's YCbCr planes of every chroma sampling give libjpeg's samples",
          "[train][data][gpu]") {
  GPUPERF_REQUIRE_GPU();
  if (!gpuperf::gpu_decode_available()) FAIL("SKIPPED: this test needs 1 CUDA GPU and nvJPEG");
  // One class per sampling (4:4:4, 4:2:2, 4:2:0, 4:4:0), odd and even sizes: the hardware
  // decoder writes the planes as the file stores them and the resize kernel upsamples and
  // converts them with libjpeg's arithmetic (ycbcr.h), so what is left is the decoders' IDCT.
  const auto root = std::filesystem::temp_directory_path() / "gpuperf_test_gpu_chroma";
  const std::vector<gpuperf::JpegChroma> samplings = {
      gpuperf::JpegChroma::k444, gpuperf::JpegChroma::k422, gpuperf::JpegChroma::k420,
      gpuperf::JpegChroma::k440};
  const std::vector<std::pair<int, int>> sizes = {{97, 75}, {224, 301}, {333, 250},
                                                  {64, 48}, {401, 299}, {250, 250}};
  write_chroma_folder(root, samplings, sizes, 10);
  auto [reference, decoded] = decoder_pair(root.string(), /*training=*/true, 8, 13);
  std::vector<std::vector<torch::Tensor>> differences(samplings.size());
  for (int i = 0; i < 6; ++i) {  // two epochs of 24 files
    const gpuperf::Batch c = reference.next();
    const gpuperf::Batch g = decoded.next();
    REQUIRE(torch::equal(g.target.cpu(), c.target));
    const torch::Tensor d = level_differences(g, c);
    for (std::int64_t j = 0; j < c.target.size(0); ++j) {
      differences[static_cast<std::size_t>(c.target[j].item<std::int64_t>())].push_back(d[j]);
    }
  }
  double hardware = 0;
  for (const auto& [name, value] : decoded.gpu_figures()) {
    if (name == "loader_gpu_hardware_decoded") hardware = value;
  }
  std::cout << "nvJPEG planes vs libjpeg: " << hardware << " files by the hardware decoder\n";
  for (std::size_t c = 0; c < samplings.size(); ++c) {
    INFO("sampling " << c << " (4:4:4, 4:2:2, 4:2:0, 4:4:0)");
    REQUIRE(!differences[c].empty());
    const LevelDifferences d = summarize(torch::stack(differences[c]));
    std::cout << "  sampling " << c << ": mean " << d.mean << " levels, 99.9th percentile "
              << d.p999 << ", largest " << d.largest << "\n";
    // nvJPEG's own upsampling gave a mean of 0.39 levels and a 99.9th percentile of 11 on 4:2:0
    // files; a chroma plane read at the wrong factor or pitch moves both by far more.
    CHECK(d.mean <= 0.5);
    CHECK(d.p999 <= 8.0);
  }
}

TEST_CASE("edge shapes (one pixel, strips) decode on the GPU as libjpeg decodes them",
          "[train][data][gpu]") {
  GPUPERF_REQUIRE_GPU();
  if (!gpuperf::gpu_decode_available()) FAIL("SKIPPED: this test needs 1 CUDA GPU and nvJPEG");
  // RandomResizedCrop falls back to its centre crop on strips and the filters clamp at both
  // ends; files the hardware decoder does not take go to nvJPEG's default backend. The CPU path
  // equals PIL + torchvision on these shapes (input_pixels_vs_pil).
  const auto root = std::filesystem::temp_directory_path() / "gpuperf_test_gpu_edges";
  const std::vector<gpuperf::JpegChroma> samplings = {gpuperf::JpegChroma::k420,
                                                      gpuperf::JpegChroma::k444};
  const std::vector<std::pair<int, int>> sizes = {{1, 1},   {2, 2},  {3, 400},
                                                  {400, 3}, {1, 50}, {17, 9}};
  write_chroma_folder(root, samplings, sizes, 20);
  for (const bool training : {true, false}) {
    INFO((training ? "training" : "validation") << " transform");
    // Two epochs of 12 files.
    const LevelDifferences d =
        gpu_against_cpu(root.string(), training, 4, 5, 6, "edge shapes, nvJPEG vs libjpeg");
    // A box off by a row or column of these strips, or a read past an edge, moves the mean by
    // tens of levels; nvJPEG's own RGB (the default backend) differs by about 0.4 on average.
    CHECK(d.mean <= 1.5);
  }
}

TEST_CASE("the GPU path meets the bad-input table without a crash or a wrong label",
          "[train][data][gpu]") {
  GPUPERF_REQUIRE_GPU();
  if (!gpuperf::gpu_decode_available()) FAIL("SKIPPED: this test needs 1 CUDA GPU and nvJPEG");
  const std::string root = make_folder("gpu_bad", 3, 8, /*bad=*/true);
  // One decode thread, and two taking the loader's batches in turn: the same order either way;
  // and one with the host share moving (the labels do not follow which side decodes a file).
  for (const auto& [decode_threads, adaptive] :
       std::vector<std::pair<int, bool>>{{1, false}, {2, false}, {1, true}}) {
    INFO(decode_threads << " decode threads, adaptive host share " << adaptive);
    gpuperf::ImageFolderBatchOptions options;
    options.folder = root;
    options.batch_size = 6;
    options.threads = 2;
    options.seed = 7;
    options.device = torch::Device(torch::kCUDA, 0);
    options.decode = gpuperf::ImageDecode::kGpu;
    options.gpu_decode_threads = decode_threads;
    options.adaptive_host_share = adaptive;
    gpuperf::ImageFolderBatches decoded(options);
    // The labels the loader gave each slot (the same loader, on the CPU): the GPU decoder keeps
    // them; a file only libjpeg's full decode refuses (damaged scan data) is decoded on the GPU,
    // as libjpeg decodes it with warnings where it reads only the crop's rows.
    gpuperf::CpuLoaderOptions loader;
    loader.batch_size = 6;
    loader.threads = 2;
    loader.seed = 7;
    loader.epochs = 2;
    loader.drop_last_batch = true;
    loader.output = gpuperf::LoaderOutput::kEncoded;
    gpuperf::CpuLoader expected(gpuperf::scan_image_folder(root).samples, loader);
    std::int64_t batches = 0;
    while (const gpuperf::ImageBatch* e = expected.next()) {
      const gpuperf::Batch g = decoded.next();
      if (adaptive) {
        // Which side decodes a file then follows timing, and a file with damaged scan data that
        // the host's full decode refuses but the GPU path decodes may be replaced by the next
        // good file: every label is still one of the folder's classes, the shape the same.
        REQUIRE(g.target.size(0) == e->size);
        CHECK(g.target.min().item<std::int64_t>() >= 0);
        CHECK(g.target.max().item<std::int64_t>() < gpuperf::scan_image_folder(root).num_classes());
      } else {
        REQUIRE(torch::equal(g.target.cpu(), torch::from_blob(e->labels, {e->size}, torch::kLong)));
      }
      CHECK(torch::isfinite(g.input).all().item<bool>());
      ++batches;
    }
    CHECK(batches >= 8);
    double host = 0;
    double on_gpu = 0;
    for (const auto& [name, value] : decoded.gpu_figures()) {
      if (name == "loader_gpu_hardware_decoded" || name == "loader_gpu_backend_decoded")
        on_gpu += value;
      if (name == "loader_gpu_host_decoded") host = value;
    }
    CHECK(on_gpu > 0);
    CHECK(host > 0);  // the grayscale, CMYK and progressive files went through libjpeg
    const gpuperf::CpuLoaderStats stats = decoded.stats();
    CHECK(stats.skipped >= expected.stats().skipped);
    // Every skipped file is named by its path, whichever side skipped it.
    REQUIRE_FALSE(stats.first_skipped.empty());
    for (const gpuperf::SkippedFile& f : stats.first_skipped) CHECK(f.path.rfind(root, 0) == 0);
  }
}

TEST_CASE(
    "a run on the GPU path records its adaptive share and decoder waits over the timed "
    "windows too",
    "[train][data][gpu]") {
  GPUPERF_REQUIRE_GPU();
  if (!gpuperf::gpu_decode_available()) FAIL("SKIPPED: this test needs 1 CUDA GPU and nvJPEG");
  const std::string root = make_folder("timed", 2, 16);
  gpuperf::TrainingRun run = files_run("cuda", root, 4, 2);
  run.decode = gpuperf::ImageDecode::kGpu;
  run.host_decode_share = 1;
  run.adaptive_host_decode_share = true;
  run.measure.warmup = 4;  // the least with a CUDA graph
  run.measure.steps_per_window = 2;
  run.measure.windows = 2;
  const gpuperf::RunRecord record = gpuperf::run_training(run);
  const auto& m = record.metrics;
  REQUIRE(m.count("loader_host_decode_share_timed") == 1);
  CHECK(m.at("loader_host_decode_share_timed") >= 0);
  CHECK(m.at("loader_host_decode_share_timed") <= 1);
  for (const char* name :
       {"loader_gpu_thread_loader_wait_seconds", "loader_gpu_thread_full_wait_seconds"}) {
    INFO(name);
    const std::string timed = std::string(name) + "_timed";
    REQUIRE(m.count(name) == 1);
    REQUIRE(m.count(timed) == 1);
    CHECK(m.at(timed) >= 0);
    CHECK(m.at(timed) <= m.at(name));
  }
}

TEST_CASE("image folder batches refuse bad options and empty folders, naming them",
          "[train][data]") {
  gpuperf::ImageFolderBatchOptions options;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::folder"));
  options.folder = make_folder("options", 2, 2);
  options.batch_size = 0;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::batch_size: must be >= 1"));
  options.batch_size = 2;
  options.gpu_batches_per_call = 0;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::gpu_batches_per_call: must be >= 1"));
  options.gpu_batches_per_call = 2;
  options.gpu_decode_threads = 9;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::gpu_decode_threads: must be >= 1 "
                                    "and <= 8") &&
                        Catch::Contains("9"));
  options.gpu_decode_threads = 1;
  // The GPU decoder's settings on the CPU path: refused, not ignored.
  options.decode = gpuperf::ImageDecode::kCpu;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::gpu_batches_per_call") &&
                        Catch::Contains("applies to decoding on the GPU"));
  options.gpu_batches_per_call = 1;
  options.gpu_decode_threads = 2;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::gpu_decode_threads") &&
                        Catch::Contains("applies to decoding on the GPU"));
  options.gpu_decode_threads = 1;
  options.decode = gpuperf::ImageDecode::kAuto;
  options.host_decode_share = 0.5;
  options.decode = gpuperf::ImageDecode::kCpu;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::host_decode_share") &&
                        Catch::Contains("applies to decoding on the GPU"));
  // decode auto on the CPU device decodes on the CPU: the same settings refused alike.
  options.decode = gpuperf::ImageDecode::kAuto;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::host_decode_share") &&
                        Catch::Contains("auto decodes on the CPU here"));
  options.host_decode_share = 0;
  options.adaptive_host_share = true;  // refused alike, on both paths, named as itself
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::adaptive_host_share") &&
                        Catch::Contains("auto decodes on the CPU here"));
  options.decode = gpuperf::ImageDecode::kCpu;
  options.host_decode_share = 0.5;  // where it would start: not what is reported
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::adaptive_host_share") &&
                        Catch::Contains("applies to decoding on the GPU"));
  options.decode = gpuperf::ImageDecode::kAuto;
  options.host_decode_share = 0;
  options.adaptive_host_share = false;
  options.gpu_decode_threads = 3;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::gpu_decode_threads") &&
                        Catch::Contains("auto decodes on the CPU here"));
  options.gpu_decode_threads = 1;
  options.rank = 2;
  options.world_size = 2;
  CHECK_THROWS_WITH(gpuperf::ImageFolderBatches(options),
                    Catch::Contains("ImageFolderBatchOptions::rank"));
  const auto empty = std::filesystem::temp_directory_path() / "gpuperf_test_empty_folder";
  std::filesystem::remove_all(empty);
  std::filesystem::create_directories(empty / "class_a");
  options.rank = 0;
  options.world_size = 1;
  options.folder = empty.string();
  CHECK_THROWS_AS(gpuperf::ImageFolderBatches(options), gpuperf::ConfigError);
}

TEST_CASE(
    "a training run on JPEG files records the loader, its bad files and the folder's "
    "classes",
    "[train][data]") {
  const std::string root = make_folder("run", 2, 3, /*bad=*/true);
  gpuperf::TrainingRun run = files_run("cpu", root, 2, 1);
  run.precision = gpuperf::Precision::kFp32;
  run.measure.warmup = 1;
  run.measure.steps_per_window = 1;
  run.measure.windows = 2;
  run.threads = 1;
  run.compare_synthetic = true;
  const gpuperf::RunRecord record = gpuperf::run_training(run);
  // The planted bad files sit in a class folder of their own.
  const std::int64_t classes = gpuperf::scan_image_folder(root).num_classes();
  CHECK(classes >= 2);
  CHECK(record.config.num_classes == classes);
  CHECK(record.config.data_source.rfind("image folder " + root, 0) == 0);
  CHECK(record.metrics.at("loader_threads") == 1);
  // What feeds the loader: the host's CPU and cores, in the record whatever the device.
  CHECK(!record.device.host_cpu.empty());
  CHECK(record.device.host_cores == static_cast<int>(std::thread::hardware_concurrency()));
  CHECK(record.metrics.at("loader_images_decoded") >= 6);
  CHECK(record.metrics.at("loader_images_per_second_per_core") > 0);
  CHECK(record.metrics.count("imagenet_90_epochs_seconds") == 1);
  // The same steps on synthetic batches, in the same record: their rate and the files' share.
  REQUIRE(record.metrics.count("synthetic_images_per_second") == 1);
  REQUIRE(record.metrics.count("data_to_synthetic_ratio") == 1);
  CHECK(record.metrics.at("synthetic_images_per_second") > 0);
  CHECK(record.metrics.at("data_to_synthetic_ratio") ==
        Approx(record.throughput.median / record.metrics.at("synthetic_images_per_second")));
  // The planted bad files were met or not, depending on the shuffle; either way each skip is
  // counted and named, never trained on.
  if (record.metrics.at("loader_skipped_files") > 0) {
    bool named = false;
    for (const std::string& w : record.warnings)
      named = named || w.find("bad image files") != std::string::npos;
    CHECK(named);
  }

  gpuperf::TrainingRun without_files = run;
  without_files.data.clear();
  CHECK_THROWS_WITH(gpuperf::run_training(without_files),
                    Catch::Contains("TrainingRun::compare_synthetic"));
  run.num_classes = 1;
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Contains("TrainingRun::num_classes 1: is below the " +
                                    std::to_string(classes) + " classes"));
  run.num_classes = 0;
  gpuperf::TrainingRun gpu_decode_on_cpu = run;
  gpu_decode_on_cpu.decode = gpuperf::ImageDecode::kGpu;
  CHECK_THROWS_WITH(gpuperf::run_training(gpu_decode_on_cpu),
                    Catch::Contains("TrainingRun::decode gpu"));
  without_files.compare_synthetic = false;
  without_files.decode = gpuperf::ImageDecode::kCpu;
  CHECK_THROWS_WITH(gpuperf::run_training(without_files),
                    Catch::Contains("TrainingRun::decode cpu: applies to runs on files"));
  run.model = "simple";
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Contains("TrainingRun::data") && Catch::Contains("3x224x224"));
}

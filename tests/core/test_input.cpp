// The CPU input pipeline (input/): the folder scan's labels, the epoch's shuffle and shards, the
// crop geometry's corner cases, every bad-input case, and the loader's determinism, ordering,
// memory and shutdown. The comparisons with torchvision and PIL are input_reference.py's.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/input/cpu_loader.h"
#include "gpuperf/input/geometry.h"
#include "gpuperf/input/image_file.h"
#include "gpuperf/input/image_folder.h"
#include "gpuperf/input/jpeg_decoder.h"
#include "gpuperf/input/jpeg_encoder.h"
#include "gpuperf/input/synthetic_data.h"
#include "gpuperf/input/ycbcr.h"

namespace {

namespace fs = std::filesystem;
using gpuperf::BadImageReason;

// A fresh folder under the system's temporary folder, removed at the end of the test.
struct TempFolder {
  fs::path path;
  explicit TempFolder(const std::string& name) {
    path = fs::temp_directory_path() /
           ("gpuperf-test-input-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempFolder() {
    std::error_code ec;
    // The planted unreadable file needs its permission back to be removed by a non-root user.
    for (auto it = fs::recursive_directory_iterator(path, ec); it != fs::end(it); ++it) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(path, ec);
  }
  [[nodiscard]] std::string operator/(const std::string& name) const {
    return (path / name).string();
  }
};

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> small_jpeg(int width, int height, std::uint64_t seed,
                                     gpuperf::JpegEncodeOptions options = {}) {
  return gpuperf::encode_jpeg(gpuperf::synthetic_image(width, height, seed), options);
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::vector<std::uint8_t> bytes;
  gpuperf::read_image_file(path, bytes);
  return bytes;
}

// A folder of `classes` x `per_class` small JPEGs of varied sizes.
gpuperf::ImageFolder small_folder(const TempFolder& root, int classes, int per_class) {
  for (int c = 0; c < classes; ++c) {
    for (int i = 0; i < per_class; ++i) {
      const int w = 120 + (c * 37 + i * 53) % 200;
      const int h = 100 + (c * 29 + i * 71) % 180;
      write_bytes(root / ("c" + std::to_string(c) + "/img" + std::to_string(i) + ".jpg"),
                  small_jpeg(w, h, static_cast<std::uint64_t>(c * 1000 + i)));
    }
  }
  return gpuperf::scan_image_folder(root.path.string());
}

gpuperf::CpuLoaderOptions small_loader_options() {
  gpuperf::CpuLoaderOptions o;
  o.batch_size = 5;
  o.threads = 1;
  o.prefetch_batches = 2;
  o.seed = 11;
  o.transform.crop_size = 32;
  o.transform.resize_size = 36;
  return o;
}

// Every batch of a loader run, copied: images as bytes, labels, sample ids.
struct Run {
  std::vector<std::vector<std::uint8_t>> images;
  std::vector<std::vector<std::int64_t>> labels;
  std::vector<std::vector<std::int64_t>> ids;
};

Run run_loader(const gpuperf::ImageFolder& folder, const gpuperf::CpuLoaderOptions& options) {
  gpuperf::CpuLoader loader(folder.samples, options);
  Run run;
  const std::size_t sample_bytes = options.transform.sample_bytes();
  while (const gpuperf::ImageBatch* b = loader.next()) {
    const auto* p = static_cast<const std::uint8_t*>(b->images);
    run.images.emplace_back(p, p + sample_bytes * static_cast<std::size_t>(b->size));
    run.labels.emplace_back(b->labels, b->labels + b->size);
    run.ids.push_back(b->sample_ids);
  }
  return run;
}

}  // namespace

// ---- Geometry
// ------------------------------------------------------------------------------------

TEST_CASE("CenterCrop rounds half offsets to even as Python's round does", "[input]") {
  // (257 - 224) / 2 = 16.5 -> 16; (259 - 224) / 2 = 17.5 -> 18.
  CHECK(gpuperf::center_crop_box(257, 259, 224) == gpuperf::CropBox{16, 18, 224, 224});
  CHECK(gpuperf::center_crop_box(256, 341, 224) == gpuperf::CropBox{16, 58, 224, 224});
  // Smaller than the crop: padded, the image starts (224 - 100) // 2 = 62 pixels in.
  CHECK(gpuperf::center_crop_box(100, 300, 224) == gpuperf::CropBox{-62, 38, 224, 224});
}

TEST_CASE("Resize of the shorter side truncates the longer one like torchvision", "[input]") {
  CHECK(gpuperf::resize_shorter_side(375, 500, 256).width == 341);  // 256 * 500 / 375 = 341.33
  CHECK(gpuperf::resize_shorter_side(375, 500, 256).height == 256);
  CHECK(gpuperf::resize_shorter_side(500, 333, 256).height == 384);  // 384.38
  CHECK(gpuperf::resize_shorter_side(300, 300, 256).width == 256);
}

TEST_CASE("RandomResizedCrop falls back to the centred image clipped to the ratio range",
          "[input]") {
  gpuperf::RandomResizedCropDraws never{};
  // Area draws of 1.0 with the widest ratio never fit a 10-pixel-high image.
  never.area.fill(0.999999);
  never.log_ratio.fill(0.999999);
  // 10 x 1000: ratio 100 > 4/3, so h = 10 and w = round(10 * 4/3) = 13, centred.
  CHECK(gpuperf::random_resized_crop_box(10, 1000, {}, never) == gpuperf::CropBox{0, 493, 10, 13});
  // 1000 x 10: ratio 0.01 < 3/4, so w = 10 and h = round(10 / 0.75) = 13.
  CHECK(gpuperf::random_resized_crop_box(1000, 10, {}, never) == gpuperf::CropBox{493, 0, 13, 10});
}

TEST_CASE("RandomResizedCrop boxes lie inside the image for any draws", "[input]") {
  gpuperf::SampleStream stream(3, 0, 0);
  for (int k = 0; k < 2000; ++k) {
    const int h = 1 + static_cast<int>(stream.next() % 900);
    const int w = 1 + static_cast<int>(stream.next() % 900);
    const auto draws = gpuperf::RandomResizedCropDraws::from(stream);
    const gpuperf::CropBox b = gpuperf::random_resized_crop_box(h, w, {}, draws);
    REQUIRE(b.top >= 0);
    REQUIRE(b.left >= 0);
    REQUIRE(b.height >= 1);
    REQUIRE(b.width >= 1);
    REQUIRE(b.top + b.height <= h);
    REQUIRE(b.left + b.width <= w);
  }
}

TEST_CASE("A sample's random stream depends only on seed, epoch and index", "[input]") {
  gpuperf::SampleStream a(1, 2, 3), b(1, 2, 3), other_index(1, 2, 4), other_epoch(1, 3, 3);
  // Fixed: SplitMix64 is specified, so this value holds on every platform.
  const std::uint64_t first = a.next();
  CHECK(first == 640054951876687254ULL);
  CHECK(b.next() == first);
  CHECK(other_index.next() != first);
  CHECK(other_epoch.next() != first);
  for (int i = 0; i < 1000; ++i) {
    const double u = a.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
  }
}

TEST_CASE("Bad transform options are refused naming the field", "[input]") {
  gpuperf::ImageTransformOptions o;
  o.crop_size = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("ImageTransformOptions::crop_size"));
  o = {};
  o.kind = gpuperf::TransformKind::kValidation;
  o.resize_size = 200;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("ImageTransformOptions::resize_size"));
  o = {};
  o.std[1] = 0;
  CHECK_THROWS_AS(o.validate(), gpuperf::ConfigError);
  o = {};
  o.crop.ratio_max = 0.5;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("RandomResizedCropOptions::ratio_max"));
}

TEST_CASE("Half and bfloat16 conversions round to nearest even", "[input]") {
  CHECK(gpuperf::float_to_half_bits(1.0f) == 0x3C00);
  CHECK(gpuperf::float_to_half_bits(-2.0f) == 0xC000);
  CHECK(gpuperf::float_to_half_bits(65504.0f) == 0x7BFF);
  CHECK(gpuperf::float_to_half_bits(1e6f) == 0x7C00);
  CHECK(gpuperf::float_to_half_bits(0.0f) == 0x0000);
  CHECK(gpuperf::float_to_half_bits(5.9604645e-8f) == 0x0001);       // the smallest subnormal
  CHECK(gpuperf::float_to_half_bits(1.0f + 1.0f / 2048) == 0x3C00);  // a tie: to even
  CHECK(gpuperf::float_to_half_bits(1.0f + 3.0f / 2048) == 0x3C02);  // a tie: to even
  CHECK(gpuperf::float_to_bfloat16_bits(1.0f) == 0x3F80);
  CHECK(gpuperf::float_to_bfloat16_bits(-2.5f) == 0xC020);
  CHECK(gpuperf::float_to_bfloat16_bits(1.0f + 1.0f / 256) == 0x3F80);  // a tie: to even
}

// ---- Shuffle and shards
// --------------------------------------------------------------------------

TEST_CASE("The epoch permutation is fixed by seed and epoch on every standard library", "[input]") {
  // std::mt19937_64's output is fixed by the standard and the Fisher-Yates is gpuperf's own.
  const std::vector<std::int64_t> expected{7, 2, 0, 8, 3, 9, 6, 1, 5, 4};
  CHECK(gpuperf::epoch_permutation(10, 1, 0) == expected);
  const auto p = gpuperf::epoch_permutation(1000, 5, 2);
  CHECK(p == gpuperf::epoch_permutation(1000, 5, 2));
  CHECK(p != gpuperf::epoch_permutation(1000, 5, 3));
  CHECK(p != gpuperf::epoch_permutation(1000, 6, 2));
  std::vector<std::int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("Ranks take disjoint equal shares that cover the epoch", "[input]") {
  for (const std::int64_t n : {12, 10, 7, 3}) {
    for (const bool drop_last : {false, true}) {
      gpuperf::EpochOptions o;
      o.seed = 9;
      o.epoch = 1;
      o.world_size = 4;
      o.drop_last = drop_last;
      std::map<std::int64_t, int> seen;
      std::size_t length = 0;
      for (int r = 0; r < 4; ++r) {
        o.rank = r;
        const auto mine = gpuperf::epoch_indices(n, o);
        if (r == 0) length = mine.size();
        REQUIRE(mine.size() == length);  // equal shares
        for (std::int64_t i : mine) ++seen[i];
      }
      const std::int64_t per_rank = gpuperf::samples_per_rank(n, 4, drop_last);
      CHECK(static_cast<std::int64_t>(length) == per_rank);
      if (drop_last) {
        CHECK(per_rank == n / 4);
        for (const auto& [index, count] : seen) CHECK(count == 1);  // no repeats
      } else {
        CHECK(per_rank == (n + 3) / 4);
        CHECK(static_cast<std::int64_t>(seen.size()) == n);  // every sample at least once
        int repeats = 0;
        for (const auto& [index, count] : seen) repeats += count - 1;
        CHECK(repeats == per_rank * 4 - n);  // padding repeats the order's first samples
      }
    }
  }
}

TEST_CASE("Sharding follows DistributedSampler's strided split", "[input]") {
  gpuperf::EpochOptions o;
  o.shuffle = false;
  o.world_size = 3;
  o.rank = 1;
  // range(10) padded to 12 with 0, 1: rank 1 takes positions 1, 4, 7, 10.
  CHECK(gpuperf::epoch_indices(10, o) == std::vector<std::int64_t>{1, 4, 7, 0});
  o.drop_last = true;  // cut to 9: positions 1, 4, 7
  CHECK(gpuperf::epoch_indices(10, o) == std::vector<std::int64_t>{1, 4, 7});
  o.rank = 3;
  CHECK_THROWS_WITH(gpuperf::epoch_indices(10, o), Catch::Contains("EpochOptions::rank"));
}

// ---- The folder scan
// -----------------------------------------------------------------------------

TEST_CASE("The folder scan labels classes as torchvision's ImageFolder does", "[input]") {
  TempFolder root("scan");
  const std::vector<std::uint8_t> jpeg = small_jpeg(16, 16, 1);
  // Case-sensitive byte order: "B" < "a" < "b".
  for (const char* file : {"b/2.jpg", "b/1.JPEG", "a/x.Jpg", "a/sub/y.jpeg", "a/sub-2/z.jpg",
                           "B/k.jpg", "b/notes.txt", "a/photo.png"}) {
    write_bytes(root / file, jpeg);
  }
  fs::create_directories(root.path / "empty");
  const gpuperf::ImageFolder data = gpuperf::scan_image_folder(root.path.string());
  CHECK(data.class_names == std::vector<std::string>{"B", "a", "b", "empty"});
  CHECK(data.empty_classes == std::vector<std::string>{"empty"});
  CHECK(data.other_files == 2);
  std::vector<std::string> got;
  for (const gpuperf::Sample& s : data.samples) {
    got.push_back(fs::path(s.path).lexically_relative(root.path).string() + " " +
                  std::to_string(s.label));
  }
  // sorted(os.walk()) orders the folders by path string: "a" < "a/sub" < "a/sub-2".
  CHECK(got == std::vector<std::string>{"B/k.jpg 0", "a/x.Jpg 1", "a/sub/y.jpeg 1",
                                        "a/sub-2/z.jpg 1", "b/1.JPEG 2", "b/2.jpg 2"});
}

TEST_CASE("A folder without JPEG files is a ConfigError naming the folder", "[input]") {
  TempFolder root("nojpeg");
  fs::create_directories(root.path / "only");
  write_bytes(root / "only/a.png", {1, 2, 3});
  CHECK_THROWS_WITH(gpuperf::scan_image_folder(root.path.string()),
                    Catch::Contains(root.path.string()) && Catch::Contains("no JPEG file"));
  CHECK_THROWS_AS(gpuperf::scan_image_folder((root.path / "missing").string()),
                  gpuperf::ConfigError);
}

TEST_CASE("A file list gives its own labels and refuses bad lines naming them", "[input]") {
  TempFolder root("list");
  {
    std::ofstream list(root / "train.txt");
    list << "# path label\n\nimages/a b.jpg 3\n/abs/c.jpg 0\n";
  }
  const gpuperf::ImageFolder data = gpuperf::read_file_list(root / "train.txt");
  REQUIRE(data.samples.size() == 2);
  CHECK(data.samples[0].path == root / "images/a b.jpg");
  CHECK(data.samples[0].label == 3);
  CHECK(data.samples[1].path == "/abs/c.jpg");
  CHECK(data.num_classes() == 4);
  {
    std::ofstream list(root / "bad.txt");
    list << "a.jpg 1\nb.jpg -1\n";
  }
  CHECK_THROWS_WITH(gpuperf::read_file_list(root / "bad.txt"),
                    Catch::Contains("bad.txt:2") && Catch::Contains("'-1'"));
  CHECK_THROWS_AS(gpuperf::read_file_list(root / "missing.txt"), gpuperf::IoError);
}

// ---- Bad input
// -----------------------------------------------------------------------------------

TEST_CASE("Every bad-input case is skipped with its reason or decodes", "[input]") {
  TempFolder root("bad");
  fs::create_directories(root.path / "class_0000");
  const auto planted = gpuperf::plant_bad_files(root / "class_0000", 5, root / "class_empty");
  REQUIRE(planted.size() >= 11);
  gpuperf::ImageTransformOptions options;
  options.crop_size = 32;
  gpuperf::ImageTransformer transformer(options);
  std::vector<float> out(32 * 32 * 3);
  for (const gpuperf::PlantedFile& file : planted) {
    INFO(file.case_name << ": " << file.path);
    std::optional<BadImageReason> reason;
    int warnings = 0;
    try {
      const std::vector<std::uint8_t> bytes = read_bytes(file.path);
      const auto report = transformer.transform(bytes.data(), bytes.size(),
                                                gpuperf::SampleRandom::draw(1, 0, 0), out.data());
      warnings = report.decode.warnings;
      CHECK(std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); }));
    } catch (const gpuperf::BadImageError& e) {
      reason = e.reason();
      // Named by the reader, or (from memory) without a path.
      CHECK((e.path().empty() || e.path() == file.path));
    }
    CHECK(reason == file.expected);
    if (file.expect_warnings) CHECK(warnings > 0);
  }
  // The empty class keeps its label slot.
  const gpuperf::ImageFolder data = gpuperf::scan_image_folder(root.path.string());
  CHECK(data.empty_classes == std::vector<std::string>{"class_empty"});
}

TEST_CASE("A file without tables of its own decodes as from a fresh decoder, whatever came first",
          "[input]") {
  // Baseline files carry the standard Huffman tables (libjpeg's default); a progressive file's
  // are optimised for it. A file without a DHT segment takes the standard tables, as libjpeg-turbo
  // and PIL do for Motion-JPEG frames; one without a DQT segment has nothing to decode with.
  const std::vector<std::uint8_t> base = small_jpeg(64, 48, 11);
  const std::vector<std::uint8_t> no_dht = gpuperf::without_jpeg_segments(base, 0xC4);
  const std::vector<std::uint8_t> no_dqt = gpuperf::without_jpeg_segments(base, 0xDB);
  REQUIRE(no_dht.size() < base.size());
  REQUIRE(no_dqt.size() < base.size());
  gpuperf::JpegEncodeOptions progressive;
  progressive.progressive = true;
  const std::vector<std::uint8_t> before = small_jpeg(64, 48, 12, progressive);
  gpuperf::ImageTransformOptions options;
  options.crop_size = 32;
  const gpuperf::SampleRandom random = gpuperf::SampleRandom::draw(3, 0, 0);
  std::vector<float> expected(options.sample_bytes() / sizeof(float));
  std::vector<float> out(expected.size());
  gpuperf::ImageTransformer fresh(options);
  (void)fresh.transform(base.data(), base.size(), random, expected.data());
  gpuperf::ImageTransformer used(options);
  (void)used.transform(before.data(), before.size(), random, out.data());
  (void)used.transform(no_dht.data(), no_dht.size(), random, out.data());
  CHECK(out == expected);
  try {
    (void)used.transform(no_dqt.data(), no_dqt.size(), random, out.data());
    FAIL("a file without quantization tables decoded");
  } catch (const gpuperf::BadImageError& e) {
    CHECK(e.reason() == BadImageReason::kCorrupt);
    CHECK_THAT(e.what(), Catch::Contains("quantization table"));
  }
}

TEST_CASE("The decoder names what it refuses", "[input]") {
  const std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0};
  CHECK_THROWS_WITH(gpuperf::check_jpeg_signature(png.data(), png.size()),
                    Catch::Contains("not a JPEG") && Catch::Contains("PNG signature"));
  const std::vector<std::uint8_t> jpeg = small_jpeg(64, 48, 2);
  gpuperf::DecodeOptions limit;
  limit.max_pixels = 64 * 48 - 1;
  try {
    (void)gpuperf::read_jpeg_header(jpeg.data(), jpeg.size(), limit);
    FAIL("no error");
  } catch (const gpuperf::BadImageError& e) {
    CHECK(e.reason() == BadImageReason::kTooManyPixels);
    CHECK_THAT(e.what(), Catch::Contains("64 x 48"));
  }
  const gpuperf::JpegHeader h = gpuperf::read_jpeg_header(jpeg.data(), jpeg.size());
  CHECK(h.width == 64);
  CHECK(h.height == 48);
  CHECK(h.color_space == gpuperf::JpegColorSpace::kYCbCr);
}

TEST_CASE("A truncated JPEG is refused unless accept_truncated keeps it", "[input]") {
  const std::vector<std::uint8_t> jpeg = small_jpeg(200, 150, 3);
  const std::vector<std::uint8_t> cut(jpeg.begin(), jpeg.begin() + jpeg.size() / 2);
  CHECK_THROWS_AS(gpuperf::decode_jpeg(cut.data(), cut.size()), gpuperf::BadImageError);
  gpuperf::DecodeOptions keep;
  keep.accept_truncated = true;
  gpuperf::DecodeReport report;
  const gpuperf::RgbImage image = gpuperf::decode_jpeg(cut.data(), cut.size(), keep, &report);
  CHECK(image.width == 200);
  CHECK(report.truncated);
  CHECK(report.warnings >= 1);
  // Bytes after the end marker (some cameras append data) are not a truncation.
  std::vector<std::uint8_t> trailing = jpeg;
  trailing.insert(trailing.end(), {0x12, 0xFF, 0xDA, 0x00, 0x33});
  CHECK(gpuperf::decode_jpeg(trailing.data(), trailing.size()).width == 200);
  // An end marker inside a segment (an EXIF thumbnail's) does not hide a truncation.
  std::vector<std::uint8_t> thumbnail = {0xFF, 0xD8, 0xFF, 0xE1, 0x00,
                                         0x06, 0xFF, 0xD9, 0x00, 0x00};
  thumbnail.insert(thumbnail.end(), cut.begin() + 2, cut.end());
  CHECK_THROWS_AS(gpuperf::decode_jpeg(thumbnail.data(), thumbnail.size()), gpuperf::BadImageError);
  // The transform refuses it the same way whatever the crop (the end marker decides).
  gpuperf::ImageTransformOptions options;
  options.crop_size = 16;
  gpuperf::ImageTransformer transformer(options);
  std::vector<float> out(16 * 16 * 3);
  for (std::uint64_t i = 0; i < 5; ++i) {
    CHECK_THROWS_AS(transformer.transform(cut.data(), cut.size(),
                                          gpuperf::SampleRandom::draw(0, 0, i), out.data()),
                    gpuperf::BadImageError);
  }
}

TEST_CASE("Grayscale, CMYK and YCCK JPEGs decode to RGB like PIL's convert", "[input]") {
  const gpuperf::RgbImage image = gpuperf::synthetic_image(40, 30, 4);
  gpuperf::JpegEncodeOptions gray;
  gray.color = gpuperf::JpegEncodeColor::kGrayscale;
  const auto g = gpuperf::encode_jpeg(image, gray);
  const gpuperf::RgbImage decoded = gpuperf::decode_jpeg(g.data(), g.size());
  for (std::size_t i = 0; i < decoded.pixels.size(); i += 3) {
    REQUIRE(decoded.pixels[i] == decoded.pixels[i + 1]);
    REQUIRE(decoded.pixels[i] == decoded.pixels[i + 2]);
  }
  gpuperf::JpegEncodeOptions cmyk;
  cmyk.color = gpuperf::JpegEncodeColor::kCMYK;
  cmyk.quality = 100;
  const auto c = gpuperf::encode_jpeg(image, cmyk);
  CHECK(gpuperf::read_jpeg_header(c.data(), c.size()).adobe_marker);
  const gpuperf::RgbImage back = gpuperf::decode_jpeg(c.data(), c.size());
  // Quality 100 with the colour conversion: within a few levels of the original on average.
  double total = 0;
  for (std::size_t i = 0; i < back.pixels.size(); ++i) {
    total += std::abs(static_cast<int>(back.pixels[i]) - static_cast<int>(image.pixels[i]));
  }
  CHECK(total / static_cast<double>(back.pixels.size()) < 4.0);
  // YCCK (Adobe transform 2): libjpeg converts it to the same CMYK. Its chroma is subsampled, so
  // a smooth picture (input_pixels_vs_pil's PIL has no YCCK writer; the decode of this file was
  // checked equal to PIL's by hand).
  gpuperf::RgbImage smooth;
  smooth.width = 40;
  smooth.height = 30;
  for (int y = 0; y < 30; ++y) {
    for (int x = 0; x < 40; ++x) {
      smooth.pixels.insert(smooth.pixels.end(), {static_cast<std::uint8_t>(40 + 4 * x),
                                                 static_cast<std::uint8_t>(30 + 5 * y), 128});
    }
  }
  cmyk.color = gpuperf::JpegEncodeColor::kYCCK;
  const auto y = gpuperf::encode_jpeg(smooth, cmyk);
  CHECK(gpuperf::read_jpeg_header(y.data(), y.size()).color_space ==
        gpuperf::JpegColorSpace::kYCCK);
  const gpuperf::RgbImage from_ycck = gpuperf::decode_jpeg(y.data(), y.size());
  total = 0;
  for (std::size_t i = 0; i < from_ycck.pixels.size(); ++i) {
    total += std::abs(static_cast<int>(from_ycck.pixels[i]) - static_cast<int>(smooth.pixels[i]));
  }
  CHECK(total / static_cast<double>(from_ycck.pixels.size()) < 4.0);
}

TEST_CASE("YCbCr planes through ycbcr.h's upsampling and conversion give libjpeg's RGB exactly",
          "[input]") {
  using gpuperf::JpegChroma;
  const std::vector<std::pair<JpegChroma, std::array<int, 2>>> samplings = {
      {JpegChroma::k444, {1, 1}},
      {JpegChroma::k422, {2, 1}},
      {JpegChroma::k420, {2, 2}},
      {JpegChroma::k440, {1, 2}}};
  // Odd and even sizes, and planes of one and two chroma samples (libjpeg replicates those).
  const std::vector<std::array<int, 2>> sizes = {{37, 23}, {64, 48}, {17, 9}, {5, 4},
                                                 {4, 3},   {3, 1},   {2, 2},  {1, 1}};
  std::uint64_t seed = 100;
  for (const auto& [chroma, factors] : samplings) {
    for (const auto& [width, height] : sizes) {
      for (const bool progressive : {false, true}) {
        gpuperf::JpegEncodeOptions options;
        options.chroma = chroma;
        options.progressive = progressive;
        options.quality = 75;
        const auto bytes = small_jpeg(width, height, ++seed, options);
        const gpuperf::RgbImage reference = gpuperf::decode_jpeg(bytes.data(), bytes.size());
        const gpuperf::YCbCrPlanes planes = gpuperf::decode_jpeg_planes(bytes.data(), bytes.size());
        CAPTURE(static_cast<int>(chroma), width, height, progressive);
        REQUIRE(planes.width == width);
        REQUIRE(planes.height == height);
        REQUIRE(planes.planes[0].h_factor == 1);
        REQUIRE(planes.planes[0].width == width);
        for (int c = 1; c < 3; ++c) {
          const gpuperf::YCbCrPlane& p = planes.planes[static_cast<std::size_t>(c)];
          REQUIRE(p.h_factor == factors[0]);
          REQUIRE(p.v_factor == factors[1]);
          REQUIRE(p.width == (width + factors[0] - 1) / factors[0]);
          REQUIRE(p.height == (height + factors[1] - 1) / factors[1]);
        }
        const gpuperf::RgbImage rgb = gpuperf::planes_to_rgb(planes);
        REQUIRE(rgb.pixels.size() == reference.pixels.size());
        std::size_t differing = 0;
        std::size_t first = 0;
        for (std::size_t i = 0; i < rgb.pixels.size(); ++i) {
          if (rgb.pixels[i] != reference.pixels[i] && differing++ == 0) first = i;
        }
        CAPTURE(first / 3 % static_cast<std::size_t>(width), first / 3 / width);
        CHECK(differing == 0);
      }
    }
  }
  // The filter matters: repeating each chroma sample instead (what a plain upsampler does)
  // misses libjpeg's pixels on a 4:2:0 image, so the comparison above can fail.
  gpuperf::JpegEncodeOptions options;
  options.chroma = JpegChroma::k420;
  const auto bytes = small_jpeg(37, 23, 7, options);
  const gpuperf::RgbImage reference = gpuperf::decode_jpeg(bytes.data(), bytes.size());
  const gpuperf::YCbCrPlanes planes = gpuperf::decode_jpeg_planes(bytes.data(), bytes.size());
  std::size_t differing = 0;
  for (int y = 0; y < planes.height; ++y) {
    for (int x = 0; x < planes.width; ++x) {
      const auto sample = [&](int c) {
        const gpuperf::YCbCrPlane& p = planes.planes[static_cast<std::size_t>(c)];
        return static_cast<int>(p.samples[static_cast<std::size_t>(y / 2) * p.width + x / 2]);
      };
      std::uint8_t rgb[3];
      gpuperf::ycbcr_to_rgb(planes.planes[0].samples[static_cast<std::size_t>(y) * 37 + x],
                            sample(1), sample(2), rgb);
      const std::size_t at = (static_cast<std::size_t>(y) * 37 + x) * 3;
      for (int c = 0; c < 3; ++c) differing += rgb[c] != reference.pixels[at + c] ? 1 : 0;
    }
  }
  CHECK(differing > 0);
}

TEST_CASE("A JPEG's end marker is found after appended bytes and missing from a cut file",
          "[input]") {
  auto bytes = small_jpeg(40, 30, 9);
  CHECK(gpuperf::has_jpeg_end_marker(bytes.data(), bytes.size()));
  auto cut = bytes;
  cut.resize(cut.size() - 40);
  CHECK_FALSE(gpuperf::has_jpeg_end_marker(cut.data(), cut.size()));
  // Some cameras append data (here 200 bytes holding a start-of-scan marker) after the end.
  auto appended = bytes;
  appended.insert(appended.end(), 200, 0x5A);
  appended[bytes.size() + 100] = 0xFF;
  appended[bytes.size() + 101] = 0xDA;
  CHECK(gpuperf::has_jpeg_end_marker(appended.data(), appended.size()));
}

TEST_CASE("The planar decode refuses what it cannot split, naming why", "[input]") {
  gpuperf::JpegEncodeOptions gray;
  gray.color = gpuperf::JpegEncodeColor::kGrayscale;
  const auto g = small_jpeg(16, 16, 3, gray);
  try {
    (void)gpuperf::decode_jpeg_planes(g.data(), g.size());
    FAIL("a grayscale JPEG was split into YCbCr planes");
  } catch (const gpuperf::BadImageError& e) {
    CHECK(e.reason() == gpuperf::BadImageReason::kUnsupported);
  }
  const auto bytes = small_jpeg(16, 16, 4);
  gpuperf::YCbCrPlanes planes = gpuperf::decode_jpeg_planes(bytes.data(), bytes.size());
  planes.planes[2].width += 1;
  CHECK_THROWS_WITH(gpuperf::planes_to_rgb(planes), Catch::Contains("chroma plane 2"));
  auto cut = bytes;
  cut.resize(cut.size() / 2);
  CHECK_THROWS_AS(gpuperf::decode_jpeg_planes(cut.data(), cut.size()), gpuperf::BadImageError);
}

// ---- The loader
// ----------------------------------------------------------------------------------

TEST_CASE("The loader's batches are the same for any thread count and prefetch depth", "[input]") {
  TempFolder root("determinism");
  const gpuperf::ImageFolder folder = small_folder(root, 3, 7);  // 21 samples
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.epochs = 2;
  const Run one = run_loader(folder, o);
  o.threads = 3;
  o.prefetch_batches = 1;
  const Run three = run_loader(folder, o);
  o.threads = 4;
  o.prefetch_batches = 4;
  o.transform.kind = gpuperf::TransformKind::kTrain;
  const Run four = run_loader(folder, o);
  REQUIRE(one.images.size() == 10);  // ceil(21 / 5) = 5 batches, 2 epochs
  CHECK(one.images == three.images);
  CHECK(one.images == four.images);
  CHECK(one.labels == three.labels);
  CHECK(one.ids == four.ids);
  CHECK(one.images.back().size() == o.transform.sample_bytes());  // 21 = 4 x 5 + 1
  // Labels are the samples' own; the second epoch is another order.
  for (std::size_t b = 0; b < one.ids.size(); ++b) {
    for (std::size_t i = 0; i < one.ids[b].size(); ++i) {
      CHECK(one.labels[b][i] == folder.samples[static_cast<std::size_t>(one.ids[b][i])].label);
    }
  }
  CHECK(one.ids[0] != one.ids[5]);
}

TEST_CASE("The loader matches the one-sample transform for the same draws", "[input]") {
  TempFolder root("single");
  const gpuperf::ImageFolder folder = small_folder(root, 2, 3);
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.shuffle = false;
  o.batch_size = 6;
  o.transform.type = gpuperf::SampleType::kFloat16;
  const Run run = run_loader(folder, o);
  gpuperf::ImageTransformer transformer(o.transform);
  std::vector<std::uint16_t> out(32 * 32 * 3);
  for (int i = 0; i < 6; ++i) {
    const auto bytes = read_bytes(folder.samples[static_cast<std::size_t>(i)].path);
    (void)transformer.transform(bytes.data(), bytes.size(),
                                gpuperf::SampleRandom::draw(o.seed, 0, i), out.data());
    const auto* got = run.images[0].data() + o.transform.sample_bytes() * i;
    CHECK(std::memcmp(got, out.data(), o.transform.sample_bytes()) == 0);
  }
}

TEST_CASE("Bad files are replaced by good ones and never give a wrong label", "[input]") {
  TempFolder root("loader-bad");
  gpuperf::ImageFolder folder = small_folder(root, 2, 4);
  const auto planted = gpuperf::plant_bad_files(root / "c1", 7);
  folder = gpuperf::scan_image_folder(root.path.string());
  std::set<std::string> bad;
  for (const auto& p : planted) {
    if (p.expected) bad.insert(p.path);
  }
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.threads = 2;
  o.epochs = 2;
  gpuperf::CpuLoader loader(folder.samples, o);
  std::int64_t substituted = 0;
  while (const gpuperf::ImageBatch* b = loader.next()) {
    substituted += b->substituted;
    for (int i = 0; i < b->size; ++i) {
      const gpuperf::Sample& s = folder.samples[static_cast<std::size_t>(b->sample_ids[i])];
      REQUIRE(bad.count(s.path) == 0);
      REQUIRE(b->labels[i] == s.label);
    }
  }
  const gpuperf::CpuLoaderStats stats = loader.stats();
  CHECK(stats.skipped >= static_cast<std::int64_t>(bad.size()) * 2);  // each epoch meets each
  CHECK(substituted >= 1);
  CHECK(substituted <= stats.skipped);  // a slot may pass several bad files
  REQUIRE_FALSE(stats.first_skipped.empty());
  CHECK(bad.count(stats.first_skipped.front().path) == 1);
  CHECK(stats.warnings > 0);  // the corrupt scan data decodes with warnings
}

TEST_CASE("In encoded mode good files come as bytes and plans, the rest decoded as before",
          "[input]") {
  TempFolder root("encoded");
  small_folder(root, 2, 4);
  const auto planted = gpuperf::plant_bad_files(root / "c1", 7);
  const gpuperf::ImageFolder folder = gpuperf::scan_image_folder(root.path.string());
  std::map<std::string, std::string> case_of;
  for (const auto& p : planted) case_of[p.path] = p.case_name;
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.threads = 2;
  o.epochs = 2;
  gpuperf::CpuLoader pixels(folder.samples, o);
  o.output = gpuperf::LoaderOutput::kEncoded;
  gpuperf::CpuLoader encoded(folder.samples, o);
  gpuperf::ImageTransformer transformer(o.transform);
  const std::size_t sample_bytes = o.transform.sample_bytes();
  std::vector<std::uint8_t> out(sample_bytes);
  std::set<std::string> on_host;
  std::int64_t handed_over = 0;
  while (const gpuperf::ImageBatch* e = encoded.next()) {
    const gpuperf::ImageBatch* p = pixels.next();
    REQUIRE(p != nullptr);
    // The same files in the same slots with the same labels (bad files replaced alike).
    REQUIRE(e->sample_ids == p->sample_ids);
    REQUIRE(std::equal(e->labels, e->labels + e->size, p->labels));
    REQUIRE(e->encoded.size() == static_cast<std::size_t>(o.batch_size));
    for (int i = 0; i < e->size; ++i) {
      const auto slot = static_cast<std::size_t>(i);
      const gpuperf::EncodedSample& sample = e->encoded[slot];
      const std::string& path = folder.samples[static_cast<std::size_t>(e->sample_ids[slot])].path;
      const auto* expected = static_cast<const std::uint8_t*>(p->images) + sample_bytes * slot;
      INFO(path);
      // What a GPU decoder needs reproduces the CPU sample exactly through libjpeg.
      const std::int64_t position = e->index_in_epoch * o.batch_size + i;
      CHECK(sample.path == path);
      CHECK(sample.random.flip == gpuperf::SampleRandom::draw(o.seed, e->epoch, position).flip);
      if (sample.on_host) {
        on_host.insert(case_of.count(path) != 0 ? case_of[path] : path);
        CHECK(std::memcmp(static_cast<const std::uint8_t*>(e->images) + sample_bytes * slot,
                          expected, sample_bytes) == 0);
        continue;
      }
      ++handed_over;
      CHECK(sample.bytes == read_bytes(path));
      CHECK(sample.header.components == 3);
      CHECK_FALSE(sample.header.progressive);
      const gpuperf::SamplePlan plan = gpuperf::sample_plan(
          sample.header.height, sample.header.width, o.transform, sample.random);
      CHECK(sample.plan.source == plan.source);
      CHECK(sample.plan.flip == plan.flip);
      (void)transformer.transform(sample.bytes.data(), sample.bytes.size(), sample.random,
                                  out.data());
      CHECK(std::memcmp(out.data(), expected, sample_bytes) == 0);
    }
  }
  CHECK(pixels.next() == nullptr);
  // Grayscale, CMYK and progressive files are decoded by the thread; the ordinary ones are not.
  CHECK(on_host == std::set<std::string>{"grayscale", "CMYK (Adobe)", "progressive"});
  const gpuperf::CpuLoaderStats stats = encoded.stats();
  CHECK(stats.images_encoded == handed_over);
  CHECK(stats.images_decoded == pixels.stats().images_decoded);
  CHECK(stats.skipped == pixels.stats().skipped);
}

TEST_CASE("In encoded mode the host share of each batch is decoded by the threads", "[input]") {
  TempFolder root("host-share");
  const gpuperf::ImageFolder folder = small_folder(root, 2, 7);
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.batch_size = 6;
  o.threads = 2;
  gpuperf::CpuLoader pixels(folder.samples, o);
  o.output = gpuperf::LoaderOutput::kEncoded;
  o.host_share = 0.5;
  gpuperf::CpuLoader encoded(folder.samples, o);
  const std::size_t sample_bytes = o.transform.sample_bytes();
  int batches = 0;
  while (const gpuperf::ImageBatch* e = encoded.next()) {
    const gpuperf::ImageBatch* p = pixels.next();
    REQUIRE(p != nullptr);
    REQUIRE(e->sample_ids == p->sample_ids);
    // round(0.5 x size) slots first, decoded as the pixel mode decodes them; the rest handed over.
    const int host = static_cast<int>(std::lround(0.5 * e->size));
    for (int i = 0; i < e->size; ++i) {
      const auto slot = static_cast<std::size_t>(i);
      CHECK(e->encoded[slot].on_host == (i < host));
      if (i < host) {
        CHECK(std::memcmp(static_cast<const std::uint8_t*>(e->images) + sample_bytes * slot,
                          static_cast<const std::uint8_t*>(p->images) + sample_bytes * slot,
                          sample_bytes) == 0);
      }
    }
    ++batches;
  }
  CHECK(batches == 3);  // 14 files in batches of 6: two full, one of 2
  CHECK(encoded.stats().images_encoded == 3 + 3 + 1);
  o.host_share = 1.5;
  CHECK_THROWS_WITH(gpuperf::CpuLoader(folder.samples, o),
                    Catch::Contains("CpuLoaderOptions::host_share"));
}

namespace {

// Encoded batches of 6 over two epochs, the host share adaptive (from 0 unless set).
gpuperf::CpuLoaderOptions adaptive_loader_options(int threads) {
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.batch_size = 6;
  o.threads = threads;
  o.epochs = 2;
  o.output = gpuperf::LoaderOutput::kEncoded;
  o.adaptive_host_share = true;
  return o;
}

}  // namespace

TEST_CASE(
    "An adaptive host share moves by a 32nd of a batch, down when the threads starved the "
    "device",
    "[input]") {
  // (slots, batch, consumer waited, threads idle, device ran dry); batch 256: steps of 8, 6: of 1.
  CHECK(gpuperf::next_host_slots(128, 256, true, false, true) == 120);  // the threads held it up
  CHECK(gpuperf::next_host_slots(128, 256, true, true, true) == 120);
  CHECK(gpuperf::next_host_slots(128, 256, true, false, false) == 128);  // their pace is enough
  CHECK(gpuperf::next_host_slots(128, 256, true, true, false) == 128);
  CHECK(gpuperf::next_host_slots(128, 256, false, true, false) == 136);  // the threads are ahead
  CHECK(gpuperf::next_host_slots(128, 256, false, false, true) ==
        136);  // the GPU decoder is behind
  CHECK(gpuperf::next_host_slots(128, 256, false, false, false) == 128);
  CHECK(gpuperf::next_host_slots(3, 256, true, false, true) == 0);
  CHECK(gpuperf::next_host_slots(252, 256, false, true, false) == 256);
  CHECK(gpuperf::next_host_slots(256, 256, false, false, true) == 256);
  CHECK(gpuperf::next_host_slots(6, 6, false, true, false) == 6);
  CHECK(gpuperf::next_host_slots(2, 6, false, true, false) == 3);
  CHECK(gpuperf::next_host_slots(0, 6, true, false, true) == 0);
}

TEST_CASE("A device that ran dry while the loader's consumer waited moves the share down once",
          "[input]") {
  TempFolder root("adaptive-dry");
  const gpuperf::ImageFolder folder = small_folder(root, 2, 12);  // 24 files: 4 batches of 6
  gpuperf::CpuLoaderOptions o = adaptive_loader_options(/*threads=*/1);
  o.prefetch_batches = 1;
  o.host_share = 0.5;  // 3 of 6 slots
  gpuperf::CpuLoader loader(folder.samples, o);
  // Whether the consumer waits depends on timing; the report is kept until a delivery either
  // way and counts once. A wait moves 3 to 2 with the report; without a wait the report (the GPU
  // decoder behind) moves it to 4. Both say the report was read, and the next delivery without a
  // report cannot move it down.
  loader.device_ran_dry();
  REQUIRE(loader.next() != nullptr);
  const double after_report = loader.stats().host_share_now;
  CHECK((after_report == Approx(2.0 / 6) || after_report == Approx(4.0 / 6)));
  REQUIRE(loader.next() != nullptr);
  CHECK(loader.stats().host_share_now >= after_report);
}

TEST_CASE("With an adaptive host share, threads that are ahead of the consumer take more of it",
          "[input]") {
  TempFolder root("adaptive-share");
  const gpuperf::ImageFolder folder = small_folder(root, 2, 12);  // 24 files: 4 batches of 6
  gpuperf::CpuLoaderOptions o = adaptive_loader_options(/*threads=*/2);
  gpuperf::CpuLoader loader(folder.samples, o);
  CHECK(loader.stats().host_share_now == 0);
  // Before each next(), every batch the loader can prepare is prepared, so the consumer never
  // waits and the threads are idle: the share rises by one slot per delivery. The first three
  // batches start before any delivery; batch b >= 3 starts at delivery b - 1, after its rise.
  std::int64_t delivered = 0;
  std::int64_t host_slots = 0;
  std::int64_t host_slots_after_first_four = 0;  // the second epoch's, counted here
  gpuperf::CpuLoaderStats after_first_four;
  const std::int64_t total = std::int64_t{8} * 6;  // two epochs of four batches of 6
  for (std::int64_t b = 0; b < 8; ++b) {
    // Three buffers: all three batches ahead at first, then two beside the one the consumer holds.
    const std::int64_t prepared =
        std::min<std::int64_t>(total, (delivered == 0 ? 3 : delivered + 2) * 6);
    for (int tries = 0; loader.stats().images_decoded < prepared; ++tries) {
      REQUIRE(tries < 60'000);  // not a time bound: a hang guard (a minute of 1 ms naps)
      ::usleep(1000);
    }
    const gpuperf::ImageBatch* batch = loader.next();
    REQUIRE(batch != nullptr);
    ++delivered;
    const int expected = b < 3 ? 0 : static_cast<int>(std::min<std::int64_t>(b - 1, 6));
    int on_host = 0;
    for (int i = 0; i < batch->size; ++i) {
      const bool host = batch->encoded[static_cast<std::size_t>(i)].on_host;
      CHECK(host == (i < expected));  // the first slots of the batch, as with a fixed share
      on_host += host ? 1 : 0;
    }
    INFO("batch " << b);
    CHECK(on_host == expected);
    host_slots += on_host;
    if (b == 3) after_first_four = loader.stats();
    if (b > 3) host_slots_after_first_four += on_host;
    CHECK(loader.stats().host_share_now ==
          Approx(static_cast<double>(std::min<std::int64_t>(b + 1, 6)) / 6));
  }
  CHECK(loader.next() == nullptr);
  const gpuperf::CpuLoaderStats stats = loader.stats();
  CHECK(stats.samples_delivered == total);
  CHECK(stats.host_share_slots == host_slots);
  // The share over the second epoch alone (as a run's timed windows after its warm-up): slots
  // 3, 4, 5 and 6 of 6.
  REQUIRE(host_slots_after_first_four == 3 + 4 + 5 + 6);
  CHECK(gpuperf::host_share_between(after_first_four, stats, -1) == Approx(18.0 / 24));
  CHECK(gpuperf::host_share_between(stats, stats, -1) == -1);  // nothing delivered between
  // Pixel batches have no share to move.
  o.output = gpuperf::LoaderOutput::kPixels;
  CHECK_THROWS_WITH(gpuperf::CpuLoader(folder.samples, o),
                    Catch::Contains("CpuLoaderOptions::adaptive_host_share"));
}

TEST_CASE("In strict mode the first bad file stops the loader naming it", "[input]") {
  TempFolder root("strict");
  small_folder(root, 1, 3);
  write_bytes(root / "c0/img1.jpg", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'});
  const gpuperf::ImageFolder folder = gpuperf::scan_image_folder(root.path.string());
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.strict = true;
  o.shuffle = false;
  o.batch_size = 1;
  gpuperf::CpuLoader loader(folder.samples, o);
  REQUIRE(loader.next() != nullptr);  // img0
  try {
    (void)loader.next();
    FAIL("no error");
  } catch (const gpuperf::BadImageError& e) {
    CHECK(e.path() == root / "c0/img1.jpg");
    CHECK(e.reason() == BadImageReason::kNotJpeg);
  }
  CHECK(loader.next() == nullptr);  // stopped
}

TEST_CASE("A folder where no file decodes stops the loader with an IoError naming the files",
          "[input]") {
  TempFolder root("all-bad");
  fs::create_directories(root / "c0");
  fs::create_directories(root / "c1");
  write_bytes(root / "c0/a.jpg", {});
  write_bytes(root / "c1/b.jpg", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'});
  const gpuperf::ImageFolder folder = gpuperf::scan_image_folder(root.path.string());
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.batch_size = 1;
  gpuperf::CpuLoader loader(folder.samples, o);
  try {
    (void)loader.next();
    FAIL("no error");
  } catch (const gpuperf::BadImageError&) {
    FAIL("one file's error instead of the folder's");
  } catch (const gpuperf::IoError& e) {
    CHECK_THAT(e.what(), Catch::Contains("2 files in a row") && Catch::Contains("do not decode"));
  }
  CHECK(loader.next() == nullptr);  // stopped
}

TEST_CASE("A consumer that stops early ends the loader cleanly", "[input]") {
  TempFolder root("early");
  const gpuperf::ImageFolder folder = small_folder(root, 2, 6);
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.threads = 3;
  o.epochs = 100;
  for (int taken = 0; taken < 3; ++taken) {
    gpuperf::CpuLoader loader(folder.samples, o);
    for (int i = 0; i < taken; ++i) REQUIRE(loader.next() != nullptr);
  }  // each destructor joins with work still queued
  SUCCEED("no deadlock");
}

TEST_CASE("The loader allocates its batch buffers through the injected allocator", "[input]") {
  TempFolder root("alloc");
  const gpuperf::ImageFolder folder = small_folder(root, 1, 4);
  gpuperf::CpuLoaderOptions o = small_loader_options();
  o.prefetch_batches = 3;
  std::atomic<int> live{0};
  std::atomic<std::size_t> bytes{0};
  const gpuperf::HostAllocator base = gpuperf::HostAllocator::aligned();
  o.allocator.allocate = [&](std::size_t n) {
    ++live;
    bytes += n;
    return base.allocate(n);
  };
  o.allocator.release = [&](void* p, std::size_t n) {
    --live;
    base.release(p, n);
  };
  {
    gpuperf::CpuLoader loader(folder.samples, o);
    CHECK(live == 4);  // prefetch_batches + the one the consumer holds
    CHECK(loader.host_bytes() == bytes);
    CHECK(loader.host_bytes() >= 4 * 5 * o.transform.sample_bytes());
    while (loader.next() != nullptr) {
    }
    CHECK(loader.stats().images_decoded == 4);
  }
  CHECK(live == 0);
}

TEST_CASE("Loader options are checked naming the field", "[input]") {
  gpuperf::CpuLoaderOptions o;
  o.prefetch_batches = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("CpuLoaderOptions::prefetch_batches"));
  o = {};
  o.rank = 2;
  o.world_size = 2;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("CpuLoaderOptions::rank"));
  o = {};
  o.allocator.release = nullptr;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("allocator"));
  o = {};
  o.batch_size = 10;
  o.drop_last_batch = true;
  CHECK_THROWS_WITH(gpuperf::CpuLoader({{"a.jpg", 0}}, o), Catch::Contains("batch_size"));
}

TEST_CASE("Tiny and extreme images transform in both modes", "[input]") {
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {3, 2}, {1, 300}, {900, 7}}) {
    INFO(w << " x " << h);
    for (const auto color : {gpuperf::JpegEncodeColor::kYCbCr, gpuperf::JpegEncodeColor::kGrayscale,
                             gpuperf::JpegEncodeColor::kCMYK}) {
      gpuperf::JpegEncodeOptions encode;
      encode.color = color;
      encode.progressive = w == 3;
      const auto jpeg = small_jpeg(w, h, 8, encode);
      for (const auto kind :
           {gpuperf::TransformKind::kTrain, gpuperf::TransformKind::kValidation}) {
        gpuperf::ImageTransformOptions o;
        o.kind = kind;
        gpuperf::ImageTransformer t(o);
        std::vector<float> out(224 * 224 * 3);
        const auto report =
            t.transform(jpeg.data(), jpeg.size(), gpuperf::SampleRandom::draw(0, 0, 1), out.data());
        CHECK(report.plan.scale_denominator == 1);
        CHECK(std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); }));
      }
    }
  }
}

TEST_CASE("DCT scaling is chosen only where the region stays at least the output size", "[input]") {
  gpuperf::ImageTransformOptions o;
  o.kind = gpuperf::TransformKind::kValidation;
  const gpuperf::SampleRandom r{};
  // Validation resizes 2000 x 1500 to 341 x 256: 1500 >= 4 x 256, 2000 >= 4 x 341, not 8 x.
  CHECK(gpuperf::sample_plan(1500, 2000, o, r).scale_denominator == 4);
  CHECK(gpuperf::sample_plan(511, 700, o, r).scale_denominator == 1);
  CHECK(gpuperf::sample_plan(512, 700, o, r).scale_denominator == 2);
  o.dct_scaling = false;
  CHECK(gpuperf::sample_plan(1500, 2000, o, r).scale_denominator == 1);
  // Training: the crop decides; here the first attempt takes (almost) the whole image.
  o = {};
  gpuperf::SampleRandom whole;
  whole.crop.area.fill(0.999999);
  whole.crop.log_ratio.fill(0.5);
  const gpuperf::SamplePlan p = gpuperf::sample_plan(1000, 1000, o, whole);
  CHECK(p.source.width >= 896);
  CHECK(p.scale_denominator == 4);
}

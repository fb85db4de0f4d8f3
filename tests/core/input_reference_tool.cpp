// The C++ side of tests/core/input_reference.py: prints gpuperf's crop geometry for given draws and
// writes transformed samples, for comparison with torchvision and PIL.
//
//   input_reference_tool geometry < cases.txt        one line per case, see below
//   input_reference_tool transform train|val <file.jpg> <out.f32> [dct] [seed] [index]
//   input_reference_tool decode <file.jpg> <out.rgb>
//   input_reference_tool scan <folder>                 "<label> <path>" per sample
//   input_reference_tool ycck <out.jpg>                 a 500 x 375 YCCK JPEG (PIL writes none)
//
// geometry reads lines "rrc H W scale_min scale_max ratio_min ratio_max u1 .. u22" (the draws in
// RandomResizedCropDraws order), "resize H W size" and "center H W size", and prints
// "i j h w", "h w" and "top left" per line. transform prints "box top left height width flip F
// scale D" and then the 22 draws and the flip draw's outcome.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/input/geometry.h"
#include "gpuperf/input/image_file.h"
#include "gpuperf/input/image_folder.h"
#include "gpuperf/input/jpeg_decoder.h"
#include "gpuperf/input/jpeg_encoder.h"
#include "gpuperf/input/synthetic_data.h"

namespace {

int geometry() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "rrc") {
      int h = 0, w = 0;
      gpuperf::RandomResizedCropOptions o;
      gpuperf::RandomResizedCropDraws d;
      in >> h >> w >> o.scale_min >> o.scale_max >> o.ratio_min >> o.ratio_max;
      for (int i = 0; i < gpuperf::RandomResizedCropDraws::kAttempts; ++i) {
        in >> d.area[i] >> d.log_ratio[i];
      }
      in >> d.top >> d.left;
      const gpuperf::CropBox b = gpuperf::random_resized_crop_box(h, w, o, d);
      std::printf("%d %d %d %d\n", b.top, b.left, b.height, b.width);
    } else if (kind == "resize") {
      int h = 0, w = 0, size = 0;
      in >> h >> w >> size;
      const gpuperf::ImageSize s = gpuperf::resize_shorter_side(h, w, size);
      std::printf("%d %d\n", s.height, s.width);
    } else if (kind == "center") {
      int h = 0, w = 0, size = 0;
      in >> h >> w >> size;
      const gpuperf::CropBox b = gpuperf::center_crop_box(h, w, size);
      std::printf("%d %d\n", b.top, b.left);
    } else if (!kind.empty()) {
      std::fprintf(stderr, "unknown case '%s'\n", kind.c_str());
      return 2;
    }
  }
  return 0;
}

std::vector<std::uint8_t> read(const std::string& path) {
  std::vector<std::uint8_t> bytes;
  gpuperf::read_image_file(path, bytes);
  return bytes;
}

void write(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw gpuperf::IoError(path + ": write failed");
}

int transform(int argc, char** argv) {
  if (argc < 5) return 2;
  gpuperf::ImageTransformOptions o;
  o.kind = std::string(argv[2]) == "val" ? gpuperf::TransformKind::kValidation
                                         : gpuperf::TransformKind::kTrain;
  o.dct_scaling = argc > 5 && std::string(argv[5]) == "dct";
  const std::uint64_t seed = argc > 6 ? std::stoull(argv[6]) : 0;
  const std::uint64_t index = argc > 7 ? std::stoull(argv[7]) : 0;
  const std::vector<std::uint8_t> bytes = read(argv[3]);
  gpuperf::ImageTransformer t(o);
  const gpuperf::SampleRandom r = gpuperf::SampleRandom::draw(seed, 0, index);
  std::vector<float> out(static_cast<std::size_t>(o.crop_size) * o.crop_size * 3);
  const gpuperf::TransformReport rep = t.transform(bytes.data(), bytes.size(), r, out.data());
  write(argv[4], out.data(), out.size() * sizeof(float));
  const gpuperf::SamplePlan& p = rep.plan;
  std::printf("box %d %d %d %d flip %d scale %d\n", p.source.top, p.source.left, p.source.height,
              p.source.width, p.flip ? 1 : 0, p.scale_denominator);
  for (int i = 0; i < gpuperf::RandomResizedCropDraws::kAttempts; ++i) {
    std::printf("%.17g %.17g ", r.crop.area[i], r.crop.log_ratio[i]);
  }
  std::printf("%.17g %.17g\n", r.crop.top, r.crop.left);
  return 0;
}

int decode(int argc, char** argv) {
  if (argc < 4) return 2;
  const std::vector<std::uint8_t> bytes = read(argv[2]);
  const gpuperf::RgbImage image = gpuperf::decode_jpeg(bytes.data(), bytes.size());
  write(argv[3], image.pixels.data(), image.pixels.size());
  std::printf("%d %d\n", image.width, image.height);
  return 0;
}

int scan(int argc, char** argv) {
  if (argc < 3) return 2;
  const gpuperf::ImageFolder data = gpuperf::scan_image_folder(argv[2]);
  for (const gpuperf::Sample& s : data.samples) {
    std::printf("%lld %s\n", static_cast<long long>(s.label), s.path.c_str());
  }
  return 0;
}

int ycck(int argc, char** argv) {
  if (argc < 3) return 2;
  gpuperf::JpegEncodeOptions o;
  o.color = gpuperf::JpegEncodeColor::kYCCK;
  const auto bytes = gpuperf::encode_jpeg(gpuperf::synthetic_image(500, 375, 34), o);
  write(argv[2], bytes.data(), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "geometry") return geometry();
    if (command == "transform") return transform(argc, argv);
    if (command == "decode") return decode(argc, argv);
    if (command == "scan") return scan(argc, argv);
    if (command == "ycck") return ycck(argc, argv);
    std::fprintf(stderr, "usage: input_reference_tool geometry|transform|decode ...\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "input_reference_tool: %s\n", e.what());
    return 1;
  }
}

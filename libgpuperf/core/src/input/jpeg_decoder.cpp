// JPEG decoding with libjpeg-turbo and the ImageNet transforms. libjpeg reports a fatal error by
// calling error_exit, whose default ends the process; here it longjmps back to the call that
// started the work, which turns it into a BadImageError. The functions that call setjmp hold no
// object with a destructor (longjmp would skip it): their buffers live in the caller's State.
#include "gpuperf/input/jpeg_decoder.h"

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <utility>

// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

#include "gpuperf/base/error.h"
#include "gpuperf/input/image_file.h"
#include "gpuperf/input/ycbcr.h"
#include "input/resample.h"

namespace gpuperf {
namespace {

// libjpeg's error manager extended with the jump target and what was said.
struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  int warnings;
  bool end_of_file;
  char first_warning[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error_exit(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings (level -1) are counted, the first one kept; trace messages (level >= 0) dropped.
void on_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  auto* errors = reinterpret_cast<ErrorManager*>(cinfo->err);
  if (errors->warnings == 0) (*cinfo->err->format_message)(cinfo, errors->first_warning);
  ++errors->warnings;
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) errors->end_of_file = true;
}

void reset(ErrorManager& errors) {
  errors.message[0] = '\0';
  errors.first_warning[0] = '\0';
  errors.warnings = 0;
  errors.end_of_file = false;
}

JpegColorSpace color_space_of(J_COLOR_SPACE space) {
  switch (space) {
    case JCS_GRAYSCALE:
      return JpegColorSpace::kGrayscale;
    case JCS_YCbCr:
      return JpegColorSpace::kYCbCr;
    case JCS_RGB:
      return JpegColorSpace::kRGB;
    case JCS_CMYK:
      return JpegColorSpace::kCMYK;
    case JCS_YCCK:
      return JpegColorSpace::kYCCK;
    default:
      return JpegColorSpace::kUnknown;
  }
}

// PIL's MULDIV255: a * b / 255 rounded.
inline int muldiv255(int a, int b) {
  const int tmp = a * b + 128;
  return ((tmp >> 8) + tmp) >> 8;
}

// One decoded scanline (gray, RGB or CMYK as libjpeg wrote it) to RGB as PIL converts.
void to_rgb(const std::uint8_t* in, int pixels, int components, std::uint8_t* out) {
  if (components == 3) {
    std::memcpy(out, in, static_cast<std::size_t>(pixels) * 3);
  } else if (components == 1) {
    for (int x = 0; x < pixels; ++x) {
      std::uint8_t* rgb = out + static_cast<std::ptrdiff_t>(x) * 3;
      rgb[0] = rgb[1] = rgb[2] = in[x];
    }
  } else {
    // PIL reads every CMYK JPEG as "CMYK;I" (inverted, Adobe's convention), then cmyk2rgb:
    // nk = 255 - k, R = nk - MULDIV255(c, nk). With the inversion nk is the stored K byte.
    for (int x = 0; x < pixels; ++x) {
      const int nk = in[x * 4 + 3];
      for (int c = 0; c < 3; ++c) {
        const int v = nk - muldiv255(255 - in[x * 4 + c], nk);
        out[x * 3 + c] = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
      }
    }
  }
}

// The header pass shared by every entry point: called right after setjmp.
JpegHeader header_of(jpeg_decompress_struct& cinfo) {
  JpegHeader h;
  h.width = static_cast<int>(cinfo.image_width);
  h.height = static_cast<int>(cinfo.image_height);
  h.components = cinfo.num_components;
  h.color_space = color_space_of(cinfo.jpeg_color_space);
  h.progressive = cinfo.progressive_mode != 0;
  h.adobe_marker = cinfo.saw_Adobe_marker != 0;
  return h;
}

// What went wrong inside a setjmp region, turned into the error after it.
enum class Failure { kNone, kLibjpeg, kTooManyPixels, kUnsupported, kTruncated, kNoQuantTable };

// libjpeg's decompressor and its error manager (ImageTransformer keeps one per thread and renews
// it for each file).
struct Decoder {
  jpeg_decompress_struct cinfo{};
  ErrorManager errors{};

  Decoder() {
    cinfo.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = on_error_exit;
    errors.base.emit_message = on_emit_message;
    jpeg_create_decompress(&cinfo);
  }
  ~Decoder() { jpeg_destroy_decompress(&cinfo); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // A fresh decompressor for the next file, as PIL has for each. libjpeg keeps quantization and
  // Huffman tables across images (for abbreviated streams): a file without tables of its own
  // would decode with the previous file's, its pixels depending on which file the thread read
  // before. Called inside a setjmp region (creating may report running out of memory).
  void renew() {
    jpeg_destroy_decompress(&cinfo);
    cinfo = jpeg_decompress_struct{};
    cinfo.err = &errors.base;
    jpeg_create_decompress(&cinfo);
  }
};

[[noreturn]] void throw_failure(Failure failure, const ErrorManager& errors,
                                const JpegHeader& header, std::int64_t max_pixels) {
  switch (failure) {
    case Failure::kTooManyPixels:
      throw BadImageError("", BadImageReason::kTooManyPixels,
                          std::to_string(header.width) + " x " + std::to_string(header.height) +
                              " pixels, limit " + std::to_string(max_pixels));
    case Failure::kUnsupported:
      throw BadImageError("", BadImageReason::kUnsupported,
                          std::to_string(header.components) + " components, colour space " +
                              to_string(header.color_space));
    case Failure::kTruncated:
      throw BadImageError("", BadImageReason::kTruncated,
                          errors.end_of_file ? "Premature end of JPEG file" : "no end marker");
    case Failure::kNoQuantTable:
      throw BadImageError("", BadImageReason::kCorrupt,
                          "a component of the first scan has no quantization table (no DQT)");
    default:
      throw BadImageError("", BadImageReason::kCorrupt, errors.message);
  }
}

// Reads the header and checks the limit and the colour space; sets the output colour space.
// Returns kNone or the failure. Called inside a setjmp region (no destructors here).
Failure start_header(Decoder& d, const std::uint8_t* data, std::size_t size,
                     const DecodeOptions& options, JpegHeader& header) {
  jpeg_mem_src(&d.cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&d.cinfo, TRUE);
  header = header_of(d.cinfo);
  if (static_cast<std::int64_t>(header.width) * header.height > options.max_pixels) {
    return Failure::kTooManyPixels;
  }
  // libjpeg refuses such a file only when decoding starts; said here, at the header, every path
  // refuses it alike (a GPU decoder would otherwise get it). Tables of components that first
  // appear in a later scan may still follow the first scan, so only this scan's are required.
  for (int i = 0; i < d.cinfo.comps_in_scan; ++i) {
    const int table = d.cinfo.cur_comp_info[i]->quant_tbl_no;
    if (table < 0 || table >= NUM_QUANT_TBLS || d.cinfo.quant_tbl_ptrs[table] == nullptr) {
      return Failure::kNoQuantTable;
    }
  }
  switch (d.cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
      d.cinfo.out_color_space = JCS_GRAYSCALE;
      break;
    case JCS_YCbCr:
    case JCS_RGB:
      d.cinfo.out_color_space = JCS_RGB;
      break;
    case JCS_CMYK:
    case JCS_YCCK:
      d.cinfo.out_color_space = JCS_CMYK;
      break;
    default:
      return Failure::kUnsupported;
  }
  // PIL's settings (its decoder keeps libjpeg's defaults): accurate integer IDCT, fancy
  // upsampling. Said here because the output is compared with PIL's.
  d.cinfo.dct_method = JDCT_ISLOW;
  d.cinfo.do_fancy_upsampling = TRUE;
  return Failure::kNone;
}

}  // namespace

std::string to_string(JpegColorSpace value) {
  switch (value) {
    case JpegColorSpace::kGrayscale:
      return "grayscale";
    case JpegColorSpace::kYCbCr:
      return "YCbCr";
    case JpegColorSpace::kRGB:
      return "RGB";
    case JpegColorSpace::kCMYK:
      return "CMYK";
    case JpegColorSpace::kYCCK:
      return "YCCK";
    case JpegColorSpace::kUnknown:
      return "unknown";
  }
  return "?";
}

void DecodeOptions::validate() const {
  require_setting(max_pixels >= 1, "DecodeOptions::max_pixels", max_pixels, ">= 1");
}

JpegHeader read_jpeg_header(const std::uint8_t* data, std::size_t size,
                            const DecodeOptions& options) {
  options.validate();
  check_jpeg_signature(data, size);
  Decoder d;
  JpegHeader header;
  Failure failure = Failure::kNone;
  reset(d.errors);
  if (setjmp(d.errors.jump) != 0) {
    failure = Failure::kLibjpeg;
  } else {
    failure = start_header(d, data, size, options, header);
  }
  jpeg_abort_decompress(&d.cinfo);
  if (failure != Failure::kNone) throw_failure(failure, d.errors, header, options.max_pixels);
  return header;
}

namespace {

// The whole-image decode inside its setjmp region. `out` is sized from the header by the
// caller's callback before scanlines are read.
Failure decode_whole(Decoder& d, const std::uint8_t* data, std::size_t size,
                     const DecodeOptions& options, JpegHeader& header, RgbImage& image,
                     std::vector<std::uint8_t>& row) {
  const Failure failure = start_header(d, data, size, options, header);
  if (failure != Failure::kNone) return failure;
  jpeg_start_decompress(&d.cinfo);
  const int width = static_cast<int>(d.cinfo.output_width);
  const int components = d.cinfo.output_components;
  image.width = width;
  image.height = static_cast<int>(d.cinfo.output_height);
  image.pixels.resize(static_cast<std::size_t>(width) * image.height * 3);
  row.resize(static_cast<std::size_t>(width) * components);
  while (d.cinfo.output_scanline < d.cinfo.output_height) {
    JSAMPROW rows[1] = {row.data()};
    const int y = static_cast<int>(d.cinfo.output_scanline);
    jpeg_read_scanlines(&d.cinfo, rows, 1);
    to_rgb(row.data(), width, components,
           image.pixels.data() + static_cast<std::size_t>(y) * width * 3);
  }
  jpeg_finish_decompress(&d.cinfo);
  return Failure::kNone;
}

}  // namespace

RgbImage decode_jpeg(const std::uint8_t* data, std::size_t size, const DecodeOptions& options,
                     DecodeReport* report) {
  options.validate();
  check_jpeg_signature(data, size);
  Decoder d;
  JpegHeader header;
  RgbImage image;
  std::vector<std::uint8_t> row;
  Failure failure = Failure::kNone;
  reset(d.errors);
  // The vectors were constructed before setjmp and outlive the region: a longjmp skips no
  // destructor.
  if (setjmp(d.errors.jump) != 0) {
    failure = Failure::kLibjpeg;
  } else {
    failure = decode_whole(d, data, size, options, header, image, row);
  }
  jpeg_abort_decompress(&d.cinfo);
  const bool truncated = d.errors.end_of_file || !has_jpeg_end_marker(data, size);
  if (failure == Failure::kNone && truncated && !options.accept_truncated) {
    failure = Failure::kTruncated;
  }
  if (failure != Failure::kNone) throw_failure(failure, d.errors, header, options.max_pixels);
  if (report != nullptr) {
    report->warnings = d.errors.warnings;
    report->truncated = truncated;
    report->first_warning = d.errors.first_warning;
  }
  return image;
}

namespace {

// The raw (planar) decode inside its setjmp region: libjpeg writes whole blocks into `padded`
// (one buffer per component, rows `rows` point into), then the real samples are copied out.
Failure decode_raw(Decoder& d, const std::uint8_t* data, std::size_t size,
                   const DecodeOptions& options, JpegHeader& header, YCbCrPlanes& out,
                   std::array<std::vector<std::uint8_t>, 3>& padded,
                   std::array<std::vector<JSAMPROW>, 3>& rows) {
  const Failure failure = start_header(d, data, size, options, header);
  if (failure != Failure::kNone) return failure;
  if (header.color_space != JpegColorSpace::kYCbCr || header.components != 3) {
    return Failure::kUnsupported;
  }
  jpeg_decompress_struct& cinfo = d.cinfo;
  cinfo.out_color_space = JCS_YCbCr;
  cinfo.raw_data_out = TRUE;
  const int max_h = cinfo.max_h_samp_factor;
  const int max_v = cinfo.max_v_samp_factor;
  for (int c = 0; c < 3; ++c) {
    const jpeg_component_info& comp = cinfo.comp_info[c];
    const int h = comp.h_samp_factor;
    const int v = comp.v_samp_factor;
    if (max_h % h != 0 || max_v % v != 0 || !chroma_factors_supported(max_h / h, max_v / v) ||
        (c == 0 && (h != max_h || v != max_v))) {
      return Failure::kUnsupported;
    }
  }
  jpeg_start_decompress(&cinfo);
  const int group = max_v * DCTSIZE;  // image rows per jpeg_read_raw_data call
  const int passes = (static_cast<int>(cinfo.output_height) + group - 1) / group;
  for (int c = 0; c < 3; ++c) {
    const jpeg_component_info& comp = cinfo.comp_info[c];
    const std::size_t pitch = static_cast<std::size_t>(comp.width_in_blocks) * DCTSIZE;
    const std::size_t total = static_cast<std::size_t>(passes) * comp.v_samp_factor * DCTSIZE;
    padded[c].assign(pitch * total, 0);
    rows[c].resize(total);
    for (std::size_t r = 0; r < total; ++r) rows[c][r] = padded[c].data() + r * pitch;
  }
  for (int pass = 0; cinfo.output_scanline < cinfo.output_height; ++pass) {
    JSAMPARRAY planes[3];
    for (int c = 0; c < 3; ++c) {
      planes[c] = rows[c].data() +
                  static_cast<std::ptrdiff_t>(pass) * cinfo.comp_info[c].v_samp_factor * DCTSIZE;
    }
    if (jpeg_read_raw_data(&cinfo, planes, static_cast<JDIMENSION>(group)) == 0) break;
  }
  out.width = static_cast<int>(cinfo.output_width);
  out.height = static_cast<int>(cinfo.output_height);
  for (int c = 0; c < 3; ++c) {
    const jpeg_component_info& comp = cinfo.comp_info[c];
    YCbCrPlane& plane = out.planes[static_cast<std::size_t>(c)];
    plane.width = static_cast<int>(comp.downsampled_width);
    plane.height = static_cast<int>(comp.downsampled_height);
    plane.h_factor = max_h / comp.h_samp_factor;
    plane.v_factor = max_v / comp.v_samp_factor;
    plane.samples.resize(static_cast<std::size_t>(plane.width) * plane.height);
    for (int r = 0; r < plane.height; ++r) {
      std::memcpy(plane.samples.data() + static_cast<std::size_t>(r) * plane.width,
                  rows[c][static_cast<std::size_t>(r)], static_cast<std::size_t>(plane.width));
    }
  }
  jpeg_finish_decompress(&cinfo);
  return Failure::kNone;
}

}  // namespace

YCbCrPlanes decode_jpeg_planes(const std::uint8_t* data, std::size_t size,
                               const DecodeOptions& options) {
  options.validate();
  check_jpeg_signature(data, size);
  Decoder d;
  JpegHeader header;
  YCbCrPlanes planes;
  std::array<std::vector<std::uint8_t>, 3> padded;
  std::array<std::vector<JSAMPROW>, 3> rows;
  Failure failure = Failure::kNone;
  reset(d.errors);
  // As decode_jpeg(): every object with a destructor was made before setjmp.
  if (setjmp(d.errors.jump) != 0) {
    failure = Failure::kLibjpeg;
  } else {
    failure = decode_raw(d, data, size, options, header, planes, padded, rows);
  }
  jpeg_abort_decompress(&d.cinfo);
  if (failure == Failure::kNone && !options.accept_truncated &&
      (d.errors.end_of_file || !has_jpeg_end_marker(data, size))) {
    failure = Failure::kTruncated;
  }
  if (failure != Failure::kNone) throw_failure(failure, d.errors, header, options.max_pixels);
  return planes;
}

RgbImage planes_to_rgb(const YCbCrPlanes& planes) {
  const YCbCrPlane& luma = planes.planes[0];
  if (planes.width < 1 || planes.height < 1 || luma.width != planes.width ||
      luma.height != planes.height ||
      luma.samples.size() != static_cast<std::size_t>(luma.width) * luma.height) {
    throw ConfigError("planes_to_rgb: the luma plane must be the image's size");
  }
  std::array<ChromaPlane, 2> chroma;
  for (int c = 1; c < 3; ++c) {
    const YCbCrPlane& p = planes.planes[static_cast<std::size_t>(c)];
    if (!chroma_factors_supported(p.h_factor, p.v_factor) ||
        p.width != (planes.width + p.h_factor - 1) / p.h_factor ||
        p.height != (planes.height + p.v_factor - 1) / p.v_factor ||
        p.samples.size() != static_cast<std::size_t>(p.width) * p.height) {
      throw ConfigError("planes_to_rgb: chroma plane " + std::to_string(c) +
                        " does not match the image's size and its factors");
    }
    chroma[static_cast<std::size_t>(c - 1)] =
        ChromaPlane{p.samples.data(), p.width, p.width, p.height, p.h_factor, p.v_factor};
  }
  RgbImage image;
  image.width = planes.width;
  image.height = planes.height;
  image.pixels.resize(static_cast<std::size_t>(image.width) * image.height * 3);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      const std::size_t at = static_cast<std::size_t>(y) * image.width + x;
      ycbcr_to_rgb(luma.samples[at], upsampled_chroma(chroma[0], y, x),
                   upsampled_chroma(chroma[1], y, x), image.pixels.data() + at * 3);
    }
  }
  return image;
}

std::size_t element_bytes(SampleType type) { return type == SampleType::kFloat32 ? 4 : 2; }

void ImageTransformOptions::validate() const {
  require_setting(crop_size >= 1 && crop_size <= 4096, "ImageTransformOptions::crop_size",
                  crop_size, "in 1..4096");
  if (kind == TransformKind::kValidation) {
    require_setting(resize_size >= crop_size && resize_size <= 65536,
                    "ImageTransformOptions::resize_size", resize_size,
                    ">= {crop_size} and <= 65536");
  }
  crop.validate();
  for (int c = 0; c < 3; ++c) {
    require_setting(std[c] > 0 && std::isfinite(std[c]), "ImageTransformOptions::std", std[c],
                    "> 0 and finite");
    require_setting(std::isfinite(mean[c]), "ImageTransformOptions::mean", mean[c], "finite");
  }
  decode.validate();
}

std::size_t ImageTransformOptions::sample_bytes() const {
  return static_cast<std::size_t>(crop_size) * crop_size * 3 * element_bytes(type);
}

SampleRandom SampleRandom::draw(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) {
  SampleStream stream(seed, epoch, index);
  SampleRandom r;
  r.crop = RandomResizedCropDraws::from(stream);
  r.flip = flip_from(stream);
  return r;
}

SamplePlan sample_plan(int height, int width, const ImageTransformOptions& options,
                       const SampleRandom& random) {
  SamplePlan plan;
  const int out = options.crop_size;
  // The largest reduction d (8, 4, 2) whose decoded region stays >= the size it is resized to.
  const auto largest_scale = [&](int region_h, int region_w, int target_h, int target_w) {
    if (!options.dct_scaling) return 1;
    for (int d : {8, 4, 2}) {
      if (static_cast<std::int64_t>(region_w) >= static_cast<std::int64_t>(target_w) * d &&
          static_cast<std::int64_t>(region_h) >= static_cast<std::int64_t>(target_h) * d) {
        return d;
      }
    }
    return 1;
  };
  if (options.kind == TransformKind::kTrain) {
    plan.source = random_resized_crop_box(height, width, options.crop, random.crop);
    plan.flip = options.horizontal_flip && random.flip;
    plan.resized = {out, out};
    plan.crop = {0, 0, out, out};
    plan.scale_denominator = largest_scale(plan.source.height, plan.source.width, out, out);
  } else {
    plan.source = {0, 0, height, width};
    plan.resized = resize_shorter_side(height, width, options.resize_size);
    plan.crop = center_crop_box(plan.resized.height, plan.resized.width, out);
    plan.scale_denominator = largest_scale(height, width, plan.resized.height, plan.resized.width);
  }
  return plan;
}

std::uint16_t float_to_half_bits(float value) {
  std::uint32_t f;
  std::memcpy(&f, &value, 4);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    return static_cast<std::uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to inf
  if (abs < 0x38800000u) {
    // A half subnormal or zero: value / 2^-24 rounded, i.e. the 24-bit mantissa shifted right
    // by 126 - exponent bits.
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below 2^-25: zero
    const std::uint32_t mantissa = (abs & 0x007FFFFFu) | 0x00800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);
    std::uint32_t result = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (result & 1u))) ++result;
    return static_cast<std::uint16_t>(sign | result);
  }
  std::uint32_t result = ((abs >> 13) - (112u << 10));
  const std::uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;
  return static_cast<std::uint16_t>(sign | result);
}

std::uint16_t float_to_bfloat16_bits(float value) {
  std::uint32_t f;
  std::memcpy(&f, &value, 4);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<std::uint16_t>((f + rounding) >> 16);
}

// ---- ImageTransformer ------------------------------------------------------------------------

struct ImageTransformer::State {
  ImageTransformOptions options;
  Decoder decoder;
  // Normalisation tables: byte value -> output element, per channel (ToTensor's v / 255 and
  // Normalize's (x - mean) / std, both in float32 as torch computes them).
  std::array<std::array<float, 256>, 3> lut_f32{};
  std::array<std::array<std::uint16_t, 256>, 3> lut_u16{};
  detail::ResampleAxis axis_x;
  detail::ResampleAxis axis_y;
  std::vector<std::uint8_t> scanline;  // one decoded row (cropped columns, libjpeg's components)
  std::vector<std::uint8_t> rgb_row;   // the same row as RGB
  std::vector<std::uint8_t> rows;      // horizontally resampled rows
  std::vector<std::uint8_t> pixels;    // the final crop_size^2 RGB bytes
};

ImageTransformer::ImageTransformer(const ImageTransformOptions& options)
    : state_(std::make_unique<State>()) {
  options.validate();
  state_->options = options;
  for (int c = 0; c < 3; ++c) {
    for (int v = 0; v < 256; ++v) {
      const float x = (static_cast<float>(v) / 255.0f - options.mean[c]) / options.std[c];
      state_->lut_f32[c][v] = x;
      state_->lut_u16[c][v] =
          options.type == SampleType::kFloat16 ? float_to_half_bits(x) : float_to_bfloat16_bits(x);
    }
  }
}

ImageTransformer::~ImageTransformer() = default;
ImageTransformer::ImageTransformer(ImageTransformer&&) noexcept = default;
ImageTransformer& ImageTransformer::operator=(ImageTransformer&&) noexcept = default;

const ImageTransformOptions& ImageTransformer::options() const noexcept { return state_->options; }

namespace {

// Sets up the filter of one axis in the image decoded at `scaled` pixels (the full image has
// `full`): returns the scaled index that the filter's input index 0 stands for.
int setup_axis(bool train, int full, int scaled, int source_start, int source_size, int out_size,
               int out_first, int out_count, detail::ResampleAxis& axis) {
  if (scaled == full) {
    if (train) {
      // torchvision crops first, then resizes the crop: the filter is clamped at the crop.
      detail::build_axis(source_size, 0.0, source_size, out_size, out_first, out_count, axis);
      return source_start;
    }
    detail::build_axis(full, 0.0, full, out_size, out_first, out_count, axis);
    return 0;
  }
  // Decoded at reduced size: the same region in scaled coordinates, a fractional box within the
  // whole scaled pixels that cover it (the filter clamped there, as at the crop above).
  const double f = static_cast<double>(scaled) / full;
  const double in0 = source_start * f;
  const double in1 = (source_start + source_size) * f;
  const int lo = std::clamp(static_cast<int>(std::floor(in0)), 0, scaled - 1);
  const int hi = std::clamp(static_cast<int>(std::ceil(in1)), lo + 1, scaled);
  detail::build_axis(hi - lo, in0 - lo, in1 - lo, out_size, out_first, out_count, axis);
  return lo;
}

// Where phase 2 reads and writes; plain values and pointers only (see transform()).
struct RegionJob {
  int scale_denominator;
  int lo_x;  // scaled column of the x filter's index 0
  int lo_y;  // scaled row of the y filter's index 0
  const detail::ResampleAxis* axis_x;
  const detail::ResampleAxis* axis_y;
  std::uint8_t* scanline;  // >= scaled width * 4 bytes
  std::uint8_t* rgb_row;   // >= scaled width * 3 bytes
  std::uint8_t* rows;      // (axis_y hi - lo) rows of axis_x count * 3 bytes
  std::int64_t decoded_pixels;
};

// Phase 2, inside a setjmp region: decodes only the rows and columns the filters read and runs
// the horizontal pass on each row as it arrives (the whole image is never held).
void decode_region(Decoder& d, RegionJob& job) {
  d.cinfo.scale_num = 1;
  d.cinfo.scale_denom = static_cast<unsigned>(job.scale_denominator);
  jpeg_start_decompress(&d.cinfo);
  const int scaled_w = static_cast<int>(d.cinfo.output_width);
  const int components = d.cinfo.output_components;
  const detail::ResampleAxis& ax = *job.axis_x;
  const detail::ResampleAxis& ay = *job.axis_y;
  // libjpeg-turbo's partial decode treats the region's edges as the image's: fancy upsampling
  // of subsampled chroma replicates the edge column (jpeg_crop_scanline) and starts without the
  // row above (jpeg_skip_scanlines), which moves the outermost pixels by a few levels. One iMCU
  // of margin on each side keeps those pixels out of what the filters read, so the region
  // equals the same pixels of a whole-image decode.
  // libjpeg 7+ (Ubuntu's libjpeg-turbo8) splits the scaled DCT size per direction; 6.2 (Debian's
  // libjpeg62-turbo) has one.
#if JPEG_LIB_VERSION >= 70
  const int imcu_w = d.cinfo.max_h_samp_factor * d.cinfo.min_DCT_h_scaled_size;
  const int imcu_h = d.cinfo.max_v_samp_factor * d.cinfo.min_DCT_v_scaled_size;
#else
  const int imcu_w = d.cinfo.max_h_samp_factor * d.cinfo.min_DCT_scaled_size;
  const int imcu_h = d.cinfo.max_v_samp_factor * d.cinfo.min_DCT_scaled_size;
#endif
  const int need_x0 = job.lo_x + ax.lo;
  const int need_x1 = job.lo_x + ax.hi;
  const int x0 = std::max(0, need_x0 - imcu_w);
  const int x1 = std::min(scaled_w, need_x1 + imcu_w);
  JDIMENSION xoffset = static_cast<JDIMENSION>(x0);
  JDIMENSION width = static_cast<JDIMENSION>(x1 - x0);
  if (x0 > 0 || x1 < scaled_w) {
    // Rounds the offset down to an iMCU boundary and widens the width to match.
    jpeg_crop_scanline(&d.cinfo, &xoffset, &width);
  }
  const int row_origin_x = static_cast<int>(xoffset) - job.lo_x;
  const int first_row = job.lo_y + ay.lo;
  const int end_row = job.lo_y + ay.hi;
  const int start_row = std::max(0, first_row - imcu_h);
  if (start_row > 0) jpeg_skip_scanlines(&d.cinfo, static_cast<JDIMENSION>(start_row));
  for (int y = start_row; y < first_row; ++y) {
    JSAMPROW rows[1] = {job.scanline};
    jpeg_read_scanlines(&d.cinfo, rows, 1);
  }
  const std::size_t row_bytes = static_cast<std::size_t>(ax.count()) * 3;
  for (int y = first_row; y < end_row; ++y) {
    JSAMPROW rows[1] = {job.scanline};
    jpeg_read_scanlines(&d.cinfo, rows, 1);
    // RGB rows resampled where libjpeg wrote them; grayscale and CMYK converted first.
    const std::uint8_t* rgb = job.scanline;
    if (components != 3) {
      to_rgb(job.scanline, static_cast<int>(width), components, job.rgb_row);
      rgb = job.rgb_row;
    }
    detail::resample_row(rgb, row_origin_x, 3, ax,
                         job.rows + static_cast<std::size_t>(y - first_row) * row_bytes);
  }
  job.decoded_pixels = static_cast<std::int64_t>(end_row - start_row) * width;
}

// n x n RGB bytes, mirrored when `flip`, through the per-channel table into `out` (NHWC).
template <typename T>
void write_normalised(const std::uint8_t* pixels, int n, bool flip,
                      const std::array<std::array<T, 256>, 3>& lut, T* out) {
  const std::size_t row_bytes = static_cast<std::size_t>(n) * 3;
  for (int y = 0; y < n; ++y) {
    const std::uint8_t* row = pixels + static_cast<std::size_t>(y) * row_bytes;
    T* o = out + static_cast<std::size_t>(y) * row_bytes;
    for (int x = 0; x < n; ++x) {
      const std::uint8_t* p = row + static_cast<std::size_t>(flip ? n - 1 - x : x) * 3;
      o[x * 3 + 0] = lut[0][p[0]];
      o[x * 3 + 1] = lut[1][p[1]];
      o[x * 3 + 2] = lut[2][p[2]];
    }
  }
}

}  // namespace

TransformReport ImageTransformer::transform(const std::uint8_t* data, std::size_t size,
                                            const SampleRandom& random, void* out) {
  State& s = *state_;
  const ImageTransformOptions& o = s.options;
  check_jpeg_signature(data, size);
  TransformReport report;
  Decoder& d = s.decoder;
  // Phase 1: the header (a longjmp lands here; no destructor lies between).
  Failure failure = Failure::kNone;
  reset(d.errors);
  if (setjmp(d.errors.jump) != 0) {
    failure = Failure::kLibjpeg;
  } else {
    d.renew();
    failure = start_header(d, data, size, o.decode, report.header);
  }
  if (failure == Failure::kNone && !o.decode.accept_truncated && !has_jpeg_end_marker(data, size)) {
    failure = Failure::kTruncated;
  }
  if (failure != Failure::kNone) {
    jpeg_abort_decompress(&d.cinfo);
    throw_failure(failure, d.errors, report.header, o.decode.max_pixels);
  }
  // The geometry, outside any setjmp region (it allocates).
  const JpegHeader& h = report.header;
  report.plan = sample_plan(h.height, h.width, o, random);
  const SamplePlan& plan = report.plan;
  const int denominator = plan.scale_denominator;
  const int scaled_w = (h.width + denominator - 1) / denominator;
  const int scaled_h = (h.height + denominator - 1) / denominator;
  const int n = o.crop_size;
  const bool train = o.kind == TransformKind::kTrain;
  const int out_size_x = train ? n : plan.resized.width;
  const int out_size_y = train ? n : plan.resized.height;
  const int first_x = train ? 0 : plan.crop.left;
  const int first_y = train ? 0 : plan.crop.top;
  RegionJob job{};
  job.scale_denominator = denominator;
  job.lo_x = setup_axis(train, h.width, scaled_w, plan.source.left, plan.source.width, out_size_x,
                        first_x, n, s.axis_x);
  detail::build_pair_weights(s.axis_x);  // the horizontal RGB pass's 16-bit weights
  job.lo_y = setup_axis(train, h.height, scaled_h, plan.source.top, plan.source.height, out_size_y,
                        first_y, n, s.axis_y);
  s.scanline.resize(static_cast<std::size_t>(scaled_w) * 4);
  s.rgb_row.resize(static_cast<std::size_t>(scaled_w) * 3);
  const std::size_t row_bytes = static_cast<std::size_t>(n) * 3;
  s.rows.resize(static_cast<std::size_t>(s.axis_y.hi - s.axis_y.lo) * row_bytes);
  job.axis_x = &s.axis_x;
  job.axis_y = &s.axis_y;
  job.scanline = s.scanline.data();
  job.rgb_row = s.rgb_row.data();
  job.rows = s.rows.data();
  // Phase 2: decode the region and run the horizontal pass.
  if (setjmp(d.errors.jump) != 0) {
    failure = Failure::kLibjpeg;
  } else {
    decode_region(d, job);
  }
  jpeg_abort_decompress(&d.cinfo);
  if (failure == Failure::kNone && d.errors.end_of_file && !o.decode.accept_truncated) {
    failure = Failure::kTruncated;
  }
  if (failure != Failure::kNone) throw_failure(failure, d.errors, h, o.decode.max_pixels);
  report.decode.warnings = d.errors.warnings;
  report.decode.truncated = d.errors.end_of_file || !has_jpeg_end_marker(data, size);
  report.decode.first_warning = d.errors.first_warning;
  report.decoded_pixels = job.decoded_pixels;
  // Phase 3: the vertical pass, then flip and normalise into the caller's slot.
  s.pixels.resize(static_cast<std::size_t>(n) * row_bytes);
  detail::resample_columns(s.rows.data(), s.axis_y.lo, static_cast<int>(row_bytes), s.axis_y,
                           s.pixels.data());
  if (o.type == SampleType::kFloat32) {
    write_normalised(s.pixels.data(), n, plan.flip, s.lut_f32, static_cast<float*>(out));
  } else {
    write_normalised(s.pixels.data(), n, plan.flip, s.lut_u16, static_cast<std::uint16_t*>(out));
  }
  return report;
}

}  // namespace gpuperf

// JPEG writing. Errors longjmp out of libjpeg as in the decoder; the buffers live outside the
// setjmp region.
#include "gpuperf/input/jpeg_encoder.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <jpeglib.h>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

struct EncodeErrors {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_encode_error(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<EncodeErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

void quiet(j_common_ptr /*cinfo*/, int /*level*/) {}

// Fills `rows` (the stored samples) from the RGB image.
void stored_samples(const RgbImage& image, JpegEncodeColor color, std::vector<std::uint8_t>& out) {
  const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
  const std::uint8_t* in = image.pixels.data();
  if (color == JpegEncodeColor::kYCbCr) {
    out.assign(in, in + pixels * 3);
  } else if (color == JpegEncodeColor::kGrayscale) {
    out.resize(pixels);
    for (std::size_t i = 0; i < pixels; ++i) {
      const int y = (299 * in[i * 3] + 587 * in[i * 3 + 1] + 114 * in[i * 3 + 2] + 500) / 1000;
      out[i] = static_cast<std::uint8_t>(y);
    }
  } else {
    // Stored (inverted) bytes s such that PIL's reading R = sK - (255 - sC) sK / 255 gives the
    // colour back: sK = max(R, G, B), sC = 255 - 255 (sK - R) / sK.
    out.resize(pixels * 4);
    for (std::size_t i = 0; i < pixels; ++i) {
      const int k = std::max({in[i * 3], in[i * 3 + 1], in[i * 3 + 2]});
      for (int c = 0; c < 3; ++c) {
        const int v = k == 0 ? 255 : 255 - (255 * (k - in[i * 3 + c]) + k / 2) / k;
        out[i * 4 + c] = static_cast<std::uint8_t>(v);
      }
      out[i * 4 + 3] = static_cast<std::uint8_t>(k);
    }
  }
}

struct Compressor {
  jpeg_compress_struct cinfo{};
  EncodeErrors errors{};
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  Compressor() {
    cinfo.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = on_encode_error;
    errors.base.emit_message = quiet;
    jpeg_create_compress(&cinfo);
  }
  ~Compressor() {
    jpeg_destroy_compress(&cinfo);
    std::free(buffer);
  }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
};

// The compression inside the setjmp region (pointers and ints only).
void compress(Compressor& c, const RgbImage& image, const JpegEncodeOptions& options,
              const std::uint8_t* samples) {
  jpeg_mem_dest(&c.cinfo, &c.buffer, &c.size);
  c.cinfo.image_width = static_cast<JDIMENSION>(image.width);
  c.cinfo.image_height = static_cast<JDIMENSION>(image.height);
  int components = 3;
  if (options.color == JpegEncodeColor::kGrayscale) {
    components = 1;
    c.cinfo.in_color_space = JCS_GRAYSCALE;
  } else if (options.color == JpegEncodeColor::kCMYK || options.color == JpegEncodeColor::kYCCK) {
    components = 4;
    c.cinfo.in_color_space = JCS_CMYK;
  } else {
    c.cinfo.in_color_space = JCS_RGB;
  }
  c.cinfo.input_components = components;
  jpeg_set_defaults(&c.cinfo);
  if (options.color == JpegEncodeColor::kYCCK) jpeg_set_colorspace(&c.cinfo, JCS_YCCK);
  jpeg_set_quality(&c.cinfo, options.quality, TRUE);
  if (options.color == JpegEncodeColor::kYCbCr) {  // the defaults: luma 2 x 2, chroma 1 x 1
    const bool half_width =
        options.chroma == JpegChroma::k422 || options.chroma == JpegChroma::k420;
    const bool half_height =
        options.chroma == JpegChroma::k440 || options.chroma == JpegChroma::k420;
    c.cinfo.comp_info[0].h_samp_factor = half_width ? 2 : 1;
    c.cinfo.comp_info[0].v_samp_factor = half_height ? 2 : 1;
  }
  if (options.progressive) jpeg_simple_progression(&c.cinfo);
  jpeg_start_compress(&c.cinfo, TRUE);
  const std::size_t stride = static_cast<std::size_t>(image.width) * components;
  while (c.cinfo.next_scanline < c.cinfo.image_height) {
    JSAMPROW row[1] = {
        const_cast<std::uint8_t*>(samples + stride * c.cinfo.next_scanline)};  // libjpeg's API
    jpeg_write_scanlines(&c.cinfo, row, 1);
  }
  jpeg_finish_compress(&c.cinfo);
}

}  // namespace

void JpegEncodeOptions::validate() const {
  require_setting(quality >= 1 && quality <= 100, "JpegEncodeOptions::quality", quality,
                  "in 1..100");
}

std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, const JpegEncodeOptions& options) {
  options.validate();
  if (image.width < 1 || image.height < 1 ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * 3) {
    throw ConfigError(
        "encode_jpeg: the image must be at least 1 x 1 with width * height * 3 bytes");
  }
  std::vector<std::uint8_t> samples;
  stored_samples(image, options.color, samples);
  Compressor c;
  bool failed = false;
  if (setjmp(c.errors.jump) != 0) {
    failed = true;
  } else {
    compress(c, image, options, samples.data());
  }
  if (failed) throw Error(std::string("encode_jpeg: libjpeg: ") + c.errors.message);
  return std::vector<std::uint8_t>(c.buffer, c.buffer + c.size);
}

}  // namespace gpuperf

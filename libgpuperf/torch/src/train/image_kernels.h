#pragma once
// The GPU half of a training or validation sample's transform: one kernel that takes decoded
// images (nvJPEG's interleaved RGB, or its YCbCr planes with the chroma as the file stores it,
// upsampled and converted here as libjpeg does: gpuperf/input/ycbcr.h) through torchvision's
// geometry (RandomResizedCrop or Resize
// + CenterCrop, RandomHorizontalFlip) with PIL's antialiased bilinear resampling (the triangle
// filter widened by the downscale factor, the horizontal pass rounded to 8 bits before the
// vertical one, as Pillow's Resample.c does) and Normalize, writing NHWC samples. The CPU path
// (input/jpeg_decoder.h) computes the same in fixed point: outputs differ by at most a level where
// a weight's rounding differs. No LibTorch here: the caller (train/gpu_image_decoder.cpp) checks
// the buffers.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/nhwc_kernels.h"  // NhwcDtype

namespace gpuperf::detail {

/// One output sample: the region of a decoded image that is resized, the resized size, and the
/// output window of the resized region (the sample is out_size x out_size pixels of it; outside
/// the resized region, as CenterCrop pads, the pixels are zeros before normalisation).
struct ImageResizeJob {
  const std::uint8_t* pixels = nullptr;  ///< RGB interleaved rows, or the luma plane (device)
  std::int32_t pitch = 0;                ///< bytes from one row to the next
  std::int32_t planar = 0;  ///< 1: pixels is the luma plane, blue and red the chroma planes
  const std::uint8_t* blue = nullptr;  ///< Cb samples (planar only)
  const std::uint8_t* red = nullptr;   ///< Cr samples (planar only)
  std::int32_t chroma_pitch = 0;       ///< both chroma planes' row pitch
  std::int32_t chroma_width = 0;       ///< their samples across and down (libjpeg's downsampled
  std::int32_t chroma_height = 0;      ///< width and height)
  std::int32_t chroma_h_factor = 1;    ///< image pixels per chroma sample: 1 or 2 each way
  std::int32_t chroma_v_factor = 1;
  std::int32_t region_top = 0;  ///< the resized region within the image
  std::int32_t region_left = 0;
  std::int32_t region_height = 0;
  std::int32_t region_width = 0;
  std::int32_t resized_height = 0;  ///< the region's size after the resize
  std::int32_t resized_width = 0;
  std::int32_t window_top = 0;  ///< the output window in the resized region (may be negative)
  std::int32_t window_left = 0;
  std::int32_t flip = 0;    ///< mirror the output left to right
  std::int32_t sample = 0;  ///< the output slot
};

/// The normalisation: x = (level / 255 - mean[c]) / std[c], in float32 as torch computes it.
struct ImageNormalization {
  float mean[3];
  float std[3];
};

/// Writes one out_size x out_size x 3 sample per job into `out` (NHWC, slot job.sample) on
/// `stream`. `jobs` is in device memory. Returns the launch error.
cudaError_t resize_normalize_images(const ImageResizeJob* jobs, int job_count, int out_size,
                                    const ImageNormalization& normalization, NhwcDtype out_dtype,
                                    void* out, cudaStream_t stream);

}  // namespace gpuperf::detail

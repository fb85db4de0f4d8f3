#pragma once
// The GPU half of a training or validation sample's transform: one kernel that takes decoded RGB
// images (nvJPEG's interleaved output) through torchvision's geometry (RandomResizedCrop or Resize
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
  const std::uint8_t* pixels = nullptr;  ///< the image: RGB interleaved rows (device memory)
  std::int32_t pitch = 0;                ///< bytes from one row to the next
  std::int32_t region_top = 0;           ///< the resized region within the image
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

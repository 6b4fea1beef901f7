// A crop of an image resized (bilinear, tf.image.resize's half-pixel centres)
// from its decode at 1/denom scale: the window of the scaled image that the
// crop needs, and the resize plan that samples the crop's geometry from it.
// With denom 1 the plan is tf.image.resize's own (same float32 steps), so the
// result equals resize(crop); with a larger denom each output sample sits
// where it would in the full-size crop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jpeg_partial.h"

namespace tfrx {

struct CropBox {
  int64_t y = 0, x = 0, height = 0, width = 0;  // in pixels of the full-size image
};

struct CropResizePlan {
  int64_t first_row = 0, rows = 0, first_col = 0, cols = 0;  // the window of the scaled image to decode
  std::vector<int64_t> rows_lo, rows_hi, left, right;         // resize_bilinear's plan (resize.h)
  std::vector<float> ly, lx;
};

// `scaled_height` / `scaled_width`: the image at 1/denom (ceil(size / denom)).
// flip mirrors the output columns. The box must lie inside the image.
CropResizePlan plan_crop_resize(const CropBox& box, unsigned denom, int64_t scaled_height, int64_t scaled_width,
                                size_t out_h, size_t out_w, size_t channels, bool flip);

// One image of a fused crop-and-resize decode.
struct CropResizeJob {
  const uint8_t* data = nullptr;  // the JPEG
  size_t size = 0;
  const uint8_t* pixels = nullptr;  // or the whole image already decoded at 1/denom (no libjpeg-turbo)
  int channels = 3;                 // 1 or 3
  int64_t image_height = 0, image_width = 0;
  CropBox box;
  unsigned denom = 1;  // 1, 2, 4 or 8
  bool flip = false;
  float* out = nullptr;  // (out_h, out_w, channels) float32
  size_t out_h = 0, out_w = 0;
  const float* mean = nullptr;  // per channel: out = (resized - mean) / std, both or neither
  const float* std_dev = nullptr;
  // Read the file to its end and fail (kInvalid) on any libjpeg warning (corrupt data), as a strict
  // whole-image decode does (simplejpeg's strict mode, which tfrx.image.decode_jpeg uses).
  bool strict = false;
};

// "" when the job can run, else what is wrong with it.
std::string check_crop_resize(const CropResizeJob& job);

// Decodes the window the box needs at 1/denom (only its rows and iMCU
// columns; the rows below are never entropy-decoded), or takes it from
// job.pixels, and resizes it into job.out. Runs without touching Python.
JpegOutcome crop_resize(const CropResizeJob& job);

}  // namespace tfrx

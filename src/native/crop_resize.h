// A crop of an image resized (bilinear, tf.image.resize's half-pixel centres)
// from its decode at 1/denom scale: the window of the scaled image that the
// crop needs, and the resize plan that samples the crop's geometry from it.
// With denom 1 the plan is tf.image.resize's own (same float32 steps), so the
// result equals resize(crop); with a larger denom each output sample sits
// where it would in the full-size crop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

}  // namespace tfrx

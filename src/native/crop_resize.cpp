#include "crop_resize.h"

#include <algorithm>
#include <cmath>

namespace tfrx {
namespace {

// tf.image.resize's bilinear source positions (half-pixel centres) in float32,
// step for step as TensorFlow (and tfrx.image.resize) compute them.
void resize_axis(int64_t in, size_t out, int64_t* lo, int64_t* hi, float* lerp) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (size_t i = 0; i < out; ++i) {
    const float pos = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const float low = std::floor(pos);
    lerp[i] = pos - low;
    lo[i] = std::clamp<int64_t>(static_cast<int64_t>(low), 0, in - 1);
    hi[i] = std::min<int64_t>(static_cast<int64_t>(std::ceil(pos)), in - 1);
  }
}

// The same positions for a crop [start, start + length) decoded at 1/denom:
// scaled pixel j covers full-size pixels [j * denom, (j + 1) * denom), and
// the window holds scaled pixels [first, first + count).
void scaled_axis(int64_t start, int64_t length, size_t out, unsigned denom, int64_t scaled, int64_t* first,
                 int64_t* count, int64_t* lo, int64_t* hi, float* lerp) {
  const int64_t d = denom;
  *first = start / d;
  *count = std::min<int64_t>((start + length + d - 1) / d, scaled) - *first;
  const double step = static_cast<double>(length) / static_cast<double>(out);
  for (size_t i = 0; i < out; ++i) {
    const auto pos = static_cast<float>((start + (static_cast<double>(i) + 0.5) * step) / d - 0.5 - *first);
    const float low = std::floor(pos);
    lerp[i] = pos - low;
    lo[i] = std::clamp<int64_t>(static_cast<int64_t>(low), 0, *count - 1);
    hi[i] = std::clamp<int64_t>(static_cast<int64_t>(low) + 1, 0, *count - 1);
  }
}

}  // namespace

CropResizePlan plan_crop_resize(const CropBox& box, unsigned denom, int64_t scaled_height, int64_t scaled_width,
                                size_t out_h, size_t out_w, size_t channels, bool flip) {
  CropResizePlan p;
  p.rows_lo.resize(out_h);
  p.rows_hi.resize(out_h);
  p.ly.resize(out_h);
  std::vector<int64_t> x_lo(out_w), x_hi(out_w);
  std::vector<float> x_lerp(out_w);
  if (denom <= 1) {
    p.first_row = box.y;
    p.rows = box.height;
    p.first_col = box.x;
    p.cols = box.width;
    resize_axis(box.height, out_h, p.rows_lo.data(), p.rows_hi.data(), p.ly.data());
    resize_axis(box.width, out_w, x_lo.data(), x_hi.data(), x_lerp.data());
  } else {
    scaled_axis(box.y, box.height, out_h, denom, scaled_height, &p.first_row, &p.rows, p.rows_lo.data(),
                p.rows_hi.data(), p.ly.data());
    scaled_axis(box.x, box.width, out_w, denom, scaled_width, &p.first_col, &p.cols, x_lo.data(), x_hi.data(),
                x_lerp.data());
  }
  // Per output sample (pixel * channels + channel): offsets of the pixel's channel in a source row.
  const size_t samples = out_w * channels;
  p.left.resize(samples);
  p.right.resize(samples);
  p.lx.resize(samples);
  for (size_t o = 0; o < out_w; ++o) {
    const size_t from = flip ? out_w - 1 - o : o;
    for (size_t k = 0; k < channels; ++k) {
      p.left[o * channels + k] = x_lo[from] * static_cast<int64_t>(channels) + static_cast<int64_t>(k);
      p.right[o * channels + k] = x_hi[from] * static_cast<int64_t>(channels) + static_cast<int64_t>(k);
      p.lx[o * channels + k] = x_lerp[from];
    }
  }
  return p;
}

}  // namespace tfrx

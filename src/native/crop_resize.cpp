#include "crop_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>

#include "resize.h"

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

std::string check_crop_resize(const CropResizeJob& job) {
  if (job.channels != 1 && job.channels != 3) return "channels must be 1 or 3";
  if (job.denom != 1 && job.denom != 2 && job.denom != 4 && job.denom != 8) return "denom must be 1, 2, 4 or 8";
  const CropBox& b = job.box;
  if (b.y < 0 || b.x < 0 || b.height <= 0 || b.width <= 0 || b.y + b.height > job.image_height ||
      b.x + b.width > job.image_width)
    return "the box is not inside the image";
  if ((job.mean == nullptr) != (job.std_dev == nullptr)) return "mean and std must both be given";
  return "";
}

JpegOutcome crop_resize(const CropResizeJob& job) {
  JpegOutcome outcome;
  const size_t c = static_cast<size_t>(job.channels);
  if (job.out_h == 0 || job.out_w == 0) return outcome;
  const int64_t denom = job.denom;
  const int64_t scaled_h = (job.image_height + denom - 1) / denom, scaled_w = (job.image_width + denom - 1) / denom;
  const CropResizePlan plan = plan_crop_resize(job.box, job.denom, scaled_h, scaled_w, job.out_h, job.out_w, c, job.flip);
  // Not value-initialised: zeroing a window that is overwritten at once was ~1.5% of the fused decode's CPU
  // time on ImageNet-sized JPEGs. A failed allocation ends the decode with kBadArgs (nothing is thrown through libjpeg).
  std::unique_ptr<uint8_t[]> window;
  auto allocate = [&window](size_t n) -> uint8_t* {
    window.reset(new (std::nothrow) uint8_t[std::max<size_t>(n, 1)]);
    return window.get();
  };
  const size_t row_bytes = static_cast<size_t>(plan.cols) * c;
  if (job.pixels != nullptr) {
    if (allocate(static_cast<size_t>(plan.rows) * row_bytes) == nullptr) {
      outcome.status = JpegStatus::kBadArgs;
      return outcome;
    }
    for (int64_t r = 0; r < plan.rows; ++r)
      std::memcpy(window.get() + r * row_bytes,
                  job.pixels + ((plan.first_row + r) * scaled_w + plan.first_col) * static_cast<int64_t>(c), row_bytes);
  } else {
    JpegRequest rq;
    rq.channels = job.channels;
    rq.scale_denom = job.denom;
    rq.crop = true;
    rq.crop_y = plan.first_row;
    rq.crop_x = plan.first_col;
    rq.crop_height = plan.rows;
    rq.crop_width = plan.cols;
    rq.finish = job.strict;  // otherwise the rows below the window are never entropy-decoded
    outcome = jpeg_decode(job.data, job.size, rq,
                          [&](size_t h, size_t w, size_t comps) -> uint8_t* { return allocate(h * w * comps); });
    if (outcome.status == JpegStatus::kOk && job.strict && outcome.warnings > 0) {
      outcome.status = JpegStatus::kInvalid;
      outcome.message = "corrupt JPEG data (libjpeg warned while decoding)";
    }
    if (outcome.status != JpegStatus::kOk) return outcome;
  }
  // The statistics repeated along a row, so that the normalisation runs over plain arrays (vectorised).
  std::vector<float> m, sd;
  if (job.mean != nullptr) {
    const size_t samples = job.out_w * c;
    m.resize(samples);
    sd.resize(samples);
    for (size_t i = 0; i < samples; ++i) {
      m[i] = job.mean[i % c];
      sd[i] = job.std_dev[i % c];
    }
  }
  resize_bilinear<uint8_t>(window.get(), 1, static_cast<size_t>(plan.rows), static_cast<size_t>(plan.cols), c,
                           job.out, job.out_h, job.out_w, plan.rows_lo.data(), plan.rows_hi.data(), plan.ly.data(),
                           plan.left.data(), plan.right.data(), plan.lx.data(), job.mean != nullptr ? m.data() : nullptr,
                           job.mean != nullptr ? sd.data() : nullptr);
  return outcome;
}

}  // namespace tfrx

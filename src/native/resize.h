// Bilinear image resize with tf.image.resize semantics (half-pixel centres,
// no antialiasing): float32 output, each output row the y-lerp of two
// x-lerped source rows, in the same float32 steps as TensorFlow.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tfrx {

// Per-output-axis plan, computed once per (in, out) size by the caller:
// rows_lo/rows_hi/ly have out_h entries (source rows and y weight);
// left/right/lx have out_w * c entries (source sample offsets within a row,
// pixel * c + channel, and x weight per sample). Offsets must already be
// bounds-checked against (h, w * c). Runs without touching Python.
// With `mean` and `std_dev` (out_w * c entries each: per-channel statistics
// repeated along a row) every output value is (resized - mean) / std_dev in
// float32, as NumPy computes it, made while the row is in cache.
template <typename T>
void resize_bilinear(const T* src, size_t n, size_t h, size_t w, size_t c, float* dst, size_t out_h,
                     size_t out_w, const int64_t* rows_lo, const int64_t* rows_hi, const float* ly,
                     const int64_t* left, const int64_t* right, const float* lx, const float* mean = nullptr,
                     const float* std_dev = nullptr);

// Nearest-neighbour gather on raw pixels of pixel_bytes bytes (dtype-agnostic):
// output row y, column x is source row rows[y], column cols[x]. Indices must
// already be bounds-checked against (h, w).
void resize_nearest(const uint8_t* src, size_t n, size_t h, size_t w, size_t pixel_bytes, uint8_t* dst,
                    size_t out_h, size_t out_w, const int64_t* rows, const int64_t* cols);

}  // namespace tfrx

#include "resize.h"

#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TFRX_RESIZE_AVX2 1
#define TFRX_RESIZE_INLINE inline __attribute__((always_inline))
#else
#define TFRX_RESIZE_AVX2 0
#define TFRX_RESIZE_INLINE inline
#endif

namespace tfrx {
namespace {

// One output row from its two x-lerped source rows, normalised: the same
// float32 steps as the plain blend followed by NumPy's (x - mean) / std
// (IEEE subtraction and division, no fused multiply-add on any target).
// The division is most of the cost: AVX2 does eight at a time where the
// baseline build does four.
TFRX_RESIZE_INLINE void blend_normalised_row(const float* top, const float* bottom, float wy, const float* mean,
                                             const float* std_dev, float* out, size_t samples) {
  for (size_t i = 0; i < samples; ++i) {
    const float v = top[i] + (bottom[i] - top[i]) * wy;
    out[i] = (v - mean[i]) / std_dev[i];
  }
}

#if TFRX_RESIZE_AVX2
__attribute__((target("avx2"))) void blend_normalised_row_avx2(const float* top, const float* bottom, float wy,
                                                               const float* mean, const float* std_dev, float* out,
                                                               size_t samples) {
  blend_normalised_row(top, bottom, wy, mean, std_dev, out, samples);
}
#endif

void blend_normalised(const float* top, const float* bottom, float wy, const float* mean, const float* std_dev,
                      float* out, size_t samples) {
#if TFRX_RESIZE_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return blend_normalised_row_avx2(top, bottom, wy, mean, std_dev, out, samples);
#endif
  blend_normalised_row(top, bottom, wy, mean, std_dev, out, samples);
}

// One source row x-interpolated: left + (right - left) * lx per output sample.
// The plan repeats a pixel's offset and weight across its C channels, so with a
// channel count known at compile time only the first channel's entries are read.
template <typename T, size_t C>
void lerp_row_c(const T* row, size_t pixels, const int64_t* left, const int64_t* right, const float* lx,
                float* out) {
  for (size_t o = 0; o < pixels; ++o) {
    const T* pl = row + left[o * C];
    const T* pr = row + right[o * C];
    const float wx = lx[o * C];
    for (size_t k = 0; k < C; ++k) {
      const float l = static_cast<float>(pl[k]);
      const float r = static_cast<float>(pr[k]);
      out[o * C + k] = l + (r - l) * wx;
    }
  }
}

#if defined(__SSE2__)
// Four bytes at p as four floats.
inline __m128 load4_u8(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  const __m128i zero = _mm_setzero_si128();
  __m128i x = _mm_cvtsi32_si128(v);
  x = _mm_unpacklo_epi8(x, zero);
  x = _mm_unpacklo_epi16(x, zero);
  return _mm_cvtepi32_ps(x);
}

// lerp_row_c<uint8_t, C> for C = 3 or 4 with one pixel's channels in the lanes
// of one register: the same float32 subtract, multiply and add per channel
// (no fused multiply-add), so the results are bit-identical. Reads four
// bytes at each source pixel and writes four floats at each output pixel, so
// with C = 3 it stops where a lane would reach past the row's last pixel or
// past the output, and leaves the rest to the scalar loop.
template <size_t C>
size_t lerp_row_sse2(const uint8_t* row, size_t pixels, size_t row_pixels, const int64_t* left,
                     const int64_t* right, const float* lx, float* out) {
  size_t o = 0;
  for (; o < pixels; ++o) {
    const auto l = static_cast<size_t>(left[o * C]);
    const auto r = static_cast<size_t>(right[o * C]);
    if (C == 3 && (o + 1 == pixels || l + C >= row_pixels * C || r + C >= row_pixels * C)) break;
    const __m128 pl = load4_u8(row + l);
    const __m128 pr = load4_u8(row + r);
    const __m128 v = _mm_add_ps(pl, _mm_mul_ps(_mm_sub_ps(pr, pl), _mm_set1_ps(lx[o * C])));
    _mm_storeu_ps(out + o * C, v);
  }
  return o;
}
#endif

template <typename T>
void lerp_row(const T* row, size_t c, size_t samples, const int64_t* left, const int64_t* right, const float* lx,
              float* out, size_t row_pixels) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, uint8_t>) {
    if (c == 3 || c == 4) {
      const size_t pixels = samples / c;
      const size_t done = c == 3 ? lerp_row_sse2<3>(row, pixels, row_pixels, left, right, lx, out)
                                 : lerp_row_sse2<4>(row, pixels, row_pixels, left, right, lx, out);
      const size_t skip = done * c;
      if (c == 3) return lerp_row_c<T, 3>(row, pixels - done, left + skip, right + skip, lx + skip, out + skip);
      return lerp_row_c<T, 4>(row, pixels - done, left + skip, right + skip, lx + skip, out + skip);
    }
  }
#else
  (void)row_pixels;
#endif
  switch (c) {
    case 1: return lerp_row_c<T, 1>(row, samples, left, right, lx, out);
    case 3: return lerp_row_c<T, 3>(row, samples / 3, left, right, lx, out);
    case 4: return lerp_row_c<T, 4>(row, samples / 4, left, right, lx, out);
    default:
      for (size_t i = 0; i < samples; ++i) {
        const float l = static_cast<float>(row[left[i]]);
        const float r = static_cast<float>(row[right[i]]);
        out[i] = l + (r - l) * lx[i];
      }
  }
}

}  // namespace

template <typename T>
void resize_bilinear(const T* src, size_t n, size_t h, size_t w, size_t c, float* dst, size_t out_h,
                     size_t out_w, const int64_t* rows_lo, const int64_t* rows_hi, const float* ly,
                     const int64_t* left, const int64_t* right, const float* lx, const float* mean,
                     const float* std_dev) {
  const size_t samples = out_w * c;
  const size_t row_len = w * c;
  // Two x-lerped rows, remembered by source row so that output rows sharing a
  // source row (upscaling, or the bottom row of one being the top of the next)
  // interpolate it once.
  std::vector<float> buf(2 * samples);
  float* slot[2] = {buf.data(), buf.data() + samples};
  for (size_t b = 0; b < n; ++b) {
    const T* img = src + b * h * row_len;
    int64_t held[2] = {-1, -1};
    auto fetch = [&](int64_t row, int keep) -> const float* {
      for (int s = 0; s < 2; ++s)
        if (held[s] == row) return slot[s];
      const int s = keep == 0 ? 1 : 0;  // overwrite the slot not in use
      lerp_row(img + static_cast<size_t>(row) * row_len, c, samples, left, right, lx, slot[s], w);
      held[s] = row;
      return slot[s];
    };
    for (size_t y = 0; y < out_h; ++y) {
      const float* top = fetch(rows_lo[y], -1);
      const int top_slot = held[0] == rows_lo[y] ? 0 : 1;
      const float* bottom = fetch(rows_hi[y], top_slot);
      float* out = dst + (b * out_h + y) * samples;
      const float wy = ly[y];
      if (mean != nullptr) {
        blend_normalised(top, bottom, wy, mean, std_dev, out, samples);
        continue;
      }
      for (size_t i = 0; i < samples; ++i) out[i] = top[i] + (bottom[i] - top[i]) * wy;
    }
  }
}

namespace {

template <size_t PB>
void gather_row(const uint8_t* row, size_t out_w, size_t pb, const int64_t* cols, uint8_t* out) {
  const size_t bytes = PB ? PB : pb;
  for (size_t x = 0; x < out_w; ++x) std::memcpy(out + x * bytes, row + static_cast<size_t>(cols[x]) * bytes, bytes);
}

}  // namespace

void resize_nearest(const uint8_t* src, size_t n, size_t h, size_t w, size_t pixel_bytes, uint8_t* dst,
                    size_t out_h, size_t out_w, const int64_t* rows, const int64_t* cols) {
  const size_t in_row = w * pixel_bytes, out_row = out_w * pixel_bytes;
  for (size_t b = 0; b < n; ++b) {
    const uint8_t* img = src + b * h * in_row;
    uint8_t* out = dst + b * out_h * out_row;
    for (size_t y = 0; y < out_h; ++y) {
      uint8_t* o = out + y * out_row;
      if (y > 0 && rows[y] == rows[y - 1]) {  // upscaling repeats rows: copy the one just built
        std::memcpy(o, o - out_row, out_row);
        continue;
      }
      const uint8_t* row = img + static_cast<size_t>(rows[y]) * in_row;
      switch (pixel_bytes) {
        case 1: gather_row<1>(row, out_w, 1, cols, o); break;
        case 3: gather_row<3>(row, out_w, 3, cols, o); break;
        case 4: gather_row<4>(row, out_w, 4, cols, o); break;
        case 12: gather_row<12>(row, out_w, 12, cols, o); break;
        default: gather_row<0>(row, out_w, pixel_bytes, cols, o);
      }
    }
  }
}

template void resize_bilinear<uint8_t>(const uint8_t*, size_t, size_t, size_t, size_t, float*, size_t, size_t,
                                       const int64_t*, const int64_t*, const float*, const int64_t*,
                                       const int64_t*, const float*, const float*, const float*);
template void resize_bilinear<float>(const float*, size_t, size_t, size_t, size_t, float*, size_t, size_t,
                                     const int64_t*, const int64_t*, const float*, const int64_t*, const int64_t*,
                                     const float*, const float*, const float*);

}  // namespace tfrx

#include <nanobind/ndarray.h>

#include "bindings.h"
#include "resize.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

void bind_image(nb::module_& m) {
  using PlanIdx = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  using PlanW = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  using ResizeOut = nb::ndarray<float, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
  auto bind_bilinear = [&m](auto tag) {
    using T = decltype(tag);
    using ImageIn = nb::ndarray<const T, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
    m.def(
        "resize_bilinear",
        [](ImageIn img, ResizeOut out, PlanIdx rows_lo, PlanIdx rows_hi, PlanW ly, PlanIdx left, PlanIdx right,
           PlanW lx) {
          const size_t n = img.shape(0), h = img.shape(1), w = img.shape(2), c = img.shape(3);
          const size_t out_h = out.shape(1), out_w = out.shape(2);
          if (out.shape(0) != n || out.shape(3) != c)
            throw nb::value_error("resize_bilinear: out must be (n, out_h, out_w, c) for the same n and c");
          if (rows_lo.shape(0) != out_h || rows_hi.shape(0) != out_h || ly.shape(0) != out_h)
            throw nb::value_error("resize_bilinear: row plan length differs from out_h");
          const size_t samples = out_w * c;
          if (left.shape(0) != samples || right.shape(0) != samples || lx.shape(0) != samples)
            throw nb::value_error("resize_bilinear: column plan length differs from out_w * c");
          if (n == 0 || samples == 0 || out_h == 0) return;
          if (h == 0 || w == 0) throw nb::value_error("resize_bilinear: empty source image");
          const int64_t row_len = static_cast<int64_t>(w * c);
          for (size_t i = 0; i < out_h; ++i)
            if (rows_lo.data()[i] < 0 || rows_lo.data()[i] >= static_cast<int64_t>(h) || rows_hi.data()[i] < 0 ||
                rows_hi.data()[i] >= static_cast<int64_t>(h))
              throw nb::value_error("resize_bilinear: source row out of range");
          for (size_t i = 0; i < samples; ++i)
            // In range and on sample i's own channel: the kernel reads a pixel's C channels
            // from its first channel's offset.
            if (left.data()[i] < 0 || left.data()[i] >= row_len || right.data()[i] < 0 ||
                right.data()[i] >= row_len || static_cast<size_t>(left.data()[i]) % c != i % c ||
                static_cast<size_t>(right.data()[i]) % c != i % c)
              throw nb::value_error("resize_bilinear: source sample out of range");
          nb::gil_scoped_release release;
          resize_bilinear<T>(img.data(), n, h, w, c, out.data(), out_h, out_w, rows_lo.data(),
                                   rows_hi.data(), ly.data(), left.data(), right.data(), lx.data());
        },
        "img"_a, "out"_a, "rows_lo"_a, "rows_hi"_a, "ly"_a, "left"_a, "right"_a, "lx"_a,
        "tf.image.resize bilinear (half-pixel centres) of img (n, h, w, c) into float32 out\n"
        "(n, out_h, out_w, c), from a per-size plan: source rows and y weights per output row,\n"
        "source sample offsets (pixel * c + channel) and x weights per output sample.");
  };
  bind_bilinear(uint8_t{});
  bind_bilinear(float{});
  using BytesIn = nb::ndarray<const uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
  using BytesOut = nb::ndarray<uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
  m.def(
      "resize_nearest",
      [](BytesIn img, BytesOut out, size_t pixel_bytes, PlanIdx rows, PlanIdx cols) {
        const size_t n = img.shape(0), h = img.shape(1), out_h = rows.shape(0), out_w = cols.shape(0);
        if (pixel_bytes == 0 || img.shape(2) % pixel_bytes != 0)
          throw nb::value_error("resize_nearest: row length is not a whole number of pixels");
        const size_t w = img.shape(2) / pixel_bytes;
        if (out.shape(0) != n || out.shape(1) != out_h || out.shape(2) != out_w * pixel_bytes)
          throw nb::value_error("resize_nearest: out must be (n, len(rows), len(cols) * pixel_bytes)");
        for (size_t i = 0; i < out_h; ++i)
          if (rows.data()[i] < 0 || rows.data()[i] >= static_cast<int64_t>(h))
            throw nb::value_error("resize_nearest: source row out of range");
        for (size_t i = 0; i < out_w; ++i)
          if (cols.data()[i] < 0 || cols.data()[i] >= static_cast<int64_t>(w))
            throw nb::value_error("resize_nearest: source column out of range");
        nb::gil_scoped_release release;
        resize_nearest(img.data(), n, h, w, pixel_bytes, out.data(), out_h, out_w, rows.data(),
                             cols.data());
      },
      "img"_a, "out"_a, "pixel_bytes"_a, "rows"_a, "cols"_a,
      "Nearest-neighbour resize on raw bytes: img (n, h, w * pixel_bytes) into out\n"
      "(n, len(rows), len(cols) * pixel_bytes), output pixel (y, x) from source (rows[y], cols[x]).");
}

}  // namespace py
}  // namespace tfrx

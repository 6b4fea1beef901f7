// Python bindings of jpeg_partial.h: load the library, read a header, decode
// a window into a NumPy array that owns its memory.
#include "jpeg_partial_bind.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "buffer.h"
#include "crop_resize.h"
#include "jpeg_partial.h"
#include "resize.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace {

// What a decode produced: the status, libjpeg's message, the header and the
// pixels (None unless the status is JPEG_OK).
struct JpegDecoded {
  int status = 0;
  std::string message;
  JpegHeader header;
  long warnings = 0;
  nb::object image = nb::none();
};

nb::object owned_image(std::unique_ptr<uint8_t[]> data, size_t h, size_t w, size_t c) {
  uint8_t* raw = data.release();
  nb::capsule owner(raw, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
  size_t shape[3] = {h, w, c};
  return nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<3>>(raw, 3, shape, owner));
}

JpegDecoded py_jpeg_decode(nb::handle data, int channels, unsigned scale_num, unsigned scale_denom,
                           bool fancy_upsampling, bool fast_dct, bool try_recover_truncated,
                           std::optional<std::array<int64_t, 4>> window, bool finish) {
  ByteView view(data);
  JpegRequest rq;
  rq.channels = channels;
  rq.scale_num = scale_num;
  rq.scale_denom = scale_denom;
  rq.fancy_upsampling = fancy_upsampling;
  rq.fast_dct = fast_dct;
  rq.try_recover_truncated = try_recover_truncated;
  rq.finish = finish;
  if (window) {
    rq.crop = true;
    rq.crop_y = (*window)[0];
    rq.crop_x = (*window)[1];
    rq.crop_height = (*window)[2];
    rq.crop_width = (*window)[3];
  }
  std::unique_ptr<uint8_t[]> pixels;
  size_t h = 0, w = 0, c = 0;
  JpegOutcome out;
  {
    nb::gil_scoped_release release;
    out = jpeg_decode(view.data(), view.size(), rq, [&](size_t height, size_t width, size_t comps) -> uint8_t* {
      pixels.reset(new (std::nothrow) uint8_t[height * width * comps]);
      h = height;
      w = width;
      c = comps;
      return pixels.get();
    });
  }
  JpegDecoded result;
  result.status = static_cast<int>(out.status);
  result.message = out.message;
  result.header = out.header;
  result.warnings = out.warnings;
  if (out.status == JpegStatus::kOk) result.image = owned_image(std::move(pixels), h, w, c);
  return result;
}

JpegDecoded py_jpeg_header(nb::handle data, unsigned scale_num, unsigned scale_denom) {
  ByteView view(data);
  JpegOutcome out;
  {
    nb::gil_scoped_release release;
    out = jpeg_read_header_info(view.data(), view.size(), scale_num, scale_denom);
  }
  JpegDecoded result;
  result.status = static_cast<int>(out.status);
  result.message = out.message;
  result.header = out.header;
  return result;
}

using FloatImage = nb::ndarray<float, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using ByteImage = nb::ndarray<const uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

// Decode (or take from `pixels`, the whole image already decoded at 1/denom)
// the window a crop needs and resize it into `out` (out_h, out_w, channels).
JpegDecoded py_jpeg_crop_resize(nb::handle data, int channels, int64_t image_height, int64_t image_width,
                                std::array<int64_t, 4> box, unsigned denom, bool flip, FloatImage out,
                                std::optional<ByteImage> pixels, std::optional<std::vector<float>> mean,
                                std::optional<std::vector<float>> std_dev) {
  const size_t out_h = out.shape(0), out_w = out.shape(1), c = out.shape(2);
  if ((channels != 1 && channels != 3) || c != static_cast<size_t>(channels))
    throw nb::value_error("jpeg_crop_resize: out must have `channels` (1 or 3) channels");
  if (denom != 1 && denom != 2 && denom != 4 && denom != 8)
    throw nb::value_error("jpeg_crop_resize: denom must be 1, 2, 4 or 8");
  const CropBox crop{box[0], box[1], box[2], box[3]};
  if (crop.y < 0 || crop.x < 0 || crop.height <= 0 || crop.width <= 0 || crop.y + crop.height > image_height ||
      crop.x + crop.width > image_width)
    throw nb::value_error("jpeg_crop_resize: the box is not inside the image");
  const int64_t scaled_h = (image_height + denom - 1) / denom, scaled_w = (image_width + denom - 1) / denom;
  if (pixels && (static_cast<int64_t>(pixels->shape(0)) != scaled_h ||
                 static_cast<int64_t>(pixels->shape(1)) != scaled_w || pixels->shape(2) != c))
    throw nb::value_error("jpeg_crop_resize: pixels must be the whole image at 1/denom with `channels` channels");
  if (mean.has_value() != std_dev.has_value() || (mean && (mean->size() != c || std_dev->size() != c)))
    throw nb::value_error("jpeg_crop_resize: mean and std must both be given, one value per channel");
  ByteView view(data);
  JpegDecoded result;
  if (out_h == 0 || out_w == 0) return result;
  JpegOutcome outcome;
  {
    nb::gil_scoped_release release;
    const CropResizePlan plan = plan_crop_resize(crop, denom, scaled_h, scaled_w, out_h, out_w, c, flip);
    std::vector<uint8_t> window;
    const size_t row_bytes = static_cast<size_t>(plan.cols) * c;
    if (pixels) {
      window.resize(static_cast<size_t>(plan.rows) * row_bytes);
      const uint8_t* src = pixels->data();
      for (int64_t r = 0; r < plan.rows; ++r)
        std::memcpy(window.data() + r * row_bytes,
                    src + ((plan.first_row + r) * scaled_w + plan.first_col) * static_cast<int64_t>(c), row_bytes);
    } else {
      JpegRequest rq;
      rq.channels = channels;
      rq.scale_denom = denom;
      rq.crop = true;
      rq.crop_y = plan.first_row;
      rq.crop_x = plan.first_col;
      rq.crop_height = plan.rows;
      rq.crop_width = plan.cols;
      rq.finish = false;  // the rows below the window are never entropy-decoded
      outcome = jpeg_decode(view.data(), view.size(), rq, [&](size_t h, size_t w, size_t comps) -> uint8_t* {
        window.resize(h * w * comps);
        return window.data();
      });
    }
    if (outcome.status == JpegStatus::kOk)
      resize_bilinear<uint8_t>(window.data(), 1, static_cast<size_t>(plan.rows), static_cast<size_t>(plan.cols), c,
                               out.data(), out_h, out_w, plan.rows_lo.data(), plan.rows_hi.data(), plan.ly.data(),
                               plan.left.data(), plan.right.data(), plan.lx.data());
    if (outcome.status == JpegStatus::kOk && mean) {
      // (x - mean) / std per channel in float32, as NumPy computes it, while the image is in cache.
      float* px = out.data();
      for (size_t i = 0; i < out_h * out_w; ++i)
        for (size_t k = 0; k < c; ++k) px[i * c + k] = (px[i * c + k] - (*mean)[k]) / (*std_dev)[k];
    }
  }
  result.status = static_cast<int>(outcome.status);
  result.message = outcome.message;
  result.header = outcome.header;
  result.warnings = outcome.warnings;
  return result;
}

}  // namespace

void bind_jpeg_partial(nb::module_& m) {
  m.attr("JPEG_OK") = static_cast<int>(JpegStatus::kOk);
  m.attr("JPEG_NO_LIBRARY") = static_cast<int>(JpegStatus::kNoLibrary);
  m.attr("JPEG_INVALID") = static_cast<int>(JpegStatus::kInvalid);
  m.attr("JPEG_BAD_WINDOW") = static_cast<int>(JpegStatus::kBadWindow);
  m.attr("JPEG_TOO_LARGE") = static_cast<int>(JpegStatus::kTooLarge);
  m.attr("JPEG_BAD_ARGS") = static_cast<int>(JpegStatus::kBadArgs);

  nb::class_<JpegHeader>(m, "JpegHeader", "A JPEG's size as stored and at the requested DCT scale, and its layout.")
      .def_ro("width", &JpegHeader::width)
      .def_ro("height", &JpegHeader::height)
      .def_ro("scaled_width", &JpegHeader::scaled_width)
      .def_ro("scaled_height", &JpegHeader::scaled_height)
      .def_ro("components", &JpegHeader::components)
      .def_ro("color_space", &JpegHeader::color_space)
      .def_ro("max_h_samp", &JpegHeader::max_h_samp)
      .def_ro("max_v_samp", &JpegHeader::max_v_samp)
      .def_ro("progressive", &JpegHeader::progressive);
  nb::class_<JpegDecoded>(m, "JpegDecoded", "Result of jpeg_decode / jpeg_header: a JPEG_* status and what was made.")
      .def_ro("status", &JpegDecoded::status)
      .def_ro("message", &JpegDecoded::message)
      .def_ro("header", &JpegDecoded::header)
      .def_ro("warnings", &JpegDecoded::warnings)
      .def_ro("image", &JpegDecoded::image);

  m.def("jpeg_load_library", &jpeg_load_library, "path"_a,
        "Loads libjpeg-turbo (jpeg62 ABI) for jpeg_decode; returns '' or why it cannot be used.");
  m.def("jpeg_library_loaded", &jpeg_library_loaded);
  m.def("jpeg_header", &py_jpeg_header, "data"_a, "scale_num"_a = 1, "scale_denom"_a = 1,
        "The header of a JPEG and its output size at scale_num/scale_denom (GIL released).");
  m.def("jpeg_decode", &py_jpeg_decode, "data"_a, "channels"_a = 0, "scale_num"_a = 1, "scale_denom"_a = 1,
        "fancy_upsampling"_a = true, "fast_dct"_a = true, "try_recover_truncated"_a = false,
        "window"_a = nb::none(), "finish"_a = true,
        "Decodes a JPEG (or the window [y, x, height, width] of its scaled output, decoding only\n"
        "that window's rows and iMCU columns) into (h, w, channels) uint8, GIL released.");
  m.def("jpeg_crop_resize", &py_jpeg_crop_resize, "data"_a, "channels"_a, "image_height"_a, "image_width"_a, "box"_a,
        "denom"_a, "flip"_a, "out"_a, "pixels"_a = nb::none(), "mean"_a = nb::none(), "std"_a = nb::none(),
        "The box [y, x, height, width] of a JPEG decoded at 1/denom (only the window it needs, or taken\n"
        "from `pixels`, the whole image at that scale) and resized bilinearly into float32 out\n"
        "(out_h, out_w, channels), mirrored left-right with flip, then (x - mean) / std per channel\n"
        "when given. GIL released.");
}

}  // namespace tfrx

// Python bindings of jpeg_partial.h: load the library, read a header, decode
// a window into a NumPy array that owns its memory.
#include "jpeg_partial_bind.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <array>
#include <memory>
#include <new>
#include <optional>

#include "buffer.h"
#include "jpeg_partial.h"

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
}

}  // namespace tfrx

// Python bindings of jpeg_partial.h: load the library, read a header, decode
// a window into a NumPy array that owns its memory.
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "bindings.h"
#include "buffer.h"
#include "crop_resize.h"
#include "jpeg_partial.h"
#include "workers.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {
namespace {

// What a decode produced: the status, libjpeg's message, the header and the
// pixels (None unless the status is JPEG_OK).
struct JpegDecoded {
  int status = 0;
  std::string message;
  JpegHeader header;
  long warnings = 0;
  nb::object image = nb::none();
  int64_t index = -1;  // the failing image of a batch
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
using FloatBatch = nb::ndarray<float, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
using ByteImage = nb::ndarray<const uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using Int64s = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Boxes = nb::ndarray<const int64_t, nb::ndim<2>, nb::shape<-1, 4>, nb::c_contig, nb::device::cpu>;
using Flags = nb::ndarray<const bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Stats = std::optional<std::vector<float>>;

void set_stats(CropResizeJob& job, const Stats& mean, const Stats& std_dev, size_t c) {
  if (mean.has_value() != std_dev.has_value() || (mean && (mean->size() != c || std_dev->size() != c)))
    throw nb::value_error("jpeg_crop_resize: mean and std must both be given, one value per channel");
  if (mean) {
    job.mean = mean->data();
    job.std_dev = std_dev->data();
  }
}

void check(const CropResizeJob& job) {
  const std::string why = check_crop_resize(job);
  if (!why.empty()) throw nb::value_error(("jpeg_crop_resize: " + why).c_str());
}

JpegDecoded decoded(const JpegOutcome& outcome, int64_t index) {
  JpegDecoded result;
  result.status = static_cast<int>(outcome.status);
  result.message = outcome.message;
  result.header = outcome.header;
  result.warnings = outcome.warnings;
  result.index = index;
  return result;
}

// One image: decode (or take from `pixels`, the whole image already decoded
// at 1/denom) the window a crop needs and resize it into `out`.
JpegDecoded py_jpeg_crop_resize(nb::handle data, int channels, int64_t image_height, int64_t image_width,
                                std::array<int64_t, 4> box, unsigned denom, bool flip, FloatImage out,
                                std::optional<ByteImage> pixels, Stats mean, Stats std_dev) {
  CropResizeJob job;
  job.channels = channels;
  job.image_height = image_height;
  job.image_width = image_width;
  job.box = CropBox{box[0], box[1], box[2], box[3]};
  job.denom = denom;
  job.flip = flip;
  job.out = out.data();
  job.out_h = out.shape(0);
  job.out_w = out.shape(1);
  if (out.shape(2) != static_cast<size_t>(channels))
    throw nb::value_error("jpeg_crop_resize: out must have `channels` channels");
  set_stats(job, mean, std_dev, out.shape(2));
  check(job);
  if (pixels) {
    const int64_t d = denom;
    if (static_cast<int64_t>(pixels->shape(0)) != (image_height + d - 1) / d ||
        static_cast<int64_t>(pixels->shape(1)) != (image_width + d - 1) / d || pixels->shape(2) != out.shape(2))
      throw nb::value_error("jpeg_crop_resize: pixels must be the whole image at 1/denom with `channels` channels");
    job.pixels = pixels->data();
  }
  ByteView view(data);
  job.data = view.data();
  job.size = view.size();
  JpegOutcome outcome;
  {
    nb::gil_scoped_release release;
    outcome = crop_resize(job);
  }
  return decoded(outcome, -1);
}

// A batch: images[i] with boxes[i] at 1/denoms[i] into out[i], on `threads`
// threads (tfrx's parked workers). Returns the first failure (with its index)
// or JPEG_OK.
JpegDecoded py_jpeg_crop_resize_batch(nb::sequence images, int channels, Int64s heights, Int64s widths, Boxes boxes,
                                      Int64s denoms, Flags flips, FloatBatch out, Stats mean, Stats std_dev,
                                      int threads, bool strict) {
  const size_t n = nb::len(images);
  if (heights.shape(0) != n || widths.shape(0) != n || boxes.shape(0) != n || denoms.shape(0) != n ||
      flips.shape(0) != n || out.shape(0) != n)
    throw nb::value_error("jpeg_crop_resize_batch: one height, width, box, denom, flip and output per image");
  if (out.shape(3) != static_cast<size_t>(channels))
    throw nb::value_error("jpeg_crop_resize_batch: out must have `channels` channels");
  const size_t image_floats = out.shape(1) * out.shape(2) * out.shape(3);
  std::vector<std::unique_ptr<ByteView>> views;
  std::vector<CropResizeJob> jobs(n);
  views.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    views.push_back(std::make_unique<ByteView>(images[i]));
    CropResizeJob& job = jobs[i];
    job.data = views.back()->data();
    job.size = views.back()->size();
    job.channels = channels;
    job.image_height = heights.data()[i];
    job.image_width = widths.data()[i];
    const int64_t* b = boxes.data() + 4 * i;
    job.box = CropBox{b[0], b[1], b[2], b[3]};
    job.denom = static_cast<unsigned>(denoms.data()[i]);
    job.flip = flips.data()[i];
    job.out = out.data() + i * image_floats;
    job.out_h = out.shape(1);
    job.out_w = out.shape(2);
    job.strict = strict;
    set_stats(job, mean, std_dev, out.shape(3));
    check(job);
  }
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  JpegOutcome failure;
  int64_t failed_at = -1;
  {
    nb::gil_scoped_release release;
    const int k = static_cast<int>(std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), n)));
    run_chunks(k, [&](int) {
      for (size_t i = next++; i < n; i = next++) {
        JpegOutcome outcome = crop_resize(jobs[i]);
        if (outcome.status != JpegStatus::kOk) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (failed_at < 0 || static_cast<int64_t>(i) < failed_at) {
            failure = std::move(outcome);
            failed_at = static_cast<int64_t>(i);
          }
        }
      }
    });
  }
  return decoded(failure, failed_at);
}

}  // namespace

void bind_jpeg(nb::module_& m) {
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
      .def_ro("image", &JpegDecoded::image)
      .def_ro("index", &JpegDecoded::index);

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
  m.def("jpeg_crop_resize_batch", &py_jpeg_crop_resize_batch, "images"_a, "channels"_a, "heights"_a, "widths"_a,
        "boxes"_a, "denoms"_a, "flips"_a, "out"_a, "mean"_a = nb::none(), "std"_a = nb::none(), "threads"_a = 1,
        "strict"_a = false,
        "jpeg_crop_resize for every image of a batch into out[i] (n, out_h, out_w, channels) on `threads`\n"
        "threads, GIL released. With strict, each file is read to its end and a libjpeg warning (corrupt\n"
        "data) fails the image. Returns JPEG_OK or the first failure with its index.");
}

}  // namespace py
}  // namespace tfrx

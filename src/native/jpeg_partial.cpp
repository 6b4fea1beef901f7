#include "jpeg_partial.h"

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "jpeg62_abi.h"

namespace tfrx {
namespace {

using namespace jpeg62;

// The libjpeg entry points tfrx calls, resolved once from the loaded library.
struct Library {
  jpeg_error_mgr* (*std_error)(jpeg_error_mgr*);
  void (*create_decompress)(j_decompress_ptr, int, size_t);
  void (*destroy_decompress)(j_decompress_ptr);
  void (*abort_decompress)(j_decompress_ptr);
  int (*read_header)(j_decompress_ptr, boolean);
  void (*calc_output_dimensions)(j_decompress_ptr);
  boolean (*start_decompress)(j_decompress_ptr);
  JDIMENSION (*read_scanlines)(j_decompress_ptr, JSAMPARRAY, JDIMENSION);
  JDIMENSION (*skip_scanlines)(j_decompress_ptr, JDIMENSION);
  void (*crop_scanline)(j_decompress_ptr, JDIMENSION*, JDIMENSION*);
  boolean (*finish_decompress)(j_decompress_ptr);
  boolean (*resync_to_restart)(j_decompress_ptr, int);
};

std::mutex g_load_mutex;
std::atomic<const Library*> g_library{nullptr};

#if !defined(_WIN32)
template <typename F>
bool resolve(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  return out != nullptr;
}
#endif

// ---------------------------------------------------------------- errors
// libjpeg reports fatal errors through error_exit, which must not return:
// it records the message and jumps back to the setjmp in the caller.
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[kMessageLengthMax];
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  err->pub.format_message(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

[[noreturn]] void fail(j_decompress_ptr cinfo, const char* message) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  std::snprintf(err->message, sizeof(err->message), "%s", message);
  std::longjmp(err->jump, 1);
}

void on_message(j_common_ptr cinfo, int level) {
  if (level < 0) cinfo->err->num_warnings++;  // corrupt-data warnings are counted, never printed
}

void on_output(j_common_ptr) {}

// ---------------------------------------------------------------- source
// The whole file is in memory. Running out of data follows TensorFlow's
// source manager (tensorflow/core/lib/jpeg/jpeg_handle.cc): an error, or with
// try_recover_truncated one fake EOI marker (and a warning) before the error.
struct Source {
  jpeg_source_mgr pub;
  const uint8_t* data;
  bool recover;
};

const JOCTET kFakeEoi[2] = {0xFF, 0xD9};

void source_init(j_decompress_ptr) {}
void source_term(j_decompress_ptr) {}

boolean source_fill(j_decompress_ptr cinfo) {
  auto* src = reinterpret_cast<Source*>(cinfo->src);
  if (src->pub.bytes_in_buffer == 0 && src->pub.next_input_byte == src->data) fail(cinfo, "empty JPEG data");
  if (src->pub.bytes_in_buffer != 0) return src->recover ? 1 : 0;
  if (src->pub.next_input_byte != kFakeEoi && src->recover) {
    cinfo->err->num_warnings++;
    src->pub.next_input_byte = kFakeEoi;
    src->pub.bytes_in_buffer = 2;
    return 1;
  }
  fail(cinfo, "premature end of JPEG data");
}

void source_skip(j_decompress_ptr cinfo, long count) {
  auto* src = reinterpret_cast<Source*>(cinfo->src);
  if (count < 0) return;
  if (static_cast<size_t>(count) > src->pub.bytes_in_buffer) {
    src->pub.bytes_in_buffer = 0;
    source_fill(cinfo);
  } else {
    src->pub.bytes_in_buffer -= static_cast<size_t>(count);
    src->pub.next_input_byte += count;
  }
}

constexpr int kHeaderOk = 1;  // jpeg_read_header's JPEG_HEADER_OK

// One decompressor with its error and source managers; set up by begin().
struct Session {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  Source src;
};

void begin(const Library& lib, Session& s) {
  std::memset(&s, 0, sizeof(s));
  s.cinfo.err = lib.std_error(&s.err.pub);
  s.err.pub.error_exit = &on_error;
  s.err.pub.emit_message = &on_message;
  s.err.pub.output_message = &on_output;
}

void attach_source(const Library& lib, Session& s, const uint8_t* data, size_t size, bool recover) {
  s.src.data = data;
  s.src.recover = recover;
  s.src.pub.next_input_byte = data;
  s.src.pub.bytes_in_buffer = size;
  s.src.pub.init_source = &source_init;
  s.src.pub.fill_input_buffer = &source_fill;
  s.src.pub.skip_input_data = &source_skip;
  s.src.pub.resync_to_restart = lib.resync_to_restart;
  s.src.pub.term_source = &source_term;
  s.cinfo.src = &s.src.pub;
}

void fill_header(const jpeg_decompress_struct& cinfo, JpegHeader& h) {
  h.width = cinfo.image_width;
  h.height = cinfo.image_height;
  h.scaled_width = cinfo.output_width;
  h.scaled_height = cinfo.output_height;
  h.components = cinfo.num_components;
  h.color_space = cinfo.jpeg_color_space;
  h.max_h_samp = cinfo.max_h_samp_factor;
  h.max_v_samp = cinfo.max_v_samp_factor;
  h.progressive = cinfo.progressive_mode != 0;
}

// The setjmp frames below hold only trivially destructible locals (a longjmp
// must not skip a destructor); what must survive a jump is volatile.
bool header_impl(const Library& lib, Session& s, const uint8_t* data, size_t size, unsigned num, unsigned denom,
                 JpegOutcome& out) {
  if (setjmp(s.err.jump)) {
    lib.destroy_decompress(&s.cinfo);
    return false;
  }
  lib.create_decompress(&s.cinfo, kLibVersion, sizeof(jpeg_decompress_struct));
  attach_source(lib, s, data, size, false);
  if (lib.read_header(&s.cinfo, 1) != kHeaderOk) fail(&s.cinfo, "premature end of JPEG data in the header");
  s.cinfo.scale_num = num;
  s.cinfo.scale_denom = denom;
  lib.calc_output_dimensions(&s.cinfo);
  fill_header(s.cinfo, out.header);
  lib.destroy_decompress(&s.cinfo);
  return true;
}

void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t width, bool adobe) {
  // TensorFlow's conversion (jpeg_mem.cc): Adobe files store inverted CMYK.
  for (size_t i = 0; i < width; ++i) {
    const int c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2], k = cmyk[4 * i + 3];
    if (adobe) {
      rgb[3 * i] = static_cast<uint8_t>((k * c) / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>((k * m) / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>((k * y) / 255);
    } else {
      rgb[3 * i] = static_cast<uint8_t>((255 - k) * (255 - c) / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>((255 - k) * (255 - m) / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>((255 - k) * (255 - y) / 255);
    }
  }
}

constexpr int kRowsPerCall = 8;

bool decode_impl(const Library& lib, Session& s, const uint8_t* data, size_t size, const JpegRequest& rq,
                 const std::function<uint8_t*(size_t, size_t, size_t)>& allocate, JpegOutcome& out) {
  uint8_t* volatile temp = nullptr;
  if (setjmp(s.err.jump)) {
    std::free(temp);
    lib.destroy_decompress(&s.cinfo);
    return false;
  }
  jpeg_decompress_struct& cinfo = s.cinfo;
  lib.create_decompress(&cinfo, kLibVersion, sizeof(jpeg_decompress_struct));
  attach_source(lib, s, data, size, rq.try_recover_truncated);
  // A header cut short suspends (the source has nothing more to give); TensorFlow fails a step later.
  if (lib.read_header(&cinfo, 1) != kHeaderOk) fail(&cinfo, "premature end of JPEG data in the header");

  const int components = rq.channels != 0 ? rq.channels : std::min(cinfo.num_components, 3);
  if (components == 1) {
    cinfo.out_color_space = JCS_GRAYSCALE;
  } else if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    cinfo.out_color_space = JCS_CMYK;  // libjpeg's CMYK, converted to RGB per row below
  } else {
    cinfo.out_color_space = JCS_RGB;
  }
  cinfo.do_fancy_upsampling = rq.fancy_upsampling ? 1 : 0;
  cinfo.scale_num = rq.scale_num;
  cinfo.scale_denom = rq.scale_denom;
  cinfo.dct_method = rq.fast_dct ? JDCT_IFAST : JDCT_ISLOW;
  lib.calc_output_dimensions(&cinfo);
  fill_header(cinfo, out.header);
  out.channels = components;

  const int64_t total = static_cast<int64_t>(cinfo.output_height) * cinfo.output_width * cinfo.num_components;
  if (cinfo.output_width == 0 || cinfo.output_height == 0 || total >= (int64_t{1} << 29)) {
    out.status = JpegStatus::kTooLarge;
    lib.destroy_decompress(&cinfo);
    return true;
  }
  if (rq.crop && (rq.crop_width <= 0 || rq.crop_height <= 0 || rq.crop_x < 0 || rq.crop_y < 0 ||
                  rq.crop_y + rq.crop_height > static_cast<int64_t>(cinfo.output_height) ||
                  rq.crop_x + rq.crop_width > static_cast<int64_t>(cinfo.output_width))) {
    out.status = JpegStatus::kBadWindow;
    lib.destroy_decompress(&cinfo);
    return true;
  }
  lib.start_decompress(&cinfo);

  JDIMENSION target_width = cinfo.output_width, target_height = cinfo.output_height;
  JDIMENSION skipped = 0;
  if (rq.crop) {
    target_width = static_cast<JDIMENSION>(rq.crop_width);
    target_height = static_cast<JDIMENSION>(rq.crop_height);
    JDIMENSION x = static_cast<JDIMENSION>(rq.crop_x), width = target_width;
    lib.crop_scanline(&cinfo, &x, &width);  // x moves down to an iMCU boundary, width grows to match
    skipped = lib.skip_scanlines(&cinfo, static_cast<JDIMENSION>(rq.crop_y));
    if (skipped != static_cast<JDIMENSION>(rq.crop_y)) fail(&cinfo, "could not skip to the crop window's first row");
  }
  uint8_t* dst = allocate(target_height, target_width, static_cast<size_t>(components));
  if (dst == nullptr) {
    out.status = JpegStatus::kBadArgs;
    lib.destroy_decompress(&cinfo);
    return true;
  }
  out.out_height = target_height;
  out.out_width = target_width;

  const bool cmyk = cinfo.out_color_space == JCS_CMYK;
  const size_t stride = static_cast<size_t>(target_width) * components;
  const size_t decoded = static_cast<size_t>(cinfo.output_width) * (cmyk ? 4 : components);
  const size_t offset = static_cast<size_t>(cinfo.output_width - target_width) * (cmyk ? 4 : components);
  const bool direct = !cmyk && offset == 0 && decoded == stride;
  if (!direct) temp = static_cast<uint8_t*>(std::malloc(decoded * kRowsPerCall));
  if (!direct && temp == nullptr) fail(&cinfo, "out of memory");

  const JDIMENSION end = skipped + target_height;
  size_t row = 0;
  JSAMPROW rows[kRowsPerCall];
  while (cinfo.output_scanline < end) {
    const JDIMENSION want = std::min<JDIMENSION>(kRowsPerCall, end - cinfo.output_scanline);
    for (JDIMENSION i = 0; i < want; ++i) rows[i] = direct ? dst + (row + i) * stride : temp + i * decoded;
    const JDIMENSION got = lib.read_scanlines(&cinfo, rows, want);
    if (got == 0) {
      if (!rq.try_recover_truncated) fail(&cinfo, "premature end of JPEG data");
      // TensorFlow's recovery: the first missing row black, later ones repeat the row above.
      for (; row < target_height; ++row) {
        if (row == 0) {
          std::memset(dst, 0, stride);
        } else {
          std::memcpy(dst + row * stride, dst + (row - 1) * stride, stride);
        }
      }
      cinfo.output_scanline = end;
      break;
    }
    if (!direct) {
      for (JDIMENSION i = 0; i < got; ++i) {
        if (cmyk) {
          cmyk_to_rgb(temp + i * decoded + offset, dst + (row + i) * stride, target_width, cinfo.saw_Adobe_marker != 0);
        } else {
          std::memcpy(dst + (row + i) * stride, temp + i * decoded + offset, stride);
        }
      }
    }
    row += got;
  }
  std::free(temp);
  temp = nullptr;

  if (rq.finish) {
    if (rq.crop && cinfo.output_scanline < cinfo.output_height) {
      lib.skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline);
    }
    lib.finish_decompress(&cinfo);
  } else {
    lib.abort_decompress(&cinfo);
  }
  out.warnings = cinfo.err->num_warnings;
  lib.destroy_decompress(&cinfo);
  return true;
}

bool abi_matches(const Library& lib, Session& s) {
  begin(lib, s);
  if (setjmp(s.err.jump)) return false;
  lib.create_decompress(&s.cinfo, kLibVersion, sizeof(jpeg_decompress_struct));
  lib.destroy_decompress(&s.cinfo);
  return true;
}

const Library* library() { return g_library.load(std::memory_order_acquire); }

}  // namespace

std::string jpeg_load_library(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (library() != nullptr) return "";
#if defined(_WIN32)
  return "loading libjpeg-turbo at run time is not supported on Windows";
#else
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return why != nullptr ? why : "dlopen failed";
  }
  auto lib = std::make_unique<Library>();
  const bool ok = resolve(handle, "jpeg_std_error", lib->std_error) &&
                  resolve(handle, "jpeg_CreateDecompress", lib->create_decompress) &&
                  resolve(handle, "jpeg_destroy_decompress", lib->destroy_decompress) &&
                  resolve(handle, "jpeg_abort_decompress", lib->abort_decompress) &&
                  resolve(handle, "jpeg_read_header", lib->read_header) &&
                  resolve(handle, "jpeg_calc_output_dimensions", lib->calc_output_dimensions) &&
                  resolve(handle, "jpeg_start_decompress", lib->start_decompress) &&
                  resolve(handle, "jpeg_read_scanlines", lib->read_scanlines) &&
                  resolve(handle, "jpeg_finish_decompress", lib->finish_decompress) &&
                  resolve(handle, "jpeg_resync_to_restart", lib->resync_to_restart);
  if (!ok) {
    dlclose(handle);
    return path + " is not a libjpeg library";
  }
  if (!resolve(handle, "jpeg_skip_scanlines", lib->skip_scanlines) ||
      !resolve(handle, "jpeg_crop_scanline", lib->crop_scanline)) {
    dlclose(handle);
    return path + " has no jpeg_crop_scanline / jpeg_skip_scanlines (libjpeg-turbo 1.5 or later is needed)";
  }
  // The library checks the ABI itself: a build with another JPEG_LIB_VERSION
  // or structure size stops in jpeg_CreateDecompress.
  auto probe = std::make_unique<Session>();
  if (!abi_matches(*lib, *probe)) {
    dlclose(handle);
    return path + " is not the jpeg62 ABI (" + probe->err.message + ")";
  }
  g_library.store(lib.release(), std::memory_order_release);  // kept for the life of the process
  return "";
#endif
}

bool jpeg_library_loaded() { return library() != nullptr; }

JpegOutcome jpeg_read_header_info(const uint8_t* data, size_t size, unsigned scale_num, unsigned scale_denom) {
  JpegOutcome out;
  const Library* lib = library();
  if (lib == nullptr) {
    out.status = JpegStatus::kNoLibrary;
    return out;
  }
  auto s = std::make_unique<Session>();
  begin(*lib, *s);
  if (!header_impl(*lib, *s, data, size, scale_num, scale_denom, out)) {
    out.status = JpegStatus::kInvalid;
    out.message = s->err.message;
  }
  return out;
}

JpegOutcome jpeg_decode(const uint8_t* data, size_t size, const JpegRequest& request,
                        const std::function<uint8_t*(size_t, size_t, size_t)>& allocate) {
  JpegOutcome out;
  const Library* lib = library();
  if (lib == nullptr) {
    out.status = JpegStatus::kNoLibrary;
    return out;
  }
  if ((request.channels != 0 && request.channels != 1 && request.channels != 3) || request.scale_num == 0 ||
      request.scale_denom == 0) {
    out.status = JpegStatus::kBadArgs;
    return out;
  }
  auto s = std::make_unique<Session>();
  begin(*lib, *s);
  if (!decode_impl(*lib, *s, data, size, request, allocate, out)) {
    out.status = JpegStatus::kInvalid;
    out.message = s->err.message;
  }
  return out;
}

}  // namespace tfrx

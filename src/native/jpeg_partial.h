// Partial JPEG decoding through a libjpeg-turbo loaded at run time: only the
// rows and iMCU columns of a crop window are inverse-transformed, upsampled
// and colour-converted (jpeg_crop_scanline + jpeg_skip_scanlines), optionally
// at a DCT scale N/8. The steps are TensorFlow's decode_and_crop_jpeg
// (tensorflow/core/lib/jpeg/jpeg_mem.cc), so the same library gives the same
// pixels: the window's left edge is moved down to an iMCU boundary, decoded
// rows are realigned, CMYK is converted with TensorFlow's integer formulas.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace tfrx {

// Loads libjpeg-turbo (jpeg62 ABI) from `path` (a file name or soname for
// dlopen). Returns "" on success (or when one is already loaded), else why
// the library cannot be used. Thread-safe; the first success wins.
std::string jpeg_load_library(const std::string& path);
bool jpeg_library_loaded();

enum class JpegStatus : int {
  kOk = 0,
  kNoLibrary = 1,  // jpeg_load_library has not succeeded
  kInvalid = 2,    // libjpeg refused the data (message says why)
  kBadWindow = 3,  // the crop window is not inside the (scaled) image
  kTooLarge = 4,   // height * width * components >= 2^29 (TensorFlow's limit)
  kBadArgs = 5,
};

struct JpegHeader {
  uint32_t width = 0, height = 0;  // as stored
  uint32_t scaled_width = 0, scaled_height = 0;  // at the requested scale
  int components = 0;   // in the file
  int color_space = 0;  // libjpeg's J_COLOR_SPACE of the file
  int max_h_samp = 1, max_v_samp = 1;
  bool progressive = false;
};

struct JpegRequest {
  int channels = 0;  // 0: the file's (1 for gray, 3 otherwise), 1 or 3
  unsigned scale_num = 1, scale_denom = 1;
  bool fancy_upsampling = true;
  bool fast_dct = true;  // JDCT_IFAST (TensorFlow's default) or JDCT_ISLOW
  bool try_recover_truncated = false;
  bool crop = false;
  int64_t crop_y = 0, crop_x = 0, crop_height = 0, crop_width = 0;  // scaled pixels
  // true: after the window, entropy-decode the rest of the file as TensorFlow
  // does (so a damaged tail fails the same way); false: stop after the window.
  bool finish = true;
};

struct JpegOutcome {
  JpegStatus status = JpegStatus::kOk;
  std::string message;
  JpegHeader header;
  uint32_t out_height = 0, out_width = 0;
  int channels = 0;
  long warnings = 0;
};

// Reads the header and the scaled output size (no pixel work).
JpegOutcome jpeg_read_header_info(const uint8_t* data, size_t size, unsigned scale_num, unsigned scale_denom);

// Decodes `request`'s window into memory from `allocate(height, width,
// channels)` (row-major, rows of width * channels bytes; nullptr aborts with
// kBadArgs). Runs without touching Python.
JpegOutcome jpeg_decode(const uint8_t* data, size_t size, const JpegRequest& request,
                        const std::function<uint8_t*(size_t, size_t, size_t)>& allocate);

}  // namespace tfrx

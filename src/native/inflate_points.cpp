#include "inflate_points.h"

#include <algorithm>
#include <stdexcept>

namespace tfrx {

namespace {
constexpr size_t kWindow = 32768;
// zlib's inflate takes uInt counts; steps are cut to this many bytes.
constexpr size_t kMaxStep = size_t{1} << 30;
}  // namespace

CheckpointInflater::CheckpointInflater(bool gzip) : gzip_(gzip) { start_member(); }

CheckpointInflater::~CheckpointInflater() {
  if (ready_) inflateEnd(&strm_);
}

void CheckpointInflater::reset(int window_bits) {
  if (ready_) {
    inflateEnd(&strm_);
    ready_ = false;
  }
  strm_ = z_stream{};
  if (inflateInit2(&strm_, window_bits) != Z_OK) throw std::bad_alloc();
  ready_ = true;
}

void CheckpointInflater::start_member() {
  reset(gzip_ ? 15 + 16 : 15);
  raw_ = false;
  trailer_left_ = 0;
}

bool CheckpointInflater::start_raw(int bits, int value, const uint8_t* window, size_t window_size) {
  if (bits < 0 || bits > 7 || value < 0 || value > 255 || window_size > kWindow) return false;
  reset(-15);
  raw_ = true;
  trailer_left_ = 0;
  if (bits && inflatePrime(&strm_, bits, value >> (8 - bits)) != Z_OK) return false;
  if (window_size && inflateSetDictionary(&strm_, window, static_cast<uInt>(window_size)) != Z_OK) return false;
  return true;
}

namespace {
std::string inflate_error(const z_stream& strm, int ret) {
  if (strm.msg) return strm.msg;
  return ret == Z_NEED_DICT ? "a preset dictionary is required" : "inflate failed";
}
}  // namespace

void CheckpointInflater::skip_trailer(size_t in_size, size_t& in_pos, InflateStep& r) {
  const size_t skip = std::min(static_cast<size_t>(trailer_left_), in_size - in_pos);
  in_pos += skip;
  trailer_left_ -= static_cast<int>(skip);
  if (trailer_left_ > 0) return;  // the rest of it comes with the next input
  start_member();
  r.status = InflateStatus::kMemberEnd;
}

InflateStep CheckpointInflater::step(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size,
                                     bool stop_at_block) {
  InflateStep r;
  in_size = std::min(in_size, kMaxStep);
  out_size = std::min(out_size, kMaxStep);
  size_t in_pos = 0, out_pos = 0;
  while (true) {
    if (trailer_left_ > 0) {
      skip_trailer(in_size, in_pos, r);
      break;
    }
    if (in_pos == in_size || out_pos == out_size) break;
    strm_.next_in = const_cast<Bytef*>(in + in_pos);
    strm_.avail_in = static_cast<uInt>(in_size - in_pos);
    strm_.next_out = out + out_pos;
    strm_.avail_out = static_cast<uInt>(out_size - out_pos);
    const int ret = inflate(&strm_, stop_at_block ? Z_BLOCK : Z_NO_FLUSH);
    in_pos = in_size - strm_.avail_in;
    out_pos = out_size - strm_.avail_out;
    if (ret == Z_STREAM_END) {
      if (raw_) {
        raw_ = false;
        trailer_left_ = gzip_ ? 8 : 4;
        continue;
      }
      start_member();
      r.status = InflateStatus::kMemberEnd;
      break;
    }
    if (ret == Z_BUF_ERROR) break;  // no progress possible without more input or room
    if (ret != Z_OK) {
      r.status = InflateStatus::kError;
      r.message = inflate_error(strm_, ret);
      break;
    }
    // Z_BLOCK stops at the end of a header or of a block; bit 64: the last block was seen (its end is the
    // member's end, which comes back as Z_STREAM_END instead).
    if (stop_at_block && (strm_.data_type & 128) && !(strm_.data_type & 64)) {
      r.status = InflateStatus::kBlock;
      r.bits = strm_.data_type & 7;
      break;
    }
  }
  r.consumed = static_cast<int64_t>(in_pos);
  r.produced = static_cast<int64_t>(out_pos);
  return r;
}

std::string CheckpointInflater::window() {
  std::string w(kWindow, '\0');
  uInt n = static_cast<uInt>(kWindow);
  if (inflateGetDictionary(&strm_, reinterpret_cast<Bytef*>(&w[0]), &n) != Z_OK) n = 0;
  w.resize(n);
  return w;
}

}  // namespace tfrx

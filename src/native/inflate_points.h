// A resumable inflater for GZIP / ZLIB TFRecord files, for checkpointed random
// access in the manner of zlib's examples/zran.c: a pass that stops at deflate
// block boundaries (Z_BLOCK) so the caller can record checkpoints (compressed
// bit position and the 32 KiB window), and a restart at such a checkpoint
// (inflatePrime + inflateSetDictionary on a raw deflate stream). Members of a
// multi-member GZIP file and concatenated ZLIB streams follow one another.
// Nothing given to it is trusted: checkpoints are range-checked and damaged
// data ends a step with kError, never with reading outside the buffers.
#pragma once
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tfrx {

enum class InflateStatus : int {
  kOk = 0,         // the input was used up or the output filled
  kBlock = 1,      // stopped at a deflate block boundary (stop_at_block)
  kMemberEnd = 2,  // a member (stream) ended with its trailer; the next one may follow
  kError = 3,      // damaged data: `message` says what zlib found
};

struct InflateStep {
  InflateStatus status = InflateStatus::kOk;
  int64_t consumed = 0;  // input bytes used
  int64_t produced = 0;  // output bytes written
  int bits = 0;          // kBlock: unused bits of the last byte consumed (0-7)
  std::string message;
};

class CheckpointInflater {
 public:
  explicit CheckpointInflater(bool gzip);
  ~CheckpointInflater();
  CheckpointInflater(const CheckpointInflater&) = delete;
  CheckpointInflater& operator=(const CheckpointInflater&) = delete;

  // At the start of a member: its header comes first.
  void start_member();
  // Inside a member at a block boundary: `bits` (0-7) bits of `value` (the byte before the
  // next input byte, its high bits) come first, then raw deflate data with `window` as history.
  // Returns false (and changes nothing) for out-of-range arguments.
  bool start_raw(int bits, int value, const uint8_t* window, size_t window_size);
  InflateStep step(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size, bool stop_at_block);
  // The last (up to) 32 KiB of output: the history a checkpoint here needs.
  std::string window();

 private:
  // Skips what is left of a member's trailer (a raw restart does not check it, it only skips it).
  void skip_trailer(size_t in_size, size_t& in_pos, InflateStep& r);
  void reset(int window_bits);
  z_stream strm_{};
  bool ready_ = false;
  bool gzip_;
  bool raw_ = false;
  int trailer_left_ = 0;
};

}  // namespace tfrx

// Whether memory-bound work (the parser's copies of large bytes values) is
// worth splitting over threads on this machine, chosen from measurements.
//
// A copy is bound by the memory system, not by one core: on a small VM two
// threads copying three 21 MB batches finished no sooner than one (3.2 against
// 3.3 ms) and took 70% more CPU time, while a large host may copy nearly twice
// as fast on two. So the choice is measured as the calls go: each job's wall
// time per byte is kept for one thread and for several (the last kSamples of
// each), and jobs are split only while the split's median is at least
// `min_speedup` times faster. Until both have kMinSamples, the one with fewer
// is tried; then every `explore_every`-th job tries the other one, so a change
// (a busier machine) is followed. Only the thread count changes, never the
// result.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace tfrx {

class SplitChoice {
 public:
  static constexpr int kSamples = 8;
  static constexpr int kMinSamples = 3;

  explicit SplitChoice(double min_speedup = 1.5, int explore_every = 32)
      : min_speedup_(min_speedup), explore_every_(explore_every < 2 ? 2 : explore_every) {}

  // Threads for the next job that could use up to `wanted` (1 or `wanted`).
  int threads(int wanted);
  // The wall time a job of `bytes` bytes took on `threads` threads.
  void record(int threads, size_t bytes, double seconds);

  struct State {
    int64_t one_samples, split_samples;
    double one_ns_per_byte, split_ns_per_byte;  // medians; 0 without samples
    bool split;                                 // what a job gets outside exploration
  };
  State state();

 private:
  struct Samples {
    std::array<double, kSamples> ns_per_byte{};
    int64_t count = 0;  // samples recorded (the last kSamples kept)
    void add(double v) { ns_per_byte[static_cast<size_t>(count++ % kSamples)] = v; }
    double median() const;
  };
  bool split_locked() const;

  const double min_speedup_;
  const int explore_every_;
  std::mutex mu_;
  Samples one_, split_;
  uint64_t jobs_ = 0;
};

// The process's choice for the parser's copies of large values.
SplitChoice& copy_split();

}  // namespace tfrx

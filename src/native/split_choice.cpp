#include "split_choice.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace tfrx {

double SplitChoice::Samples::median() const {
  const int n = static_cast<int>(std::min<int64_t>(count, kSamples));
  if (n == 0) return 0.0;
  std::array<double, kSamples> v{};
  for (int i = 0; i < n; ++i) {  // insertion sort of at most kSamples values
    int j = i;
    for (; j > 0 && v[static_cast<size_t>(j - 1)] > ns_per_byte[static_cast<size_t>(i)]; --j)
      v[static_cast<size_t>(j)] = v[static_cast<size_t>(j - 1)];
    v[static_cast<size_t>(j)] = ns_per_byte[static_cast<size_t>(i)];
  }
  const size_t h = static_cast<size_t>(n / 2);
  return n % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

bool SplitChoice::split_locked() const {
  if (one_.count < kMinSamples || split_.count < kMinSamples) return false;
  return one_.median() >= min_speedup_ * split_.median();
}

int SplitChoice::threads(int wanted) {
  if (wanted <= 1) return 1;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t job = jobs_++;
  if (one_.count < kMinSamples || split_.count < kMinSamples) return one_.count <= split_.count ? 1 : wanted;
  const bool split = split_locked();
  const bool explore = job % static_cast<uint64_t>(explore_every_) == 0;
  return split != explore ? wanted : 1;
}

void SplitChoice::record(int threads, size_t bytes, double seconds) {
  if (bytes == 0 || seconds <= 0) return;
  const double v = seconds * 1e9 / static_cast<double>(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  (threads > 1 ? split_ : one_).add(v);
}

SplitChoice::State SplitChoice::state() {
  std::lock_guard<std::mutex> lock(mu_);
  return State{one_.count, split_.count, one_.median(), split_.median(), split_locked()};
}

namespace {

struct ProcessChoice {
  pid_t pid;
  SplitChoice choice;
};

}  // namespace

SplitChoice& copy_split() {
  // Never destroyed (threads use it until the process ends). A forked child
  // gets its own, as workers.cpp's workers do: the parent's lock may have
  // been held at the fork, and the child measures for itself.
  static std::atomic<ProcessChoice*> current{nullptr};
  const pid_t pid = getpid();
  ProcessChoice* c = current.load(std::memory_order_acquire);
  while (c == nullptr || c->pid != pid) {
    auto* fresh = new ProcessChoice{pid, SplitChoice()};
    if (current.compare_exchange_strong(c, fresh, std::memory_order_acq_rel)) return fresh->choice;
    delete fresh;  // another thread installed one first: `c` now holds it
  }
  return c->choice;
}

}  // namespace tfrx

#include "workers.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace tfrx {
namespace {

void run_on_new_threads(int k, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(k));
  auto guarded = [&](int i) {
    try {
      fn(i);
    } catch (...) {
      errors[static_cast<size_t>(i)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < k; ++i) threads.emplace_back(guarded, i);
  guarded(0);
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

class Workers {
 public:
  explicit Workers(pid_t pid) : pid_(pid) {}

  pid_t pid() const { return pid_; }

  // False when another caller is using the workers.
  bool try_run(int k, const std::function<void(int)>& fn) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    std::vector<std::exception_ptr> errors(static_cast<size_t>(k));
    {
      std::lock_guard<std::mutex> lock(m_);
      while (static_cast<int>(threads_.size()) < k - 1) {
        // Parked for the life of the process; never joined (see instance()).
        threads_.emplace_back([this] { loop(); });
        threads_.back().detach();
      }
      fn_ = &fn;
      errors_ = &errors;
      next_ = 1;
      end_ = k;
      pending_ = k - 1;
      ++generation_;
    }
    wake_.notify_all();
    try {
      fn(0);
    } catch (...) {
      errors[0] = std::current_exception();
    }
    {
      // Chunks not yet taken by a worker are run here rather than waited for.
      std::unique_lock<std::mutex> lock(m_);
      while (next_ < end_) {
        const int i = next_++;
        lock.unlock();
        run_one(i);
        lock.lock();
        --pending_;
      }
      done_.wait(lock, [this] { return pending_ == 0; });
      fn_ = nullptr;
      errors_ = nullptr;
    }
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    return true;
  }

 private:
  void run_one(int i) {
    try {
      (*fn_)(i);
    } catch (...) {
      (*errors_)[static_cast<size_t>(i)] = std::current_exception();
    }
  }

  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen && next_ < end_; });
      while (next_ < end_) {
        const int i = next_++;
        lock.unlock();
        run_one(i);
        lock.lock();
        if (--pending_ == 0) done_.notify_one();
      }
      seen = generation_;
    }
  }

  const pid_t pid_;
  std::mutex busy_;  // held by the caller whose chunks the workers run
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* fn_ = nullptr;
  std::vector<std::exception_ptr>* errors_ = nullptr;
  int next_ = 0, end_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
};

Workers* instance() {
  // Never destroyed: parked threads must not outlive the object they wait on,
  // and joining them at exit could block. After a fork the child gets a new
  // set (the old one's threads do not exist there, and its locks may have
  // been held at the fork: it is left untouched). No lock guards the pointer,
  // so a fork at any moment leaves nothing locked that the child needs.
  static std::atomic<Workers*> current{nullptr};
  const pid_t pid = getpid();
  Workers* w = current.load(std::memory_order_acquire);
  while (w == nullptr || w->pid() != pid) {
    Workers* fresh = new Workers(pid);
    if (current.compare_exchange_strong(w, fresh, std::memory_order_acq_rel)) return fresh;
    delete fresh;  // another thread installed one first: `w` now holds it
  }
  return w;
}

}  // namespace

void run_chunks(int k, const std::function<void(int)>& fn) {
  if (k <= 1) {
    fn(0);
    return;
  }
  if (!instance()->try_run(k, fn)) run_on_new_threads(k, fn);
}

}  // namespace tfrx

#pragma once
// Polling back-off. Jobs here routinely run more PEs than cores (16 threads or 8 ranks on 2 cores):
// a PE that spins while idle steals the core the PE it waits for needs. So: spin briefly (cheap
// when the answer is near), then yield, then sleep with growing naps capped at max_nap.
#include <chrono>
#include <thread>

namespace transit::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class backoff {
 public:
  static constexpr int spin_rounds = 16;
  static constexpr int yield_rounds = 32;
  static constexpr std::chrono::microseconds max_nap{500};

  /// Called after a poll that found nothing to do.
  void idle() noexcept {
    if (round_ < spin_rounds) {
      for (int i = 0; i < 8; ++i) cpu_relax();
    } else if (round_ < spin_rounds + yield_rounds) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap_);
      if (nap_ < max_nap) nap_ *= 2;
    }
    ++round_;
  }
  /// Called after a poll that made progress.
  void reset() noexcept {
    round_ = 0;
    nap_ = std::chrono::microseconds{1};
  }
  /// True once the caller has been idle long enough to be sleeping between polls.
  bool sleeping() const noexcept { return round_ >= spin_rounds + yield_rounds; }

 private:
  int round_ = 0;
  std::chrono::microseconds nap_{1};
};

}  // namespace transit::detail

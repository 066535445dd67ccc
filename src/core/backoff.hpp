#pragma once
// Private to the library (the tests and tools reach it through transit::internals). Polling back-off. Jobs here routinely run more PEs than cores (16 threads or 8 ranks on 2 cores):
// a PE that spins while idle steals the core the PE it waits for needs. So: spin briefly (cheap
// when the answer is near), then yield, then sleep with growing naps capped at max_nap.
//
// Except while the PE's own sends are pending: then it yields but never sleeps. A message above
// MPI's eager limit (a rendezvous) moves only while both its sender and its receiver call MPI, so
// a sender that naps stalls its receiver (calibration's streaming curve read ~1 ms per 32 KiB
// message, 120x the 16 KiB one, with naps of up to 500 us). Yielding still hands the core to a
// PE that shares it.
//
// In a simulation build (simulated_build) every wait here passes simulated time only (core/clock.hpp): a
// spinning or yielding round costs one poll (simulated_poll), a nap its length, and naps stay
// short (max_nap below).
#include <chrono>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/simulation.hpp"

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
  // Pauses between two polls while spinning. A message that arrives just after a poll waits for
  // them: on the AMD EPYC VM a pause takes 23 ns, and 8 of them (185 ns) added about 0.15 us to a
  // 2-rank step's end (1.21-1.30 us against 1.08-1.10 us with 2; NBX 1.03-1.07 either way). The
  // histogram at 2, 4 and 8 ranks on 2 cores ran within 3% of 8 pauses.
  static constexpr int pauses_per_spin = 2;
  static constexpr int yield_rounds = 32;
  // A simulated PE has a core of its own, where a real one would poll an idle network in well
  // under a microsecond. Naps of up to 500 us (what shares a core well on a real host) quantise
  // every simulated wait to them: 64 ranks read a 10x longer link latency as a faster histogram.
  // So simulated naps stay short, and simulated time stays within 0.8 us of the event waited for,
  // at about one poll per 0.8 us of waiting for the simulator.
  static constexpr std::chrono::nanoseconds first_nap{simulated_build ? 200 : 1000};
  static constexpr std::chrono::nanoseconds max_nap{simulated_build ? 800 : 500'000};

  /// Called after a poll that found nothing to do. `sends_pending`: this PE has sends accepted by
  /// the transport and not yet complete (transport::pending_sends() > 0, asked once per idle
  /// round); then it yields instead of sleeping, however long it has been idle.
  void idle(bool sends_pending = false) noexcept(!waits_can_throw) {
    idle(sends_pending, [](std::chrono::nanoseconds nap) { detail::sleep_for(nap); });
  }
  /// As idle(sends_pending), each nap taken by `nap(length)`, which may return early: a transport
  /// that knows when a message arrives for this PE ends the nap then (transport::nap).
  template <class Nap>
  void idle(bool sends_pending, Nap&& nap) {
    if (round_ < spin_rounds) {
      if constexpr (simulated_build) {
        // A spin is a poll: it must pass simulated time too, or a PE could poll again and again
        // at one simulated instant (SMPI's own per-poll costs are switched off: core/clock.hpp).
        detail::yield();
      } else {
        for (int i = 0; i < pauses_per_spin; ++i) cpu_relax();
      }
      ++round_;
    } else if (round_ < spin_rounds + yield_rounds || sends_pending) {
      detail::yield();
      if (round_ < spin_rounds + yield_rounds) ++round_;
      slept_ = false;
    } else {
      nap(nap_);
      if (nap_ < max_nap) nap_ *= 2;
      slept_ = true;
    }
  }
  /// Called after a poll that made progress.
  void reset() noexcept {
    round_ = 0;
    nap_ = first_nap;
    slept_ = false;
  }
  /// True once the caller has been idle past the spinning rounds (yielding or sleeping between
  /// polls): long enough that reading a clock costs little against a round.
  bool past_spinning() const noexcept { return round_ >= spin_rounds; }
  /// True when the last idle round slept.
  bool sleeping() const noexcept { return slept_; }

 private:
  int round_ = 0;
  std::chrono::nanoseconds nap_ = first_nap;
  bool slept_ = false;
};

}  // namespace transit::detail

#pragma once
// Knuth's lagged-Fibonacci generator of doubles (ranf, TAOCP vol. 2, 3.6, 9th printing), as bale
// draws from it (libgetput: lgp_rand_seed, lgp_rand_int64, lgp_rand_double), with its state in an
// object instead of file statics, so that PEs running as threads each have their own stream.
#include <array>
#include <cstdint>

namespace transit::apps {

/// One stream of Knuth's ranf: the same doubles, in the same order, as bale's ranf_arr_next()
/// after ranf_start(seed). Local; not thread-safe (one per PE).
class knuth_ranf {
 public:
  /// The stream ranf_start(seed) selects (seed's low 30 bits count, as in Knuth's code).
  explicit knuth_ranf(std::int64_t seed);
  /// The stream bale's lgp_rand_seed(seed) gives PE `pe`: ranf_start(seed + 1 + pe).
  static knuth_ranf for_pe(std::int64_t seed, int pe) { return knuth_ranf(seed + 1 + pe); }

  /// The next fraction in [0, 1), as ranf_arr_next() (bale's lgp_rand_double).
  double next_double();
  /// The next integer in [0, n), as bale's lgp_rand_int64(n): the fraction times n, truncated.
  /// Throws std::invalid_argument for n outside [1, 2^51) (bale asserts n < 2^51).
  std::int64_t next_int(std::int64_t n);

 private:
  static constexpr int kk = 100;      // the long lag
  static constexpr int ll = 37;       // the short lag
  static constexpr int quality = 1009;  // numbers generated per refill (Knuth's QUALITY)
  void refill(double* out, int n);
  std::array<double, kk> state_{};
  std::array<double, quality> buffer_{};
  int next_ = kk;  // index of the next unused number in buffer_; kk means "refill first"
};

}  // namespace transit::apps

// Written from Knuth's description (TAOCP vol. 2, 3.6, and exercise 3.6-15) and checked against
// bale's knuth_rng_double_2019.h by the reference draws in tests/apps/ranf_test.cpp.
#include "common/ranf.hpp"

#include <stdexcept>
#include <string>

namespace transit::apps {

namespace {

/// (x + y) mod 1 for fractions, exactly as Knuth writes it (the int cast truncates).
inline double mod_sum(double x, double y) { return (x + y) - static_cast<int>(x + y); }

}  // namespace

void knuth_ranf::refill(double* out, int n) {
  int j = 0;
  for (; j < kk; ++j) out[j] = state_[static_cast<std::size_t>(j)];
  for (; j < n; ++j) out[j] = mod_sum(out[j - kk], out[j - ll]);
  int i = 0;
  for (; i < ll; ++i, ++j) state_[static_cast<std::size_t>(i)] = mod_sum(out[j - kk], out[j - ll]);
  for (; i < kk; ++i, ++j)
    state_[static_cast<std::size_t>(i)] = mod_sum(out[j - kk], state_[static_cast<std::size_t>(i - ll)]);
}

knuth_ranf::knuth_ranf(std::int64_t seed) {
  constexpr int tt = 70;  // guaranteed separation between streams
  std::array<double, kk + kk - 1> u{};
  const double ulp = 0x1p-52;
  double ss = 2.0 * ulp * static_cast<double>((seed & 0x3fffffff) + 2);
  for (int j = 0; j < kk; ++j) {
    u[static_cast<std::size_t>(j)] = ss;  // bootstrap the buffer
    ss += ss;
    if (ss >= 1.0) ss -= 1.0 - 2 * ulp;  // cyclic shift of 51 bits
  }
  u[1] += ulp;  // make u[1] (and only u[1]) "odd"
  auto at = [&u](int k) -> double& { return u[static_cast<std::size_t>(k)]; };
  for (int s = static_cast<int>(seed & 0x3fffffff), t = tt - 1; t;) {
    for (int j = kk - 1; j > 0; --j) {  // "square"
      at(j + j) = at(j);
      at(j + j - 1) = 0.0;
    }
    for (int j = kk + kk - 2; j >= kk; --j) {
      at(j - (kk - ll)) = mod_sum(at(j - (kk - ll)), at(j));
      at(j - kk) = mod_sum(at(j - kk), at(j));
    }
    if (s & 1) {  // "multiply by z"
      for (int j = kk; j > 0; --j) at(j) = at(j - 1);
      at(0) = at(kk);  // shift the buffer cyclically
      at(ll) = mod_sum(at(ll), at(kk));
    }
    if (s) s >>= 1;
    else --t;
  }
  int j = 0;
  for (; j < ll; ++j) state_[static_cast<std::size_t>(j + kk - ll)] = at(j);
  for (; j < kk; ++j) state_[static_cast<std::size_t>(j - ll)] = at(j);
  for (j = 0; j < 10; ++j) refill(u.data(), kk + kk - 1);  // warm things up
  next_ = kk;
}

double knuth_ranf::next_double() {
  // As ranf_arr_next: each refill makes `quality` numbers but hands out only the first kk of them
  // (Knuth's sentinel at buffer[kk]); bale's streams depend on exactly that.
  if (next_ == kk) {
    refill(buffer_.data(), quality);
    next_ = 0;
  }
  return buffer_[static_cast<std::size_t>(next_++)];
}

std::int64_t knuth_ranf::next_int(std::int64_t n) {
  constexpr std::int64_t limit = std::int64_t{1} << 51;  // bale's LGP_RAND_MAX
  if (n < 1 || n >= limit)
    throw std::invalid_argument("knuth_ranf::next_int: n = " + std::to_string(n) + ", expected 1 <= n < 2^51");
  return static_cast<std::int64_t>(next_double() * static_cast<double>(n));
}

}  // namespace transit::apps

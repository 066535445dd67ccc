#pragma once
// The median of a set of timings: what every layer that times something (automatic exchange,
// calibration) and every benchmark quotes, so that a burst of load on a shared machine moves it
// less than a mean.
#include <algorithm>
#include <vector>

namespace transit::detail {

/// The median of `v` (the mean of the middle two for an even count); `if_empty` for none.
inline double median(std::vector<double> v, double if_empty = 0) {
  if (v.empty()) return if_empty;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace transit::detail

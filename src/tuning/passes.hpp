#pragma once
// Calibration's order of measurement (docs/tuning.md, "Calibration"): every point once per pass,
// pass after pass, and each point's value the median of its passes. Measured point by point (all
// passes of one point, then the next), a burst of load on a shared machine lands on every pass of
// the point it meets and moves that point's median; pass by pass, a burst no longer than a pass
// moves at most one measurement of each point, which the median drops.
#include <cstddef>
#include <utility>
#include <vector>

#include "core/median.hpp"

namespace transit::detail {

/// The median over `passes` of measure(i), for each of the points i < `points`, measured pass by
/// pass (measure(0) .. measure(points - 1), then again).
template <class Measure>
std::vector<double> interleaved_medians(std::size_t points, int passes, Measure&& measure) {
  std::vector<std::vector<double>> taken(points);
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = 0; i < points; ++i) taken[i].push_back(measure(i));
  std::vector<double> medians;
  medians.reserve(points);
  for (auto& t : taken) medians.push_back(median(std::move(t)));
  return medians;
}

}  // namespace transit::detail

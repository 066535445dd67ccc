// Calibration's fit of per-message, per-byte and per-item costs (fit_link_costs), on synthetic
// measurements shaped like the mpi calibration of 2026-11-22 on this machine: a large
// per-message cost, a per-item cost of a few nanoseconds, a few percent of noise per point, and a
// bandwidth curve that collapses past its peak (Open MPI's rendezvous above the eager limit).
// The former fit (plain least squares of time per item against 1/g, beta from the larger half of
// the whole curve) gives per_item = 0 on these data: its intercept, 0.9 ns, is pinned by the g = 1
// point's noise, and 8 beta with the collapsed curve's beta (2.1 ns per byte) exceeds it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tuning/passes.hpp"
#include "transit/tuning/calibrate_streamer.hpp"

namespace {

using namespace transit;

constexpr double alpha = 1.2e-6, beta = 0.2e-9, per_item = 3.5e-9;

std::vector<bandwidth_point> mpi_shaped_curve() {
  std::vector<bandwidth_point> curve;
  const double noise[] = {1.03, 0.98, 1.01, 0.97, 1.04, 1.0, 0.99, 1.02, 0.96, 1.01, 1.0};
  int i = 0;
  for (std::size_t bytes = 16; bytes <= (std::size_t{4} << 20); bytes *= 2, ++i) {
    double seconds = alpha + beta * static_cast<double>(bytes);
    if (bytes > 16384) seconds = 1e-3 + static_cast<double>(bytes) / 5e8;  // past the eager limit
    else seconds *= noise[i % 11];
    curve.push_back({bytes, seconds, static_cast<double>(bytes) / seconds});
  }
  return curve;
}

std::vector<streamer_timing> timings(double item_cost, const std::vector<double>& noise) {
  std::vector<streamer_timing> steps;
  const std::size_t sizes[] = {1, 8, 64, 512, 4096};
  for (std::size_t i = 0; i < 5; ++i) {
    const double g = static_cast<double>(sizes[i]);
    steps.push_back({sizes[i], (item_cost + 8 * beta + (alpha + 16 * beta) / g) * noise[i]});
  }
  return steps;
}

TEST(tuning_fit, exact_measurements_give_the_costs_back) {
  std::vector<bandwidth_point> curve;
  for (std::size_t bytes = 16; bytes <= 16384; bytes *= 2) {
    const double seconds = alpha + beta * static_cast<double>(bytes);
    curve.push_back({bytes, seconds, static_cast<double>(bytes) / seconds});
  }
  const link_costs c = fit_link_costs(curve, timings(per_item, {1, 1, 1, 1, 1}));
  EXPECT_NEAR(c.beta, beta, 1e-3 * beta);
  EXPECT_NEAR(c.alpha, alpha, 1e-3 * alpha);
  EXPECT_NEAR(c.per_item, per_item, 1e-3 * per_item);
}

TEST(tuning_fit, mpi_shaped_noisy_measurements_give_a_positive_per_item_cost) {
  // g = 1 measured 8% slow: 100 ns of noise on a point of 1.3 us, 30 times the per-item cost.
  const link_costs c = fit_link_costs(mpi_shaped_curve(), timings(per_item, {1.08, 0.97, 1.03, 0.96, 1.02}));
  EXPECT_NEAR(c.beta, beta, 0.3 * beta);  // from the curve up to its peak, not the collapse after it
  EXPECT_NEAR(c.alpha, alpha, 0.1 * alpha);
  EXPECT_GT(c.per_item, 0.6 * per_item);
  EXPECT_LT(c.per_item, 1.4 * per_item);
}

TEST(tuning_fit, per_item_cost_stays_positive_when_noise_hides_it) {
  // No per-item cost at all, and noise that tilts the line: the intercept alone would be <= 0.
  const link_costs c = fit_link_costs(mpi_shaped_curve(), timings(-8 * beta, {0.9, 1.1, 0.95, 1.05, 0.8}));
  EXPECT_GT(c.per_item, 0);
  EXPECT_TRUE(std::isfinite(c.per_item));
  EXPECT_GE(c.alpha, 0);
}

TEST(tuning_fit, a_curve_that_peaks_early_still_gives_a_positive_beta) {
  // The peak at the second of three points: the larger half up to the peak is one point and has
  // no slope, so beta falls back to the time per byte at the peak.
  const std::vector<bandwidth_point> curve{{4096, 4e-6, 4096 / 4e-6}, {8192, 3.9e-6, 8192 / 3.9e-6},
                                           {16384, 1e-3, 16384 / 1e-3}};
  const link_costs c = fit_link_costs(curve, timings(per_item, {1, 1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(c.beta, 3.9e-6 / 8192);
  EXPECT_GT(c.per_item, 0);
}

TEST(tuning_fit, no_measurements_give_zero_costs) {
  const link_costs c = fit_link_costs({}, {});
  EXPECT_EQ(c.alpha, 0);
  EXPECT_EQ(c.beta, 0);
  EXPECT_EQ(c.per_item, 0);
}

// The order calibration measures in (src/tuning/passes.hpp), on a simulated link whose timings
// follow the model: a burst of load (every timing 3x, as when another build takes the core) over
// any five consecutive measurements, as long as one pass of the five buffer sizes, leaves the
// automatic size where it was. Measured point by point instead (three passes of one size, then
// the next), a burst of three measurements on the g = 4096 point, the one that carries the
// per-item cost, moves the automatic size by a third.
std::size_t automatic_size_under_burst(bool pass_by_pass, std::size_t burst_from, std::size_t burst_length) {
  const std::size_t sizes[] = {1, 8, 64, 512, 4096};
  const double pass_noise[] = {1.0, 1.02, 0.985};  // each pass a little apart, as on a real machine
  std::size_t call = 0, pass = 0;
  const auto measure = [&](std::size_t i) {
    const double g = static_cast<double>(sizes[i]);
    double t = (per_item + 8 * beta + (alpha + 16 * beta) / g) * pass_noise[pass % 3];
    if (call >= burst_from && call < burst_from + burst_length) t *= 3;
    ++call;
    return t;
  };
  std::vector<double> per_item_seconds;
  if (pass_by_pass) {
    per_item_seconds = transit::detail::interleaved_medians(5, 3, [&](std::size_t i) {
      const double t = measure(i);
      if (i == 4) ++pass;
      return t;
    });
  } else {
    for (std::size_t i = 0; i < 5; ++i) {
      std::vector<double> taken;
      for (pass = 0; pass < 3; ++pass) taken.push_back(measure(i));
      per_item_seconds.push_back(transit::detail::median(taken));
    }
  }
  std::vector<streamer_timing> steps;
  for (std::size_t i = 0; i < 5; ++i) steps.push_back({sizes[i], per_item_seconds[i]});
  streamer_profile profile;
  profile.intra.measured = true;
  profile.intra.costs = fit_link_costs(mpi_shaped_curve(), steps);
  profile.buffer_bytes_75 = 8192;
  return automatic_buffer_items(profile, 8);
}

TEST(tuning_fit, a_burst_of_load_as_long_as_a_pass_does_not_move_the_automatic_size) {
  const double clean = static_cast<double>(automatic_size_under_burst(true, 0, 0));
  EXPECT_NEAR(clean, (alpha + 16 * beta) / (0.02 * (per_item + 8 * beta)), 0.1 * clean);
  for (std::size_t from = 0; from + 5 <= 15; ++from) {
    const double g = static_cast<double>(automatic_size_under_burst(true, from, 5));
    EXPECT_NEAR(g, clean, 0.05 * clean) << "burst over measurements " << from << " to " << from + 4;
  }
  // Why: point by point, a burst of three measurements can cover every pass of one point.
  double worst = 1;
  for (std::size_t from = 0; from + 3 <= 15; ++from) {
    const double moved = static_cast<double>(automatic_size_under_burst(false, from, 3)) / clean;
    worst = std::max({worst, moved, 1 / moved});
  }
  EXPECT_GT(worst, 1.4);
}

}  // namespace

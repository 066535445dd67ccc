// The clock seam (core/clock.hpp) in a normal build: the host's steady clock, and waits that pass
// real time. (A SimGrid build is checked by hand under smpirun: docs/simulation.md.)
#include <gtest/gtest.h>

#include <chrono>
#include <type_traits>

#include "transit/detail/core/clock.hpp"

namespace {

namespace detail = transit::detail;

TEST(clock, is_the_hosts_steady_clock) {
  static_assert(std::is_same_v<detail::steady_clock, std::chrono::steady_clock>);
  static_assert(detail::steady_clock::is_steady);
  const auto a = detail::steady_clock::now();
  const auto b = detail::steady_clock::now();
  EXPECT_LE(a, b);
}

TEST(clock, sleep_for_passes_at_least_the_time_asked) {
  const auto start = detail::steady_clock::now();
  detail::sleep_for(std::chrono::milliseconds(2));
  EXPECT_GE(detail::steady_clock::now() - start, std::chrono::milliseconds(2));
}

}  // namespace

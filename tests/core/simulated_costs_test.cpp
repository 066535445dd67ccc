// The cost settings of a simulated job (core/simulated_costs.hpp): parsed in every build, so that
// the rules are tested here; only SimGrid builds read them from the environment and charge them.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/simulated_costs.hpp"

namespace {

using transit::detail::parse_simulated_costs;

std::string error_of(const char* mode, const char* item, const char* message) {
  try {
    parse_simulated_costs(mode, item, message);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(simulated_costs, unset_is_measured_with_nothing_charged) {
  const auto c = parse_simulated_costs(nullptr, nullptr, nullptr);
  EXPECT_FALSE(c.modelled);
  EXPECT_EQ(c.seconds_per_item, 0.0);
  EXPECT_EQ(c.seconds_per_message, 0.0);
  EXPECT_FALSE(parse_simulated_costs("", "", "").modelled);
  EXPECT_FALSE(parse_simulated_costs("measured", nullptr, nullptr).modelled);
}

TEST(simulated_costs, modelled_takes_both_costs) {
  const auto c = parse_simulated_costs("modelled", "2.96e-07", "3.6e-6");
  EXPECT_TRUE(c.modelled);
  EXPECT_DOUBLE_EQ(c.seconds_per_item, 2.96e-7);
  EXPECT_DOUBLE_EQ(c.seconds_per_message, 3.6e-6);
  EXPECT_EQ(parse_simulated_costs("modelled", "0", "0").seconds_per_item, 0.0);
}

TEST(simulated_costs, a_bad_mode_names_the_variable_and_the_modes) {
  EXPECT_EQ(error_of("modeled", "1e-7", "1e-6"),
            "TRANSIT_SIM_MODE: got 'modeled', expected 'modelled' or 'measured'");
}

TEST(simulated_costs, a_bad_cost_names_the_variable_and_the_range) {
  EXPECT_EQ(error_of("modelled", "296ns", "1e-6"),
            "TRANSIT_SIM_SECONDS_PER_ITEM: got '296ns', expected a number of seconds in [0, 1), such as 2.96e-07");
  EXPECT_EQ(error_of("modelled", "1e-7", "-1e-6"),
            "TRANSIT_SIM_SECONDS_PER_MESSAGE: got '-1e-6', expected a number of seconds in [0, 1), such as 2.96e-07");
  EXPECT_NE(error_of("modelled", "296", "1e-6").find("TRANSIT_SIM_SECONDS_PER_ITEM: got '296'"), std::string::npos);
  EXPECT_NE(error_of("modelled", "nan", "1e-6").find("got 'nan'"), std::string::npos);
  EXPECT_NE(error_of("modelled", "1e-7", "inf").find("got 'inf'"), std::string::npos);
  // Checked in measured mode too: a typo is not silently ignored.
  EXPECT_NE(error_of("measured", "x", nullptr).find("TRANSIT_SIM_SECONDS_PER_ITEM: got 'x'"), std::string::npos);
}

TEST(simulated_costs, modelled_without_a_cost_says_which_is_missing) {
  EXPECT_EQ(error_of("modelled", nullptr, "1e-6"),
            "TRANSIT_SIM_SECONDS_PER_ITEM: got '', expected a number of seconds with TRANSIT_SIM_MODE=modelled");
  EXPECT_EQ(error_of("modelled", "1e-7", ""),
            "TRANSIT_SIM_SECONDS_PER_MESSAGE: got '', expected a number of seconds with TRANSIT_SIM_MODE=modelled");
}

}  // namespace

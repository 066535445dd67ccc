// The cost settings of a simulated job (core/simulated_costs.hpp): parsed in every build, so that
// the rules are tested here; only SimGrid builds read them from the environment and charge them.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "core/simulated_costs.hpp"

namespace {

using transit::detail::mpi_library;
using transit::detail::message_overhead;
using transit::detail::parse_simulated_costs;
using transit::detail::simulated_costs;

using variables = std::map<std::string, std::string, std::less<>>;

simulated_costs parse(const variables& v) {
  return parse_simulated_costs([&](std::string_view name) -> const char* {
    const auto found = v.find(name);
    return found == v.end() ? nullptr : found->second.c_str();
  });
}

std::string error_of(const variables& v) {
  try {
    parse(v);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

const variables modelled{{"TRANSIT_SIM_MODE", "modelled"},
                         {"TRANSIT_SIM_SECONDS_PER_ITEM", "2.96e-07"},
                         {"TRANSIT_SIM_SECONDS_PER_BYTE", "5e-10"}};

variables with(variables v, const std::string& name, const std::string& value) {
  v[name] = value;
  return v;
}

variables without(variables v, const std::string& name) {
  v.erase(name);
  return v;
}

TEST(simulated_costs, unset_is_measured_with_nothing_charged) {
  const auto c = parse({});
  EXPECT_FALSE(c.modelled);
  EXPECT_EQ(c.seconds_per_item, 0.0);
  EXPECT_EQ(c.seconds_per_byte, 0.0);
  EXPECT_TRUE(c.send_overhead.empty());
  EXPECT_TRUE(c.receive_overhead.empty());
  EXPECT_EQ(c.nic_messages_per_second, 0.0);
  EXPECT_FALSE(parse({{"TRANSIT_SIM_MODE", ""}, {"TRANSIT_SIM_SECONDS_PER_ITEM", ""}}).modelled);
  EXPECT_FALSE(parse({{"TRANSIT_SIM_MODE", "measured"}}).modelled);
}

TEST(simulated_costs, modelled_takes_every_cost) {
  const auto c = parse(with(with(with(modelled, "TRANSIT_SIM_RECEIVE_OVERHEAD", "0:3.6e-6:0"),
                                 "TRANSIT_SIM_SEND_OVERHEAD", "0:1e-6:1e-9"),
                            "TRANSIT_SIM_NIC_MESSAGES_PER_SECOND", "2e7"));
  EXPECT_TRUE(c.modelled);
  EXPECT_DOUBLE_EQ(c.seconds_per_item, 2.96e-7);
  EXPECT_DOUBLE_EQ(c.seconds_per_byte, 5e-10);
  EXPECT_DOUBLE_EQ(c.receive_overhead.seconds(32), 3.6e-6);
  EXPECT_DOUBLE_EQ(c.send_overhead.seconds(1000), 1e-6 + 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(c.nic_messages_per_second, 2e7);
  EXPECT_TRUE(c.transit_overhead.empty());
  EXPECT_EQ(parse(with(modelled, "TRANSIT_SIM_SECONDS_PER_ITEM", "0")).seconds_per_item, 0.0);
  EXPECT_DOUBLE_EQ(parse(with(modelled, "TRANSIT_SIM_TRANSIT_OVERHEAD", "0:2e-7:1e-10")).transit_overhead.seconds(100),
                   2e-7 + 100 * 1e-10);
  EXPECT_NE(error_of(with(modelled, "TRANSIT_SIM_TRANSIT_OVERHEAD", "2e-7")).find("TRANSIT_SIM_TRANSIT_OVERHEAD: got '2e-7'"),
            std::string::npos);
}

TEST(simulated_costs, an_overhead_by_size_follows_simgrids_rule) {
  // A section applies above its size; sizes up to the second section's take the first.
  const auto o = message_overhead::parse("X", "65536:5e-06:1e-10;0:3.6e-06:0;1024:4e-06:0");
  EXPECT_DOUBLE_EQ(o.seconds(0), 3.6e-6);
  EXPECT_DOUBLE_EQ(o.seconds(1024), 3.6e-6);
  EXPECT_DOUBLE_EQ(o.seconds(1025), 4e-6);
  EXPECT_DOUBLE_EQ(o.seconds(65536), 4e-6);
  EXPECT_DOUBLE_EQ(o.seconds(65537), 5e-6 + 65537 * 1e-10);
  // The first section serves sizes below its own too (SimGrid's "1:0:0:0:0"-style defaults).
  EXPECT_DOUBLE_EQ(message_overhead::parse("X", "100:2e-6:0").seconds(10), 2e-6);
  EXPECT_EQ(message_overhead::parse("X", "").seconds(10), 0.0);
}

TEST(simulated_costs, the_mpi_library_is_open_mpi_unless_told) {
  EXPECT_EQ(parse({}).mpi, mpi_library::open_mpi);
  EXPECT_EQ(parse(with(modelled, "TRANSIT_SIM_MPI_LIBRARY", "open-mpi")).mpi, mpi_library::open_mpi);
  EXPECT_EQ(parse(with(modelled, "TRANSIT_SIM_MPI_LIBRARY", "mpich")).mpi, mpi_library::mpich);
  EXPECT_EQ(error_of(with(modelled, "TRANSIT_SIM_MPI_LIBRARY", "cray")),
            "TRANSIT_SIM_MPI_LIBRARY: got 'cray', expected 'open-mpi' or 'mpich'");
}

TEST(simulated_costs, a_bad_mode_names_the_variable_and_the_modes) {
  EXPECT_EQ(error_of(with(modelled, "TRANSIT_SIM_MODE", "modeled")),
            "TRANSIT_SIM_MODE: got 'modeled', expected 'modelled' or 'measured'");
}

TEST(simulated_costs, a_bad_cost_names_the_variable_and_the_range) {
  EXPECT_EQ(error_of(with(modelled, "TRANSIT_SIM_SECONDS_PER_ITEM", "296ns")),
            "TRANSIT_SIM_SECONDS_PER_ITEM: got '296ns', expected a number of seconds in [0, 1), such as 2.96e-07");
  EXPECT_EQ(error_of(with(modelled, "TRANSIT_SIM_SECONDS_PER_BYTE", "-1e-9")),
            "TRANSIT_SIM_SECONDS_PER_BYTE: got '-1e-9', expected a number of seconds in [0, 1), such as 2.96e-07");
  EXPECT_NE(error_of(with(modelled, "TRANSIT_SIM_SECONDS_PER_ITEM", "296")).find("TRANSIT_SIM_SECONDS_PER_ITEM: got '296'"),
            std::string::npos);
  EXPECT_NE(error_of(with(modelled, "TRANSIT_SIM_SECONDS_PER_ITEM", "nan")).find("got 'nan'"), std::string::npos);
  EXPECT_NE(error_of(with(modelled, "TRANSIT_SIM_SECONDS_PER_BYTE", "inf")).find("got 'inf'"), std::string::npos);
  // Checked in measured mode too: a typo is not silently ignored.
  EXPECT_NE(error_of({{"TRANSIT_SIM_MODE", "measured"}, {"TRANSIT_SIM_SECONDS_PER_ITEM", "x"}})
                .find("TRANSIT_SIM_SECONDS_PER_ITEM: got 'x'"),
            std::string::npos);
  EXPECT_EQ(error_of(with(modelled, "TRANSIT_SIM_NIC_MESSAGES_PER_SECOND", "-5")),
            "TRANSIT_SIM_NIC_MESSAGES_PER_SECOND: got '-5', expected a number of messages per second >= 0 (0: no limit)");
}

TEST(simulated_costs, a_bad_overhead_names_the_variable_and_the_notation) {
  for (const char* bad : {"3.6e-6", "0:3.6e-6", "0:3.6e-6:0:1", "x:3.6e-6:0", "0:2:0", "0:1e-6:-1", "-1:1e-6:0",
                          "0:1e-6:0;;64:1e-6:0", "1.5:1e-6:0"}) {
    const std::string error = error_of(with(modelled, "TRANSIT_SIM_RECEIVE_OVERHEAD", bad));
    EXPECT_EQ(error.rfind(std::string("TRANSIT_SIM_RECEIVE_OVERHEAD: got '") + bad +
                              "', expected sections BYTES:SECONDS:SECONDS_PER_BYTE joined by ';'",
                          0),
              0u)
        << error;
  }
  EXPECT_NE(error_of(with(modelled, "TRANSIT_SIM_SEND_OVERHEAD", "0")).find("TRANSIT_SIM_SEND_OVERHEAD: got '0'"),
            std::string::npos);
}

TEST(simulated_costs, modelled_without_a_cost_says_which_is_missing) {
  EXPECT_EQ(error_of(without(modelled, "TRANSIT_SIM_SECONDS_PER_ITEM")),
            "TRANSIT_SIM_SECONDS_PER_ITEM: got '', expected a number of seconds with TRANSIT_SIM_MODE=modelled");
  EXPECT_EQ(error_of(with(modelled, "TRANSIT_SIM_SECONDS_PER_BYTE", "")),
            "TRANSIT_SIM_SECONDS_PER_BYTE: got '', expected a number of seconds with TRANSIT_SIM_MODE=modelled");
  // The overheads and the message rate may be left out: none, no limit.
  EXPECT_EQ(error_of(modelled), "(no error)");
}

}  // namespace

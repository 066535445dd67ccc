#include "simulated_costs.hpp"

#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"

#ifdef TRANSIT_SIMGRID
#include <mpi.h>

#include <cstdlib>
#include <vector>
#endif

namespace transit::detail {

namespace {

bool given(const char* text) { return text != nullptr && *text != '\0'; }

double parse_seconds(const char* variable, const char* text) {
  const std::string_view view(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  // A cost of a second or more per item or message is no machine's: most likely a unit mistake
  // (nanoseconds written as seconds).
  if (ec != std::errc() || end != view.data() + view.size() || !std::isfinite(value) || value < 0 || value >= 1)
    throw_invalid(variable, view, "a number of seconds in [0, 1), such as 2.96e-07");
  return value;
}

}  // namespace

simulated_costs parse_simulated_costs(const char* mode, const char* seconds_per_item,
                                      const char* seconds_per_message) {
  simulated_costs costs;
  if (given(mode)) {
    const std::string_view m(mode);
    if (m == "modelled") {
      costs.modelled = true;
    } else if (m != "measured") {
      throw_invalid("TRANSIT_SIM_MODE", m, "'modelled' or 'measured'");
    }
  }
  if (given(seconds_per_item)) {
    costs.seconds_per_item = parse_seconds("TRANSIT_SIM_SECONDS_PER_ITEM", seconds_per_item);
  } else if (costs.modelled) {
    throw_invalid("TRANSIT_SIM_SECONDS_PER_ITEM", "", "a number of seconds with TRANSIT_SIM_MODE=modelled");
  }
  if (given(seconds_per_message)) {
    costs.seconds_per_message = parse_seconds("TRANSIT_SIM_SECONDS_PER_MESSAGE", seconds_per_message);
  } else if (costs.modelled) {
    throw_invalid("TRANSIT_SIM_SECONDS_PER_MESSAGE", "", "a number of seconds with TRANSIT_SIM_MODE=modelled");
  }
  return costs;
}

#ifndef TRANSIT_SIMGRID
const simulated_costs& simulation_costs() {
  static const simulated_costs none;
  return none;
}

void charge_simulated(double) {}
#else
const simulated_costs& simulation_costs() {
  // Read once per rank (smpi/privatization gives each rank its own copy of this static; without
  // it, once for all): SMPI runs its ranks one at a time, never in parallel.
  static const simulated_costs costs =
      parse_simulated_costs(std::getenv("TRANSIT_SIM_MODE"), std::getenv("TRANSIT_SIM_SECONDS_PER_ITEM"),
                            std::getenv("TRANSIT_SIM_SECONDS_PER_MESSAGE"));
  return costs;
}

void charge_simulated(double seconds) {
  // A simulated sleep, not an execution (smpi_execute_benched): a modelled rank owns its core, so
  // both pass the same simulated time, but SimGrid 3.32 files every execution in its actor's list
  // of activities and scans that list to remove it when it ends. That list also keeps every
  // communication completed by MPI_Test (3.32 never removes those), so each charge cost a scan of
  // all the rank's past messages: at 1024 ranks most of the simulator's time (docs/simulation.md).
  // A charge below 100 ns (a message's few item hops) is owed until the rank's debt reaches it:
  // SimGrid rounds a sleep below its precision (scripts/simulate sets up to 100 ns) and warns.
  constexpr double smallest_charge = 1e-7;
  static std::vector<double> owed;  // per rank: the ranks of a simulation share this process's globals
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (owed.size() <= static_cast<std::size_t>(rank)) owed.resize(static_cast<std::size_t>(rank) + 1, 0.0);
  double& debt = owed[static_cast<std::size_t>(rank)];
  debt += seconds;
  if (debt < smallest_charge) return;
  const double due = debt;
  debt = 0;
  simulated_sleep(due);
}
#endif

}  // namespace transit::detail

#pragma once
// transit's own work in simulated time (TRANSIT_SIMGRID, docs/simulation.md). Two modes, set by the
// environment of a simulated job (scripts/simulate sets it):
//
//   TRANSIT_SIM_MODE                  measured (or unset) | modelled
//   TRANSIT_SIM_SECONDS_PER_ITEM      seconds per item per hop: its copy into a buffer at the
//                                     source, each routing step, its delivery (the thesis's o_a)
//   TRANSIT_SIM_SECONDS_PER_MESSAGE   seconds per message sent and per message received
//                                     (transit's own per-message path: the thesis's o_s and o_d)
//
// measured: SMPI times transit's real CPU bursts on the host (smpi/simulate-computation) and
// nothing is charged here. modelled: the runner switches SMPI's timing off
// (--cfg=smpi/simulate-computation:no) and transit charges these costs instead, so a run's
// simulated time depends on the calibration and the platform only: the same on every host and
// every run. Per-item costs are not charged item by item: the streamer's statistics already count
// every item at every hop (inserted, forwarded, delivered), and the debt is charged once per
// message sent and once per poll (streamer_core::charge_items).
#include <cstdint>

#include "transit/detail/core/simulation.hpp"

namespace transit::detail {

struct simulated_costs {
  bool modelled = false;
  double seconds_per_item = 0;
  double seconds_per_message = 0;
};

/// The costs that the three variables' values give (nullptr or "" = unset). Throws
/// std::invalid_argument naming the variable, its value and what was expected: a mode other than
/// `measured` or `modelled`; a cost that is not a number of seconds in [0, 1); a modelled mode
/// without both costs. In measured mode the costs are checked and then not used.
simulated_costs parse_simulated_costs(const char* mode, const char* seconds_per_item,
                                      const char* seconds_per_message);

/// The costs of this job, read from the environment at the first call (under SMPI all ranks share
/// one process and one environment). Throws as parse_simulated_costs. Outside a simulation build
/// there are none (measured mode, nothing charged) and the environment is not read.
const simulated_costs& simulation_costs();

/// Passes `seconds` of simulated time on this rank's core; nothing for seconds <= 0, and nothing
/// outside a simulation build.
void charge_simulated(double seconds);

// The one way transit charges its own work in simulated time: these two calls, made
// unconditionally by every layer (each is an empty inline function outside a simulation build).

/// Modelled mode: charges `messages` messages' own costs now; nothing in measured mode.
inline void charge_messages(std::uint64_t messages) {
  if constexpr (simulated_build) {
    const simulated_costs& c = simulation_costs();
    if (c.modelled && messages > 0) charge_simulated(static_cast<double>(messages) * c.seconds_per_message);
  }
}

/// Modelled mode: charges `hops` item hops now (an item or record copied into a message at its
/// source or at a hop that forwards it, or handed over at its destination); nothing in measured mode.
inline void charge_item_hops(std::uint64_t hops) {
  if constexpr (simulated_build) {
    const simulated_costs& c = simulation_costs();
    if (c.modelled && hops > 0) charge_simulated(static_cast<double>(hops) * c.seconds_per_item);
  }
}

/// Item hops counted on the per-item path and charged in one go, once per message or poll: the
/// per-item path adds an increment (nothing at all outside a simulation build), never a call into
/// the simulator.
class item_hop_counter {
 public:
  void add(std::uint64_t hops = 1) noexcept {
    if constexpr (simulated_build) pending_ += hops;
  }
  void charge() {
    if (pending_ == 0) return;
    charge_item_hops(pending_);
    pending_ = 0;
  }

 private:
  std::uint64_t pending_ = 0;
};

}  // namespace transit::detail

#pragma once
// transit's own work in simulated time (a simulation build: core/simulation.hpp, docs/simulation.md). Set by the
// environment of a simulated job (scripts/simulate sets it):
//
//   TRANSIT_SIM_MODE                     measured (or unset) | modelled
//   TRANSIT_SIM_SECONDS_PER_ITEM         seconds per item per hop: its copy into a buffer at the
//                                        source, each routing step, its delivery (the thesis's o_a)
//   TRANSIT_SIM_SECONDS_PER_BYTE         seconds per byte transit copies into a message it sends
//   TRANSIT_SIM_SEND_OVERHEAD            a message's overhead at its sender and its receiver, by
//   TRANSIT_SIM_RECEIVE_OVERHEAD         size, as SimGrid's smpi/os (= smpi/ois) and smpi/or
//                                        ("BYTES:SECONDS:SECONDS_PER_BYTE;..."), which the runner
//                                        sets to the same values
//   TRANSIT_SIM_NIC_MESSAGES_PER_SECOND  messages a node's network interface injects per second
//                                        (unset or 0: no limit)
//   TRANSIT_SIM_MPI_LIBRARY              open-mpi (or unset) | mpich: whose MPI_Alltoallv the
//                                        mpi_alltoallv baseline runs (the simulated machine's MPI)
//   TRANSIT_SIM_TRANSIT_OVERHEAD         transit's own cost per message at each end above the MPI
//                                        library's, by size (unset: none; the notation of smpi/os)
//
// One cost model for everything that sends: every MPI message, transit's and the baselines'
// (MPI_Alltoallv, MPI RMA, collectives), pays the per-message overhead at the sender (smpi/os,
// smpi/ois) and at the receiver (smpi/or), and transit charges only its own work on top (items
// per hop, bytes copied). SMPI 3.32 charges smpi/or only for a message whose send was detached,
// and a detached message costs SimGrid a scan of every detached message in flight in the whole
// simulation when it arrives (a direct all-to-all at 256 ranks: 711 s of real time detached, 71 s
// not; docs/simulation.md). So sends are not detached and the receiver's overhead is charged
// here: transit's receiver charges it for each of its own messages (charge_receive_overhead), and
// the messages of the MPI collectives a baseline calls, whose receives happen inside SMPI, pay it
// at their sender while that rank is in a baseline_messages scope (a collective receives as many
// messages as it sends). MPI RMA is unchanged: SMPI always detaches RMA messages and charges
// smpi/or itself. With a NIC message rate the cost callbacks for sends (smpi_register_op_cost_
// callback, which replace smpi/os and smpi/ois) also add each message's wait for its node's
// interface. SMPI charges none of this to a blocking MPI_Send, so the simulation build sends
// every blocking send as a nonblocking one and its wait (core/simulation.cpp).
//
// measured: SMPI times transit's real CPU bursts on the host (smpi/simulate-computation) and
// nothing is charged here. modelled: the runner switches SMPI's timing off
// (--cfg=smpi/simulate-computation:no) and transit charges these costs instead, so a run's
// simulated time depends on the calibration and the platform only: the same on every host and
// every run. Per-item costs are not charged item by item: the streamer's statistics already count
// every item at every hop (inserted, forwarded, delivered), and the debt is charged once per
// message sent and once per poll (streamer_core::charge_items).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "transit/detail/core/simulation.hpp"

namespace transit::detail {

/// A per-message overhead by message size, piecewise linear, in SimGrid's notation for smpi/os,
/// smpi/or and smpi/ois: sections "BYTES:SECONDS:SECONDS_PER_BYTE" joined by ';'. A message of n
/// bytes costs SECONDS + n x SECONDS_PER_BYTE of the last section (by BYTES) whose BYTES is below
/// n, or of the first section: SimGrid 3.32's rule (smpi::Host::orecv), so that what transit
/// charges itself equals what SMPI charges from the same text.
class message_overhead {
 public:
  struct section {
    std::size_t bytes = 0;
    double seconds = 0;
    double seconds_per_byte = 0;
  };
  /// Parses `text` (empty: no overhead). Throws std::invalid_argument naming `variable`, the text
  /// and the expected form: a section without three fields, a size that is not a whole number of
  /// bytes, a cost that is not a number of seconds in [0, 1).
  static message_overhead parse(std::string_view variable, std::string_view text);
  /// The seconds a message of `bytes` bytes costs (0 without sections).
  [[nodiscard]] double seconds(std::size_t bytes) const noexcept;
  [[nodiscard]] bool empty() const noexcept { return sections_.empty(); }

 private:
  std::vector<section> sections_;  // by bytes, smallest first
};

/// The MPI library a simulated machine runs, for the baselines whose algorithm differs between
/// them. Open MPI's MPI_Alltoallv (3.1 and later; SMPI's ompi selector copies it) sends a message
/// to every peer, empty ones included; MPICH's and the libraries derived from it (Cray MPT, IBM's
/// Blue Gene/Q MPI, MVAPICH2) skip empty counts.
enum class mpi_library { open_mpi, mpich };

struct simulated_costs {
  bool modelled = false;
  mpi_library mpi = mpi_library::open_mpi;
  double seconds_per_item = 0;
  double seconds_per_byte = 0;
  message_overhead send_overhead;
  message_overhead receive_overhead;
  message_overhead transit_overhead;  // transit's messages only, at each end, above the two above
  double nic_messages_per_second = 0;  // 0: no limit
};

/// The costs that the variables above give, each looked up by name through `variable` (nullptr or
/// "" = unset). Throws std::invalid_argument naming the variable, its value and what was expected:
/// a mode other than `measured` or `modelled`; a cost that is not a number of seconds in [0, 1);
/// an overhead not in SimGrid's notation; a message rate that is not a number >= 0; a modelled
/// mode without the cost per item or per byte; an MPI library other than `open-mpi` or `mpich`.
/// In measured mode the values are checked and then not used.
simulated_costs parse_simulated_costs(const std::function<const char*(std::string_view)>& variable);

/// The costs of this job, read from the environment at the first call (under SMPI all ranks share
/// one process and one environment); in modelled mode or with a NIC message rate, the first call
/// also installs the send cost callbacks. Throws as parse_simulated_costs. Outside a simulation build there are none
/// (measured mode, nothing charged) and the environment is not read.
const simulated_costs& simulation_costs();

/// Passes `seconds` of simulated time on this rank's core; nothing for seconds <= 0, and nothing
/// outside a simulation build.
void charge_simulated(double seconds);

// The one way transit charges its own work in simulated time: these calls, made unconditionally
// by every layer (each is an empty inline function outside a simulation build).

/// Modelled mode: charges `bytes` bytes that transit copied into a message; nothing in measured mode.
inline void charge_bytes_copied(std::uint64_t bytes) {
  if constexpr (simulated_build) {
    const simulated_costs& c = simulation_costs();
    if (c.modelled && bytes > 0) charge_simulated(static_cast<double>(bytes) * c.seconds_per_byte);
  }
}

/// Modelled mode: transit's own cost per message of `bytes` bytes at one end, above the MPI
/// library's (TRANSIT_SIM_TRANSIT_OVERHEAD: a calibration that measured both, e.g. `measured`,
/// charges the library's cost to every MPI message and this to transit's only); nothing in
/// measured mode. The mpi transport charges it when it sends a message and when it receives one.
inline void charge_transit_message(std::size_t bytes) {
  if constexpr (simulated_build) {
    const simulated_costs& c = simulation_costs();
    if (c.modelled) charge_simulated(c.transit_overhead.seconds(bytes));
  }
}

/// Modelled mode: charges the receiver's overhead (smpi/or) of a transit message of `bytes` bytes
/// it received, which SMPI does not charge for a send that is not detached; nothing in measured
/// mode.
inline void charge_receive_overhead(std::size_t bytes) {
  if constexpr (simulated_build) {
    const simulated_costs& c = simulation_costs();
    if (c.modelled) charge_simulated(c.receive_overhead.seconds(bytes));
  }
}

/// While alive (modelled mode), each message this rank sends pays the receiver's overhead too, at
/// the sender: put around an MPI collective a baseline calls (MPI_Alltoallv and its count
/// exchange, MPI_Neighbor_alltoallv), whose messages are received inside SMPI where transit cannot
/// charge them. Such a collective receives as many messages as it sends, so each rank pays for the
/// messages it receives, in number exactly and in bytes on average. Nothing outside a simulation
/// build.
class baseline_messages {
 public:
  baseline_messages() noexcept { mark(true); }
  ~baseline_messages() { mark(false); }
  baseline_messages(const baseline_messages&) = delete;
  baseline_messages& operator=(const baseline_messages&) = delete;

 private:
  static void mark(bool inside) noexcept;
};

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

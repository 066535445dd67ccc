#pragma once
// The simulation seam: what is SimGrid's (SMPI runs the mpi backend's ranks as simulated processes
// of one real one, docs/simulation.md), asked as plain questions. Its source, simulation.cpp, is
// the only file that includes SimGrid's headers; elsewhere code asks here, or tests the installed
// constant simulated_build (transit/detail/core/simulation.hpp) with `if constexpr`. In a normal
// build every answer is "not simulated" and nothing of SimGrid is used.
//
// Also SimGrid's, and behind these: the simulated clock (transit/detail/core/clock.hpp, defined in
// simulation.cpp), simulated costs (core/simulated_costs.hpp).
#include <cstddef>
#include <functional>
#include <map>
#include <memory>

#include "transit/detail/core/simulation.hpp"

namespace transit::detail::simulation {

/// Whether all ranks of a job run in this one process (SMPI: each rank is a simulated process
/// here, run one at a time): what every rank builds alike (its machine, its topology) can be built
/// once and shared, and per-rank state in globals is indexed by world_rank().
inline constexpr bool ranks_share_process = simulated_build;

/// What every rank of a simulated job builds alike, O(P) each (its machine, its topology), built
/// once and shared instead of held P times (2 GB at 8192 ranks): the first rank's object serves
/// the others. `key` says what the object was built from. Call only when ranks_share_process.
template <class T, class Key>
std::shared_ptr<const T> shared_by_ranks(const Key& key, const std::function<std::shared_ptr<const T>()>& make) {
  static std::map<Key, std::weak_ptr<const T>> built;
  std::weak_ptr<const T>& slot = built[key];
  if (std::shared_ptr<const T> existing = slot.lock()) return existing;
  std::shared_ptr<const T> made = make();
  slot = made;
  return made;
}

/// The rank-thread rule: a simulated rank runs on one thread (SMPI), so PE threads per rank above
/// 1 are refused. What is expected when `threads_per_rank` breaks the rule, else null.
const char* threads_per_rank_refusal(int threads_per_rank) noexcept;

/// Registers `report` (once per process) to run when the simulation finds every rank blocked with
/// nothing left to happen: a deadlock that no watchdog sees, since simulated time stops. Nothing in
/// a normal build.
void on_deadlock(void (*report)());

/// The simulated machine's clock in seconds (0 in a normal build).
double simulated_seconds();

/// This rank's number in MPI_COMM_WORLD (0 in a normal build).
std::size_t world_rank();

/// The cost in seconds of starting a send of `bytes` from simulated host `source` to `dest` (the
/// hosts as opaque identities: equal when the message stays within a node).
using send_cost = std::function<double(std::size_t bytes, const void* source, const void* dest)>;
/// Replaces SMPI's send overheads (smpi/os, smpi/ois) by `cost` for MPI_Send and MPI_Isend.
/// Nothing in a normal build.
void register_send_cost(send_cost cost);

}  // namespace transit::detail::simulation

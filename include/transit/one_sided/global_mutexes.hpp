#pragma once
// global_mutexes: mutexes spread over the PEs, ticket locks queued first come, first served at their home PE.
#include <memory>
#include <stdexcept>
#include <vector>

#include "transit/detail/core/error.hpp"
#include "transit/detail/one_sided/engine.hpp"
#include "transit/one_sided/options.hpp"
#include "transit/runtime/context.hpp"

namespace transit {

/// `count` mutexes; mutex m lives on PE m % size(), a ticket lock in its node's memory. The PEs of
/// its node take it with atomics there (where the node shares memory, as a global_array's
/// elements); other PEs' lock and unlock requests are routed, aggregated and served like a
/// global_array's (same options, same progress modes) and take tickets of the same lock; with
/// mpi_rma they are ticket locks on an MPI window.
class global_mutexes {
 public:
  /// Collective: every PE constructs its global_mutexes in the same order with equal arguments.
  /// std::invalid_argument for count < 1 or bad options (as global_array).
  global_mutexes(context& ctx, int count, one_sided_options options = {});
  /// Collective (teardown serves the other PEs until every one has finished).
  ~global_mutexes();
  global_mutexes(const global_mutexes&) = delete;
  global_mutexes& operator=(const global_mutexes&) = delete;

  /// Local, blocking: returns when this PE holds `mutex`, serving its peers meanwhile. Lockers are
  /// granted in the order they take their tickets at the home (FIFO, so every waiter is served). std::out_of_range for a mutex outside
  /// [0, count); std::logic_error if this PE already holds it (it would wait for itself).
  void lock(int mutex);
  /// Local. Completes every one-sided operation this PE issued (any global_array), then releases
  /// `mutex`, so the next holder sees those writes. std::logic_error if this PE does not hold it.
  void unlock(int mutex);
  /// Local. Number of mutexes.
  int count() const noexcept { return count_; }
  /// Local, at any time between construction and destruction: this PE's counters, as
  /// global_array::stats() (one_sided_stats; these mutexes' engine only, no array's).
  /// requests_served counts the lock and unlock operations applied to the mutexes homed here,
  /// whoever took them: the tickets taken and served (mpi_rma: read from this PE's window, where
  /// requests_sent counts MPI operations); applied_in_node the locks and unlocks this PE took in
  /// its node's memory.
  /// Throws std::runtime_error with MPI's error string only if such an MPI call fails (mpi_rma).
  one_sided_stats stats() const { return engine_->stats(); }

 private:
  void check(int mutex, const char* what) const;
  void send(detail::op_code code, int mutex, const char* what);
  context& ctx_;
  int count_;
  std::vector<bool> held_;
  std::unique_ptr<detail::one_sided_engine> engine_;
};

}  // namespace transit

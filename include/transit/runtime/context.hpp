#pragma once
// A PE's view of the job: who it is, the machine, collectives, and (for transit's own layers)
// the transport, channels and the waiting loop.
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "transit/core/backoff.hpp"
#include "transit/runtime/options.hpp"
#include "transit/topology/machine.hpp"
#include "transit/topology/topology_manager.hpp"
#include "transit/transport/mailbox.hpp"
#include "transit/transport/transport.hpp"

namespace transit {

namespace detail {

/// Thrown on a PE's thread when another PE failed, to unwind it; run() does not report it.
struct job_aborted : std::exception {
  const char* what() const noexcept override { return "the job was aborted by another PE's failure"; }
};

/// What a waiting loop's step reports.
enum class step_result { done, progressed, idle };

}  // namespace detail

class context {
 public:
  context(std::unique_ptr<detail::transport> net, std::shared_ptr<const transit::machine> m,
          std::shared_ptr<const topology_manager> topology, run_options options);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  /// This PE, in [0, size()). Local, never blocks.
  int rank() const noexcept { return rank_; }
  /// Number of PEs in the job. Local.
  int size() const noexcept { return size_; }
  /// Nodes and PEs of the job. Local.
  const transit::machine& machine() const noexcept { return *machine_; }
  /// The physical topology of the job (--transit-physical, TRANSIT_PHYSICAL, or nodes one switch
  /// hop apart): coordinates, hops, nearest PE. Local.
  const topology_manager& topology() const noexcept { return *topology_; }
  /// "local" or "mpi".
  std::string_view backend() const noexcept { return net_->backend(); }
  /// The options this job was launched with.
  const run_options& options() const noexcept { return options_; }

  /// Collective: returns once every PE has called it.
  void barrier();
  /// Collective: the sum, min or max of `value` over all PEs, on every PE. Integers and doubles.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  T allreduce(T value, reduce_op op);

  // ---- for transit's layers (streamer, exchange, benchmarks) ----

  detail::transport& net() noexcept { return *net_; }
  detail::mailbox& mail() noexcept { return mailbox_; }

  /// Repeats `step` until it returns done, backing off (and yielding the core) while it reports
  /// idle. Throws detail::job_aborted when another PE failed; with the watchdog on, a PE idle for
  /// that long prints `what` and every registered diagnostic, then ends the job.
  template <class Step>
  void wait_until(Step&& step, std::string_view what);

  /// Waits until the collective started on `group` completes, keeping the transport moving
  /// meanwhile (arrivals wait in the mailbox for their endpoints).
  void finish_collective(detail::collective_group& group, std::string_view what);

  /// Registers a description of some endpoint's state for watchdog reports; returns an id.
  int add_diagnostic(std::function<std::string()> describe);
  void remove_diagnostic(int id);

 private:
  void allreduce_raw(void* values, detail::scalar_type type, reduce_op op);
  [[noreturn]] void watchdog_expired(std::string_view what, std::chrono::steady_clock::duration idle);

  std::unique_ptr<detail::transport> net_;
  detail::mailbox mailbox_;
  std::shared_ptr<const transit::machine> machine_;
  std::shared_ptr<const topology_manager> topology_;
  run_options options_;
  int rank_;
  int size_;
  std::unique_ptr<detail::collective_group> group_;  // for barrier and allreduce
  std::vector<std::pair<int, std::function<std::string()>>> diagnostics_;
  int next_diagnostic_ = 0;
};

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
T context::allreduce(T value, reduce_op op) {
  if constexpr (std::is_floating_point_v<T>) {
    double v = static_cast<double>(value);
    allreduce_raw(&v, detail::scalar_type::f64, op);
    return static_cast<T>(v);
  } else if constexpr (std::is_signed_v<T>) {
    std::int64_t v = value;
    allreduce_raw(&v, detail::scalar_type::i64, op);
    return static_cast<T>(v);
  } else {
    std::uint64_t v = value;
    allreduce_raw(&v, detail::scalar_type::u64, op);
    return static_cast<T>(v);
  }
}

template <class Step>
void context::wait_until(Step&& step, std::string_view what) {
  detail::backoff pause;
  auto last_progress = std::chrono::steady_clock::now();
  for (;;) {
    switch (step()) {
      case detail::step_result::done: return;
      case detail::step_result::progressed:
        pause.reset();
        if (options_.watchdog.count() > 0) last_progress = std::chrono::steady_clock::now();
        break;
      case detail::step_result::idle:
        if (net_->aborted()) throw detail::job_aborted();
        pause.idle();
        if (options_.watchdog.count() > 0 && pause.sleeping()) {
          const auto idle = std::chrono::steady_clock::now() - last_progress;
          if (idle >= options_.watchdog) watchdog_expired(what, idle);
        }
        break;
    }
  }
}

}  // namespace transit

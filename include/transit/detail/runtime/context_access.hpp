#pragma once
// For transit's own layers (streamer, exchange, one-sided, benchmarks), not for users: the
// transport, channels, the waiting loop and job-ending behind a context.
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/function_ref.hpp"
#include "transit/runtime/context.hpp"
#include "transit/detail/transport/mailbox.hpp"
#include "transit/detail/transport/transport.hpp"

namespace transit::detail {

/// Thrown on a PE's thread when another PE failed, to unwind it; run() does not report it.
struct job_aborted : std::exception {
  const char* what() const noexcept override { return "the job was aborted by another PE's failure"; }
};

/// What a waiting loop's step reports.
enum class step_result { done, progressed, idle };

class context_access {
 public:
  /// Collective (creates the context's collective group). For transit::run.
  static std::unique_ptr<context> make(std::unique_ptr<transport> net, std::shared_ptr<const transit::machine> m,
                                       std::shared_ptr<const topology_manager> topology, run_options options);

  static transport& net(context& c) noexcept;
  /// For questions of what the transport can do (transport::process, mpi, ...).
  static const transport& net(const context& c) noexcept;
  static mailbox& mail(context& c) noexcept;
  /// The context's whole state (complete inside the library only: src/runtime/context_state.hpp).
  static context_state& state(context& c) noexcept { return *c.state_; }
  static const context_state& state(const context& c) noexcept { return *c.state_; }

  /// Repeats `step` until it returns done, backing off (and yielding the core) while it reports
  /// idle. Throws job_aborted when another PE failed; with the watchdog on, a PE idle for that
  /// long reports `what` and every registered diagnostic, then ends the job.
  template <class Step>
  static void wait_until(context& c, Step&& step, std::string_view what) {
    wait_loop(c, function_ref<step_result()>(step), what);
  }

  /// Waits until the collective started on `group` completes, keeping the transport moving
  /// meanwhile (arrivals wait in the mailbox for their endpoints).
  static void finish_collective(context& c, collective_group& group, std::string_view what);

  /// Registers `poll` (non-blocking; returns whether it did anything) to run in every waiting
  /// loop of this PE (wait_until, so collectives and every layer's waits), for endpoints that must
  /// serve peers whenever the PE is inside transit (one-sided polling mode). Not re-entrant: a
  /// wait inside a hook runs no hooks. Returns an id for remove_progress_hook.
  static int add_progress_hook(context& c, std::function<bool()> poll);
  static void remove_progress_hook(context& c, int id);
  /// Runs every progress hook once, outside a waiting loop (a one-sided PE that applies its
  /// operations itself must still serve its peers); false inside a hook. Returns whether any hook
  /// did something.
  static bool run_progress_hooks(context& c);

  /// Registers a description of some endpoint's state for watchdog reports; returns an id.
  static int add_diagnostic(context& c, std::function<std::string()> describe);
  static void remove_diagnostic(context& c, int id);

  /// Ends the whole job from a place that cannot throw (a destructor): prints
  /// "transit: PE <r>: <why>" and aborts (mpi), or records the failure and unwinds the other PEs
  /// at their next transit call (local; run then returns 1). Returns on the local backend.
  static void end_job(context& c, const std::string& why);

 private:
  static void wait_loop(context& c, function_ref<step_result()> step, std::string_view what);
  [[noreturn]] static void watchdog_expired(context& c, std::string_view what,
                                            steady_clock::duration idle);
};

}  // namespace transit::detail

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

#include "transit/core/backoff.hpp"
#include "transit/core/clock.hpp"
#include "transit/runtime/context.hpp"
#include "transit/transport/mailbox.hpp"
#include "transit/transport/transport.hpp"

namespace transit::detail {

/// Thrown on a PE's thread when another PE failed, to unwind it; run() does not report it.
struct job_aborted : std::exception {
  const char* what() const noexcept override { return "the job was aborted by another PE's failure"; }
};

/// What a waiting loop's step reports.
enum class step_result { done, progressed, idle };

/// Everything a context holds besides rank and size.
struct context_state {
  context_state(std::unique_ptr<transport> t, std::shared_ptr<const transit::machine> m,
                std::shared_ptr<const topology_manager> topo, run_options o)
      : net(std::move(t)),
        mail(*net),
        machine(std::move(m)),
        topology(std::move(topo)),
        options(std::move(o)),
        group(net->make_group()) {
    mail.on_late_arrival([this](std::uint32_t channel, int source) {
      // While an exception unwinds this PE, its endpoints close one after another and may see
      // messages for those closed before: the job is failing already, and that failure is the
      // one to report.
      if (std::uncaught_exceptions() > 0) return;
      net->end_job(late_arrival_message(channel, source));
    });
  }
  static std::string late_arrival_message(std::uint32_t channel, int source);

  std::unique_ptr<transport> net;
  mailbox mail;
  std::shared_ptr<const transit::machine> machine;
  std::shared_ptr<const topology_manager> topology;
  run_options options;
  std::unique_ptr<collective_group> group;  // for context::barrier and allreduce
  std::vector<std::pair<int, std::function<std::string()>>> diagnostics;
  int next_diagnostic = 0;
  std::vector<std::pair<int, std::function<bool()>>> progress_hooks;
  int next_progress_hook = 0;
  bool running_progress_hooks = false;
#ifdef TRANSIT_SIMGRID
  // What this PE waits in while blocked in the transport: SimGrid's deadlock report names it.
  std::string_view blocked_in;
#endif
};

class context_access {
 public:
  /// Collective (creates the context's collective group). For transit::run.
  static std::unique_ptr<context> make(std::unique_ptr<transport> net, std::shared_ptr<const transit::machine> m,
                                       std::shared_ptr<const topology_manager> topology, run_options options);

  static transport& net(context& c) noexcept { return *c.state_->net; }
  static const context_state& state(const context& c) noexcept { return *c.state_; }
  static mailbox& mail(context& c) noexcept { return c.state_->mail; }

  /// Repeats `step` until it returns done, backing off (and yielding the core) while it reports
  /// idle. Throws job_aborted when another PE failed; with the watchdog on, a PE idle for that
  /// long reports `what` and every registered diagnostic, then ends the job.
  template <class Step>
  static void wait_until(context& c, Step&& step, std::string_view what);

  /// Waits until the collective started on `group` completes, keeping the transport moving
  /// meanwhile (arrivals wait in the mailbox for their endpoints).
  static void finish_collective(context& c, collective_group& group, std::string_view what);

  /// Registers `poll` (non-blocking; returns whether it did anything) to run in every waiting
  /// loop of this PE (wait_until, so collectives and every layer's waits), for endpoints that must
  /// serve peers whenever the PE is inside transit (one-sided polling mode). Not re-entrant: a
  /// wait inside a hook runs no hooks. Returns an id for remove_progress_hook.
  static int add_progress_hook(context& c, std::function<bool()> poll);
  static void remove_progress_hook(context& c, int id);

  /// Registers a description of some endpoint's state for watchdog reports; returns an id.
  static int add_diagnostic(context& c, std::function<std::string()> describe);
  static void remove_diagnostic(context& c, int id);

  /// Ends the whole job from a place that cannot throw (a destructor): prints
  /// "transit: PE <r>: <why>" and aborts (mpi), or records the failure and unwinds the other PEs
  /// at their next transit call (local; run then returns 1). Returns on the local backend.
  static void end_job(context& c, const std::string& why);

 private:
  [[noreturn]] static void watchdog_expired(context& c, std::string_view what,
                                            steady_clock::duration idle);
  static bool run_progress_hooks(context& c);
};

template <class Step>
void context_access::wait_until(context& c, Step&& step, std::string_view what) {
  backoff pause;
  const auto watchdog = c.state_->options.watchdog;
  auto last_progress = steady_clock::now();
  auto& hooks = c.state_->progress_hooks;
  for (;;) {
    const bool hooks_progressed = !hooks.empty() && run_progress_hooks(c);
    const step_result result = step();
    switch (hooks_progressed && result == step_result::idle ? step_result::progressed : result) {
      case step_result::done: return;
      case step_result::progressed:
        pause.reset();
        if (watchdog.count() > 0) last_progress = steady_clock::now();
        break;
      case step_result::idle:
        if (c.state_->net->aborted()) throw job_aborted();
        // A transport that can block waits for the network itself (a simulated rank: one
        // simulator call per wait, not one per poll). Not with the watchdog on: it must be able
        // to read the clock while nothing arrives.
#ifdef TRANSIT_SIMGRID
        c.state_->blocked_in = what;
#endif
        if (watchdog.count() == 0 && c.state_->net->wait_for_activity()) break;
        // One question per idle round, not per item: a PE whose own sends are pending yields
        // but never naps (backoff.hpp: an mpi rendezvous moves only while both sides poll).
        pause.idle(c.state_->net->pending_sends() > 0,
                   [&c](std::chrono::nanoseconds nap) { c.state_->net->nap(nap); });
        if (watchdog.count() > 0 && pause.past_spinning()) {
          const auto idle = steady_clock::now() - last_progress;
          if (idle >= watchdog) watchdog_expired(c, what, idle);
        }
        break;
    }
  }
}

}  // namespace transit::detail

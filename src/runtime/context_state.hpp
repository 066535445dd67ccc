#pragma once
// Everything a context holds besides rank and size: private to the library (context.hpp names it
// only), so that its members can change without touching a public header.
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/recorder.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transit/detail/transport/mailbox.hpp"
#include "transit/detail/transport/transport.hpp"
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"

namespace transit::detail {

struct context_state {
  context_state(std::unique_ptr<transport> t, std::shared_ptr<const transit::machine> m,
                std::shared_ptr<const topology_manager> topo, run_options o)
      : timeline(make_recorder(*t, o)),
        net(std::move(t)),
        mail(*net),
        machine(std::move(m)),
        topology(std::move(topo)),
        options(std::move(o)),
        group(net->make_group()),
        naps(may_nap(*machine, options, net->rank())) {
    mail.space_pumps(pump_spacing(*machine, options, *net));
    mail.on_late_arrival([this](std::uint32_t channel, int source) {
      // While an exception unwinds this PE, its endpoints close one after another and may see
      // messages for those closed before: the job is failing already, and that failure is the
      // one to report.
      if (std::uncaught_exceptions() > 0) return;
      net->end_job(late_arrival_message(channel, source));
    });
  }
  static std::string late_arrival_message(std::uint32_t channel, int source);
  /// The PE's timeline trace when options.trace names a directory, attached to `net`; else null.
  static std::unique_ptr<trace::recorder> make_recorder(transport& net, const run_options& options);
  /// Whether an idle wait of this PE may sleep (backoff.hpp): only when its node may hold more PEs
  /// than the host has CPUs, or when the node is emulated (its PEs share the host with others).
  static bool may_nap(const transit::machine& m, const run_options& options, int rank);
  /// Whether the node of PE `rank` holds more PEs than this host has CPUs online.
  static bool more_pes_than_cpus(const transit::machine& m, int rank);
  /// How far apart a PE with work of its own polls the network (mailbox::pump_due): 0 (every
  /// time) unless this host really runs more PEs than it has CPUs and the transport's idle poll
  /// may yield the core.
  static std::chrono::nanoseconds pump_spacing(const transit::machine& m, const run_options& options,
                                               const transport& net);
  static constexpr std::chrono::microseconds oversubscribed_pump_spacing{100};

  std::unique_ptr<trace::recorder> timeline;  // first: it outlives the transport that records into it
  std::unique_ptr<transport> net;
  mailbox mail;
  std::shared_ptr<const transit::machine> machine;
  std::shared_ptr<const topology_manager> topology;
  run_options options;
  std::unique_ptr<collective_group> group;  // for context::barrier and allreduce
  // An idle wait may sleep (may_nap). When not, it yields instead: with a CPU per PE nothing waits
  // for the core, and a nap only delays the reply it waits for (a collective's round trip of a few
  // microseconds took 2 ms with naps: two PEs napping in turn).
  const bool naps;
  std::vector<std::pair<int, std::function<std::string()>>> diagnostics;
  int next_diagnostic = 0;
  std::vector<std::pair<int, std::function<bool()>>> progress_hooks;
  int next_progress_hook = 0;
  bool running_progress_hooks = false;
  bool watchdog_fired = false;  // the trace was written then (the file says which write it is)
  // What this PE waits in while blocked in the transport: a simulation's deadlock report names it
  // (set in simulation builds only).
  std::string_view blocked_in;
};

}  // namespace transit::detail

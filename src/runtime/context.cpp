#include "transit/runtime/context.hpp"

#include <algorithm>
#include <cstdio>

#include "transit/core/error.hpp"

namespace transit {

context::context(std::unique_ptr<detail::transport> net, std::shared_ptr<const transit::machine> m,
                 std::shared_ptr<const topology_manager> topology, run_options options)
    : net_(std::move(net)),
      mailbox_(*net_),
      machine_(std::move(m)),
      topology_(std::move(topology)),
      options_(std::move(options)),
      rank_(net_->rank()),
      size_(net_->size()),
      group_(net_->make_group()) {}

context::~context() {
  if (mailbox_.dropped_after_close() > 0)
    std::fprintf(stderr, "transit: PE %d: %zu messages arrived for endpoints already destroyed (they are lost)\n",
                 rank_, mailbox_.dropped_after_close());
}

// While waiting in a collective, keep the transport moving: a peer may be blocked until this PE
// receives its messages (MPI flow control), and it may need to send them before it can join.
// What arrives waits in the mailbox for its endpoint.
void context::finish_collective(detail::collective_group& group, std::string_view what) {
  wait_until(
      [&] {
        mailbox_.pump();
        return group.test() ? detail::step_result::done : detail::step_result::idle;
      },
      what);
}

void context::barrier() {
  group_->start_barrier();
  finish_collective(*group_, "barrier");
}

void context::allreduce_raw(void* values, detail::scalar_type type, reduce_op op) {
  group_->start_allreduce(values, 1, type, op);
  finish_collective(*group_, "allreduce");
}

int context::add_diagnostic(std::function<std::string()> describe) {
  diagnostics_.emplace_back(next_diagnostic_, std::move(describe));
  return next_diagnostic_++;
}

void context::remove_diagnostic(int id) {
  std::erase_if(diagnostics_, [id](const auto& d) { return d.first == id; });
}

void context::watchdog_expired(std::string_view what, std::chrono::steady_clock::duration idle) {
  const double seconds = std::chrono::duration<double>(idle).count();
  std::string report = detail::concat("watchdog: no progress for ", seconds, " s while in ", what);
  for (const auto& [id, describe] : diagnostics_) report += "\n  " + describe();
  throw std::runtime_error(report);
}

}  // namespace transit

#include "transit/runtime/context.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>
#include <cstdio>
#include <stdexcept>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "core/backoff.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "context_state.hpp"
#include "core/simulation.hpp"

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace transit {

namespace {

// A simulated job whose PEs all block in the transport with nothing left to happen is a deadlock
// that no watchdog can see (simulated time stops). SimGrid finds it, prints one line and ends the
// simulation with status 0; transit first reports what every PE waits in, as the watchdog would,
// and makes the job fail. The contexts of this process (all ranks share it without privatization).
std::vector<const context*>& live_contexts() {
  static std::vector<const context*> contexts;
  return contexts;
}

void report_deadlock() {
  std::string report;
  auto contexts = live_contexts();
  std::sort(contexts.begin(), contexts.end(), [](const context* a, const context* b) { return a->rank() < b->rank(); });
  for (const context* c : contexts) {
    const auto& state = detail::context_access::state(*c);
    report += detail::concat("transit: PE ", c->rank(), ": deadlock at simulated time ",
                             detail::simulation::simulated_seconds(), " s: every PE is blocked; this one in ",
                             state.blocked_in.empty() ? std::string_view("its program") : state.blocked_in, "\n");
    for (const auto& [id, describe] : state.diagnostics) report += "  " + describe() + "\n";
  }
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace

context::context(detail::context_state* state)
    : state_(state), rank_(state_->net->rank()), size_(state_->net->size()) {
  if constexpr (detail::simulated_build) {
    detail::simulation::on_deadlock(report_deadlock);
    live_contexts().push_back(this);
  }
}

context::~context() {
  if constexpr (detail::simulated_build) std::erase(live_contexts(), this);
  if (state_->timeline) state_->timeline->write(state_->watchdog_fired ? "end, after the watchdog fired" : "end");
  if (state_->mail.dropped_after_close() > 0)
    std::fprintf(stderr, "transit: PE %d: %zu messages arrived for endpoints already destroyed (they are lost)\n",
                 rank_, state_->mail.dropped_after_close());
  delete state_;
}

const transit::machine& context::machine() const noexcept { return *state_->machine; }
const topology_manager& context::topology() const noexcept { return *state_->topology; }
std::string_view context::backend() const noexcept { return state_->net->backend(); }
const run_options& context::options() const noexcept { return state_->options; }

void context::barrier() {
  state_->group->start_barrier();
  detail::context_access::finish_collective(*this, *state_->group, "barrier");
}

void context::check_same_count(std::size_t count) {
  // Checked before reducing, so that a mismatch is an error on every PE instead of a reduction of
  // unrelated memory.
  std::int64_t counts[2] = {static_cast<std::int64_t>(count), -static_cast<std::int64_t>(count)};
  state_->group->start_allreduce(counts, 2, detail::scalar_type::i64, reduce_op::max);
  detail::context_access::finish_collective(*this, *state_->group, "allreduce");
  if (counts[0] != -counts[1])
    throw std::invalid_argument(detail::concat("context::allreduce: PEs passed from ", -counts[1], " to ", counts[0],
                                               " values, expected the same count on every PE"));
}

void context::allreduce_raw(void* values, std::size_t count, detail::scalar_type type, reduce_op op) {
  // The transports count values in int: long arrays go in pieces.
  constexpr std::size_t piece = std::size_t{1} << 24;
  auto* bytes = static_cast<std::byte*>(values);
  std::size_t done = 0;
  do {
    const std::size_t n = std::min(piece, count - done);
    state_->group->start_allreduce(bytes + done * 8, static_cast<int>(n), type, op);
    detail::context_access::finish_collective(*this, *state_->group, "allreduce");
    done += n;
  } while (done < count);
}

// Gathers and broadcasts are sums of 64-bit words in which only one PE's words are not zero: exact
// for any bytes, on every transport's allreduce, with no collective of their own to add to the seam.
void context::allgather_raw(const void* value, std::size_t bytes, void* all) {
  const std::size_t words = (bytes + 7) / 8;
  std::vector<std::uint64_t> slots(words * static_cast<std::size_t>(size_), 0);
  std::memcpy(slots.data() + words * static_cast<std::size_t>(rank_), value, bytes);
  allreduce_raw(slots.data(), slots.size(), detail::scalar_type::u64, reduce_op::sum);
  auto* out = static_cast<std::byte*>(all);
  for (std::size_t pe = 0; pe < static_cast<std::size_t>(size_); ++pe)
    std::memcpy(out + pe * bytes, slots.data() + pe * words, bytes);
}

void context::broadcast_raw(void* value, std::size_t bytes, int root) {
  if (root < 0 || root >= size_)
    throw std::out_of_range(detail::concat("context::broadcast: root: got ", root, ", expected a PE in [0, ", size_, ")"));
  std::vector<std::uint64_t> words((bytes + 7) / 8, 0);
  if (rank_ == root) std::memcpy(words.data(), value, bytes);
  allreduce_raw(words.data(), words.size(), detail::scalar_type::u64, reduce_op::sum);
  std::memcpy(value, words.data(), bytes);
}

namespace detail {

std::string context_state::late_arrival_message(std::uint32_t channel, int source) {
  return concat("a message from PE ", source, " arrived for endpoint #", channel,
                " (a streamer or other endpoint) after this PE destroyed it: the peer still used it, and "
                "what it sent is lost; endpoints are destroyed collectively, after their last step ended "
                "on every PE");
}

bool context_state::may_nap(const transit::machine& m, const run_options& options, int rank) {
  // A simulated PE has a core of its own, and its naps pass simulated time only (backoff.hpp).
  if constexpr (simulated_build) return true;
  // An emulated node (--transit-pes-per-node) says nothing of how many PEs share the host.
  if (options.pes_per_node > 0) return true;
  return more_pes_than_cpus(m, rank);
}

bool context_state::more_pes_than_cpus(const transit::machine& m, int rank) {
  const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  return m.pes_on_node(m.node_of(rank)) > cpus;
}

// A PE that polls MPI between inserts, on a host with more PEs than cores, hands its core away at
// each poll that finds nothing (Open MPI's yield when idle, which mpirun turns on there): 4 ranks
// on 2 cores switched context 340,000 times a second, and the switches took more of a rank's time
// than its inserts. Polls at least 100 us apart cut the switches 3x and ran the histogram 1.35-1.6x
// faster at 4 and 8 ranks (BENCHMARKS.md, issue 53); 20 us gained less, 300 us no more. Waits still
// poll every round: they have nothing else to do.
std::chrono::nanoseconds context_state::pump_spacing(const transit::machine& m, const run_options& options,
                                                     const transport& net) {
  if constexpr (simulated_build) return {};  // a simulated PE has a core of its own
  if (options.pes_per_node > 0 || !net.idle_poll_may_yield() || !more_pes_than_cpus(m, net.rank())) return {};
  return oversubscribed_pump_spacing;
}

std::unique_ptr<trace::recorder> context_state::make_recorder(transport& net, const run_options& options) {
  if (options.trace.empty()) return nullptr;
  // pid: the process (the MPI rank; the local backend's PEs are threads of one), tid: the PE.
  const int process = net.process();
  auto recorder = std::make_unique<trace::recorder>(
      options.trace, net.rank(), net.size(), process,
      net.threads_of_one_process() ? std::string("local PEs") : "rank " + std::to_string(process),
      std::string(net.backend()), options.trace_events);
  net.set_tracer(recorder.get());
  return recorder;
}

std::unique_ptr<context> context_access::make(std::unique_ptr<transport> net, std::shared_ptr<const transit::machine> m,
                                              std::shared_ptr<const topology_manager> topology, run_options options) {
  auto state = std::make_unique<context_state>(std::move(net), std::move(m), std::move(topology), std::move(options));
  auto made = std::unique_ptr<context>(new context(state.get()));
  state.release();  // the context owns it now
  return made;
}

// While waiting in a collective, keep the transport moving: a peer may be blocked until this PE
// receives its messages (MPI flow control), and it may need to send them before it can join.
// What arrives waits in the mailbox for its endpoint.
void context_access::finish_collective(context& c, collective_group& group, std::string_view what) {
  wait_until(
      c,
      [&] {
        c.state_->mail.pump();
        return group.test() ? step_result::done : step_result::idle;
      },
      what);
}

int context_access::add_progress_hook(context& c, std::function<bool()> poll) {
  auto& s = *c.state_;
  s.progress_hooks.emplace_back(s.next_progress_hook, std::move(poll));
  return s.next_progress_hook++;
}

void context_access::remove_progress_hook(context& c, int id) {
  TRANSIT_ASSERT(!c.state_->running_progress_hooks, "a progress hook must not remove hooks");
  std::erase_if(c.state_->progress_hooks, [id](const auto& h) { return h.first == id; });
}

bool context_access::run_progress_hooks(context& c) {
  auto& s = *c.state_;
  if (s.running_progress_hooks) return false;  // a wait inside a hook: the outer loop polls
  s.running_progress_hooks = true;
  bool progressed = false;
  try {
    for (std::size_t i = 0; i < s.progress_hooks.size(); ++i) progressed |= s.progress_hooks[i].second();
  } catch (...) {
    s.running_progress_hooks = false;
    throw;
  }
  s.running_progress_hooks = false;
  return progressed;
}

int context_access::add_diagnostic(context& c, std::function<std::string()> describe) {
  auto& s = *c.state_;
  s.diagnostics.emplace_back(s.next_diagnostic, std::move(describe));
  return s.next_diagnostic++;
}

void context_access::remove_diagnostic(context& c, int id) {
  std::erase_if(c.state_->diagnostics, [id](const auto& d) { return d.first == id; });
}

void context_access::end_job(context& c, const std::string& why) { c.state_->net->end_job(why); }

transport& context_access::net(context& c) noexcept { return *c.state_->net; }
const transport& context_access::net(const context& c) noexcept { return *c.state_->net; }
mailbox& context_access::mail(context& c) noexcept { return c.state_->mail; }

namespace {

// The timeline trace's view of one wait: a slice named by what is waited for, and inside it the
// idle spans (polls that found nothing, yields and naps) longer than a microsecond. Does nothing
// when tracing is off (a null recorder): one branch per wait and per idle round.
class traced_wait {
 public:
  traced_wait(trace::recorder* t, std::string_view what)
      : trace_(t), what_(what), start_(t != nullptr ? trace::recorder::now() : 0) {}
  traced_wait(const traced_wait&) = delete;
  traced_wait& operator=(const traced_wait&) = delete;
  ~traced_wait() { close(); }
  /// Records the wait so far (before the watchdog writes the file); nothing more afterwards.
  void close() noexcept {
    if (trace_ == nullptr) return;
    try {
      progressed();
      trace_->slice(trace_->label(what_), start_, trace::recorder::now());
    } catch (...) {  // a simulated clock read while SimGrid ends this rank: the wait goes unrecorded
    }
    trace_ = nullptr;
  }
  bool on() const noexcept { return trace_ != nullptr; }
  void idle_round() {
    const std::int64_t now = trace::recorder::now();
    if (idle_since_ < 0) idle_since_ = now;
    idle_until_ = now;
  }
  void napped(std::int64_t ns) noexcept { napped_ += static_cast<std::uint64_t>(ns); }
  void progressed() {
    if (idle_since_ < 0) return;
    if (idle_until_ - idle_since_ >= 1000) {
      if (idle_label_ == 0) idle_label_ = trace_->label("idle", "napped ns");
      trace_->slice(idle_label_, idle_since_, idle_until_, napped_);
    }
    idle_since_ = -1;
    napped_ = 0;
  }

 private:
  trace::recorder* trace_;
  std::string_view what_;
  std::int64_t start_;
  std::int64_t idle_since_ = -1, idle_until_ = 0;
  std::uint64_t napped_ = 0;
  std::uint32_t idle_label_ = 0;
};

}  // namespace

void context_access::wait_loop(context& c, function_ref<step_result()> step, std::string_view what) {
  traced_wait traced(c.state_->timeline.get(), what);
  backoff pause;
  const auto watchdog = c.state_->options.watchdog;
  // Read only for the watchdog: a clock read per wait was 2% of a near-empty step's end.
  auto last_progress = watchdog.count() > 0 ? steady_clock::now() : steady_clock::time_point{};
  auto& hooks = c.state_->progress_hooks;
  for (;;) {
    // A message that this round's step pumped into another endpoint's queue (a progress hook's,
    // whose turn came before the step) is not idleness: the next round's hooks take it. Without
    // this, a simulated rank blocks in wait_for_activity with that message queued, and waits
    // forever for one that will never come.
    const std::uint64_t queued_before = c.state_->mail.queued();
    const bool hooks_progressed = !hooks.empty() && run_progress_hooks(c);
    const step_result result = step();
    const bool queued_for_hooks = !hooks.empty() && c.state_->mail.queued() != queued_before;
    switch ((hooks_progressed || queued_for_hooks) && result == step_result::idle ? step_result::progressed : result) {
      case step_result::done: return;
      case step_result::progressed:
        if (traced.on()) [[unlikely]] traced.progressed();
        pause.reset();
        if (watchdog.count() > 0) last_progress = steady_clock::now();
        break;
      case step_result::idle:
        if (c.state_->net->aborted()) throw job_aborted();
        // A transport that can block waits for the network itself (a simulated rank: one
        // simulator call per wait, not one per poll). Not with the watchdog on: it must be able
        // to read the clock while nothing arrives.
        if constexpr (simulated_build) c.state_->blocked_in = what;
        if (watchdog.count() == 0 && c.state_->net->wait_for_activity()) break;
        // One question per idle round, not per item: a PE whose own sends are pending yields
        // but never naps (backoff.hpp: an mpi rendezvous moves only while both sides poll).
        pause.idle(!c.state_->naps || c.state_->net->pending_sends() > 0, [&c, &traced](std::chrono::nanoseconds nap) {
          if (!traced.on()) return c.state_->net->nap(nap);
          const std::int64_t start = trace::recorder::now();
          c.state_->net->nap(nap);
          traced.napped(trace::recorder::now() - start);
        });
        if (traced.on()) [[unlikely]] traced.idle_round();
        if (watchdog.count() > 0 && pause.past_spinning()) {
          const auto idle = steady_clock::now() - last_progress;
          if (idle >= watchdog) {
            traced.close();
            watchdog_expired(c, what, idle);
          }
        }
        break;
    }
  }
}


void context_access::watchdog_expired(context& c, std::string_view what, steady_clock::duration idle) {
  const double seconds = std::chrono::duration<double>(idle).count();
  std::string report = concat("watchdog: no progress for ", seconds, " s while in ", what);
  for (const auto& [id, describe] : c.state_->diagnostics) report += "\n  " + describe();
  // The timeline up to here is what shows how the PE got stuck; on the mpi backend the job may
  // end without this context's destructor.
  if (c.state_->timeline) {
    c.state_->watchdog_fired = true;
    c.state_->timeline->write("watchdog");
  }
  throw std::runtime_error(report);
}

}  // namespace detail
}  // namespace transit

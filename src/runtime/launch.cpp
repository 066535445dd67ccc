// The runtime's launch (src/runtime/launch.hpp): contexts over the transports a backend's launch
// opens, and the PE threads that run a body on them.
#include "runtime/launch.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/simulation.hpp"
#include "profile/transport_settings.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transit/topology/topology_manager.hpp"

namespace transit::detail {

namespace {

// The option already holds TRANSIT_PHYSICAL when only the environment set it. A simulated job's
// ranks share one topology of one machine (core/simulation.hpp).
std::shared_ptr<const topology_manager> job_topology(const std::shared_ptr<const machine>& m, const run_options& o) {
  const auto make = [&] {
    std::optional<physical_topology> physical;
    if (!o.physical.empty()) physical = physical_topology::parse(o.physical);
    return std::make_shared<const topology_manager>(topology_manager::for_job(*m, physical));
  };
  if (simulation::ranks_share_process)
    return simulation::shared_by_ranks<topology_manager>(std::pair{reinterpret_cast<std::uintptr_t>(m.get()), o.physical},
                                                         std::function<std::shared_ptr<const topology_manager>()>(make));
  return make();
}

// One run of this process's PEs, each with its own context over the transports the backend opened;
// returns when all have returned. A lone PE runs on the calling thread; several run on threads of
// their own while the calling thread drives the transports (a communication thread) or waits. The
// first failure is the job's (later ones are its consequences), when the backend's end_job returns.
struct pe_threads_result {
  std::optional<std::pair<int, std::string>> failure;  // (local PE, what): reported by transit::run
  std::exception_ptr error;                             // what that PE threw: rethrown by a session
};

pe_threads_result run_pe_threads(process_launch& process, const run_options& options,
                                 const std::shared_ptr<const machine>& m,
                                 const std::shared_ptr<const topology_manager>& topology,
                                 const std::function<void(context&)>& body) {
  const int pes = process.local_pes();
  const auto transports = process.open_transports();
  std::mutex mutex;
  std::condition_variable finished_cv;
  int finished = 0;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(pes));

  auto pe_main = [&](int pe) {
    try {
      auto ctx = context_access::make(transports->make(pe), m, topology, options);
      body(*ctx);
      ctx->barrier();  // no PE tears down its transport while a peer may still be sending to it
    } catch (const job_aborted&) {
      // Unwound because another PE failed; that PE reports.
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(pe)] = std::current_exception();
      transports->end_job(pe, e.what());
    } catch (...) {
      errors[static_cast<std::size_t>(pe)] = std::current_exception();
      transports->end_job(pe, "unknown exception");
    }
    std::lock_guard lock(mutex);
    ++finished;
    finished_cv.notify_all();
  };

  const bool driven = transports->has_driver();
  if (pes == 1 && !driven) {
    pe_main(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(pes));
    try {
      for (int pe = 0; pe < pes; ++pe) threads.emplace_back(pe_main, pe);
    } catch (const std::system_error& e) {
      // The system refused a thread: the PEs that started wait for the others in their first
      // collective; the job's end unwinds them, and the count is refused as a usage error.
      const auto started = threads.size();
      const std::string refusal = concat(process.pe_count_option(), ": got '", pes,
                                         "', expected a PE count this system can start: thread ", started + 1,
                                         " could not be created (", e.code().message(), ")");
      transports->end_job(static_cast<int>(started), refusal);
      for (auto& t : threads) t.join();
      throw std::invalid_argument(refusal);
    }
    if (driven) transports->run_driver();
    {
      std::unique_lock lock(mutex);
      const auto done = [&] { return finished == pes || transports->aborted(); };
      if (!finished_cv.wait_for(lock, std::chrono::seconds(1), done)) process.after_a_second();
      finished_cv.wait(lock, done);
      if (transports->aborted()) {
        // PEs inside transit calls unwind at once; give ones busy in user code a grace period.
        if (!finished_cv.wait_for(lock, std::chrono::seconds(10), [&] { return finished == pes; })) {
          const auto failure = transports->first_failure();
          report_failure(process.first_pe() + failure->first, failure->second.c_str());
          std::fprintf(stderr, "transit: %d PEs did not stop within 10 s of the failure; exiting\n", pes - finished);
          std::fflush(stderr);
          std::_Exit(1);
        }
      }
    }
    for (auto& t : threads) t.join();
  }
  transports->close();
  pe_threads_result result{transports->first_failure(), nullptr};
  if (result.failure) result.error = errors[static_cast<std::size_t>(result.failure->first)];
  return result;
}

}  // namespace

launch_request launch_request_of(const run_options& options) {
  launch_request request;
  request.pes = options.pes;
  request.pes_per_node = options.pes_per_node;
  request.threads_per_rank = options.threads_per_rank;
  request.comm_thread = runs_comm_thread(options);
  request.thread_multiple = options.mpi_thread_multiple;
  request.trace_dir = options.trace;
  request.trace_events = options.trace_events;
  request.profile_single_copy = single_copy_from_profile;
  return request;
}

session_launch::session_launch(std::unique_ptr<process_launch> process, const run_options& options)
    : process_(std::move(process)),
      options_(options),
      machine_(process_->job_machine()),
      topology_(job_topology(machine_, options)) {
  if (process_->local_pes() == 1) {
    transports_ = process_->open_transports();
    context_ = context_access::make(transports_->make(0), machine_, topology_, options_);
  }
}

session_launch::~session_launch() {
  try {
    close();
  } catch (const std::exception& e) {
    report_failure(process_->first_pe(), e.what());
  }
}

void session_launch::run(const std::function<void(context&)>& body) {
  if (closed_) throw std::logic_error("transit::session::run: the session is closed");
  if (context_) {
    body(*context_);
    throw_recorded_failure(*transports_);
    return;
  }
  const pe_threads_result result = run_pe_threads(*process_, options_, machine_, topology_, body);
  if (result.error) std::rethrow_exception(result.error);
  // A PE that ended the job without throwing (a streamer destroyed mid-step, in its destructor):
  // transit::run reports it; a session's caller has only what run() throws.
  if (result.failure)
    throw std::logic_error(concat("PE ", process_->first_pe() + result.failure->first, ": ", result.failure->second));
}

void session_launch::close() {
  if (closed_) return;
  closed_ = true;
  if (!context_) return;
  // No PE tears down its transport while a peer may still be sending to it; a job already ended
  // has no peer left to wait for.
  if (!transports_->aborted()) context_->barrier();
  context_.reset();
  const std::unique_ptr<process_transports> ended = std::move(transports_);
  ended->close();
  throw_recorded_failure(*ended);  // the job ended (a destructor, say) since the last run()
}

// One PE: what ended its job since it was last said (its context's destructors end it without
// throwing), thrown once; the job stays ended, so later calls that wait throw job_aborted.
void session_launch::throw_recorded_failure(const process_transports& transports) {
  if (failure_said_) return;
  const auto failure = transports.first_failure();
  if (!failure) return;
  failure_said_ = true;
  throw std::logic_error(failure->second);
}

int run_job(const run_options& options, const std::function<void(context&)>& body) {
  return backend_named(options.backend)
      .run_program(launch_request_of(options), [&](process_launch& process) {
        const auto m = process.job_machine();
        const pe_threads_result result = run_pe_threads(process, options, m, job_topology(m, options), body);
        if (!result.failure) return 0;
        report_failure(process.first_pe() + result.failure->first, result.failure->second.c_str());
        return 1;
      });
}

}  // namespace transit::detail

// The local backend's launch: every PE a thread of this process, each with its context over the
// transport the backend makes for it (transport/local_transports.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "runtime/launch/common.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transport/local_transports.hpp"

namespace transit::detail {

namespace {

// More PEs than hardware threads run, time-sharing the cores: what developing a 64-PE program
// on a laptop needs. Said once per process (a test binary starts many jobs), on stderr.
void warn_if_oversubscribed(int pes) {
  static std::atomic<bool> warned{false};
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (static_cast<unsigned>(pes) <= threads || warned.exchange(true)) return;
  std::fprintf(stderr,
               "transit: warning: %d PEs on %u hardware threads: the local backend runs them all, sharing the "
               "cores, so it will be slower than with at most %u PEs\n",
               pes, threads, threads);
  std::fflush(stderr);
}

// A job's PEs as threads of this process, each with its own context on the job's transports; returns
// when all have returned. The first failure is the job's (later ones are its consequences).
struct pe_threads_result {
  std::optional<std::pair<int, std::string>> failure;  // (PE, what): reported by transit::run
  std::exception_ptr error;                             // what that PE threw: rethrown by a session
};

pe_threads_result run_pe_threads(int pes, const run_options& options, const std::shared_ptr<const machine>& m,
                                 const std::shared_ptr<const topology_manager>& topology,
                                 const std::function<void(context&)>& body) {
  const auto job = make_local_transports(pes);
  std::mutex mutex;
  std::condition_variable finished_cv;
  int finished = 0;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(pes));

  auto pe_main = [&](int rank) {
    try {
      auto ctx = context_access::make(job->make(rank), m, topology, options);
      body(*ctx);
    } catch (const job_aborted&) {
      // Unwound because another PE failed; that PE reports.
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(rank)] = std::current_exception();
      job->end_job(rank, e.what());
    } catch (...) {
      errors[static_cast<std::size_t>(rank)] = std::current_exception();
      job->end_job(rank, "unknown exception");
    }
    std::lock_guard lock(mutex);
    ++finished;
    finished_cv.notify_all();
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(pes));
  try {
    for (int rank = 0; rank < pes; ++rank) threads.emplace_back(pe_main, rank);
  } catch (const std::system_error& e) {
    // The system refused a thread: the PEs that started wait for the others in their first
    // collective; the abort unwinds them, and the count is refused as a usage error.
    const auto started = threads.size();
    job->end_job(static_cast<int>(started), e.what());
    for (auto& t : threads) t.join();
    throw std::invalid_argument(concat(
        options.pes > 0 ? "--transit-pes" : "the hardware threads", ": got '", pes,
        "', expected a PE count this system can start: thread ", started + 1, " could not be created (",
        e.code().message(), ")"));
  }

  {
    std::unique_lock lock(mutex);
    // The oversubscription warning comes once the job has run a second: a job that ends sooner
    // was not slow to wait for, and one that a usage error ends at once prints its one line alone.
    const auto done = [&] { return finished == pes || job->aborted(); };
    if (!finished_cv.wait_for(lock, std::chrono::seconds(1), done)) warn_if_oversubscribed(pes);
    finished_cv.wait(lock, done);
    if (job->aborted()) {
      // PEs inside transit calls unwind at once; give ones busy in user code a grace period.
      if (!finished_cv.wait_for(lock, std::chrono::seconds(10), [&] { return finished == pes; })) {
        const auto failure = job->first_failure();
        report_failure(failure->first, failure->second.c_str());
        std::fprintf(stderr, "transit: %d PEs did not stop within 10 s of the failure; exiting\n", pes - finished);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }
  for (auto& t : threads) t.join();
  pe_threads_result result{job->first_failure(), nullptr};
  if (result.failure) result.error = errors[static_cast<std::size_t>(result.failure->first)];
  return result;
}

// A session of the local backend. One PE: its context lives on the calling thread from the start.
// Several: each run() starts their threads on fresh transports.
class local_session final : public session_launch {
 public:
  local_session(const run_options& options, int pes)
      : options_(options), pes_(pes), machine_(emulated_machine(pes, options)), topology_(job_topology(*machine_, options)) {
    if (pes_ == 1) {
      transports_ = make_local_transports(1);
      context_ = context_access::make(transports_->make(0), machine_, topology_, options_);
    }
  }
  ~local_session() override { close(); }
  int local_pes() const noexcept override { return pes_; }
  int size() const noexcept override { return pes_; }
  context* single_pe() noexcept override { return context_.get(); }
  void run(const std::function<void(context&)>& body) override {
    if (closed_) throw std::logic_error("transit::session::run: the session is closed");
    if (context_) {
      body(*context_);
      throw_recorded_failure(*transports_);
      return;
    }
    const pe_threads_result result = run_pe_threads(pes_, options_, machine_, topology_, body);
    if (result.error) std::rethrow_exception(result.error);
    // A PE that ended the job without throwing (a streamer destroyed mid-step, in its destructor):
    // transit::run reports it; a session's caller has only what run() throws.
    if (result.failure) throw std::logic_error(concat("PE ", result.failure->first, ": ", result.failure->second));
  }
  void close() override {
    closed_ = true;
    context_.reset();  // one PE: its barrier is its own
    if (!transports_) return;
    const std::unique_ptr<process_transports> ended = std::move(transports_);
    throw_recorded_failure(*ended);  // the job ended (a destructor, say) since the last run()
  }

 private:
  // One PE: what ended its job since it was last said (its context's destructors end it without
  // throwing), thrown once; the job stays ended, so later calls that wait throw job_aborted.
  void throw_recorded_failure(const process_transports& transports) {
    if (failure_said_) return;
    const auto failure = transports.first_failure();
    if (!failure) return;
    failure_said_ = true;
    throw std::logic_error(failure->second);
  }

  run_options options_;
  int pes_;
  std::shared_ptr<const machine> machine_;
  std::shared_ptr<const topology_manager> topology_;
  std::unique_ptr<process_transports> transports_;
  std::unique_ptr<context> context_;
  bool closed_ = false;
  bool failure_said_ = false;
};

}  // namespace

std::unique_ptr<session_launch> launch_local(const run_options& options) {
  if (options.backend == "mpi")
    throw_invalid("transit::session: options.backend", options.backend,
                  "'local' or empty (a session on MPI attaches to a communicator: transit::attach, transit/mpi.hpp)");
  if (options.threads_per_rank > 1)
    throw_invalid("transit::session: options.threads_per_rank", options.threads_per_rank,
                  "1 with the local backend (its PEs are threads already: options.pes)");
  return std::make_unique<local_session>(options, options.pes > 0 ? options.pes : 1);
}

int run_local(const run_options& options, const std::function<void(context&)>& body) {
  const int pes = options.pes > 0 ? options.pes : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  auto m = emulated_machine(pes, options);
  const auto topology = job_topology(*m, options);
  const pe_threads_result result = run_pe_threads(pes, options, m, topology, body);
  if (result.failure) {
    report_failure(result.failure->first, result.failure->second.c_str());
    return 1;
  }
  return 0;
}

}  // namespace transit::detail

// The local backend's launch: every PE a thread of this process, on one local_world.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "transport/launch.hpp"
#include "transport/local/transport.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"

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

}  // namespace

int run_local(const run_options& options, const std::function<void(context&)>& body) {
  const int pes = options.pes > 0 ? options.pes : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  auto m = emulated_machine(pes, options);
  const auto topology = job_topology(*m, options);
  local_world world(pes);

  std::mutex mutex;
  std::condition_variable finished_cv;
  int finished = 0;

  auto pe_main = [&](int rank) {
    try {
      auto ctx = context_access::make(std::make_unique<local_transport>(world, rank), m, topology,
                                              options);
      body(*ctx);
    } catch (const job_aborted&) {
      // Unwound because another PE failed; that PE reports.
    } catch (const std::exception& e) {
      world.fail(rank, e.what());
    } catch (...) {
      world.fail(rank, "unknown exception");
    }
    std::lock_guard lock(mutex);
    ++finished;
    finished_cv.notify_all();
  };

  std::vector<std::thread> threads;
  threads.reserve(pes);
  try {
    for (int rank = 0; rank < pes; ++rank) threads.emplace_back(pe_main, rank);
  } catch (const std::system_error& e) {
    // The system refused a thread: the PEs that started wait for the others in their first
    // collective; the abort unwinds them, and the count is refused as a usage error.
    const auto started = threads.size();
    world.fail(static_cast<int>(started), e.what());
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
    const auto done = [&] { return finished == pes || world.aborted(); };
    if (!finished_cv.wait_for(lock, std::chrono::seconds(1), done)) warn_if_oversubscribed(pes);
    finished_cv.wait(lock, done);
    if (world.aborted()) {
      // PEs inside transit calls unwind at once; give ones busy in user code a grace period.
      if (!finished_cv.wait_for(lock, std::chrono::seconds(10), [&] { return finished == pes; })) {
        const auto failure = world.first_failure();
        report_failure(failure->first, failure->second.c_str());
        std::fprintf(stderr, "transit: %d PEs did not stop within 10 s of the failure; exiting\n", pes - finished);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }
  for (auto& t : threads) t.join();
  if (const auto failure = world.first_failure()) {
    report_failure(failure->first, failure->second.c_str());
    return 1;
  }
  return 0;
}

}  // namespace transit::detail

#pragma once
// Private to the library: how transit::run (src/runtime/run.cpp) and transit::session assemble a
// job on each backend, and what the launches share. run.cpp only chooses; local.cpp and mpi.cpp
// here make the contexts over the transports the backend makes for this process
// (src/transport/local_transports.hpp, mpi_transports.hpp) and run the PEs.
#include <functional>
#include <memory>

#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/runtime/session.hpp"

namespace transit::detail {

/// Prints "transit: PE <pe>: <what>" on stderr: the one report of a failed job.
void report_failure(int pe, const char* what);
/// The machine of `pes` PEs the options describe (--transit-pes-per-node, or one node).
std::shared_ptr<const machine> emulated_machine(int pes, const run_options& o);
/// The job's topology on `m` (--transit-physical).
std::shared_ptr<const topology_manager> job_topology(const machine& m, const run_options& o);

/// A backend's PEs of one session in this process (transit::session forwards to it).
class session_launch {
 public:
  virtual ~session_launch() = default;
  virtual int local_pes() const noexcept = 0;
  virtual int size() const noexcept = 0;
  /// The context of this process's one PE; null when it runs several, or after close().
  virtual context* single_pe() noexcept = 0;
  /// Runs `body` on every PE here (session::run). Throws what a PE threw (local) or ends the job.
  virtual void run(const std::function<void(context&)>& body) = 0;
  /// Collective (session::close). Idempotent.
  virtual void close() = 0;
};

/// How transit::session reaches its launch (the constructor is private to the library).
struct session_access {
  static session make(std::unique_ptr<session_launch> launch) { return session(std::move(launch)); }
};

/// A local session of `pes` PE threads (0: one PE on the calling thread); run() rethrows the first
/// failing PE's exception. src/runtime/launch/local.cpp.
std::unique_ptr<session_launch> launch_local(const run_options& options);

/// Runs `body` on PE threads of this process (transit::run's local job: every failure reported,
/// status 1). Throws std::invalid_argument for options that only the job's size can judge.
int run_local(const run_options& options, const std::function<void(context&)>& body);

#ifdef TRANSIT_WITH_MPI
/// Runs `body` on this MPI rank's PEs, initialising MPI when the program did not, on a session
/// attached to MPI_COMM_WORLD (src/runtime/launch/mpi.cpp). A usage error is reported and returns
/// 2; a failing PE ends the job.
int run_mpi(const run_options& options, const std::function<void(context&)>& body);
#endif

}  // namespace transit::detail

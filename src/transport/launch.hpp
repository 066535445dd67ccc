#pragma once
// Private to the library: the seam's launch. The runtime (src/runtime/launch.cpp) asks for a
// backend by the name the options give and gets this process's part of a job: how many PEs run
// here, the job's machine, and a fresh set of transports per run (process_transports.hpp). Each
// backend's launch lives in its own folder (src/transport/local/launch.cpp, mpi/launch.cpp): what it
// initialises, checks and reports is its own. The runtime makes the contexts and runs the PEs.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "transit/topology/machine.hpp"
#include "transport/process_transports.hpp"

namespace transit::detail {

/// What a backend's launch takes from the run options (include/transit/runtime/options.hpp).
struct launch_request {
  int pes = 0;               ///< --transit-pes (0: the backend's own count)
  int pes_per_node = 0;      ///< --transit-pes-per-node (0: real nodes)
  int threads_per_rank = 1;  ///< --transit-threads-per-rank
  bool comm_thread = false;  ///< a communication thread serves the PE threads (runs_comm_thread)
  bool thread_multiple = true;  ///< --transit-mpi-threads
  std::string trace_dir;        ///< --transit-trace: where a communication thread records its hand-offs
  std::size_t trace_events = 0;
  /// The single-copy mechanism the calibrated profile chose for this host ("" when none): asked only
  /// when a backend needs it before it starts (the profile sits above the seam).
  std::function<std::string()> profile_single_copy;
};

/// This process's part of a job, as its backend started it.
class process_launch {
 public:
  virtual ~process_launch() = default;
  /// PEs that run in this process.
  virtual int local_pes() const noexcept = 0;
  /// PEs of the whole job.
  virtual int size() const noexcept = 0;
  /// The job's PE of this process's PE 0 (its PEs are consecutive).
  virtual int first_pe() const noexcept = 0;
  /// The job's machine: which PEs share a node.
  virtual std::shared_ptr<const machine> job_machine() const = 0;
  /// Collective: the transports of one run of this process's PEs.
  virtual std::unique_ptr<process_transports> open_transports() = 0;
  /// The option that set local_pes() and its value's source, for a refusal ("--transit-pes").
  virtual const char* pe_count_option() const noexcept = 0;
  /// Called once when this process's PE threads have run for a second: a warning about how they
  /// share the cores, if the backend has one.
  virtual void after_a_second() const {}
};

/// A backend as the runtime reaches it.
class backend_launch {
 public:
  virtual ~backend_launch() = default;
  /// transit::run's job on this backend: starts this process's part (initialising what the
  /// backend needs), runs `main` on it and ends it; returns the process's exit status. A usage
  /// error is said once per job and returns 2; a PE's failure is reported and either returns
  /// main's status (threads of one process) or ends the whole job.
  virtual int run_program(const launch_request& request, const std::function<int(process_launch&)>& main) = 0;
  /// transit::session(options): PEs of this process started by a program that keeps its main.
  /// Throws std::invalid_argument when this backend has no such session.
  virtual std::unique_ptr<process_launch> open_session(const launch_request& request) = 0;
};

/// The backend named `name` ("local", "mpi"; empty: mpi when an MPI launcher started this process,
/// otherwise local). Throws std::invalid_argument for a name this build has no backend for.
backend_launch& backend_named(std::string_view name);
/// The backend of a session (transit::session): `name`, or local when empty.
backend_launch& session_backend_named(std::string_view name);
/// Whether an MPI launcher started this process (always, in a simulated build).
bool launched_by_mpi();

#ifdef TRANSIT_WITH_MPI
/// Collective over a group the program owns (transit::attach): this process's part of a job on
/// it, the group given as the address of its handle in the distributed backend's terms (an
/// MPI_Comm). Throws std::invalid_argument, naming what it got and expected, for the backend's
/// state, the group, its thread level or options the group cannot run.
std::unique_ptr<process_launch> attach_to_program_group(const void* group, const launch_request& request);
/// Local, before the program starts the distributed backend itself (transit::prepare_mpi_environment):
/// sets what run_program sets before it starts the backend; false, changing nothing, once started.
bool prepare_program_start(const launch_request& request);
#endif

/// Prints "transit: PE <pe>: <what>" on stderr: the one report of a failed job.
void report_failure(int pe, const char* what);
/// The machine of `pes` PEs in nodes of `pes_per_node` (0: one node).
std::shared_ptr<const machine> emulated_machine(int pes, int pes_per_node);

}  // namespace transit::detail

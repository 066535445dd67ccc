#pragma once
// Private to the library: how transit::run (src/runtime/run.cpp) starts a job on each backend, and
// what the backends' launches share. run.cpp only chooses; each backend's launch.cpp starts its PEs.
#include <functional>
#include <memory>

#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"

namespace transit::detail {

/// Prints "transit: PE <pe>: <what>" on stderr: the one report of a failed job.
void report_failure(int pe, const char* what);
/// The machine of `pes` PEs the options describe (--transit-pes-per-node, or one node).
std::shared_ptr<const machine> emulated_machine(int pes, const run_options& o);
/// The job's topology on `m` (--transit-physical).
std::shared_ptr<const topology_manager> job_topology(const machine& m, const run_options& o);

/// Runs `body` on PE threads of this process (src/transport/local/launch.cpp). Throws
/// std::invalid_argument for options that only the job's size can judge.
int run_local(const run_options& options, const std::function<void(context&)>& body);

#ifdef TRANSIT_WITH_MPI
/// Runs `body` on this MPI rank's PEs, initialising MPI when the program did not
/// (src/transport/mpi/launch.cpp). A usage error is reported and returns 2; a failing PE ends the job.
int run_mpi(const run_options& options, const std::function<void(context&)>& body);
#endif

}  // namespace transit::detail

#pragma once
// Private to the library: how the mpi backend reports an MPI error and ends a job, for its launch
// (src/transport/mpi/launch.cpp) and the layers behind transport/mpi_access.hpp.
// Functions only: including this names no backend class.
#include <mpi.h>

namespace transit::detail {

/// Ends the whole job with status 1 after a PE's failure was reported: MPI_Abort. Under SimGrid
/// MPI_Abort ends the simulation with status 0, so a simulated job exits the simulator (every rank
/// is in it) with status 1 instead.
[[noreturn]] void abort_job();

/// Throws std::runtime_error with MPI's own error string unless rc is MPI_SUCCESS.
void mpi_check(int rc, const char* call);

}  // namespace transit::detail

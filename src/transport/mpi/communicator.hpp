#pragma once
// MPI's types and operations for transit's scalars, and the end of a failed job.
#include <mpi.h>

#include "transit/core/reduce.hpp"
#include "transit/detail/core/scalar.hpp"
#include "transport/mpi_access.hpp"

namespace transit::detail {

MPI_Datatype mpi_type(scalar_type t);
MPI_Op mpi_op(reduce_op op);

/// Ends the whole job with status 1 after a PE's failure was reported: MPI_Abort. Under SimGrid
/// MPI_Abort ends the simulation with status 0, so a simulated job exits the simulator (every rank
/// is in it) with status 1 instead.
[[noreturn]] void abort_job();

}  // namespace transit::detail

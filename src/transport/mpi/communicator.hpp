#pragma once
// MPI's types and operations for transit's scalars (the end of a failed job: mpi_access.hpp).
#include <mpi.h>

#include "transit/core/reduce.hpp"
#include "transit/detail/core/scalar.hpp"
#include "transport/mpi_access.hpp"

namespace transit::detail {

MPI_Datatype mpi_type(scalar_type t);
MPI_Op mpi_op(reduce_op op);

}  // namespace transit::detail

#include "transport/mpi/communicator.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "transit/detail/core/error.hpp"

namespace transit::detail {

MPI_Datatype mpi_type(scalar_type t) {
  switch (t) {
    case scalar_type::i64: return MPI_INT64_T;
    case scalar_type::u64: return MPI_UINT64_T;
    case scalar_type::f64: return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return MPI_SUM;
    case reduce_op::min: return MPI_MIN;
    case reduce_op::max: return MPI_MAX;
  }
  return MPI_OP_NULL;
}

MPI_Comm duplicate_communicator(MPI_Comm parent) {
  MPI_Comm comm = MPI_COMM_NULL;
  mpi_check(MPI_Comm_dup(parent, &comm), "MPI_Comm_dup");
  mpi_check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return comm;
}

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

void abort_job() {
  std::fflush(stdout);
  std::fflush(stderr);
  if constexpr (simulated_build) std::_Exit(1);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; keep [[noreturn]] honest if it ever did
}

mpi_access& mpi_of(transport& net) {
  mpi_access* mpi = net.mpi();
  TRANSIT_ASSERT(mpi != nullptr, "only the mpi backend answers MPI questions");
  return *mpi;
}

}  // namespace transit::detail

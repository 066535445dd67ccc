#pragma once
// Private to the library: what a layer above the transport may ask of the mpi backend, the one
// door for layers that call MPI themselves (the MPI exchange methods, request_topology::mpi_rma).
// The answers come from the PE's transport through the seam (transport::mpi()): no layer above
// src/transport/ names a backend class.
#include <mpi.h>

#include <cstddef>
#include <functional>

#include "transit/detail/transport/transport.hpp"
#include "transport/mpi_errors.hpp"

namespace transit::detail {

/// Implemented by the mpi backend's transports (one PE per rank, PE threads that call MPI, or PE
/// threads under a communication thread).
class mpi_access {
 public:
  /// The communicator this PE's traffic runs on (transit's own duplicate of the program's). With
  /// one PE per rank it is the one for MPI collectives and windows over the job's ranks; under a
  /// communication thread, use it only inside on_mpi_thread's work.
  virtual MPI_Comm comm() const noexcept = 0;
  /// PEs per rank (1 unless --transit-threads-per-rank): layers that run MPI collectives or
  /// windows over comm() need one PE per rank, and refuse otherwise.
  virtual int lanes() const noexcept = 0;
  /// This PE's thread number in its rank (0 with one PE per rank).
  virtual int lane() const noexcept = 0;
  /// Largest piece of a message sent in pieces (TRANSIT_MAX_MESSAGE_BYTES lowers it, for tests).
  virtual std::size_t max_message_bytes() const noexcept = 0;
  /// Runs `work` on the thread that may call MPI for this PE (this one, or the rank's communication
  /// thread) and returns when it has run, rethrowing what it threw.
  virtual void on_mpi_thread(const std::function<void()>& work) = 0;

 protected:
  ~mpi_access() = default;
};

/// The mpi access of a PE's transport. A logic error (TRANSIT_ASSERT) on another backend: callers
/// run only on the mpi backend.
mpi_access& mpi_of(transport& net);

/// Collective over `parent`: a duplicate whose errors return (and become mpi_check's exceptions)
/// instead of aborting, for transit's traffic apart from the program's.
MPI_Comm duplicate_communicator(MPI_Comm parent);

}  // namespace transit::detail

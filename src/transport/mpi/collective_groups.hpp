#pragma once
// The mpi transport's collective groups: MPI's own non-blocking collectives on a communicator per
// group (mpi_group: on hosts with more ranks than CPUs), or collectives on point-to-point messages
// with a tag per group (p2p_group: otherwise, the SimGrid build's, and the communication thread's;
// mpi_transport::make_group chooses, TRANSIT_MPI_COLLECTIVES overrides).
#include <mpi.h>

#include <memory>
#include <span>

#include "transit/detail/transport/transport.hpp"

namespace transit::detail {

class mpi_transport;

/// A collective group of the mpi transport: the requests of its collective in flight, for
/// wait_for_activity. A group registers with its transport while it lives.
class collective_requests {
 public:
  /// The requests (MPI_REQUEST_NULL once complete); wait_for_activity may complete and clear one.
  virtual std::span<MPI_Request> requests() noexcept = 0;

 protected:
  ~collective_requests() = default;
};

/// A group on a communicator of its own (collective over `net`'s ranks).
std::unique_ptr<collective_group> make_mpi_group(mpi_transport& net);
/// A group on point-to-point messages with `tag` of net.comm() (collective in the order of `tag`).
std::unique_ptr<collective_group> make_p2p_group(mpi_transport& net, int tag);

}  // namespace transit::detail

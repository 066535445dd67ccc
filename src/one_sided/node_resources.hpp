#pragma once
// Private to src/one_sided: what helper mode needs from the backend. Every PE of a node gets a
// part of memory all of the node's PEs (and its helper thread) can reach, and each node's first
// PE gets the transport its helper sends and receives on (one rank per node, rank = node).
// Local backend: one allocation per node, and a local_world of one inbox per node; the addresses
// travel to the node's PEs as messages (one process, one address space). Mpi backend: an
// MPI_Win_allocate_shared window per node and a communicator of the nodes' first ranks.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "transit/transport/transport.hpp"

namespace transit {
class context;
}

namespace transit::detail {

class node_resources {
 public:
  virtual ~node_resources() = default;
  /// The shared part of the PE with local rank `local` on this PE's node (64-byte aligned).
  virtual std::byte* part(int local) const = 0;
  /// The node's first PE only, once: the transport of its helper.
  virtual std::unique_ptr<transport> make_helper_transport() = 0;
  /// The job is failing: keep the shared memory (peers may still touch it) instead of freeing it.
  virtual void abandon() noexcept = 0;
};

/// Collective over all PEs; setup messages travel on `channel`. Throws std::invalid_argument on
/// mpi when MPI was initialised below MPI_THREAD_MULTIPLE (the helper calls MPI from a thread).
std::unique_ptr<node_resources> make_node_resources(context& ctx, std::uint32_t channel, std::size_t part_bytes);

#ifdef TRANSIT_WITH_MPI
std::unique_ptr<node_resources> make_mpi_node_resources(context& ctx, std::size_t part_bytes);
#endif

}  // namespace transit::detail

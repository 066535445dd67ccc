#pragma once
// Private to src/one_sided: the node-shared memory of both routed engines, which the PE's
// transport makes (transport::make_node_memory, src/transport/node_memory.hpp).
#include <cstddef>
#include <memory>
#include <string>

#include "transport/node_memory.hpp"

namespace transit {
class context;
}

namespace transit::detail {

/// Collective over all PEs: this PE's node memory, asked of its transport with this context's
/// wait loop. With `helper` (helper mode) throws std::invalid_argument on mpi when MPI was
/// initialised below MPI_THREAD_MULTIPLE and no communication thread calls MPI for the PEs (the
/// helper would call MPI from a thread of its own). Without (polling mode) returns null, alike on
/// all of a node's PEs, where the node cannot share memory, and says why in *why_not.
std::unique_ptr<node_memory> make_node_resources(context& ctx, std::size_t part_bytes, bool helper = true,
                                                 std::string* why_not = nullptr);

}  // namespace transit::detail

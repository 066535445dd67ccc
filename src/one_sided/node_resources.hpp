#pragma once
// Private to src/one_sided: helper mode's node-shared memory, which the PE's transport makes
// (transport::make_node_memory, src/transport/node_memory.hpp).
#include <cstddef>
#include <memory>

#include "transport/node_memory.hpp"

namespace transit {
class context;
}

namespace transit::detail {

/// Collective over all PEs: this PE's node memory, asked of its transport with this context's
/// wait loop. Throws std::invalid_argument on mpi when MPI was initialised below
/// MPI_THREAD_MULTIPLE and no communication thread calls MPI for the PEs (the helper would call
/// MPI from a thread of its own).
std::unique_ptr<node_memory> make_node_resources(context& ctx, std::size_t part_bytes);

}  // namespace transit::detail

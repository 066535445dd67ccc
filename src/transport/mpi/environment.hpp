#pragma once
// The mpi transport's environment variables (TRANSIT_MAX_MESSAGE_BYTES; TRANSIT_MPI_RECEIVE is
// mpi_transport::receive_mode_from_environment).
#include <cstddef>

namespace transit::detail {

/// The piece size from TRANSIT_MAX_MESSAGE_BYTES (default: default_max_message_bytes). Throws
/// std::invalid_argument naming the value unless it is an integer in [64, 2^31 - 64].
std::size_t max_message_bytes_from_environment();

}  // namespace transit::detail

#pragma once
// Private to src/model: what applies without a calibrated profile.
#include <cstddef>

namespace transit::detail::tuning_defaults {

// The message payload for buffer_items = 0 without a profile, and so the centre of the tuner's
// range (a quarter of the automatic buffer to four times it). 16 KiB is where streamed messages
// came close to the peak on the thesis's machines (2.3.1: 16 KB on Blue Gene/Q and Cray XE6) and
// stays below Open MPI's 32 KiB shared-memory eager limit that the mpi backend asks for.
inline constexpr std::size_t buffer_bytes_75 = 16384;

}  // namespace transit::detail::tuning_defaults

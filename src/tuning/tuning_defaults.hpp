#pragma once
// Private to src/tuning: what applies without a calibrated profile.
#include <cstddef>

namespace transit::detail::tuning_defaults {

// Message payloads for buffer_items = 0 and the tuner's range without a profile. 16 KiB is where
// streamed messages came close to the peak on the thesis's machines (2.3.1: 16 KB on Blue Gene/Q
// and Cray XE6) and stays below Open MPI's 32 KiB shared-memory eager limit that the mpi backend
// asks for; tuning explores a quarter of the automatic buffer to twice it.
inline constexpr std::size_t buffer_bytes_50 = 4096;
inline constexpr std::size_t buffer_bytes_75 = 16384;
inline constexpr std::size_t buffer_bytes_90 = 65536;

}  // namespace transit::detail::tuning_defaults

#pragma once
// bale's kernel timing (wall_seconds around the kernel, between barriers), shared by the
// applications' styles.
#include <chrono>

#include "transit/transit.hpp"

namespace transit::apps {

/// Collective: a barrier, then `kernel` (which ends with its own barrier or sync, as bale's
/// kernels do); returns this PE's wall time from the barrier to the kernel's end, in seconds.
/// Rethrows what `kernel` throws.
template <class Kernel>
double bale_timed(context& ctx, Kernel&& kernel) {
  ctx.barrier();
  const auto start = std::chrono::steady_clock::now();
  kernel();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace transit::apps

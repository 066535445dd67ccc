#pragma once
// Whether this is a simulation build (SimGrid's SMPI, TRANSIT_SIMGRID; docs/simulation.md), as a
// constant that code asks with `if constexpr`: with the simulation seam (src/core/simulation.hpp,
// which alone includes SimGrid's headers) the only place that tests TRANSIT_SIMGRID, so call sites
// carry no #if of their own.

namespace transit::detail {

#ifdef TRANSIT_SIMGRID
inline constexpr bool simulated_build = true;
#else
inline constexpr bool simulated_build = false;
#endif

}  // namespace transit::detail

#pragma once
// Whether this is a simulation build (SimGrid's SMPI, TRANSIT_SIMGRID; docs/simulation.md), as a
// constant that code asks with `if constexpr`: simulated costs are charged through
// src/core/simulated_costs.hpp only, and call sites carry no #if of their own.

namespace transit::detail {

#ifdef TRANSIT_SIMGRID
inline constexpr bool simulated_build = true;
#else
inline constexpr bool simulated_build = false;
#endif

}  // namespace transit::detail

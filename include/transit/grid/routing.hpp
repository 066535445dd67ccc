#pragma once
// The routing schemes by name: what streamer_options names, without the routers themselves
// (transit/grid/router.hpp).
#include <string_view>

namespace transit {

/// Routing scheme (TRAM thesis: grid, section 3.3.1; node-aware, Algorithms 1 to 4).
enum class routing {
  grid,                ///< one dimension at a time, the highest differing first (thesis 3.3.1)
  node_aware,          ///< teams of a node's PEs per node dimension (thesis Algorithm 1)
  node_aware_advanced  ///< node-aware, each team member owning a block of coordinates (Algorithms 2-4)
};

/// "grid", "node-aware" or "node-aware-advanced". Local.
std::string_view to_string(routing r) noexcept;
/// "grid", "node-aware", "node-aware-advanced"; throws std::invalid_argument otherwise. Local.
routing parse_routing(std::string_view name);

}  // namespace transit

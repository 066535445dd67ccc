#pragma once
// Scotch's raw answer behind mapper::scotch, for tests that compare Scotch's own cost with
// evaluate_mapping. Not part of the public contract.
#include <cstdint>
#include <span>
#include <vector>

#include "transit/mapping/mapping.hpp"

namespace transit::detail {

struct scotch_answer {
  /// Scotch's mapping of every object onto a physical node, before transit spreads the objects of
  /// a node over its PEs and moves any beyond the per-PE capacity.
  std::vector<int> node_of_object;
  /// Scotch's own communication cost of that mapping (the sum over edges of load x distance that
  /// SCOTCH_graphMapView prints as CommExpan), in Scotch's edge-load units.
  std::uint64_t reported_cost = 0;
  /// Bytes per edge-load unit: edge bytes are divided by their greatest common divisor (and, when
  /// the total would overflow Scotch's 32-bit sums, by a further factor, rounding: then `exact`
  /// is false and reported_cost * bytes_per_unit only approximates hop-bytes).
  std::uint64_t bytes_per_unit = 1;
  bool exact = true;
};

/// Runs Scotch's static mapping of the object graph onto the nodes of `topo` (a torus, mesh or
/// complete-graph target architecture as the physical topology has it, restricted to the nodes
/// that hold PEs of the job). Edges must be valid. Throws std::invalid_argument when transit was
/// built without Scotch, std::runtime_error when Scotch reports an error.
scotch_answer scotch_map_nodes(const topology_manager& topo, int num_objects,
                               std::span<const comm_edge> edges);

}  // namespace transit::detail

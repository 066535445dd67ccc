#pragma once
// Topology-aware mapping of objects to PEs (Bhatele et al.): the cost of a mapping is its
// hop-bytes, the bytes of every message times the network hops it travels; a good mapping puts
// heavily communicating objects on nearby PEs.
#include <cstdint>
#include <span>
#include <vector>

#include "transit/topology/topology_manager.hpp"

namespace transit {

/// `bytes` exchanged between objects `a` and `b` (direction does not matter for the cost).
struct comm_edge {
  int a = 0;
  int b = 0;
  std::uint64_t bytes = 0;
};

/// Sum over edges of bytes x topo.hops(pe_of_object[a], pe_of_object[b]). Local. Throws
/// std::invalid_argument for an edge naming an object outside pe_of_object, or a PE outside topo.
std::uint64_t hop_bytes(const topology_manager& topo, std::span<const comm_edge> edges,
                        std::span<const int> pe_of_object);

/// Greedy topology-aware mapping of objects 0..num_objects-1: repeatedly takes the unplaced object
/// with the most bytes to placed ones and puts it on the PE with free room that minimises its
/// hop-bytes to placed neighbours, ties to the lowest PE; a new component starts at its heaviest
/// object, on the free PE nearest the last placement. Returns the PE of every object. Every PE receives at most ceil(num_objects / topo.num_pes()) objects. Deterministic and
/// local; O(num_objects x num_pes x degree), meant for setup, not for every step. Throws
/// std::invalid_argument for num_objects < 0 or an edge naming an unknown object.
std::vector<int> greedy_mapping(const topology_manager& topo, int num_objects,
                                std::span<const comm_edge> edges);

}  // namespace transit

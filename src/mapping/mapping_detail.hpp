#pragma once
// Pieces shared by the mappers in src/topology/ (not installed): the object graph in compressed
// form, and a node-level view of a topology_manager that answers hops without range checks.
#include <cstdint>
#include <span>
#include <vector>

#include "transit/mapping/mapping.hpp"

namespace transit::detail {

/// splitmix64: fixed, platform-independent random numbers (std distributions and std::shuffle
/// leave their draws to the library; patterns and baselines must be the same everywhere).
class splitmix {
 public:
  explicit splitmix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t bound) { return next() % bound; }  // bias < 2^-40 here

 private:
  std::uint64_t state_;
};

/// Throws std::invalid_argument for an edge naming an object outside 0..num_objects-1.
void check_edges(std::span<const comm_edge> edges, int num_objects);

/// ceil(num_objects / num_pes): the most objects any mapper puts on one PE.
int objects_per_pe_cap(int num_objects, int num_pes);

/// The communication graph of the objects, undirected, in compressed rows: the neighbours of v
/// are neighbours[offsets[v] .. offsets[v + 1]), each once (parallel edges summed, both directions
/// merged), in increasing order; self-edges are dropped since they cost nothing anywhere.
struct object_graph {
  std::vector<int> offsets;
  std::vector<int> neighbours;
  std::vector<std::uint64_t> weights;

  int num_vertices() const noexcept { return static_cast<int>(offsets.size()) - 1; }
  std::span<const int> adjacent(int v) const {
    return {neighbours.data() + offsets[static_cast<std::size_t>(v)],
            static_cast<std::size_t>(offsets[static_cast<std::size_t>(v) + 1] - offsets[static_cast<std::size_t>(v)])};
  }
  std::span<const std::uint64_t> adjacent_weights(int v) const {
    return {weights.data() + offsets[static_cast<std::size_t>(v)],
            static_cast<std::size_t>(offsets[static_cast<std::size_t>(v) + 1] - offsets[static_cast<std::size_t>(v)])};
  }
};
/// Edges must already be checked.
object_graph build_object_graph(int num_objects, std::span<const comm_edge> edges);

/// Node-level geometry of a job: the physical node of every PE, the coordinates of every physical
/// node, and hops between nodes. Immutable.
class node_geometry {
 public:
  explicit node_geometry(const topology_manager& topo);

  const physical_topology& physical() const noexcept { return *physical_; }
  int ndims() const noexcept { return ndims_; }
  int num_nodes() const noexcept { return physical_->num_nodes(); }
  int node_of_pe(int pe) const { return node_of_pe_[static_cast<std::size_t>(pe)]; }
  int coord(int node, int d) const { return coords_[static_cast<std::size_t>(node * ndims_ + d)]; }
  /// The node at `coords` (one per physical dimension).
  int node_at(std::span<const int> coords) const;
  int node_hops(int a, int b) const {
    const auto nd = static_cast<std::size_t>(ndims_);
    return physical_->node_hops({coords_.data() + static_cast<std::size_t>(a) * nd, nd},
                                {coords_.data() + static_cast<std::size_t>(b) * nd, nd});
  }
  int pe_hops(int a, int b) const { return node_hops(node_of_pe(a), node_of_pe(b)); }

 private:
  const physical_topology* physical_;
  int ndims_;
  std::vector<int> node_of_pe_;
  std::vector<int> coords_;  // node * ndims + d
};

/// Moves objects off PEs that hold more than `cap`, one at a time, each time the move (of an object
/// of that PE to a PE with room) that adds the fewest hop-bytes. Needs cap * num_pes >= objects.
void enforce_capacity(const topology_manager& topo, const object_graph& graph, std::vector<int>& pe_of_object,
                      int cap);

/// The bisection mapper (bisection.cpp).
std::vector<int> bisection_mapping(const topology_manager& topo, int num_objects, const object_graph& graph);

}  // namespace transit::detail

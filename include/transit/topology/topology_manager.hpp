#pragma once
// The physical machine behind a job (Bhatele et al., Topology Manager API): nodes on a mesh, torus
// or switch, with a number of PE slots per node, and the distance in network hops between PEs. The
// grid layer uses it to pick virtual grids that keep routes minimal (TRAM thesis, section 3.4.4);
// mapping.hpp uses it to place communicating objects close together.
//
// Spec grammar (see docs/topology.md):
//   spec := kind ':' dim ('x' dim)* [':' pes_per_node]      e.g. torus:8x4x8:16, mesh:4x4:2
//   kind := 'torus' | 'mesh' | 'switch' | 'dragonfly' | 'fattree'
//   dim  := size [link]     size >= 1; link 't', 'm' or 's' overrides kind for that dimension
//                           (torus, mesh and switch only)
//   dragonfly:GxCxRxN       groups x chassis per group x routers per chassis x nodes per router
//   fattree:Dk x ... x D1   switch fan-outs from the top level down to D1, the nodes per leaf switch
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace transit {

class machine;

/// How the nodes along one dimension are connected.
enum class link_kind {
  mesh,      ///< a line: |a - b| hops
  torus,     ///< a ring: min(|a - b|, size - |a - b|) hops
  switched,  ///< all-to-all through one switch: 1 hop between distinct coordinates
};

/// How the nodes are joined. `direct`: each dimension is a torus, mesh or switch of its own
/// (link_kind) and hops add up over dimensions. `dragonfly` and `fat_tree`: indirect networks of
/// routers, whose hops are the routers a message crosses on SimGrid's minimal route of the same
/// machine (so transit and a simulated run agree node by node); their dimensions report
/// link_kind::switched, which the mappers use as an approximation (docs/topology.md).
enum class network_kind {
  direct,     ///< torus, mesh and switch dimensions
  dragonfly,  ///< groups, chassis, routers, nodes per router (Cray Aries, SimGrid DRAGONFLY)
  fat_tree,   ///< levels of switches, full bisection (SimGrid FAT_TREE)
};

/// A machine's shape, independent of any job: node dimensions, their links, PE slots per node.
/// Nodes are numbered row-major (last dimension fastest); PE slot s is on node s / pes_per_node.
/// Immutable after construction; every query is local and thread-safe.
class physical_topology {
 public:
  /// Throws std::invalid_argument for an empty or mismatched dimension list, a size < 1,
  /// pes_per_node < 1, or a capacity beyond int.
  physical_topology(std::vector<int> dims, std::vector<link_kind> links, int pes_per_node);
  /// Every dimension a ring (link_kind::torus). Throws as the constructor.
  static physical_topology torus(std::vector<int> dims, int pes_per_node);
  /// Every dimension a line (link_kind::mesh). Throws as the constructor.
  static physical_topology mesh(std::vector<int> dims, int pes_per_node);
  /// `num_nodes` nodes one switch hop apart (the default when the network is unknown).
  static physical_topology switched(int num_nodes, int pes_per_node);
  /// A dragonfly of `groups` groups, each of `chassis` chassis of `routers` routers with
  /// `nodes_per_router` nodes each (node coordinates: group, chassis, router, node). Throws
  /// std::invalid_argument for a count < 1, or more groups than routers per chassis (SimGrid's
  /// minimal routing attaches group g's global link to router g of chassis 0).
  static physical_topology dragonfly(int groups, int chassis, int routers, int nodes_per_router, int pes_per_node);
  /// A full-bisection fat tree: `fan_outs` from the top level down, the last being the nodes per
  /// leaf switch (fattree:8x16 is 8 leaf switches of 16 nodes under one level of top switches).
  /// Throws std::invalid_argument for an empty list or a fan-out < 1.
  static physical_topology fat_tree(std::vector<int> fan_outs, int pes_per_node);

  /// Parses a spec such as "torus:8x4x8:16", "mesh:4x4:2", "switch:64:16", "torus:8x4mx8"
  /// (dimension 1 a mesh), "dragonfly:4x6x16x4:24" or "fattree:8x16:24". Throws
  /// std::invalid_argument naming the spec and what was expected.
  static physical_topology parse(std::string_view spec);
  /// The spec in the environment variable TRANSIT_PHYSICAL, or nullopt when unset or empty.
  /// Throws as parse does for a malformed value. Local; reads the environment of this process.
  static std::optional<physical_topology> from_environment();

  /// The kind of network: direct (torus, mesh, switch dimensions), dragonfly or fat tree.
  network_kind network() const noexcept { return network_; }
  /// Node dimensions (at least 1).
  int ndims() const noexcept { return static_cast<int>(dims_.size()); }
  /// Size of each node dimension.
  std::span<const int> dims() const noexcept { return dims_; }
  /// How dimension d is connected. Throws std::out_of_range for d outside [0, ndims()).
  link_kind link(int d) const { return links_.at(static_cast<std::size_t>(d)); }
  /// Whether dimension d is a ring. Throws as link().
  bool is_torus(int d) const { return link(d) == link_kind::torus; }
  /// PE slots on each node.
  int pes_per_node() const noexcept { return pes_per_node_; }
  /// Nodes: the product of dims().
  int num_nodes() const noexcept { return num_nodes_; }
  /// PE slots of the whole machine: num_nodes() * pes_per_node().
  int capacity() const noexcept { return num_nodes_ * pes_per_node_; }
  /// Hops along dimension d between node coordinates a and b (on a dragonfly or fat tree: 1 when
  /// they differ, the per-dimension approximation the mappers use; node_hops is exact). Throws as
  /// link() for a bad d.
  int distance(int d, int a, int b) const;
  /// Hops between the nodes at coordinates `a` and `b` (ndims() each, not checked): 0 for one node;
  /// direct networks: distance() summed over dimensions; dragonfly and fat tree: the routers that
  /// SimGrid's minimal route between the two nodes crosses (docs/topology.md). Local.
  int node_hops(std::span<const int> a, std::span<const int> b) const;
  /// Canonical spec; parse(str()) == *this.
  std::string str() const;

  /// Same dimensions, links and PEs per node.
  friend bool operator==(const physical_topology&, const physical_topology&) = default;

 private:
  physical_topology(network_kind network, std::vector<int> dims, int pes_per_node);
  std::vector<int> dims_;
  std::vector<link_kind> links_;
  network_kind network_ = network_kind::direct;
  int pes_per_node_ = 1;
  int num_nodes_ = 1;
};

/// The PEs of one job placed on a physical topology. Immutable after construction; every query is
/// local and thread-safe. Coordinates of a PE are its node's coordinates followed by its slot on
/// the node (the "T" dimension of the Topology Manager), so ndims() == physical().ndims() + 1.
class topology_manager {
 public:
  /// PEs fill the machine in order: PE p takes slot p (node p / pes_per_node). Throws
  /// std::invalid_argument when num_pes < 1 or num_pes > physical.capacity().
  topology_manager(physical_topology physical, int num_pes);
  /// The default machine: the nodes of `m` one switch hop apart, with max_pes_per_node() slots per
  /// node; PE p sits on node m.node_of(p) in slot m.local_rank(p). Uneven nodes leave empty slots.
  explicit topology_manager(const machine& m);
  /// What a job runs on: `physical` if given (the --transit-physical option), else TRANSIT_PHYSICAL
  /// if set, else the default machine of `m`. A physical spec places PEs in order and ignores the
  /// node grouping of `m`.
  static topology_manager for_job(const machine& m, const std::optional<physical_topology>& physical);

  /// The machine the PEs are placed on.
  const physical_topology& physical() const noexcept { return physical_; }
  /// PEs of the job.
  int num_pes() const noexcept { return static_cast<int>(slot_of_pe_.size()); }
  /// Coordinates per PE: the node dimensions and the slot on the node.
  int ndims() const noexcept { return physical_.ndims() + 1; }
  /// The physical node of `pe`. Throws std::out_of_range for a bad pe.
  int node_of(int pe) const { return slot_of_pe_.at(static_cast<std::size_t>(pe)) / physical_.pes_per_node(); }

  /// Node coordinates of `pe`, then its slot on the node. Throws std::out_of_range for a bad pe.
  std::vector<int> coords(int pe) const;
  /// PE at the coordinates, or -1 when no PE of this job sits there. Throws std::invalid_argument
  /// for the wrong number of coordinates or a coordinate outside its dimension.
  int pe_at(std::span<const int> coords) const;
  /// Network hops from a to b: 0 on the same node, else the sum over dimensions of the per-link
  /// distance (torus wrap-around included). Throws std::out_of_range for a bad PE.
  int hops(int a, int b) const;
  /// The PE of `candidates` fewest hops from `pe`, the first one on ties. Throws
  /// std::invalid_argument when candidates is empty.
  int nearest(int pe, std::span<const int> candidates) const;
  /// `pes` sorted by hops from `pe`; stable, so equally distant PEs keep their order.
  std::vector<int> sort_by_hops(int pe, std::span<const int> pes) const;
  /// The candidate fewest hops from `pe`, the first of equals (the Topology Manager's
  /// pickClosestRank; the same answer as nearest). Throws std::invalid_argument when candidates is
  /// empty.
  int pick_closest(int pe, std::span<const int> candidates) const;

  /// The machine split along its longest node dimension (the first of equals) into `parts` equal
  /// sub-partitions (Bhatele's multiple instances): the PEs of this job in sub-partition `index`,
  /// in row-major order of their coordinates within it (node coordinates, then slot). Local.
  /// Throws std::invalid_argument when `parts` < 1 or does not divide that dimension, or `index`
  /// is outside [0, parts).
  std::vector<int> sub_partition(int parts, int index) const;
  /// The node dimension sub_partition splits: the longest, the first of equals.
  int longest_dimension() const noexcept;

 private:
  void place(std::vector<int> slot_of_pe);
  std::vector<int> slot_of_pe_;
  std::vector<int> pe_of_slot_;   // slot -> PE, or -1
  std::vector<int> node_coords_;  // pe * physical ndims + d -> coordinate d of the PE's node
  physical_topology physical_;
};

/// Dimension lists of the virtual grids that keep routes minimal on `physical` (TRAM thesis 3.4.4,
/// table 4.1): consecutive node dimensions merged in every way, with the PEs per node last, either
/// merged into the dimensions before them or alone, and then also split in two factors a x b
/// (a, b >= 2). Size-1 dimensions are dropped; no duplicates; ordered by dimension count, then
/// lexicographically.
/// Since merging consecutive row-major dimensions keeps the row-major index, virtual_grid(dims,
/// num_pes) puts PE p where topology_manager(physical, num_pes) does. Local.
std::vector<std::vector<int>> minimal_routing_grids(const physical_topology& physical);

}  // namespace transit

#pragma once
// Topology-aware mapping of objects to PEs (Bhatele et al.): the cost of a mapping is its
// hop-bytes, the bytes of every message times the network hops it travels, and the load of its
// busiest link; a good mapping puts heavily communicating objects on nearby PEs. Everything here
// is local, deterministic and thread-safe (pure computation on its arguments); see
// docs/topology.md for the metrics, the mappers and when each fits.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "transit/topology/topology_manager.hpp"

namespace transit {

/// `bytes` exchanged between objects `a` and `b`. Direction does not matter for hop-bytes; link
/// loads route the bytes from a to b (see link_loads).
struct comm_edge {
  int a = 0;                ///< one object (the sender, for link loads)
  int b = 0;                ///< the other (the receiver, for link loads)
  std::uint64_t bytes = 0;  ///< bytes exchanged
};

/// Sum over edges of bytes x topo.hops(pe_of_object[a], pe_of_object[b]). Local. Throws
/// std::invalid_argument for an edge naming an object outside pe_of_object, or a PE outside topo.
std::uint64_t hop_bytes(const topology_manager& topo, std::span<const comm_edge> edges,
                        std::span<const int> pe_of_object);

/// Greedy topology-aware mapping of objects 0..num_objects-1: repeatedly takes the unplaced object
/// with the most bytes to placed ones and puts it on the PE with free room that minimises its
/// hop-bytes to placed neighbours, ties to the lowest PE; a new component starts at its heaviest
/// object, on the free PE nearest the last placement. Returns the PE of every object. Every PE
/// receives at most ceil(num_objects / topo.num_pes()) objects. Deterministic and local;
/// O(num_objects x (nodes x degree + PEs)), meant for setup, not for every step. Throws
/// std::invalid_argument for num_objects < 0 or an edge naming an unknown object.
std::vector<int> greedy_mapping(const topology_manager& topo, int num_objects,
                                std::span<const comm_edge> edges);

/// What a mapping costs the network.
struct mapping_quality {
  std::uint64_t hop_bytes = 0;       ///< sum of bytes x hops
  double average_hops = 0;           ///< hop_bytes / total bytes (0 without bytes)
  int dilation = 0;                  ///< most hops of any edge
  std::uint64_t max_link_bytes = 0;  ///< most bytes over one physical link, dimension-order routing
  int max_objects_per_pe = 0;        ///< most objects on one PE (the load balance)
};

/// The quality of `pe_of_object` for `edges` on `topo`. Local; O(edges x hops + objects). Throws
/// std::invalid_argument as hop_bytes does.
mapping_quality evaluate_mapping(const topology_manager& topo, std::span<const comm_edge> edges,
                                 std::span<const int> pe_of_object);

/// Bytes over every physical link when each edge's bytes travel from the PE of `a` to the PE of
/// `b` by dimension-order routing (dimension 0 first; see docs/topology.md). Link `node * D + d`
/// (D = topo.physical().ndims()) is, for a mesh or torus dimension d, the cable from `node` to its
/// neighbour one step up in d (wrapping in a torus; absent, so always 0, at the top of a mesh), and
/// for a switched dimension, the node's port into the switch of d. A link counts the bytes of both
/// directions. PEs of one node talk without links. Local; throws as hop_bytes does.
std::vector<std::uint64_t> link_loads(const topology_manager& topo, std::span<const comm_edge> edges,
                                      std::span<const int> pe_of_object);

/// link_loads() by direction, for links whose two directions carry bytes independently (full
/// duplex, as SimGrid's cluster links): entry `2 * link` is the direction up (from `node` to its
/// neighbour one step up in d; for a switched dimension, out of the node into the switch), entry
/// `2 * link + 1` the direction down. Local; throws as hop_bytes does.
std::vector<std::uint64_t> directed_link_loads(const topology_manager& topo, std::span<const comm_edge> edges,
                                               std::span<const int> pe_of_object);

/// The mappers of map_objects.
enum class mapper {
  block,      ///< objects in index order, ceil(n / P) per PE: the topology-unaware default
  greedy,     ///< greedy_mapping
  bisection,  ///< recursive bisection of the object graph against the torus coordinates
  scotch,     ///< Scotch's static mapping onto the torus (only when built with Scotch)
};

/// "block", "greedy", "bisection" or "scotch". Local.
std::string_view to_string(mapper m) noexcept;
/// True when this transit was built with Scotch, so that mapper::scotch works. Local.
bool has_scotch() noexcept;

/// The PE of every object 0..num_objects-1 under `m`. Every mapper gives each PE at most
/// ceil(num_objects / topo.num_pes()) objects. Local and deterministic (Scotch's random generator
/// is reset on every call, and calls into Scotch are serialised). Throws std::invalid_argument
/// for num_objects < 0, an edge naming an unknown object, or mapper::scotch in a transit built
/// without Scotch.
std::vector<int> map_objects(const topology_manager& topo, int num_objects,
                             std::span<const comm_edge> edges, mapper m);

/// `pe_of_object` with its nodes placed in a random order: every object moves, with the others of
/// its node and keeping its slot on the node, to the node a random permutation of the job's nodes
/// (drawn from `seed`) gives its node. What a mapping keeps inside nodes stays (the same objects
/// share a node, the same bytes never leave one, a PE's objects move together to one PE), and
/// whatever it did about distances between nodes is lost. For judging mappers: shuffle_nodes of a
/// bisection mapping is a co-locating but topology-unaware placement (communicating objects
/// grouped into node-sized parts, the parts put on nodes in arbitrary order, as a default that
/// partitions the graph would on an allocation it knows nothing of), the fair baseline of what
/// topology awareness adds. Only nodes holding the same slots of the job trade places (with PEs
/// placed in order, every full node; a partial last node stays). Local and deterministic: the same
/// arguments give the same answer on every platform. Throws std::invalid_argument for a PE
/// outside topo.
std::vector<int> shuffle_nodes(const topology_manager& topo, std::span<const int> pe_of_object, std::uint64_t seed);

// ---- multiple instances (Bhatele et al., "Multiple application instances") -------------------

/// Sub-partition `index` of topo.sub_partition(parts, index) as a job of its own: the physical
/// topology with the longest node dimension cut to 1/parts of its size (a mesh in that dimension
/// when parts > 1, since the ring is cut), its PEs numbered as sub_partition lists them. Map one
/// instance on sub_partition_topology(topo, parts) and move it with translate_mapping. Local.
/// Throws as
/// sub_partition does, and std::invalid_argument when the sub-partitions differ in size (a job
/// that leaves slots empty).
topology_manager sub_partition_topology(const topology_manager& topo, int parts);

/// `pe_in_sub` (a mapping onto sub_partition_topology(topo, parts)) moved onto sub-partition
/// `index` of topo: PE q of the sub-topology becomes topo.sub_partition(parts, index)[q]. Local;
/// throws std::invalid_argument for a PE outside the sub-partition.
std::vector<int> translate_mapping(const topology_manager& topo, int parts, int index,
                                   std::span<const int> pe_in_sub);

}  // namespace transit

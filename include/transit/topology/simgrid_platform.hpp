#pragma once
// A physical topology written out as a SimGrid platform (XML, DTD version 4.1), so that a run under
// SimGrid's SMPI simulates the machine transit's topology manager describes, node by node: host
// `node-<i>` is transit's node i, and the hostfile puts each rank on the node its PE slot is on.
// docs/simulation.md says how the runner uses it.
#include <string>

#include "transit/topology/topology_manager.hpp"

namespace transit {

/// Figures of a simulated machine's links and cores.
struct platform_links {
  double link_bytes_per_second = 2e9;       ///< each network link, each direction
  double link_latency_seconds = 1e-7;       ///< each network link
  double loopback_bytes_per_second = 2e10;  ///< between PEs of one node
  double loopback_latency_seconds = 5e-8;   ///< between PEs of one node
  double core_flops = 1e9;                  ///< speed of one core, in flop/s
  /// Each node's network interface: a private link of this bandwidth that every message leaving
  /// or entering the node crosses, both directions together (0: none). SimGrid's clusters call it
  /// a limiter link; in a torus a node's limiter also carries the messages it passes on. A fat
  /// tree's and a dragonfly's nodes inject through their own link to a switch or router (at the
  /// link bandwidth), and SimGrid would give every switch and router a limiter too: there the
  /// platform says so in a comment and adds none (docs/simulation.md).
  double nic_bytes_per_second = 0;
};

/// The SimGrid platform of `physical`, with one host of pes_per_node() cores per node. A torus
/// becomes SimGrid's TORUS cluster, a single switch a flat cluster, a dragonfly and a fat tree
/// SimGrid's DRAGONFLY and FAT_TREE clusters (full bisection), and any other direct network
/// (meshes, mixed links) a zone of routers with Dijkstra routing, each node's host on its own
/// link to its router (the network interface's bandwidth when given, else a link's). Local.
/// Throws std::invalid_argument naming the figure when a bandwidth or speed is not positive and
/// finite, a latency is negative or not finite, or the interface's bandwidth is negative or not
/// finite.
std::string simgrid_platform(const physical_topology& physical, const platform_links& links = {});

/// The SimGrid hostfile of `topo`: one line per PE, in rank order, naming the host of its node
/// (`node-<i>`), so that rank r of a simulated job runs where PE r sits. Local.
std::string simgrid_hostfile(const topology_manager& topo);

}  // namespace transit

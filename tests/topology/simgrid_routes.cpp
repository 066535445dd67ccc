// The simulated machine and transit's topology manager agree node by node: SimGrid loads the
// platform transit writes for a spec, and for every pair of distinct nodes the links of SimGrid's
// route are what transit's hops predict for that network. Run as `simgrid_routes SPEC [--nic]`
// (--nic: with a network interface per node); one SimGrid engine per process, so ctest runs it
// once per spec.
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "transit/topology/simgrid_platform.hpp"
#include "transit/topology/topology_manager.hpp"

namespace {

// SimGrid's links on a route between distinct nodes, given transit's hops. A torus cluster joins
// nodes directly; a flat cluster goes up and down one private link each; dragonfly and fat-tree
// routes add a link from the node to its router and one back to the other node; a router zone
// adds each node's link to its router.
int expected_links(const transit::physical_topology& p, int hops) {
  switch (p.network()) {
    case transit::network_kind::dragonfly:
    case transit::network_kind::fat_tree: return hops + 1;
    case transit::network_kind::direct: break;
  }
  bool all_torus = true, switched = false;
  for (int d = 0; d < p.ndims(); ++d) {
    all_torus = all_torus && p.link(d) == transit::link_kind::torus;
    switched = switched || p.link(d) == transit::link_kind::switched;
  }
  if (all_torus) return hops;
  if (p.ndims() == 1 && switched) return 2 * hops;
  return hops + 2;  // router zone of meshes and tori (no switched dimension in the specs tested)
}

// With a network interface per node (platform_links::nic_bytes_per_second): the links it adds to
// a route between distinct nodes. A torus cluster's limiter is crossed at every node the route
// leaves and at the destination, a flat cluster's at both ends; a router zone's interface is the
// node's link to its router (no link added), and fat trees and dragonflies get none.
int interface_links(const transit::physical_topology& p, int hops) {
  if (p.network() != transit::network_kind::direct) return 0;
  bool all_torus = true, switched = false;
  for (int d = 0; d < p.ndims(); ++d) {
    all_torus = all_torus && p.link(d) == transit::link_kind::torus;
    switched = switched || p.link(d) == transit::link_kind::switched;
  }
  if (all_torus) return hops + 1;
  if (p.ndims() == 1 && switched) return 2;
  return 0;
}

// Whether a route starts and ends at the interfaces of its nodes (the networks that have them).
bool ends_at_interfaces(const transit::physical_topology& p, const std::vector<simgrid::s4u::Link*>& links,
                        double nic) {
  if (p.network() != transit::network_kind::direct) return true;
  return !links.empty() && links.front()->get_bandwidth() == nic && links.back()->get_bandwidth() == nic;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (argc == 3 && std::string(argv[2]) != "--nic") || argc > 3) {
    std::fprintf(stderr, "usage: simgrid_routes SPEC [--nic]\n");
    return 2;
  }
  const std::string spec = argv[1];
  const bool nic = argc == 3;  // each node's network interface too, at a bandwidth no other link has
  transit::platform_links figures;
  if (nic) figures.nic_bytes_per_second = 3e9;
  const transit::physical_topology physical = transit::physical_topology::parse(spec);
  const transit::topology_manager topo(physical, physical.num_nodes());  // one PE per node: PE n on node n
  const std::string file = "simgrid_routes_" + std::to_string(::getpid()) + ".xml";
  std::ofstream(file) << transit::simgrid_platform(physical, figures);

  int engine_argc = 1;
  simgrid::s4u::Engine engine(&engine_argc, argv);
  engine.load_platform(file);
  std::remove(file.c_str());
  int wrong = 0, pairs = 0;
  // Routes are asked from inside the simulation: a Dijkstra zone builds its graph when it starts.
  simgrid::s4u::Actor::create("check", engine.host_by_name("node-0"), [&] {
    std::vector<simgrid::s4u::Link*> links;
    for (int a = 0; a < physical.num_nodes(); ++a) {
      const auto* from = engine.host_by_name("node-" + std::to_string(topo.node_of(a)));
      for (int b = 0; b < physical.num_nodes(); ++b) {
        if (a == b) continue;
        const auto* to = engine.host_by_name("node-" + std::to_string(topo.node_of(b)));
        links.clear();
        double latency = 0;
        from->route_to(to, links, &latency);
        ++pairs;
        const int hops = topo.hops(a, b);
        const int expected = expected_links(physical, hops) + (nic ? interface_links(physical, hops) : 0);
        if (static_cast<int>(links.size()) != expected && wrong++ < 10)
          std::fprintf(stderr, "%s: nodes %d -> %d: SimGrid's route has %zu links, transit's %d hops predict %d\n",
                       spec.c_str(), a, b, links.size(), hops, expected);
        else if (nic && !ends_at_interfaces(physical, links, figures.nic_bytes_per_second) && wrong++ < 10)
          std::fprintf(stderr, "%s: nodes %d -> %d: the route does not start and end at the nodes' interfaces\n",
                       spec.c_str(), a, b);
      }
    }
  });
  engine.run();
  std::printf("%s%s: %d of %d routes agree\n", spec.c_str(), nic ? " with interfaces" : "", pairs - wrong, pairs);
  return wrong == 0 ? 0 : 1;
}

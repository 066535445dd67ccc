// The simulated machine and transit's topology manager agree node by node: SimGrid loads the
// platform transit writes for a spec, and for every pair of distinct nodes the links of SimGrid's
// route are what transit's hops predict for that network. Run as `simgrid_routes SPEC`; one
// SimGrid engine per process, so ctest runs it once per spec.
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: simgrid_routes SPEC\n");
    return 2;
  }
  const std::string spec = argv[1];
  const transit::physical_topology physical = transit::physical_topology::parse(spec);
  const transit::topology_manager topo(physical, physical.num_nodes());  // one PE per node: PE n on node n
  const std::string file = "simgrid_routes_" + std::to_string(::getpid()) + ".xml";
  std::ofstream(file) << transit::simgrid_platform(physical);

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
        const int expected = expected_links(physical, topo.hops(a, b));
        if (static_cast<int>(links.size()) != expected && wrong++ < 10)
          std::fprintf(stderr, "%s: nodes %d -> %d: SimGrid's route has %zu links, transit's %d hops predict %d\n",
                       spec.c_str(), a, b, links.size(), topo.hops(a, b), expected);
      }
    }
  });
  engine.run();
  std::printf("%s: %d of %d routes agree\n", spec.c_str(), pairs - wrong, pairs);
  return wrong == 0 ? 0 : 1;
}

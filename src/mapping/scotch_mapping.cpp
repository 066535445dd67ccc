// mapper::scotch: Scotch's static mapping (dual recursive bipartitioning) of the object graph onto
// the nodes of the physical topology. Compiled in every build; without TRANSIT_WITH_SCOTCH it only
// says so.
#include <stdexcept>

#include "mapping_detail.hpp"
#include "transit/detail/core/error.hpp"
#include "scotch.hpp"

#ifdef TRANSIT_WITH_SCOTCH
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <string>

#include <scotch.h>  // after <cstdio> and <cstdint>: it uses FILE and the fixed-width types
#endif

namespace transit {

bool has_scotch() noexcept {
#ifdef TRANSIT_WITH_SCOTCH
  return true;
#else
  return false;
#endif
}

namespace detail {

#ifndef TRANSIT_WITH_SCOTCH

scotch_answer scotch_map_nodes(const topology_manager&, int, std::span<const comm_edge>) {
  throw_invalid("mapper", "scotch", "block, greedy or bisection: transit was built without Scotch "
                                    "(configure with libscotch-dev installed and TRANSIT_WITH_SCOTCH=ON)");
}

#else

namespace {

using num = SCOTCH_Num;

// Scotch keeps global state (its random generator, and no thread support in Debian's build), and
// local-backend PEs are threads of one process: one call at a time.
std::mutex scotch_mutex;

[[noreturn]] void scotch_failed(const char* call) {
  throw std::runtime_error(concat("Scotch: ", call, " failed"));
}

// Owners of Scotch's C objects, so that an exception between init and exit frees them.
struct graph_owner {
  SCOTCH_Graph graph;
  graph_owner() { if (SCOTCH_graphInit(&graph) != 0) scotch_failed("SCOTCH_graphInit"); }
  ~graph_owner() { SCOTCH_graphExit(&graph); }
};
struct arch_owner {
  SCOTCH_Arch arch;
  arch_owner() { if (SCOTCH_archInit(&arch) != 0) scotch_failed("SCOTCH_archInit"); }
  ~arch_owner() { SCOTCH_archExit(&arch); }
};
// A Scotch context with a fixed random seed and deterministic algorithms: Debian's Scotch seeds
// its generator from the clock otherwise, and the same input then maps differently on every run.
struct context_owner {
  SCOTCH_Context context;
  context_owner() {
    if (SCOTCH_contextInit(&context) != 0) scotch_failed("SCOTCH_contextInit");
    SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
    SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
    SCOTCH_contextRandomSeed(&context, 1);
  }
  ~context_owner() { SCOTCH_contextExit(&context); }
};
struct strat_owner {
  SCOTCH_Strat strat;
  strat_owner() { if (SCOTCH_stratInit(&strat) != 0) scotch_failed("SCOTCH_stratInit"); }
  ~strat_owner() { SCOTCH_stratExit(&strat); }
};

// Scotch numbers the terminals of a torus or mesh with its first dimension fastest, so it gets the
// dimensions in reverse to match transit's row-major nodes.
void build_direct_target(const physical_topology& phys, arch_owner& full) {
  const int nd = phys.ndims();
  bool all_mesh = true;
  for (int d = 0; d < nd; ++d) all_mesh = all_mesh && phys.link(d) == link_kind::mesh;
  std::vector<num> reversed;
  for (int d = nd; d-- > 0;) reversed.push_back(phys.dims()[static_cast<std::size_t>(d)]);
  int status = 0;
  if (all_mesh && nd == 1) status = SCOTCH_archMesh2(&full.arch, reversed[0], 1);
  else if (all_mesh && nd == 2) status = SCOTCH_archMesh2(&full.arch, reversed[0], reversed[1]);
  else if (all_mesh && nd == 3) status = SCOTCH_archMesh3(&full.arch, reversed[0], reversed[1], reversed[2]);
  else status = SCOTCH_archTorusX(&full.arch, static_cast<num>(nd), reversed.data());
  if (status != 0) scotch_failed("building the target architecture");
}

// The target: one terminal per node that holds PEs of the job; terminal i is used_nodes[i]
// (ascending); a job that leaves nodes empty maps onto a sub-architecture of those used.
//
// Scotch's distances equal transit's hops for a torus, a mesh of one to three dimensions (through
// SCOTCH_archMesh2/3: Scotch 7.0's meshXD counts wrap-around, like a torus) and one switch (a
// complete graph). A fat tree is given as Scotch's tree-leaf, whose levels cost what crossing them
// costs; any other machine (mixed link kinds, a mesh of four or more dimensions, several switched
// dimensions, a dragonfly) as the torus of its dimensions. Their mappings are still evaluated with
// transit's hops, but Scotch's reported cost is then not hop-bytes (a tree-leaf charges terminals
// the cost of its lowest level, wherever their paths part).
void build_target(const node_geometry& geo, const std::vector<num>& used_nodes, arch_owner& full,
                  arch_owner& sub, SCOTCH_Arch*& target) {
  const physical_topology& phys = geo.physical();
  const int nd = phys.ndims();
  const auto used = static_cast<num>(used_nodes.size());
  target = &full.arch;
  if (nd == 1 && phys.link(0) == link_kind::switched) {  // every pair of nodes one hop apart
    if (SCOTCH_archCmplt(&full.arch, used) != 0) scotch_failed("SCOTCH_archCmplt");
    return;
  }
  if (phys.network() == network_kind::fat_tree) {
    // Nodes whose paths part at level k (0 at the top) are 2 (levels - k) - 1 switches apart; the
    // tree-leaf's bipartitions pay that for the domains they separate at level k. Its terminals
    // are numbered with the top level slowest, as transit numbers nodes.
    std::vector<num> sizes(phys.dims().begin(), phys.dims().end()), costs;
    for (int k = 0; k < nd; ++k) costs.push_back(2 * (nd - k) - 1);
    if (SCOTCH_archTleaf(&full.arch, static_cast<num>(nd), sizes.data(), costs.data()) != 0)
      scotch_failed("SCOTCH_archTleaf");
  } else {
    build_direct_target(phys, full);
  }
  if (used == geo.num_nodes()) return;
  if (SCOTCH_archSub(&sub.arch, &full.arch, used, used_nodes.data()) != 0) scotch_failed("SCOTCH_archSub");
  target = &sub.arch;
}


// Sum of the CommExpan line of SCOTCH_graphMapView: "M\tCommExpan=<average>\t(<sum>)".
std::uint64_t reported_expansion(const SCOTCH_Graph& graph, const SCOTCH_Mapping& mapping) {
  char* text = nullptr;
  std::size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  if (stream == nullptr) scotch_failed("open_memstream");
  const int status = SCOTCH_graphMapView(&graph, &mapping, stream);
  std::fclose(stream);
  const std::string view(text, size);
  std::free(text);
  if (status != 0) scotch_failed("SCOTCH_graphMapView");
  const std::size_t line = view.find("CommExpan=");
  const std::size_t open = view.find('(', line);
  if (line == std::string::npos || open == std::string::npos)
    throw std::runtime_error("Scotch: no CommExpan in SCOTCH_graphMapView's output: '" + view + "'");
  return std::strtoull(view.c_str() + open + 1, nullptr, 10);
}

}  // namespace

scotch_answer scotch_map_nodes(const topology_manager& topo, int num_objects,
                               std::span<const comm_edge> edges) {
  const node_geometry geo(topo);
  const object_graph full = build_object_graph(num_objects, edges);
  scotch_answer answer;
  answer.node_of_object.assign(static_cast<std::size_t>(num_objects), geo.node_of_pe(0));
  if (num_objects == 0) return answer;

  // Edge loads: bytes over their greatest common divisor, zero-byte edges dropped. Scotch sums
  // load x distance over both directions of every edge in 32-bit integers; when that could
  // overflow, loads are divided further (rounded, at least 1) and the cost is no longer exact.
  std::uint64_t unit = 0;
  for (const std::uint64_t w : full.weights) unit = std::gcd(unit, w);
  if (unit == 0) unit = 1;
  int diameter = 0;
  // A fat tree's farthest nodes part at the top; a dragonfly's route crosses at most six routers.
  if (geo.physical().network() == network_kind::fat_tree) diameter = 2 * geo.ndims() - 1;
  if (geo.physical().network() == network_kind::dragonfly) diameter = 6;
  for (int d = 0; d < geo.ndims() && geo.physical().network() == network_kind::direct; ++d) {
    const int size = geo.physical().dims()[static_cast<std::size_t>(d)];
    const link_kind k = geo.physical().link(d);
    diameter += k == link_kind::torus ? size / 2 : k == link_kind::mesh ? size - 1 : (size > 1 ? 1 : 0);
  }
  long double worst = 0;
  for (const std::uint64_t w : full.weights) worst += static_cast<long double>(w / unit);
  worst *= std::max(diameter, 1);  // full.weights holds both directions already
  const long double limit = static_cast<long double>(INT_MAX) / 4;
  std::uint64_t extra = 1;
  if (worst > limit) extra = static_cast<std::uint64_t>(worst / limit) + 1;
  answer.bytes_per_unit = unit * extra;
  answer.exact = extra == 1;

  std::vector<num> offsets{0}, targets, loads;
  for (int v = 0; v < full.num_vertices(); ++v) {
    const auto adj = full.adjacent(v);
    const auto w = full.adjacent_weights(v);
    for (std::size_t i = 0; i < adj.size(); ++i) {
      if (w[i] == 0) continue;
      const std::uint64_t load = std::max<std::uint64_t>(1, (w[i] / unit + extra / 2) / extra);
      targets.push_back(adj[i]);
      loads.push_back(static_cast<num>(load));
    }
    offsets.push_back(static_cast<num>(targets.size()));
  }

  // Nodes that hold PEs of this job; a job smaller than the machine maps onto those only.
  std::vector<int> pes_on_node(static_cast<std::size_t>(geo.num_nodes()), 0);
  for (int pe = 0; pe < topo.num_pes(); ++pe) ++pes_on_node[static_cast<std::size_t>(geo.node_of_pe(pe))];
  std::vector<num> used_nodes;
  for (int node = 0; node < geo.num_nodes(); ++node)
    if (pes_on_node[static_cast<std::size_t>(node)] > 0) used_nodes.push_back(node);

  const std::lock_guard lock(scotch_mutex);
  graph_owner plain_graph;
  if (SCOTCH_graphBuild(&plain_graph.graph, 0, num_objects, offsets.data(), nullptr, nullptr, nullptr,
                        static_cast<num>(targets.size()), targets.data(), loads.data()) != 0)
    scotch_failed("SCOTCH_graphBuild");
  context_owner context;
  graph_owner graph;  // the same graph, bound to the deterministic context
  if (SCOTCH_contextBindGraph(&context.context, &plain_graph.graph, &graph.graph) != 0)
    scotch_failed("SCOTCH_contextBindGraph");
  arch_owner full_target, sub_target;
  SCOTCH_Arch* target = nullptr;
  build_target(geo, used_nodes, full_target, sub_target, target);

  // Quality over speed, and Scotch's usual 1% load imbalance: asked for none, Scotch maps far worse
  // (60% more hop-bytes on the 32^3 stencil of BENCHMARKS.md), so the few objects beyond a node's
  // share are moved afterwards, each where it adds the fewest hop-bytes.
  constexpr double max_imbalance = 0.01;
  strat_owner strat;
  if (SCOTCH_stratGraphMapBuild(&strat.strat, SCOTCH_STRATQUALITY, static_cast<num>(used_nodes.size()), max_imbalance) != 0)
    scotch_failed("SCOTCH_stratGraphMapBuild");
  std::vector<num> terminal(static_cast<std::size_t>(num_objects), 0);
  SCOTCH_Mapping mapping;
  if (SCOTCH_graphMapInit(&graph.graph, &mapping, target, terminal.data()) != 0)
    scotch_failed("SCOTCH_graphMapInit");
  const int status = SCOTCH_graphMapCompute(&graph.graph, &mapping, &strat.strat);
  std::uint64_t cost = 0;
  try {
    // Without edges there is no cost, and SCOTCH_graphMapView prints no expansion.
    if (status == 0 && !targets.empty()) cost = reported_expansion(graph.graph, mapping);
  } catch (...) {
    SCOTCH_graphMapExit(&graph.graph, &mapping);
    throw;
  }
  SCOTCH_graphMapExit(&graph.graph, &mapping);
  if (status != 0) scotch_failed("SCOTCH_graphMapCompute");

  answer.reported_cost = cost;
  for (std::size_t o = 0; o < terminal.size(); ++o) {
    const auto t = static_cast<std::size_t>(terminal[o]);
    TRANSIT_ASSERT(t < used_nodes.size(), "Scotch returns a terminal of the target");
    answer.node_of_object[o] = static_cast<int>(used_nodes[t]);
  }
  return answer;
}

#endif  // TRANSIT_WITH_SCOTCH

}  // namespace detail
}  // namespace transit

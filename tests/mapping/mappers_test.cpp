// map_objects: every mapper's contract (capacity, a permutation when objects == PEs, bad input),
// Scotch against its own cost, and what topology-aware mappers buy over the block default.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <vector>

#include "../support/invalid_message.hpp"
#include "mapping/scotch.hpp"
#include "transit/mapping/mapping.hpp"
#include "transit/mapping/patterns.hpp"

namespace transit {
namespace {

using testing::invalid_message;

std::vector<mapper> all_mappers() {
  std::vector<mapper> out{mapper::block, mapper::greedy, mapper::bisection};
  if (has_scotch()) out.push_back(mapper::scotch);
  return out;
}

std::vector<int> objects_per_pe(const std::vector<int>& pe_of, int num_pes) {
  std::vector<int> load(static_cast<std::size_t>(num_pes), 0);
  for (const int pe : pe_of) ++load[static_cast<std::size_t>(pe)];
  return load;
}

// The OpenAtom-like pattern at 32 states x 8 planes, state blocks of 8: small enough to map quickly.
comm_pattern small_openatom() {
  openatom_sizes sizes;
  sizes.states = 32;
  sizes.planes = 8;
  sizes.state_block = 8;
  return openatom_pattern(sizes);
}

TEST(MapObjects, EveryMapperRespectsTheCapacityOfEveryPe) {
  // Full and partial jobs, tori, meshes, mixed links and switches; object counts below, at and
  // above the PE count; stencil and random graphs (the latter with unconnected objects).
  const std::vector<std::pair<const char*, int>> machines{
      {"torus:4x4:2", 32}, {"torus:3x5:1", 11}, {"mesh:4x3x2:2", 48}, {"switch:5:3", 13},
      {"torus:8x4mx2:1", 64}, {"torus:8x4x8:4", 1024}};
  for (const auto& [spec, pes] : machines) {
    const topology_manager topo(physical_topology::parse(spec), pes);
    for (const int objects : {0, 1, 7, pes, 3 * pes + 1}) {
      std::vector<comm_edge> edges;
      if (objects >= 2) edges = random_pattern(objects, 2, 100, 7).edges;
      if (objects >= 2 && objects % 2 == 0) edges = stencil_pattern(std::vector<int>{2, objects / 2}, 64).edges;
      const int cap = objects == 0 ? 0 : (objects + pes - 1) / pes;
      for (const mapper m : all_mappers()) {
        const std::vector<int> pe_of = map_objects(topo, objects, edges, m);
        ASSERT_EQ(pe_of.size(), static_cast<std::size_t>(objects)) << spec << " " << to_string(m);
        for (const int pe : pe_of) ASSERT_TRUE(pe >= 0 && pe < pes) << spec << " " << to_string(m) << " " << pe;
        const std::vector<int> load = objects_per_pe(pe_of, pes);
        EXPECT_LE(*std::max_element(load.begin(), load.end()), cap) << spec << " " << objects << " " << to_string(m);
        if (objects == pes) {  // a permutation: one object on every PE
          EXPECT_EQ(*std::min_element(load.begin(), load.end()), 1) << spec << " " << to_string(m);
        }
        EXPECT_EQ(map_objects(topo, objects, edges, m), pe_of) << "deterministic: " << spec << " " << to_string(m);
      }
    }
  }
}

TEST(MapObjects, BlockPlacesObjectsInIndexOrder) {
  const topology_manager topo(physical_topology::parse("torus:4:1"), 4);
  EXPECT_EQ(map_objects(topo, 10, {}, mapper::block), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3}));
  EXPECT_EQ(map_objects(topo, 3, {}, mapper::block), (std::vector<int>{0, 1, 2}));
}

TEST(MapObjects, RejectsUnknownObjectsAndNegativeCounts) {
  const topology_manager topo(physical_topology::parse("torus:4x4:1"), 16);
  const std::vector<comm_edge> edges{{0, 1, 8}, {1, 5, 8}};
  for (const mapper m : {mapper::block, mapper::greedy, mapper::bisection, mapper::scotch}) {
    EXPECT_EQ(invalid_message([&] { map_objects(topo, 5, edges, m); }),
              "object of communication edge 1: got '5', expected 0..4")
        << to_string(m);
    EXPECT_EQ(invalid_message([&] { map_objects(topo, -2, {}, m); }), "number of objects: got '-2', expected at least 0")
        << to_string(m);
  }
}

TEST(MapObjects, ScotchIsOfferedExactlyWhenBuiltWithIt) {
  const topology_manager topo(physical_topology::parse("torus:4x4:1"), 16);
  if (has_scotch()) {
    EXPECT_EQ(map_objects(topo, 16, stencil_pattern(std::vector<int>{4, 4}, 8).edges, mapper::scotch).size(), 16u);
  } else {
    const std::string message = invalid_message([&] { map_objects(topo, 4, {}, mapper::scotch); });
    EXPECT_NE(message.find("transit was built without Scotch"), std::string::npos) << message;
  }
}

// Scotch's own cost (CommExpan of SCOTCH_graphMapView) of its raw node mapping, times the bytes of
// one load unit, is the hop-bytes evaluate_mapping finds for that mapping: both the target
// architecture and the metric agree, on full and partial jobs, tori, meshes and a switch.
TEST(ScotchMapping, AgreesWithItsOwnReportedCost) {
  if (!has_scotch()) GTEST_SKIP() << "built without Scotch";
  const std::vector<std::pair<const char*, int>> machines{
      {"torus:4x4x2:2", 64}, {"torus:4x4x2:2", 57}, {"mesh:4x3:2", 24}, {"mesh:4x3:2", 19},
      {"mesh:3x2x2:1", 12}, {"switch:6:2", 9}, {"torus:5:1", 5}};
  const comm_pattern stencil = stencil_pattern(std::vector<int>{8, 8, 4}, 24);
  for (const auto& [spec, pes] : machines) {
    const topology_manager topo(physical_topology::parse(spec), pes);
    const detail::scotch_answer answer = detail::scotch_map_nodes(topo, stencil.num_objects, stencil.edges);
    ASSERT_TRUE(answer.exact) << spec;
    EXPECT_EQ(answer.bytes_per_unit, 24u) << spec;  // the greatest common divisor of the bytes
    std::vector<int> some_pe_of_node(static_cast<std::size_t>(topo.physical().num_nodes()), -1);
    for (int pe = 0; pe < pes; ++pe) some_pe_of_node[static_cast<std::size_t>(topo.node_of(pe))] = pe;
    std::vector<int> pe_of;
    for (const int node : answer.node_of_object) {
      ASSERT_GE(some_pe_of_node[static_cast<std::size_t>(node)], 0) << spec << ": a node without PEs";
      pe_of.push_back(some_pe_of_node[static_cast<std::size_t>(node)]);
    }
    EXPECT_GT(answer.reported_cost, 0u) << spec;
    EXPECT_EQ(evaluate_mapping(topo, stencil.edges, pe_of).hop_bytes, answer.reported_cost * answer.bytes_per_unit)
        << spec;
  }
}

TEST(ScotchMapping, ScalesLoadsThatWouldOverflowAndSaysSo) {
  if (!has_scotch()) GTEST_SKIP() << "built without Scotch";
  const topology_manager topo(physical_topology::parse("torus:4x4:1"), 16);
  comm_pattern p = random_pattern(64, 3, 1'000'000'000, 5);  // coprime byte counts near 2^30
  const detail::scotch_answer answer = detail::scotch_map_nodes(topo, p.num_objects, p.edges);
  EXPECT_FALSE(answer.exact);
  EXPECT_GT(answer.bytes_per_unit, 1u);
  const auto pe_of = map_objects(topo, p.num_objects, p.edges, mapper::scotch);
  EXPECT_LE(evaluate_mapping(topo, p.edges, pe_of).max_objects_per_pe, 4);
}

// What mapping buys: on a 3-D stencil over a 3-D torus and on the OpenAtom-like pattern, the
// topology-aware mappers cut block's hop-bytes. The numbers are printed for docs/topology.md;
// BENCHMARKS.md has the full-size comparison.
TEST(MapObjects, TopologyAwareMappersCutHopBytesBelowBlock) {
  const auto phys = physical_topology::parse("torus:4x4x4:2");
  const topology_manager topo(phys, phys.capacity());
  const comm_pattern stencil = stencil_pattern(std::vector<int>{16, 16, 8}, 1024);
  const comm_pattern atom = small_openatom();
  for (const comm_pattern* p : {&stencil, &atom}) {
    const std::uint64_t block = evaluate_mapping(topo, p->edges, map_objects(topo, p->num_objects, p->edges, mapper::block)).hop_bytes;
    for (const mapper m : all_mappers()) {
      if (m == mapper::block) continue;
      const std::uint64_t cost = evaluate_mapping(topo, p->edges, map_objects(topo, p->num_objects, p->edges, m)).hop_bytes;
      std::cout << p->name << " " << to_string(m) << ": hop-bytes / block " << static_cast<double>(cost) / static_cast<double>(block) << "\n";
      EXPECT_LT(cost, block) << p->name << " " << to_string(m);
    }
  }
}

TEST(MapObjects, ToStringNamesEveryMapper) {
  EXPECT_EQ(to_string(mapper::block), "block");
  EXPECT_EQ(to_string(mapper::greedy), "greedy");
  EXPECT_EQ(to_string(mapper::bisection), "bisection");
  EXPECT_EQ(to_string(mapper::scotch), "scotch");
}

// ---- shuffle_nodes: co-location without topology awareness ------------------------------------

// The bytes that never leave a node under `pe_of`.
std::uint64_t bytes_inside_nodes(const topology_manager& topo, const comm_pattern& p, const std::vector<int>& pe_of) {
  std::uint64_t inside = 0;
  for (const comm_edge& e : p.edges)
    if (topo.node_of(pe_of[static_cast<std::size_t>(e.a)]) == topo.node_of(pe_of[static_cast<std::size_t>(e.b)])) inside += e.bytes;
  return inside;
}

// Bisection's node parts placed on the nodes of a torus in random order: the same objects share
// each node (slot for slot), so the same bytes stay inside nodes, but the nodes are others, and the
// hop-bytes rise above bisection's (and greedy's): what the topology-aware placement adds over
// co-location alone.
TEST(ShuffleNodes, KeepsBisectionsNodePartsAndLosesItsTopologyAwareness) {
  const topology_manager topo(physical_topology::parse("torus:4x4x4:4"), 256);
  const comm_pattern atom = small_openatom();
  const std::vector<int> aware = map_objects(topo, atom.num_objects, atom.edges, mapper::bisection);
  const std::vector<int> shuffled = shuffle_nodes(topo, aware, 1);
  ASSERT_EQ(shuffled.size(), aware.size());

  std::vector<int> node_image(static_cast<std::size_t>(topo.physical().num_nodes()), -1);  // node -> its node after
  int moved = 0;
  for (std::size_t o = 0; o < aware.size(); ++o) {
    const int from = topo.node_of(aware[o]), to = topo.node_of(shuffled[o]);
    int& image = node_image[static_cast<std::size_t>(from)];
    if (image < 0) image = to;
    EXPECT_EQ(image, to) << "object " << o << " left the others of its node";
    EXPECT_EQ(topo.coords(shuffled[o]).back(), topo.coords(aware[o]).back()) << "object " << o << " changed slot";
    if (from != to) ++moved;
  }
  std::vector<int> images;
  for (const int image : node_image)
    if (image >= 0) images.push_back(image);
  std::sort(images.begin(), images.end());
  EXPECT_EQ(std::adjacent_find(images.begin(), images.end()), images.end()) << "two nodes' parts went to one node";
  EXPECT_GT(moved, static_cast<int>(aware.size()) / 2) << "the node order differs";
  EXPECT_EQ(bytes_inside_nodes(topo, atom, shuffled), bytes_inside_nodes(topo, atom, aware));
  EXPECT_GT(bytes_inside_nodes(topo, atom, aware), 0u);
  auto sorted_loads = [&](const std::vector<int>& pe_of) {
    std::vector<int> load = objects_per_pe(pe_of, topo.num_pes());
    std::sort(load.begin(), load.end());
    return load;
  };
  EXPECT_EQ(sorted_loads(shuffled), sorted_loads(aware));

  const std::uint64_t unaware_cost = hop_bytes(topo, atom.edges, shuffled);
  for (const mapper m : {mapper::bisection, mapper::greedy}) {
    const std::uint64_t cost = hop_bytes(topo, atom.edges, map_objects(topo, atom.num_objects, atom.edges, m));
    std::cout << "colocated / " << to_string(m) << ": hop-bytes " << static_cast<double>(unaware_cost) / static_cast<double>(cost) << "\n";
    EXPECT_GT(unaware_cost, cost) << to_string(m);
  }
  EXPECT_EQ(shuffle_nodes(topo, aware, 1), shuffled) << "deterministic";
  EXPECT_NE(shuffle_nodes(topo, aware, 2), shuffled) << "the seed draws the order";
}

// Only nodes holding the same slots trade places: a partial last node keeps its objects, and every
// object stays on a PE of the job.
TEST(ShuffleNodes, APartialNodeStaysAndBadPesAreRejected) {
  const topology_manager topo(physical_topology::parse("torus:2x2x2:4"), 30);  // node 7 holds slots 0 and 1
  std::vector<int> pe_of(30);
  std::iota(pe_of.begin(), pe_of.end(), 0);
  const std::vector<int> shuffled = shuffle_nodes(topo, pe_of, 3);
  EXPECT_EQ(shuffled[28], 28);
  EXPECT_EQ(shuffled[29], 29);
  std::vector<int> sorted = shuffled;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, pe_of) << "one object per PE before, one after";
  EXPECT_NE(shuffled, pe_of);
  EXPECT_EQ(invalid_message([&] { shuffle_nodes(topo, std::vector<int>{0, 30}, 1); }),
            "PE of object 1: got '30', expected 0..29");
  EXPECT_EQ(shuffle_nodes(topo, std::vector<int>{}, 1), std::vector<int>{});
}

// ---- multiple instances ---------------------------------------------------------------------

// Bhatele's four OpenAtom instances on 8x4x8: one instance mapped onto the first slab and
// translated along the longest dimension; no physical link carries bytes of two instances, and
// every instance costs the same.
TEST(MultipleInstances, TranslatedInstancesShareNoLink) {
  const topology_manager topo(physical_topology::parse("torus:8x4x8:4"), 1024);
  const topology_manager sub = sub_partition_topology(topo, 4);
  EXPECT_EQ(sub.physical(), physical_topology(std::vector<int>{2, 4, 8},
                                              std::vector<link_kind>{link_kind::mesh, link_kind::torus, link_kind::torus}, 4));
  EXPECT_EQ(sub.num_pes(), 256);
  const comm_pattern atom = small_openatom();
  const std::vector<int> first = map_objects(sub, atom.num_objects, atom.edges, mapper::bisection);
  const std::uint64_t sub_cost = evaluate_mapping(sub, atom.edges, first).hop_bytes;

  std::vector<int> owner(static_cast<std::size_t>(topo.physical().num_nodes() * topo.physical().ndims()), -1);
  for (int index = 0; index < 4; ++index) {
    const std::vector<int> placed = translate_mapping(topo, 4, index, first);
    const std::vector<int> slab = topo.sub_partition(4, index);
    for (const int pe : placed) ASSERT_TRUE(std::binary_search(slab.begin(), slab.end(), pe));
    EXPECT_EQ(evaluate_mapping(topo, atom.edges, placed).hop_bytes, sub_cost) << index;
    const std::vector<std::uint64_t> loads = link_loads(topo, atom.edges, placed);
    int used = 0;
    for (std::size_t l = 0; l < loads.size(); ++l) {
      if (loads[l] == 0) continue;
      ++used;
      EXPECT_EQ(owner[l], -1) << "link " << l << " used by instances " << owner[l] << " and " << index;
      owner[l] = index;
    }
    EXPECT_GT(used, 0);
  }
}

TEST(MultipleInstances, RejectsJobsWhoseSubPartitionsDifferAndPesOutside) {
  const topology_manager part(physical_topology::parse("torus:4x2:2"), 13);
  EXPECT_EQ(invalid_message([&] { sub_partition_topology(part, 2); }).substr(0, 41),
            "PEs of sub-partition 1 of 2: got '5', exp");
  const topology_manager topo(physical_topology::parse("torus:4x2:2"), 16);
  EXPECT_EQ(sub_partition_topology(topo, 1).physical(), topo.physical());  // one part keeps the ring
  EXPECT_EQ(invalid_message([&] { translate_mapping(topo, 2, 1, std::vector<int>{0, 8}); }),
            "PE of object 1 in the sub-partition: got '8', expected 0..7");
  EXPECT_EQ(translate_mapping(topo, 2, 1, std::vector<int>{0, 7}), (std::vector<int>{8, 15}));
}

}  // namespace
}  // namespace transit

#include "transit/mapping/mapping.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <random>
#include <vector>

#include "../support/invalid_message.hpp"
#include "transit/mapping/patterns.hpp"

namespace transit {
namespace {

using testing::invalid_message;

std::vector<comm_edge> stencil(const std::vector<int>& dims, std::uint64_t bytes) {
  return stencil_pattern(dims, bytes).edges;
}

// Objects spread round-robin over PEs, then shuffled: balanced, topology-oblivious.
std::vector<int> random_mapping(int num_objects, int num_pes, std::uint32_t seed) {
  std::vector<int> pe_of(static_cast<std::size_t>(num_objects));
  for (int o = 0; o < num_objects; ++o) pe_of[static_cast<std::size_t>(o)] = o % num_pes;
  std::mt19937 rng(seed);
  std::shuffle(pe_of.begin(), pe_of.end(), rng);
  return pe_of;
}

int max_load(const std::vector<int>& pe_of, int num_pes) {
  std::vector<int> load(static_cast<std::size_t>(num_pes), 0);
  for (const int pe : pe_of) ++load[static_cast<std::size_t>(pe)];
  return *std::max_element(load.begin(), load.end());
}

TEST(HopBytes, SumsBytesTimesHops) {
  const topology_manager topo(physical_topology::parse("torus:8:2"), 16);  // PE p on node p / 2
  const std::vector<comm_edge> edges{{0, 1, 100}, {1, 2, 10}, {2, 0, 1}, {3, 3, 1000}};
  EXPECT_EQ(hop_bytes(topo, edges, std::vector<int>{0, 1, 2, 5}), 100 * 0 + 10 * 1 + 1 * 1 + 0u);
  EXPECT_EQ(hop_bytes(topo, edges, std::vector<int>{0, 8, 14, 5}), 100 * 4 + 10 * 3 + 1 * 1 + 0u);
  EXPECT_EQ(hop_bytes(topo, {}, std::vector<int>{}), 0u);
}

TEST(HopBytes, RejectsUnknownObjectsAndPes) {
  const topology_manager topo(physical_topology::parse("mesh:4:1"), 4);
  const std::vector<comm_edge> edges{{0, 1, 8}, {1, 3, 8}};
  EXPECT_EQ(invalid_message([&] { hop_bytes(topo, edges, std::vector<int>{0, 1, 2}); }),
            "object of communication edge 1: got '3', expected 0..2");
  EXPECT_EQ(invalid_message([&] { hop_bytes(topo, edges, std::vector<int>{0, 1, 2, 4}); }),
            "PE of object 3: got '4', expected 0..3");
  EXPECT_EQ(invalid_message([&] { greedy_mapping(topo, 2, edges); }),
            "object of communication edge 1: got '3', expected 0..1");
  EXPECT_EQ(invalid_message([&] { greedy_mapping(topo, -1, {}); }),
            "number of objects: got '-1', expected at least 0");
}

TEST(GreedyMapping, BalancesObjectsOverPes) {
  const topology_manager topo(physical_topology::parse("torus:3x3:2"), 17);
  for (const int objects : {0, 1, 5, 17, 40, 100}) {
    const auto edges = objects > 1 ? stencil({objects}, 8) : std::vector<comm_edge>{};
    const auto pe_of = greedy_mapping(topo, objects, edges);
    ASSERT_EQ(pe_of.size(), static_cast<std::size_t>(objects));
    if (objects == 0) continue;
    EXPECT_TRUE(std::all_of(pe_of.begin(), pe_of.end(), [&](int pe) { return pe >= 0 && pe < 17; }));
    EXPECT_LE(max_load(pe_of, 17), (objects + 16) / 17) << objects;
  }
}

TEST(GreedyMapping, PlacesDisconnectedPairsTogether) {
  // Four pairs that talk only within the pair, two PEs per node: each pair should share a node.
  const topology_manager topo(physical_topology::parse("mesh:4:2"), 8);
  const std::vector<comm_edge> edges{{0, 7, 50}, {1, 6, 40}, {2, 5, 30}, {3, 4, 20}};
  const auto pe_of = greedy_mapping(topo, 8, edges);
  EXPECT_EQ(hop_bytes(topo, edges, pe_of), 0u);
}

void expect_greedy_beats_random(const char* physical_spec, const std::vector<int>& object_dims) {
  const auto physical = physical_topology::parse(physical_spec);
  const topology_manager topo(physical, physical.capacity());
  const auto edges = stencil(object_dims, 1024);
  const int objects = std::accumulate(object_dims.begin(), object_dims.end(), 1, std::multiplies<>());

  const auto greedy = greedy_mapping(topo, objects, edges);
  const std::uint64_t greedy_cost = hop_bytes(topo, edges, greedy);
  std::uint64_t random_cost = 0;
  for (std::uint32_t seed = 1; seed <= 3; ++seed)
    random_cost += hop_bytes(topo, edges, random_mapping(objects, topo.num_pes(), seed));
  random_cost /= 3;
  const double per_edge = 1024.0 * static_cast<double>(edges.size());
  std::cout << physical_spec << ": hops per stencil edge, greedy "
            << static_cast<double>(greedy_cost) / per_edge << ", random "
            << static_cast<double>(random_cost) / per_edge << "\n";

  EXPECT_LE(max_load(greedy, topo.num_pes()), (objects + topo.num_pes() - 1) / topo.num_pes());
  EXPECT_LT(2 * greedy_cost, random_cost) << physical_spec;
}

TEST(GreedyMapping, HalvesHopBytesOfA3dStencilOnA3dTorus) {
  expect_greedy_beats_random("torus:8x8x8:1", {8, 8, 8});
}

TEST(GreedyMapping, HalvesHopBytesOfA2dStencilOnA2dTorusWithSeveralPesPerNode) {
  expect_greedy_beats_random("torus:4x4:4", {16, 16});  // 4 objects per PE, 4 PEs per node
}

}  // namespace
}  // namespace transit

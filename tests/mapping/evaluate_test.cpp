// evaluate_mapping and link_loads, counted by hand on small machines.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "../support/invalid_message.hpp"
#include "transit/mapping/mapping.hpp"

namespace transit {
namespace {

using testing::invalid_message;

// Link id of the cable from node (x, y) one step up in dimension d, on a machine of 2 dimensions
// whose last has `ny` nodes.
int link(int x, int y, int d, int ny = 4) { return (x * ny + y) * 2 + d; }

// The nonzero entries of a link-load vector.
std::map<int, std::uint64_t> nonzero(const std::vector<std::uint64_t>& loads) {
  std::map<int, std::uint64_t> out;
  for (std::size_t i = 0; i < loads.size(); ++i)
    if (loads[i] != 0) out[static_cast<int>(i)] = loads[i];
  return out;
}

// A 4x4 torus with one PE per node: PE p sits on node (p / 4, p % 4).
const std::vector<int> four_objects_on{0, 3, 10, 5};  // objects 0..3 on (0,0), (0,3), (2,2), (1,1)
const std::vector<comm_edge> four_edges{
    {0, 1, 100},   // (0,0) -> (0,3): one hop, the wrap-around cable of (0,3) in dimension 1
    {0, 2, 10},    // (0,0) -> (2,2): half a ring in both dimensions, taken upwards: 4 hops
    {2, 0, 1},     // (2,2) -> (0,0): upwards again, so round the other halves of both rings
    {3, 1, 1000},  // (1,1) -> (0,3): down 1 in dimension 0, then up 2 (a tie) in dimension 1
};

TEST(EvaluateMapping, CountsHopsWrapAroundAndLinkLoadsOnA4x4Torus) {
  const topology_manager topo(physical_topology::parse("torus:4x4:1"), 16);
  const mapping_quality q = evaluate_mapping(topo, four_edges, four_objects_on);
  EXPECT_EQ(q.hop_bytes, 100u * 1 + 10u * 4 + 1u * 4 + 1000u * 3);
  EXPECT_DOUBLE_EQ(q.average_hops, 3144.0 / 1111.0);
  EXPECT_EQ(q.dilation, 4);
  EXPECT_EQ(q.max_objects_per_pe, 1);

  const std::map<int, std::uint64_t> expected{
      {link(0, 3, 1), 100 + 1},  // edge 0; edge 2's last step (0,3) -> (0,0)
      {link(0, 0, 0), 10},       // edge 1: (0,0) -> (1,0) -> (2,0) ...
      {link(1, 0, 0), 10},
      {link(2, 0, 1), 10},       // ... -> (2,1) -> (2,2)
      {link(2, 1, 1), 10},
      {link(2, 2, 0), 1},        // edge 2: (2,2) -> (3,2) -> (0,2) ...
      {link(3, 2, 0), 1},
      {link(0, 2, 1), 1 + 1000}, // ... -> (0,3) -> (0,0); edge 3's (0,2) -> (0,3)
      {link(0, 1, 0), 1000},     // edge 3: (1,1) -> (0,1) on the cable of (0,1) ...
      {link(0, 1, 1), 1000},     // ... -> (0,2) -> (0,3)
  };
  EXPECT_EQ(nonzero(link_loads(topo, four_edges, four_objects_on)), expected);
  EXPECT_EQ(q.max_link_bytes, 1001u);
}

TEST(EvaluateMapping, MeshRoutesNeverWrap) {
  const topology_manager topo(physical_topology::parse("mesh:4x4:1"), 16);
  const std::vector<comm_edge> edges{{0, 1, 100}, {1, 0, 7}};
  const std::vector<int> on{0, 3};  // (0,0) and (0,3): 3 hops through (0,1) and (0,2)
  const mapping_quality q = evaluate_mapping(topo, edges, on);
  EXPECT_EQ(q.hop_bytes, 321u);
  EXPECT_EQ(q.dilation, 3);
  const std::map<int, std::uint64_t> expected{
      {link(0, 0, 1), 107}, {link(0, 1, 1), 107}, {link(0, 2, 1), 107}};
  EXPECT_EQ(nonzero(link_loads(topo, edges, on)), expected);
  EXPECT_EQ(q.max_link_bytes, 107u);
}

TEST(EvaluateMapping, ARingOfTwoUsesBothCables) {
  const topology_manager topo(physical_topology::parse("torus:2:1"), 2);
  const std::vector<comm_edge> edges{{0, 1, 5}, {1, 0, 9}};
  const std::vector<int> on{0, 1};
  // Both directions are half the ring and go up: 0 -> 1 on cable 0, 1 -> 0 on cable 1 (wrapping).
  EXPECT_EQ(link_loads(topo, edges, on), (std::vector<std::uint64_t>{5, 9}));
}

TEST(EvaluateMapping, DirectedLoadsKeepTheTwoDirectionsOfACableApart) {
  // A ring of 4: 0 -> 2 is half the ring and goes up over cables 0 and 1; 3 -> 2 goes down over
  // cable 2 (from node 2 up to node 3); 1 -> 2 up over cable 1.
  const topology_manager topo(physical_topology::parse("torus:4:1"), 4);
  const std::vector<comm_edge> edges{{0, 2, 5}, {3, 2, 70}, {1, 2, 300}};
  const std::vector<int> on{0, 1, 2, 3};
  const std::vector<std::uint64_t> directed = directed_link_loads(topo, edges, on);
  // entry 2 x cable + 0 up, + 1 down
  EXPECT_EQ(directed, (std::vector<std::uint64_t>{5, 0, 305, 0, 0, 70, 0, 0}));
  const std::vector<std::uint64_t> both = link_loads(topo, edges, on);
  for (std::size_t l = 0; l < both.size(); ++l) EXPECT_EQ(both[l], directed[2 * l] + directed[2 * l + 1]) << l;
  // A switch port: out of the sending node up, into the receiving node down.
  const topology_manager star(physical_topology::parse("switch:3:1"), 3);
  EXPECT_EQ(directed_link_loads(star, std::vector<comm_edge>{{0, 2, 9}}, std::vector<int>{0, 1, 2}),
            (std::vector<std::uint64_t>{9, 0, 0, 0, 0, 9}));
}

TEST(EvaluateMapping, SwitchedDimensionsLoadOnePortAtEachEnd) {
  // 4 nodes of 2 PEs behind one switch: link `node` is the node's port.
  const topology_manager topo(physical_topology::parse("switch:4:2"), 8);
  const std::vector<comm_edge> edges{{0, 1, 30}, {0, 2, 4}, {3, 2, 1000}};
  const std::vector<int> on{0, 5, 4, 1};  // on nodes 0, 2, 2, 0: every edge goes node 0 -> node 2
  const mapping_quality q = evaluate_mapping(topo, edges, on);
  EXPECT_EQ(q.hop_bytes, 30u + 4u + 1000u);
  EXPECT_EQ(q.dilation, 1);
  EXPECT_EQ(link_loads(topo, edges, on), (std::vector<std::uint64_t>{1034, 0, 1034, 0}));
}

TEST(EvaluateMapping, PesOfOneNodeUseNoLinkAndSelfEdgesCostNothing) {
  const topology_manager topo(physical_topology::parse("torus:4x4:4"), 64);
  const std::vector<comm_edge> edges{{0, 1, 50}, {2, 2, 70}};
  const std::vector<int> on{0, 3, 8};  // PEs 0 and 3 share node 0
  const mapping_quality q = evaluate_mapping(topo, edges, on);
  EXPECT_EQ(q.hop_bytes, 0u);
  EXPECT_DOUBLE_EQ(q.average_hops, 0.0);  // 120 bytes, none of them over the network
  EXPECT_EQ(q.dilation, 0);
  EXPECT_EQ(q.max_link_bytes, 0u);
  EXPECT_EQ(q.max_objects_per_pe, 1);
  EXPECT_EQ(evaluate_mapping(topo, {}, std::vector<int>{}).average_hops, 0.0);
  EXPECT_EQ(evaluate_mapping(topo, {}, std::vector<int>{5, 5, 5, 6}).max_objects_per_pe, 3);
}

TEST(EvaluateMapping, LinkLoadsSumToHopBytesOnMeshAndTorus) {
  // Every hop of a mesh or torus route crosses exactly one cable.
  for (const char* spec : {"torus:5x4x3:2", "mesh:3x5:1", "torus:6x2mx3:1"}) {
    const auto phys = physical_topology::parse(spec);
    const topology_manager topo(phys, phys.capacity());
    std::vector<comm_edge> edges;
    std::vector<int> on;
    for (int o = 0; o < 60; ++o) {
      on.push_back((o * 37 + 11) % topo.num_pes());
      edges.push_back({o, (o * 13 + 7) % 60, static_cast<std::uint64_t>(o + 1)});
    }
    std::uint64_t sum = 0;
    for (const std::uint64_t l : link_loads(topo, edges, on)) sum += l;
    EXPECT_EQ(sum, evaluate_mapping(topo, edges, on).hop_bytes) << spec;
  }
}

TEST(EvaluateMapping, RejectsUnknownObjectsAndPes) {
  const topology_manager topo(physical_topology::parse("torus:4x4:1"), 16);
  EXPECT_EQ(invalid_message([&] { evaluate_mapping(topo, four_edges, std::vector<int>{0, 1, 2}); }),
            "object of communication edge 3: got '3', expected 0..2");
  EXPECT_EQ(invalid_message([&] { evaluate_mapping(topo, four_edges, std::vector<int>{0, 1, 2, 16}); }),
            "PE of object 3: got '16', expected 0..15");
  EXPECT_EQ(invalid_message([&] { link_loads(topo, four_edges, std::vector<int>{0, -1, 2, 3}); }),
            "PE of object 1: got '-1', expected 0..15");
}

}  // namespace
}  // namespace transit

#include "transit/topology/topology_manager.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../support/invalid_message.hpp"
#include "transit/grid/virtual_grid.hpp"
#include "transit/topology/machine.hpp"

namespace transit {
namespace {

using testing::invalid_message;

// ---- physical_topology ----------------------------------------------------------------------

TEST(PhysicalTopology, ParsesTorusMeshSwitchAndMixedDimensions) {
  const auto torus = physical_topology::parse("torus:8x4x8:16");
  EXPECT_EQ(torus, physical_topology::torus({8, 4, 8}, 16));
  EXPECT_EQ(torus.num_nodes(), 256);
  EXPECT_EQ(torus.capacity(), 4096);
  EXPECT_TRUE(torus.is_torus(0) && torus.is_torus(1) && torus.is_torus(2));

  EXPECT_EQ(physical_topology::parse("mesh:4x4:2"), physical_topology::mesh({4, 4}, 2));
  EXPECT_EQ(physical_topology::parse("mesh:6"), physical_topology::mesh({6}, 1));  // 1 PE per node
  EXPECT_EQ(physical_topology::parse("switch:64:16"), physical_topology::switched(64, 16));

  const auto mixed = physical_topology::parse("torus:8x4mx8:2");
  EXPECT_EQ(mixed.link(0), link_kind::torus);
  EXPECT_EQ(mixed.link(1), link_kind::mesh);
  EXPECT_EQ(mixed.link(2), link_kind::torus);
}

TEST(PhysicalTopology, StrIsCanonicalAndRoundTrips) {
  for (const char* spec : {"torus:8x4x8:16", "mesh:4x4:2", "switch:64:16", "torus:8x4mx8:2",
                           "mesh:3x4tx5s:1"}) {
    const auto topo = physical_topology::parse(spec);
    EXPECT_EQ(topo.str(), spec);
    EXPECT_EQ(physical_topology::parse(topo.str()), topo);
  }
  EXPECT_EQ(physical_topology::parse("mesh:4x4").str(), "mesh:4x4:1");
  EXPECT_EQ(physical_topology::parse("mesh:4tx4t:3").str(), "torus:4x4:3");
}

TEST(PhysicalTopology, ReadsTransitPhysicalFromTheEnvironment) {
  ::unsetenv("TRANSIT_PHYSICAL");
  EXPECT_FALSE(physical_topology::from_environment().has_value());
  ::setenv("TRANSIT_PHYSICAL", "", 1);
  EXPECT_FALSE(physical_topology::from_environment().has_value());
  ::setenv("TRANSIT_PHYSICAL", "mesh:4x4:2", 1);
  EXPECT_EQ(physical_topology::from_environment(), physical_topology::mesh({4, 4}, 2));
  ::setenv("TRANSIT_PHYSICAL", "ring:4", 1);
  EXPECT_THROW(physical_topology::from_environment(), std::invalid_argument);
  ::unsetenv("TRANSIT_PHYSICAL");
}

TEST(PhysicalTopology, RejectsMalformedSpecsNamingTheSpecAndTheGrammar) {
  for (const char* spec : {"", "torus", "8x4x8", "torus:", "torus:4x4:2:1"}) {
    const std::string message = invalid_message([&] { physical_topology::parse(spec); });
    EXPECT_NE(message.find(std::string("physical topology spec: got '") + spec + "'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("expected KIND:DIMS[:PES_PER_NODE]"), std::string::npos) << message;
  }
  EXPECT_EQ(invalid_message([] { physical_topology::parse("torus:8xqx8"); }),
            "size of dimension 1 in physical topology 'torus:8xqx8': got 'q', expected a positive integer");
  EXPECT_EQ(invalid_message([] { physical_topology::parse("torus:4x4:two"); }),
            "PEs per node in physical topology 'torus:4x4:two': got 'two', expected a positive integer");
  EXPECT_EQ(invalid_message([] { physical_topology::parse("torus:99999999999"); }),
            "size of dimension 0 in physical topology 'torus:99999999999': got '99999999999', "
            "expected a positive integer");
  EXPECT_NE(invalid_message([] { physical_topology::parse("torus:65536x65536"); })
                .find("capacity of the physical topology: got '4294967296'"),
            std::string::npos);
}

TEST(PhysicalTopology, RejectsZeroDimensionsAndZeroPesPerNode) {
  EXPECT_EQ(invalid_message([] { physical_topology::parse("torus:8x0x8:16"); }),
            "size of dimension 1 in physical topology 'torus:8x0x8:16': got '0', expected a positive "
            "integer");
  EXPECT_EQ(invalid_message([] { physical_topology::parse("mesh:4x-2"); }),
            "size of dimension 1 in physical topology 'mesh:4x-2': got '-2', expected a positive integer");
  EXPECT_EQ(invalid_message([] { physical_topology::parse("mesh:4x4:0"); }),
            "PEs per node in physical topology 'mesh:4x4:0': got '0', expected a positive integer");
  EXPECT_EQ(invalid_message([] { physical_topology::torus({4, 0}, 1); }),
            "size of physical dimension 1: got '0', expected at least 1");
}

TEST(PhysicalTopology, RejectsUnknownKinds) {
  EXPECT_EQ(invalid_message([] { physical_topology::parse("ring:8:2"); }),
            "topology kind in 'ring:8:2': got 'ring', expected 'torus', 'mesh', 'switch', 'dragonfly' or 'fattree'");
  EXPECT_EQ(invalid_message([] { physical_topology::parse("Torus:8"); }),
            "topology kind in 'Torus:8': got 'Torus', expected 'torus', 'mesh', 'switch', 'dragonfly' or 'fattree'");
}

// ---- topology_manager -----------------------------------------------------------------------

TEST(TopologyManager, CoordinatesAndPeAtRoundTrip) {
  const topology_manager topo(physical_topology::parse("torus:8x4x8:16"), 4096);
  EXPECT_EQ(topo.ndims(), 4);
  for (int pe = 0; pe < topo.num_pes(); ++pe) {
    const auto c = topo.coords(pe);
    ASSERT_EQ(c.size(), 4u);
    ASSERT_EQ(topo.pe_at(c), pe);
  }
  // PEs fill nodes in order, nodes are row-major with the last dimension fastest.
  EXPECT_EQ(topo.coords(0), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(topo.coords(17), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(topo.coords(16 * (3 * 32 + 2 * 8 + 5) + 7), (std::vector<int>{3, 2, 5, 7}));
  EXPECT_EQ(topo.node_of(16 * 9 + 3), 9);
}

TEST(TopologyManager, JobSmallerThanTheMachineLeavesTrailingSlotsEmpty) {
  const topology_manager topo(physical_topology::parse("mesh:4x4:2"), 7);
  EXPECT_EQ(topo.num_pes(), 7);
  EXPECT_EQ(topo.coords(6), (std::vector<int>{0, 3, 0}));
  EXPECT_EQ(topo.pe_at(std::vector<int>{0, 3, 0}), 6);
  EXPECT_EQ(topo.pe_at(std::vector<int>{0, 3, 1}), -1);
  EXPECT_EQ(topo.pe_at(std::vector<int>{3, 3, 1}), -1);
}

TEST(TopologyManager, RejectsMorePesThanTheMachineHolds) {
  const auto physical = physical_topology::parse("torus:4x4x8:1");
  EXPECT_NO_THROW(topology_manager(physical, 128));
  EXPECT_EQ(invalid_message([&] { topology_manager(physical, 129); }),
            "number of PEs: got '129', expected at most 128, the PE slots of 'torus:4x4x8:1'");
  EXPECT_EQ(invalid_message([&] { topology_manager(physical, 0); }),
            "number of PEs: got '0', expected at least 1");
}

TEST(TopologyManager, RejectsBadCoordinatesAndPes) {
  const topology_manager topo(physical_topology::parse("torus:4x2:2"), 16);
  EXPECT_EQ(invalid_message([&] { topo.pe_at(std::vector<int>{1, 1}); }),
            "number of coordinates: got '2', expected 3 (node dimensions, then the slot on the node)");
  EXPECT_EQ(invalid_message([&] { topo.pe_at(std::vector<int>{1, 2, 0}); }),
            "coordinate 1: got '2', expected 0..1");
  EXPECT_EQ(invalid_message([&] { topo.pe_at(std::vector<int>{1, 1, -1}); }),
            "coordinate 2: got '-1', expected 0..1");
  EXPECT_THROW(topo.hops(0, 16), std::out_of_range);
  EXPECT_THROW(topo.coords(-1), std::out_of_range);
  EXPECT_EQ(invalid_message([&] { topo.nearest(0, {}); }),
            "candidate PEs for nearest: got 'an empty list', expected at least one PE");
}

TEST(TopologyManager, TorusHopsWrapAround) {
  const topology_manager topo(physical_topology::parse("torus:8x4x8:1"), 256);
  auto pe = [&](int x, int y, int z) { return topo.pe_at(std::vector<int>{x, y, z, 0}); };
  EXPECT_EQ(topo.hops(pe(0, 0, 0), pe(0, 0, 0)), 0);
  EXPECT_EQ(topo.hops(pe(0, 0, 0), pe(7, 0, 0)), 1);  // around the ring, not 7
  EXPECT_EQ(topo.hops(pe(0, 0, 0), pe(4, 0, 0)), 4);
  EXPECT_EQ(topo.hops(pe(0, 0, 0), pe(5, 3, 6)), 3 + 1 + 2);
  EXPECT_EQ(topo.hops(pe(1, 1, 1), pe(6, 3, 7)), 3 + 2 + 2);
  // Symmetric, and the diameter is the sum of half the ring sizes.
  int diameter = 0;
  for (int a = 0; a < topo.num_pes(); a += 7)
    for (int b = 0; b < topo.num_pes(); ++b) {
      ASSERT_EQ(topo.hops(a, b), topo.hops(b, a));
      diameter = std::max(diameter, topo.hops(a, b));
    }
  EXPECT_EQ(diameter, 4 + 2 + 4);
}

TEST(TopologyManager, MeshHopsDoNotWrap) {
  const topology_manager topo(physical_topology::parse("mesh:8x4:1"), 32);
  auto pe = [&](int x, int y) { return topo.pe_at(std::vector<int>{x, y, 0}); };
  EXPECT_EQ(topo.hops(pe(0, 0), pe(7, 0)), 7);
  EXPECT_EQ(topo.hops(pe(0, 0), pe(7, 3)), 10);
  EXPECT_EQ(topo.hops(pe(2, 3), pe(5, 1)), 5);

  const topology_manager mixed(physical_topology::parse("torus:8x4m:1"), 32);
  EXPECT_EQ(mixed.hops(mixed.pe_at(std::vector<int>{0, 0, 0}), mixed.pe_at(std::vector<int>{7, 3, 0})),
            1 + 3);
}

TEST(TopologyManager, PesOnTheSameNodeAreZeroHopsApart) {
  const topology_manager topo(physical_topology::parse("torus:4x4:4"), 64);
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b)
      ASSERT_EQ(topo.hops(a, b) == 0, topo.node_of(a) == topo.node_of(b)) << a << " " << b;
  EXPECT_EQ(topo.hops(0, 4), 1);   // next node along the last dimension
  EXPECT_EQ(topo.hops(3, 12), 1);  // node 0 to node 3: wraps around the ring of 4
}

TEST(TopologyManager, NearestPicksFewestHopsAndTheFirstOnTies) {
  const topology_manager topo(physical_topology::parse("torus:8:2"), 16);  // PE p on node p / 2
  EXPECT_EQ(topo.nearest(0, std::vector<int>{8, 6, 1, 14}), 1);   // same node
  EXPECT_EQ(topo.nearest(0, std::vector<int>{8, 4, 14, 2}), 14);  // node 7 wraps to 1 hop
  EXPECT_EQ(topo.nearest(0, std::vector<int>{3, 2, 15}), 3);      // all 1 hop: the first
  EXPECT_EQ(topo.nearest(5, std::vector<int>{9}), 9);
}

TEST(TopologyManager, PickClosestPicksFewestHopsTheFirstOfEqualsAndRejectsNoCandidates) {
  const topology_manager topo(physical_topology::parse("torus:8:2"), 16);  // PE p on node p / 2
  EXPECT_EQ(topo.pick_closest(0, std::vector<int>{8, 6, 1, 14}), 1);   // same node
  EXPECT_EQ(topo.pick_closest(0, std::vector<int>{8, 4, 14, 2}), 14);  // node 7 wraps to 1 hop
  EXPECT_EQ(topo.pick_closest(0, std::vector<int>{3, 2, 15}), 3);      // all 1 hop: the first
  EXPECT_EQ(topo.pick_closest(0, std::vector<int>{15, 2, 3}), 15);
  EXPECT_EQ(invalid_message([&] { topo.pick_closest(0, {}); }),
            "candidate PEs for pick_closest: got 'an empty list', expected at least one PE");
}

TEST(TopologyManager, SubPartitionSplitsTheLongestDimensionFirstOfEquals) {
  // 8x4x8 nodes of 4 PEs: dimensions 0 and 2 are longest, so dimension 0 is split into 4 slabs of
  // 2 x 4 x 8 nodes = 256 PEs, listed row-major within the slab (node coordinates, then slot).
  const topology_manager topo(physical_topology::parse("torus:8x4x8:4"), 1024);
  EXPECT_EQ(topo.longest_dimension(), 0);
  std::vector<int> all;
  for (int index = 0; index < 4; ++index) {
    const std::vector<int> pes = topo.sub_partition(4, index);
    ASSERT_EQ(pes.size(), 256u);
    for (int q = 0; q < 256; ++q) {
      const std::vector<int> expected{2 * index + q / 128, (q / 32) % 4, (q / 4) % 8, q % 4};
      ASSERT_EQ(topo.coords(pes[static_cast<std::size_t>(q)]), expected) << index << " " << q;
    }
    all.insert(all.end(), pes.begin(), pes.end());
  }
  std::sort(all.begin(), all.end());  // the four slabs cover every PE once
  for (int pe = 0; pe < 1024; ++pe) ASSERT_EQ(all[static_cast<std::size_t>(pe)], pe);
  EXPECT_EQ(topo.sub_partition(1, 0).size(), 1024u);

  // The longest dimension may be any: here dimension 1.
  const topology_manager tall(physical_topology::parse("torus:4x8x2:1"), 64);
  EXPECT_EQ(tall.longest_dimension(), 1);
  EXPECT_EQ(tall.sub_partition(2, 1).front(), tall.pe_at(std::vector<int>{0, 4, 0, 0}));
  EXPECT_EQ(tall.sub_partition(2, 1)[2], tall.pe_at(std::vector<int>{0, 5, 0, 0}));

  // A job smaller than the machine: the sub-partitions list only the PEs that exist.
  const topology_manager part(physical_topology::parse("mesh:4x2:2"), 13);  // slots 13..15 empty
  EXPECT_EQ(part.sub_partition(2, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(part.sub_partition(2, 1), (std::vector<int>{8, 9, 10, 11, 12}));
}

TEST(TopologyManager, SubPartitionRejectsPartsThatDoNotDivideAndBadIndices) {
  const topology_manager topo(physical_topology::parse("torus:8x4x8:4"), 1024);
  EXPECT_EQ(invalid_message([&] { topo.sub_partition(3, 0); }),
            "number of sub-partitions: got '3', expected a divisor of 8, the longest dimension (0) of "
            "'torus:8x4x8:4'");
  EXPECT_EQ(invalid_message([&] { topo.sub_partition(0, 0); }).substr(0, 33), "number of sub-partitions: got '0'");
  EXPECT_EQ(invalid_message([&] { topo.sub_partition(4, 4); }), "sub-partition index: got '4', expected 0..3");
  EXPECT_EQ(invalid_message([&] { topo.sub_partition(4, -1); }), "sub-partition index: got '-1', expected 0..3");
}

TEST(TopologyManager, SortByHopsIsStable) {
  const topology_manager topo(physical_topology::parse("torus:8:2"), 16);
  const std::vector<int> pes{8, 3, 15, 1, 6, 2, 14, 9, 0};
  // Hops from PE 0: 8->4, 3->1, 15->1, 1->0, 6->3, 2->1, 14->1, 9->4, 0->0.
  EXPECT_EQ(topo.sort_by_hops(0, pes), (std::vector<int>{1, 0, 3, 15, 2, 14, 6, 8, 9}));
  EXPECT_TRUE(topo.sort_by_hops(0, {}).empty());
}

TEST(TopologyManager, DefaultMachineIsNodesTimesPesOneSwitchHopApart) {
  const auto m = machine::uniform(10, 4);  // nodes of 4, 4 and 2 PEs
  const topology_manager topo(m);
  EXPECT_EQ(topo.physical().str(), "switch:3:4");
  EXPECT_EQ(topo.num_pes(), 10);
  EXPECT_EQ(topo.coords(9), (std::vector<int>{2, 1}));
  EXPECT_EQ(topo.pe_at(std::vector<int>{2, 3}), -1);  // the short last node
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b) ASSERT_EQ(topo.hops(a, b), m.node_of(a) == m.node_of(b) ? 0 : 1);

  // Node grouping is taken from the machine even where its PEs are not consecutive.
  const topology_manager scattered(machine::from_node_ids({1, 0, 1, 0, 2}));
  EXPECT_EQ(scattered.hops(0, 2), 0);
  EXPECT_EQ(scattered.hops(0, 1), 1);
  EXPECT_EQ(scattered.coords(2), (std::vector<int>{1, 1}));
  EXPECT_EQ(scattered.pe_at(std::vector<int>{2, 0}), 4);
}

TEST(TopologyManager, ForJobPrefersTheOptionThenTheEnvironmentThenTheMachine) {
  const auto m = machine::uniform(8, 2);
  ::setenv("TRANSIT_PHYSICAL", "mesh:2x2:2", 1);
  EXPECT_EQ(topology_manager::for_job(m, physical_topology::parse("torus:4:2")).physical().str(),
            "torus:4:2");
  EXPECT_EQ(topology_manager::for_job(m, std::nullopt).physical().str(), "mesh:2x2:2");
  ::unsetenv("TRANSIT_PHYSICAL");
  EXPECT_EQ(topology_manager::for_job(m, std::nullopt).physical().str(), "switch:4:2");
  EXPECT_THROW(topology_manager::for_job(machine::uniform(9, 2), physical_topology::parse("torus:4:2")),
               std::invalid_argument);
}

// ---- minimal_routing_grids ------------------------------------------------------------------

bool contains(const std::vector<std::vector<int>>& grids, const std::vector<int>& dims) {
  return std::find(grids.begin(), grids.end(), dims) != grids.end();
}

TEST(MinimalRoutingGrids, EnumeratesConsecutiveMergesWithPesLast) {
  EXPECT_EQ(minimal_routing_grids(physical_topology::parse("torus:4x4x8:1")),
            (std::vector<std::vector<int>>{{128}, {4, 32}, {16, 8}, {4, 4, 8}}));
  EXPECT_EQ(minimal_routing_grids(physical_topology::parse("torus:4x8:4")),
            (std::vector<std::vector<int>>{
                {128}, {4, 32}, {32, 4}, {4, 8, 4}, {32, 2, 2}, {4, 8, 2, 2}}));
  EXPECT_EQ(minimal_routing_grids(physical_topology::parse("mesh:1x6x1:1")),
            (std::vector<std::vector<int>>{{6}}));
  EXPECT_EQ(minimal_routing_grids(physical_topology::parse("mesh:1:1")),
            (std::vector<std::vector<int>>{{1}}));
  EXPECT_EQ(minimal_routing_grids(physical_topology::switched(5, 6)),
            (std::vector<std::vector<int>>{{30}, {5, 6}, {5, 2, 3}, {5, 3, 2}}));
}

TEST(MinimalRoutingGrids, ContainsTheBlueGeneQRowsOfTable41) {
  // A Blue Gene/Q partition A x B x C x D x E = 4x4x4x4x2 with T = 16 PEs per node.
  const auto grids = minimal_routing_grids(physical_topology::parse("torus:4x4x4x4x2:16"));
  auto has = [&](const std::vector<int>& dims) { return contains(grids, dims); };
  EXPECT_TRUE(has({4 * 4 * 4 * 4 * 2 * 16}));   // 1D: ABCDET
  EXPECT_TRUE(has({4 * 4 * 4 * 4 * 2, 16}));    // 2D: ABCDE, T
  EXPECT_TRUE(has({4 * 4 * 4, 4 * 2, 16}));     // 3D: ABC, DE, T
  EXPECT_TRUE(has({4 * 4, 4, 4 * 2, 16}));      // 4D: AB, C, DE, T
  EXPECT_TRUE(has({4 * 4, 4, 4 * 2, 4, 4}));    // 5D: AB, C, DE, T/4, 4
  EXPECT_TRUE(has({4, 4, 4, 4, 2, 16}));        // the physical topology itself
  for (const auto& dims : grids) {
    EXPECT_EQ(std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>()), 8192);
    EXPECT_TRUE(std::all_of(dims.begin(), dims.end(), [](int s) { return s > 1; }));
  }
  // 2^5 ways to cut the 6 items; the 16 with T alone also split as 2x8, 4x4 and 8x2.
  EXPECT_EQ(grids.size(), 32u + 16u * 3u);
}

TEST(MinimalRoutingGrids, NeverMergesNonConsecutiveDimensions) {
  const auto grids = minimal_routing_grids(physical_topology::parse("mesh:2x3x5:4"));
  auto has = [&](const std::vector<int>& dims) { return contains(grids, dims); };
  EXPECT_TRUE(has({2, 15, 4}));    // B and C merged
  EXPECT_TRUE(has({6, 20}));       // A, B merged; C merged with T
  EXPECT_FALSE(has({10, 3, 4}));   // A with C: not consecutive
  EXPECT_FALSE(has({3, 2, 5, 4})); // reordered dimensions
  EXPECT_FALSE(has({2, 3, 5, 4, 1}));
}

// ---- routing through virtual grids on a physical torus --------------------------------------

struct route_cost {
  std::int64_t virtual_hops = 0;
  std::int64_t physical_hops = 0;
};

// Routes one item from slot `from` to slot `to` of a virtual grid with `dims` whose slot s holds PE
// pe_of_slot[s]: dimension-ordered as in thesis 3.3.1 (highest differing dimension first), each
// virtual hop going straight to the peer along that dimension, costing the physical hops between
// the two PEs.
route_cost route(const topology_manager& topo, const std::vector<int>& dims,
                 const std::vector<int>& pe_of_slot, int from, int to) {
  route_cost cost;
  int stride = 1;
  int at = from;
  for (std::size_t d = dims.size(); d-- > 0;) {
    const int here = (at / stride) % dims[d];
    const int there = (to / stride) % dims[d];
    if (here != there) {
      const int next = at + (there - here) * stride;
      cost.physical_hops += topo.hops(pe_of_slot[static_cast<std::size_t>(at)],
                                      pe_of_slot[static_cast<std::size_t>(next)]);
      ++cost.virtual_hops;
      at = next;
    }
    stride *= dims[d];
  }
  EXPECT_EQ(at, to);
  return cost;
}

// Physical hops of all-to-all traffic: through the grid, and direct.
struct all_to_all_cost {
  route_cost routed;
  std::int64_t direct_hops = 0;
  std::int64_t pairs_longer_than_direct = 0;
};

all_to_all_cost all_to_all(const topology_manager& topo, const std::vector<int>& dims,
                           const std::vector<int>& pe_of_slot) {
  all_to_all_cost total;
  const int n = static_cast<int>(pe_of_slot.size());
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      const route_cost r = route(topo, dims, pe_of_slot, from, to);
      const int direct = topo.hops(pe_of_slot[static_cast<std::size_t>(from)],
                                   pe_of_slot[static_cast<std::size_t>(to)]);
      total.routed.virtual_hops += r.virtual_hops;
      total.routed.physical_hops += r.physical_hops;
      total.direct_hops += direct;
      if (r.physical_hops > direct) ++total.pairs_longer_than_direct;
    }
  }
  return total;
}

std::vector<int> identity(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::string str(const std::vector<int>& dims) {
  std::string out;
  for (const int s : dims) {
    if (!out.empty()) out += 'x';
    out += std::to_string(s);
  }
  return out;
}

TEST(VirtualGridRouting, MergedConsecutiveDimensionsKeepEveryRouteMinimal) {
  for (const char* spec : {"torus:4x4x4:4", "torus:6x5:1", "mesh:3x4tx5:2", "switch:6:4"}) {
    const auto physical = physical_topology::parse(spec);
    const topology_manager topo(physical, physical.capacity());
    for (const auto& dims : minimal_routing_grids(physical)) {
      // PE p in slot p: what virtual_grid(dims, num_pes) does, and where the topology puts p.
      const auto cost = all_to_all(topo, dims, identity(topo.num_pes()));
      EXPECT_EQ(cost.pairs_longer_than_direct, 0) << spec << " grid " << str(dims);
      EXPECT_EQ(cost.routed.physical_hops, cost.direct_hops) << spec << " grid " << str(dims);
    }
  }
}

TEST(VirtualGridRouting, VirtualGridOfAMinimalGridPutsEveryPeInItsMachineSlot) {
  // The routing tests above use slot p = PE p; virtual_grid must agree, also for partial jobs.
  const auto physical = physical_topology::parse("torus:4x3x2:4");
  for (const int num_pes : {96, 50, 1}) {
    for (const auto& dims : minimal_routing_grids(physical)) {
      const virtual_grid grid(dims, num_pes);
      for (int pe = 0; pe < num_pes; ++pe) ASSERT_EQ(grid.slot_of(pe), pe) << str(dims);
    }
  }
}

TEST(VirtualGridRouting, RandomlyPermutedGridDilatesRoutes) {
  const auto physical = physical_topology::parse("torus:4x4x4:4");
  const topology_manager topo(physical, physical.capacity());
  const int n = topo.num_pes();

  // Thesis 3.4.4: under a random mapping every intermediate message travels, on average, the mean
  // distance between two distinct PEs.
  std::int64_t pair_hops = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) pair_hops += topo.hops(a, b);
  const double mean_pair_hops = static_cast<double>(pair_hops) / (static_cast<double>(n) * (n - 1));

  std::mt19937 rng(20140101);
  for (const auto& dims : minimal_routing_grids(physical)) {
    std::vector<int> pe_of_slot = identity(n);
    std::shuffle(pe_of_slot.begin(), pe_of_slot.end(), rng);
    const auto cost = all_to_all(topo, dims, pe_of_slot);
    const double dilation =
        static_cast<double>(cost.routed.physical_hops) / static_cast<double>(cost.direct_hops);
    const double hops_per_message =
        static_cast<double>(cost.routed.physical_hops) / static_cast<double>(cost.routed.virtual_hops);
    std::cout << "grid " << str(dims) << ": " << static_cast<double>(cost.routed.physical_hops) / (n * n)
              << " physical hops per item through a random mapping vs "
              << static_cast<double>(cost.direct_hops) / (n * n) << " direct (dilation " << dilation
              << "), " << hops_per_message << " per message (mean pair distance " << mean_pair_hops
              << ")\n";
    if (dims.size() == 1) {
      // One dimension: every item goes straight to its destination, so no mapping can dilate.
      EXPECT_EQ(cost.routed.physical_hops, cost.direct_hops);
      continue;
    }
    EXPECT_GT(cost.routed.physical_hops, cost.direct_hops) << str(dims);
    EXPECT_GT(cost.pairs_longer_than_direct, 0) << str(dims);
    EXPECT_NEAR(hops_per_message, mean_pair_hops, 0.1 * mean_pair_hops) << str(dims);
    if (dims.size() == 5) {
      // 4x4x4x2x2: 3.25 messages per item on average, each about a random pair apart.
      EXPECT_GT(dilation, 2.5) << str(dims);
    }
  }
}

}  // namespace
}  // namespace transit

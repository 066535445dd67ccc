// Dragonflies and fat trees: their specs, their hops (the routers SimGrid's minimal route crosses)
// and the SimGrid platform and hostfile every physical topology writes out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/invalid_message.hpp"
#include "transit/mapping/mapping.hpp"
#include "transit/mapping/patterns.hpp"
#include "transit/topology/simgrid_platform.hpp"
#include "transit/topology/topology_manager.hpp"

namespace transit {
namespace {

using testing::invalid_message;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Hops between the first PEs of the nodes at the given coordinates (one PE per node).
int node_hops(const topology_manager& topo, std::vector<int> a, std::vector<int> b) {
  a.push_back(0);
  b.push_back(0);
  return topo.hops(topo.pe_at(a), topo.pe_at(b));
}

TEST(IndirectNetworks, DragonflyAndFatTreeSpecsParseAndRoundTrip) {
  const auto dragonfly = physical_topology::parse("dragonfly:4x6x16x4:24");
  EXPECT_EQ(dragonfly, physical_topology::dragonfly(4, 6, 16, 4, 24));
  EXPECT_EQ(dragonfly.network(), network_kind::dragonfly);
  EXPECT_EQ(dragonfly.num_nodes(), 4 * 6 * 16 * 4);
  EXPECT_EQ(dragonfly.str(), "dragonfly:4x6x16x4:24");
  const auto tree = physical_topology::parse("fattree:8x16");
  EXPECT_EQ(tree, physical_topology::fat_tree({8, 16}, 1));
  EXPECT_EQ(tree.network(), network_kind::fat_tree);
  EXPECT_EQ(tree.str(), "fattree:8x16:1");
  EXPECT_EQ(physical_topology::parse(tree.str()), tree);
  // Same dimensions, other networks: not equal.
  EXPECT_NE(physical_topology::parse("fattree:2x2x4x2:1"), physical_topology::parse("dragonfly:2x2x4x2:1"));
  EXPECT_NE(physical_topology::parse("switch:8:1"), physical_topology::parse("fattree:8:1"));
}

TEST(IndirectNetworks, RejectsMalformedDragonfliesAndFatTrees) {
  EXPECT_EQ(invalid_message([] { physical_topology::parse("dragonfly:4x6x16"); }),
            "dimensions of dragonfly 'dragonfly:4x6x16': got '3', expected 4: groups x chassis per group x routers "
            "per chassis x nodes per router");
  EXPECT_EQ(invalid_message([] { physical_topology::parse("dragonfly:5x2x4x2"); }),
            "dragonfly groups: got '5', expected at most 4, the routers per chassis (SimGrid's minimal routing "
            "attaches group g's global link to router g of chassis 0)");
  // Per-dimension link suffixes belong to direct networks only.
  EXPECT_EQ(invalid_message([] { physical_topology::parse("fattree:4tx4"); }),
            "size of dimension 0 in physical topology 'fattree:4tx4': got '4t', expected a positive integer");
  EXPECT_NE(invalid_message([] { physical_topology::parse("hypertree:4"); })
                .find("expected 'torus', 'mesh', 'switch', 'dragonfly' or 'fattree'"),
            std::string::npos);
}

// Worked by hand from SimGrid's DragonflyZone::get_local_route: between groups the route goes to
// router <target group> of its chassis, then chassis 0, over the global link, arriving at router
// <source group> of chassis 0, then on to the target's router and chassis.
TEST(IndirectNetworks, DragonflyHopsAreTheRoutersOfSimGridsMinimalRoute) {
  const topology_manager topo(physical_topology::parse("dragonfly:2x2x4x2:1"), 32);  // group, chassis, router, node
  EXPECT_EQ(node_hops(topo, {0, 0, 0, 0}, {0, 0, 0, 0}), 0);
  EXPECT_EQ(node_hops(topo, {0, 0, 0, 0}, {0, 0, 0, 1}), 1);  // one router
  EXPECT_EQ(node_hops(topo, {0, 0, 0, 0}, {0, 0, 1, 0}), 2);  // a link inside chassis 0
  EXPECT_EQ(node_hops(topo, {0, 0, 0, 0}, {0, 1, 0, 0}), 2);  // a link between chassis
  EXPECT_EQ(node_hops(topo, {0, 0, 0, 0}, {0, 1, 1, 0}), 3);
  // SimGrid's route takes the router reached inside a chassis to be in chassis 0, so changing
  // router inside chassis 1 costs a link between chassis too.
  EXPECT_EQ(node_hops(topo, {0, 1, 0, 0}, {0, 1, 1, 0}), 3);
  EXPECT_EQ(node_hops(topo, {0, 0, 0, 0}, {1, 0, 0, 0}), 3);  // to router 1, global link to router 0
  EXPECT_EQ(node_hops(topo, {0, 0, 1, 0}, {1, 0, 0, 0}), 2);  // router 1 of chassis 0 holds the global link
  EXPECT_EQ(node_hops(topo, {0, 1, 3, 0}, {1, 1, 2, 1}), 6);  // the longest: every step taken
  for (int a = 0; a < 32; ++a)
    for (int b = 0; b < 32; ++b) {
      ASSERT_EQ(topo.hops(a, b) == 0, a == b);
      ASSERT_LE(topo.hops(a, b), 6);
    }
}

TEST(IndirectNetworks, FatTreeHopsClimbToTheLowestCommonSwitch) {
  const topology_manager topo(physical_topology::parse("fattree:2x3x2:2"), 24);
  EXPECT_EQ(node_hops(topo, {0, 0, 0}, {0, 0, 1}), 1);  // one leaf switch
  EXPECT_EQ(node_hops(topo, {0, 0, 0}, {0, 2, 1}), 3);  // up to level 2 and down
  EXPECT_EQ(node_hops(topo, {0, 0, 0}, {1, 0, 0}), 5);  // over the top
  EXPECT_EQ(topo.hops(0, 1), 0);                         // two PEs of one node
  EXPECT_EQ(minimal_routing_grids(topo.physical()).front(), std::vector<int>{24});
}

// Mapping works on both: evaluate_mapping counts the exact hops, and every mapper gives each
// object a PE.
TEST(IndirectNetworks, MappersPlaceObjectsOnDragonfliesAndFatTrees) {
  const comm_pattern stencil = stencil_pattern(std::vector<int>{8, 8}, 8);
  for (const char* spec : {"dragonfly:2x2x4x2:2", "fattree:2x4x4:2"}) {
    const topology_manager topo(physical_topology::parse(spec), 64);
    std::vector<mapper> mappers{mapper::block, mapper::greedy, mapper::bisection};
    if (has_scotch()) mappers.push_back(mapper::scotch);
    for (const mapper m : mappers) {
      const std::vector<int> pe_of = map_objects(topo, stencil.num_objects, stencil.edges, m);
      ASSERT_EQ(pe_of.size(), 64u) << spec;
      std::uint64_t expected = 0;
      for (const comm_edge& e : stencil.edges)
        expected += e.bytes * static_cast<std::uint64_t>(
                                  topo.hops(pe_of[static_cast<std::size_t>(e.a)], pe_of[static_cast<std::size_t>(e.b)]));
      EXPECT_EQ(evaluate_mapping(topo, stencil.edges, pe_of).hop_bytes, expected) << spec << " " << to_string(m);
    }
    EXPECT_NE(invalid_message([&] { sub_partition_topology(topo, 2); }).find("expected a torus, mesh or switch"),
              std::string::npos);
  }
}

TEST(SimgridPlatform, WritesEachNetworkAsTheClusterThatNumbersNodesLikeTransit) {
  const std::string torus = simgrid_platform(physical_topology::parse("torus:8x4x2:16"));
  EXPECT_TRUE(contains(torus, "topology=\"TORUS\" topo_parameters=\"2,4,8\"")) << torus;  // reversed
  // Size-1 dimensions are left out (SimGrid declares a node's link to itself twice otherwise).
  const std::string squeezed = simgrid_platform(physical_topology::parse("torus:2x1x2x1x2:16"));
  EXPECT_TRUE(contains(squeezed, "topology=\"TORUS\" topo_parameters=\"2,2,2\"")) << squeezed;
  const std::string one = simgrid_platform(physical_topology::parse("torus:1x1:4"));
  EXPECT_TRUE(contains(one, "topology=\"TORUS\" topo_parameters=\"1\"")) << one;
  EXPECT_TRUE(contains(torus, "radical=\"0-63\"")) << torus;
  EXPECT_TRUE(contains(torus, "core=\"16\"")) << torus;
  EXPECT_TRUE(contains(torus, "bw=\"2e+09Bps\"")) << torus;
  EXPECT_TRUE(contains(simgrid_platform(physical_topology::parse("dragonfly:2x3x4x2:4")),
                       "topology=\"DRAGONFLY\" topo_parameters=\"2,1;3,1;4,1;2\""));
  // Bottom-up: 4 nodes per leaf, 3 leaves per level-2 switch, 2 of those; as many parents as children.
  EXPECT_TRUE(contains(simgrid_platform(physical_topology::parse("fattree:2x3x4:1")),
                       "topology=\"FAT_TREE\" topo_parameters=\"3;4,3,2;1,4,3;1,1,1\""));
  const std::string flat = simgrid_platform(physical_topology::parse("switch:5:2"));
  EXPECT_FALSE(contains(flat, "topology=")) << flat;
  EXPECT_TRUE(contains(flat, "radical=\"0-4\"")) << flat;
  // A mesh: routers and cables, 2 x 3 nodes: 1 x 3 cables along dimension 0, 2 x 2 along dimension 1.
  const std::string mesh = simgrid_platform(physical_topology::parse("mesh:2x3:1"));
  EXPECT_TRUE(contains(mesh, "routing=\"Dijkstra\"")) << mesh;
  EXPECT_TRUE(contains(mesh, "<route src=\"router-0\" dst=\"router-3\" symmetrical=\"NO\"><link_ctn id=\"cable-0-0\"/></route>"));
  EXPECT_TRUE(contains(mesh, "<route src=\"router-4\" dst=\"router-5\" symmetrical=\"NO\"><link_ctn id=\"cable-1-4\"/></route>"));
  EXPECT_FALSE(contains(mesh, "cable-1-5")) << "a mesh does not wrap";
  const std::string ring = simgrid_platform(physical_topology::parse("mesh:2x3t:1"));
  EXPECT_TRUE(contains(ring, "<route src=\"router-5\" dst=\"router-3\" symmetrical=\"NO\"><link_ctn id=\"cable-1-5\"/></route>"));
}

TEST(SimgridPlatform, HostfilePutsEachRankOnItsNode) {
  const topology_manager topo(physical_topology::parse("torus:3:2"), 5);
  EXPECT_EQ(simgrid_hostfile(topo), "node-0\nnode-0\nnode-1\nnode-1\nnode-2\n");
}

TEST(SimgridPlatform, RejectsFiguresThatAreNotPositiveAndFinite) {
  const auto torus = physical_topology::parse("torus:2x2:1");
  platform_links links;
  links.link_bytes_per_second = 0;
  EXPECT_EQ(invalid_message([&] { simgrid_platform(torus, links); }),
            "link bandwidth (bytes per second): got '0', expected a positive, finite number");
  links = {};
  links.link_latency_seconds = -1e-6;
  EXPECT_EQ(invalid_message([&] { simgrid_platform(torus, links); }),
            "link latency (seconds): got '-1e-06', expected a finite number of seconds >= 0");
  links = {};
  links.nic_bytes_per_second = -1;
  EXPECT_EQ(invalid_message([&] { simgrid_platform(torus, links); }),
            "network interface bandwidth (bytes per second): got '-1', expected a finite number >= 0 (0: none)");
}

TEST(SimgridPlatform, ANetworkInterfaceIsALimiterLinkWhereSimGridLimitsOnlyNodes) {
  platform_links links;
  links.nic_bytes_per_second = 3e9;
  EXPECT_NE(simgrid_platform(physical_topology::parse("torus:2x2:1"), links).find("limiter_link=\"3e+09Bps\""),
            std::string::npos);
  EXPECT_EQ(simgrid_platform(physical_topology::parse("torus:2x2:1")).find("limiter_link"), std::string::npos);
  // A fat tree's or a dragonfly's node injects through its own link: no limiter (SimGrid would
  // limit every switch too), and the platform says so rather than dropping the figure silently.
  const std::string tree = simgrid_platform(physical_topology::parse("fattree:2x3x2:1"), links);
  EXPECT_EQ(tree.find("limiter_link"), std::string::npos);
  EXPECT_NE(tree.find("interface bandwidth given (3e+09 B/s) applies to tori"), std::string::npos);
}

}  // namespace
}  // namespace transit

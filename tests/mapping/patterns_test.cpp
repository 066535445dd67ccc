// The pattern generators and the OpenAtom prism placement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "../support/invalid_message.hpp"
#include "transit/mapping/patterns.hpp"

namespace transit {
namespace {

using testing::invalid_message;

TEST(StencilPattern, EveryObjectSendsToItsNextNeighbourInEveryDimension) {
  const comm_pattern p = stencil_pattern(std::vector<int>{3, 4}, 16);
  EXPECT_EQ(p.name, "stencil2d 3x4");
  EXPECT_EQ(p.num_objects, 12);
  ASSERT_EQ(p.edges.size(), 24u);
  std::set<std::pair<int, int>> pairs;
  for (const comm_edge& e : p.edges) {
    EXPECT_EQ(e.bytes, 16u);
    pairs.emplace(e.a, e.b);
  }
  EXPECT_TRUE(pairs.count({0, 1}) && pairs.count({3, 0}) && pairs.count({0, 4}) && pairs.count({8, 0}));
  EXPECT_TRUE(pairs.count({11, 8}) && pairs.count({11, 3}));  // both wrap-arounds of the last object
  EXPECT_EQ(stencil_pattern(std::vector<int>{5, 1}, 1).edges.size(), 5u);  // size 1: no edges
  EXPECT_EQ(invalid_message([] { stencil_pattern(std::vector<int>{4, 0}, 1); }),
            "stencil dimension 1: got '0', expected at least 1");
  EXPECT_EQ(invalid_message([] { stencil_pattern(std::vector<int>{}, 1); }),
            "stencil dimensions: got 'none', expected at least one");
}

TEST(RandomPattern, IsDeterministicAndNeverTalksToItself) {
  const comm_pattern p = random_pattern(100, 4, 50, 9);
  EXPECT_EQ(p.edges.size(), 400u);
  for (const comm_edge& e : p.edges) {
    EXPECT_NE(e.a, e.b);
    EXPECT_TRUE(e.b >= 0 && e.b < 100);
    EXPECT_TRUE(e.bytes >= 1 && e.bytes <= 50);
  }
  const comm_pattern q = random_pattern(100, 4, 50, 9);
  const comm_pattern other = random_pattern(100, 4, 50, 10);
  EXPECT_TRUE(std::equal(p.edges.begin(), p.edges.end(), q.edges.begin(),
                         [](const comm_edge& x, const comm_edge& y) { return x.a == y.a && x.b == y.b && x.bytes == y.bytes; }));
  EXPECT_FALSE(std::equal(p.edges.begin(), p.edges.end(), other.edges.begin(),
                          [](const comm_edge& x, const comm_edge& y) { return x.b == y.b; }));
  EXPECT_EQ(invalid_message([] { random_pattern(1, 1, 1, 0); }),
            "objects of a random pattern: got '1', expected at least 2");
}

TEST(OpenAtomPattern, HasTheArraysAndTrafficOfThePaper) {
  openatom_sizes sizes;
  sizes.states = 8;
  sizes.planes = 4;
  sizes.state_block = 3;  // blocks {0,1,2} {3,4,5} {6,7}
  sizes.plane_bytes = 400;
  const openatom_layout l(sizes);
  EXPECT_EQ(l.blocks(), 3);
  EXPECT_EQ(l.num_objects(), 32 + 32 + 4 + 4 + 9 * 4);
  const comm_pattern p = openatom_pattern(sizes);
  EXPECT_EQ(p.num_objects, l.num_objects());
  std::map<std::pair<int, int>, std::uint64_t> bytes;
  for (const comm_edge& e : p.edges) bytes[{e.a, e.b}] += e.bytes;
  // Transposes: all planes of a state, both ways, a plane's share each.
  EXPECT_EQ((bytes[{l.gspace(5, 0), l.realspace(5, 3)}]), 100u);
  EXPECT_EQ((bytes[{l.realspace(5, 3), l.gspace(5, 0)}]), 100u);
  EXPECT_EQ(bytes.count({l.gspace(5, 0), l.realspace(4, 0)}), 0u);  // never across states
  // Density: plane-wise.
  EXPECT_EQ((bytes[{l.realspace(2, 1), l.density_real(1)}]), 400u);
  EXPECT_EQ(bytes.count({l.realspace(2, 1), l.density_real(2)}), 0u);
  EXPECT_EQ((bytes[{l.density_real(1), l.density_g(3)}]), 100u);
  // Pair calculators: G(s, p) with P(i, j, p) when s is in block i or j.
  EXPECT_EQ((bytes[{l.gspace(4, 2), l.pair(1, 2, 2)}]), 400u);
  EXPECT_EQ((bytes[{l.pair(0, 1, 2), l.gspace(4, 2)}]), 400u);
  EXPECT_EQ(bytes.count({l.gspace(4, 2), l.pair(0, 2, 2)}), 0u);
  EXPECT_EQ(bytes.count({l.gspace(4, 2), l.pair(1, 1, 3)}), 0u);  // another plane
  EXPECT_EQ(invalid_message([] { openatom_layout({8, 0, 1, 100}); }), "OpenAtom planes: got '0', expected at least 1");
  EXPECT_EQ(invalid_message([] { openatom_layout({8, 16, 1, 10}); }),
            "OpenAtom plane bytes: got '10', expected at least the number of planes (16)");
}

// The paper's setting: 128 states x 32 planes on 8x4x8 nodes of 4 PEs, so one prism per line of 8
// nodes along dimension 0.
void expect_prism_properties(const topology_manager& topo, const openatom_sizes& sizes, bool full) {
  const openatom_layout l(sizes);
  const std::vector<int> pe_of = openatom_prism_mapping(topo, sizes);
  ASSERT_EQ(pe_of.size(), static_cast<std::size_t>(l.num_objects()));
  std::vector<int> load(static_cast<std::size_t>(topo.num_pes()), 0);
  for (const int pe : pe_of) {
    ASSERT_TRUE(pe >= 0 && pe < topo.num_pes());
    ++load[static_cast<std::size_t>(pe)];
  }
  const int cap = (l.num_objects() + topo.num_pes() - 1) / topo.num_pes();
  EXPECT_LE(*std::max_element(load.begin(), load.end()), cap);
  const int axis = topo.longest_dimension();
  for (int p = 0; p < sizes.planes; ++p) {
    int previous = -1;
    for (int s = 0; s < sizes.states; ++s) {  // states in increasing order along the long axis
      const int along = topo.coords(pe_of[static_cast<std::size_t>(l.gspace(s, p))])[static_cast<std::size_t>(axis)];
      EXPECT_GE(along, previous) << "plane " << p << " state " << s;
      previous = along;
    }
  }
  if (full) {
    // One prism per plane: a line along the long axis, so the other coordinates are constant; and
    // RealSpace of a state sits on PEs of GSpace of that state (Algorithm 1).
    for (int p = 0; p < sizes.planes; ++p) {
      std::set<std::vector<int>> lines;
      for (int s = 0; s < sizes.states; ++s) {
        std::vector<int> c = topo.coords(pe_of[static_cast<std::size_t>(l.gspace(s, p))]);
        c.erase(c.begin() + axis);
        c.pop_back();  // the slot
        lines.insert(c);
      }
      EXPECT_EQ(lines.size(), 1u) << "plane " << p;
    }
    for (int s = 0; s < sizes.states; ++s) {
      std::set<int> g_pes;
      for (int p = 0; p < sizes.planes; ++p) g_pes.insert(pe_of[static_cast<std::size_t>(l.gspace(s, p))]);
      for (int p = 0; p < sizes.planes; ++p)
        EXPECT_TRUE(g_pes.count(pe_of[static_cast<std::size_t>(l.realspace(s, p))])) << "state " << s << " plane " << p;
    }
  }
  // And it beats the topology-unaware default.
  const comm_pattern pattern = openatom_pattern(sizes);
  EXPECT_LT(evaluate_mapping(topo, pattern.edges, pe_of).hop_bytes,
            evaluate_mapping(topo, pattern.edges, map_objects(topo, pattern.num_objects, pattern.edges, mapper::block)).hop_bytes);
}

TEST(OpenAtomPrismMapping, OnAFullPartition) {
  const topology_manager topo(physical_topology::parse("torus:8x4x8:4"), 1024);
  expect_prism_properties(topo, openatom_sizes{}, true);
}

TEST(OpenAtomPrismMapping, OnAPartialPartition) {
  // 1000 of 1024 slots (the last nodes partly empty), and a smaller torus with 100 of 128.
  expect_prism_properties(topology_manager(physical_topology::parse("torus:8x4x8:4"), 1000), openatom_sizes{}, false);
  openatom_sizes small;
  small.states = 16;
  small.planes = 8;
  small.state_block = 4;
  expect_prism_properties(topology_manager(physical_topology::parse("torus:4x4x4:2"), 100), small, false);
  // More planes than PEs: prisms share PEs, the cap still holds.
  expect_prism_properties(topology_manager(physical_topology::parse("mesh:3:1"), 3), small, false);
}

}  // namespace
}  // namespace transit

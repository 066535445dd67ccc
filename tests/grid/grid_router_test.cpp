#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "grid_checks.hpp"
#include "transit/grid/router.hpp"

namespace transit {
namespace {

using testing::ceil_div;
using testing::check_router;
using testing::grid_case;
using testing::route_expectations;
using testing::uneven_machine;

/// Row-major grids of 1 to 6 dimensions, balanced, skewed, full and partially populated, and
/// node_pe grids of even and uneven machines, for `pes` PEs.
std::vector<grid_case> grid_cases(int pes) {
  const machine flat(pes);
  std::vector<grid_case> cases;
  const auto add = [&](std::vector<int> dims) {
    cases.push_back({virtual_grid(std::move(dims), pes), flat});
  };
  cases.push_back({virtual_grid::direct(pes), flat});
  for (const int ndims : {2, 3, 4, 6}) cases.push_back({virtual_grid::balanced(pes, ndims), flat});
  add({2, ceil_div(pes, 2)});
  add({ceil_div(pes, 2), 2});
  add({ceil_div(pes, 6), 3, 2});
  add({2, 1, ceil_div(pes, 4), 2});
  add({4, 4, 4});
  add({2, 2, 2, 2, 2, 2});
  add({5, 13});
  if (pes <= 60) add({3, 5, 2, 2});
  for (const int per_node : {1, 3, 4, 8}) {
    const machine m = machine::uniform(pes, per_node);
    cases.push_back({virtual_grid::node_pe(m), m});
  }
  for (const std::vector<int>& sizes :
       std::vector<std::vector<int>>{{3, 1, 2}, {1, 4}, {5, 5, 2}, {4, 3, 2, 1}}) {
    const machine m = uneven_machine(pes, sizes);
    cases.push_back({virtual_grid::node_pe(m), m});
  }
  std::vector<int> round_robin(pes);
  for (int pe = 0; pe < pes; ++pe) round_robin[pe] = pe % 3;
  if (pes >= 3) {
    const machine m = machine::from_node_ids(round_robin);
    cases.push_back({virtual_grid::node_pe(m), m});
  }
  return cases;
}

TEST(GridRouter, EveryPairEveryShapeUpTo64Pes) {
  for (int pes = 1; pes <= 64; ++pes) {
    for (const auto& [grid, m] : grid_cases(pes)) {
      const auto r = make_router(routing::grid, grid, m);
      ASSERT_EQ(r->kind(), routing::grid);
      EXPECT_EQ(r->max_hops(), grid.ndims());
      int buffers = 0;
      for (const int size : grid.dims()) buffers += size - 1;
      route_expectations expect;
      expect.hops_are_grid_peers = true;
      expect.max_next_hop_peers = [buffers](int) { return buffers; };
      const std::string label = std::to_string(pes) + " PEs on " + grid.str();
      check_router(*r, expect, label);
      // Routes stay minimal: one hop per differing coordinate, even around empty slots.
      for (int src = 0; src < pes; ++src) {
        for (int dest = 0; dest < pes; ++dest) {
          int hops = 0;
          for (hop at{src, -1}; at.pe != dest; ++hops) at = r->next_hop(at.pe, dest, at.phase);
          if (hops != grid.distance(src, dest)) {
            ADD_FAILURE() << label << ": route " << src << "->" << dest << " takes " << hops
                          << " hops";
            break;
          }
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(GridRouter, FullGridsCorrectTheHighestDifferingDimensionFirst) {
  const virtual_grid g({3, 4, 2, 3}, 72);
  const auto r = make_router(routing::grid, g, machine(72));
  EXPECT_EQ(r->num_phases(), 4);  // no pre phases without empty slots
  for (int src = 0; src < 72; ++src) {
    for (int dest = 0; dest < 72; ++dest) {
      if (src == dest) continue;
      auto expected = g.coords(src);
      const auto target = g.coords(dest);
      int dim = g.ndims() - 1;
      while (expected[dim] == target[dim]) --dim;
      expected[dim] = target[dim];
      const hop next = r->next_hop(src, dest, -1);
      ASSERT_EQ(next.pe, g.pe_at(expected));
      ASSERT_EQ(next.phase, g.ndims() - 1 - dim)
          << "phase = position of the dimension in the routing order";
    }
  }
}

TEST(GridRouter, PartialBlockDetoursThroughAFullSubBlock) {
  // 3x4 with 10 PEs: row 2 holds (2,0) and (2,1) only. From PE 9 = (2,1) to PE 3 = (0,3), the
  // highest-first route would visit the empty (2,3); the pre hop goes to (0,1) first.
  const virtual_grid g({3, 4}, 10);
  const auto r = make_router(routing::grid, g, machine(10));
  EXPECT_EQ(r->num_phases(), 3);
  EXPECT_EQ(r->next_hop(9, 3, -1), (hop{1, 0}));
  EXPECT_EQ(r->next_hop(1, 3, 0), (hop{3, 1}));
  // From a full row, the thesis order: last dimension first.
  EXPECT_EQ(r->next_hop(3, 9, -1), (hop{1, 1}));
  EXPECT_EQ(r->next_hop(1, 9, 1), (hop{9, 2}));
}

TEST(GridRouter, UnevenNodesRouteThroughTheLargerNode) {
  // Node 0 has 4 PEs, node 1 has 2: (1, 3) does not exist.
  const machine m = machine::from_node_ids({0, 0, 0, 0, 1, 1});
  const virtual_grid g = virtual_grid::node_pe(m);
  const auto r = make_router(routing::grid, g, m);
  EXPECT_EQ(r->next_hop(3, 5, -1), (hop{1, 1}));  // (0,3) -> (0,1) inside the node first
  EXPECT_EQ(r->next_hop(1, 5, 1), (hop{5, 2}));
  EXPECT_EQ(r->next_hop(5, 3, -1), (hop{1, 0}));  // (1,1) -> (0,1): cross to the larger node first
  EXPECT_EQ(r->next_hop(1, 3, 0), (hop{3, 1}));
}

TEST(GridRouter, SizeOneDimensionsEndRoutesEarly) {
  // On 1x4 every hop runs along the last dimension and ends the route: no destinations travel.
  const transit::machine m(4);
  const auto flat = transit::make_router(transit::routing::grid, transit::virtual_grid({1, 4}, 4), m);
  const transit::hop h = flat->next_hop(0, 3, -1);
  EXPECT_TRUE(flat->ends_route(h.phase));
  EXPECT_TRUE(flat->ends_route(flat->num_phases() - 1));
  // On 2x2 a hop along the last dimension may be followed by one along the first.
  const auto square = transit::make_router(transit::routing::grid, transit::virtual_grid({2, 2}, 4), m);
  const transit::hop first = square->next_hop(0, 3, -1);
  EXPECT_FALSE(square->ends_route(first.phase));
  EXPECT_TRUE(square->ends_route(square->next_hop(first.pe, 3, first.phase).phase));
}

TEST(Routing, NamesRoundTrip) {
  for (const routing kind : {routing::grid, routing::node_aware, routing::node_aware_advanced})
    EXPECT_EQ(parse_routing(to_string(kind)), kind);
  EXPECT_EQ(to_string(routing::node_aware_advanced), "node-aware-advanced");
  try {
    parse_routing("mesh");
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "routing scheme: got 'mesh', expected 'grid', 'node-aware' or 'node-aware-advanced'");
  }
}

TEST(Routing, MakeRouterRejectsAGridOfAnotherMachine) {
  try {
    make_router(routing::grid, virtual_grid({4, 4}, 16), machine(12));
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "number of PEs in grid 4x4: got '16', expected the machine's 12 PEs");
  }
}

}  // namespace
}  // namespace transit

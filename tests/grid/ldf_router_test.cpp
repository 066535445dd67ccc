#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "grid_checks.hpp"
#include "grid/routers.hpp"
#include "transit/grid/router.hpp"

namespace transit {
namespace {

using testing::check_router;
using testing::expect_invalid;
using testing::route_expectations;

/// The grids HiCOO routes requests over (fcg, mfcg, cfcg, hypercube) and a few skewed ones.
std::vector<virtual_grid> hicoo_grids(int nodes) {
  std::vector<virtual_grid> grids{virtual_grid::direct(nodes), virtual_grid::balanced(nodes, 2),
                                  virtual_grid::balanced(nodes, 3), virtual_grid({2, 3, 4}, std::min(nodes, 24)),
                                  virtual_grid({5, 2}, std::min(nodes, 10))};
  if ((nodes & (nodes - 1)) == 0) {
    std::vector<int> cube;
    for (int n = nodes; n > 1; n /= 2) cube.push_back(2);
    if (cube.empty()) cube.push_back(1);
    grids.emplace_back(cube, nodes);
  }
  return grids;
}

TEST(LdfRouter, RouterContractOnEveryShapeUpTo64Nodes) {
  for (int nodes = 1; nodes <= 64; ++nodes) {
    for (const auto& grid : hicoo_grids(nodes)) {
      const auto r = std::make_unique<detail::ldf_router>(grid);
      int buffers = 0;
      for (const int size : grid.dims()) buffers += size - 1;
      route_expectations expect;
      expect.hops_are_grid_peers = true;
      expect.max_next_hop_peers = [buffers](int) { return buffers; };
      const std::string label = std::to_string(grid.num_pes()) + " nodes on " + grid.str();
      check_router(*r, expect, label);
      for (int src = 0; src < grid.num_pes(); ++src) {
        for (int dest = 0; dest < grid.num_pes(); ++dest) {
          int hops = 0;
          for (hop at{src, -1}; at.pe != dest; ++hops) at = r->next_hop(at.pe, dest, at.phase);
          ASSERT_EQ(hops, grid.distance(src, dest)) << label << ": route " << src << "->" << dest;
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Algorithm 1 with the condition "D <= M": the fastest-varying differing coordinate (HiCOO's
// lowest dimension) is corrected first, skipping a move that would land past the last node.
TEST(LdfRouter, EachHopTakesTheLowestDimensionWhoseMoveExists) {
  for (const auto& grid : {virtual_grid({3, 4, 2, 3}, 72), virtual_grid({3, 3, 3}, 22), virtual_grid({4, 5}, 13)}) {
    const auto r = std::make_unique<detail::ldf_router>(grid);
    for (int src = 0; src < grid.num_pes(); ++src) {
      for (int dest = 0; dest < grid.num_pes(); ++dest) {
        if (src == dest) continue;
        const auto target = grid.coords(dest);
        int expected = -1;
        for (int dim = grid.ndims() - 1; dim >= 0 && expected < 0; --dim) {
          auto moved = grid.coords(src);
          if (moved[dim] == target[dim]) continue;
          moved[dim] = target[dim];
          expected = grid.pe_at(moved);
        }
        const hop next = r->next_hop(src, dest, -1);
        ASSERT_EQ(next.pe, expected) << grid.str() << ": " << src << "->" << dest;
        ASSERT_EQ(next.phase, grid.ndims() - grid.distance(src, dest));
      }
    }
  }
}

TEST(LdfRouter, PartialGridSkipsToTheNextDimension) {
  // 3x3 (HiCOO: x fastest) with 7 nodes: the last row holds node 6 = (2,0) only. From 6 to
  // 2 = (0,2), correcting x first would land on the empty (2,2): y goes first, then x.
  const virtual_grid g({3, 3}, 7);
  const auto r = std::make_unique<detail::ldf_router>(g);
  EXPECT_EQ(r->next_hop(6, 2, -1), (hop{0, 0}));
  EXPECT_EQ(r->next_hop(0, 2, 0), (hop{2, 1}));
  // From a full row, x first.
  EXPECT_EQ(r->next_hop(5, 6, -1), (hop{3, 0}));
  EXPECT_EQ(r->next_hop(3, 6, 0), (hop{6, 1}));
}

// The one-sided layer keeps one request buffer per next-hop node, whatever the phase, and relies
// on the dependencies between those links being acyclic (docs/one_sided.md has the proof): a
// request holding link (u, v) waits only for link (v, w) of its route. Checked on every shape.
TEST(LdfRouter, LinkDependenciesAreAcyclicWithOneLinkPerPeer) {
  for (int nodes = 1; nodes <= 64; ++nodes) {
    for (const auto& grid : hicoo_grids(nodes)) {
      const auto r = std::make_unique<detail::ldf_router>(grid);
      const int n = grid.num_pes();
      std::set<std::pair<int, int>> links;
      std::map<std::pair<int, int>, std::set<std::pair<int, int>>> waits_for;
      for (int src = 0; src < n; ++src) {
        for (int dest = 0; dest < n; ++dest) {
          std::pair<int, int> held{-1, -1};
          for (hop at{src, -1}; at.pe != dest;) {
            const hop next = r->next_hop(at.pe, dest, at.phase);
            const std::pair<int, int> link{at.pe, next.pe};
            links.insert(link);
            if (held.first >= 0) waits_for[held].insert(link);
            held = link;
            at = next;
          }
        }
      }
      // Depth-first search for a cycle.
      std::map<std::pair<int, int>, int> state;  // 1: on the stack, 2: done
      std::function<bool(const std::pair<int, int>&)> cyclic = [&](const std::pair<int, int>& link) {
        state[link] = 1;
        for (const auto& next : waits_for[link]) {
          if (state[next] == 1 || (state[next] == 0 && cyclic(next))) return true;
        }
        state[link] = 2;
        return false;
      };
      for (const auto& link : links) {
        if (state[link] == 0) {
          ASSERT_FALSE(cyclic(link)) << n << " nodes on " << grid.str();
        }
      }
    }
  }
}

// One-sided replies retrace their requests' route by sending each one back to the node it came
// in from, found once per requesting node by following its route to the replying node: that is
// the route's previous hop for every target only if the routes from one source form a tree (each
// node entered from one predecessor, whatever the destination). Checked on every shape.
TEST(LdfRouter, RoutesFromOneSourceFormATree) {
  for (int nodes = 1; nodes <= 64; ++nodes) {
    for (const auto& grid : hicoo_grids(nodes)) {
      const auto r = std::make_unique<detail::ldf_router>(grid);
      const int n = grid.num_pes();
      for (int src = 0; src < n; ++src) {
        std::map<int, int> entered_from;  // node -> its predecessor on the routes from src
        for (int dest = 0; dest < n; ++dest) {
          for (hop at{src, -1}; at.pe != dest;) {
            const hop next = r->next_hop(at.pe, dest, at.phase);
            const auto [it, added] = entered_from.emplace(next.pe, at.pe);
            ASSERT_EQ(it->second, at.pe) << n << " nodes on " << grid.str() << ": from " << src << " node " << next.pe
                                         << " is entered from " << it->second << " and from " << at.pe;
            at = next;
          }
        }
      }
    }
  }
}

TEST(LdfRouter, RejectsGridsWithHolesBeforeTheLastPe) {
  const machine m = machine::from_node_ids({0, 0, 0, 1, 1, 2, 2, 2});  // rows of 3, 2, 3 PEs
  expect_invalid([&] { detail::ldf_router(virtual_grid::node_pe(m)); },
                 {"empty slot 5 of grid 3x3", "lowest-dimension-first", "leading slots"});
}

TEST(LdfRouter, IsNotAPublicRoutingScheme) {
  // One-sided builds it directly; the streamer's options cannot name it.
  expect_invalid([] { parse_routing("lowest-dimension-first"); }, {"routing scheme", "lowest-dimension-first"});
}

}  // namespace
}  // namespace transit

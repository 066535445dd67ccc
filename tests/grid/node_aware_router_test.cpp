#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "grid_checks.hpp"
#include "transit/grid/router.hpp"

namespace transit {
namespace {

using testing::ceil_div;
using testing::check_router;
using testing::expect_invalid;
using testing::grid_case;
using testing::route_expectations;
using testing::uneven_machine;

/// Grids whose rows are the nodes of a machine, for `pes` PEs: node_pe grids of even and uneven
/// machines (1 to 8 PEs per node, so teams of zero, one or several PEs, with and without leftover
/// PEs), and 3-D and 4-D grids over uniform machines whose node grid may be partially populated.
std::vector<grid_case> node_grid_cases(int pes) {
  std::vector<grid_case> cases;
  for (const int per_node : {1, 2, 3, 4, 6, 8}) {
    const machine m = machine::uniform(pes, per_node);
    cases.push_back({virtual_grid::node_pe(m), m});
  }
  for (const std::vector<int>& sizes :
       std::vector<std::vector<int>>{{3, 1, 2}, {4, 4, 1}, {1, 5}, {8, 7, 6, 5}}) {
    const machine m = uneven_machine(pes, sizes);
    cases.push_back({virtual_grid::node_pe(m), m});
  }
  if (pes >= 3) {
    std::vector<int> round_robin(pes);
    for (int pe = 0; pe < pes; ++pe) round_robin[pe] = pe % 3;
    const machine m = machine::from_node_ids(round_robin);
    cases.push_back({virtual_grid::node_pe(m), m});
  }
  for (const auto& [per_node, node_dims] :
       std::vector<std::pair<int, int>>{{2, 2}, {4, 2}, {8, 2}, {3, 3}, {8, 3}, {1, 2}}) {
    const machine m = machine::uniform(pes, per_node);
    const virtual_grid node_grid = virtual_grid::balanced(m.num_nodes(), node_dims);
    std::vector<int> dims(node_grid.dims().begin(), node_grid.dims().end());
    dims.push_back(m.max_pes_per_node());
    cases.push_back({virtual_grid(dims, pes), m});
  }
  return cases;
}

/// Buffer bound of the thesis (section 5.5.2) where its assumptions hold, and of the documented
/// generalisation elsewhere (see docs/routing.md, "Node-aware routing").
int next_hop_peer_bound(const virtual_grid& g, const machine& m, int pe, bool advanced,
                        bool node_grid_has_holes) {
  const int n = g.ndims();
  const int node_size = m.pes_on_node(m.node_of(pe));
  const int local = g.coord(pe, n - 1);
  const int detour = node_grid_has_holes ? 2 : 1;  // pre-phase sends go to a second team
  if (node_size <
      n) {  // one PE per team; this PE serves every dimension d with floor(d*S/N) = local
    int bound = node_size - 1;
    for (int d = 0; d + 1 < n; ++d) {
      if (d * node_size / n == local) bound += detour * (g.dims()[d] - 1);
    }
    return bound;
  }
  const int team_size = node_size / n;
  const int dim = local / team_size;
  if (dim >= n) return n;  // no team: forwards only
  if (dim == n - 1) return node_size - 1;
  const int extent = g.dims()[dim];
  if (!advanced) return detour * (extent - 1) + n - 1;  // thesis: s_x + N - 2
  // Thesis: s_x / T + N - 2 (+ T - 1 for distribution inside the team); a member's block may not
  // hold its own coordinate, so it may send to all ceil(s_x / T) of them.
  return detour * ceil_div(extent, team_size) + n - 1 + team_size - 1;
}

void check_all_cases(routing kind) {
  const bool advanced = kind == routing::node_aware_advanced;
  for (int pes = 1; pes <= 64; ++pes) {
    for (const auto& [grid, m] : node_grid_cases(pes)) {
      const auto r = make_router(kind, grid, m);
      ASSERT_EQ(r->kind(), kind);
      const int n = grid.ndims();
      EXPECT_EQ(r->max_hops(), (advanced ? 3 : 2) * n);
      const int nodes_in_grid = grid.num_slots() / grid.dims().back();
      const bool holes = nodes_in_grid != m.num_nodes() && n > 2;
      route_expectations expect;
      expect.all_broadcast_roots = false;
      expect.max_next_hop_peers = [&, advanced, holes](int pe) {
        return next_hop_peer_bound(grid, m, pe, advanced, holes);
      };
      const std::string label = std::string(to_string(kind)) + ", " + std::to_string(pes) +
                                " PEs on " + grid.str() + " with " + std::to_string(m.num_nodes()) +
                                " nodes";
      check_router(*r, expect, label);
      // Every hop stays in a node or moves to a node that differs in one node coordinate.
      for (int src = 0; src < pes; ++src) {
        for (const hop& link : r->out_links(src)) {
          int differing = 0;
          for (int d = 0; d + 1 < n; ++d)
            differing += grid.coord(src, d) != grid.coord(link.pe, d) ? 1 : 0;
          EXPECT_LE(differing, 1) << label << ": " << src << " -> " << link.pe;
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(NodeAwareRouter, EveryPairEveryShapeUpTo64Pes) { check_all_cases(routing::node_aware); }

TEST(NodeAwareAdvancedRouter, EveryPairEveryShapeUpTo64Pes) {
  check_all_cases(routing::node_aware_advanced);
}

std::vector<int> route(const router& r, int src, int dest) {
  std::vector<int> pes{src};
  for (hop at{src, -1}; at.pe != dest;) {
    at = r.next_hop(at.pe, dest, at.phase);
    pes.push_back(at.pe);
  }
  return pes;
}

TEST(NodeAwareRouter, ReproducesThesisTable5_1) {
  // 4-D grid, 8 PEs per node, teams of 2: (a,b,c,d) -> (w,x,y,z) visits (a,b,c,4+d%2),
  // (a,b,y,2+d%2), (a,x,y,d%2), (w,x,y,6+d%2), (w,x,y,z).
  const virtual_grid g({3, 3, 3, 8}, 216);
  const machine m = machine::uniform(216, 8);
  const auto r = make_router(routing::node_aware, g, m);
  for (const int d : {0, 1, 3, 7}) {
    for (const int z : {0, 5}) {
      const auto pe = [&](int c0, int c1, int c2, int c3) {
        return g.pe_at(std::vector<int>{c0, c1, c2, c3});
      };
      std::vector<int> expected{pe(0, 0, 0, d)};
      if (d / 2 != 2) expected.push_back(pe(0, 0, 0, 4 + d % 2));
      expected.push_back(pe(0, 0, 1, 2 + d % 2));
      expected.push_back(pe(0, 1, 1, d % 2));
      expected.push_back(pe(1, 1, 1, 6 + d % 2));
      if (6 + d % 2 != z) expected.push_back(pe(1, 1, 1, z));
      EXPECT_EQ(route(*r, expected.front(), pe(1, 1, 1, z)), expected)
          << "d = " << d << ", z = " << z;
    }
  }
}

TEST(NodeAwareRouter, TeamsSendAndReceiveAsInThesisTable5_2) {
  // 4 dimensions, 8 PEs per node: team t = local ranks 2t, 2t+1 sends along dimension t and
  // receives along dimension t+1 (team 3 along dimension 0).
  const virtual_grid g({2, 3, 2, 8}, 96);
  const auto r = make_router(routing::node_aware, g, machine::uniform(96, 8));
  for (int pe = 0; pe < 96; ++pe) {
    const int team = g.coord(pe, 3) / 2;
    for (const hop& link : r->out_links(pe)) {
      for (int d = 0; d < 3; ++d) {
        if (g.coord(pe, d) == g.coord(link.pe, d)) continue;
        EXPECT_EQ(d, team) << pe << " sends along " << d;
        EXPECT_EQ(g.coord(link.pe, 3) / 2, d == 0 ? 3 : d - 1) << "receiving team";
      }
    }
  }
}

TEST(NodeAwareAdvancedRouter, MembersSendOnlyForTheirBlockOfDestinations) {
  // 2-D: 5 nodes x 6 PEs, teams of 3: team 0 sends along the node dimension; member p handles
  // destination nodes in block p (sizes 2, 2, 1) and sends to the member of team 1 at the block
  // of its own node index (Algorithm 2's offset).
  const virtual_grid g({5, 6}, 30);
  const auto r = make_router(routing::node_aware_advanced, g, machine::uniform(30, 6));
  const std::vector<int> block{0, 0, 1, 1, 2};
  for (int node = 0; node < 5; ++node) {
    for (int member = 0; member < 3; ++member) {
      const int pe = node * 6 + member;
      for (const hop& link : r->out_links(pe)) {
        const int to_node = link.pe / 6;
        if (to_node == node) continue;
        EXPECT_EQ(block[to_node], member);
        EXPECT_EQ(link.pe % 6, 3 + block[node]);
      }
    }
  }
}

TEST(NodeAwareRouter, RejectsGridsThatDoNotDescribeNodes) {
  const machine m = machine::uniform(16, 4);
  for (const routing kind : {routing::node_aware, routing::node_aware_advanced}) {
    expect_invalid([&] { make_router(kind, virtual_grid::direct(16), m); },
                   {"grid for node-aware routing", "'16'", "at least 2 dimensions"});
    expect_invalid([&] { make_router(kind, virtual_grid({2, 8}, 16), m); },
                   {"last dimension of grid 2x8", "'8'", "the machine's 4 PEs per node"});
    // 4 PEs per node, but nodes interleaved: grid row 0 would mix nodes 0 and 1.
    std::vector<int> interleaved(16);
    for (int pe = 0; pe < 16; ++pe) interleaved[pe] = pe % 4;
    expect_invalid(
        [&] { make_router(kind, virtual_grid({4, 4}, 16), machine::from_node_ids(interleaved)); },
        {"placement of PE 1", "node 1, grid row 0", "exactly one node"});
    EXPECT_NO_THROW(make_router(kind, virtual_grid::node_pe(machine::from_node_ids(interleaved)),
                                machine::from_node_ids(interleaved)));
  }
}

}  // namespace
}  // namespace transit

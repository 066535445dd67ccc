// All-to-all analysis of grid routing on full grids (TRAM thesis section 3.4): the equations
// 3.4 to 3.6 and table 3.2 must follow from the routes the grid router produces.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "transit/grid/router.hpp"
#include "transit/topology/machine.hpp"

namespace transit {
namespace {

/// paths[a][b]: number of source-destination pairs whose route uses the hop a -> b.
std::map<std::pair<int, int>, long> paths_per_edge(const router& r) {
  std::map<std::pair<int, int>, long> paths;
  const int pes = r.grid().num_pes();
  for (int src = 0; src < pes; ++src) {
    for (int dest = 0; dest < pes; ++dest) {
      for (hop at{src, -1}; at.pe != dest;) {
        const hop next = r.next_hop(at.pe, dest, at.phase);
        ++paths[{at.pe, next.pe}];
        at = next;
      }
    }
  }
  return paths;
}

int differing_dim(const virtual_grid& g, int a, int b) {
  for (int d = 0; d < g.ndims(); ++d) {
    if (g.coord(a, d) != g.coord(b, d)) return d;
  }
  return -1;
}

class ThesisLoadEquations : public ::testing::TestWithParam<std::vector<int>> {};

TEST_P(ThesisLoadEquations, PathsPerEdgeLoadPerDimensionAndPerLine) {
  const std::vector<int> dims = GetParam();
  long slots = 1;
  for (const int size : dims) slots *= size;
  const int pes = static_cast<int>(slots);
  const virtual_grid g(dims, pes);
  const auto r = make_router(routing::grid, g, machine(pes));
  const auto paths = paths_per_edge(*r);
  const int n = g.ndims();

  // (3.4) l_x = prod(s) / s_x paths meet at every edge along dimension x.
  for (int a = 0; a < pes; ++a) {
    for (const int b : g.peers(a)) {
      const int x = differing_dim(g, a, b);
      const auto found = paths.find({a, b});
      ASSERT_NE(found, paths.end()) << a << " -> " << b;
      EXPECT_EQ(found->second, slots / dims[x]) << "edge " << a << " -> " << b << " along " << x;
    }
  }
  for (const auto& [edge, count] : paths) EXPECT_TRUE(g.is_peer(edge.first, edge.second));

  // (3.5) L_x = prod(s): the paths a PE routes along x, counting the s_x - 1 edges to its peers
  // and the pairs for which a is the x-step's start but the coordinate already agrees (b = a):
  // sources matching a in dims 0..x, destinations matching a in dims x..N-1.
  for (int a = 0; a < pes; ++a) {
    for (int x = 0; x < n; ++x) {
      long load = 0;
      for (const int b : g.peers(a)) {
        if (differing_dim(g, a, b) == x) load += paths.at({a, b});
      }
      long stay = 1;
      for (int d = 0; d < n; ++d) {
        if (d != x) stay *= dims[d];
      }
      EXPECT_EQ(load, (dims[x] - 1) * slots / dims[x]) << "PE " << a << ", dimension " << x;
      EXPECT_EQ(load + stay, slots) << "PE " << a << ", dimension " << x;
    }
  }

  // (3.6) B_x = (s_x - 1) * prod(s) paths along each line of dimension x.
  for (int x = 0; x < n; ++x) {
    std::map<std::vector<int>, long> per_line;
    for (const auto& [edge, count] : paths) {
      if (differing_dim(g, edge.first, edge.second) != x) continue;
      auto line = g.coords(edge.first);
      line[x] = -1;
      per_line[line] += count;
    }
    EXPECT_EQ(static_cast<long>(per_line.size()), slots / dims[x]);
    for (const auto& [line, load] : per_line)
      EXPECT_EQ(load, (dims[x] - 1) * slots) << "dimension " << x;
  }
}

INSTANTIATE_TEST_SUITE_P(FullGrids, ThesisLoadEquations,
                         ::testing::Values(std::vector<int>{4, 3, 2}, std::vector<int>{2, 5},
                                           std::vector<int>{3, 2, 2, 3}, std::vector<int>{7}));

long binomial(int n, int k) {
  long value = 1;
  for (int i = 1; i <= k; ++i) value = value * (n - k + i) / i;
  return value;
}

TEST(ThesisTable3_2, DistributionOfMessagesPerItem) {
  const std::map<std::vector<int>, std::vector<long>> table{
      {{32, 32, 32}, {1, 93, 2883, 29791}},
      {{16, 16, 16, 16}, {1, 60, 1350, 13500, 50625}},
  };
  for (const auto& [dims, expected] : table) {
    int pes = 1;
    for (const int size : dims) pes *= size;
    const virtual_grid g(dims, pes);
    const auto r = make_router(routing::grid, g, machine(pes));
    for (const int source : {0, pes / 3}) {
      std::vector<long> count(dims.size() + 1, 0);
      for (int dest = 0; dest < pes; ++dest) {
        int messages = 0;
        for (hop at{source, -1}; at.pe != dest; ++messages) at = r->next_hop(at.pe, dest, at.phase);
        ++count[messages];
      }
      EXPECT_EQ(count, expected) << g.str();
      const int n = static_cast<int>(dims.size());
      for (int a = 0; a <= n; ++a) {  // (3.3)
        long power = 1;
        for (int i = 0; i < a; ++i) power *= dims[0] - 1;
        EXPECT_EQ(count[a], binomial(n, a) * power);
      }
    }
  }
}

}  // namespace
}  // namespace transit

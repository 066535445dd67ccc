#include "transit/grid/virtual_grid.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "grid_checks.hpp"
#include "transit/topology/machine.hpp"

namespace transit {
namespace {

using testing::expect_invalid;

TEST(VirtualGrid, FullGridCoordinatesAreRowMajor) {
  const virtual_grid g({4, 3, 2}, 24);
  EXPECT_EQ(g.ndims(), 3);
  EXPECT_EQ(g.num_pes(), 24);
  EXPECT_EQ(g.num_slots(), 24);
  EXPECT_EQ(g.str(), "4x3x2");
  EXPECT_EQ(g.stride(0), 6);
  EXPECT_EQ(g.stride(1), 2);
  EXPECT_EQ(g.stride(2), 1);
  EXPECT_EQ(g.coords(0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(g.coords(1), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(g.coords(2), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(g.coords(23), (std::vector<int>{3, 2, 1}));
  for (int pe = 0; pe < g.num_pes(); ++pe) {
    const auto c = g.coords(pe);
    EXPECT_EQ(g.pe_at(c), pe);
    for (int d = 0; d < g.ndims(); ++d) EXPECT_EQ(g.coord(pe, d), c[d]);
  }
}

TEST(VirtualGrid, PartiallyPopulatedGridLeavesTheTrailingSlotsEmpty) {
  const virtual_grid g({3, 4}, 10);
  EXPECT_EQ(g.num_pes(), 10);
  EXPECT_EQ(g.num_slots(), 12);
  EXPECT_EQ(g.pe_at(std::vector<int>{2, 1}), 9);
  EXPECT_EQ(g.pe_at(std::vector<int>{2, 2}), -1);
  EXPECT_EQ(g.pe_at(std::vector<int>{2, 3}), -1);
  EXPECT_EQ(g.pe_at(std::vector<int>{3, 0}), -1);  // outside the grid
  EXPECT_EQ(g.pe_at_slot(11), -1);
  // Peers skip empty slots: PE 3 = (0,3) has no peer (2,3).
  EXPECT_EQ(g.peers(3), (std::vector<int>{7, 0, 1, 2}));  // by dimension, then coordinate
  EXPECT_EQ(g.peers(9), (std::vector<int>{1, 5, 8}));
}

TEST(VirtualGrid, PeersDistanceAndIsPeer) {
  const virtual_grid g({4, 4, 4}, 64);
  for (int a = 0; a < 64; ++a) {
    const auto peers = g.peers(a);
    EXPECT_EQ(peers.size(), 9u);
    for (int b = 0; b < 64; ++b) {
      const auto ca = g.coords(a);
      const auto cb = g.coords(b);
      int differing = 0;
      for (int d = 0; d < 3; ++d) differing += ca[d] != cb[d];
      EXPECT_EQ(g.distance(a, b), differing);
      EXPECT_EQ(g.is_peer(a, b), differing == 1);
      EXPECT_EQ(std::count(peers.begin(), peers.end(), b), differing == 1 ? 1 : 0);
    }
  }
}

TEST(VirtualGrid, DirectIsOneDimensional) {
  const virtual_grid g = virtual_grid::direct(7);
  EXPECT_EQ(g.str(), "7");
  EXPECT_EQ(g.peers(3).size(), 6u);
  EXPECT_TRUE(g.is_peer(0, 6));
}

TEST(VirtualGrid, NodePePlacesPesByNodeAndLocalRank) {
  const machine even = machine::uniform(12, 4);
  const virtual_grid g = virtual_grid::node_pe(even);
  EXPECT_EQ(g.str(), "3x4");
  EXPECT_EQ(g, virtual_grid({3, 4}, 12));

  // Nodes of 3, 1 and 2 PEs, not consecutive: holes at the end of the small nodes' rows.
  const machine uneven = machine::from_node_ids({0, 1, 0, 2, 0, 2});
  const virtual_grid h = virtual_grid::node_pe(uneven);
  EXPECT_EQ(h.str(), "3x3");
  EXPECT_EQ(h.num_pes(), 6);
  EXPECT_EQ(h.coords(4), (std::vector<int>{0, 2}));
  EXPECT_EQ(h.coords(1), (std::vector<int>{1, 0}));
  EXPECT_EQ(h.coords(5), (std::vector<int>{2, 1}));
  EXPECT_EQ(h.pe_at(std::vector<int>{1, 1}), -1);
  EXPECT_EQ(h.pe_at(std::vector<int>{2, 2}), -1);
  for (int pe = 0; pe < 6; ++pe) {
    EXPECT_EQ(h.coord(pe, 0), uneven.node_of(pe));
    EXPECT_EQ(h.coord(pe, 1), uneven.local_rank(pe));
  }
}

TEST(VirtualGrid, BalancedPicksNearEqualSizesWithTheFewestSlots) {
  EXPECT_EQ(virtual_grid::balanced(64, 3).str(), "4x4x4");
  EXPECT_EQ(virtual_grid::balanced(12, 2).str(), "4x3");
  EXPECT_EQ(virtual_grid::balanced(7, 3).str(), "2x2x2");
  EXPECT_EQ(virtual_grid::balanced(1, 4).str(), "1x1x1x1");
  EXPECT_EQ(virtual_grid::balanced(17, 1).str(), "17");
  for (int pes = 1; pes <= 200; ++pes) {
    for (int ndims = 1; ndims <= 6; ++ndims) {
      const virtual_grid g = virtual_grid::balanced(pes, ndims);
      ASSERT_EQ(g.ndims(), ndims);
      EXPECT_GE(g.num_slots(), pes);
      const auto dims = g.dims();
      EXPECT_LE(dims.front() - dims.back(), 1) << g.str();
      EXPECT_TRUE(std::is_sorted(dims.rbegin(), dims.rend())) << g.str();
      // The grid with one fewer enlarged dimension would not hold every PE.
      if (dims.front() != dims.back() || (dims.front() > 1 && g.num_slots() > pes)) {
        std::vector<int> fewer(dims.begin(), dims.end());
        --fewer[std::count(dims.begin(), dims.end(), dims.front()) - 1];
        EXPECT_LT(std::accumulate(fewer.begin(), fewer.end(), 1, std::multiplies<>()), pes)
            << g.str();
      }
    }
  }
}

TEST(VirtualGrid, ParseAcceptsDimensionListsDirectAndNode) {
  EXPECT_EQ(virtual_grid::parse("16x8", 128).str(), "16x8");
  EXPECT_EQ(virtual_grid::parse("4x4x2", 30).num_pes(), 30);
  EXPECT_EQ(virtual_grid::parse("direct", 5), virtual_grid::direct(5));
  EXPECT_EQ(virtual_grid::parse("node", 6).str(), "1x6");
  const machine m = machine::uniform(10, 4);
  EXPECT_EQ(virtual_grid::parse("node", m), virtual_grid::node_pe(m));
  EXPECT_EQ(virtual_grid::parse("5x2", m).str(), "5x2");
}

TEST(VirtualGrid, BadInputNamesTheValueAndTheExpectation) {
  expect_invalid([] { virtual_grid({4, 0, 2}, 1); },
                 {"dimension 1 of grid 4x0x2", "'0'", "at least 1"});
  expect_invalid([] { virtual_grid({-3, 2}, 1); }, {"dimension 0", "'-3'", "at least 1"});
  expect_invalid([] { virtual_grid({}, 1); }, {"grid dimensions", "at least one dimension"});
  expect_invalid([] { virtual_grid({3, 3}, 10); }, {"slots of grid 3x3", "'9'", "10 PEs"});
  expect_invalid([] { virtual_grid({3, 3}, 0); }, {"number of PEs", "'0'", "at least 1"});
  expect_invalid([] { virtual_grid({65536, 65536}, 4); }, {"65536x65536", "2^31"});
  expect_invalid([] { virtual_grid({65536, 65536}, 1 << 30); }, {"65536x65536", "2^31"});
  for (const char* spec : {"", "x", "4x", "x4", "4xx2", "4*4", "abc", "4x2 ", "direct2", "1e3"})
    expect_invalid([&] { virtual_grid::parse(spec, 4); },
                   {"grid spec", std::string("'") + spec + "'", "'16x8'"});
  expect_invalid([] { virtual_grid::parse("4x0", 4); }, {"dimension 1 of grid 4x0", "'0'"});
  expect_invalid([] { virtual_grid::parse("-2x4", 4); }, {"dimension 0", "'-2'"});
  expect_invalid([] { virtual_grid::parse("2x2", 5); }, {"slots of grid 2x2", "'4'", "5 PEs"});
  expect_invalid([] { virtual_grid::balanced(0, 2); }, {"number of PEs", "'0'"});
  expect_invalid([] { virtual_grid::balanced(8, 0); }, {"number of grid dimensions", "'0'"});
  expect_invalid([] { virtual_grid::direct(0); }, {"number of PEs", "'0'"});
  expect_invalid([] { virtual_grid({2, 2}, 4).pe_at(std::vector<int>{1}); },
                 {"number of coordinates", "'1'", "2"});
  EXPECT_THROW(virtual_grid({2, 2}, 4).coords(4), std::out_of_range);
}

// Regression: distance(0, 99) on 4 PEs read past the slot table and returned 0.
TEST(VirtualGrid, PesOutsideTheGridAreOutOfRange) {
  const virtual_grid g({2, 2}, 4);
  const auto message = [&](auto&& call) {
    try {
      call();
    } catch (const std::out_of_range& e) {
      return std::string(e.what());
    }
    return std::string("no std::out_of_range");
  };
  EXPECT_EQ(message([&] { (void)g.distance(0, 99); }),
            "virtual_grid::distance: PE 99 is outside [0, 4): expected a PE of grid 2x2");
  EXPECT_EQ(message([&] { (void)g.distance(-1, 0); }),
            "virtual_grid::distance: PE -1 is outside [0, 4): expected a PE of grid 2x2");
  EXPECT_THROW((void)g.is_peer(4, 0), std::out_of_range);
  EXPECT_THROW((void)g.is_peer(0, 4), std::out_of_range);
  EXPECT_THROW((void)g.peers(4), std::out_of_range);
  EXPECT_THROW((void)g.peers(-2), std::out_of_range);
  EXPECT_EQ(g.distance(0, 3), 2);
}

// Regression: "200000000" for 4 PEs allocated slot by slot for seconds before bad_alloc.
TEST(VirtualGrid, GridsFarLargerThanTheJobAreRefusedAtOnce) {
  expect_invalid([] { virtual_grid::parse("200000000", 4); },
                 {"slots of grid 200000000", "'200000000'", "at most 4096 for 4 PEs"});
  expect_invalid([] { virtual_grid({1000, 1000}, 1000); },
                 {"slots of grid 1000x1000", "'1000000'", "at most 64000 for 1000 PEs"});
  EXPECT_EQ(virtual_grid({64, 64}, 1).num_slots(), 4096);       // small grids stay allowed
  EXPECT_EQ(virtual_grid({100, 64}, 100).num_slots(), 6400);    // 64 per PE
}

}  // namespace
}  // namespace transit

// Knuth's ranf and bale's index streams against bale itself. The reference values were printed
// by bench/bale/reference_draws.c, built against bale's libgetput (bench/bale/build.sh, bale
// master over Open MPI 4.1's OpenSHMEM) and run as `bale-oshrun -n 2 reference_draws 1000 100
// 122222`: per seed and PE, lgp_rand_seed(seed) then three lgp_rand_double(), and again
// lgp_rand_seed(seed) then lgp_rand_int64(1000) draws 0-4 and 255-259 (past two refills of
// Knuth's buffer). A PE's stream is the same at 1 and 2 PEs (it depends on seed + PE only).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/index_stream.hpp"
#include "common/ranf.hpp"

namespace {

using transit::apps::bale_index_stream;
using transit::apps::cyclic_place_of;
using transit::apps::knuth_ranf;

struct reference {
  std::int64_t seed;
  int pe;
  std::array<double, 3> doubles;
  std::array<std::int64_t, 5> first_ints;  // draws 0-4 of lgp_rand_int64(1000)
  std::array<std::int64_t, 5> later_ints;  // draws 255-259
};

const std::vector<reference> references = {
    {122222, 0, {0.63568957488038724, 0.75379265457054156, 0.30013342034004897}, {635, 753, 300, 0, 834}, {589, 679, 129, 892, 677}},
    {122222, 1, {0.51897117485330302, 0.1934350528920401, 0.54756192765129197}, {518, 193, 547, 16, 114}, {629, 250, 896, 636, 331}},
    {0, 0, {0.3612452221240936, 0.1187121881862836, 0.22578746054141496}, {361, 118, 225, 393, 34}, {685, 641, 956, 966, 632}},
    {0, 1, {0.17709691943909189, 0.87388032868264576, 0.76606647844427922}, {177, 873, 766, 36, 367}, {965, 532, 522, 942, 232}},
    {7, 0, {0.90665362650879966, 0.54508259234143575, 0.19267694108634004}, {906, 545, 192, 220, 549}, {548, 243, 842, 562, 878}},
    {7, 1, {0.17619571101127218, 0.31885302906840329, 0.23616632792605974}, {176, 318, 236, 268, 607}, {379, 34, 593, 796, 892}},
};

TEST(KnuthRanf, DoublesAreBalesBitForBit) {
  for (const auto& r : references) {
    knuth_ranf random = knuth_ranf::for_pe(r.seed, r.pe);
    for (const double expected : r.doubles)
      EXPECT_EQ(random.next_double(), expected) << "seed " << r.seed << " PE " << r.pe;
  }
}

TEST(KnuthRanf, IntegersAreBalesAcrossRefills) {
  for (const auto& r : references) {
    knuth_ranf random = knuth_ranf::for_pe(r.seed, r.pe);
    std::vector<std::int64_t> draws;
    for (int i = 0; i < 260; ++i) draws.push_back(random.next_int(1000));
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(draws[i], r.first_ints[i]) << "seed " << r.seed << " PE " << r.pe << " draw " << i;
      EXPECT_EQ(draws[255 + i], r.later_ints[i]) << "seed " << r.seed << " PE " << r.pe << " draw " << 255 + i;
    }
  }
}

TEST(KnuthRanf, OneStreamPerSeedAndPe) {
  // Objects with one seed agree (no shared state: PEs as threads each have their own), and
  // for_pe(s, pe) is ranf_start(s + 1 + pe), so PEs differ.
  knuth_ranf a(310952), b(310952), c = knuth_ranf::for_pe(310950, 1);
  for (int i = 0; i < 5000; ++i) {
    const double x = a.next_double();
    EXPECT_EQ(x, b.next_double());
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
  EXPECT_NE(knuth_ranf::for_pe(310952, 0).next_double(), knuth_ranf::for_pe(310952, 1).next_double());
  EXPECT_EQ(knuth_ranf(310952).next_double(), c.next_double());  // for_pe(s, pe) is seed s + 1 + pe
}

TEST(KnuthRanf, RefusesBadRange) {
  knuth_ranf random(1);
  EXPECT_THROW(random.next_int(0), std::invalid_argument);
  EXPECT_THROW(random.next_int(-3), std::invalid_argument);
  EXPECT_THROW(random.next_int(std::int64_t{1} << 51), std::invalid_argument);
  EXPECT_NO_THROW(random.next_int((std::int64_t{1} << 51) - 1));
}

TEST(IndexStream, IsTheDrawsOfHistoAndIg) {
  // bale's histo and ig: lgp_rand_seed(seed), then lgp_rand_int64(T * P) per update.
  for (int pes : {1, 2, 5}) {
    for (int pe = 0; pe < pes; ++pe) {
      const auto stream = bale_index_stream(122222, pe, pes, 300, 200);
      knuth_ranf random = knuth_ranf::for_pe(122222, pe);
      ASSERT_EQ(stream.size(), 300u);
      for (const std::int64_t index : stream) EXPECT_EQ(index, random.next_int(200 * pes));
    }
  }
  // PE 0's first updates of `histo -T 500` on 2 PEs (table of 1000): bale's ints above.
  const auto pe0 = bale_index_stream(122222, 0, 2, 5, 500);
  EXPECT_EQ(pe0, (std::vector<std::int64_t>{635, 753, 300, 0, 834}));
  EXPECT_EQ(cyclic_place_of(753, 2).pe, 1);
  EXPECT_EQ(cyclic_place_of(753, 2).offset, 376);
}

TEST(IndexStream, RefusesBadInput) {
  EXPECT_THROW(bale_index_stream(1, 2, 2, 10, 10), std::invalid_argument);
  EXPECT_THROW(bale_index_stream(1, -1, 2, 10, 10), std::invalid_argument);
  EXPECT_THROW(bale_index_stream(1, 0, 0, 10, 10), std::invalid_argument);
  EXPECT_THROW(bale_index_stream(1, 0, 2, -1, 10), std::invalid_argument);
  EXPECT_THROW(bale_index_stream(1, 0, 2, 10, 0), std::invalid_argument);
  EXPECT_THROW(bale_index_stream(1, 0, 2, 10, std::int64_t{1} << 50), std::invalid_argument);  // 2^51 entries
}

}  // namespace

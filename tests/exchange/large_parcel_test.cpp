// One parcel above 2^31 bytes, PE 0 to the last PE. About 9 GB of memory at the peak; not run
// under sanitizers (see CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace transit;

constexpr std::size_t words = (std::size_t{1} << 28) + 512;  // 2^31 + 4096 bytes

std::uint64_t word_at(std::size_t i) { return i * 0x9E3779B97F4A7C15ull; }

TEST(Exchange, AParcelAboveTwoGiBArrivesWhole) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              // The local crystal router carries the length in its record header; mpi_alltoallv
              // cuts the parcel into int-bounded rounds (direct's single message in pieces is the
              // transport's, tested in tests/transport).
              const auto m = ctx.backend() == "mpi" && ctx.options().threads_per_rank == 1 ? exchange_method::mpi_alltoallv
                                                                                          : exchange_method::crystal_router;
              const int receiver = ctx.size() - 1;
              {
                exchange_options o;
                o.method = m;
                sparse_exchange<std::uint64_t> x(ctx, o);
                std::vector<parcel<std::uint64_t>> out;
                if (ctx.rank() == 0) {
                  parcel<std::uint64_t> p{receiver, std::vector<std::uint64_t>(words)};
                  for (std::size_t i = 0; i < words; ++i) p.items[i] = word_at(i);
                  out.push_back(std::move(p));
                }
                const auto in = x.run(std::move(out));
                if (ctx.rank() != receiver) {
                  EXPECT_TRUE(in.empty()) << to_string(m);
                  return;
                }
                ASSERT_EQ(in.size(), 1u) << to_string(m);
                ASSERT_EQ(in[0].peer, 0) << to_string(m);
                ASSERT_EQ(in[0].items.size(), words) << to_string(m);
                std::size_t wrong = 0;
                for (std::size_t i = 0; i < words; ++i) wrong += in[0].items[i] != word_at(i) ? 1 : 0;
                EXPECT_EQ(wrong, 0u) << to_string(m);
              }
            }),
            0);
}

}  // namespace

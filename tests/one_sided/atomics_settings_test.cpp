// compare_exchange and fetch_add on every engine under each way the mpi backend can meet Open
// MPI's shared-memory settings: no profile, a profile that chose 'default' (cma on Open MPI 4.1
// here) or 'none', and OMPI_MCA_btl_vader_single_copy_mechanism=cma set by the user
// (tests/one_sided/CMakeLists.txt registers one run per setting and rank count). Before the mpi
// backend turned off Open MPI's emulated shared-memory atomics, mpi_rma's compare_exchange ended
// the job with SIGSEGV inside Open MPI (mca_btl_vader_emu_acswap) in all but 'none'.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using namespace transit::testing;

/// Every engine the job allows, the mpi_rma baseline first (configurations() adds it on mpi).
void for_each_engine(const std::function<void(context&, const one_sided_options&)>& check) {
  // Nodes of one PE (fcg, mfcg, cfcg; hypercube at 2 and 4) and of two (hypercube at 3 PEs too).
  for (const char* option : {"--transit-pes-per-node=1", "--transit-pes-per-node=2"}) {
    EXPECT_EQ(run_spmd(
                  [&](context& ctx) {
                    for (const auto& o : configurations(ctx)) check(ctx, o);
                  },
                  {option}),
              0)
        << option;
  }
}

TEST(atomics_settings, compare_exchange_counter_on_every_engine) {
  for_each_engine([](context& ctx, const one_sided_options& o) {
    // The last word, on the last PE: remote for every other PE.
    const auto elements = 2 * static_cast<std::size_t>(ctx.size());
    expect_compare_exchange_counts(ctx, o, elements, elements - 1, 20);
  });
}

TEST(atomics_settings, fetch_add_on_every_engine) {
  for_each_engine([](context& ctx, const one_sided_options& o) {
    global_array<std::uint64_t> counter(ctx, 2 * static_cast<std::size_t>(ctx.size()), o);
    const std::size_t word = counter.size() - 1;
    constexpr int per_pe = 20;
    std::vector<std::uint64_t> old(per_pe);
    for (auto& v : old) v = counter.fetch_add(word, 1);
    counter.sync();
    const auto total = static_cast<std::uint64_t>(per_pe * ctx.size());
    for (const auto v : old) EXPECT_LT(v, total) << describe(ctx, o);
    // The old values are distinct: their sum over all PEs is 0 + 1 + ... + total - 1.
    std::uint64_t sum = 0;
    for (const auto v : old) sum += v;
    EXPECT_EQ(ctx.allreduce(sum, reduce_op::sum), total * (total - 1) / 2) << describe(ctx, o);
    std::uint64_t final_value = 0;
    counter.get(word, std::span<std::uint64_t>(&final_value, 1));
    EXPECT_EQ(final_value, total) << describe(ctx, o);
    counter.sync();
  });
}

}  // namespace
